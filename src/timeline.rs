//! `tracelogic timeline`: the timeline tile of a window (what the web page's timeline view
//! draws): per lane and pixel column the dominant MPI function and busy share, the calls at
//! least a column wide, messages and collectives.

use crate::common::{emit, load_trace, print_json, set_stage, working, CliError, CliResult};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;
use tracelogic_engine::rank_order::{OrderBy, RankOrderRequest};
use tracelogic_engine::timeline::{Clock, Colour, GroupSource, TimelineQuery};
use tracelogic_engine::{Engine, FieldWords};
use tracelogic_model::query::{parse_ranks, parse_time};
use tracelogic_model::{Rank, Selection};

/// Arguments of `tracelogic timeline`.
#[derive(clap::Args)]
pub struct Args {
    /// Trace files, folders or archives (together one trace).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Window start since the trace's first event (`1.5s`, `200ms`); with `--logical`, a step.
    #[arg(long, value_parser = parse_time)]
    pub from: Option<u64>,
    /// Window end (exclusive); default: the end of the run.
    #[arg(long, value_parser = parse_time)]
    pub to: Option<u64>,
    /// Only these ranks (`3`, `0-3,7`), by number; default: all.
    #[arg(long, value_parser = ranks_list)]
    pub ranks: Option<RankOrder>,
    /// Order of the lanes: `number`, `topology` (the node each rank plays in the identified
    /// topology) or `phase:K` (by when each rank enters phase K of `tracelogic phases` on the
    /// `--select-*` selection at `--strength`, earliest first); default: as `--ranks` lists them.
    #[arg(long, value_parser = OrderBy::parse)]
    pub order: Option<OrderBy>,
    /// Pixel columns.
    #[arg(long, default_value_t = 100)]
    pub pixels: u32,
    /// Most lanes: with more ranks, consecutive ranks share a lane (0: one lane per rank).
    #[arg(long, default_value_t = 0)]
    pub rows: u32,
    /// Logical time (happens-before steps) instead of time.
    #[arg(long)]
    pub logical: bool,
    /// What a column's letter stands for: `function` (MPI function), `pattern` (the
    /// communication pattern of the occurrence the calls are in) or `phase` (the execution
    /// phase); the JSON then carries `group` per column and `group`/`occurrence` per call.
    #[arg(long, default_value = "function", value_parser = colour)]
    pub colour: Colour,
    /// With `--colour pattern|phase`: find the patterns and phases on the selection of
    /// `--select-*` and phases at strength `--strength`, as `tracelogic patterns` and
    /// `tracelogic phases` with `--ranks`, `--from`, `--to` and `--strength` (the page's
    /// selection and Phases slider); calls outside the selection belong to none.
    #[arg(long, default_value_t = 0.0)]
    pub strength: f64,
    /// Only these ranks for the pattern or phase colouring (`0-3,7`).
    #[arg(long, value_parser = ranks_list)]
    pub select_ranks: Option<RankOrder>,
    /// The pattern or phase colouring's selection starts here (since the first event).
    #[arg(long, value_parser = parse_time)]
    pub select_from: Option<u64>,
    /// ... and ends here (exclusive).
    #[arg(long, value_parser = parse_time)]
    pub select_to: Option<u64>,
    /// List at most this many calls, messages and collectives each.
    #[arg(long, default_value_t = 2000)]
    pub limit: u32,
    /// Print the tile as JSON (schema in docs/timeline.md).
    #[arg(long)]
    pub json: bool,
}

/// A parsed `--ranks` list, in the order given.
#[derive(Debug, Clone)]
pub struct RankOrder(pub Vec<Rank>);

fn colour(text: &str) -> Result<Colour, String> {
    match text {
        "function" => Ok(Colour::Function),
        "pattern" => Ok(Colour::Pattern),
        "phase" => Ok(Colour::Phase),
        _ => Err(format!("`{text}` is not function, pattern or phase")),
    }
}

fn ranks_list(text: &str) -> Result<RankOrder, String> {
    parse_ranks(text).map(RankOrder)
}

/// Run `tracelogic timeline`.
pub fn run(args: Args) -> CliResult {
    let trace = load_trace(&args.paths)?;
    let engine = Engine::new(trace, FieldWords::Flags);
    let mut query = TimelineQuery {
        clock: if args.logical { Clock::Logical } else { Clock::Time },
        colour: args.colour,
        source: GroupSource {
            selection: Selection {
                ranks: args.select_ranks.map(|r| r.0),
                from: args.select_from,
                to: args.select_to,
                ..Selection::default()
            },
            strength: args.strength,
        },
        from: args.from.unwrap_or(0),
        to: args.to,
        ranks: args.ranks.map(|r| r.0).unwrap_or_default(),
        pixels: args.pixels,
        rows: args.rows,
        max_calls: args.limit,
        max_messages: args.limit,
        max_collectives: args.limit,
    };
    if !args.strength.is_finite() {
        return Err(CliError::Input(format!(
            "--strength must be a number, got {}",
            args.strength
        )));
    }
    tracelogic_engine::phases::check_strength(args.strength)?;
    if let Some(to) = query.to {
        if to <= query.from {
            return Err(CliError::Input(format!(
                "--to ({to}) must be after --from ({})",
                query.from
            )));
        }
    }
    if query.colour != Colour::Function {
        engine.absolute(&query.source.selection).map_err(|e| {
            CliError::Input(format!(
                "the colouring's selection (--select-ranks, --select-from, --select-to): {e}"
            ))
        })?;
    }
    let mut order_note = None;
    if let Some(by) = args.order {
        if by != OrderBy::Number {
            engine.absolute(&query.source.selection).map_err(|e| {
                CliError::Input(format!(
                    "the order's selection (--select-ranks, --select-from, --select-to): {e}"
                ))
            })?;
        }
        set_stage("ordering the ranks");
        let ordering = engine.rank_order(&RankOrderRequest {
            by,
            ranks: std::mem::take(&mut query.ranks),
            selection: query.source.selection.clone(),
            strength: query.source.strength,
        })?;
        query.ranks = ordering.ranks;
        order_note = Some(ordering.note);
    }
    let t0 = Instant::now();
    // The first query builds the index (and, in logical time, the steps); the second is what
    // every later query of a shell that keeps the engine costs.
    working("building the timeline", || engine.timeline(&query))?;
    let first = t0.elapsed();
    let t1 = Instant::now();
    let tile = engine.timeline(&query)?;
    let again = t1.elapsed();
    if args.json {
        print_json(&tile)?;
    } else {
        let mut text = crate::print::timeline::text(&tile);
        if let Some(note) = order_note {
            text += &format!("lanes ordered {note}\n");
        }
        text += &format!(
            "index and first query {:.1} ms, the same query again {:.1} ms\n",
            first.as_secs_f64() * 1e3,
            again.as_secs_f64() * 1e3
        );
        emit(|out| out.write_all(text.as_bytes()))?;
    }
    Ok(ExitCode::SUCCESS)
}
