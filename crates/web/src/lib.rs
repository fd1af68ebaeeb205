//! The tracelogic web application: a Yew page that takes traces (files, folders, archives or a
//! bundled sample) and shows what is in them, and the Web Worker that parses and analyses them.
//!
//! The page never touches a [`Trace`](tracelogic_model::Trace): the worker keeps it in a
//! `tracelogic_engine::Engine` and answers typed requests with the engine's reports, the same
//! the CLI prints ([`protocol`]). Parsing a
//! trace of hundreds of MB takes seconds, and running it in a worker keeps the page responsive
//! and lets the user cancel.
//!
//! Layout: [`session`] is the worker's pure core (files in, one engine call per request, typed
//! answers out), [`worker`] wraps it as a `gloo-worker`, [`app`] is the page shell, [`views`] has one module
//! per view, [`heatmap`] the geometry and colours of the matrix drawing, [`topology_layout`] where
//! a topology's ranks are drawn, [`input`] turns
//! dropped files and folders into named `File` handles (the worker reads them), [`route`] keeps the
//! navigation state in the address, [`persist`] keeps the last trace, the runs compared with
//! it and the settings in IndexedDB, and [`samples`] lists the bundled traces.
//! [`export`] saves the current view's tables and figures, [`report`] writes the HTML report of
//! every analysis, and [`tour`] holds the steps of the workshop tour. [`save`] writes the trace in another format
//! (optionally renumbered) for the summary view's "Save trace as…".

pub mod app;
pub mod export;
pub mod family_layout;
pub mod heatmap;
pub mod input;
pub mod load_pool;
pub mod overview_pool;
pub mod persist;
pub mod protocol;
pub mod report;
pub mod route;
pub mod samples;
pub mod save;
pub mod session;
pub mod text;
pub mod topology_layout;
pub mod tour;
pub mod views;
pub mod whatif_pool;
pub mod worker;
