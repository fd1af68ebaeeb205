//! Where a compressed program's length goes (records outside loops, per loop, per branch, per
//! offset direction), to compare with Logicalization Table 1.

use super::*;

/// Where a program's compressed length goes, to compare it with Logicalization Table 1 and say
/// what the extra records are ([`Program::breakdown`]). Lengths count call records and loop
/// headers, as [`Program::compressed_length`] does.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LengthBreakdown {
    /// Call records outside every loop (set-up, verification, final reductions).
    pub outside_loops: usize,
    /// Each top-level loop with its length (header included), in program order.
    pub loops: Vec<LoopLength>,
    /// Call records executed by some ranks only ([`LogicalCall::only_ranks`]: a class-specific
    /// branch or block), per set of ranks, most records first; anywhere in the program.
    pub branches: Vec<BranchLength>,
    /// Call records with an operation in an offset direction (a peer outside the topology), per
    /// direction; anywhere in the program.
    pub offsets: Vec<DirectionLength>,
}

/// A top-level loop of [`LengthBreakdown`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopLength {
    /// The loop's node id.
    pub id: u32,
    /// Its iterations per visit.
    pub count: Values,
    /// Call records and loop headers, its own header included.
    pub length: usize,
    /// Of those, call records executed by some ranks only.
    pub branch_records: usize,
}

/// Call records executed by one set of ranks only ([`LengthBreakdown::branches`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BranchLength {
    /// The ranks, increasing.
    pub ranks: Vec<Rank>,
    /// Call records.
    pub records: usize,
}

/// Call records using one offset direction ([`LengthBreakdown::offsets`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirectionLength {
    /// The direction's name.
    pub direction: String,
    /// Call records.
    pub records: usize,
}

impl Program {
    /// Where the compressed length goes; `offsets` names the offset directions
    /// ([`crate::logical::LogicalTrace::offset_directions`]).
    pub fn breakdown(&self, offsets: &[String]) -> LengthBreakdown {
        fn walk(nodes: &[Node], offsets: &[String], branches: &mut Vec<BranchLength>, dirs: &mut [usize]) -> usize {
            let mut only = 0;
            for n in nodes {
                match n {
                    Node::Call { shape, .. } => {
                        if let Some(rs) = &shape.only_ranks {
                            only += 1;
                            match branches.iter_mut().find(|b| &b.ranks == rs) {
                                Some(b) => b.records += 1,
                                None => branches.push(BranchLength {
                                    ranks: rs.clone(),
                                    records: 1,
                                }),
                            }
                        }
                        for (k, d) in offsets.iter().enumerate() {
                            if shape
                                .ops
                                .iter()
                                .any(|o| matches!(&o.partner, crate::logical::Partner::Direction(x) if x == d))
                            {
                                dirs[k] += 1;
                            }
                        }
                    }
                    Node::Loop { body, .. } => only += walk(body, offsets, branches, dirs),
                }
            }
            only
        }
        let mut b = LengthBreakdown::default();
        let mut dirs = vec![0usize; offsets.len()];
        for n in &self.nodes {
            match n {
                Node::Call { .. } => {
                    b.outside_loops += 1;
                    walk(std::slice::from_ref(n), offsets, &mut b.branches, &mut dirs);
                }
                Node::Loop { id, count, body } => {
                    let branch_records = walk(body, offsets, &mut b.branches, &mut dirs);
                    b.loops.push(LoopLength {
                        id: *id,
                        count: count.clone(),
                        length: 1 + count_nodes(body),
                        branch_records,
                    });
                }
            }
        }
        b.branches
            .sort_by(|x, y| y.records.cmp(&x.records).then_with(|| x.ranks.cmp(&y.ranks)));
        b.offsets = offsets
            .iter()
            .zip(dirs)
            .filter(|(_, n)| *n > 0)
            .map(|(d, records)| DirectionLength {
                direction: d.clone(),
                records,
            })
            .collect();
        b
    }
}

/// Most loops, and most rank sets of branch records, [`LengthBreakdown::text`] lists; the rest
/// are counted (`... and 3688 more`). The JSON keeps them all.
const TEXT_ITEMS: usize = 20;

/// Append `... and N more` to `shown` when it holds fewer than `total` items.
fn more(shown: &mut Vec<String>, total: usize) {
    if total > shown.len() {
        let rest = total - shown.len();
        shown.push(format!("... and {rest} more"));
    }
}

impl LengthBreakdown {
    /// One line: `outside loops 12; loops 44 (x61), 13 (x2); branches 4 on ranks 0,3; offsets
    /// (+2,0,0) 12`.
    pub fn text(&self) -> String {
        let mut loops: Vec<String> = self
            .loops
            .iter()
            .take(TEXT_ITEMS)
            .map(|l| {
                let only = if l.branch_records > 0 {
                    format!(", {} branch", l.branch_records)
                } else {
                    String::new()
                };
                format!("{} (x{}{only})", l.length, l.count.text())
            })
            .collect();
        more(&mut loops, self.loops.len());
        let mut s = format!(
            "{} outside loops; {} top-level loop{}{}{}",
            self.outside_loops,
            self.loops.len(),
            if self.loops.len() == 1 { "" } else { "s" },
            if loops.is_empty() { "" } else { ": " },
            loops.join(", ")
        );
        if !self.branches.is_empty() {
            let mut parts: Vec<String> = self
                .branches
                .iter()
                .take(TEXT_ITEMS)
                .map(|b| {
                    let rs: Vec<String> = b.ranks.iter().map(|r| r.to_string()).collect();
                    format!("{} on ranks {}", b.records, rs.join(","))
                })
                .collect();
            more(&mut parts, self.branches.len());
            s.push_str(&format!("; records of some ranks only: {}", parts.join("; ")));
        }
        if !self.offsets.is_empty() {
            let parts: Vec<String> = self
                .offsets
                .iter()
                .map(|d| format!("{} {}", d.direction, d.records))
                .collect();
            s.push_str(&format!("; records with offset directions: {}", parts.join(", ")));
        }
        s
    }
}
