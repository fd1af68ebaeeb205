//! The self-contained HTML report of every analysis of the loaded trace: one `.html` file with
//! the summary, the matrix, the topology with its mapping, the logical trace (compressed
//! program), the patterns, the phases and the what-if predictions, their figures inlined as
//! SVG, the page's CSS inlined, and no script, so it opens offline in any browser.
//!
//! How it is built: the analyses run in the worker as for the views (the page asks for the ones
//! not computed yet); once every answer is in, [`ReportSource`] renders the views themselves,
//! off screen, with those answers, and takes a copy of what they drew. So the report shows
//! exactly what the views show, and a view's improvement reaches the report with no second
//! renderer to keep in step. The copy drops what only works in the live page (forms, download
//! buttons, tooltips, `data-*` test hooks, event and focus attributes); other buttons become
//! their text. Names from the trace reach the
//! report only as text: the views put them in text nodes (Yew escapes them) and the browser's
//! serialiser escapes `<`, `>` and `&` again when the copy becomes HTML; the report's own
//! header is escaped by [`escape`]. A Content-Security-Policy in the file forbids every script
//! and every request.

use crate::export::{save_blob, text_blob};
use crate::protocol::{LoadedTrace, MatrixRequest, MatrixView as MatrixResult, ReferenceLibrary};
use crate::text;
use crate::views::logical::LogicalView;
use crate::views::matrix::MatrixView;
use crate::views::patterns::PatternsView;
use crate::views::phases::PhasesView;
use crate::views::summary::SummaryView;
use crate::views::topology::TopologyView;
use crate::views::whatif::WhatIfView;
use crate::views::{AnalysisState, Focus, View};
use std::collections::HashMap;
use std::rc::Rc;
use wasm_bindgen::JsCast;
use web_sys::Element;
use yew::prelude::*;

/// The views in the report, in order.
pub const REPORT_VIEWS: [View; 7] = [
    View::Summary,
    View::Matrix,
    View::Topology,
    View::Logical,
    View::Patterns,
    View::Phases,
    View::WhatIf,
];

/// Views whose analysis the worker must have answered before the report can be drawn.
pub fn analysis_views() -> impl Iterator<Item = View> {
    REPORT_VIEWS.into_iter().filter(|v| v.default_request().is_some())
}

/// True when every analysis of the report has an answer (a result or an error) and none is
/// being recomputed.
pub fn ready(analyses: &HashMap<&'static str, AnalysisState>) -> bool {
    analysis_views().all(|v| analyses.get(v.id()).is_some_and(|s| s.result.is_some() && !s.pending))
}

/// `text` with `&`, `<`, `>`, `"` and `'` escaped, for HTML text and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Extra rules of the report file (on top of the page's stylesheet).
const REPORT_CSS: &str = "\
.report-header { padding: 1rem 1.5rem; }
.report-toc ol { display: flex; flex-wrap: wrap; gap: 0.4rem 1.4rem; padding: 0; list-style: none; }
.report-section { margin: 1.5rem 0 2.5rem; padding-top: 1rem; border-top: 2px solid var(--line); }
.report-footer { color: var(--muted); font-size: 0.85rem; margin-top: 2rem; }
@media print { .report-section { break-before: page; } }
";

/// The report file around `body` (already HTML): the header with the escaped `title` and
/// `subtitle`, a table of contents of `sections` (`(id, title)`), the inlined `css`, and a
/// policy that forbids scripts and requests.
pub fn report_document(title: &str, subtitle: &str, css: &str, sections: &[(&str, &str)], body: &str) -> String {
    let toc: String = sections
        .iter()
        .map(|(id, t)| format!("<li><a href=\"#report-{}\">{}</a></li>", escape(id), escape(t)))
        .collect();
    // No `<` in the style element, so nothing in it can end it early (CSS reads `\3c ` as `<`).
    let css = css.replace('<', "\\3c ");
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n\
<title>tracelogic report: {t}</title>\n<style>\n{css}\n{REPORT_CSS}</style>\n</head>\n<body>\n\
<header class=\"topbar report-header\"><h1>tracelogic report</h1><p class=\"tagline\">{t}</p></header>\n\
<main>\n<p class=\"report-subtitle\">{s}</p>\n<nav class=\"report-toc\" aria-label=\"Sections\"><ol>{toc}</ol></nav>\n\
{body}\n<p class=\"report-footer\">Written by tracelogic in the browser from the trace above; every figure is the \
one the web app drew. This file needs no network and runs no script.</p>\n</main>\n</body>\n</html>\n",
        t = escape(title),
        s = escape(subtitle),
    )
}

fn elements(root: &Element, selector: &str) -> Vec<Element> {
    let Ok(list) = root.query_selector_all(selector) else {
        return Vec::new();
    };
    (0..list.length())
        .filter_map(|i| list.item(i))
        .filter_map(|n| n.dyn_into::<Element>().ok())
        .collect()
}

/// Elements of the live page that mean nothing in a static file.
const LIVE_ONLY: &str =
    "script, form, input, select, textarea, .tooltip, .downloads, .export-bar, .waiting, [data-report-skip], .view button.download";

/// A copy of the drawn views without what only works in the page, as HTML.
pub fn snapshot(root: &Element) -> Result<String, String> {
    let copy: Element = root
        .clone_node_with_deep(true)
        .map_err(|_| "cannot copy the views")?
        .dyn_into()
        .map_err(|_| "the views are not an element")?;
    for e in elements(&copy, LIVE_ONLY) {
        e.remove();
    }
    // A button that names something (a sortable column, a node of the phase tree) keeps its
    // text as a plain span.
    for b in elements(&copy, "button") {
        if let Some(doc) = b.owner_document() {
            if let Ok(span) = doc.create_element("span") {
                span.set_text_content(b.text_content().as_deref());
                span.set_class_name("was-button");
                let _ = b.replace_with_with_node_1(&span);
            }
        }
    }
    for e in elements(&copy, "*") {
        let names = e.get_attribute_names();
        for name in names.iter().filter_map(|n| n.as_string()) {
            let value = e.get_attribute(&name).unwrap_or_default();
            let drop = name.starts_with("on")
                || name.starts_with("data-")
                || name == "tabindex"
                || name == "aria-hidden"
                || value.contains(['<', '>']);
            if drop {
                let _ = e.remove_attribute(&name);
            }
        }
    }
    Ok(copy.inner_html())
}

/// The rules of the page's own stylesheets, as one CSS text.
pub fn page_css() -> String {
    let Some(sheets) = web_sys::window().and_then(|w| w.document()).map(|d| d.style_sheets()) else {
        return String::new();
    };
    let mut out = String::new();
    for i in 0..sheets.length() {
        let Some(sheet) = sheets.item(i).and_then(|s| s.dyn_into::<web_sys::CssStyleSheet>().ok()) else {
            continue;
        };
        let Ok(rules) = sheet.css_rules() else { continue };
        for j in 0..rules.length() {
            if let Some(rule) = rules.item(j) {
                out.push_str(&rule.css_text());
                out.push('\n');
            }
        }
    }
    out
}

/// Properties of [`ReportSource`].
#[derive(Properties, PartialEq)]
pub struct ReportSourceProps {
    /// The loaded trace.
    pub trace: Rc<LoadedTrace>,
    /// The matrix as shown.
    pub matrix: Rc<MatrixResult>,
    /// The matrix request as shown.
    pub matrix_request: MatrixRequest,
    /// The answer of each analysis view, by [`View::id`].
    pub analyses: Rc<HashMap<&'static str, AnalysisState>>,
    /// Told when the report file is saved, or why it could not be.
    pub on_done: Callback<Result<String, String>>,
}

/// Renders every view of the report off screen, copies them into the report file and saves it.
#[function_component(ReportSource)]
pub fn report_source(props: &ReportSourceProps) -> Html {
    let node = use_node_ref();
    {
        let node = node.clone();
        let on_done = props.on_done.clone();
        let trace = props.trace.clone();
        use_effect_with((), move |_| {
            // The views draw in the same pass, their children right after: wait one turn.
            let timer = gloo::timers::callback::Timeout::new(50, move || {
                on_done.emit(build(&node, &trace));
            });
            move || drop(timer)
        });
    }
    let noop_focus = Callback::noop();
    let state = |v: View| props.analyses.get(v.id()).cloned().unwrap_or_default();
    let section = |v: View, inner: Html| {
        html! { <section class="report-section" id={format!("report-{}", v.id())}>{ inner }</section> }
    };
    html! {
        <div class="report-source" ref={node} aria-hidden="true">
            { section(View::Summary, html! { <SummaryView trace={props.trace.clone()} /> }) }
            { section(View::Matrix, html! { <MatrixView result={props.matrix.clone()} request={props.matrix_request.clone()} on_request={Callback::noop()} /> }) }
            { section(View::Topology, html! { <TopologyView state={state(View::Topology)} on_request={Callback::noop()} focus={Focus::default()} on_focus={noop_focus.clone()}
                library={ReferenceLibrary::default()} on_library={Callback::noop()} label={props.trace.label.clone()} /> }) }
            { section(View::Logical, html! { <LogicalView state={state(View::Logical)} on_request={Callback::noop()} focus={Focus::default()} on_focus={noop_focus.clone()} /> }) }
            { section(View::Patterns, html! { <PatternsView state={state(View::Patterns)} on_request={Callback::noop()} focus={Focus::default()} on_focus={noop_focus.clone()} /> }) }
            { section(View::Phases, html! { <PhasesView state={state(View::Phases)} on_request={Callback::noop()} focus={Focus::default()} on_focus={noop_focus.clone()} trace_start_ns={Some(props.trace.summary.start_ns)} /> }) }
            { section(View::WhatIf, html! { <WhatIfView state={state(View::WhatIf)} on_request={Callback::noop()} focus={Focus::default()} on_focus={noop_focus} /> }) }
        </div>
    }
}

/// Copy the drawn views into the report file and offer it for download; the file name.
fn build(node: &NodeRef, trace: &LoadedTrace) -> Result<String, String> {
    let root = node.cast::<Element>().ok_or("the report views are not drawn")?;
    let body = snapshot(&root)?;
    let sections: Vec<(&str, &str)> = REPORT_VIEWS.iter().map(|v| (v.id(), v.title())).collect();
    let s = &trace.summary;
    let subtitle = format!(
        "{} · {} · {} ranks · {} MPI calls · {} file{} · {}",
        s.format,
        trace.source,
        s.ranks,
        text::count(s.calls),
        trace.files,
        if trace.files == 1 { "" } else { "s" },
        text::bytes(trace.bytes)
    );
    let html = report_document(&trace.label, &subtitle, &page_css(), &sections, &body);
    let name = format!("{}-report.html", text::file_stem(&trace.label));
    let blob = text_blob(&html, "text/html").ok_or("the browser could not create the file")?;
    save_blob(&name, &blob);
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_text_and_attributes() {
        assert_eq!(
            escape("<script>alert('x') & \"y\"</script>"),
            "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;"
        );
        assert_eq!(escape("plain"), "plain");
    }

    #[test]
    fn the_document_escapes_its_header_and_forbids_scripts() {
        let hostile = "<script>alert(1)</script>";
        let html = report_document(
            hostile,
            &format!("source {hostile}"),
            "a { color: red } </style><script>x</script>",
            &[("summary", "Summary"), ("matrix", "Matrix")],
            "<section id=\"report-summary\"></section>",
        );
        assert!(!html.to_lowercase().contains("<script"), "{html}");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(html.contains("default-src 'none'"));
        assert!(html.contains("href=\"#report-matrix\""));
        assert_eq!(
            html.matches("</style>").count(),
            1,
            "the CSS cannot close the style element"
        );
    }

    #[test]
    fn the_report_waits_for_every_analysis() {
        let mut analyses: HashMap<&'static str, AnalysisState> = HashMap::new();
        assert!(!ready(&analyses));
        for v in analysis_views() {
            analyses.insert(
                v.id(),
                AnalysisState {
                    result: Some(Rc::new(Ok(crate::protocol::Answer::Download(String::new())))),
                    ..AnalysisState::default()
                },
            );
        }
        assert!(ready(&analyses));
        analyses.get_mut("phases").unwrap().pending = true;
        assert!(!ready(&analyses));
        assert_eq!(analysis_views().count(), 5);
    }
}
