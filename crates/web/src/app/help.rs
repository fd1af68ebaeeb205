//! The keyboard help dialog and focus handling: opening and closing the help (focus into it
//! and back), the skip link, and keeping Tab inside the dialog.

use super::*;

/// Where keyboard focus goes after the next drawing of the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum HelpFocus {
    /// Where it is.
    Stay,
    /// Into the help dialog (it just opened).
    Into,
    /// Back to the element that opened the help (it just closed).
    Back,
}

impl App {
    /// Open or close the keyboard help, a modal dialog: focus moves into it on opening and
    /// back to the element that had it on closing (the help button when nothing had).
    pub(super) fn set_help(&mut self, open: bool) {
        if open == self.help {
            return;
        }
        self.help = open;
        if open {
            self.help_opener = web_sys::window()
                .and_then(|w| w.document())
                .and_then(|d| d.active_element())
                .filter(|e| !matches!(e.tag_name().as_str(), "BODY" | "HTML"))
                .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok());
            self.help_focus = HelpFocus::Into;
        } else {
            self.help_focus = HelpFocus::Back;
        }
    }
}

/// The skip link's click: focus the view's content (or the input area before a trace is in)
/// without following the link, whose `#view-content` would replace the address fragment that
/// keeps the view and the selection.
pub(super) fn skip_to_view(e: MouseEvent) {
    e.prevent_default();
    let document = web_sys::window().and_then(|w| w.document());
    let target = document
        .as_ref()
        .and_then(|d| {
            d.get_element_by_id("view-content")
                .or_else(|| d.query_selector("main").ok().flatten())
        })
        .and_then(|el| el.dyn_into::<web_sys::HtmlElement>().ok());
    if let Some(t) = target {
        if !t.has_attribute("tabindex") {
            let _ = t.set_attribute("tabindex", "-1");
        }
        let _ = t.focus();
    }
}

/// What Tab reaches in a dialog.
pub(super) const FOCUSABLE: &str =
    "button:not([disabled]), [href], input:not([disabled]), select:not([disabled]), textarea:not([disabled]), \
     [tabindex]:not([tabindex=\"-1\"])";

/// Keep Tab and Shift+Tab inside the help dialog: from its last control to its first and back.
/// (The dialog is looked up by id: Yew delegates events, so `current_target` is not it.)
pub(super) fn trap_tab(e: KeyboardEvent) {
    if e.key() != "Tab" {
        return;
    }
    let document = web_sys::window().and_then(|w| w.document());
    let Some(dialog) = document.as_ref().and_then(|d| d.get_element_by_id("help")) else {
        return;
    };
    let Ok(list) = dialog.query_selector_all(FOCUSABLE) else {
        return;
    };
    let controls: Vec<web_sys::HtmlElement> = (0..list.length())
        .filter_map(|i| list.get(i))
        .filter_map(|n| n.dyn_into::<web_sys::HtmlElement>().ok())
        .collect();
    let (Some(first), Some(last)) = (controls.first(), controls.last()) else {
        e.prevent_default();
        return;
    };
    let active = document.and_then(|d| d.active_element());
    let at = |el: &web_sys::HtmlElement| active.as_ref().is_some_and(|a| a == el.as_ref() as &web_sys::Element);
    let inside = active.as_ref().is_some_and(|a| dialog.contains(Some(a)));
    let target = if e.shift_key() && (at(first) || !inside) {
        Some(last)
    } else if !e.shift_key() && (at(last) || !inside) {
        Some(first)
    } else {
        None
    };
    if let Some(target) = target {
        e.prevent_default();
        let _ = target.focus();
    }
}
