//! Which rank plays which node of which topology ([`Placement`]), and the maximal ranks.

#[allow(unused_imports)]
use super::*;

/// Which rank plays which node of which topology: what a logical trace is relative to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placement {
    /// The topology (family and dimensions).
    pub spec: TopologySpec,
    /// `node_of_rank[r]`: the topology node world rank `r` plays.
    pub node_of_rank: Vec<u32>,
}

impl Placement {
    /// The placement found by topology identification, made canonical ([`Placement::canonical`])
    /// so that the logical trace does not depend on which automorphism identification returned.
    /// Fails when nothing was identified, when the match is a user pattern (it has no
    /// directions), or when the mapping is incomplete.
    pub fn from_report(report: &TopologyReport) -> Result<Placement, String> {
        let id = &report.identification;
        let Some(m) = &id.matched else {
            return Err(if report.no_point_to_point {
                "the run has no point-to-point traffic, so it has no logical trace".into()
            } else {
                "no topology was identified for this run (see `tracelogic topology`)".into()
            });
        };
        let family = Family::from_name(&m.family)
            .ok_or_else(|| format!("topology `{}` is a user pattern without directions", m.label))?;
        let spec = TopologySpec::new(family, m.dims.clone())?;
        Ok(Placement::new(
            spec,
            report.identification.ranks,
            id.mapping.iter().map(|p| (p.rank, p.node)),
        )?
        .canonical())
    }

    /// A placement from `(rank, node)` pairs; every rank of `0..ranks` must get a distinct node.
    pub fn new(
        spec: TopologySpec,
        ranks: u32,
        pairs: impl IntoIterator<Item = (Rank, u32)>,
    ) -> Result<Placement, String> {
        if spec.num_nodes() != ranks {
            return Err(format!(
                "the topology {} has {} nodes but the run has {ranks} ranks",
                spec.label(),
                spec.num_nodes()
            ));
        }
        let mut node_of_rank = vec![u32::MAX; ranks as usize];
        let mut taken = vec![false; ranks as usize];
        for (r, u) in pairs {
            if r >= ranks || u >= ranks || std::mem::replace(&mut taken[u as usize], true) {
                return Err(format!("the rank mapping is not a permutation (rank {r} → node {u})"));
            }
            node_of_rank[r as usize] = u;
        }
        if let Some(r) = node_of_rank.iter().position(|&u| u == u32::MAX) {
            return Err(format!("rank {r} has no place in the topology"));
        }
        Ok(Placement { spec, node_of_rank })
    }

    /// Rank `r` plays node `r` (row-major), as in a skeleton or a row-major generated run.
    pub fn identity(spec: TopologySpec) -> Placement {
        let n = spec.num_nodes();
        Placement {
            spec,
            node_of_rank: (0..n).collect(),
        }
    }

    /// `rank_of_node[u]`: the rank playing node `u`.
    pub fn rank_of_node(&self) -> Vec<Rank> {
        let mut out = vec![0; self.node_of_rank.len()];
        for (r, &u) in self.node_of_rank.iter().enumerate() {
            out[u as usize] = r as Rank;
        }
        out
    }

    /// The direction names of the topology, in [`TopologySpec::directions`] order.
    pub fn direction_names(&self) -> Vec<String> {
        self.spec.directions().iter().map(|d| d.name()).collect()
    }

    /// The rank in direction `name` from `rank`, if that neighbour exists. Directions of the
    /// topology only: where [`SELF_DIRECTION`] exists is a fact of the run
    /// ([`LogicalTrace::self_ranks`]), not of the placement.
    pub fn neighbour(&self, rank: Rank, name: &str) -> Option<Rank> {
        let dir = self.spec.directions().into_iter().find(|d| d.name() == name)?;
        let v = self.spec.neighbour(*self.node_of_rank.get(rank as usize)?, &dir)?;
        self.rank_of_node().get(v as usize).copied()
    }

    /// Per rank: peer rank → the first direction (in topology order) that reaches it.
    pub(super) fn direction_tables(&self) -> Vec<HashMap<Rank, String>> {
        let rank_of_node = self.rank_of_node();
        self.node_of_rank
            .iter()
            .map(|&u| {
                self.spec
                    .neighbours(u)
                    .into_iter()
                    .map(|(d, v)| (rank_of_node[v as usize], d.name()))
                    .collect()
            })
            .collect()
    }

    /// [`Placement::neighbour_tables`] with [`SELF_DIRECTION`] leading to the rank itself at
    /// `self_ranks` (the ranks that message themselves).
    pub(super) fn neighbour_tables_with_self(&self, self_ranks: &[Rank]) -> Vec<HashMap<String, Rank>> {
        let mut tables = self.neighbour_tables();
        for &r in self_ranks {
            if let Some(table) = tables.get_mut(r as usize) {
                table.insert(SELF_DIRECTION.into(), r);
            }
        }
        tables
    }

    /// Per rank: direction name → neighbour rank, for the directions that exist there.
    pub(super) fn neighbour_tables(&self) -> Vec<HashMap<String, Rank>> {
        let rank_of_node = self.rank_of_node();
        let dirs = self.spec.directions();
        self.node_of_rank
            .iter()
            .map(|&u| {
                dirs.iter()
                    .filter_map(|d| Some((d.name(), rank_of_node[self.spec.neighbour(u, d)? as usize])))
                    .collect()
            })
            .collect()
    }
}

/// Ranks that have a neighbour in every direction some rank has (candidates for the logical
/// trace on their own).
pub fn maximal_ranks(placement: &Placement) -> Vec<Rank> {
    let dirs = placement.spec.directions();
    let cov: Vec<Vec<bool>> = placement
        .node_of_rank
        .iter()
        .map(|&u| dirs.iter().map(|d| placement.spec.neighbour(u, d).is_some()).collect())
        .collect();
    let exists: Vec<bool> = (0..dirs.len()).map(|k| cov.iter().any(|c| c[k])).collect();
    (0..cov.len())
        .filter(|&r| cov[r].iter().zip(&exists).all(|(&c, &e)| c || !e))
        .map(|r| r as Rank)
        .collect()
}
