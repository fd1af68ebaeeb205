//! Loads by parts: a rank's part of a streamed load, the blocks a pool of helper workers reads
//! and their merge (whole loads on `?load-workers=N`), and the overview's parts.

use super::*;

impl AnalysisWorker {
    /// Load the part `selection` keeps of the trace `source` gives and answer as a load does.
    pub(super) fn load_part(
        &mut self,
        scope: &WorkerScope<Self>,
        id: HandlerId,
        label: &str,
        source: &mut dyn tracelogic_formats::stream::FileSource,
        selection: &Selection,
        matrix: &MatrixRequest,
    ) -> Response {
        let mut report = reporter(scope, id);
        let files = source.list().len() as u32;
        let bytes = source.list().iter().map(|(_, s)| s).sum();
        let part = tracelogic_engine::overview::load_part(
            source,
            selection,
            tracelogic_engine::FieldWords::Labels,
            &mut Reports(&mut report),
        );
        let answer = part
            .map_err(|e| Failure {
                message: format!("{label}: {e}"),
                cancelled: false,
            })
            .and_then(|(engine, _)| Session::from_engine(label, engine, files, bytes, matrix, &mut report));
        record_memory();
        self.keep(answer)
    }

    /// Helper `index` of the overview pool answered: pass progress on, and answer the page once
    /// every part is merged or one failed (the helpers end with the pool).
    pub(super) fn part_arrived(&mut self, scope: &WorkerScope<Self>, index: usize, response: Response) {
        if self.load_pool.is_some() {
            return self.block_arrived(scope, index, response);
        }
        let Some(pool) = self.pool.as_mut() else {
            return;
        };
        let id = pool.id;
        let Some(answer) = pool.arrived(index, response) else {
            return;
        };
        if !matches!(answer, Response::Progress(_)) {
            if let Some(pool) = self.pool.take() {
                release_handles(pool.key());
            }
            mark("worker answering");
        }
        scope.respond(id, answer);
    }

    /// Helper `index` of a pooled load answered: pass progress on, fail the load on an error, and
    /// once every block is in merge them and answer as a load does.
    pub(super) fn block_arrived(&mut self, scope: &WorkerScope<Self>, index: usize, response: Response) {
        let Some(pool) = self.load_pool.as_mut() else {
            return;
        };
        let id = pool.id;
        let answer = match pool.arrived(index, response) {
            crate::load_pool::Arrived::Wait => return,
            crate::load_pool::Arrived::Answer(r @ Response::Progress(_)) => return scope.respond(id, r),
            crate::load_pool::Arrived::Answer(r) => {
                if let Some(pool) = self.load_pool.take() {
                    release_handles(pool.key());
                }
                r
            }
            crate::load_pool::Arrived::Merge(parts) => {
                let Some(pool) = self.load_pool.take() else { return };
                release_handles(pool.key());
                PANIC_TARGET.with(|t| *t.borrow_mut() = Some((scope.clone(), id)));
                arm_fatal(Some(id));
                let workers = pool.workers();
                let (label, _, names, handles, matrix) = pool.into_parts();
                self.merge_blocks(scope, id, &label, &names, &handles, &matrix, parts, workers)
            }
        };
        mark("worker answering");
        scope.respond(id, answer);
    }

    /// Merge the blocks `parts` of the pooled load of the files `names` (`handles`) and answer
    /// as a load in one worker does.
    #[allow(clippy::too_many_arguments)] // what the pooled load knows, passed on as it is
    pub(super) fn merge_blocks(
        &mut self,
        scope: &WorkerScope<Self>,
        id: HandlerId,
        label: &str,
        names: &[String],
        handles: &Array,
        matrix: &MatrixRequest,
        parts: Vec<Vec<Vec<u8>>>,
        workers: usize,
    ) -> Response {
        let failed = |message: String| {
            Response::Failed(Failure {
                message,
                cancelled: false,
            })
        };
        let (blobs, reader) = match blobs_and_reader(handles) {
            Ok(b) => b,
            Err(e) => return failed(format!("{label}: {e}")),
        };
        let total: u64 = blobs.iter().map(|b| b.size() as u64).sum();
        let mut report = reporter(scope, id);
        if !report(ProgressReport {
            stage: format!("merging the ranks of {workers} workers"),
            bytes_done: total,
            bytes_total: total,
        }) {
            return failed(format!("{label}: cancelled"));
        }
        let mut source = blob_files(names, blobs.clone(), reader.clone());
        if let Err(e) = prefetch_blobs(&mut source, &blobs, &reader) {
            return failed(e.to_string());
        }
        let trace =
            match tracelogic_formats::distributed::merge_blocks_source(&mut source, &crate::load_pool::blocks, parts) {
                Ok(t) => t,
                Err(e) => return failed(format!("{label}: {e}")),
            };
        let engine = tracelogic_engine::Engine::new(trace, tracelogic_engine::FieldWords::Labels);
        let loaded = Session::from_engine(label, engine, names.len() as u32, total, matrix, &mut report);
        record_memory();
        match loaded {
            Ok(mut loaded) => {
                self.session = Some(loaded.session);
                loaded.trace.workers = workers as u32;
                Response::Loaded {
                    trace: Box::new(loaded.trace),
                    matrix: Box::new(loaded.matrix),
                }
            }
            Err(f) => Response::Failed(f),
        }
    }

    /// A helper's block of a pooled load ([`Input::LoadBlock`]): its ranks decoded, as
    /// [`tracelogic_formats::distributed::read_block_source`] answers, posted with its buffers
    /// transferred ([`post_block`]; `None`), or the failure to answer with.
    pub(super) fn load_block(
        &self,
        scope: &WorkerScope<Self>,
        id: HandlerId,
        source: FileSource,
        part: u32,
        parts: u32,
    ) -> Option<Response> {
        let failed = |message: String| {
            Response::Failed(Failure {
                message,
                cancelled: false,
            })
        };
        let FileSource::Handles { key, names } = source else {
            return Some(failed(
                "a block of a pooled load reads the page's files, not URLs".into(),
            ));
        };
        let Some(handles) = RECEIVED.with(|r| r.borrow_mut().remove(&key)) else {
            return Some(failed("the files of the block did not arrive".into()));
        };
        let (blobs, reader) = match blobs_and_reader(&handles) {
            Ok(b) => b,
            Err(e) => return Some(failed(e)),
        };
        let mut source = blob_files(&names, blobs.clone(), reader.clone());
        if let Err(e) = prefetch_blobs(&mut source, &blobs, &reader) {
            return Some(failed(e.to_string()));
        }
        let mut report = reporter(scope, id);
        match tracelogic_formats::distributed::read_block_source(
            &mut source,
            &crate::load_pool::blocks,
            part as usize,
            parts.max(1) as usize,
            &mut Reports(&mut report),
        ) {
            Ok(bytes) => {
                record_memory();
                mark("worker answering");
                post_block(id, bytes).err().map(failed)
            }
            Err(e) => Some(Response::Failed(Failure {
                message: e.to_string(),
                cancelled: e.cancelled,
            })),
        }
    }

    /// A helper's part of a pool's overview ([`Input::OverviewPart`]).
    pub(super) fn overview_part(
        &self,
        scope: &WorkerScope<Self>,
        id: HandlerId,
        source: FileSource,
        part: u32,
        parts: u32,
    ) -> Response {
        let failed = |message: String| {
            Response::Failed(Failure {
                message,
                cancelled: false,
            })
        };
        let FileSource::Handles { key, names } = source else {
            return failed("an overview part reads the page's files, not URLs".into());
        };
        let Some(handles) = RECEIVED.with(|r| r.borrow_mut().remove(&key)) else {
            return failed("the files of the overview part did not arrive".into());
        };
        let (blobs, reader) = match blobs_and_reader(&handles) {
            Ok(b) => b,
            Err(e) => return failed(e),
        };
        let mut source = blob_files(&names, blobs.clone(), reader.clone());
        if let Err(e) = prefetch_blobs(&mut source, &blobs, &reader) {
            return failed(e.to_string());
        }
        let mut report = reporter(scope, id);
        crate::overview_pool::part_answer(&mut source, part, parts, &mut Reports(&mut report))
    }
}
