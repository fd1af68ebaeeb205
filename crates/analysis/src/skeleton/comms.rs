//! The communicators a skeleton runs its collectives on.
//!
//! A collective of the logical trace runs on the topology communicator when every rank takes
//! part in a communicator of the whole run. A collective on a smaller communicator (a process
//! grid's row, GROMACS's pairs of ranks, a split) runs on a communicator the skeleton splits
//! off once at start: its groups are the ranks sharing the collective's world root, or the ranks
//! executing the record when they are exactly as many as the communicator has. A group the
//! logical trace does not name (a root-less collective on a smaller communicator run by more
//! ranks than it has, or a record of some ranks only on a communicator of the whole run) runs
//! on each rank alone (`MPI_COMM_SELF`): the rank still makes its call with its sizes, and no
//! rank waits for a partner that does not come — a skeleton must not hang where the trace
//! cannot say who the partners were.
//!
//! Cost: O(ranks) per collective record of the compressed program.

use crate::logical::{Collective, LogicalCall, LogicalTrace};
use std::fmt::Write as _;
use tracelogic_model::Rank;

/// Where one collective record runs.
pub(super) enum Placement {
    /// The topology communicator (every rank, the run's whole communicator).
    Topo,
    /// Split communicator `index` of [`Subcomms`]; `root` is the C expression of the root's
    /// rank there (a constant or a per-rank table).
    Split { index: usize, root: String, size: u32 },
    /// Each rank alone: the group is not named by the logical trace.
    Alone { why: &'static str },
}

/// The split communicators of one skeleton: per communicator the colour of each node (-1: not
/// in it), deduplicated.
#[derive(Default)]
pub(super) struct Subcomms {
    colours: Vec<Vec<i64>>,
    root_tables: usize,
}

impl Subcomms {
    /// Where `call` (a collective record of `logical`) runs; root tables it needs go to `tables`.
    pub(super) fn place(
        &mut self,
        call: &LogicalCall,
        col: &Collective,
        logical: &LogicalTrace,
        tables: &mut String,
    ) -> Placement {
        let nodes = &logical.placement.node_of_rank;
        let n = nodes.len();
        let running: Vec<Rank> = (0..n as Rank).filter(|&r| call.runs_on(r)).collect();
        let k = col.comm_size as usize;
        if k >= n && running.len() == n {
            return Placement::Topo;
        }
        if k <= 1 {
            return Placement::Alone {
                why: "a communicator of one rank",
            };
        }
        let world_root = |r: Rank| {
            col.root_by_rank
                .iter()
                .find(|g| g.ranks.binary_search(&r).is_ok())
                .map(|g| g.root)
                .or(col.root)
        };
        // Groups: by world root for rooted collectives, else the executing ranks as one group.
        let mut groups: Vec<(Option<Rank>, Vec<u32>)> = Vec::new();
        for &r in &running {
            let key = if col.root.is_some() { world_root(r) } else { None };
            let node = nodes[r as usize];
            match groups.iter_mut().find(|g| g.0 == key) {
                Some(g) => g.1.push(node),
                None => groups.push((key, vec![node])),
            }
        }
        let named = groups
            .iter()
            .all(|(root, members)| members.len() == k && root.is_none_or(|w| members.contains(&nodes[w as usize])));
        if !named {
            return Placement::Alone {
                why: if k >= n {
                    "a collective of the whole run that only some ranks' records hold"
                } else {
                    "a communicator whose members the logical trace does not name"
                },
            };
        }
        let mut colour = vec![-1i64; n];
        let mut root_at = vec![0usize; n];
        for (g, (root, members)) in groups.iter_mut().enumerate() {
            members.sort_unstable();
            let at = root.map_or(0, |w| members.binary_search(&nodes[w as usize]).unwrap_or(0));
            for &u in members.iter() {
                colour[u as usize] = g as i64;
                root_at[u as usize] = at;
            }
        }
        let index = match self.colours.iter().position(|c| *c == colour) {
            Some(i) => i,
            None => {
                self.colours.push(colour);
                self.colours.len() - 1
            }
        };
        let root = if root_at.iter().all(|&a| a == root_at[0]) {
            root_at[0].to_string()
        } else {
            let name = format!("subroot{}", self.root_tables);
            self.root_tables += 1;
            super::node_table(tables, "int", &name, &root_at, 32);
            format!("{name}[me]")
        };
        Placement::Split {
            index,
            root,
            size: k as u32,
        }
    }

    /// C declarations of the split communicators (after the tables).
    pub(super) fn declarations(&self) -> String {
        let mut c = String::new();
        if self.colours.is_empty() {
            return c;
        }
        let _ = writeln!(c, "#define NSUB {}", self.colours.len());
        c.push_str("/* The colour of each rank in the split communicators (-1: not a member). */\n");
        c.push_str("static const int colour[NSUB][NRANKS] = {\n");
        for row in &self.colours {
            let cells: Vec<String> = row.iter().map(|x| x.to_string()).collect();
            let _ = writeln!(c, "    {{{}}},", cells.join(", "));
        }
        c.push_str("};\nstatic MPI_Comm sub[NSUB];\n");
        c
    }

    /// C statements creating them (after the topology communicator) and freeing them.
    pub(super) fn create_and_free(&self) -> (String, String) {
        if self.colours.is_empty() {
            return (String::new(), String::new());
        }
        (
            "    for (int k = 0; k < NSUB; k++)\n        MPI_Comm_split(topo, colour[k][me] < 0 ? MPI_UNDEFINED : colour[k][me], me, &sub[k]);\n".into(),
            "    for (int k = 0; k < NSUB; k++)\n        if (sub[k] != MPI_COMM_NULL) MPI_Comm_free(&sub[k]);\n".into(),
        )
    }
}
