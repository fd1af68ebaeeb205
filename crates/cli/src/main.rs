fn main() {
    eprintln!("tracelogic: not built yet");
    std::process::exit(2);
}
