//! What `tracelogic compare` prints: one pair, or the matrix of several runs.

use crate::common::{emit, print_json, table, CliError};
use serde::Serialize;
use tracelogic_engine::compare::{epsilon_text, pairing_text, theta_text, verdict, Comparison, SimilarityMatrix};
use tracelogic_model::Selection;

/// A comparison's JSON with the selection applied to each run (`selections[i]` for run `i`;
/// absolute times differ between runs since each run has its own clock).
#[derive(Serialize)]
struct WithSelections<'a, T: Serialize> {
    #[serde(flatten)]
    report: &'a T,
    selections: &'a [Selection],
}

/// Print the comparison: as JSON (the pair of two runs, or the matrix), or as text.
pub fn print(result: &SimilarityMatrix, selections: &[Selection], json: bool) -> Result<(), CliError> {
    if json {
        return if result.pairs.len() == 1 {
            print_json(&WithSelections {
                report: &result.pairs[0],
                selections,
            })
        } else {
            print_json(&WithSelections {
                report: result,
                selections,
            })
        };
    }
    let text = if result.pairs.len() == 1 {
        pair_text(&result.pairs[0])
    } else {
        matrix_text(result)
    };
    emit(|out| out.write_all(text.as_bytes()))
}

/// The human report of one pair.
pub fn pair_text(c: &Comparison) -> String {
    let mut s = String::new();
    s.push_str(&format!("runs           {}  vs  {}  ({} ranks)\n", c.a, c.b, c.ranks));
    s.push_str(&format!(
        "work measure   {} (temporal = {})\n",
        c.work_measure.name(),
        c.properties[0].unit
    ));
    s.push_str(&format!("ranks paired   {}\n\n", pairing_text(c)));
    let rows = c
        .properties
        .iter()
        .map(|p| {
            vec![
                p.property.clone(),
                theta_text(p.theta),
                p.note.clone().unwrap_or_default(),
            ]
        })
        .collect();
    s.push_str(&table(&["property", "θ", "note"], rows, &[1]));
    s.push('\n');
    s.push_str(&format!("θ              {}\n", theta_text(c.theta)));
    s.push_str(&format!("ε              {}\n", epsilon_text(c)));
    if let Some(m) = c.operation_mix_similarity {
        s.push_str(&format!(
            "operations     {m:.3}  (how alike the runs sequence their operations: consecutive pairs; similar needs ≥ {})\n",
            c.threshold
        ));
    }
    s.push_str(&format!("verdict        {}\n", verdict(c)));
    s
}

/// The human report of several runs: the runs, the matrix of θ / ε, the verdicts.
pub fn matrix_text(m: &SimilarityMatrix) -> String {
    let mut s = String::new();
    let rows = m
        .runs
        .iter()
        .enumerate()
        .map(|(i, r)| vec![format!("{i}"), r.clone()])
        .collect();
    s.push_str(&table(&["run", "trace"], rows, &[0]));
    s.push_str(&format!(
        "\nθ / ε (* = similar at threshold {}; ~ = ε is a lower bound)\n",
        m.threshold
    ));
    let mut header: Vec<String> = vec!["run".into()];
    header.extend((0..m.runs.len()).map(|j| j.to_string()));
    let rows = m
        .matrix
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let mut cells = vec![i.to_string()];
            cells.extend(row.iter().enumerate().map(|(j, c)| {
                if i == j {
                    "-".to_string()
                } else {
                    format!(
                        "{} / {}{:.3}{}",
                        theta_text(c.theta),
                        if c.epsilon_exact { "" } else { "~" },
                        c.epsilon,
                        if c.similar { " *" } else { "" }
                    )
                }
            }));
            cells
        })
        .collect();
    let header_refs: Vec<&str> = header.iter().map(String::as_str).collect();
    let right: Vec<usize> = (1..=m.runs.len()).collect();
    s.push_str(&table(&header_refs, rows, &right));
    s.push('\n');
    let rows = m
        .pairs
        .iter()
        .map(|c| {
            vec![
                format!("{}-{}", c.first, c.second),
                theta_text(c.theta_temporal),
                theta_text(c.theta_volume),
                theta_text(c.theta_spatial),
                theta_text(c.theta),
                format!("{}{:.3}", if c.epsilon_exact { "" } else { "≥" }, c.epsilon),
                verdict(c),
            ]
        })
        .collect();
    s.push_str(&table(
        &["pair", "θ temporal", "θ volume", "θ spatial", "θ", "ε", "verdict"],
        rows,
        &[1, 2, 3, 4, 5],
    ));
    s
}
