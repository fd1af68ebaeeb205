//! The address and the page state: a route ([`crate::route`]) applied to the page (view,
//! settings, selection) and the page state written back to the address's fragment.

use super::*;

impl App {
    /// Take the view, threshold and metric of `route` (before any trace is in).
    pub(super) fn apply_settings(&mut self, route: &Route) {
        if let Some(v) = route.view {
            self.view = v;
        }
        if let Some(t) = route.threshold {
            self.matrix_request.threshold_pct = t;
        }
        if let Some(m) = route.metric {
            self.matrix_request.metric = m;
        }
        if route.waiting {
            self.matrix_request.waiting = true;
            self.matrix_request.metric = tracelogic_engine::matrix::Metric::Bytes;
        }
    }

    /// Show what `route` says for the trace on screen: view, selection, matrix settings.
    /// The address names the whole state: a key it leaves out is the default (an empty fragment
    /// is the summary), so Back to such an entry shows it instead of keeping the current view and
    /// pushing it again.
    pub(super) fn apply_route(&mut self, ctx: &Context<Self>, route: Route) {
        let before = (
            self.matrix_request.threshold_pct,
            self.matrix_request.metric,
            self.matrix_request.waiting,
        );
        let default = MatrixRequest::default();
        self.view = route.view.unwrap_or(View::Summary);
        self.matrix_request.threshold_pct = route.threshold.unwrap_or(default.threshold_pct);
        self.matrix_request.metric = route.metric.unwrap_or(default.metric);
        self.matrix_request.waiting = route.waiting;
        self.focus = route.focus;
        if before
            != (
                self.matrix_request.threshold_pct,
                self.matrix_request.metric,
                self.matrix_request.waiting,
            )
        {
            ctx.link().send_message(Msg::Matrix(self.matrix_request.clone()));
        }
        self.ensure_analysis(self.view);
    }

    /// The start of every downloaded file's name: the bundled sample's id, or the loaded
    /// trace's name as a file name part (`npb-lu.S.8-logical.json`, `npb-lu.S.8-matrix-bytes.csv`).
    pub(super) fn file_prefix(&self) -> String {
        match (&self.current, self.sample) {
            (_, Some(s)) => s.id.to_owned(),
            (Some(c), None) => text::file_stem(&c.trace.label),
            (None, None) => String::new(),
        }
    }

    /// The navigation state of the page.
    pub(super) fn route(&self) -> Route {
        let default = MatrixRequest::default();
        Route {
            sample: self.sample.map(|s| s.id.to_owned()),
            view: (self.view != View::Summary).then_some(self.view),
            threshold: (self.matrix_request.threshold_pct != default.threshold_pct)
                .then_some(self.matrix_request.threshold_pct),
            metric: (self.matrix_request.metric != default.metric).then_some(self.matrix_request.metric),
            waiting: self.matrix_request.waiting,
            focus: self.focus.clone(),
        }
    }

    /// Write the navigation state to the address (a new history entry when the view changed,
    /// so back and forward step through views) and keep the settings in IndexedDB.
    pub(super) fn sync_address(&mut self) {
        if self.loading.is_some() || self.current.is_none() {
            return;
        }
        let route = self.route();
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
        let library = serde_json::to_string(&self.library).unwrap_or_default();
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
}
