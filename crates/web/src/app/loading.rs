//! Loading a trace: starting a load, reading dropped or picked sources, opening files or a
//! sample's URLs in a new worker, and taking the loaded trace.

use super::*;

impl App {
    /// List dropped or picked input (walking folders) on the page, then hand the `File`s to a
    /// worker: listing reads no content.
    pub(super) fn read_sources(&mut self, link: &Scope<App>, sources: Vec<Source>) {
        if sources.is_empty() {
            self.state.error = Some("Nothing to load: the drop held no files.".into());
            return;
        }
        let label = input::label(&sources);
        let generation = self.state.start_load(label.clone(), None, None);
        let link = link.clone();
        wasm_bindgen_futures::spawn_local(async move {
            match input::files_of(sources).await {
                Ok(l) if l.is_empty() => link.send_message(Msg::ReadFailed(
                    generation,
                    format!("{label}: the folder holds no files"),
                )),
                Ok(l) => link.send_message(Msg::Listed(generation, label, l)),
                Err(e) => link.send_message(Msg::ReadFailed(generation, e)),
            }
        });
    }

    /// Send listed files to a fresh worker, which reads them; they are stored for the next
    /// visit once the load succeeds.
    pub(super) fn open_listed(
        &mut self,
        ctx: &Context<Self>,
        generation: u64,
        label: String,
        listed: Vec<(String, web_sys::File)>,
    ) {
        if !self.state.is_loading(generation) {
            return;
        }
        crate::worker::mark("page listed the files");
        // The worker checks the input's size (too_large) before reading a byte: asking each
        // `File` its size here costs the page 0.1-0.3 ms a file, before the worker may start.
        let names: Vec<String> = listed.iter().map(|(n, _)| n.clone()).collect();
        let files: Array = listed.iter().map(|(_, f)| wasm_bindgen::JsValue::from(f)).collect();
        offer_handles(generation, files.clone());
        let source = FileSource::Handles {
            key: generation,
            names: names.clone(),
        };
        let origin = Origin {
            id: generation,
            label: label.clone(),
            files: OriginFiles::Handles(names.clone(), files.clone()),
        };
        self.open(ctx.link(), generation, label, source, self.open_options());
        if let Some(l) = self.state.loading.as_mut() {
            l.io.keep = Some((names, files));
            l.io.origin = Some(origin);
        }
    }

    /// How loads read their input: whole up to [`full_load_limit`], else the overview.
    pub(super) fn open_options(&self) -> OpenOptions {
        OpenOptions {
            full_load_limit: full_load_limit(),
            workers: overview_workers(),
            load_workers: load_workers(),
            whatif_workers: whatif_workers(),
            ..OpenOptions::default()
        }
    }

    /// Read `origin`'s files again as a new load `label` (its overview, or a part of it): the
    /// shown trace and overview stay until it succeeds.
    pub(super) fn reopen(&mut self, ctx: &Context<Self>, origin: &Origin, label: String, options: OpenOptions) {
        let generation = self.state.start_load(label.clone(), None, None);
        let source = origin.source(generation);
        self.open(ctx.link(), generation, label, source, options);
        if let Some(l) = self.state.loading.as_mut() {
            l.io.origin = Some(origin.clone());
        }
    }

    /// A fresh worker for load `generation`, asked to read `source`.
    pub(super) fn open(
        &mut self,
        link: &Scope<App>,
        generation: u64,
        label: String,
        source: FileSource,
        options: OpenOptions,
    ) {
        let bridge = self.worker_for(link, generation);
        let source_kept = (source.clone(), options.clone());
        bridge.send(Input::Open {
            label,
            source,
            matrix: MatrixRequest {
                selection: Default::default(),
                ..self.state.matrix_request.clone()
            },
            options,
        });
        if let Some(l) = self.state.loading.as_mut() {
            l.io.bridge = Some(bridge);
            l.progress.stage = "starting the worker".into();
        }
        if let Some(l) = self.state.loading.as_mut() {
            l.io.source = Some(source_kept);
        }
    }

    /// Load a bundled sample: the worker fetches its files.
    pub(super) fn fetch_sample(&mut self, link: &Scope<App>, sample: &'static Sample, route: Option<Route>) {
        let generation = self.state.start_load(sample.title.to_owned(), Some(sample), route);
        let urls = sample_urls(sample);
        self.open(
            link,
            generation,
            sample.title.to_owned(),
            FileSource::Urls(urls.clone()),
            self.open_options(),
        );
        if let Some(l) = self.state.loading.as_mut() {
            l.io.origin = Some(Origin {
                id: generation,
                label: sample.title.to_owned(),
                files: OriginFiles::Urls(urls),
            });
        }
    }

    /// Keep the files of a successful load (`keep`, when read from files) in IndexedDB for the
    /// next visit, under the trace's name `label`.
    pub(super) fn keep_trace(&mut self, ctx: &Context<Self>, label: &str, keep: Option<(Vec<String>, Array)>) {
        let Some((names, files)) = keep else { return };
        let bytes = files
            .iter()
            .map(|f| f.unchecked_into::<web_sys::Blob>().size() as u64)
            .sum();
        let label = label.to_owned();
        let link = ctx.link().clone();
        wasm_bindgen_futures::spawn_local(async move {
            let kept = persist::save_trace(&label, &names, &files, bytes)
                .await
                .map(|stored| stored.then_some((label, bytes)));
            link.send_message(Msg::Kept(kept));
        });
    }
}

/// Absolute URLs of a sample's files (the worker resolves nothing against the page's address).
pub(super) fn sample_urls(sample: &Sample) -> Vec<(String, String)> {
    let base = location().and_then(|l| l.href().ok()).unwrap_or_default();
    sample
        .files
        .iter()
        .map(|f| {
            let relative = sample.url(f);
            let url = web_sys::Url::new_with_base(&relative, &base)
                .map(|u| u.href())
                .unwrap_or(relative);
            (format!("{}/{}", sample.id, f), url)
        })
        .collect()
}
