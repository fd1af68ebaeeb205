//! `topology` by parts: identified from the gathered matrix rows; of the whole run the ranks are
//! then placed by their first contacts by parts (keys, first contacts and agreements exchanged).

use super::*;

/// `topology`. Each process builds its ranks' matrix rows, rank 0 gathers them and identifies
/// the topology. Of the whole run the serial CLI also places the ranks by their first contacts
/// and compares the declared Cartesian topologies: rank 0's report goes to every process, which
/// place the ranks together ([`Contacts`]: content keys and first contacts all-gathered, the
/// reference rank's operations broadcast, agreements summed), and rank 0 compares the declared
/// topologies (definitions, which every process holds). No event is gathered. A graph or CSV
/// matrix file is no trace: rank 0 alone reads it.
pub(super) fn topology(world: &SimpleCommunicator, args: topology::Args) -> CliResult {
    if args.graph.is_some() || args.matrix.is_some() {
        return if world.rank() == 0 {
            topology::run(args)
        } else {
            Ok(ExitCode::SUCCESS)
        };
    }
    let opts = topology::options(&args)?;
    let partial = read(world, &args.paths)?;
    let PartialTrace { trace, owned, blocks } = partial;
    let (engine, selection) = args.selection.engine(trace)?;
    warn(world, engine.trace());
    if world.rank() == 0 {
        if let Some(why) = engine.past_the_end(&selection) {
            eprintln!(
                "tracelogic: note: the selection keeps no MPI call of {} ({why})",
                engine.trace().source
            );
        }
    }
    let absolute = engine.absolute(&selection)?;
    set_stage("building the communication matrix");
    let mine = tracelogic_analysis::matrix::CommMatrix::from_trace(engine.trace(), &absolute);
    let rows = tracelogic_mpi::merge::encode_rows(&mine, owned.clone());
    drop(mine);
    let whole = absolute == Selection::all();
    let gathered = gather_to_root(world, &rows);
    drop(rows);
    let report = gathered.map(|parts| {
        let matrix = tracelogic_mpi::merge::matrix_of_rows(engine.trace().num_ranks(), &parts)
            .expect("the processes' rows make one matrix");
        set_stage("identifying the topology");
        tracelogic_engine::topology::of_trace_matrix(engine.trace(), &matrix, &opts)
    });
    if !whole {
        return match report {
            Some(report) => topology::finish(&args, report),
            None => Ok(ExitCode::SUCCESS),
        };
    }
    // The whole run: placed by the ranks' first contacts as the serial CLI places it, each
    // process reading its ranks (content keys, first contacts, agreements exchanged), then the
    // declared Cartesian topologies compared on rank 0 (they are definitions every process has).
    set_stage("placing the ranks by their first contacts");
    let mut report = broadcast_report(world, report);
    let trace = engine.trace();
    let mut contacts = Contacts {
        world,
        local: tracelogic_analysis::logical::LocalContacts::new(trace, owned),
        blocks: &blocks,
        ranks: trace.num_ranks(),
        total: None,
    };
    tracelogic_analysis::logical::place_by_first_contacts_from(&mut contacts, &mut report);
    if world.rank() != 0 {
        return Ok(ExitCode::SUCCESS);
    }
    tracelogic_analysis::topology::declared::attach(trace, &mut report);
    topology::finish(&args, report)
}

/// Rank 0's topology report on every process (as JSON: the report's own serialisation).
fn broadcast_report(world: &SimpleCommunicator, report: Option<TopologyReport>) -> TopologyReport {
    let mine = report
        .as_ref()
        .map(|r| serde_json::to_vec(r).expect("a report serialises"))
        .unwrap_or_default();
    let bytes = broadcast_bytes(world, 0, mine);
    match report {
        Some(r) => r,
        None => serde_json::from_slice(&bytes).expect("the report deserialises"),
    }
}

/// The ranks' content keys, first contacts and agreements with a placement, each process
/// reading its ranks and the results exchanged, in the same calls on every process.
struct Contacts<'a> {
    world: &'a SimpleCommunicator,
    local: tracelogic_analysis::logical::LocalContacts<'a>,
    blocks: &'a [Range<Rank>],
    ranks: Rank,
    total: Option<u64>,
}

impl ContactSource for Contacts<'_> {
    fn num_ranks(&self) -> Rank {
        self.ranks
    }

    fn keys(&mut self) -> Vec<ContentKey> {
        let mine: Vec<(u64, u64, u64)> = self
            .local
            .keys()
            .iter()
            .map(|k| (k.0 .0 as u64, k.1 .0 as u64, k.2))
            .collect();
        let mine = bincode::serialize(&mine).expect("keys serialise");
        World(self.world)
            .all_gather(&mine)
            .iter()
            .flat_map(|b| bincode::deserialize::<Vec<(u64, u64, u64)>>(b).expect("keys deserialise"))
            .map(|(a, b, c)| (Reverse(a as usize), Reverse(b as usize), c))
            .collect()
    }

    fn first_contacts(&mut self, adjacency: &[Vec<Rank>], sends_only: bool) -> Option<Vec<HashMap<Rank, u32>>> {
        let mine: Vec<Option<Vec<(Rank, u32)>>> = self
            .local
            .first_contacts(adjacency, sends_only)
            .into_iter()
            .map(|c| {
                c.map(|m| {
                    let mut v: Vec<(Rank, u32)> = m.into_iter().collect();
                    v.sort_unstable();
                    v
                })
            })
            .collect();
        let mine = bincode::serialize(&mine).expect("contacts serialise");
        World(self.world)
            .all_gather(&mine)
            .iter()
            .flat_map(|b| bincode::deserialize::<Vec<Option<Vec<(Rank, u32)>>>>(b).expect("contacts deserialise"))
            .map(|c| c.map(|v| v.into_iter().collect::<HashMap<Rank, u32>>()))
            .collect()
    }

    fn agreement(&mut self, placement: &Placement, keys: &[ContentKey]) -> (Agreement, u64) {
        let total = match self.total {
            Some(t) => t,
            None => *self.total.insert(sum(self.world, self.local.total())),
        };
        let Some(scoring) = Scoring::new(placement, keys) else {
            return (Agreement::default(), total);
        };
        let reference = scoring.reference();
        let owner = self
            .blocks
            .iter()
            .position(|b| b.contains(&reference))
            .expect("every rank is in a block");
        let mine = if self.world.rank() as usize == owner {
            bincode::serialize(&self.local.steps(&scoring, reference)).expect("steps serialise")
        } else {
            Vec::new()
        };
        let bytes = broadcast_bytes(self.world, owner, mine);
        let steps: Vec<Step> = bincode::deserialize(&bytes).expect("steps deserialise");
        let agreed = self.local.agreed(&scoring, &steps);
        let agreed = Agreement {
            moves: sum(self.world, agreed.moves),
            sized: sum(self.world, agreed.sized),
        };
        (agreed, total)
    }
}
