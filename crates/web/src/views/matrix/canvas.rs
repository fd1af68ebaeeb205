//! The matrix figures' cells on a canvas (one pixel per cell, scaled without smoothing), the
//! hook the browser tests read a cell with, and the SVG export written from the data.

use super::*;

/// The binary matrix's colours in the current theme (`--kept`, `--removed` on `e`).
pub(super) fn binary_colours(e: &Element) -> BinaryColours {
    let default = BinaryColours::default();
    BinaryColours {
        kept: parse_css_colour(&export::computed(e, "--kept")).unwrap_or(default.kept),
        removed: parse_css_colour(&export::computed(e, "--removed")).unwrap_or(default.removed),
    }
}

/// One pixel per cell of `layer` on a canvas of `side` × `side` pixels.
pub(super) fn cell_image(grid: &Grid, layer: Layer, colours: &BinaryColours) -> Result<HtmlCanvasElement, JsValue> {
    let document = web_sys::window().and_then(|w| w.document()).ok_or("no document")?;
    let small: HtmlCanvasElement = document.create_element("canvas")?.dyn_into()?;
    small.set_width(grid.side);
    small.set_height(grid.side);
    let pixels = grid.pixels(layer, colours);
    let image = ImageData::new_with_u8_clamped_array_and_sh(Clamped(&pixels), grid.side, grid.side)?;
    context(&small)?.put_image_data(&image, 0.0, 0.0)?;
    Ok(small)
}

pub(super) fn context(canvas: &HtmlCanvasElement) -> Result<CanvasRenderingContext2d, JsValue> {
    canvas
        .get_context("2d")?
        .ok_or("no 2D canvas")?
        .dyn_into::<CanvasRenderingContext2d>()
        .map_err(|_| "not a 2D canvas".into())
}

/// Draw the cells of `layer` over the whole of `canvas`, at its size in device pixels (crisp
/// on high-density screens). In the report's off-screen copy the picture also goes into
/// `snapshot` (an SVG `<image>`), which survives the copy.
pub(super) fn paint(
    canvas: &HtmlCanvasElement,
    snapshot: Option<Element>,
    grid: &Grid,
    layer: Layer,
) -> Result<(), JsValue> {
    let window = web_sys::window().ok_or("no window")?;
    let rect = canvas.get_bounding_client_rect();
    let ratio = window.device_pixel_ratio().max(1.0);
    let (w, h) = (
        (rect.width() * ratio).round().max(1.0) as u32,
        (rect.height() * ratio).round().max(1.0) as u32,
    );
    if canvas.width() != w || canvas.height() != h {
        canvas.set_width(w);
        canvas.set_height(h);
    }
    let ctx = context(canvas)?;
    ctx.clear_rect(0.0, 0.0, f64::from(w), f64::from(h));
    if grid.side == 0 {
        return Ok(());
    }
    let small = cell_image(grid, layer, &binary_colours(canvas))?;
    ctx.set_image_smoothing_enabled(false);
    ctx.draw_image_with_html_canvas_element_and_dw_and_dh(&small, 0.0, 0.0, f64::from(w), f64::from(h))?;
    if let Some(image) = snapshot.filter(|_| canvas.closest(".report-source").ok().flatten().is_some()) {
        image.set_attribute("href", &small.to_data_url()?)?;
    }
    Ok(())
}

/// What the page drew in one figure: read by exports and by [`install_cell_hook`].
pub(super) struct Drawn {
    pub(super) result: Rc<MatrixResult>,
    pub(super) layer: Layer,
}

thread_local! {
    pub(super) static DRAWN: RefCell<HashMap<u64, Drawn>> = RefCell::new(HashMap::new());
}

/// The cell of figure `figure` (`heatmap` or `binary`) under client point (`x`, `y`), found
/// the way the pointer finds it, with what the view holds for it; `None` outside the cells.
pub(super) fn cell_report(figure: &str, x: f64, y: f64) -> Option<serde_json::Value> {
    let document = web_sys::window()?.document()?;
    let svg = document
        .query_selector(&format!("#{figure} svg[data-figure-key]"))
        .ok()??;
    let key: u64 = svg.get_attribute("data-figure-key")?.parse().ok()?;
    DRAWN.with(|d| {
        let d = d.borrow();
        let drawn = d.get(&key)?;
        let grid = &drawn.result.grid;
        let c = cell_under(&svg, grid, x, y)?;
        let i = (c.row * grid.side + c.col) as usize;
        let (value, kept) = (grid.values[i], grid.kept[i]);
        Some(serde_json::json!({
            "layer": match drawn.layer { Layer::Heat => "heat", Layer::Binary => "binary" },
            "row": c.row,
            "col": c.col,
            "senders": grid.ranks_of(c.row),
            "receivers": grid.ranks_of(c.col),
            "value": value,
            "kept": kept,
            "state": cell_state(value, kept),
        }))
    })
}

/// Give the page `window.tracelogicMatrixCell(figure, clientX, clientY)`: the cell a point of a
/// matrix figure falls in, as the view maps the pointer, and its value (JSON text, or null).
/// The browser tests check the canvas drawing against the CLI's matrix with it. Installed once;
/// the closure lives as long as the page.
pub(super) fn install_cell_hook() {
    thread_local!(static INSTALLED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });
    if INSTALLED.with(|i| i.replace(true)) {
        return;
    }
    let Some(window) = web_sys::window() else { return };
    let hook = Closure::<dyn Fn(String, f64, f64) -> JsValue>::new(|figure: String, x: f64, y: f64| {
        cell_report(&figure, x, y).map_or(JsValue::NULL, |v| JsValue::from_str(&v.to_string()))
    });
    let _ = js_sys::Reflect::set(&window, &JsValue::from_str("tracelogicMatrixCell"), hook.as_ref());
    hook.forget();
}

/// Writes figure `layer` as an SVG file from the data, in the colours the page shows now.
pub(super) fn figure_writer(result: Rc<MatrixResult>, layer: Layer, title: String) -> FigureWriter {
    Rc::new(move |svg: &Element| {
        let grid = &result.grid;
        let canvas = svg
            .parent_element()
            .and_then(|p| p.query_selector("canvas").ok().flatten())
            .unwrap_or_else(|| svg.clone());
        let colour = |e: &Element, property: &str, fallback: &str| {
            parse_css_colour(&export::computed(e, property)).map_or_else(|| fallback.to_owned(), css_rgb)
        };
        let style = SvgStyle {
            background: export::background(svg),
            empty: colour(&canvas, "background-color", "rgb(238, 240, 242)"),
            label: colour(svg, "--muted", "rgb(91, 100, 112)"),
            font_family: export::computed(svg, "font-family"),
            binary: binary_colours(&canvas),
        };
        let rect = svg.get_bounding_client_rect();
        let side = rect.width().min(rect.height()).round();
        let cells = if side >= 64.0 { side } else { 512.0 };
        let legend = match layer {
            Layer::Heat => format!("{} (log scale)", Shown::of(&result.request).caption()),
            Layer::Binary => format!("at {:.1} % threshold", result.request.threshold_pct),
        };
        Ok(svg_document(grid, layer, &style, cells, &legend, &title))
    })
}
