//! The address and the keyboard: the page's start from its address, the address's fragment
//! kept up to date with the page state ([`super::state::PageState::route`]), back/forward, the
//! keys that switch views, and the workshop tour's steps.

use super::*;

impl App {
    /// Show what `route` says for the trace on screen ([`PageState::apply_route`]), asking for
    /// the matrix and the view's analysis it needs.
    pub(super) fn apply_route(&mut self, ctx: &Context<Self>, route: Route) {
        if self.state.apply_route(route) {
            ctx.link().send_message(Msg::Matrix(self.state.matrix_request.clone()));
        }
        self.ensure_analysis(self.state.view);
    }

    /// Write the navigation state to the address (a new history entry when the view changed,
    /// so back and forward step through views) and keep the settings in IndexedDB.
    pub(super) fn sync_address(&mut self) {
        if self.state.loading.is_some() || self.state.current.is_none() {
            return;
        }
        let route = self.state.route();
        let fragment = route.format();
        let Some(window) = web_sys::window() else { return };
        let loc = window.location();
        let hash = loc.hash().unwrap_or_default();
        if hash != fragment {
            let url = format!(
                "{}{}{}",
                loc.pathname().unwrap_or_default(),
                loc.search().unwrap_or_default(),
                if fragment.is_empty() { "#" } else { &fragment }
            );
            if let Ok(history) = window.history() {
                let null = wasm_bindgen::JsValue::NULL;
                let _ = if Route::parse(&hash).view != route.view {
                    history.push_state_with_url(&null, "", Some(&url))
                } else {
                    history.replace_state_with_url(&null, "", Some(&url))
                };
            }
        }
        let settings = Route { sample: None, ..route }.format();
        let library = serde_json::to_string(&self.state.library).unwrap_or_default();
        if settings != self.stored_settings || library != self.stored_library {
            self.settings_kept = true;
            self.stored_settings = settings.clone();
            let library_changed = library != self.stored_library;
            self.stored_library = library.clone();
            wasm_bindgen_futures::spawn_local(async move {
                let _ = persist::save_settings(&settings).await;
                if library_changed {
                    let _ = persist::save_value("library", &library).await;
                }
            });
        }
    }

    /// First trace and listeners: the sample the address names, else the trace the last visit
    /// stored, else the default sample.
    pub(super) fn start(&mut self, ctx: &Context<Self>) {
        let (search, hash) = location()
            .map(|l| (l.search().unwrap_or_default(), l.hash().unwrap_or_default()))
            .unwrap_or_default();
        let route = Route::parse(&hash);
        let named = route.sample.is_some() || search.contains("sample=");
        self.state.apply_settings(&route);
        let mut load_stored = false;
        match samples::start_choice(&search, &hash) {
            StartChoice::Sample(s) if named => self.fetch_sample(ctx.link(), s, Some(route.clone())),
            StartChoice::Sample(_) => load_stored = true,
            StartChoice::Empty => {}
            StartChoice::Unknown(id) => {
                self.state.error = Some(format!("There is no bundled sample named “{id}”."));
            }
        }
        let link = ctx.link().clone();
        let settings_in_address = route.has_settings();
        wasm_bindgen_futures::spawn_local(async move {
            // Storage can be unavailable (private windows, blocked cookies): start as if empty.
            let trace = persist::load_trace().await.ok().flatten();
            let settings = persist::load_settings()
                .await
                .ok()
                .flatten()
                .filter(|_| !settings_in_address);
            let library = persist::load_value("library").await.ok().flatten();
            let compared = persist::load_compared().await.ok().flatten();
            link.send_message(Msg::Restored(Box::new(Restored {
                load: load_stored,
                trace,
                settings,
                library,
                compared,
            })));
        });
        self.listen(ctx);
        self.prepare_spare(ctx.link(), SPARE_AFTER_START_MS);
    }

    /// Key presses (outside text fields) and back/forward.
    fn listen(&mut self, ctx: &Context<Self>) {
        let Some(window) = web_sys::window() else { return };
        let link = ctx.link().clone();
        let on_key = Closure::<dyn FnMut(web_sys::Event)>::new(move |e: web_sys::Event| {
            let Some(e) = e.dyn_ref::<web_sys::KeyboardEvent>() else {
                return;
            };
            if e.ctrl_key() || e.alt_key() || e.meta_key() || e.default_prevented() {
                return;
            }
            let target = e.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok());
            let tag = target.as_ref().map(|el| el.tag_name()).unwrap_or_default();
            let input_type = target
                .as_ref()
                .and_then(|el| el.get_attribute("type"))
                .unwrap_or_default();
            let key = e.key();
            if !route::key_reaches_page(&tag, &input_type, &key) {
                return;
            }
            link.send_message(Msg::Key(key));
        });
        let link = ctx.link().clone();
        let on_pop = Closure::<dyn FnMut(web_sys::Event)>::new(move |_: web_sys::Event| {
            let hash = location().and_then(|l| l.hash().ok()).unwrap_or_default();
            link.send_message(Msg::Popped(Route::parse(&hash)));
        });
        let _ = window.add_event_listener_with_callback("keydown", on_key.as_ref().unchecked_ref());
        let _ = window.add_event_listener_with_callback("popstate", on_pop.as_ref().unchecked_ref());
        self.listeners.push(on_key);
        self.listeners.push(on_pop);
    }

    /// A key pressed outside a text field: `?` and Esc for the help, digits and arrows switch views.
    pub(super) fn on_key(&mut self, key: String) -> bool {
        match key.as_str() {
            "?" => self.set_help(!self.help),
            "Escape" if self.help => self.set_help(false),
            // The help is modal: keys do not switch the views behind it.
            _ if self.help => return false,
            k => {
                let Some(v) = self.state.current.as_ref().and(route::view_for_key(k, self.state.view)) else {
                    return false;
                };
                self.state.view = v;
                self.ensure_analysis(v);
                self.sync_address();
            }
        }
        true
    }

    /// Show step `step` of the tour: its sample (loaded unless on screen or loading) in its view.
    pub(super) fn tour_step(&mut self, ctx: &Context<Self>, step: Option<usize>) {
        self.tour = step;
        let Some(step) = step.and_then(|i| tour::STEPS.get(i)) else {
            return;
        };
        let Some(sample) = samples::find(step.sample) else {
            return;
        };
        let loading = self.state.loading.as_ref().and_then(|l| l.sample);
        if self.state.sample != Some(sample) && loading != Some(sample) {
            self.fetch_sample(ctx.link(), sample, None);
        }
        self.state.view = step.view;
        self.ensure_analysis(step.view);
    }
}
