//! Execution phases by entropic segmentation of the sequence of communication patterns
//! (thesis ch. 5).

use crate::{Engine, Error, Result};
use serde::{Deserialize, Serialize};
use tracelogic_analysis::phases::content::SignedRanks;
pub use tracelogic_analysis::phases::merge::SIGNIFICANCE;
pub use tracelogic_analysis::phases::MIN_SHARE;
use tracelogic_analysis::phases::{detect_phases_from, divergence_curve, reads_signed_ranks};
pub use tracelogic_analysis::phases::{Outside, Phase, PhaseAnalysis, PhaseOptions, STAGE_NOTE};
use tracelogic_model::Selection;

/// Most points of one divergence curve in a report (longer curves are sampled evenly, keeping
/// the cut).
pub const MAX_CURVE_POINTS: usize = 400;

/// The phases of a selection at one strength (`tracelogic phases`, the page's phases view).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhasesReport {
    /// The segmentation and its phases.
    pub analysis: PhaseAnalysis,
    /// Per segment of `analysis.tree`: `(position, divergence)` points, at most
    /// [`MAX_CURVE_POINTS`] (and the cut).
    pub curves: Vec<Vec<(usize, f64)>>,
    /// Number of communication patterns (phases name them by id).
    pub patterns: usize,
    /// The strength `s0` asked for.
    #[serde(default)]
    pub strength: f64,
    /// The selection applied (times absolute).
    #[serde(default)]
    pub selection: Selection,
}

impl PhasesReport {
    /// Why there is nothing to show, when there is no pattern sequence.
    pub fn nothing_found(&self) -> Option<&'static str> {
        (self.analysis.sequence_length == 0)
            .then_some("no phases: the trace has no communication to build a pattern sequence from")
    }

    /// Why a phase's last occurrence can end after the next phase began: one sentence with how
    /// many phases and by how much (seconds as `seconds` writes them), so the overlap reads as
    /// rank skew, not as phases out of order. `None` when no phase reaches past its interval.
    pub fn skew_note(&self, seconds: impl Fn(u64) -> String) -> Option<String> {
        let p = &self.analysis;
        let over: Vec<u64> = p
            .phases
            .iter()
            .map(|ph| ph.extent.1.saturating_sub(ph.time.1))
            .filter(|&d| d > 0)
            .collect();
        over.iter().max().map(|&most| {
            format!(
                "from/to: the phases follow one another (each begins with its first pattern occurrence on any rank). \
                 Ranks reach a phase at different times, so in {} of {} phases the last occurrence ends \
                 ('last ends') after the next phase has begun on another rank, by up to {} s.",
                over.len(),
                p.phases.len(),
                seconds(most)
            )
        })
    }
}

/// The strength `s0` is a number ≥ 0 (checked before any analysis runs).
pub fn check_strength(s0: f64) -> Result<()> {
    if !s0.is_finite() || s0 < 0.0 {
        return Err(Error::Input(format!("the strength s0 must be a number ≥ 0, got {s0}")));
    }
    Ok(())
}

/// The smallest share of the run a phase holds is a number in [0, 1) (0 keeps every significant
/// phase).
pub fn check_min_share(share: f64) -> Result<()> {
    if !share.is_finite() || !(0.0..1.0).contains(&share) {
        return Err(Error::Input(format!(
            "the smallest phase share must be a number in [0, 1) (0 keeps every significant phase), got {share}"
        )));
    }
    Ok(())
}

/// The significance level α is a number in (0, 1] (1 = the thesis' leaves, not merged).
pub fn check_significance(alpha: f64) -> Result<()> {
    if !alpha.is_finite() || alpha <= 0.0 || alpha > 1.0 {
        return Err(Error::Input(format!(
            "the significance level must be a number in (0, 1] (1 keeps the thesis' leaves), got {alpha}"
        )));
    }
    Ok(())
}

impl Engine {
    /// The phases of `selection` at strength `s0`, with every segment's divergence curve; the
    /// pattern analysis they start from is found once per selection (the patterns of the same
    /// selection with the default options reuse it too).
    pub fn phases(&self, selection: &Selection, s0: f64, outside: Outside) -> Result<PhasesReport> {
        let options = PhaseOptions {
            strength: s0,
            outside,
            ..PhaseOptions::default()
        };
        self.phases_with(selection, &options)
    }

    /// The phases of `selection` with `options` (strength, outside communication, the
    /// significance α at which leaves of the thesis' tree are merged: 1 keeps every leaf).
    pub fn phases_with(&self, selection: &Selection, options: &PhaseOptions) -> Result<PhasesReport> {
        let s0 = options.strength;
        check_strength(s0)?;
        check_significance(options.significance)?;
        check_min_share(options.min_share)?;
        let scope = self.scope(selection)?;
        // Every rank's signed events do not depend on the patterns: found beside them.
        let signed = reads_signed_ranks(options);
        let (kept, ranks) =
            self.patterns_kept_and(&scope, |trace, events| signed.then(|| SignedRanks::of(trace, events)));
        let analysis = detect_phases_from(scope.trace(), &kept.events, &kept.communication, options, ranks);
        let curves = analysis
            .tree
            .iter()
            .map(|seg| {
                let curve = divergence_curve(&analysis.sequence, seg.start, seg.end);
                sample_curve(&curve, seg.start, seg.cut)
            })
            .collect();
        Ok(PhasesReport {
            analysis,
            curves,
            patterns: kept.communication.patterns.len(),
            strength: s0,
            selection: scope.selection,
        })
    }
}

/// Evenly sampled `(cut, divergence)` points of the curve of a segment starting at `start`
/// (entry `j` is the cut at `start + j + 1`), always keeping the cut `keep` when inside.
fn sample_curve(curve: &[f64], start: usize, keep: Option<usize>) -> Vec<(usize, f64)> {
    let step = curve.len().div_ceil(MAX_CURVE_POINTS).max(1);
    let mut points: Vec<(usize, f64)> = curve
        .iter()
        .enumerate()
        .filter(|(i, _)| i % step == 0 || *i + 1 == curve.len())
        .map(|(i, &d)| (start + 1 + i, d))
        .collect();
    if let Some(k) = keep {
        if k > start && k - start <= curve.len() && !points.iter().any(|p| p.0 == k) {
            points.push((k, curve[k - start - 1]));
            points.sort_by_key(|p| p.0);
        }
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patterns::PatternOptions;
    use crate::testing::sample_engine;
    use crate::FieldWords;
    use tracelogic_synth::{generate, Phase, Spec, Style, TopologySpec};

    #[test]
    fn two_generated_phases_are_cut_where_the_pattern_changes() {
        let phase = |t: &str, style, iterations| Phase {
            topology: Some(TopologySpec::parse(t).unwrap()),
            iterations: Some(iterations),
            style: Some(style),
            ..Default::default()
        };
        let spec = Spec {
            phases: vec![
                phase("torus:4x4", Style::Isend, 30),
                phase("ring:16", Style::Sendrecv, 40),
            ],
            ..Default::default()
        };
        let e = Engine::new(generate(&spec).unwrap(), FieldWords::Flags);
        let r = e.phases(&Selection::all(), 0.0, Outside::Own).unwrap();
        assert_eq!(r.patterns, 2);
        assert_eq!(r.analysis.sequence_length, 70);
        assert_eq!(r.analysis.tree[0].cut, Some(30));
        assert_eq!(r.analysis.phases.len(), 2);
        assert_eq!((r.analysis.phases[1].start, r.analysis.phases[1].end), (30, 70));
    }

    #[test]
    fn phase_curves_peak_at_the_cut() {
        let e = sample_engine("npb-lu.S.8");
        let r = e.phases(&Selection::all(), 0.0, Outside::Own).unwrap();
        assert!(!r.analysis.phases.is_empty());
        assert_eq!(r.curves.len(), r.analysis.tree.len());
        for (seg, curve) in r.analysis.tree.iter().zip(&r.curves) {
            assert!(curve.len() <= MAX_CURVE_POINTS + 1);
            assert!(curve.iter().all(|p| p.0 > seg.start && p.0 < seg.end));
            if let Some(cut) = seg.cut {
                let at_cut = curve.iter().find(|p| p.0 == cut).expect("the cut is kept").1;
                assert!((at_cut - seg.djs).abs() < 1e-9, "{at_cut} vs {}", seg.djs);
                assert!(curve.iter().all(|p| p.1 <= seg.djs + 1e-9));
            }
        }
        let coarse = e.phases(&Selection::all(), 10.0, Outside::Own).unwrap();
        assert!(coarse.analysis.phases.len() <= r.analysis.phases.len());
        assert!(e.phases(&Selection::all(), f64::NAN, Outside::Own).is_err());
        assert!(e
            .phases(&Selection::all(), -1.0, Outside::Own)
            .unwrap_err()
            .message()
            .contains("strength"));
    }

    #[test]
    fn significance_one_keeps_every_leaf_and_bad_levels_are_refused() {
        let e = sample_engine("npb-lu.S.8");
        let merged = e.phases(&Selection::all(), 0.0, Outside::Own).unwrap();
        assert_eq!(merged.analysis.significance, SIGNIFICANCE);
        let leaves = PhaseOptions {
            significance: 1.0,
            ..PhaseOptions::default()
        };
        let raw = e.phases_with(&Selection::all(), &leaves).unwrap();
        // The thesis' leaves are the leaves of its tree: the segments without children.
        let tree_leaves = raw.analysis.tree.iter().filter(|s| s.children.is_none()).count();
        assert_eq!(raw.analysis.phases.len(), tree_leaves);
        assert_eq!(merged.analysis.leaves, tree_leaves);
        assert!(merged.analysis.phases.len() <= tree_leaves);
        for bad in [0.0, -0.1, 1.5, f64::NAN, f64::INFINITY] {
            let opts = PhaseOptions {
                significance: bad,
                ..PhaseOptions::default()
            };
            let err = e.phases_with(&Selection::all(), &opts).unwrap_err();
            assert!(err.message().contains("significance"), "{bad}");
        }
    }

    #[test]
    fn sampled_curves_stay_bounded_and_keep_the_cut() {
        let curve: Vec<f64> = (0..5000).map(|i| (i % 997) as f64).collect();
        let points = sample_curve(&curve, 100, Some(100 + 997));
        assert!(points.len() <= MAX_CURVE_POINTS + 2);
        assert!(points.iter().any(|p| p.0 == 1097 && p.1 == 996.0));
        assert!(points.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(points.first().unwrap().0, 101);
        assert_eq!(points.last().unwrap().0, 100 + 5000);
    }

    #[test]
    fn phases_start_from_the_pattern_analysis_of_the_same_selection() {
        let e = sample_engine("npb-lu.S.8");
        let (start, end) = e.trace().span();
        let low = Selection {
            to: Some((end - start) / 2),
            ..Selection::default()
        };
        e.patterns(&Selection::all(), &PatternOptions::default()).unwrap();
        assert_eq!(e.pattern_analyses(), 1);
        let first = e.phases(&Selection::all(), 0.0, Outside::Own).unwrap();
        e.phases(&Selection::all(), 2.0, Outside::Own).unwrap();
        assert_eq!(e.pattern_analyses(), 1, "the kept analysis is reused at any strength");
        // The same answer as phases found on an engine of its own.
        let fresh = sample_engine("npb-lu.S.8")
            .phases(&Selection::all(), 0.0, Outside::Own)
            .unwrap();
        assert_eq!(first, fresh);
        let part = e.phases(&low, 0.0, Outside::Own).unwrap();
        assert_eq!(e.pattern_analyses(), 2);
        assert_ne!(part.analysis.sequence_length, first.analysis.sequence_length);
        for phase in &part.analysis.phases {
            assert!(
                phase.time.0 < start + (end - start) / 2,
                "phase at {:?} outside the window",
                phase.time
            );
        }
        e.phases(&low, 1.0, Outside::Own).unwrap();
        assert_eq!(e.pattern_analyses(), 2);
    }
}
