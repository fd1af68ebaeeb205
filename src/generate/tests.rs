use super::*;
use clap::Parser;

#[derive(Parser)]
struct Cmd {
    #[command(flatten)]
    args: Args,
}

fn parse(flags: &[&str]) -> Result<Args, clap::Error> {
    let mut argv = vec!["generate"];
    argv.extend_from_slice(flags);
    Cmd::try_parse_from(argv).map(|c| c.args)
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tracelogic-generate-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn flags_fill_the_spec() {
    let args = parse(&[
        "--topology",
        "stencil6:4x4",
        "--numbering",
        "partial:0.67",
        "--seed",
        "7",
        "--iterations",
        "3",
        "--bytes",
        "2Ki,east=8Ki",
        "--compute",
        "20us",
        "--imbalance",
        "0.1",
        "--style",
        "sendrecv",
        "--collective",
        "allreduce:5",
        "--collective",
        "barrier:2",
        "--noise",
        "0.1:2%",
        "--latency",
        "1us",
        "--format",
        "text",
        "--out",
        "x.txt",
    ])
    .unwrap();
    let s = build_spec(&args).unwrap();
    assert_eq!(s.topology, TopologySpec::parse("stencil6:4x4").unwrap());
    assert_eq!(s.numbering, Numbering::Partial(0.67));
    assert_eq!((s.seed, s.iterations, s.bytes, s.compute_ns), (7, 3, 2048, 20_000));
    assert_eq!(s.direction_bytes.get("east"), Some(&8192));
    assert_eq!(s.style, Style::Sendrecv);
    assert_eq!(s.collectives.len(), 2);
    assert_eq!(
        s.noise,
        Some(Noise {
            fraction: 0.1,
            percent: 2.0
        })
    );
    assert_eq!(s.clock.latency_ns, 1000);
    assert_eq!(s.imbalance, 0.1);
}

#[test]
fn bad_flags_are_usage_errors() {
    for bad in [
        &["--topology", "blob:4", "--format", "text", "--out", "x"][..],
        &[
            "--topology",
            "grid:4x4",
            "--numbering",
            "shuffled",
            "--format",
            "text",
            "--out",
            "x",
        ],
        &[
            "--topology",
            "grid:4x4",
            "--compute",
            "10 lightyears",
            "--format",
            "text",
            "--out",
            "x",
        ],
        &[
            "--topology",
            "grid:4x4",
            "--collective",
            "gather:2",
            "--format",
            "text",
            "--out",
            "x",
        ],
        &[
            "--topology",
            "grid:4x4",
            "--noise",
            "3:1%",
            "--format",
            "text",
            "--out",
            "x",
        ],
        &["--topology", "grid:4x4", "--format", "paraver", "--out", "x"],
        &["--topology", "grid:4x4", "--format", "text"],
        &[
            "--topology",
            "grid:4x4",
            "--phase",
            "topology=ring:4,speed=3",
            "--format",
            "text",
            "--out",
            "x",
        ],
    ] {
        let e = parse(bad).map(|_| ()).unwrap_err();
        assert_eq!(e.exit_code(), 2, "{bad:?}: {e}");
    }
    let no_topology = parse(&["--format", "text", "--out", "x"]).unwrap();
    let e = build_spec(&no_topology).unwrap_err();
    assert!(e.to_string().contains("--topology is required"), "{e}");
    assert_eq!(e.exit_code(), ExitCode::from(2));
}

#[test]
fn generation_errors_are_input_errors() {
    let dir = temp("wavefront-torus");
    let out = dir.join("t.txt");
    let args = parse(&[
        "--topology",
        "torus:4x4",
        "--style",
        "wavefront",
        "--format",
        "text",
        "--out",
        out.to_str().unwrap(),
    ])
    .unwrap();
    let e = run(args).unwrap_err();
    assert!(matches!(e, CliError::Input(_)));
    assert!(e.to_string().contains("2D grid"), "{e}");
    assert!(!out.exists());
}

#[test]
fn phases_from_flags_and_file_and_spec_from_truth() {
    let dir = temp("phases");
    let file = dir.join("phases.json");
    fs::write(
        &file,
        r#"{"phases": [{"topology": "grid:4x4", "iterations": 2, "direction_bytes": {"east": 10}}]}"#,
    )
    .unwrap();
    let args = parse(&[
        "--phases",
        file.to_str().unwrap(),
        "--phase",
        "topology=ring:16,bytes=1Ki",
        "--format",
        "text",
        "--out",
        "x",
    ])
    .unwrap();
    let s = build_spec(&args).unwrap();
    assert_eq!(s.phases.len(), 2);
    assert_eq!(s.topology, TopologySpec::parse("grid:4x4").unwrap());
    assert_eq!(s.phases[1].bytes, Some(1024));

    let (_, truth) = generate_with_truth(&s).unwrap();
    let truth_file = dir.join("truth.json");
    fs::write(&truth_file, serde_json::to_string(&truth).unwrap()).unwrap();
    let again =
        build_spec(&parse(&["--spec", truth_file.to_str().unwrap(), "--format", "text", "--out", "x"]).unwrap())
            .unwrap();
    assert_eq!(again, s);

    fs::write(&file, "[]").unwrap();
    let e = build_spec(&parse(&["--phases", file.to_str().unwrap(), "--format", "text", "--out", "x"]).unwrap())
        .unwrap_err();
    assert!(e.to_string().contains("empty"), "{e}");
    fs::write(&file, "{not json").unwrap();
    let e = build_spec(&parse(&["--phases", file.to_str().unwrap(), "--format", "text", "--out", "x"]).unwrap())
        .unwrap_err();
    assert!(e.to_string().contains("not valid JSON"), "{e}");
}

#[test]
fn dumpi_files_and_truth_are_written() {
    let dir = temp("dumpi");
    let out = dir.join("ring");
    let truth = dir.join("truth.json");
    let args = parse(&[
        "--topology",
        "ring:4",
        "--numbering",
        "random",
        "--seed",
        "3",
        "--iterations",
        "2",
        "--format",
        "dumpi",
        "--out",
        out.to_str().unwrap(),
        "--truth",
        truth.to_str().unwrap(),
    ])
    .unwrap();
    run(args).unwrap();
    let mut names: Vec<String> = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.contains(&"ring.meta".to_string()), "{names:?}");
    assert_eq!(names.iter().filter(|n| n.ends_with(".bin")).count(), 4, "{names:?}");
    let t: Truth = serde_json::from_str(&fs::read_to_string(&truth).unwrap()).unwrap();
    assert_eq!(t.ranks, 4);
    assert_eq!(t.messages, 4 * 2 * 2);
    let mut nodes = t.node_of_rank.clone();
    nodes.sort_unstable();
    assert_eq!(nodes, vec![0, 1, 2, 3]);
}

#[test]
fn nas_flags_fill_the_nas_spec() {
    let args = parse(&[
        "--nas",
        "mg",
        "--ranks",
        "32",
        "--class",
        "a",
        "--iterations",
        "2",
        "--numbering",
        "random",
        "--seed",
        "3",
        "--latency",
        "1us",
        "--format",
        "dumpi",
        "--out",
        "x",
    ])
    .unwrap();
    let s = build_nas_spec(&args, args.nas.unwrap()).unwrap();
    assert_eq!(
        (s.benchmark, s.class, s.ranks, s.iterations),
        (NasBenchmark::Mg, NasClass::A, 32, Some(2))
    );
    assert_eq!((s.numbering, s.seed, s.clock.latency_ns), (Numbering::Random, 3, 1000));
    let defaults = parse(&["--nas", "bt", "--ranks", "9", "--format", "text", "--out", "x"]).unwrap();
    let d = build_nas_spec(&defaults, NasBenchmark::Bt).unwrap();
    assert_eq!(
        (d.class, d.iterations, d.numbering),
        (NasClass::S, None, Numbering::RowMajor)
    );
}

#[test]
fn nas_flags_that_do_not_fit_are_refused() {
    for bad in [
        &[
            "--nas",
            "lu",
            "--ranks",
            "8",
            "--topology",
            "grid:4x2",
            "--format",
            "text",
            "--out",
            "x",
        ][..],
        &["--nas", "dt", "--ranks", "8", "--format", "text", "--out", "x"],
        &[
            "--nas", "mg", "--ranks", "8", "--class", "Q", "--format", "text", "--out", "x",
        ],
        &[
            "--nas", "cg", "--ranks", "8", "--style", "sendrecv", "--format", "text", "--out", "x",
        ],
    ] {
        let e = parse(bad).map(|_| ()).unwrap_err();
        assert_eq!(e.exit_code(), 2, "{bad:?}: {e}");
    }
    let dir = temp("nas-refused");
    let out = dir.join("t.txt");
    for (flags, says) in [
        (&["--nas", "lu"][..], "needs --ranks"),
        (&["--nas", "bt", "--ranks", "8"], "square number"),
        (&["--topology", "grid:4x4", "--ranks", "16"], "give --nas"),
    ] {
        let mut argv = flags.to_vec();
        argv.extend(["--format", "text", "--out", out.to_str().unwrap()]);
        let e = run(parse(&argv).unwrap()).unwrap_err();
        assert!(matches!(e, CliError::Input(_)), "{flags:?}");
        assert!(e.to_string().contains(says), "{flags:?}: {e}");
    }
    assert!(!out.exists());
}

#[test]
fn nas_skeleton_and_truth_are_written() {
    let dir = temp("nas");
    let out = dir.join("lu");
    let truth = dir.join("lu.truth.json");
    let args = parse(&[
        "--nas",
        "lu",
        "--ranks",
        "8",
        "--iterations",
        "2",
        "--numbering",
        "random",
        "--seed",
        "4",
        "--format",
        "dumpi",
        "--out",
        out.to_str().unwrap(),
        "--truth",
        truth.to_str().unwrap(),
    ])
    .unwrap();
    let spec = build_nas_spec(&args, NasBenchmark::Lu).unwrap();
    run(args).unwrap();
    let t: tracelogic_synth::NasTruth = serde_json::from_str(&fs::read_to_string(&truth).unwrap()).unwrap();
    assert_eq!((t.topology.as_str(), t.spec.iterations), ("grid:4x2", Some(2)));
    let files = tracelogic_formats::fs::load_paths(&[out]).unwrap();
    let back = tracelogic_formats::read_trace(files).unwrap();
    let (orig, _) = generate_nas(&spec).unwrap();
    assert_eq!(back.num_calls(), orig.num_calls());
    assert_eq!(back.num_calls(), t.calls);
    let m = tracelogic_model::match_messages(&back);
    assert_eq!(
        (m.messages.len() as u64, m.unmatched_sends, m.unmatched_recvs),
        (t.messages, 0, 0)
    );

    // BT's split and duplicated communicators, FT's and IS's all-to-alls survive every
    // format, renumbered or not.
    for (bench, format, numbering) in [
        ("bt", "dumpi", "random"),
        ("bt", "otf2", "row-major"),
        ("bt", "text", "random"),
        ("ft", "dumpi", "random"),
        ("is", "otf2", "random"),
    ] {
        let out = dir.join(format!("{bench}-{format}"));
        let ranks = if bench == "bt" { "9" } else { "8" };
        let args = parse(&[
            "--nas",
            bench,
            "--ranks",
            ranks,
            "--iterations",
            "1",
            "--numbering",
            numbering,
            "--format",
            format,
            "--out",
            out.to_str().unwrap(),
        ])
        .unwrap();
        let spec = build_nas_spec(&args, args.nas.unwrap()).unwrap();
        run(args).unwrap();
        let back = tracelogic_formats::read_trace(tracelogic_formats::fs::load_paths(&[out]).unwrap()).unwrap();
        let (orig, _) = generate_nas(&spec).unwrap();
        let what = format!("{bench} {format}");
        assert_eq!(back.num_calls(), orig.num_calls(), "{what}");
        let collectives = |t: &tracelogic_model::Trace| t.ranks.iter().map(|r| r.collectives.len()).sum::<usize>();
        assert_eq!(collectives(&back), collectives(&orig), "{what}");
        let (m, o) = (
            tracelogic_model::match_messages(&back),
            tracelogic_model::match_messages(&orig),
        );
        assert_eq!((m.unmatched_sends, m.unmatched_recvs), (0, 0), "{what}");
        assert_eq!(m.messages.len(), o.messages.len(), "{what}");
    }
}

#[test]
fn every_format_is_written_and_reads_back() {
    let dir = temp("formats");
    for (format, out) in [("text", "t.txt"), ("dumpi", "d"), ("otf2", "o")] {
        let out = dir.join(out);
        let args = parse(&[
            "--topology",
            "stencil6:4x4",
            "--iterations",
            "2",
            "--collective",
            "barrier:1",
            "--format",
            format,
            "--out",
            out.to_str().unwrap(),
        ])
        .unwrap();
        let spec = build_spec(&args).unwrap();
        run(args).unwrap();
        let files = tracelogic_formats::fs::load_paths(&[out]).unwrap();
        let back = tracelogic_formats::read_trace(files).unwrap();
        let (orig, _) = generate_with_truth(&spec).unwrap();
        assert_eq!(back.format, format);
        assert_eq!(back.num_calls(), orig.num_calls(), "{format}");
        let m = tracelogic_model::match_messages(&back);
        assert_eq!(
            (m.messages.len(), m.unmatched_sends, m.unmatched_recvs),
            (16 * 6 * 2, 0, 0),
            "{format}"
        );
    }
    let e = run(parse(&[
        "--topology",
        "ring:4",
        "--format",
        "dumpi",
        "--out",
        dir.join("t.txt").to_str().unwrap(),
    ])
    .unwrap())
    .unwrap_err();
    assert!(e.to_string().contains("is a file"), "{e}");
}
