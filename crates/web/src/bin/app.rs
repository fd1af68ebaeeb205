//! Entry point of the page (built with `wasm-bindgen --target web`).

fn main() {
    yew::Renderer::<tracelogic_web::app::App>::new().render();
}
