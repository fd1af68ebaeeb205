//! Drawing the timeline: the tile's off-screen image blitted to the canvas, messages,
//! collectives and the critical path on top.

use super::*;

impl TimelineView {
    pub(super) fn draw(&self, ctx: &Context<Self>) {
        let start = now();
        let Some((canvas, w, h, ratio)) = self.geometry() else {
            return;
        };
        let (dw, dh) = ((w * ratio).round() as u32, (h * ratio).round() as u32);
        if canvas.width() != dw || canvas.height() != dh {
            canvas.set_width(dw);
            canvas.set_height(dh);
        }
        let Some(c) = context(&canvas) else { return };
        let _ = c.set_transform(ratio, 0.0, 0.0, ratio, 0.0, 0.0);
        c.clear_rect(0.0, 0.0, w, h);
        let (text, grid, shade) = theme(&canvas);
        let (px, py, pw, ph) = (LABEL_W, AXIS_H, (w - LABEL_W).max(1.0), (h - AXIS_H).max(1.0));
        let Some(view) = self.view else {
            c.set_fill_style_str(&text);
            c.set_font("13px sans-serif");
            let _ = c.fill_text("computing the timeline…", px + 8.0, py + 20.0);
            return;
        };
        c.set_image_smoothing_enabled(false);
        if let Some(img) = &self.image {
            if let Ok(tile) = &img.answer.tile {
                let x0 = view.x_of(tile.from as f64, pw);
                let x1 = view.x_of(tile.to as f64, pw);
                let _ = c.draw_image_with_html_canvas_element_and_dw_and_dh(&img.canvas, px + x0, py, x1 - x0, ph);
                let _ = canvas.set_attribute("data-tile-from", &tile.from.to_string());
                let _ = canvas.set_attribute("data-tile-to", &tile.to.to_string());
                let _ = canvas.set_attribute("data-lanes", &tile.lanes.len().to_string());
                let _ = canvas.set_attribute("data-resolution", &tile.resolution.to_string());
                let _ = canvas.set_attribute("data-pixels", &tile.pixels.to_string());
                let _ = canvas.set_attribute("data-tile-clock", clock_name(tile.clock));
                let _ = canvas.set_attribute("data-tile-colour", tile.colour.name());
                let firsts: Vec<String> = tile
                    .lanes
                    .iter()
                    .filter_map(|l| l.ranks.first())
                    .map(|r| r.to_string())
                    .collect();
                let _ = canvas.set_attribute("data-lane-ranks", &firsts.join(","));
                let drawn: usize = tile.lanes.iter().map(|l| l.ranks.len()).sum();
                let _ = canvas.set_attribute("data-ranks-drawn", &drawn.to_string());
                let _ = canvas.set_attribute("data-rows", &img.answer.query.rows.to_string());
                self.draw_path(ctx, &c, &canvas, tile, &view, (px, py, pw, ph));
                // Rank labels, at least 12 px apart.
                let lanes = tile.lanes.len().max(1);
                let lane_h = ph / lanes as f64;
                let every = (12.0 / lane_h).ceil().max(1.0) as usize;
                c.set_fill_style_str(&text);
                c.set_font("11px sans-serif");
                c.set_text_baseline("middle");
                c.set_text_align("right");
                for (l, lane) in tile.lanes.iter().enumerate().step_by(every) {
                    let label = match lane.ranks.as_slice() {
                        [r] => format!("{r}"),
                        [a, .., b] => format!("{a}–{b}"),
                        [] => String::new(),
                    };
                    let _ = c.fill_text(&label, px - 6.0, py + (l as f64 + 0.5) * lane_h);
                }
            }
        }
        // The page's selection window, shaded.
        let sel = &ctx.props().request.selection;
        if self.clock == Clock::Time && (sel.from.is_some() || sel.to.is_some()) {
            let a = view.x_of(sel.from.unwrap_or(0) as f64, pw).clamp(0.0, pw);
            let b = view.x_of(sel.to.map_or(f64::MAX, |t| t as f64), pw).clamp(0.0, pw);
            c.set_fill_style_str(&shade);
            c.fill_rect(px + a, py - 6.0, (b - a).max(1.0), 6.0);
        }
        // Time axis.
        let (ts, step) = ticks(view.from, view.to, (pw / 110.0).max(2.0) as usize, self.clock);
        c.set_stroke_style_str(&grid);
        c.set_fill_style_str(&text);
        c.set_font("11px sans-serif");
        c.set_text_align("center");
        c.set_text_baseline("alphabetic");
        c.begin_path();
        c.move_to(px, py - 0.5);
        c.line_to(px + pw, py - 0.5);
        for t in &ts {
            let x = (px + view.x_of(*t, pw)).round() + 0.5;
            c.move_to(x, py - 5.0);
            c.line_to(x, py);
            let _ = c.fill_text(&tick_label(*t, step, self.clock), x, py - 9.0);
        }
        c.stroke();
        // A range being dragged on the axis.
        if let Some(d) = self.drag.as_ref().filter(|d| d.axis) {
            c.set_fill_style_str(&shade);
            let (a, b) = (d.x0.min(d.x1), d.x0.max(d.x1));
            c.fill_rect(a, py, b - a, ph);
        }
        if let Some((x, _)) = self.hover.filter(|_| self.drag.is_none()) {
            c.set_stroke_style_str(&grid);
            c.begin_path();
            c.move_to(x.round() + 0.5, py);
            c.line_to(x.round() + 0.5, py + ph);
            c.stroke();
        }
        let _ = canvas.set_attribute("data-view-from", &format!("{}", view.from.floor() as u64));
        let _ = canvas.set_attribute("data-view-to", &format!("{}", view.to.ceil() as u64));
        let _ = canvas.set_attribute("data-draw-ms", &format!("{:.3}", now() - start));
    }

    /// The critical path over the lanes of `tile` (time clock only): its segments as bands
    /// across the middle of their ranks' lanes (MPI calls solid, computation lighter) and a line
    /// where it passes from one rank to another (the message or collective it follows).
    pub(super) fn draw_path(
        &self,
        ctx: &Context<Self>,
        c: &CanvasRenderingContext2d,
        canvas: &HtmlCanvasElement,
        tile: &TimelineTile,
        view: &Viewport,
        (px, py, pw, ph): (f64, f64, f64, f64),
    ) {
        let overlay = match ctx.props().path.as_deref() {
            Some(Ok(Answer::PathOverlay(o))) if self.show_path && self.clock == Clock::Time => o,
            _ => {
                let _ = canvas.remove_attribute("data-path-bars");
                let _ = canvas.remove_attribute("data-path-links");
                return;
            }
        };
        let lane_of = lane_of_rank(tile, ctx.props().ranks);
        let lane_h = ph / tile.lanes.len().max(1) as f64;
        let (bars, links) = path_overlay(
            overlay.segments.iter().map(|s| (s.0, s.1, s.2, s.3)),
            view,
            pw,
            &lane_of,
        );
        let band = (lane_h * 0.4).clamp(2.0, 10.0);
        let centre = |lane: usize| py + (lane as f64 + 0.5) * lane_h;
        c.save();
        // A dark edge under the bands keeps them apart from the functions' colours.
        c.set_fill_style_str("rgba(0, 0, 0, 0.75)");
        c.set_global_alpha(1.0);
        for b in &bars {
            c.fill_rect(
                px + b.x0 - 1.0,
                centre(b.lane) - band / 2.0 - 1.0,
                (b.x1 - b.x0).max(1.0) + 2.0,
                band + 2.0,
            );
        }
        c.set_fill_style_str(PATH_COLOUR);
        for b in &bars {
            c.set_global_alpha(if b.compute { 0.45 } else { 0.95 });
            c.fill_rect(px + b.x0, centre(b.lane) - band / 2.0, (b.x1 - b.x0).max(1.0), band);
        }
        c.set_global_alpha(0.95);
        c.set_stroke_style_str(PATH_COLOUR);
        c.set_line_width(1.5);
        c.begin_path();
        for l in &links {
            let x = (px + l.x).round() + 0.5;
            c.move_to(x, centre(l.from_lane));
            c.line_to(x, centre(l.to_lane));
        }
        c.stroke();
        c.restore();
        let _ = canvas.set_attribute("data-path-bars", &bars.len().to_string());
        let _ = canvas.set_attribute("data-path-links", &links.len().to_string());
        let _ = canvas.set_attribute("data-path-segments", &overlay.segments.len().to_string());
    }
}

pub(super) fn context(canvas: &HtmlCanvasElement) -> Option<CanvasRenderingContext2d> {
    canvas
        .get_context("2d")
        .ok()??
        .dyn_into::<CanvasRenderingContext2d>()
        .ok()
}

/// Text colour, grid colour and selection shade, from the page's CSS.
pub(super) fn theme(canvas: &HtmlCanvasElement) -> (String, String, String) {
    let style = web_sys::window().and_then(|w| w.get_computed_style(canvas).ok().flatten());
    let get = |p: &str, d: &str| {
        style
            .as_ref()
            .and_then(|s| s.get_property_value(p).ok())
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| d.to_owned())
    };
    (
        get("color", "#222"),
        get("--timeline-grid", "rgba(128,128,128,0.6)"),
        get("--timeline-shade", "rgba(255,200,0,0.35)"),
    )
}

/// The tile's image: function colours per lane and column, then messages and collectives.
pub(super) fn offscreen(
    tile: &TimelineTile,
    height: u32,
    messages: bool,
    collectives: bool,
) -> Option<HtmlCanvasElement> {
    let document = web_sys::window()?.document()?;
    let canvas: HtmlCanvasElement = document.create_element("canvas").ok()?.dyn_into().ok()?;
    let (w, h) = (tile.pixels, height);
    canvas.set_width(w);
    canvas.set_height(h);
    let c = context(&canvas)?;
    let pixels = tile_pixels(tile, h);
    let image = ImageData::new_with_u8_clamped_array_and_sh(Clamped(&pixels), w, h).ok()?;
    c.put_image_data(&image, 0.0, 0.0).ok()?;
    let span = (tile.to - tile.from).max(1) as f64;
    let x = |t: u64| (t as f64 - tile.from as f64) / span * w as f64;
    let lanes = tile.lanes.len().max(1) as f64;
    let lane_h = h as f64 / lanes;
    // Calls at least three columns wide: outlined, so that neighbours of one function part.
    c.set_stroke_style_str("rgba(0,0,0,0.45)");
    c.set_line_width(1.0);
    let lane_of = lane_of_rank(
        tile,
        tile.lanes
            .iter()
            .flat_map(|l| l.ranks.iter())
            .max()
            .map_or(0, |m| m + 1),
    );
    if lane_h >= 3.0 {
        for call in &tile.calls {
            let (a, b) = (x(call.begin), x(call.end));
            if b - a >= 3.0 {
                if let Some(Some(l)) = lane_of.get(call.rank as usize) {
                    c.stroke_rect(a + 0.5, *l as f64 * lane_h + 0.5, b - a - 1.0, (lane_h - 2.0).max(1.0));
                }
            }
        }
    }
    // Collectives: a dark tick at the top and bottom of the plot over their span.
    for coll in tile.collectives.iter().filter(|_| collectives) {
        let (a, b) = (x(coll.begin), x(coll.end).max(x(coll.begin) + 1.0));
        let col = colour(coll.func);
        c.set_fill_style_str(&format!("rgba({},{},{},0.18)", col[0], col[1], col[2]));
        c.fill_rect(a, 0.0, b - a, h as f64);
    }
    // Messages: a line from the send to the receive.
    c.set_stroke_style_str("rgba(0,0,0,0.55)");
    c.begin_path();
    for m in tile.messages.iter().filter(|_| messages) {
        let (Some(Some(ls)), Some(Some(lr))) = (lane_of.get(m.sender as usize), lane_of.get(m.receiver as usize))
        else {
            continue;
        };
        c.move_to(x(m.send), (*ls as f64 + 0.5) * lane_h);
        c.line_to(x(m.recv), (*lr as f64 + 0.5) * lane_h);
    }
    c.stroke();
    Some(canvas)
}
