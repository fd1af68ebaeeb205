//! Candidate elimination and proof (Logicalization Table 7): the cheap invariants first, then
//! colour refinement, distance profiles, quick searches, the spectrum, and the isomorphism
//! that proves the match with a mapping (docs/topology.md §3, §4).

use super::candidate::Candidate;
use super::near::near_matches;
use super::placement::places;
use super::report::{
    Identification, IdentificationTimings, PairTraffic, SpectrumDisplay, Stage, TopologyOptions, DISPLAY_SPECTRUM_NODES,
};
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use std::time::Duration;
use tracelogic_graph::catalog::{candidates, simplicity};
use tracelogic_graph::closed_form::PrimeFactor;
use tracelogic_graph::families::process_grid;
use tracelogic_graph::invariants::{
    closed_walks, closed_walks_within, distance_profile, spectra_agree, spectrum, SPECTRUM_MAX_NODES,
};
use tracelogic_graph::iso::{isomorphism_coloured, IsoOptions, IsoOutcome};
use tracelogic_graph::refine::{refine_joint, Colouring};
use tracelogic_graph::{Family, Graph, TopologySpec};
use web_time::Instant;

/// Walk-count work allowed for the graph (sparse multiply-adds; ~30 ms natively); candidates
/// get four times as much at the same length and are not compared on walks beyond that.
const WALK_BUDGET: u64 = 30_000_000;

/// Candidate nodes whose distance profile is compared with the app's (non-transitive
/// candidates with a larger colour class skip the test).
const PROFILE_MAX_ROOTS: usize = 16;

/// Identify one graph whose node `i` is rank `ranks[i]`.
pub(super) fn identify(
    g: &Graph,
    ranks: &[u32],
    traffic: &dyn Fn(u32, u32) -> PairTraffic,
    opts: &TopologyOptions,
) -> Identification {
    let started = Instant::now();
    let n = g.num_nodes();
    let m = g.num_edges() as u64;
    let mut stages = Vec::new();
    // `start` is the stage's start, or why it was skipped; `twins` are the candidates known to be
    // isomorphic to a survivor, listed with it.
    let mut stage = |name: &str, start: Result<Instant, &String>, survivors: &[Candidate], twins: &Twins| {
        let (candidates, labels) = twins.expand(survivors);
        stages.push(Stage {
            name: name.into(),
            candidates,
            survivors: labels,
            milliseconds: start.map_or(0.0, |t| t.elapsed().as_secs_f64() * 1e3),
            skipped: start.err().cloned(),
        });
    };

    let t = Instant::now();
    let all: Vec<Candidate> = candidates(n)
        .into_iter()
        .map(Candidate::Spec)
        .chain(
            opts.library
                .iter()
                .filter(|c| c.graph.num_nodes() == n)
                .map(Candidate::Custom),
        )
        .collect();
    let mut twins = Twins::default();
    stage("generated", Ok(t), &all, &twins);

    let t = Instant::now();
    let mut left: Vec<Candidate> = all.iter().filter(|c| c.edge_count() == m).cloned().collect();
    stage("nodes and edges", Ok(t), &left, &twins);

    let t = Instant::now();
    let degrees = g.degree_histogram();
    left.retain(|c| c.degrees() == degrees);
    stage("degree sequence", Ok(t), &left, &twins);

    let t = Instant::now();
    // Candidates with the same prime factors are the same graph: only the simplest goes through
    // the remaining stages, and the others share its fate.
    twins = Twins::group(&mut left);
    let grouping = t.elapsed();

    let iso_opts = IsoOptions {
        max_steps: opts.max_steps.unwrap_or(IsoOptions::for_nodes(n).max_steps),
        ..IsoOptions::for_nodes(n)
    };
    // About what an ordered proof of grids, tori, stencils and hypercubes costs.
    let quick = IsoOptions {
        max_steps: (4 * (n as u64 + 2 * m) + 1_000).min(iso_opts.max_steps),
        ..iso_opts
    };
    // The spectrum stage only eliminates; when nothing is left undecided the isomorphism has
    // decided alone, and the eigenvalues are computed for display after it, if wanted.
    let display = match opts.spectrum {
        SpectrumDisplay::Auto => n <= DISPLAY_SPECTRUM_NODES,
        SpectrumDisplay::Always => true,
        SpectrumDisplay::Never => false,
    };

    // One candidate left after the degree sequence (2D grids of any size: the corners and the
    // boundary pin the extents): the later invariants can only refute it, which the proof does
    // too. A quick ordered search under the degree colours (any joint colouring is valid for
    // the search) proves it in about one step per node and edge end, where joint refinement of
    // a grid runs its full 32 rounds first (most of an 8,100-rank identification). Exhausting
    // that search refutes the candidate; only when it runs out of its budget do the refinement,
    // the distance profile and the full search run as for several candidates.
    let t_first = Instant::now();
    let mut prebuilt: Option<Graph> = None;
    let mut decided: Option<(Graph, Colouring, IsoOutcome)> = None;
    if left.len() == 1 {
        let h = left[0].graph();
        let by_degree = refine_joint(&[g, &h], 0);
        match isomorphism_coloured(g, &h, Some(&by_degree), quick) {
            IsoOutcome::GaveUp { .. } => prebuilt = Some(h),
            done => decided = Some((h, by_degree, done)),
        }
    }
    let first_try = t_first.elapsed();

    let narrowed = match decided {
        Some((h, colouring, done)) => {
            let with_twins = twins.expand(&left).0;
            let reason = if with_twins > 1 {
                format!(
                    "{with_twins} candidates left, all the same product of paths and cycles: the isomorphism \
                     decides with one proof"
                )
            } else {
                "one candidate left: the isomorphism decides".to_string()
            };
            for name in ["colour refinement", "distance profile", "spectrum"] {
                stage(name, Err(&reason), &left, &twins);
            }
            Narrowed {
                graphs: vec![h],
                colourings: vec![Rc::new(colouring)],
                settled: vec![Some(done)],
                spectra: vec![None],
                quick_time: first_try + grouping,
                display_pending: display,
                walk_counts: Vec::new(),
                app_spectrum: None,
            }
        }
        None => {
            let t = Instant::now();
            let t = t.checked_sub(grouping).unwrap_or(t);
            let mut narrowed = narrow(
                g,
                &mut left,
                prebuilt,
                &twins,
                Elimination {
                    quick,
                    display,
                    refinement_start: t,
                    regular: degrees.len() <= 1,
                },
                &mut stage,
            );
            narrowed.quick_time += first_try;
            narrowed
        }
    };
    let Narrowed {
        graphs,
        colourings,
        settled: settled_kept,
        spectra: mut kept_spectra,
        quick_time,
        display_pending,
        walk_counts,
        app_spectrum,
    } = narrowed;

    // The isomorphism stage's time includes the quick searches above.
    let t = Instant::now();
    let t = t.checked_sub(quick_time).unwrap_or(t);
    let mut proved: Vec<Proved> = Vec::new();
    let mut gave_up = Vec::new();
    for ((((c, h), s), col), settled) in left
        .iter()
        .zip(&graphs)
        .zip(kept_spectra.iter_mut())
        .zip(&colourings)
        .zip(settled_kept)
    {
        let outcome = match settled {
            Some(done) => done,
            None => isomorphism_coloured(g, h, Some(col), iso_opts),
        };
        match outcome {
            IsoOutcome::Isomorphic { mapping, .. } => {
                proved.extend(twins.of(c).map(|t| (Candidate::Spec(t.clone()), None, None)));
                proved.push((c.clone(), Some(mapping), s.take()));
            }
            IsoOutcome::GaveUp { steps } => {
                for label in std::iter::once(c.label()).chain(twins.of(c).map(TopologySpec::label)) {
                    gave_up.push(format!("{label} (gave up after {steps} steps)"));
                }
            }
            IsoOutcome::NotIsomorphic { .. } => {}
        }
    }
    // Simplest first; a group's representative is its simplest member, so the match has a mapping.
    twins.sort(&mut proved, |p| &p.0);
    let survivors: Vec<Candidate> = proved.iter().map(|p| p.0.clone()).collect();
    stage("isomorphism", Ok(t), &survivors, &Twins::default());

    let mut out = Identification {
        ranks: n,
        edge_count: m as usize,
        matched: None,
        equivalents: survivors.iter().map(Candidate::describe).collect(),
        stages,
        mapping: Vec::new(),
        gave_up,
        near_matches: Vec::new(),
        near_match_gave_up: Vec::new(),
        walk_counts,
        spectrum: app_spectrum,
        candidate_spectrum: None,
        timings: IdentificationTimings::default(),
    };
    let best = proved.into_iter().find(|p| p.1.is_some());
    if display_pending {
        let t = Instant::now();
        // Isomorphic graphs have the same eigenvalues: the match's closed form, when its family
        // has one, replaces the dense decomposition of the graph.
        let closed = match &best {
            Some((Candidate::Spec(s), _, _)) => s.closed_form_spectrum(SPECTRUM_MAX_NODES),
            _ => None,
        };
        out.spectrum = closed.or_else(|| spectrum(g));
        out.timings.display_spectrum_ms = t.elapsed().as_secs_f64() * 1e3;
    }
    if let Some((mut best, Some(mut mapping), s)) = best {
        let t = Instant::now();
        // A process grid's isomorphism is one of P!·Q!(·2) and says nothing about which rank is
        // in which row: its rows and columns are read from the graph by a fixed rule instead
        // (oriented so that the lowest rank and its lowest neighbour share a row).
        if matches!(&best, Candidate::Spec(s) if s.family == Family::ProcessGrid) {
            if let Some(layout) = process_grid(g) {
                let oriented = Candidate::Spec(layout.spec);
                let before = best.describe();
                if let Some(e) = out.equivalents.iter_mut().find(|e| **e == before) {
                    *e = oriented.describe();
                }
                best = oriented;
                mapping = layout.node_of;
            }
        }
        out.matched = Some(best.describe());
        out.mapping = places(&best, &mapping, ranks);
        out.candidate_spectrum = if display_pending { out.spectrum.clone() } else { s };
        out.timings.mapping_ms = t.elapsed().as_secs_f64() * 1e3;
    } else if opts.near_matches > 0 {
        let t = Instant::now();
        let undecided: Vec<String> = left
            .iter()
            .flat_map(|c| std::iter::once(c.label()).chain(twins.of(c).map(TopologySpec::label)))
            .filter(|l| out.gave_up.iter().any(|g| g.starts_with(l.as_str())))
            .collect();
        (out.near_matches, out.near_match_gave_up) =
            near_matches(g, ranks, &all, traffic, opts.near_matches, &undecided);
        out.stages.push(Stage {
            name: "near matches".into(),
            candidates: out.near_matches.len(),
            survivors: out.near_matches.iter().map(|c| c.topology.label.clone()).collect(),
            milliseconds: t.elapsed().as_secs_f64() * 1e3,
            skipped: None,
        });
    }
    out.timings.total_ms = started.elapsed().as_secs_f64() * 1e3;
    out
}

/// What the elimination stages after the degree sequence leave for the isomorphism stage, one
/// entry per candidate left in each list.
struct Narrowed {
    graphs: Vec<Graph>,
    colourings: Vec<Rc<Colouring>>,
    /// The quick search's outcome, `None` where it gave up (the full search decides).
    settled: Vec<Option<IsoOutcome>>,
    /// Candidate eigenvalues, when the spectrum stage computed them for display.
    spectra: Vec<Option<Vec<f64>>>,
    /// Time of the quick searches (reported in the isomorphism stage).
    quick_time: Duration,
    /// Eigenvalues are wanted for display and were not computed by the spectrum stage.
    display_pending: bool,
    walk_counts: Vec<u64>,
    app_spectrum: Option<Vec<f64>>,
}

/// Settings of [`narrow`].
struct Elimination {
    /// Budget of the quick isomorphism searches.
    quick: IsoOptions,
    /// Eigenvalues are computed for display.
    display: bool,
    /// When the colour refinement stage began.
    refinement_start: Instant,
    /// The graph is regular (one degree).
    regular: bool,
}

/// The signature of the stage recorder of [`identify`].
type StageRecorder<'r> = dyn FnMut(&str, Result<Instant, &String>, &[Candidate], &Twins) + 'r;

/// Colour refinement, distance profile, quick isomorphism searches and the spectrum stage on
/// the candidates `left` (which it narrows); `prebuilt` is the first candidate's graph when it
/// was already built.
fn narrow(
    g: &Graph,
    left: &mut Vec<Candidate>,
    prebuilt: Option<Graph>,
    twins: &Twins,
    limits: Elimination,
    stage: &mut StageRecorder,
) -> Narrowed {
    let n = g.num_nodes();
    // Two regular graphs of the same size and degree are never told apart by refinement: the
    // candidates of a regular graph share one trivial colouring, and their graphs are only built
    // once the distance profile (computed from the structure for Cartesian families and
    // hypercubes) has kept them.
    let regular = limits.regular;
    let trivial = Rc::new(Colouring {
        colours: vec![vec![0; n as usize], vec![0; n as usize]],
        classes: 1,
        rounds: 0,
    });
    let mut lazy: Vec<Option<Graph>> = left.iter().map(|c| (!regular).then(|| c.graph())).collect();
    if let (Some(h), Some(slot)) = (prebuilt, lazy.first_mut()) {
        *slot = Some(h);
    }
    let mut colourings: Vec<Rc<Colouring>> = lazy
        .iter()
        .map(|h| match h {
            Some(h) => Rc::new(refine_joint(&[g, h], 32)),
            None => Rc::clone(&trivial),
        })
        .collect();
    // The shared trivial colouring agrees by construction (counting its histograms once per
    // candidate was 2.5 ms of 146 regular candidates at 8,100 ranks).
    let keep: Vec<bool> = colourings
        .iter()
        .map(|c| Rc::ptr_eq(c, &trivial) || c.histograms_agree())
        .collect();
    retain_pairs(left, &mut lazy, &keep);
    retain_mask(&mut colourings, &keep);
    stage("colour refinement", Ok(limits.refinement_start), left, twins);

    // An isomorphism maps the app's most distinctive node to a candidate node of the same
    // colour with the same distance profile; for vertex-transitive candidates any node will do.
    let t = Instant::now();
    let mut profiles: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    let keep: Vec<bool> = left
        .iter()
        .zip(lazy.iter_mut())
        .zip(&colourings)
        .map(|((c, h), col)| {
            let root = if Rc::ptr_eq(col, &trivial) {
                (n > 0).then_some(0)
            } else {
                let hist = col.histogram(0);
                (0..n).min_by_key(|&u| (hist[col.colours[0][u as usize] as usize], u))
            };
            let Some(root) = root else {
                return true;
            };
            let mine = profiles.entry(root).or_insert_with(|| distance_profile(g, root));
            let colour = col.colours[0][root as usize];
            if let Candidate::Spec(s) = c {
                if h.is_none() && s.is_vertex_transitive() {
                    if let Some(theirs) = s.structural_distance_profile(0, Some(mine)) {
                        return theirs == *mine;
                    }
                }
            }
            let h = h.get_or_insert_with(|| c.graph());
            let transitive = matches!(c, Candidate::Spec(s) if s.is_vertex_transitive());
            let images: Vec<u32> = (0..n)
                .filter(|&v| col.colours[1][v as usize] == colour)
                .take(if transitive { 1 } else { PROFILE_MAX_ROOTS + 1 })
                .collect();
            if images.len() > PROFILE_MAX_ROOTS {
                return true;
            }
            images.iter().any(|&v| distance_profile(h, v) == *mine)
        })
        .collect();
    retain_pairs(left, &mut lazy, &keep);
    retain_mask(&mut colourings, &keep);
    let mut graphs: Vec<Graph> = lazy
        .into_iter()
        .zip(left.iter())
        .map(|(h, c)| h.unwrap_or_else(|| c.graph()))
        .collect();
    stage("distance profile", Ok(t), left, twins);

    // A quick, near-linear isomorphism search settles most candidates at once (ordered search
    // on grids, tori, stencils, hypercubes costs about one step per node and edge end): proved,
    // or refuted. Only the ones it leaves undecided go through the spectrum stage and the full
    // search. With one candidate left the full search runs directly.
    let t_quick = Instant::now();
    let settled: Vec<Option<IsoOutcome>> = if left.len() > 1 {
        graphs
            .iter()
            .zip(&colourings)
            .map(|(h, col)| match isomorphism_coloured(g, h, Some(col), limits.quick) {
                IsoOutcome::GaveUp { .. } => None,
                done => Some(done),
            })
            .collect()
    } else {
        vec![None; left.len()]
    };
    let quick_time = t_quick.elapsed();

    let undecided = settled.iter().filter(|s| s.is_none()).count();
    let mut walk_counts = Vec::new();
    let mut app_spectrum = None;
    let mut display_pending = false;
    let kept_spectra: Vec<Option<Vec<f64>>>;
    let mut settled_kept = settled;
    if undecided == 0 || left.len() <= 1 {
        display_pending = limits.display;
        // Candidates a quick search refuted leave here (they are not isomorphic).
        let keep: Vec<bool> = settled_kept
            .iter()
            .map(|s| !matches!(s, Some(IsoOutcome::NotIsomorphic { .. })))
            .collect();
        retain_pairs(left, &mut graphs, &keep);
        retain_mask(&mut colourings, &keep);
        retain_mask(&mut settled_kept, &keep);
        kept_spectra = vec![None; left.len()];
        let with_twins = twins.expand(left).0;
        let reason = match left.len() {
            0 if keep.is_empty() => "no candidate left".to_string(),
            1 if keep.len() == 1 && with_twins > 1 => format!(
                "the isomorphism search settled all {with_twins} candidates with one proof: the other {} are \
                 the same product of paths and cycles",
                with_twins - 1
            ),
            1 if keep.len() == 1 => "one candidate left: the isomorphism decides".to_string(),
            _ => format!(
                "the isomorphism search settled all {} candidates in near-linear time",
                keep.len()
            ),
        };
        stage("spectrum", Err(&reason), left, twins);
    } else {
        let t = Instant::now();
        let walks = closed_walks_within(g, WALK_BUDGET);
        let half = walks.counts.len() / 2;
        app_spectrum = if limits.display { spectrum(g) } else { None };
        let mut cand_spectra: Vec<Option<Vec<f64>>> = Vec::new();
        let keep: Vec<bool> = graphs
            .iter()
            .zip(&settled_kept)
            .map(|(h, settled)| {
                let s = if app_spectrum.is_some() { spectrum(h) } else { None };
                let same = match settled {
                    Some(IsoOutcome::Isomorphic { .. }) => true,
                    Some(_) => false,
                    None => {
                        let same_walks = if half >= 1 {
                            closed_walks(h, half, 4 * WALK_BUDGET).is_none_or(|w| w == walks)
                        } else {
                            true
                        };
                        same_walks
                            && match (&app_spectrum, &s) {
                                (Some(a), Some(b)) => spectra_agree(a, b),
                                _ => true,
                            }
                    }
                };
                cand_spectra.push(s);
                same
            })
            .collect();
        kept_spectra = cand_spectra
            .into_iter()
            .zip(&keep)
            .filter(|(_, &k)| k)
            .map(|(s, _)| s)
            .collect();
        retain_pairs(left, &mut graphs, &keep);
        retain_mask(&mut colourings, &keep);
        retain_mask(&mut settled_kept, &keep);
        walk_counts = walks.counts;
        stage("spectrum", Ok(t), left, twins);
    }

    Narrowed {
        graphs,
        colourings,
        settled: settled_kept,
        spectra: kept_spectra,
        quick_time,
        display_pending,
        walk_counts,
        app_spectrum,
    }
}

/// A candidate proved isomorphic to the graph: its mapping (`None` for a twin of the proved
/// representative) and its eigenvalues when the spectrum stage computed them.
type Proved<'a> = (Candidate<'a>, Option<Vec<u32>>, Option<Vec<f64>>);

/// Candidates known to be isomorphic to a representative candidate because both are Cartesian
/// products of the same paths and cycles (see `tracelogic_graph::closed_form`), with every
/// candidate's position in the generated list (to list them in that order).
#[derive(Default)]
struct Twins {
    of: BTreeMap<TopologySpec, Vec<TopologySpec>>,
    position: HashMap<TopologySpec, usize>,
}

impl Twins {
    /// Keep in `left` only the simplest candidate of each group with equal prime factors, and
    /// remember the others as its twins.
    fn group(left: &mut Vec<Candidate>) -> Twins {
        let mut groups: HashMap<Vec<PrimeFactor>, Vec<(usize, TopologySpec)>> = HashMap::new();
        for (i, c) in left.iter().enumerate() {
            if let Candidate::Spec(s) = c {
                if let Some(f) = s.prime_factors() {
                    groups.entry(f).or_default().push((i, s.clone()));
                }
            }
        }
        let mut twins = Twins::default();
        if groups.values().all(|g| g.len() == 1) {
            return twins;
        }
        // `left` is in generation order and every later survivor comes from it, so its
        // positions order the lists as the generated ones do.
        twins.position = left
            .iter()
            .enumerate()
            .filter_map(|(i, c)| match c {
                Candidate::Spec(s) => Some((s.clone(), i)),
                Candidate::Custom(_) => None,
            })
            .collect();
        let mut keep = vec![true; left.len()];
        for mut members in groups.into_values().filter(|g| g.len() > 1) {
            members.sort_by_key(|(_, s)| (simplicity(s), twins.position.get(s).copied()));
            let (_, rep) = members.remove(0);
            members.sort_by_key(|(_, s)| twins.position.get(s).copied());
            for (i, _) in &members {
                keep[*i] = false;
            }
            twins.of.insert(rep, members.into_iter().map(|(_, s)| s).collect());
        }
        retain_mask(left, &keep);
        twins
    }

    /// The twins of `c` (none for a custom pattern or a candidate without twins).
    fn of<'s>(&'s self, c: &Candidate) -> impl Iterator<Item = &'s TopologySpec> + 's {
        let list = match c {
            Candidate::Spec(s) => self.of.get(s).map(Vec::as_slice).unwrap_or(&[]),
            Candidate::Custom(_) => &[],
        };
        list.iter()
    }

    /// How many candidates `survivors` and their twins are, and the first 64 labels in the
    /// order they were generated.
    fn expand(&self, survivors: &[Candidate]) -> (usize, Vec<String>) {
        if self.of.is_empty() {
            return (
                survivors.len(),
                survivors.iter().take(64).map(Candidate::label).collect(),
            );
        }
        // Labels are formatted for the 64 listed only.
        let mut listed: Vec<(usize, Result<&Candidate, &TopologySpec>)> = survivors
            .iter()
            .enumerate()
            .flat_map(|(k, c)| {
                std::iter::once((self.order(c, k), Ok(c))).chain(
                    self.of(c)
                        .map(move |t| (self.position.get(t).copied().unwrap_or(usize::MAX), Err(t))),
                )
            })
            .collect();
        listed.sort_by_key(|l| l.0);
        let count = listed.len();
        let labels = listed
            .into_iter()
            .take(64)
            .map(|(_, c)| c.map_or_else(TopologySpec::label, Candidate::label))
            .collect();
        (count, labels)
    }

    /// Where `c` (the `k`-th survivor) was generated: custom patterns come after every family.
    fn order(&self, c: &Candidate, k: usize) -> usize {
        match c {
            Candidate::Spec(s) => self.position.get(s).copied().unwrap_or(usize::MAX),
            Candidate::Custom(_) => self.position.len() + k,
        }
    }

    /// Sort proved candidates simplest first, ties in generation order.
    fn sort<T>(&self, items: &mut [T], candidate: impl Fn(&T) -> &Candidate) {
        if self.of.is_empty() {
            items.sort_by_key(|p| candidate(p).simplicity());
        } else {
            items.sort_by_key(|p| {
                let c = candidate(p);
                let k = match c {
                    Candidate::Spec(s) => self.position.get(s).copied().unwrap_or(usize::MAX),
                    Candidate::Custom(_) => usize::MAX,
                };
                (c.simplicity(), k)
            });
        }
    }
}

fn retain_mask<T>(items: &mut Vec<T>, keep: &[bool]) {
    let mut i = 0;
    items.retain(|_| {
        i += 1;
        keep[i - 1]
    });
}

fn retain_pairs<T>(left: &mut Vec<Candidate>, graphs: &mut Vec<T>, keep: &[bool]) {
    let mut i = 0;
    left.retain(|_| {
        i += 1;
        keep[i - 1]
    });
    let mut i = 0;
    graphs.retain(|_| {
        i += 1;
        keep[i - 1]
    });
}
