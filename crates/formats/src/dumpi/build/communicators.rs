//! Communicators by how they were derived (parent, creation call, split colour), which every
//! member rank agrees on without knowing the members; group expressions; their memberships
//! evaluated once every rank is read; Cartesian sub-communicators.

use super::*;

/// How a communicator was derived; identical on every member rank.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "distributed", derive(serde::Serialize, serde::Deserialize))]
pub(super) enum Derivation {
    World,
    SelfOf(Rank),
    /// The `seq`-th creation call on `parent` (counted per rank, collective so equal on all).
    Derived {
        parent: u32,
        seq: u32,
        how: How,
    },
    /// A handle the trace uses without a recorded creation call.
    Unknown {
        rank: Rank,
        handle: u16,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "distributed",
    derive(serde::Serialize, serde::Deserialize),
    serde(from = "HowWire", into = "HowWire")
)]
pub(super) enum How {
    Dup,
    Split(i32),
    Create,
    Cart,
    Graph,
    /// `MPI_Cart_sub` as seen by this world rank: each rank can compute its own sub-grid from
    /// the parent grid's dimensions, so the derivation is per rank and merged afterwards.
    CartSub(Rank),
    /// A creation whose membership DUMPI does not record (inter-communicators, spawn...).
    Untracked(#[cfg_attr(feature = "distributed", serde(skip))] &'static str),
}

/// [`How`] as a distributed read exchanges it: the name of an untracked creation owned.
#[cfg(feature = "distributed")]
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) enum HowWire {
    Dup,
    Split(i32),
    Create,
    Cart,
    Graph,
    CartSub(Rank),
    Untracked(String),
}

#[cfg(feature = "distributed")]
impl From<How> for HowWire {
    fn from(h: How) -> HowWire {
        match h {
            How::Dup => HowWire::Dup,
            How::Split(c) => HowWire::Split(c),
            How::Create => HowWire::Create,
            How::Cart => HowWire::Cart,
            How::Graph => HowWire::Graph,
            How::CartSub(r) => HowWire::CartSub(r),
            How::Untracked(n) => HowWire::Untracked(n.to_owned()),
        }
    }
}

#[cfg(feature = "distributed")]
impl From<HowWire> for How {
    fn from(h: HowWire) -> How {
        match h {
            HowWire::Dup => How::Dup,
            HowWire::Split(c) => How::Split(c),
            HowWire::Create => How::Create,
            HowWire::Cart => How::Cart,
            HowWire::Graph => How::Graph,
            HowWire::CartSub(r) => How::CartSub(r),
            // A handful per trace: leaked rather than kept by reference to the function table.
            HowWire::Untracked(n) => How::Untracked(Box::leak(n.into_boxed_str())),
        }
    }
}

/// A group, kept as the expression that built it so it can be evaluated once memberships are known.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "distributed", derive(serde::Serialize, serde::Deserialize))]
pub(super) enum GroupExpr {
    Empty,
    OfComm(u32),
    Incl(Box<GroupExpr>, Vec<i32>),
    Excl(Box<GroupExpr>, Vec<i32>),
    RangeIncl(Box<GroupExpr>, Vec<Vec<i32>>),
    RangeExcl(Box<GroupExpr>, Vec<Vec<i32>>),
    Union(Box<GroupExpr>, Box<GroupExpr>),
    Intersection(Box<GroupExpr>, Box<GroupExpr>),
    Difference(Box<GroupExpr>, Box<GroupExpr>),
    Unknown,
}

impl GroupExpr {
    /// Number of nodes, to keep hostile chains of group calls small.
    pub(super) fn nodes(&self) -> usize {
        match self {
            GroupExpr::Empty | GroupExpr::OfComm(_) | GroupExpr::Unknown => 1,
            GroupExpr::Incl(b, _) | GroupExpr::Excl(b, _) | GroupExpr::RangeIncl(b, _) | GroupExpr::RangeExcl(b, _) => {
                1 + b.nodes()
            }
            GroupExpr::Union(a, b) | GroupExpr::Intersection(a, b) | GroupExpr::Difference(a, b) => {
                1 + a.nodes() + b.nodes()
            }
        }
    }

    /// The same expression with communicator derivation `c` renamed `comms[c]`.
    pub(super) fn renumbered(&self, comms: &[u32]) -> GroupExpr {
        let sub = |b: &GroupExpr| Box::new(b.renumbered(comms));
        match self {
            GroupExpr::Empty => GroupExpr::Empty,
            GroupExpr::Unknown => GroupExpr::Unknown,
            GroupExpr::OfComm(c) => GroupExpr::OfComm(comms[*c as usize]),
            GroupExpr::Incl(b, v) => GroupExpr::Incl(sub(b), v.clone()),
            GroupExpr::Excl(b, v) => GroupExpr::Excl(sub(b), v.clone()),
            GroupExpr::RangeIncl(b, v) => GroupExpr::RangeIncl(sub(b), v.clone()),
            GroupExpr::RangeExcl(b, v) => GroupExpr::RangeExcl(sub(b), v.clone()),
            GroupExpr::Union(a, b) => GroupExpr::Union(sub(a), sub(b)),
            GroupExpr::Intersection(a, b) => GroupExpr::Intersection(sub(a), sub(b)),
            GroupExpr::Difference(a, b) => GroupExpr::Difference(sub(a), sub(b)),
        }
    }
}

#[derive(Debug, Default)]
#[cfg_attr(feature = "distributed", derive(serde::Serialize, serde::Deserialize))]
pub(super) struct CommInfo {
    /// Split contributions: (key, world rank).
    pub(super) split: Vec<(i32, Rank)>,
    /// Group of a `Comm_create`.
    pub(super) group: Option<GroupExpr>,
    /// Number of members of a `Cart_create` / `Graph_create` (first n of the parent).
    pub(super) size: Option<usize>,
    /// Grid dimensions of a `Cart_create`.
    pub(super) cart_dims: Option<Vec<i32>>,
    /// Which dimensions of a `Cart_create` wrap around.
    pub(super) cart_periods: Option<Vec<i32>>,
    /// Which grid dimensions a `Cart_sub` keeps.
    pub(super) remain_dims: Option<Vec<i32>>,
    pub(super) members: Option<Vec<Rank>>,
}

/// Communicators by derivation, each with what its creation calls recorded, in first-use order.
#[derive(Debug, Default)]
#[cfg_attr(feature = "distributed", derive(serde::Serialize, serde::Deserialize))]
pub(super) struct Derivations {
    pub(super) list: Vec<Derivation>,
    pub(super) ids: HashMap<Derivation, u32>,
    pub(super) infos: Vec<CommInfo>,
}

impl Derivations {
    pub(super) fn intern(&mut self, d: Derivation) -> u32 {
        if let Some(&i) = self.ids.get(&d) {
            return i;
        }
        let i = self.list.len() as u32;
        self.list.push(d.clone());
        self.ids.insert(d, i);
        self.infos.push(CommInfo::default());
        i
    }
}

impl RankReader {
    #[inline(always)]
    pub(super) fn comm(&mut self, handle: u16) -> u32 {
        let st = &mut self.st;
        if let Some((h, c)) = st.last_comm {
            if h == handle {
                return c;
            }
        }
        if let Some(&c) = st.comms.get(&handle) {
            st.last_comm = Some((handle, c));
            return c;
        }
        let d = match handle {
            COMM_WORLD => Derivation::World,
            COMM_SELF => Derivation::SelfOf(self.rank),
            _ => Derivation::Unknown {
                rank: self.rank,
                handle,
            },
        };
        let c = self.comms.intern(d);
        self.st.comms.insert(handle, c);
        c
    }

    /// Register the creation of `newcomm` from `oldcomm` on this rank.
    pub(super) fn derive(&mut self, oldcomm: u16, newcomm: u16, how: How) -> Option<u32> {
        let parent = self.comm(oldcomm);
        let seq_ref = self.st.seq.entry(parent).or_default();
        let seq = *seq_ref;
        *seq_ref += 1;
        if newcomm <= COMM_NULL {
            return None;
        }
        let c = self.comms.intern(Derivation::Derived { parent, seq, how });
        self.st.comms.insert(newcomm, c);
        self.st.last_comm = None;
        Some(c)
    }

    pub(super) fn set_group(&mut self, handle: u16, e: GroupExpr) {
        let e = if e.nodes() > MAX_GROUP_NODES {
            self.warn(format!(
                "rank {}: group built from too many group calls; treated as unknown",
                self.rank
            ));
            GroupExpr::Unknown
        } else {
            e
        };
        self.st.groups.insert(handle, e);
    }

    pub(super) fn group(&self, handle: u16) -> GroupExpr {
        if handle == GROUP_EMPTY {
            return GroupExpr::Empty;
        }
        self.st.groups.get(&handle).cloned().unwrap_or(GroupExpr::Unknown)
    }
}

impl Builder {
    /// Evaluate a group to world ranks, given the members of communicators resolved so far.
    pub(super) fn eval(&self, g: &GroupExpr) -> Option<Vec<Rank>> {
        let pick = |base: &[Rank], idx: &[i32]| -> Option<Vec<Rank>> {
            idx.iter()
                .map(|&i| base.get(usize::try_from(i).ok()?).copied())
                .collect()
        };
        let ranges = |base: &[Rank], rows: &[Vec<i32>]| -> Option<Vec<usize>> {
            let mut out = Vec::new();
            for row in rows {
                let [first, last, stride] = row[..] else { return None };
                if stride == 0 {
                    return None;
                }
                let mut i = first as i64;
                while (stride > 0 && i <= last as i64) || (stride < 0 && i >= last as i64) {
                    if i < 0 || i as usize >= base.len() || out.len() > base.len() {
                        return None;
                    }
                    out.push(i as usize);
                    i += stride as i64;
                }
            }
            Some(out)
        };
        Some(match g {
            GroupExpr::Empty => Vec::new(),
            GroupExpr::OfComm(c) => self.comms.infos[*c as usize].members.clone()?,
            GroupExpr::Incl(b, idx) => pick(&self.eval(b)?, idx)?,
            GroupExpr::Excl(b, idx) => {
                let base = self.eval(b)?;
                base.iter()
                    .enumerate()
                    .filter(|(i, _)| !idx.contains(&(*i as i32)))
                    .map(|(_, &m)| m)
                    .collect()
            }
            GroupExpr::RangeIncl(b, rows) => {
                let base = self.eval(b)?;
                ranges(&base, rows)?.into_iter().map(|i| base[i]).collect()
            }
            GroupExpr::RangeExcl(b, rows) => {
                let base = self.eval(b)?;
                let drop = ranges(&base, rows)?;
                base.iter()
                    .enumerate()
                    .filter(|(i, _)| !drop.contains(i))
                    .map(|(_, &m)| m)
                    .collect()
            }
            GroupExpr::Union(a, b) => {
                let mut a = self.eval(a)?;
                for m in self.eval(b)? {
                    if !a.contains(&m) {
                        a.push(m);
                    }
                }
                a
            }
            GroupExpr::Intersection(a, b) => {
                let b = self.eval(b)?;
                self.eval(a)?.into_iter().filter(|m| b.contains(m)).collect()
            }
            GroupExpr::Difference(a, b) => {
                let b = self.eval(b)?;
                self.eval(a)?.into_iter().filter(|m| !b.contains(m)).collect()
            }
            GroupExpr::Unknown => return None,
        })
    }
}

/// Members of the sub-grid of world rank `me` when `MPI_Cart_sub` keeps the dimensions flagged
/// in `remain` of a grid with `dims` over `parent` (row-major ranks, no reordering): the grid
/// ranks whose coordinates agree with `me`'s in every dropped dimension, in grid-rank order.
pub(super) fn cart_sub_members(parent: &[Rank], dims: &[i32], remain: &[i32], me: Rank) -> Option<Vec<Rank>> {
    if dims.is_empty() || dims.len() != remain.len() || dims.iter().any(|&d| d <= 0) {
        return None;
    }
    let size = dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d as usize))?;
    if size > parent.len() {
        return None;
    }
    let coords = |mut l: usize| -> Vec<usize> {
        let mut c = vec![0; dims.len()];
        for i in (0..dims.len()).rev() {
            c[i] = l % dims[i] as usize;
            l /= dims[i] as usize;
        }
        c
    };
    let mine = coords(parent[..size].iter().position(|&m| m == me)?);
    let dropped = |c: &[usize]| -> Vec<usize> { (0..dims.len()).filter(|&i| remain[i] == 0).map(|i| c[i]).collect() };
    let key = dropped(&mine);
    Some(
        (0..size)
            .filter(|&l| dropped(&coords(l)) == key)
            .map(|l| parent[l])
            .collect(),
    )
}
