//! The text of `tracelogic timeline`: one row of characters per lane, one character per pixel
//! column (the column's dominant function as a letter of the legend, upper case when the lane
//! is busy at least half the column, `.` when idle), then the counts of the lists. With
//! `--colour pattern|phase` the letters stand for patterns or phases (`-`: calls in none).

use crate::common::seconds;
use tracelogic_engine::timeline::{Clock, Colour, Lane, TimelineTile, NONE};

/// Letters of the legend, in order of first appearance.
const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyz";

/// The text of `tracelogic timeline`.
pub fn text(t: &TimelineTile) -> String {
    let unit = |v: u64| match t.clock {
        Clock::Time => format!("{} s", seconds(v)),
        Clock::Logical => format!("step {v}"),
    };
    let mut o = format!(
        "{} to {} on {} columns, {} lane{}; {}\n",
        unit(t.from),
        unit(t.to),
        t.pixels,
        t.lanes.len(),
        if t.lanes.len() == 1 { "" } else { "s" },
        if t.resolution == 0 {
            "aggregated exactly from the calls".to_owned()
        } else {
            format!("aggregated from bins of {}", unit(t.resolution))
        }
    );
    // The pattern or phase colouring shows the groups, else the functions.
    let (ids, names) = match t.colour {
        Colour::Function => (&t.func, &t.functions),
        _ => (&t.group, &t.groups),
    };
    let mut legend: Vec<u32> = Vec::new();
    let width = t.lanes.iter().map(|l| label(l).len()).max().unwrap_or(0);
    for (l, lane) in t.lanes.iter().enumerate() {
        let mut row = String::with_capacity(t.pixels as usize);
        for k in 0..t.pixels as usize {
            let cell = l * t.pixels as usize + k;
            let f = ids[cell];
            if f == NONE {
                row.push(if t.busy[cell] > 0.0 { '-' } else { '.' });
                continue;
            }
            let i = match legend.iter().position(|&x| x == f) {
                Some(i) => i,
                None => {
                    legend.push(f);
                    legend.len() - 1
                }
            };
            let c = LETTERS.get(i).copied().unwrap_or(b'?') as char;
            row.push(if t.busy[cell] >= 0.5 { c.to_ascii_uppercase() } else { c });
        }
        o += &format!("{:>width$} |{row}|\n", label(lane));
    }
    o += "legend:";
    for (i, f) in legend.iter().enumerate() {
        let c = LETTERS.get(i).copied().unwrap_or(b'?') as char;
        o += &format!(" {c}={}", names.get(*f as usize).map_or("?", |s| s.as_str()));
    }
    o += &format!(
        "\n{} calls at least a column wide{}, {} messages{}, {} collectives{}\n",
        t.calls.len(),
        left(t.calls_left_out),
        t.messages.len(),
        left(t.messages_left_out),
        t.collectives.len(),
        left(t.collectives_left_out)
    );
    o
}

fn left(n: u64) -> String {
    if n == 0 {
        String::new()
    } else {
        format!(" (+{n} not listed)")
    }
}

fn label(lane: &Lane) -> String {
    match lane.ranks.as_slice() {
        [r] => format!("rank {r}"),
        [a, .., b] => format!("ranks {a}-{b}"),
        [] => String::new(),
    }
}
