//! The navigation state in the address's fragment, so a view can be bookmarked and the
//! browser's back and forward buttons move between views:
//! `#sample=npb-lu.S.8&view=matrix&threshold=5&metric=messages&rank=3&pattern=2&phase=1`.
//!
//! Every key is optional; unknown keys and unreadable values are ignored (an old bookmark
//! still opens). Parsing and formatting are pure, so native tests pin the format.

use crate::views::{Focus, View};
use tracelogic_analysis::matrix::Metric;

/// What the fragment says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Route {
    /// Id of the bundled sample on screen (`none` opens on the empty drop zone).
    pub sample: Option<String>,
    /// The view shown.
    pub view: Option<View>,
    /// The matrix filtering threshold in percent.
    pub threshold: Option<f64>,
    /// The matrix metric.
    pub metric: Option<Metric>,
    /// The matrix coloured by the waiting (`metric=waiting`; the threshold then stays on bytes).
    pub waiting: bool,
    /// The rank, pattern and phase selected.
    pub focus: Focus,
}

/// The view whose [`View::id`] is `id`.
pub fn view_by_id(id: &str) -> Option<View> {
    View::ALL.iter().copied().find(|v| v.id() == id)
}

fn metric_id(m: Metric) -> &'static str {
    match m {
        Metric::Bytes => "bytes",
        Metric::Messages => "messages",
    }
}

impl Route {
    /// Read a fragment (`#a=1&b=2`, the `#` optional).
    pub fn parse(fragment: &str) -> Route {
        let mut route = Route::default();
        for pair in fragment.trim_start_matches('#').split('&') {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let value = crate::samples::percent_decode(value);
            match key {
                "sample" if !value.is_empty() => route.sample = Some(value),
                "view" => route.view = view_by_id(&value),
                "threshold" => route.threshold = value.parse().ok().filter(|t: &f64| (0.0..=100.0).contains(t)),
                "metric" => {
                    route.metric = match value.as_str() {
                        "bytes" => Some(Metric::Bytes),
                        "messages" => Some(Metric::Messages),
                        _ => None,
                    };
                    route.waiting = value == "waiting";
                }
                "rank" => route.focus.rank = value.parse().ok(),
                "pattern" => route.focus.pattern = value.parse().ok(),
                "phase" => route.focus.phase = value.parse().ok(),
                "patterns" => route.focus.all_patterns = value == "all",
                _ => {}
            }
        }
        route
    }

    /// The fragment, `#` included, or an empty string when nothing is set. Keys come in a
    /// fixed order so equal routes give equal fragments.
    pub fn format(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        if let Some(s) = &self.sample {
            parts.push(format!("sample={}", encode(s)));
        }
        if let Some(v) = self.view {
            parts.push(format!("view={}", v.id()));
        }
        if let Some(t) = self.threshold {
            parts.push(format!("threshold={t}"));
        }
        if self.waiting {
            parts.push("metric=waiting".to_owned());
        } else if let Some(m) = self.metric {
            parts.push(format!("metric={}", metric_id(m)));
        }
        let f = &self.focus;
        if let Some(r) = f.rank {
            parts.push(format!("rank={r}"));
        }
        if let Some(p) = f.pattern {
            parts.push(format!("pattern={p}"));
        }
        if let Some(p) = f.phase {
            parts.push(format!("phase={p}"));
        }
        if f.all_patterns {
            parts.push("patterns=all".into());
        }
        if parts.is_empty() {
            String::new()
        } else {
            format!("#{}", parts.join("&"))
        }
    }

    /// True when the fragment sets anything besides the sample.
    pub fn has_settings(&self) -> bool {
        self.view.is_some()
            || self.threshold.is_some()
            || self.metric.is_some()
            || self.waiting
            || self.focus != Focus::default()
    }
}

/// The view a key press asks for: `1`–`9` and `0` pick a view, the left and right arrows step through
/// [`View::ALL`] (wrapping). `None` for any other key.
pub fn view_for_key(key: &str, current: View) -> Option<View> {
    let index = View::ALL.iter().position(|&v| v == current).unwrap_or(0);
    let n = View::ALL.len();
    match key {
        "ArrowRight" => Some(View::ALL[(index + 1) % n]),
        "ArrowLeft" => Some(View::ALL[(index + n - 1) % n]),
        // `0` is the tenth view, as on a keyboard's row of digits.
        "0" => (n >= 10).then(|| View::ALL[9]),
        k => k
            .parse::<usize>()
            .ok()
            .filter(|d| (1..=n.min(9)).contains(d))
            .map(|d| View::ALL[d - 1]),
    }
}

/// Whether a key pressed on an element (`tag` as the DOM gives it, `INPUT`…, and its `type`)
/// is the page's shortcut rather than the element's own input. In text fields, selects and
/// text areas every key but Esc is the field's. On a slider, a radio button or a check box
/// digits mean nothing to the control, so 1–8 switch views; the arrows stay the control's.
pub fn key_reaches_page(tag: &str, input_type: &str, key: &str) -> bool {
    if key == "Escape" {
        return true;
    }
    match tag.to_ascii_uppercase().as_str() {
        "SELECT" | "TEXTAREA" => false,
        "INPUT" => {
            matches!(
                input_type.to_ascii_lowercase().as_str(),
                "range" | "radio" | "checkbox" | "button" | "submit"
            ) && key.len() == 1
                && key.chars().all(|c| c.is_ascii_digit())
        }
        _ => true,
    }
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_switch_views_from_sliders_but_not_from_text_fields() {
        assert!(key_reaches_page("INPUT", "range", "3"));
        assert!(!key_reaches_page("INPUT", "range", "ArrowRight"));
        assert!(key_reaches_page("INPUT", "radio", "1"));
        assert!(!key_reaches_page("INPUT", "text", "3"));
        assert!(!key_reaches_page("INPUT", "", "3"));
        assert!(!key_reaches_page("INPUT", "number", "3"));
        assert!(!key_reaches_page("TEXTAREA", "", "3"));
        assert!(key_reaches_page("INPUT", "text", "Escape"));
        assert!(key_reaches_page("BUTTON", "", "ArrowLeft"));
        assert!(key_reaches_page("DIV", "", "?"));
    }

    #[test]
    fn a_full_route_round_trips() {
        let route = Route {
            sample: Some("npb-lu.S.8".into()),
            view: Some(View::Patterns),
            threshold: Some(12.5),
            metric: Some(Metric::Messages),
            waiting: false,
            focus: Focus {
                rank: Some(3),
                pattern: Some(2),
                phase: Some(0),
                all_patterns: true,
            },
        };
        let text = route.format();
        assert_eq!(
            text,
            "#sample=npb-lu.S.8&view=patterns&threshold=12.5&metric=messages&rank=3&pattern=2&phase=0&patterns=all"
        );
        assert_eq!(Route::parse(&text), route);
        assert!(route.has_settings());
    }

    #[test]
    fn the_waiting_metric_round_trips() {
        let route = Route::parse("#view=matrix&metric=waiting");
        assert!(route.waiting && route.metric.is_none() && route.has_settings());
        assert_eq!(route.format(), "#view=matrix&metric=waiting");
    }

    #[test]
    fn every_view_id_reads_back() {
        for v in View::ALL {
            let r = Route::parse(&format!("view={}", v.id()));
            assert_eq!(r.view, Some(v));
        }
    }

    #[test]
    fn empty_unknown_and_bad_values_are_ignored() {
        assert_eq!(Route::parse(""), Route::default());
        assert_eq!(Route::parse("#"), Route::default());
        assert_eq!(Route::default().format(), "");
        let r = Route::parse("#view=nope&threshold=250&metric=volts&rank=-1&x=1&sample=");
        assert_eq!(r, Route::default());
        assert!(!r.has_settings());
        let only_sample = Route::parse("sample=pipit-csv");
        assert_eq!(only_sample.sample.as_deref(), Some("pipit-csv"));
        assert!(!only_sample.has_settings());
    }

    #[test]
    fn sample_names_are_escaped() {
        let r = Route {
            sample: Some("a b&c=d".into()),
            ..Route::default()
        };
        assert_eq!(r.format(), "#sample=a%20b%26c%3Dd");
        assert_eq!(Route::parse(&r.format()), r);
    }

    #[test]
    fn keys_pick_and_step_through_views() {
        assert_eq!(view_for_key("1", View::Matrix), Some(View::Summary));
        assert_eq!(view_for_key("3", View::Summary), Some(View::Profile));
        assert_eq!(view_for_key("9", View::Summary), Some(View::WhatIf));
        assert_eq!(view_for_key("0", View::Summary), Some(View::Compare));
        assert_eq!(view_for_key("10", View::Summary), None);
        assert_eq!(view_for_key("a", View::Summary), None);
        assert_eq!(view_for_key("ArrowRight", View::Summary), Some(View::Matrix));
        assert_eq!(view_for_key("ArrowLeft", View::Summary), Some(View::Timeline));
        assert_eq!(view_for_key("ArrowRight", View::Timeline), Some(View::Summary));
    }
}
