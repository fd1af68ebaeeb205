//! The text of `tracelogic topology`: filtering, the elimination stages, the match and its
//! mapping, or the near matches.

use crate::common::table;
use tracelogic_engine::logical::PlacedBy;
use tracelogic_engine::topology::{Identification, TopologyReport};

/// The text of `tracelogic topology`.
pub fn text(r: &TopologyReport) -> String {
    let mut out = String::new();
    let f = &r.filter;
    if r.no_point_to_point {
        out.push_str(&format!(
            "{} ranks, no point-to-point traffic (collectives only): no topology to identify.\n",
            r.identification.ranks
        ));
        return out;
    }
    if f.mode != "none" {
        out.push_str(&format!(
            "Filtering ({}, {}): threshold {:.3} % of the largest entry ({}){}; kept {} of {} pairs, \
             removed {} carrying {:.3} % of the traffic.\n",
            f.mode,
            f.metric,
            f.threshold_pct,
            f.max_volume,
            f.gap_ratio.map_or(String::new(), |g| format!(", at a {g:.1}x gap")),
            f.pairs_kept,
            f.pairs_before,
            f.removed.len(),
            100.0 * f.removed_share
        ));
        if let Some(fb) = &f.fallback {
            out.push_str(&format!("  Fallback: {}\n", fb.summary()));
        }
        if let Some(split) = &f.size_split {
            out.push_str(&format!("  {}\n", split.summary()));
        }
        if let Some(w) = &f.one_way {
            out.push_str(&format!("  {}\n", w.summary()));
        }
        for p in f.removed.iter().take(10) {
            out.push_str(&format!(
                "  removed {}-{}: {} ({:.3} %)\n",
                p.a,
                p.b,
                p.volume,
                100.0 * p.share
            ));
        }
        if f.removed.len() > 10 {
            out.push_str(&format!("  ... and {} more\n", f.removed.len() - 10));
        }
    }
    out.push_str(&format!("Graph: {}.\n\n", r.graph_line()));
    identification(&mut out, &r.identification, r.placed_by);
    if let (Some(name), Some(note)) = (&r.name_as_declared, r.declared_note()) {
        out.push_str(&format!("Topology: {name} ({note})\n"));
    }
    for d in &r.declared {
        out.push_str(&format!("Declared: {}\n", d.summary));
    }
    for g in &r.communicator_grids {
        out.push_str(&format!("Declared: {}\n", g.summary));
        if !g.row_major && !g.column_major {
            let cells: Vec<String> = g
                .coords
                .iter()
                .enumerate()
                .take(64)
                .map(|(rank, c)| format!("{rank}=({},{})", c[0], c[1]))
                .collect();
            out.push_str(&format!("  rank=(row,col): {}\n", cells.join(" ")));
        }
    }
    for g in &r.sub_grids {
        out.push_str(&format!("Declared: {}\n", g.summary));
    }
    if let Some(note) = r.grid_search_note() {
        out.push_str(&format!("{note}\n"));
    }
    if let (None, Some(c)) = (&r.identification.matched, &r.cliques) {
        out.push_str(&format!("Cliques: {}\n", c.label));
    }
    for c in &r.components {
        out.push_str(&format!(
            "\nComponent of {} ranks ({}{}):\n",
            c.ranks.len(),
            c.ranks
                .iter()
                .take(12)
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
                .join(","),
            if c.ranks.len() > 12 { ",..." } else { "" }
        ));
        identification(&mut out, &c.identification, PlacedBy::Identification);
    }
    out
}

fn identification(out: &mut String, id: &Identification, placed_by: PlacedBy) {
    let rows = id
        .stages
        .iter()
        .map(|s| {
            let mut names = s.survivors.iter().take(4).cloned().collect::<Vec<_>>().join(", ");
            if s.candidates > 4 {
                names.push_str(", ...");
            }
            vec![
                s.name.clone(),
                s.candidates.to_string(),
                match &s.skipped {
                    Some(_) => "skipped".into(),
                    None => format!("{:.2}", s.milliseconds),
                },
                match &s.skipped {
                    Some(why) => format!("({why}) {names}"),
                    None => names,
                },
            ]
        })
        .collect();
    out.push_str(&table(&["stage", "candidates", "ms", "survivors"], rows, &[1, 2]));
    out.push('\n');
    match &id.matched {
        Some(m) => {
            out.push_str(&format!(
                "Match: {} (proved by isomorphism, mapping verified)\n",
                m.label
            ));
            if id.equivalents.len() > 1 {
                let eq: Vec<&str> = id.equivalents.iter().skip(1).map(|e| e.label.as_str()).collect();
                out.push_str(&format!("Equivalent: {}\n", eq.join(" = ")));
            }

            if placed_by == PlacedBy::FirstContacts {
                out.push_str(
                    "Coordinates: from the ranks' first contacts, as `tracelogic logical` places them. This graph has \
                     more symmetries than the topology's geometry, so the isomorphism proved above need not be the \
                     program's layout; this placement is, and it is checked edge by edge.\n",
                );
            }
            let shown = if id.mapping.len() > 64 { 16 } else { id.mapping.len() };
            let rows = id
                .mapping
                .iter()
                .take(shown)
                .map(|p| {
                    vec![
                        p.rank.to_string(),
                        format!(
                            "({})",
                            p.coords.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",")
                        ),
                        p.neighbours
                            .iter()
                            .map(|n| format!("{}={}", n.direction, n.rank))
                            .collect::<Vec<_>>()
                            .join(" "),
                    ]
                })
                .collect();
            out.push_str(&table(&["rank", "coords", "neighbours"], rows, &[0]));
            out.push('\n');
            if shown < id.mapping.len() {
                out.push_str(&format!(
                    "... {} more ranks (--json for all)\n",
                    id.mapping.len() - shown
                ));
            }
        }
        None => {
            out.push_str("No exact match.\n");

            for g in &id.gave_up {
                out.push_str(&format!("  undecided: {g}\n"));
            }
            for g in &id.near_match_gave_up {
                out.push_str(&format!(
                    "  near-match search ran out of steps on {g} (it may be as close as those listed)\n"
                ));
            }
            for nm in &id.near_matches {
                out.push_str(&format!(
                    "Near match: {} ({}{} edge{} differ{})\n",
                    nm.topology.label,
                    if nm.budget_exhausted { "at most " } else { "" },
                    nm.distance,
                    if nm.distance == 1 { "" } else { "s" },
                    if nm.budget_exhausted {
                        "; the search for a closer alignment ran out of steps"
                    } else {
                        ""
                    }
                ));
                for p in &nm.extra_edges {
                    out.push_str(&format!(
                        "  extra {}-{}: {} ({:.3} % of traffic)\n",
                        p.a,
                        p.b,
                        p.volume,
                        100.0 * p.share
                    ));
                }
                for p in &nm.missing_edges {
                    out.push_str(&format!("  missing {}-{}\n", p.a, p.b));
                }
            }
        }
    }
}
