//! The user's reference library of topology patterns: save this run's graph, load edge-list
//! files, download and delete patterns.

use super::*;
use crate::protocol::{ReferenceLibrary, ReferencePattern};
use std::rc::Rc;
use web_sys::HtmlInputElement;

/// Properties of [`LibraryPanel`].
#[derive(Properties, PartialEq)]
pub struct LibraryProps {
    /// The page's reference patterns.
    pub library: ReferenceLibrary,
    /// Replace the page's reference patterns.
    pub on_library: Callback<ReferenceLibrary>,
    /// The filtered graph of the shown identification, `(ranks, edges)`, when there is one.
    pub graph: Option<(u32, Rc<Vec<[u32; 2]>>)>,
    /// Labels of the candidates isomorphic to the run (to mark the patterns that match it).
    pub equivalents: Rc<Vec<String>>,
    /// Default name of a saved pattern.
    pub label: String,
}

/// The reference library: "save this run's graph" (two clicks: open, save under the proposed
/// name), load edge-list files, and each pattern with download and delete.
#[function_component(LibraryPanel)]
pub fn library_panel(props: &LibraryProps) -> Html {
    let naming = use_state(|| false);
    let error = use_state(|| None::<String>);
    let name_input = use_node_ref();
    let open = {
        let naming = naming.clone();
        Callback::from(move |_: MouseEvent| naming.set(true))
    };
    let cancel = {
        let naming = naming.clone();
        Callback::from(move |_: MouseEvent| naming.set(false))
    };
    let save = {
        let (naming, error, input) = (naming.clone(), error.clone(), name_input.clone());
        let (library, on_library, graph, label) = (
            props.library.clone(),
            props.on_library.clone(),
            props.graph.clone(),
            props.label.clone(),
        );
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            let Some((ranks, edges)) = &graph else { return };
            let typed = input.cast::<HtmlInputElement>().map(|i| i.value()).unwrap_or_default();
            let name = if typed.trim().is_empty() {
                label.clone()
            } else {
                typed.trim().to_owned()
            };
            let mut library = library.clone();
            library.save(ReferencePattern {
                name,
                ranks: *ranks,
                edges: edges.to_vec(),
            });
            error.set(None);
            naming.set(false);
            on_library.emit(library);
        })
    };
    let on_files = {
        let (error, library, on_library) = (error.clone(), props.library.clone(), props.on_library.clone());
        Callback::from(move |e: Event| {
            let input: HtmlInputElement = e.target_unchecked_into();
            let mut files = Vec::new();
            if let Some(list) = input.files() {
                for i in 0..list.length() {
                    files.extend(list.get(i));
                }
            }
            input.set_value("");
            if files.is_empty() {
                return;
            }
            let (error, library, on_library) = (error.clone(), library.clone(), on_library.clone());
            wasm_bindgen_futures::spawn_local(async move {
                match load_library_files(library, files).await {
                    Ok(l) => {
                        error.set(None);
                        on_library.emit(l);
                    }
                    Err(e) => error.set(Some(e)),
                }
            });
        })
    };
    let rows = props.library.patterns.iter().map(|p| {
        let prefix = candidate_label_prefix(p);
        let matches = props.equivalents.iter().any(|l| l.starts_with(&prefix));
        let download = {
            let (pattern, error) = (p.clone(), error.clone());
            Callback::from(move |_: MouseEvent| match pattern.edge_list() {
                Ok(text) => super::super::download(&file_name(&pattern.name), "text/plain", &text),
                Err(e) => error.set(Some(e)),
            })
        };
        let delete = {
            let (name, library, on_library) = (p.name.clone(), props.library.clone(), props.on_library.clone());
            Callback::from(move |_: MouseEvent| {
                let mut library = library.clone();
                library.remove(&name);
                on_library.emit(library);
            })
        };
        html! {
            <tr data-pattern={p.name.clone()} data-matches={matches.to_string()}>
                <th scope="row">{ &p.name }</th>
                <td class="num">{ p.ranks }</td><td class="num">{ p.edges.len() }</td>
                <td>{ if matches { "matches this run" } else { "" } }</td>
                <td class="actions">
                    <button type="button" class="download secondary" onclick={download}>{ "Download edge list" }</button>
                    <button type="button" class="delete secondary" onclick={delete}>{ "Delete" }</button>
                </td>
            </tr>
        }
    });
    html! {
        <section class="reference-library" id="topology-library" aria-labelledby="topology-library-title">
            <h3 id="topology-library-title">{ "Reference patterns" }</h3>
            <p class="small">{ "Saved patterns are tried as custom candidates in every identification, of this trace and of any trace loaded later. A downloaded pattern is an edge list for tracelogic topology --library FILE." }</p>
            <div class="controls">
                if *naming {
                    <form id="topology-save-form" onsubmit={save}>
                        <label>{ "Pattern name " }
                            <input id="topology-save-name" ref={name_input} type="text" value={props.label.clone()} />
                        </label>
                        <button type="submit" id="topology-save-confirm">{ "Save" }</button>
                        <button type="button" class="secondary" onclick={cancel}>{ "Cancel" }</button>
                    </form>
                } else {
                    <button type="button" id="topology-save" onclick={open} disabled={props.graph.is_none()}>
                        { "Save this run's graph as a reference pattern…" }
                    </button>
                }
                <label class="button">{ "Load library file…" }
                    <input id="topology-library-file" class="visually-hidden" type="file" multiple=true onchange={on_files} />
                </label>
            </div>
            if let Some(e) = &*error {
                <p class="error" role="alert" id="topology-library-error">{ e }</p>
            }
            if props.library.patterns.is_empty() {
                <p class="note">{ "No reference pattern yet." }</p>
            } else {
                <table class="library" id="topology-library-list">
                    <thead><tr><th>{ "Pattern" }</th><th class="num">{ "Ranks" }</th><th class="num">{ "Edges" }</th><th>{ "This run" }</th><th></th></tr></thead>
                    <tbody>{ for rows }</tbody>
                </table>
            }
        </section>
    }
}
