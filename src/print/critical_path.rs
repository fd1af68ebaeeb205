//! The text of `tracelogic critical-path`.

use crate::common::table;
use tracelogic_engine::critical_path::CriticalPathReport;

fn s6(s: f64) -> String {
    format!("{s:.6}")
}

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {}\n", l.trim_end())).collect()
}

/// The text of `tracelogic critical-path`, at most `top` rows per table.
pub fn text(r: &CriticalPathReport, top: usize) -> String {
    let p = &r.path;
    let mut o = format!(
        "{}: critical path {:.6} s in {} segments; {} computation\n",
        r.source,
        p.length_s,
        p.segments.len(),
        pct(r.compute_share)
    );
    o += &format!("{}\n", r.relation);
    let im = &r.imbalance;
    o += &format!(
        "load imbalance{}: computation max {:.6} s (rank {}), mean {:.6} s, max/mean {:.3} ({:.1}% imbalance); late ranks: {}\n",
        im.left_out_note().map(|n| format!(" {n}")).unwrap_or_default(),
        im.max_s,
        im.max_rank,
        im.mean_s,
        im.ratio,
        im.imbalance_pct,
        if im.late_ranks.is_empty() {
            "none".to_owned()
        } else {
            im.late_ranks.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(", ")
        }
    );
    if let Some(c) = &r.what_if {
        o += &format!("what-if on {}: {} — {}\n", c.network, c.label, c.reason);
    }
    let mut rows = vec![vec!["computation".to_owned(), pct(r.compute_share)]];
    rows.extend(p.by_function.iter().map(|f| vec![f.name.clone(), pct(f.share)]));
    o += "on the path\n";
    o += &indent(&table(&["", "share"], rows, &[1]));
    let mut ranks: Vec<_> = p.by_rank.iter().filter(|r| r.share > 0.0).collect();
    ranks.sort_by(|a, b| b.share.total_cmp(&a.share).then(a.rank.cmp(&b.rank)));
    let shown = ranks.len().min(top);
    o += &format!("ranks on the path ({shown} of {}, largest share first)\n", ranks.len());
    let rows = ranks[..shown]
        .iter()
        .map(|x| {
            let compute = r
                .compute_by_rank
                .iter()
                .find(|c| c.rank == x.rank)
                .map_or(0.0, |c| c.compute_s);
            vec![
                x.rank.to_string(),
                pct(x.share),
                s6(compute),
                x.gain_s.map_or_else(|| "n/a".to_owned(), s6),
            ]
        })
        .collect();
    o += &indent(&table(
        &["rank", "share", "computation s", "gain s"],
        rows,
        &[0, 1, 2, 3],
    ));
    let mut longest: Vec<_> = p.segments.iter().collect();
    longest.sort_by(|a, b| {
        (b.end_s - b.start_s)
            .total_cmp(&(a.end_s - a.start_s))
            .then(a.start_s.total_cmp(&b.start_s))
    });
    longest.truncate(top);
    o += &format!("longest segments ({} of {})\n", longest.len(), p.segments.len());
    let rows = longest
        .iter()
        .map(|s| {
            vec![
                s.rank.to_string(),
                s.kind.clone(),
                s6(s.start_s),
                s6(s.end_s),
                s6(s.end_s - s.start_s),
            ]
        })
        .collect();
    o += &indent(&table(
        &["rank", "kind", "start s", "end s", "length s"],
        rows,
        &[0, 2, 3, 4],
    ));
    o
}
