//! Exports of what the current view shows: every `<table>` as CSV, every figure (`<svg>`) as a
//! standalone SVG file and as a PNG picture.
//!
//! The exports work on the page as drawn rather than on each view's data, so a new view gets
//! them for free: [`ExportBar`] looks for the tables and figures inside `#view-ID` when the user
//! opens it. An element names its file with `data-export-name` (else its id, caption or
//! label); a table cell can replace its text with `data-export` (tab-separated values become
//! several columns), which the views use for exact numbers and for drawn bars.
//!
//! An SVG file must look the same outside the page, where the page's stylesheet (classes and
//! theme colours) is missing: the computed style of every drawn element is written into its
//! `style` attribute, and the figure gets its background and pixel size. PNG pictures draw that
//! file into a canvas at twice its size. Everything happens in the page (Blob and object URL):
//! nothing is sent anywhere.
//!
//! A figure drawn on a canvas (the matrix heatmaps) has only an overlay `<svg>` (axes, cursor)
//! in the page: its view registers a [`FigureWriter`] under the overlay's
//! `data-figure-key`, and the export writes the SVG file from the data instead of copying the
//! page; the PNG picture is that file drawn into a canvas, as for the others.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::rc::Rc;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{Blob, BlobPropertyBag, Element, HtmlCanvasElement, HtmlImageElement};
use yew::prelude::*;

/// What an exportable element is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A `<table>`: CSV.
    Table,
    /// An `<svg>` figure: SVG and PNG.
    Figure,
}

/// One table or figure of the current view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exportable {
    /// Table or figure.
    pub kind: Kind,
    /// File name without extension, unique in the view (`matrix-heatmap`).
    pub name: String,
    /// What the menu shows (caption or label).
    pub title: String,
    /// Position among the view's tables or figures, to find the element again at click time.
    pub index: usize,
}

/// Lower-case ASCII letters, digits and single dashes: a file name part from any text.
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
        if out.len() >= 48 {
            break;
        }
    }
    out.trim_end_matches('-').to_owned()
}

/// One CSV field (RFC 4180): quoted when it holds a comma, quote or line break.
pub fn csv_field(value: &str) -> String {
    if value.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", value.replace('"', "\"\""))
    } else {
        value.to_owned()
    }
}

/// One CSV line with its CRLF ending.
pub fn csv_line(fields: &[String]) -> String {
    let mut line = fields.iter().map(|f| csv_field(f)).collect::<Vec<_>>().join(",");
    line.push_str("\r\n");
    line
}

/// `a b   c` → `a b c`: the text of a cell as one line.
pub fn collapse_space(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A CSV file from rows of cells; the first row is the header. Rows shorter than the longest
/// are padded so every line has the same number of fields.
pub fn csv(rows: &[Vec<String>]) -> String {
    let width = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut out = String::new();
    for row in rows {
        let mut row = row.clone();
        row.resize(width, String::new());
        out.push_str(&csv_line(&row));
    }
    out
}

/// Made unique within a list by appending `-2`, `-3`…
fn unique(name: String, taken: &mut Vec<String>) -> String {
    let mut candidate = name.clone();
    let mut n = 2;
    while taken.contains(&candidate) {
        candidate = format!("{name}-{n}");
        n += 1;
    }
    taken.push(candidate.clone());
    candidate
}

fn document() -> Option<web_sys::Document> {
    web_sys::window().and_then(|w| w.document())
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

/// The view's figures: outermost `<svg>` elements (an svg inside another is part of it).
fn figures(root: &Element) -> Vec<Element> {
    elements(root, "svg")
        .into_iter()
        .filter(|e| {
            e.parent_element()
                .and_then(|p| p.closest("svg").ok().flatten())
                .is_none()
        })
        .collect()
}

fn tables(root: &Element) -> Vec<Element> {
    elements(root, "table")
}

fn text_of(e: &Element, selector: &str) -> Option<String> {
    let t = e.query_selector(selector).ok().flatten()?.text_content()?;
    let t = collapse_space(&t);
    (!t.is_empty()).then_some(t)
}

/// What a table or figure is called: `data-export-name`, its id, the id of its figure, its
/// caption or label.
fn title_of(e: &Element, kind: Kind) -> Option<String> {
    if let Some(t) = e.get_attribute("data-export-name") {
        return Some(t);
    }
    match kind {
        Kind::Table => text_of(e, "caption"),
        Kind::Figure => e.get_attribute("aria-label").or_else(|| {
            e.closest("figure")
                .ok()
                .flatten()
                .and_then(|f| text_of(&f, "figcaption"))
        }),
    }
}

fn name_of(e: &Element, kind: Kind) -> Option<String> {
    if let Some(n) = e.get_attribute("data-export-name") {
        return Some(slug(&n));
    }
    let id = e.id();
    if !id.is_empty() {
        return Some(slug(&id));
    }
    if let Some(f) = e.closest("figure").ok().flatten().filter(|f| !f.id().is_empty()) {
        return Some(slug(&f.id()));
    }
    title_of(e, kind).map(|t| slug(&t)).filter(|s| !s.is_empty())
}

/// The section of view `view_id` (`#view-matrix`).
pub fn view_root(view_id: &str) -> Option<Element> {
    document()?.get_element_by_id(&format!("view-{view_id}"))
}

/// Every table and figure of a view, in page order (tables first).
pub fn scan(root: &Element, view_id: &str) -> Vec<Exportable> {
    let mut taken = Vec::new();
    let mut out = Vec::new();
    for (kind, list, word) in [
        (Kind::Table, tables(root), "table"),
        (Kind::Figure, figures(root), "figure"),
    ] {
        for (index, e) in list.iter().enumerate() {
            let base = name_of(e, kind).unwrap_or_else(|| format!("{word}-{}", index + 1));
            let base = if base.starts_with(view_id) {
                base
            } else {
                format!("{view_id}-{base}")
            };
            let name = unique(base, &mut taken);
            let title = title_of(e, kind).unwrap_or_else(|| name.clone());
            out.push(Exportable {
                kind,
                name,
                title,
                index,
            });
        }
    }
    out
}

/// The element `item` was scanned from, if the view still shows it.
fn element_of(root: &Element, item: &Exportable) -> Option<Element> {
    match item.kind {
        Kind::Table => tables(root).into_iter().nth(item.index),
        Kind::Figure => figures(root).into_iter().nth(item.index),
    }
}

/// A cell's values: `data-export` split at tabs, else its text on one line.
fn cell_values(cell: &Element) -> Vec<String> {
    match cell.get_attribute("data-export") {
        Some(v) => v.split('\t').map(str::to_owned).collect(),
        None => vec![collapse_space(&cell.text_content().unwrap_or_default())],
    }
}

/// A table as CSV: the header is the last row of its `<thead>` (numbered columns when it has
/// none), then one line per body row.
pub fn table_csv(table: &Element) -> String {
    let row_cells = |tr: &Element| -> Vec<String> {
        elements(tr, ":scope > th, :scope > td")
            .iter()
            .flat_map(cell_values)
            .collect()
    };
    let head = elements(table, ":scope > thead > tr");
    let body: Vec<Vec<String>> = elements(table, ":scope > tbody > tr, :scope > tr, :scope > tfoot > tr")
        .iter()
        .map(row_cells)
        .collect();
    let header = match head.last() {
        Some(tr) => row_cells(tr),
        None => {
            let width = body.iter().map(Vec::len).max().unwrap_or(0);
            (1..=width).map(|i| format!("column {i}")).collect()
        }
    };
    let mut rows = vec![header];
    rows.extend(body);
    csv(&rows)
}

/// Presentation properties copied from the page's computed style into an exported figure.
const STYLE_PROPERTIES: [&str; 16] = [
    "fill",
    "fill-opacity",
    "stroke",
    "stroke-width",
    "stroke-opacity",
    "stroke-dasharray",
    "stroke-linecap",
    "opacity",
    "font-family",
    "font-size",
    "font-weight",
    "font-style",
    "text-anchor",
    "dominant-baseline",
    "visibility",
    "display",
];

/// Values that need not be written (the SVG defaults).
fn is_default(property: &str, value: &str) -> bool {
    matches!(
        (property, value),
        ("fill-opacity" | "stroke-opacity" | "opacity", "1")
            | ("stroke", "none")
            | ("stroke-width", "1px")
            | ("stroke-dasharray", "none")
            | ("stroke-linecap", "butt")
            | ("font-style", "normal")
            | ("text-anchor", "start")
            | ("dominant-baseline", "auto")
            | ("visibility", "visible")
            | ("display", "inline" | "block")
            | (_, "")
    )
}

fn is_text(e: &Element) -> bool {
    matches!(e.tag_name().as_str(), "text" | "tspan" | "textPath" | "svg")
}

/// The computed style of `e` as a `style` attribute value (defaults left out; fonts only on
/// text).
fn inline_style(window: &web_sys::Window, e: &Element) -> String {
    let Ok(Some(style)) = window.get_computed_style(e) else {
        return String::new();
    };
    let text = is_text(e);
    let mut out = String::new();
    for p in STYLE_PROPERTIES {
        if !text && (p.starts_with("font") || p == "text-anchor" || p == "dominant-baseline") {
            continue;
        }
        let v = style.get_property_value(p).unwrap_or_default();
        if !is_default(p, &v) {
            let _ = write!(out, "{p}: {v}; ");
        }
    }
    out.trim_end().to_owned()
}

/// `rgba(0, 0, 0, 0)` and `transparent` draw nothing.
fn is_transparent(colour: &str) -> bool {
    colour.is_empty() || colour == "transparent" || colour.replace(' ', "").ends_with(",0)")
}

/// The colour the figure is drawn on: its own background, else the nearest ancestor's.
fn background_of(window: &web_sys::Window, e: &Element) -> String {
    let mut at = Some(e.clone());
    while let Some(el) = at {
        if let Ok(Some(s)) = window.get_computed_style(&el) {
            let c = s.get_property_value("background-color").unwrap_or_default();
            if !is_transparent(&c) {
                return c;
            }
        }
        at = el.parent_element();
    }
    "#ffffff".to_owned()
}

/// A figure as a standalone SVG document with its pixel width and height.
pub fn svg_document(svg: &Element) -> Result<(String, f64, f64), String> {
    let window = web_sys::window().ok_or("no window")?;
    let copy: Element = svg
        .clone_node_with_deep(true)
        .map_err(|_| "cannot copy the figure")?
        .dyn_into()
        .map_err(|_| "the figure is not an element")?;
    let originals = elements(svg, "*");
    let copies = elements(&copy, "*");
    if originals.len() != copies.len() {
        return Err("the figure changed while it was copied".into());
    }
    for (o, c) in std::iter::once((svg, &copy)).chain(originals.iter().zip(copies.iter())) {
        // Presentation attributes naming the page's CSS variables mean nothing outside it; the
        // computed value goes into `style` below.
        for attribute in ["fill", "stroke"] {
            if c.get_attribute(attribute).is_some_and(|v| v.contains("var(")) {
                let _ = c.remove_attribute(attribute);
            }
        }
        let style = inline_style(&window, o);
        if !style.is_empty() {
            let own = c.get_attribute("style").unwrap_or_default();
            let _ = c.set_attribute("style", format!("{own} {style}").trim());
        }
    }
    let _ = copy.remove_attribute("tabindex");
    let rect = svg.get_bounding_client_rect();
    let view_box: Vec<f64> = svg
        .get_attribute("viewBox")
        .unwrap_or_default()
        .split([' ', ','])
        .filter_map(|v| v.parse().ok())
        .collect();
    let (mut width, mut height) = (rect.width().round(), rect.height().round());
    if width < 1.0 || height < 1.0 {
        (width, height) = match view_box.as_slice() {
            [_, _, w, h] => (*w, *h),
            _ => (640.0, 480.0),
        };
    }
    let _ = copy.set_attribute("width", &width.to_string());
    let _ = copy.set_attribute("height", &height.to_string());
    let (x, y, w, h) = match view_box.as_slice() {
        [x, y, w, h] => (*x, *y, *w, *h),
        _ => (0.0, 0.0, width, height),
    };
    if let Some(doc) = document() {
        if let Ok(bg) = doc.create_element_ns(Some("http://www.w3.org/2000/svg"), "rect") {
            for (k, v) in [
                ("x", x.to_string()),
                ("y", y.to_string()),
                ("width", w.to_string()),
                ("height", h.to_string()),
                ("fill", background_of(&window, svg)),
            ] {
                let _ = bg.set_attribute(k, &v);
            }
            let _ = copy.insert_before(&bg, copy.first_child().as_ref());
        }
    }
    let text = web_sys::XmlSerializer::new()
        .and_then(|s| s.serialize_to_string(&copy))
        .map_err(|_| "cannot serialise the figure")?;
    Ok((
        format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{text}\n"),
        width,
        height,
    ))
}

/// Writes a canvas figure as a standalone SVG document with its pixel width and height, given
/// the overlay `<svg>` the page shows over the canvas (its size and computed colours).
pub type FigureWriter = Rc<dyn Fn(&Element) -> Result<(String, f64, f64), String>>;

thread_local! {
    static FIGURE_WRITERS: RefCell<(u64, HashMap<u64, FigureWriter>)> = RefCell::new((0, HashMap::new()));
}

/// A new key for [`register_figure`], unique in the page.
pub fn figure_key() -> u64 {
    FIGURE_WRITERS.with(|w| {
        let mut w = w.borrow_mut();
        w.0 += 1;
        w.0
    })
}

/// Export the figure whose overlay has `data-figure-key="KEY"` with `writer` (replacing the
/// previous writer of that key).
pub fn register_figure(key: u64, writer: FigureWriter) {
    FIGURE_WRITERS.with(|w| w.borrow_mut().1.insert(key, writer));
}

/// Forget the writer of `key` (its figure is gone).
pub fn unregister_figure(key: u64) {
    FIGURE_WRITERS.with(|w| w.borrow_mut().1.remove(&key));
}

fn figure_writer(figure: &Element) -> Option<FigureWriter> {
    let key: u64 = figure.get_attribute("data-figure-key")?.parse().ok()?;
    FIGURE_WRITERS.with(|w| w.borrow().1.get(&key).cloned())
}

/// The computed value of CSS `property` (a custom property too) on `e`, trimmed.
pub fn computed(e: &Element, property: &str) -> String {
    web_sys::window()
        .and_then(|w| w.get_computed_style(e).ok().flatten())
        .and_then(|s| s.get_property_value(property).ok())
        .unwrap_or_default()
        .trim()
        .to_owned()
}

/// The colour `e` is drawn on: its own background, else its nearest ancestor's.
pub fn background(e: &Element) -> String {
    web_sys::window().map_or_else(|| "#ffffff".to_owned(), |w| background_of(&w, e))
}

/// A figure as a standalone SVG document with its pixel size: written from the data for a
/// canvas figure, else copied from the page.
fn figure_document(figure: &Element) -> Result<(String, f64, f64), String> {
    match figure_writer(figure) {
        Some(write) => write(figure),
        None => svg_document(figure),
    }
}

/// Pixels per CSS pixel of exported PNG pictures.
pub const PNG_SCALE: f64 = 2.0;

/// A standalone SVG drawn into a canvas at [`PNG_SCALE`], as a PNG blob.
pub async fn png_of(svg: &str, width: f64, height: f64) -> Result<Blob, String> {
    let doc = document().ok_or("no document")?;
    let image = HtmlImageElement::new().map_err(|_| "cannot create an image")?;
    let url = format!(
        "data:image/svg+xml;charset=utf-8,{}",
        String::from(js_sys::encode_uri_component(svg))
    );
    image.set_src(&url);
    JsFuture::from(image.decode())
        .await
        .map_err(|_| "the browser could not draw the figure")?;
    let canvas: HtmlCanvasElement = doc
        .create_element("canvas")
        .map_err(|_| "cannot create a canvas")?
        .dyn_into()
        .map_err(|_| "not a canvas")?;
    let (w, h) = ((width * PNG_SCALE).ceil(), (height * PNG_SCALE).ceil());
    canvas.set_width(w as u32);
    canvas.set_height(h as u32);
    let context: web_sys::CanvasRenderingContext2d = canvas
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into().ok())
        .ok_or("no 2D canvas")?;
    context
        .draw_image_with_html_image_element_and_dw_and_dh(&image, 0.0, 0.0, w, h)
        .map_err(|_| "cannot draw the figure")?;
    let promise = js_sys::Promise::new(&mut |resolve, _reject| {
        let _ = canvas.to_blob(&resolve);
    });
    let blob = JsFuture::from(promise).await.map_err(|_| "cannot encode the PNG")?;
    blob.dyn_into::<Blob>().map_err(|_| "the canvas gave no PNG".into())
}

/// A blob of `text` with MIME type `mime`.
pub fn text_blob(text: &str, mime: &str) -> Option<Blob> {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let options = BlobPropertyBag::new();
    options.set_type(mime);
    Blob::new_with_str_sequence_and_options(&parts, &options).ok()
}

/// Offer `blob` as a file named `name` (object URL on a link: nothing leaves the page).
pub fn save_blob(name: &str, blob: &Blob) {
    let Ok(url) = web_sys::Url::create_object_url_with_blob(blob) else {
        return;
    };
    if let Some(a) = document()
        .and_then(|d| d.create_element("a").ok())
        .and_then(|a| a.dyn_into::<web_sys::HtmlAnchorElement>().ok())
    {
        a.set_href(&url);
        a.set_download(name);
        a.click();
    }
    // The download has its own copy once started; free the URL after the click is handled.
    gloo::timers::callback::Timeout::new(10_000, move || {
        let _ = web_sys::Url::revoke_object_url(&url);
    })
    .forget();
}

/// The three export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A table as CSV.
    Csv,
    /// A figure as SVG.
    Svg,
    /// A figure as PNG.
    Png,
}

impl Format {
    fn extension(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Svg => "svg",
            Format::Png => "png",
        }
    }
}

/// Export `item` of view `view_id` as `format`; the error says what went wrong.
/// The file is named after the trace (`prefix`, a [`crate::text::file_stem`]) and the item:
/// `npb-lu.S.8-matrix-bytes.csv`, so exports of several runs do not overwrite each other.
pub async fn export(view_id: &str, prefix: &str, item: &Exportable, format: Format) -> Result<(), String> {
    let root = view_root(view_id).ok_or("the view is no longer shown")?;
    let element = element_of(&root, item).ok_or_else(|| format!("{} is no longer shown", item.title))?;
    let file = file_name(prefix, &item.name, format);
    let blob = match format {
        Format::Csv => text_blob(&table_csv(&element), "text/csv"),
        Format::Svg => text_blob(&figure_document(&element)?.0, "image/svg+xml"),
        Format::Png => {
            let (svg, w, h) = figure_document(&element)?;
            Some(png_of(&svg, w, h).await?)
        }
    }
    .ok_or("the browser could not create the file")?;
    save_blob(&file, &blob);
    Ok(())
}

/// `prefix-name.ext`, or `name.ext` when there is no prefix.
pub fn file_name(prefix: &str, name: &str, format: Format) -> String {
    if prefix.is_empty() {
        format!("{name}.{}", format.extension())
    } else {
        format!("{prefix}-{name}.{}", format.extension())
    }
}

/// Properties of [`ExportBar`].
#[derive(Properties, PartialEq)]
pub struct ExportBarProps {
    /// Id of the view shown ([`crate::views::View::id`]).
    pub view: &'static str,
    /// Ask for the HTML report of every analysis.
    pub on_report: Callback<()>,
    /// True while the report is being put together.
    pub report_busy: bool,
    /// The trace's name as a file name part ([`crate::text::file_stem`]), the start of every
    /// exported file's name.
    #[prop_or_default]
    pub file_prefix: String,
}

/// The export menu above the current view: its tables and figures with CSV / SVG / PNG
/// buttons (Escape closes the list), and the HTML report of all analyses.
#[function_component(ExportBar)]
pub fn export_bar(props: &ExportBarProps) -> Html {
    let open = use_state(|| false);
    let items = use_state(Vec::<Exportable>::new);
    let status = use_state(|| None::<String>);
    {
        let (open, status) = (open.clone(), status.clone());
        use_effect_with(props.view, move |_| {
            open.set(false);
            status.set(None);
        });
    }
    let view = props.view;
    let prefix = props.file_prefix.clone();
    let toggle = {
        let (open, items) = (open.clone(), items.clone());
        Callback::from(move |_: MouseEvent| {
            if !*open {
                items.set(view_root(view).map(|r| scan(&r, view)).unwrap_or_default());
            }
            open.set(!*open);
        })
    };
    let button = |item: &Exportable, format: Format| {
        let label = format.extension().to_uppercase();
        let id = format!("export-{}-{}", format.extension(), item.name);
        let title = format!("{} as {label}", item.title);
        let item = item.clone();
        let status = status.clone();
        let prefix = prefix.clone();
        let onclick = Callback::from(move |_: MouseEvent| {
            let (item, status, prefix) = (item.clone(), status.clone(), prefix.clone());
            wasm_bindgen_futures::spawn_local(async move {
                match export(view, &prefix, &item, format).await {
                    Ok(()) => status.set(Some(format!("Saved {}", file_name(&prefix, &item.name, format)))),
                    Err(e) => status.set(Some(format!("Export failed: {e}"))),
                }
            });
        });
        html! { <button type="button" class="secondary" {id} {onclick} {title}>{ label }</button> }
    };
    let on_report = props.on_report.reform(|_: MouseEvent| ());
    let on_key = {
        let open = open.clone();
        Callback::from(move |e: KeyboardEvent| {
            if e.key() == "Escape" {
                open.set(false);
            }
        })
    };
    html! {
        <div class="export-bar" id="exports" onkeydown={on_key} data-file-prefix={props.file_prefix.clone()}>
            <button type="button" class="secondary" id="export-toggle" aria-expanded={open.to_string()}
                aria-controls="export-list" onclick={toggle}>{ "Export…" }</button>
            <button type="button" class="secondary" id="export-report" onclick={on_report} disabled={props.report_busy}>
                { if props.report_busy { "Preparing the report…" } else { "HTML report" } }
            </button>
            if let Some(s) = &*status { <span class="small" role="status" id="export-status">{ s }</span> }
            if *open {
                <div class="export-list" id="export-list">
                    if items.is_empty() { <p class="note">{ "This view has no table or figure to export yet." }</p> }
                    <ul>
                        { for items.iter().map(|item| html! {
                            <li data-export-item={item.name.clone()} data-kind={match item.kind { Kind::Table => "table", Kind::Figure => "figure" }}>
                                <span class="export-title">{ &item.title }</span>
                                if item.kind == Kind::Table { { button(item, Format::Csv) } }
                                else { { button(item, Format::Svg) }{ button(item, Format::Png) } }
                            </li>
                        }) }
                    </ul>
                </div>
            }
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_file_name_safe() {
        assert_eq!(slug("Calls by MPI function"), "calls-by-mpi-function");
        assert_eq!(slug("  Rank ↔ coordinates (first 10)"), "rank-coordinates-first-10");
        assert_eq!(slug("<script>"), "script");
        assert_eq!(slug("---"), "");
        assert!(slug(&"x".repeat(500)).len() <= 48);
    }

    #[test]
    fn csv_quotes_only_what_needs_it() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("1,234"), "\"1,234\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("two\nlines"), "\"two\nlines\"");
        assert_eq!(csv_line(&["a".into(), "b,c".into()]), "a,\"b,c\"\r\n");
    }

    #[test]
    fn csv_pads_short_rows() {
        let rows = vec![vec!["Rank".to_owned(), "Calls".to_owned()], vec!["0".to_owned()]];
        assert_eq!(csv(&rows), "Rank,Calls\r\n0,\r\n");
        assert_eq!(csv(&[]), "");
    }

    #[test]
    fn names_are_made_unique() {
        let mut taken = Vec::new();
        assert_eq!(unique("a".into(), &mut taken), "a");
        assert_eq!(unique("a".into(), &mut taken), "a-2");
        assert_eq!(unique("a".into(), &mut taken), "a-3");
    }

    #[test]
    fn only_drawing_styles_are_written() {
        assert!(is_default("stroke", "none"));
        assert!(!is_default("fill", "rgb(31, 95, 174)"));
        assert!(is_default("fill", ""));
        assert!(is_transparent("rgba(0, 0, 0, 0)"));
        assert!(!is_transparent("rgb(255, 255, 255)"));
    }
}
