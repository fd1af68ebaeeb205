//! What the page draws from its state: the input area (drop zone, pickers, samples, progress,
//! messages, what is stored), the trace's header and navigation bar, the view switched to, the
//! overview, the export bar, the keyboard help and the tour panel.

use super::*;

impl App {
    pub(super) fn view_input(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        let on_drop = link.callback(|e: DragEvent| {
            e.prevent_default();
            match e.data_transfer() {
                Some(data) => Msg::Sources(input::sources_from_drop(&data)),
                None => Msg::Sources(Vec::new()),
            }
        });
        let on_drag_over = link.callback(|e: DragEvent| {
            e.prevent_default();
            Msg::Dragging(true)
        });
        let on_drag_leave = link.callback(|_: DragEvent| Msg::Dragging(false));
        let on_pick = link.batch_callback(|e: Event| {
            let input: HtmlInputElement = e.target_unchecked_into();
            let sources = input.files().map(|f| input::sources_from_list(&f)).unwrap_or_default();
            input.set_value("");
            (!sources.is_empty()).then_some(Msg::Sources(sources))
        });
        let on_sample = link.batch_callback(|e: Event| {
            let select: HtmlSelectElement = e.target_unchecked_into();
            let chosen = samples::find(&select.value());
            select.set_value("");
            chosen.map(Msg::Sample)
        });
        let class = classes!("dropzone", self.dragging.then_some("dragging"));
        html! {
            <section class="input" aria-label="Load a trace">
                <div class={class} id="dropzone" ondrop={on_drop} ondragover={on_drag_over.clone()}
                    ondragenter={on_drag_over} ondragleave={on_drag_leave}>
                    <p class="hint">{ "Drop trace files, a trace folder or an archive (.tar, .tar.gz, .tar.zst, .zip) here" }</p>
                    <p class="formats">{ "OTF2 · SST DUMPI · Paraver · Pipit CSV · tracelogic text" }</p>
                    <div class="pickers">
                        <label class="button">
                            { "Choose files…" }
                            <input id="pick-files" class="visually-hidden" type="file" multiple=true onchange={on_pick.clone()} />
                        </label>
                        <label class="button">
                            { "Choose a folder…" }
                            <input id="pick-folder" class="visually-hidden" type="file" webkitdirectory=true onchange={on_pick} />
                        </label>
                        <label class="sample-menu">
                            <span>{ "Try a sample:" }</span>
                            <select id="sample" onchange={on_sample}>
                                <option value="" selected=true>{ "choose…" }</option>
                                { for SAMPLES.iter().map(|s| html! { <option value={s.id}>{ s.title }</option> }) }
                            </select>
                        </label>
                        <button type="button" class="secondary" id="take-tour"
                            onclick={ctx.link().callback(|_| Msg::Tour(Some(0)))}>{ "Take the tour" }</button>
                    </div>
                </div>
                { self.view_stored(ctx) }
                { self.view_progress(ctx) }
                { self.view_messages(ctx) }
            </section>
        }
    }

    pub(super) fn view_progress(&self, ctx: &Context<Self>) -> Html {
        let Some(l) = &self.state.loading else {
            return Html::default();
        };
        let p = &l.progress;
        let bar = if p.bytes_total > 0 {
            html! { <progress id="progress-bar" max={p.bytes_total.to_string()} value={p.bytes_done.to_string()}></progress> }
        } else {
            html! { <progress id="progress-bar"></progress> }
        };
        let amount = if p.bytes_total > 0 {
            format!("{} of {}", text::bytes(p.bytes_done), text::bytes(p.bytes_total))
        } else {
            text::bytes(p.bytes_done)
        };
        html! {
            <div class="progress" role="status" aria-live="polite" id="progress">
                <div class="progress-label"><strong>{ format!("Loading {}", l.label) }</strong>{ format!(": {}", p.stage) }</div>
                { bar }
                <span class="amount">{ amount }</span>
                <button type="button" id="cancel" onclick={ctx.link().callback(|_| Msg::Cancel)}>{ "Cancel" }</button>
            </div>
        }
    }

    pub(super) fn view_messages(&self, ctx: &Context<Self>) -> Html {
        html! {
            <>
                if let Some(e) = &self.state.error {
                    <div class="error" role="alert" id="error">
                        <p><strong>{ "Could not load the trace. " }</strong>{ e }</p>
                        if self.state.current.is_some() {
                            <p class="kept">{ "The trace shown below is still loaded." }</p>
                        }
                        <button type="button" onclick={ctx.link().callback(|_| Msg::DismissError)}>{ "Dismiss" }</button>
                    </div>
                }
                if let Some(n) = &self.state.notice {
                    <div class="notice" role="status" id="notice"><p>{ n }</p></div>
                }
            </>
        }
    }

    /// The Overview view with its header, when it is on screen.
    pub(super) fn view_overview(&self, ctx: &Context<Self>) -> Option<Html> {
        let shown = self.overview.as_ref().filter(|_| self.show_overview)?;
        let a = &shown.answer;
        let o = &a.report.overview;
        let back = self.state.current.as_ref().map(|c| {
            html! {
                <button type="button" id="overview-back" class="secondary"
                    onclick={ctx.link().callback(|_| Msg::ShowOverview(false))}>{ format!("Back to {}", c.trace.label) }</button>
            }
        });
        let why = if a.report.input_bytes > full_load_limit() {
            format!(
                "Too large to load whole in the browser ({} over the page's limit of {}): this overview was read one rank at a time.",
                text::bytes(a.report.input_bytes),
                text::bytes(full_load_limit())
            )
        } else {
            "The overview of the whole input, read one rank at a time.".to_owned()
        };
        Some(html! {
            <>
                <div class="trace-header" id="overview-header" data-label={a.label.clone()}>
                    <h2 class="trace-title">{ format!("Overview of {}", a.label) }</h2>
                    <p>{ format!("{} · {} · {} · {}", o.format, o.source, text::counted(a.files.into(), "file", "files"), text::bytes(a.report.input_bytes)) }</p>
                    <p class="note" id="overview-why">{ why }</p>
                    { self.view_load_log() }
                    { for back }
                </div>
                <div id="view-content" tabindex="-1">
                    <OverviewView answer={a.clone()} on_load={ctx.link().callback(Msg::LoadPart)}
                        busy={self.state.loading.is_some()} limit={MAX_INPUT_BYTES} />
                </div>
            </>
        })
    }

    pub(super) fn view_trace(&self, ctx: &Context<Self>) -> Html {
        if let Some(overview) = self.view_overview(ctx) {
            return overview;
        }
        let Some(c) = &self.state.current else {
            return html! { <p class="empty">{ "No trace loaded yet: drop one above or try a sample." }</p> };
        };
        let t = &c.trace;
        let nav = View::ALL.iter().map(|&v| {
            let current = (v == self.state.view).then_some("page");
            html! {
                <li><button type="button" id={format!("nav-{}", v.id())} aria-current={current}
                    onclick={ctx.link().callback(move |_| Msg::Show(v))}>{ v.title() }</button></li>
            }
        });
        let body = match self.state.view {
            View::Summary => html! {
                <SummaryView trace={t.clone()} save={self.state.analyses.get("save").cloned().unwrap_or_default()}
                    on_request={ctx.link().callback(Msg::Analyse)} />
            },
            View::Matrix => html! {
                <MatrixView result={c.matrix.clone()} request={self.state.matrix_request.clone()}
                    on_request={ctx.link().callback(Msg::Matrix)} focus={self.state.focus.clone()}
                    on_focus={ctx.link().callback(Msg::Focus)} ranks={t.summary.ranks}
                    length_ns={t.summary.end_ns.saturating_sub(t.summary.start_ns)}
                    communicators={t.summary.communicators.clone()}
                    topology_threshold={self.state.analyses.get(View::Topology.id()).and_then(topology_threshold)} />
            },
            v => {
                let state = self.state.analyses.get(v.id()).cloned().unwrap_or_default();
                let on_request = ctx.link().callback(Msg::Analyse);
                let on_focus = ctx.link().callback(Msg::Focus);
                let focus = self.state.focus.clone();
                match v {
                    View::Topology => {
                        let library = self.state.library.clone();
                        let on_library = ctx.link().callback(Msg::Library);
                        html! { <TopologyView {state} {on_request} {focus} {on_focus} manage_library=true {library} {on_library} label={t.label.clone()}
                        matrix_threshold={Some(self.state.matrix_request.threshold_pct)} /> }
                    }
                    View::Logical => {
                        let download = self.state.analyses.get("logical-download").cloned();
                        let name = self.state.file_prefix();
                        html! { <LogicalView {state} {on_request} {focus} {on_focus} {download} {name} /> }
                    }
                    View::Patterns => {
                        let search = self.state.analyses.get("match").cloned();
                        html! {
                            <PatternsView state={state.clone()} on_request={on_request.clone()} focus={focus.clone()} {on_focus}>
                                <PatternSearch state={search} patterns={state} {focus} {on_request} />
                            </PatternsView>
                        }
                    }
                    View::Phases => {
                        html! { <PhasesView {state} {on_request} {focus} {on_focus} trace_start_ns={Some(t.summary.start_ns)} /> }
                    }
                    View::WhatIf => html! { <WhatIfView {state} {on_request} {focus} {on_focus} /> },
                    View::Profile => html! { <ProfileView {state} {on_request} {focus} {on_focus} /> },
                    View::Waits => html! { <WaitsView {state} {on_request} {focus} {on_focus} /> },
                    View::Timeline => html! {
                        <crate::views::timeline::TimelineView answer={c.timeline.clone()}
                            on_query={ctx.link().callback(Msg::Timeline)} request={self.state.matrix_request.clone()}
                            on_select={ctx.link().callback(Msg::Matrix)} ranks={t.summary.ranks}
                            length_ns={t.summary.end_ns.saturating_sub(t.summary.start_ns)}
                            topology_nodes={self.state.analyses.get(View::Topology.id()).and_then(crate::views::timeline::topology_nodes)}
                            phases={self.state.analyses.get(View::Phases.id()).and_then(|s| s.result.clone())}
                            path={self.state.analyses.get("critical-path-overlay").and_then(|s| s.result.clone())}
                            on_request={ctx.link().callback(Msg::Analyse)} groups={self.state.timeline_groups()} />
                    },
                    _ => {
                        let on_sample = ctx.link().callback(Msg::CompareSample);
                        let on_sources = ctx.link().callback(Msg::CompareSources);
                        html! { <CompareView {state} {on_request} {on_sample} {on_sources} label={t.label.clone()} /> }
                    }
                }
            }
        };
        html! {
            <>
                <div class="trace-header" id="trace" data-label={t.label.clone()} data-workers={t.workers.max(1).to_string()}>
                    <h2 class="trace-title">{ &t.label }</h2>
                    <p>{ format!("{} · {} · {} file{} · {}", t.summary.format, t.source,
                        t.files, if t.files == 1 { "" } else { "s" }, text::bytes(t.bytes)) }</p>
                    { self.view_load_log() }
                </div>
                <nav class="views" aria-label="Views"><ul>
                    { for nav }
                    if c.io.origin.is_some() {
                        <li><button type="button" id="nav-overview" title="The overview of the whole input: counts, functions, activity of every rank over time; pick a part to load"
                            onclick={ctx.link().callback(|_| Msg::OverviewOfTrace)}>{ "Overview" }</button></li>
                    }
                </ul></nav>
                { self.view_exports(ctx, c) }
                { self.view_selection_note() }
                <div id="view-content" tabindex="-1">{ body }</div>
            </>
        }
    }

    /// Above every view while a selection is active: what it keeps, so no view's figures are
    /// mistaken for the whole run's (the CLI prints its selection in each report).
    pub(super) fn view_selection_note(&self) -> Html {
        let described = text::selection(&self.state.matrix_request.selection);
        if described.is_empty() {
            return Html::default();
        }
        html! {
            <p class="note selection-note" id="selection-note" role="status">
                { format!("Selection active: {described}. Every view shows only the selected calls; the Matrix view's Selection form changes or clears it.") }
            </p>
        }
    }

    /// How the shown trace was read: every stage, from the worker's reading to the matrix.
    pub(super) fn view_load_log(&self) -> Html {
        if self.state.load_log.is_empty() {
            return Html::default();
        }
        let in_worker = self.state.load_log.iter().any(|s| s.ends_with("in the worker"));
        html! {
            <details class="load-log" id="load-log" data-read-in={if in_worker { "worker" } else { "page" }}>
                <summary>{ "How it was read" }</summary>
                <ol>{ for self.state.load_log.iter().map(|s| html! { <li>{ s }</li> }) }</ol>
            </details>
        }
    }

    /// What this browser keeps for the next visit, with the button that forgets it.
    pub(super) fn view_stored(&self, ctx: &Context<Self>) -> Html {
        let compared = self
            .stored_compared
            .as_ref()
            .and_then(|c| serde_json::from_str::<Vec<serde_json::Value>>(&c.runs).ok())
            .map_or(0, |runs| runs.len());
        let runs = match compared {
            0 => String::new(),
            1 => "1 compared run".to_owned(),
            n => format!("{n} compared runs"),
        };
        let what = match &self.stored {
            Some((label, bytes)) if compared > 0 => format!(
                "Kept in this browser for the next visit: {label} ({}) and {runs}.",
                text::bytes(*bytes)
            ),
            Some((label, bytes)) => format!(
                "Kept in this browser for the next visit: {label} ({}).",
                text::bytes(*bytes)
            ),
            None if compared > 0 => format!("Kept in this browser for the next visit: {runs}."),
            None if self.settings_kept => "Your view settings are kept in this browser.".to_owned(),
            None => return Html::default(),
        };
        html! {
            <div class="stored" id="stored" data-compared={compared.to_string()}>
                <p>{ what }</p>
                <button type="button" id="forget" onclick={ctx.link().callback(|_| Msg::Forget)}>{ "Forget stored traces" }</button>
            </div>
        }
    }

    /// The keyboard shortcuts, opened with `?`.
    pub(super) fn view_help(&self, ctx: &Context<Self>) -> Html {
        if !self.help {
            return Html::default();
        }
        let keys = View::ALL
            .iter()
            .enumerate()
            .map(|(i, v)| html! { <tr><td><kbd>{ (i + 1) % 10 }</kbd></td><td>{ v.title() }</td></tr> });
        html! {
            <div class="help-overlay" id="help" role="dialog" aria-modal="true" aria-labelledby="help-title"
                aria-describedby="help-note" onkeydown={Callback::from(trap_tab)}>
                <div class="help-box">
                    <h2 id="help-title">{ "Keyboard shortcuts" }</h2>
                    <table>
                        <tbody>
                            { for keys }
                            <tr><td><kbd>{ "←" }</kbd>{ " " }<kbd>{ "→" }</kbd></td><td>{ "Previous / next view" }</td></tr>
                            <tr><td><kbd>{ "?" }</kbd></td><td>{ "Show or hide this help" }</td></tr>
                            <tr><td><kbd>{ "Esc" }</kbd></td><td>{ "Close this help; cancel a load under way" }</td></tr>
                        </tbody>
                    </table>
                    <p id="help-note">{ "The address keeps the view and the selection: bookmark it, or use back and forward." }</p>
                    <button type="button" id="help-close" onclick={ctx.link().callback(|_| Msg::Help(false))}>{ "Close" }</button>
                </div>
            </div>
        }
    }

    /// The export bar above the view, and the off-screen views of a report being written.
    pub(super) fn view_exports(&self, ctx: &Context<Self>, c: &Shown<TraceWorker>) -> Html {
        let source = (self.report_wanted && report::ready(&self.state.analyses)).then(|| {
            html! {
                <ReportSource trace={c.trace.clone()} matrix={c.matrix.clone()} matrix_request={self.state.matrix_request.clone()}
                    analyses={Rc::new(self.state.analyses.clone())} on_done={ctx.link().callback(Msg::ReportDone)} />
            }
        });
        html! {
            <>
                <ExportBar view={self.state.view.id()} on_report={ctx.link().callback(|_| Msg::Report)} report_busy={self.report_wanted}
                    file_prefix={self.state.file_prefix()} />
                { source.unwrap_or_default() }
            </>
        }
    }

    pub(super) fn view_tour(&self, ctx: &Context<Self>) -> Html {
        match self.tour {
            Some(step) => html! { <TourPanel {step} on_step={ctx.link().callback(Msg::Tour)} /> },
            None => Html::default(),
        }
    }
}

/// The Topology view's cut as the Matrix view names it (`auto 18.33 %, 192 pairs`), read from
/// its answer when it has one.
fn topology_threshold(state: &AnalysisState) -> Option<String> {
    let Ok(crate::protocol::Answer::Topology(report)) = state.result.as_deref()? else {
        return None;
    };
    let f = &report.filter;
    Some(format!(
        "{} {:.2} %, {} pairs",
        f.mode,
        f.threshold_pct,
        text::count(f.pairs_kept as u64)
    ))
}
