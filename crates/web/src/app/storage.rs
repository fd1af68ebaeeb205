//! What the page keeps in IndexedDB across visits ([`crate::persist`]): the last visit's trace,
//! settings, reference library and compared runs taken back at start-up, and the compared runs
//! stored or dropped after each comparison ([`crate::views::compare::keep_after`]).

use super::*;

impl App {
    /// What the last visit stored arrived.
    pub(super) fn restored(&mut self, ctx: &Context<Self>, restored: Restored) {
        self.settings_kept = restored.settings.is_some() || restored.library.is_some();
        if let Some(settings) = &restored.settings {
            self.stored_settings = settings.clone();
            let route = Route::parse(settings);
            self.state.apply_settings(&route);
            if let Some(l) = self.state.loading.as_mut() {
                l.route.get_or_insert(route);
            }
        }
        if let Some(json) = &restored.library {
            if let Ok(library) = serde_json::from_str::<ReferenceLibrary>(json) {
                self.stored_library = json.clone();
                self.state.library = library;
            }
        }
        self.stored = restored.trace.as_ref().map(|t| (t.label.clone(), t.bytes));
        self.stored_compared = restored.compared;
        self.restored_seen = true;
        self.restore_compared();
        if !restored.load || self.state.loading.is_some() || self.state.current.is_some() {
            return;
        }
        match restored.trace {
            Some(t) => {
                let route = Route::parse(&self.stored_settings);
                let generation = self.state.start_load(t.label.clone(), None, Some(route));
                let origin = Origin {
                    id: generation,
                    label: t.label.clone(),
                    files: OriginFiles::Handles(t.names.clone(), t.files.clone()),
                };
                offer_handles(generation, t.files);
                let source = FileSource::Handles {
                    key: generation,
                    names: t.names,
                };
                self.open(ctx.link(), generation, t.label, source, self.open_options());
                if let Some(l) = self.state.loading.as_mut() {
                    l.io.origin = Some(origin);
                }
            }
            None => {
                let default = samples::start_choice("", "");
                if let StartChoice::Sample(s) = default {
                    self.fetch_sample(ctx.link(), s, None);
                }
            }
        }
    }

    /// Recompare the trace on screen with the runs the last visit kept for it, unless it is
    /// already compared.
    pub(super) fn restore_compared(&mut self) {
        let (Some(c), Some(kept)) = (&self.state.current, &self.stored_compared) else {
            return;
        };
        if self.state.analyses.contains_key("compare") {
            return;
        }
        let owner = crate::views::compare::owner_key(&c.trace);
        if let Some(request) = crate::views::compare::restore_request(&owner, &kept.owner, &kept.runs) {
            self.analyse(request);
        }
    }

    /// Store or drop the compared runs after the compare view's answer changed them.
    pub(super) fn keep_compared(&mut self, ctx: &Context<Self>) {
        let Some(c) = self.state.current.as_ref().filter(|_| self.restored_seen) else {
            return;
        };
        let Some(state) = self.state.analyses.get("compare").filter(|s| !s.pending) else {
            return;
        };
        if state.seq == self.compare_kept_seq {
            return;
        }
        self.compare_kept_seq = state.seq;
        let owner = crate::views::compare::owner_key(&c.trace);
        let kept = self
            .stored_compared
            .as_ref()
            .map(|k| (k.owner.as_str(), k.runs.as_str()));
        let link = ctx.link().clone();
        match crate::views::compare::keep_after(Some(state), &owner, kept) {
            crate::views::compare::Keep::Nothing => {}
            // The stored-state line changes when the browser has written the change
            // (`Msg::KeptCompared`), not before: a reload right after it finds what it says. The
            // same answer is not stored twice (`compare_kept_seq`).
            crate::views::compare::Keep::Forget => {
                wasm_bindgen_futures::spawn_local(async move {
                    link.send_message(Msg::KeptCompared(persist::forget_compared().await.map(|_| None)));
                });
            }
            crate::views::compare::Keep::Save(runs) => {
                let kept = StoredComparison {
                    owner,
                    bytes: runs.len() as u64,
                    runs,
                };
                wasm_bindgen_futures::spawn_local(async move {
                    let saved = persist::save_compared(&kept.owner, &kept.runs).await;
                    link.send_message(Msg::KeptCompared(match saved {
                        Ok(true) => Ok(Some(kept)),
                        Ok(false) => Err(format!(
                            "{} of properties beside the stored trace exceed the {} kept in all",
                            text::bytes(kept.bytes),
                            text::bytes(persist::MAX_STORED_BYTES)
                        )),
                        Err(e) => Err(e),
                    }));
                });
            }
        }
    }
}
