//! Replay of whatever trace the input reads as, under K = 4 network configurations at once.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tracelogic_analysis::replay::{configurations, replay, Network};
use tracelogic_model::match_messages;

fuzz_target!(|data: &[u8]| {
    let files = tracelogic_fuzz::unpack(data);
    let Ok(trace) = tracelogic_formats::read_trace(files) else {
        return;
    };
    let matching = match_messages(&trace);
    let configs: Vec<_> = configurations(&[Network::ethernet_10g()], &[2.0, 4.0])
        .into_iter()
        .take(4)
        .collect();
    assert_eq!(configs.len(), 4);
    let _ = replay(&trace, &matching, &configs, None, true);
});
