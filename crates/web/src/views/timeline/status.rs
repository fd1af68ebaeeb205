//! The lines under the timeline: the critical path's status, the legend of colours and the
//! status of the tile shown.

use super::*;

impl TimelineView {
    /// What the critical-path overlay is doing: computing, its error (a dependency cycle), or
    /// that it needs the time clock.
    pub(super) fn path_status(&self, ctx: &Context<Self>) -> Html {
        if !self.show_path {
            return Html::default();
        }
        let text = match ctx.props().path.as_deref() {
            None => "Computing the critical path…".to_owned(),
            Some(Err(e)) => format!("No critical path: {e}"),
            Some(Ok(Answer::PathOverlay(o))) if self.clock == Clock::Time => format!(
                "Critical path of the whole run: {} over {} segments (red: MPI calls solid, computation lighter; vertical lines: the messages and collectives it follows).",
                duration_label(o.length_ns),
                o.segments.len()
            ),
            Some(Ok(_)) => "The critical path is drawn on the time clock.".to_owned(),
        };
        html! { <p id="tl-path-status" class="small" role="status">{ text }</p> }
    }

    pub(super) fn legend(&self) -> Html {
        let Some(Ok(tile)) = self.image.as_ref().map(|i| &i.answer.tile) else {
            return Html::default();
        };
        let (ids, colouring) = shown_ids(tile);
        if colouring != Colour::Function {
            // The groups drawn (or of a listed call), as the patterns and phases views name them.
            let mut used: Vec<u32> = ids.iter().copied().filter(|&g| g != NONE).collect();
            used.extend(tile.calls.iter().map(|c| c.group).filter(|&g| g != NONE));
            used.sort_unstable();
            used.dedup();
            let none = ids.iter().zip(&tile.busy).any(|(&g, &b)| g == NONE && b > 0.0);
            let items = used.iter().map(|&g| {
                let c = css(colour_of(colouring, g));
                let name = tile.groups.get(g as usize).cloned().unwrap_or_default();
                html! {
                    <li data-group={g.to_string()} data-colour={c.clone()} data-name={name.clone()}>
                        <span class="swatch" style={format!("background:{c}")}></span>{ name }
                    </li>
                }
            });
            let what = if colouring == Colour::Pattern {
                "Patterns"
            } else {
                "Phases"
            };
            return html! {
                <ul class="timeline-legend" id="timeline-legend" aria-label={what} data-colour-by={colouring.name()}>
                    { for items }
                    if none {
                        <li data-group="none" data-colour={css(NO_GROUP)} data-name="none">
                            <span class="swatch" style={format!("background:{}", css(NO_GROUP))}></span>
                            { if colouring == Colour::Pattern { "in no pattern" } else { "before the first phase" } }
                        </li>
                    }
                </ul>
            };
        }
        let mut used: Vec<u32> = tile.func.iter().copied().filter(|&f| f != NONE).collect();
        used.extend(tile.calls.iter().map(|c| c.func));
        used.sort_unstable();
        used.dedup();
        let items = used.iter().map(|&f| {
            let c = css(colour(f));
            let name = tile.functions.get(f as usize).cloned().unwrap_or_default();
            html! {
                <li data-func={f.to_string()} data-colour={c.clone()} data-name={name.clone()}>
                    <span class="swatch" style={format!("background:{c}")}></span>{ name }
                </li>
            }
        });
        html! { <ul class="timeline-legend" id="timeline-legend" aria-label="Functions" data-colour-by="function">{ for items }</ul> }
    }

    pub(super) fn status(&self, ctx: &Context<Self>) -> Html {
        let Some(answer) = &ctx.props().answer else {
            return html! { <p class="note" id="timeline-status">{ "Computing the timeline…" }</p> };
        };
        match &answer.tile {
            Err(e) => html! { <p class="error" id="timeline-status" role="alert">{ e }</p> },
            Ok(t) => {
                let mut s = format!(
                    "{} lanes · {} · {} calls drawn one by one, {} messages, {} collectives",
                    t.lanes.len(),
                    if t.resolution == 0 {
                        "exact per column".to_owned()
                    } else {
                        format!("aggregated from bins of {}", unit(t.resolution, t.clock))
                    },
                    t.calls.len(),
                    t.messages.len(),
                    t.collectives.len()
                );
                let left = t.calls_left_out + t.messages_left_out + t.collectives_left_out;
                if left > 0 {
                    s += &format!(" ({left} more not drawn: zoom in)");
                }
                if t.lanes.iter().any(|l| l.ranks.len() > 1) {
                    s += &format!(" · {} ranks per lane", t.lanes[0].ranks.len());
                }
                html! { <p class="note" id="timeline-status" role="status">{ s }</p> }
            }
        }
    }
}
