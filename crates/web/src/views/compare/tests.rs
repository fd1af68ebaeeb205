use super::*;

fn run(name: &str) -> RunProperties {
    RunProperties {
        source: name.into(),
        ranks: 2,
        sends: vec![1, 1],
        volume: vec![8, 8],
        spatial: vec![1, 1],
        work: Vec::new(),
        edges: vec![[0, 1]],
        filtered_pairs: 0,
        roots: Vec::new(),
        parts: None,
        auto_graph: None,
        collective_mix: Default::default(),
        operation_mix: Default::default(),
    }
}

fn answered(others: Vec<RunProperties>) -> AnalysisState {
    let result = CompareResult {
        others,
        matrix: None,
        layouts: Vec::new(),
        refused: None,
    };
    AnalysisState {
        result: Some(Rc::new(Ok(Answer::Compare(result)))),
        ..AnalysisState::default()
    }
}

#[test]
fn compared_runs_are_stored_once_per_change_and_forgotten_when_cleared() {
    let two = answered(vec![run("B"), run("C")]);
    let Keep::Save(json) = keep_after(Some(&two), "A", None) else {
        panic!("two runs and nothing stored: store them");
    };
    assert_eq!(
        serde_json::from_str::<Vec<RunProperties>>(&json).unwrap(),
        vec![run("B"), run("C")]
    );
    assert_eq!(keep_after(Some(&two), "A", Some(("A", &json))), Keep::Nothing);
    // The same runs compared with another trace are that trace's to keep.
    assert_eq!(
        keep_after(Some(&two), "Z", Some(("A", &json))),
        Keep::Save(json.clone())
    );
    // One removed: stored again without it.
    let one = answered(vec![run("C")]);
    assert_eq!(
        keep_after(Some(&one), "A", Some(("A", &json))),
        Keep::Save(serde_json::to_string(&vec![run("C")]).unwrap())
    );
    // Cleared: forgotten for this trace, another trace's runs untouched.
    let none = answered(Vec::new());
    assert_eq!(keep_after(Some(&none), "A", Some(("A", &json))), Keep::Forget);
    assert_eq!(keep_after(Some(&none), "Z", Some(("A", &json))), Keep::Nothing);
    // Waiting, failed or never compared: storage stays as it is.
    let waiting = AnalysisState {
        pending: true,
        ..none.clone()
    };
    assert_eq!(keep_after(Some(&waiting), "A", Some(("A", &json))), Keep::Nothing);
    let failed = AnalysisState {
        result: Some(Rc::new(Err("worker stopped".into()))),
        ..AnalysisState::default()
    };
    assert_eq!(keep_after(Some(&failed), "A", Some(("A", &json))), Keep::Nothing);
    assert_eq!(keep_after(None, "A", Some(("A", &json))), Keep::Nothing);
    assert_eq!(
        keep_after(Some(&AnalysisState::default()), "A", Some(("A", &json))),
        Keep::Nothing
    );
}

#[test]
fn stored_runs_come_back_only_with_their_trace() {
    let json = serde_json::to_string(&vec![run("B"), run("C")]).unwrap();
    assert_eq!(
        restore_request("A", "A", &json),
        Some(AnalysisRequest::CompareRuns {
            runs: vec![run("B"), run("C")],
            refused: None
        })
    );
    assert_eq!(restore_request("Z", "A", &json), None);
    assert_eq!(restore_request("A", "A", "[]"), None);
    assert_eq!(restore_request("A", "A", "{not json"), None);
}

#[test]
fn the_owner_names_the_trace_by_label_size_ranks_and_calls() {
    let trace = |label: &str, bytes: u64| LoadedTrace {
        label: label.into(),
        source: "x".into(),
        files: 1,
        bytes,
        summary: Default::default(),
        workers: 1,
    };
    assert_eq!(owner_key(&trace("LU", 10)), owner_key(&trace("LU", 10)));
    assert_ne!(owner_key(&trace("LU", 10)), owner_key(&trace("LU", 11)));
    assert_ne!(owner_key(&trace("LU", 10)), owner_key(&trace("MG", 10)));
}

#[test]
fn compact_ticks_stay_short() {
    assert_eq!(compact(35_629.0), "35.6k");
    assert_eq!(compact(1_250_000.0), "1.2M");
    assert_eq!(compact(3.0), "3.00");
    assert_eq!(compact(72.0), "72");
    assert_eq!(compact(0.0), "0");
    assert!(compact(4.2e12).len() <= 7);
}

#[test]
fn a_merge_joins_the_new_run_to_the_earlier_ones_and_keeps_them_on_refusal() {
    let answer = |others: Vec<RunProperties>, refused: Option<String>| {
        Ok(Answer::Compare(CompareResult {
            others,
            matrix: None,
            layouts: Vec::new(),
            refused,
        }))
    };
    assert_eq!(merge_request(Vec::new(), &answer(vec![run("B")], None)), None);
    assert_eq!(
        merge_request(vec![run("B")], &answer(vec![run("C")], None)),
        Some(AnalysisRequest::CompareRuns {
            runs: vec![run("B"), run("C")],
            refused: None
        })
    );
    assert_eq!(
        merge_request(vec![run("B")], &answer(Vec::new(), Some("no".into()))),
        Some(AnalysisRequest::CompareRuns {
            runs: vec![run("B")],
            refused: Some("no".into())
        })
    );
    assert_eq!(
        merge_request(vec![run("B")], &Err("cannot fetch".into())),
        Some(AnalysisRequest::CompareRuns {
            runs: vec![run("B")],
            refused: Some("cannot fetch".into())
        })
    );
    let state = AnalysisState {
        result: Some(std::rc::Rc::new(answer(vec![run("B")], None))),
        ..AnalysisState::default()
    };
    assert_eq!(compared_runs(Some(&state)), Some(vec![run("B")]));
    assert_eq!(compared_runs(None), Some(Vec::new()));
    let failed = AnalysisState {
        result: Some(std::rc::Rc::new(Err("x".into()))),
        ..AnalysisState::default()
    };
    assert_eq!(
        compared_runs(Some(&failed)),
        None,
        "an error keeps the runs the page knew"
    );
}

/// Properties of a 3x3 torus run whose volumes are `volume` (ranks in node order).
fn torus(name: &str, volume: [u64; 9]) -> RunProperties {
    let edges: Vec<[u32; 2]> = (0..9u32)
        .flat_map(|r| {
            let (x, y) = (r % 3, r / 3);
            [[r, y * 3 + (x + 1) % 3], [r, ((y + 1) % 3) * 3 + x]]
        })
        .map(|[a, b]| [a.min(b), a.max(b)])
        .collect();
    RunProperties {
        source: name.into(),
        ranks: 9,
        sends: vec![4; 9],
        volume: volume.to_vec(),
        spatial: vec![4; 9],
        work: Vec::new(),
        edges,
        filtered_pairs: 0,
        roots: Vec::new(),
        parts: None,
        auto_graph: None,
        collective_mix: Default::default(),
        operation_mix: Default::default(),
    }
}

#[test]
fn the_pairing_line_says_how_the_ranks_were_paired() {
    use tracelogic_analysis::similarity::{compare_properties, Alignment, CompareOptions, PairedBy};
    let a = torus("a", [9, 1, 2, 3, 4, 5, 6, 7, 8]);
    // Another program on the same torus: its largest volume is at rank 4, and no pairing
    // keeps every rank's place, so the ranks are paired by role.
    let b = torus("b", [1, 2, 3, 5, 9, 4, 6, 8, 7]);
    let c = compare_properties(&a, &b, &CompareOptions::default()).unwrap();
    assert_eq!(c.pairing.by, PairedBy::BestIsomorphism);
    let text = pairing_text(&c);
    assert!(text.contains("by role") && text.contains("proven best"), "{text}");
    assert!(
        text.contains(&format!("by rank number θ = {:.3}", c.pairing.theta_by_rank)),
        "{text}"
    );
    let chance = c.pairing.theta_chance.expect("9 ranks: the chance level is estimated");
    // Unrelated volumes on a torus with 72 automorphisms: θ no larger than what shuffled values
    // reach is the only reason the similar verdict is uncertain.
    assert_eq!(c.theta_at_chance, c.theta <= chance + 1e-12);
    let why: Vec<bool> = c.uncertain_because.iter().map(|u| u.contains("no evidence")).collect();
    assert_eq!(
        why,
        if c.similar && c.theta_at_chance {
            vec![true]
        } else {
            vec![]
        },
        "{}",
        c.verdict
    );
    assert!(
        text.contains(&format!("shuffled values reach θ ≈ {chance:.3}")),
        "{text}"
    );
    assert!(text.ends_with("not anchored, all 72 isomorphisms: the first run has no single root of rooted collectives; the second run has no single root of rooted collectives"), "{text}");
    // Both runs rooting their collectives (a at rank 0, b at rank 4): only the 8 of the 3x3
    // torus's 72 isomorphisms (rows and columns permuted, or swapped) that pair the roots.
    let rooted = |p: &RunProperties, root: usize| {
        let mut roots = vec![0u64; 9];
        roots[root] = 3;
        RunProperties { roots, ..p.clone() }
    };
    let anchored = compare_properties(&rooted(&a, 0), &rooted(&b, 4), &CompareOptions::default()).unwrap();
    assert_eq!(anchored.pairing.ranks[0], 4);
    let text = pairing_text(&anchored);
    assert!(
        text.contains("anchored on the collective roots, rank 0 with rank 4: 8 of 72 isomorphisms"),
        "{text}"
    );
    let by_rank = CompareOptions {
        alignment: Alignment::Rank,
        ..CompareOptions::default()
    };
    let r = compare_properties(&a, &b, &by_rank).unwrap();
    assert_eq!(pairing_text(&r), "ranks paired by rank number");
    // Roles read from the cut graphs are said (the engine's words).
    let mut on_cut = c.clone();
    on_cut.pairing.on_cut_graphs = true;
    assert!(
        pairing_text(&on_cut).ends_with("roles read from the graphs after `topology`'s first cut (the runs' own graphs differ in light pairs and are not isomorphic)"),
        "{}",
        pairing_text(&on_cut)
    );
    // A search cut after one step, with θ below the threshold, leaves the verdict open.
    let cut = CompareOptions {
        max_pairing_steps: Some(1),
        threshold: 0.99,
        ..CompareOptions::default()
    };
    let u = compare_properties(&a, &b, &cut).unwrap();
    assert!(!u.pairing.exhaustive);
    assert!(pairing_text(&u).contains("budget ran out"), "{}", pairing_text(&u));
    // The page shows the engine's words: the verdict carries the reason the search left open.
    assert_eq!(
        u.uncertain_because,
        ["a pairing the search did not reach could give a larger θ"]
    );
    assert!(
        u.verdict
            .ends_with("; uncertain: a pairing the search did not reach could give a larger θ"),
        "{}",
        u.verdict
    );
}

/// Two runs without point-to-point messages: the plot's label says the verdict rests on their
/// sequences of collectives, with the engine's agreement (not "ε alone").
#[test]
fn collectives_only_runs_say_what_the_verdict_rests_on() {
    use tracelogic_analysis::similarity::{compare_properties, CompareOptions, VerdictBasis};
    let empty = |name: &str, mix: &[(&str, u64)]| RunProperties {
        edges: Vec::new(),
        spatial: vec![0; 2],
        sends: vec![0; 2],
        volume: vec![0; 2],
        collective_mix: mix.iter().map(|&(k, n)| (k.to_string(), n)).collect(),
        ..run(name)
    };
    let a = empty("a", &[("^>Reduce", 9), ("Reduce>Bcast", 90), ("Bcast>Reduce", 81)]);
    let b = empty("b", &[("^>Bcast", 9), ("Bcast>Bcast", 90), ("Bcast>Barrier", 9)]);
    let c = compare_properties(&a, &b, &CompareOptions::default()).unwrap();
    assert_eq!(c.verdict_on, VerdictBasis::CollectiveMix);
    assert!(!c.similar);
    let text = basis_text(&c, 0.6);
    assert!(text.contains("sequence their collectives (agreement 0.000"), "{text}");
    assert!(c.verdict.starts_with("not similar on the collectives"), "{}", c.verdict);
}

#[test]
fn a_pair_that_communicates_otherwise_says_the_operations_decided() {
    use tracelogic_analysis::similarity::{compare_properties, CompareOptions};
    // One graph, the same values: similar by θ and ε; blocking sends against non-blocking ones.
    let with = |name: &str, mix: &[(&str, u64)]| RunProperties {
        operation_mix: mix.iter().map(|&(k, n)| (k.to_string(), n)).collect(),
        ..run(name)
    };
    let a = with("a", &[("^>Send", 1), ("Send>Recv", 50), ("Recv>Send", 49)]);
    let b = with(
        "b",
        &[
            ("^>Irecv", 1),
            ("Irecv>Isend", 50),
            ("Isend>Completion", 50),
            ("Completion>Irecv", 49),
        ],
    );
    let c = compare_properties(&a, &b, &CompareOptions::default()).unwrap();
    assert!(!c.similar && c.operation_mix_differs && c.classification_certain);
    assert!(
        c.operation_mix_similarity.is_some_and(|m| m < 1e-9),
        "{:?}",
        c.operation_mix_similarity
    );
    let text = basis_text(&c, 0.6);
    assert!(
        text.contains("sequences of operations (consecutive pairs) agree 0.000"),
        "{text}"
    );
    assert!(text.ends_with("it does not, so not similar"), "{text}");
    assert!(c.verdict.contains("the runs communicate differently"), "{}", c.verdict);
    let same = compare_properties(&a, &a, &CompareOptions::default()).unwrap();
    assert!(same.similar && !same.operation_mix_differs);
    // Properties stored before the mix was recorded have none: it has no say.
    let stored = compare_properties(&a, &run("old"), &CompareOptions::default()).unwrap();
    assert!(stored.similar && stored.operation_mix_similarity.is_none());
}
