//! The verdict of a comparison in words, and why it is not certain: part of the typed report, so
//! every shell (CLI, page) shows the engine's words instead of deriving its own.

use super::{Comparison, VerdictBasis};

/// The verdict sentence of `c` and the reasons it is uncertain (empty when
/// `classification_certain`). When every property is left out of θ, θ is undefined and the
/// verdict rests on ε alone.
pub(super) fn verdict_words(c: &Comparison) -> (String, Vec<String>) {
    let theta_undefined = c.verdict_on != VerdictBasis::ThetaAndEpsilon || c.theta.is_nan();
    if c.operation_mix_differs {
        let m = c.operation_mix_similarity.unwrap_or(0.0);
        let rule = if c.verdict_on == VerdictBasis::CollectiveMix {
            "their collectives agree"
        } else if theta_undefined {
            "ε = 1"
        } else {
            "θ and ε reach the threshold"
        };
        let s = format!(
            "not similar: {rule}, but the runs communicate differently (their sequences of operations, as \
             consecutive pairs, agree {m:.3} < {})",
            c.threshold
        );
        return (s, Vec::new());
    }
    if let (VerdictBasis::CollectiveMix, Some(m)) = (c.verdict_on, c.collective_mix_similarity) {
        let s = format!(
            "{} on the collectives (neither run sends a point-to-point message; their sequences of \
             collectives (consecutive pairs) agree {m:.3} {} {})",
            if c.similar { "similar" } else { "not similar" },
            if m >= c.threshold { "≥" } else { "<" },
            c.threshold
        );
        return (s, Vec::new());
    }
    let mut why = Vec::new();
    if !theta_undefined && c.theta < c.threshold {
        why.push(format!("θ < {}", c.threshold));
    }
    if theta_undefined {
        // With θ undefined only the same graph up to renumbering (ε = 1) is similar.
        if c.epsilon < 1.0 {
            why.push("ε < 1".to_string());
        }
    } else if c.epsilon < c.threshold {
        why.push(format!("ε < {}", c.threshold));
    }
    let mut s = match (c.similar, theta_undefined) {
        (true, false) => format!("similar (θ and ε ≥ {})", c.threshold),
        (true, true) => "similar on ε alone (ε = 1; θ undefined: every property is left out)".to_string(),
        (false, false) => format!("not similar ({})", why.join(", ")),
        (false, true) => format!(
            "not similar on ε alone ({}; θ undefined: every property is left out)",
            why.join(", ")
        ),
    };
    if c.complete_graphs_filtered {
        s.push_str(
            " — every pair of ranks communicates in both runs, so the graphs are compared after the widest gap \
             in pair volumes (as `topology` filters them)",
        );
    }
    let mut uncertain: Vec<String> = Vec::new();
    if !c.classification_certain {
        if !c.epsilon_exact && c.epsilon < c.threshold && c.epsilon_upper >= c.threshold {
            uncertain
                .push("the exact ε could reach the threshold (the common-subgraph search ran out of steps)".into());
        }
        if theta_undefined && !c.epsilon_exact && c.epsilon < 1.0 && c.epsilon_upper >= 1.0 {
            uncertain.push("the exact ε could be 1 (the common-subgraph search ran out of steps)".into());
        }
        if !theta_undefined && !c.pairing.exhaustive && c.theta < c.threshold {
            uncertain.push("a pairing the search did not reach could give a larger θ".into());
        }
        if c.similar && !c.contrasted.is_empty() {
            uncertain.push(format!(
                "{} orders the ranks of one run and is the same on every rank of the other, which θ cannot \
                 compare (left out)",
                c.contrasted.join(" and ")
            ));
        }
        if c.similar && !theta_undefined && c.theta_at_chance {
            let chance = c.pairing.theta_chance.unwrap_or(c.theta);
            let why = if c.graphs_complete && !c.pairing.anchor.used {
                "both graphs are complete, so every pairing of ranks is an isomorphism and the best one pairs the \
                 values by size whatever the ranks' roles"
            } else {
                "the graphs' symmetries leave that much freedom in pairing ranks"
            };
            uncertain.push(format!(
                "θ is no larger than what values unrelated to the ranks' roles reach under the same pairing search \
                 ({chance:.3}): {why}, so θ is no evidence of a common pattern"
            ));
        }
        if theta_undefined && c.graphs_empty {
            uncertain.push(
                "neither run sends a point-to-point message (collectives only), so both graphs are empty and every \
                 property is 0 on every rank: nothing PACPM measures tells their patterns apart"
                    .into(),
            );
        }
        if theta_undefined && c.graphs_complete {
            uncertain.push(
                "both graphs are complete (every rank exchanges messages with every other), so ε = 1 for any two \
                 such runs and nothing here tells their patterns apart"
                    .into(),
            );
        }
    }
    for u in &uncertain {
        s.push_str("; uncertain: ");
        s.push_str(u);
    }
    (s, uncertain)
}
