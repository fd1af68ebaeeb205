//! Each rank's events as symbols: sends, receives and collectives in call order, with or
//! without their envelope (see the module documentation of [`super`]).

use super::*;

/// What one event of a rank is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum EventRef {
    /// Index into the rank's `P2p`.
    P2p(u32),
    /// Index into the rank's `Collectives`.
    Collective(u32),
}

/// The event sequence of one rank.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RankEvents {
    /// World rank.
    pub rank: Rank,
    /// Interned symbol of each event (index into [`Events::names`]).
    pub symbols: Vec<u32>,
    /// The operation behind each event.
    pub events: Vec<EventRef>,
    /// The call that posted each event.
    pub calls: Vec<CallIdx>,
    /// The symbols of this rank's collective events, sorted and without repeats (for binary
    /// search); made once with the symbols, as several loop analyses ask for them per rank
    /// (required when decoding: an empty default would silently mean "no collectives").
    pub collectives: Vec<u32>,
}

impl RankEvents {
    /// The symbols of this rank's collective events, sorted and without repeats (for binary
    /// search). O(1): made with the symbols.
    pub fn collective_symbols(&self) -> &[u32] {
        &self.collectives
    }
}

/// Every rank's events with one symbol table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Events {
    /// Symbol names, indexed by symbol id.
    pub names: Vec<String>,
    /// One entry per world rank.
    pub ranks: Vec<RankEvents>,
}

impl Events {
    /// Symbol id of a name, if some event has it.
    pub fn symbol(&self, name: &str) -> Option<u32> {
        self.names.iter().position(|n| n == name).map(|i| i as u32)
    }
    /// Names of a symbol string.
    pub fn names_of(&self, symbols: &[u32]) -> Vec<String> {
        symbols.iter().map(|&s| self.names[s as usize].clone()).collect()
    }
    /// Per symbol, whether it is a barrier (`MPI_Barrier`, `MPI_Ibarrier`, as the model reads
    /// a collective's name; the envelope after `:` left aside): a stage's marker, looked up by
    /// id rather than a name compared per event. O(symbols).
    pub fn barrier_symbols(&self) -> Vec<bool> {
        self.names
            .iter()
            .map(|n| {
                let function = n.split(':').next().unwrap_or(n);
                tracelogic_model::CollectiveOp::from_name(function) == Some(tracelogic_model::CollectiveOp::Barrier)
            })
            .collect()
    }
}

/// [`SymbolKey::kind`] of a collective (0 a send, 1 a receive).
const COLLECTIVE: u8 = 2;

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct SymbolKey {
    kind: u8,
    peer: u32,
    tag: i64,
    bytes: u64,
    comm: u32,
}

/// The event symbols of every rank, interned once for the whole trace. O(events). Each rank's
/// events are read on their own (on every core natively) with symbols numbered per rank in
/// order of first appearance; the per-rank numbers are then renumbered in rank order, which
/// gives every symbol the id a single pass over the ranks in order would give it.
pub fn rank_events(trace: &Trace, with_envelope: bool) -> Events {
    let per_rank = crate::logical::per_rank::each_index(trace.ranks.len(), |r| {
        rank_events_of(trace, &trace.ranks[r], with_envelope)
    });
    let mut ids: HashMap<SymbolKey, u32> = HashMap::new();
    let mut names: Vec<String> = Vec::new();
    let mut ranks = Vec::with_capacity(trace.ranks.len());
    for (mut out, keys) in per_rank {
        let global: Vec<u32> = keys
            .iter()
            .map(|key| {
                *ids.entry(*key).or_insert_with(|| {
                    names.push(symbol_name(trace, key, with_envelope));
                    names.len() as u32 - 1
                })
            })
            .collect();
        for s in &mut out.symbols {
            *s = global[*s as usize];
        }
        out.collectives = keys
            .iter()
            .zip(&global)
            .filter(|(key, _)| key.kind == COLLECTIVE)
            .map(|(_, &g)| g)
            .collect();
        out.collectives.sort_unstable();
        ranks.push(out);
    }
    Events { names, ranks }
}

/// One rank's events with its symbols numbered in order of first appearance, and the key of
/// each number.
fn rank_events_of(
    trace: &Trace,
    rt: &tracelogic_model::RankTrace,
    with_envelope: bool,
) -> (RankEvents, Vec<SymbolKey>) {
    // Hashed once per event: foldhash, not SipHash (the ids follow first appearance either way).
    let mut ids: HashMap<SymbolKey, u32, foldhash::fast::RandomState> = HashMap::default();
    let mut keys: Vec<SymbolKey> = Vec::new();
    let (p, c) = (&rt.p2p, &rt.collectives);
    let mut out = RankEvents {
        rank: rt.rank,
        ..Default::default()
    };
    let total = p.len() + c.len();
    out.symbols.reserve_exact(total);
    out.events.reserve_exact(total);
    out.calls.reserve_exact(total);
    let (mut i, mut j) = (0usize, 0usize);
    while i < p.len() || j < c.len() {
        let take_p2p = j >= c.len() || (i < p.len() && p.post[i] <= c.call[j]);
        let (key, ev, call) = if take_p2p {
            let send = p.dir[i] == P2pDir::Send;
            let key = SymbolKey {
                kind: if send { 0 } else { 1 },
                peer: p.peer[i],
                tag: if with_envelope { p.tag[i] as i64 } else { 0 },
                bytes: if with_envelope { p.bytes.at(i) } else { 0 },
                comm: if with_envelope { p.comm[i] } else { 0 },
            };
            i += 1;
            (key, EventRef::P2p(i as u32 - 1), p.post[i - 1])
        } else {
            let key = SymbolKey {
                kind: COLLECTIVE,
                peer: if with_envelope { c.root[j] } else { 0 },
                tag: trace.ranks[rt.rank as usize].calls.func[c.call[j] as usize] as i64,
                bytes: if with_envelope { c.bytes_sent[j] } else { 0 },
                comm: if with_envelope { c.comm[j] } else { 0 },
            };
            j += 1;
            (key, EventRef::Collective(j as u32 - 1), c.call[j - 1])
        };
        let id = *ids.entry(key).or_insert_with(|| {
            keys.push(key);
            keys.len() as u32 - 1
        });
        out.symbols.push(id);
        out.events.push(ev);
        out.calls.push(call);
    }
    (out, keys)
}

pub(super) fn symbol_name(trace: &Trace, k: &SymbolKey, with_envelope: bool) -> String {
    let mut s = match k.kind {
        0 => format!("S{}", k.peer),
        1 if k.peer == ANY_SOURCE => "R*".to_owned(),
        1 => format!("R{}", k.peer),
        _ => trace.functions.name(k.tag as u32).to_owned(),
    };
    if with_envelope {
        if k.kind < 2 {
            s += &format!(":t{}:b{}", k.tag, k.bytes);
        } else {
            if k.peer != NO_ROOT {
                s += &format!(":r{}", k.peer);
            }
            s += &format!(":b{}", k.bytes);
        }
        if k.comm != COMM_WORLD {
            s += &format!(":c{}", k.comm);
        }
    }
    s
}
