//! Cartesian process topologies the program declared (`MPI_Cart_create`; OTF2's
//! `CartTopology`/`CartDimension`/`CartCoordinate` definitions): which communicator, its extents
//! and periodicity, and where each of its ranks sits.

use crate::{CommId, Trace};
use serde::{Deserialize, Serialize};

/// One declared Cartesian topology.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CartTopology {
    /// The communicator it created (its members are the ranks of the grid).
    pub comm: CommId,
    /// Extent of each dimension, as declared (dimension 0 first).
    pub dims: Vec<u32>,
    /// Whether each dimension wraps around.
    pub periods: Vec<bool>,
    /// `coords[i]`: the coordinates of communicator rank `i` (dimension 0 first).
    pub coords: Vec<Vec<u32>>,
    /// True when the trace recorded the coordinates; false when they follow MPI's row-major
    /// rule (the last dimension varies fastest: `rank = ((c0·d1 + c1)·d2 + c2)...`).
    pub coords_recorded: bool,
}

impl CartTopology {
    /// The topology of `comm` with `members` ranks as MPI numbers it: communicator rank `i` at
    /// the row-major coordinates of `i`. Checks that the extents are positive, that there are
    /// as many periods as extents, and that the grid has exactly `members` places.
    pub fn row_major(comm: CommId, dims: &[i64], periods: &[bool], members: usize) -> Result<CartTopology, String> {
        if dims.is_empty() || dims.iter().any(|&d| d < 1 || d > u32::MAX as i64) {
            return Err(format!(
                "Cartesian topology with extents {dims:?}: every extent must be positive"
            ));
        }
        if periods.len() != dims.len() {
            return Err(format!(
                "Cartesian topology with {} extents and {} periods",
                dims.len(),
                periods.len()
            ));
        }
        let places = dims.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d as u64));
        if places != Some(members as u64) {
            return Err(format!(
                "Cartesian topology {dims:?} has {} places for a communicator of {members} ranks",
                places.map_or("too many".to_owned(), |p| p.to_string())
            ));
        }
        let dims: Vec<u32> = dims.iter().map(|&d| d as u32).collect();
        let coords = (0..members as u64).map(|i| row_major_coords(&dims, i)).collect();
        Ok(CartTopology {
            comm,
            dims,
            periods: periods.to_vec(),
            coords,
            coords_recorded: false,
        })
    }

    /// Communicator rank at `coords` by MPI's row-major rule (`None` outside the grid).
    pub fn rank_at(&self, coords: &[u32]) -> Option<u64> {
        if coords.len() != self.dims.len() {
            return None;
        }
        coords
            .iter()
            .zip(&self.dims)
            .try_fold(0u64, |acc, (&c, &d)| (c < d).then(|| acc * d as u64 + c as u64))
    }
}

/// Coordinates of communicator rank `rank` in a grid of extents `dims` by MPI's row-major rule
/// (the last dimension varies fastest), dimension 0 first.
pub fn row_major_coords(dims: &[u32], rank: u64) -> Vec<u32> {
    let mut rest = rank;
    let mut out = vec![0u32; dims.len()];
    for (c, &d) in out.iter_mut().zip(dims).rev() {
        *c = (rest % d as u64) as u32;
        rest /= d as u64;
    }
    out
}

impl Trace {
    /// Record a declared Cartesian topology; an error (for the reader's warnings) when it does
    /// not fit its communicator (unknown communicator, coordinates that are not one place per
    /// member inside the extents).
    pub fn add_cartesian(&mut self, t: CartTopology) -> Result<(), String> {
        let comm = self
            .comms
            .get(t.comm as usize)
            .ok_or_else(|| format!("Cartesian topology on unknown communicator {}", t.comm))?;
        if t.coords.len() != comm.members.len() || t.periods.len() != t.dims.len() {
            return Err(format!(
                "Cartesian topology {:?} on {} gives {} coordinates for {} members",
                t.dims,
                comm.name,
                t.coords.len(),
                comm.members.len()
            ));
        }
        let mut seen = std::collections::HashSet::new();
        for c in &t.coords {
            match t.rank_at(c) {
                Some(place) if seen.insert(place) => {}
                _ => {
                    return Err(format!(
                        "Cartesian topology {:?}: coordinates {c:?} outside or repeated",
                        t.dims
                    ))
                }
            }
        }
        self.cartesian.push(t);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_major_is_mpi_numbering() {
        // MPI 4.0 §8.5.1: "row-major numbering"; for dims (2, 3): rank 4 is (1, 1), rank 5 (1, 2).
        assert_eq!(row_major_coords(&[2, 3], 4), vec![1, 1]);
        assert_eq!(row_major_coords(&[2, 3], 5), vec![1, 2]);
        assert_eq!(row_major_coords(&[2, 2, 3], 7), vec![1, 0, 1]);
        let t = CartTopology::row_major(1, &[2, 2, 3], &[true; 3], 12).unwrap();
        for (i, c) in t.coords.iter().enumerate() {
            assert_eq!(t.rank_at(c), Some(i as u64));
        }
    }

    #[test]
    fn bad_declarations_are_errors() {
        assert!(CartTopology::row_major(1, &[2, 0], &[false, false], 0).is_err());
        assert!(CartTopology::row_major(1, &[2, -3], &[false, false], 6).is_err());
        assert!(CartTopology::row_major(1, &[2, 3], &[false], 6).is_err());
        assert!(CartTopology::row_major(1, &[2, 3], &[false, false], 8).is_err());
        assert!(CartTopology::row_major(1, &[1 << 31, 1 << 31, 1 << 31], &[false; 3], 8).is_err());
        let mut trace = Trace::new("test", "t", 4);
        let c = trace.add_comm("grid", vec![0, 1, 2, 3]);
        let mut t = CartTopology::row_major(c, &[2, 2], &[true, false], 4).unwrap();
        t.coords[1] = vec![0, 0];
        assert!(trace.add_cartesian(t).is_err());
        assert!(trace
            .add_cartesian(CartTopology::row_major(9, &[2, 2], &[true, false], 4).unwrap())
            .is_err());
        assert!(trace
            .add_cartesian(CartTopology::row_major(c, &[2, 2], &[true, false], 4).unwrap())
            .is_ok());
        assert_eq!(trace.cartesian.len(), 1);
    }
}
