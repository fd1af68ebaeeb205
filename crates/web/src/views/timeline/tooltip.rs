//! The timeline's tooltip: what is under the pointer, from the tile's calls and bins.

use super::*;

impl TimelineView {
    /// Write the tooltip for the pointer at (x, y) (CSS px in the canvas).
    pub(super) fn tooltip(&self, ctx: &Context<Self>) {
        let Some(tip) = self.tooltip.cast::<HtmlElement>() else {
            return;
        };
        let hide = || {
            let _ = tip.set_attribute("hidden", "");
        };
        let (Some((x, y)), Some(view), Some(img), Some((_, w, h, _))) =
            (self.hover, self.view, self.image.as_ref(), self.geometry())
        else {
            return hide();
        };
        let Ok(tile) = &img.answer.tile else { return hide() };
        let (pw, ph) = ((w - LABEL_W).max(1.0), (h - AXIS_H).max(1.0));
        if x < LABEL_W || y < AXIS_H || self.drag.is_some() {
            return hide();
        }
        let t = view.t_of(x - LABEL_W, pw);
        let Some(lane) = lane_at(y - AXIS_H, ph, tile.lanes.len()) else {
            return hide();
        };
        let ranks = &tile.lanes[lane].ranks;
        let who = match ranks.as_slice() {
            [r] => format!("rank {r}"),
            [a, .., b] => format!("ranks {a}–{b}"),
            [] => String::new(),
        };
        let slack = 2.0 * view.span() / pw;
        let name = |f: u32| tile.functions.get(f as usize).cloned().unwrap_or_else(|| "?".into());
        let group = |g: u32| tile.groups.get(g as usize).cloned();
        let lane_of = lane_of_rank(tile, ctx.props().ranks);
        let lane_h = ph / tile.lanes.len().max(1) as f64;
        let message = self
            .show_messages
            .then(|| {
                message_at(
                    tile,
                    &lane_of,
                    |v| view.x_of(v, pw),
                    lane_h,
                    (x - LABEL_W, y - AXIS_H),
                    MESSAGE_HIT_PX,
                )
            })
            .flatten();
        let call = call_at(tile, lane, t, slack);
        // Near its own call a message's line runs along the lane: the call is what is meant.
        let own = |m: &tracelogic_engine::timeline::TileMessage| {
            call.is_some_and(|c| (m.sender == c.rank && m.send == c.begin) || (m.receiver == c.rank && m.recv == c.end))
        };
        let message = message.filter(|m| !own(m));
        let (text, attrs): (String, Vec<(&str, String)>) = if let Some(m) = message {
            let at = |v: u64, ns: u64| match self.clock {
                Clock::Time => format!("{} ({ns} ns)", duration_label(ns)),
                Clock::Logical => format!("step {v}, {} ({ns} ns)", duration_label(ns)),
            };
            let mut s = format!(
                "message rank {} → rank {}\n{} bytes · tag {}\nsent {} (the sending call's start)\nreceived {} (the receiving call's end)",
                m.sender,
                m.receiver,
                m.bytes,
                m.tag,
                at(m.send, m.time.0),
                at(m.recv, m.time.1)
            );
            if m.late_sender > 0 {
                s += &format!("\nlate sender: the receiver waited {}", duration_label(m.late_sender));
            }
            if m.late_receiver > 0 {
                s += &format!("\nlate receiver: the sender waited {}", duration_label(m.late_receiver));
            }
            let attrs = vec![
                ("data-kind", "message".to_owned()),
                ("data-sender", m.sender.to_string()),
                ("data-receiver", m.receiver.to_string()),
                ("data-bytes", m.bytes.to_string()),
                ("data-tag", m.tag.to_string()),
                ("data-send-ns", m.time.0.to_string()),
                ("data-recv-ns", m.time.1.to_string()),
                ("data-late-sender-ns", m.late_sender.to_string()),
                ("data-late-receiver-ns", m.late_receiver.to_string()),
            ];
            (s, attrs)
        } else if let Some(call) = call {
            let (e, x) = call.time;
            let mut s = format!(
                "{} · rank {} · call {}\nstart {} ({} ns)\nduration {} ({} ns)",
                name(call.func),
                call.rank,
                call.index,
                duration_label(e),
                e,
                duration_label(x - e),
                x - e
            );
            if self.clock == Clock::Logical {
                s += &format!("\nstep {}", call.end);
            }
            if call.bytes > 0 {
                s += &format!("\n{} bytes", call.bytes);
            }
            if call.peer != NONE {
                s += &format!(" · peer {}", call.peer);
            }
            if let Some(g) = group(call.group) {
                s += &format!("\n{g}");
                if call.occurrence != NONE {
                    s += &format!(", occurrence {}", call.occurrence);
                }
            }
            let attrs = vec![
                ("data-kind", "call".to_owned()),
                ("data-rank", call.rank.to_string()),
                ("data-call", call.index.to_string()),
                ("data-enter-ns", e.to_string()),
                ("data-exit-ns", x.to_string()),
                ("data-function", name(call.func)),
            ];
            (s, attrs)
        } else if let Some(k) = column_at(tile, t) {
            let cell = lane * tile.pixels as usize + k;
            let f = tile.func[cell];
            let at = match self.clock {
                Clock::Time => duration_label(t.max(0.0) as u64),
                Clock::Logical => format!("step {}", t.max(0.0) as u64 + 1),
            };
            let mut s = if f == NONE {
                format!("{who} · {at}\nno MPI call")
            } else {
                format!(
                    "{who} · {at}\nmostly {} · busy {:.0} %",
                    name(f),
                    tile.busy[cell] * 100.0
                )
            };
            let g = tile.group.get(cell).and_then(|&g| group(g));
            if let (Some(g), true) = (&g, f != NONE) {
                s += &format!("\nmostly in {g}");
            }
            (
                s,
                vec![
                    ("data-kind", "column".to_owned()),
                    ("data-function", if f == NONE { String::new() } else { name(f) }),
                    ("data-group", g.unwrap_or_default()),
                ],
            )
        } else {
            return hide();
        };
        for a in [
            "data-kind",
            "data-rank",
            "data-call",
            "data-enter-ns",
            "data-exit-ns",
            "data-function",
            "data-group",
            "data-sender",
            "data-receiver",
            "data-bytes",
            "data-tag",
            "data-send-ns",
            "data-recv-ns",
            "data-late-sender-ns",
            "data-late-receiver-ns",
        ] {
            let _ = tip.remove_attribute(a);
        }
        for (k, v) in attrs {
            let _ = tip.set_attribute(k, &v);
        }
        tip.set_inner_text(&text);
        let style = tip.style();
        let left = if x > w * 0.6 { x - 260.0 } else { x + 14.0 };
        let _ = style.set_property("left", &format!("{left:.0}px"));
        let _ = style.set_property("top", &format!("{:.0}px", y + 14.0));
        let _ = tip.remove_attribute("hidden");
        let _ = ctx;
    }
}
