//! Communicator translation: interning communicators by (name, members) and mapping
//! communicator-local ranks to world ranks.
//!
//! Readers meet the same communicator many times (every rank's record of one split, a `dup`
//! of a group already seen, a communicator a later part of a parallel read meets again); the
//! table gives it one id, so the model's communicators are distinct and numbered in
//! first-use order.

use crate::{CommId, Communicator, Rank};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Communicators with an index by (name, members), numbered from `first` in first-use order.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct CommTable {
    /// Id of `comms[0]` (a table of communicators met after others, such as a reader's part
    /// that follows the definitions' communicators, starts past them).
    pub first: CommId,
    /// The communicators, in id order.
    pub comms: Vec<Communicator>,
    index: HashMap<(String, Vec<Rank>), CommId>,
}

impl CommTable {
    /// An empty table whose first communicator will get id `first`.
    pub fn starting_at(first: CommId) -> CommTable {
        CommTable {
            first,
            ..CommTable::default()
        }
    }

    /// The id of the communicator with this name and these members, if it was added.
    pub fn find(&self, key: &(String, Vec<Rank>)) -> Option<CommId> {
        self.index.get(key).copied()
    }

    /// The id of the communicator with this name and these members, adding it if new.
    pub fn add(&mut self, key: (String, Vec<Rank>)) -> CommId {
        intern(&mut self.comms, &mut self.index, self.first, key)
    }
}

/// The id of communicator `key` in `comms` (ids from `first`), indexed by `index`, adding it
/// if new. `index` is rebuilt when it does not cover `comms` (after a deserialisation, or when
/// `comms` was filled directly).
pub(crate) fn intern(
    comms: &mut Vec<Communicator>,
    index: &mut HashMap<(String, Vec<Rank>), CommId>,
    first: CommId,
    key: (String, Vec<Rank>),
) -> CommId {
    if index.len() != comms.len() {
        *index = comms
            .iter()
            .enumerate()
            .map(|(i, c)| ((c.name.clone(), c.members.clone()), first + i as CommId))
            .collect();
    }
    if let Some(&id) = index.get(&key) {
        return id;
    }
    let id = first + comms.len() as CommId;
    comms.push(Communicator {
        name: key.0.clone(),
        members: key.1.clone(),
    });
    index.insert(key, id);
    id
}

/// The world rank of communicator rank `local` of a communicator with these `members`
/// (`members[i]` is the world rank of communicator rank `i`), if `local` is one of its ranks.
#[inline]
pub fn world_rank(members: &[Rank], local: u32) -> Option<Rank> {
    members.get(local as usize).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_communicator_met_again_keeps_its_first_id_and_ids_start_at_first() {
        let mut t = CommTable::starting_at(3);
        let a = t.add(("comm 1".into(), vec![0, 2]));
        let b = t.add(("comm 1".into(), vec![1, 3]));
        let c = t.add(("comm 2".into(), vec![0, 2]));
        assert_eq!((a, b, c), (3, 4, 5));
        assert_eq!(t.add(("comm 1".into(), vec![1, 3])), 4);
        assert_eq!(t.find(&("comm 2".into(), vec![0, 2])), Some(5));
        assert_eq!(t.find(&("comm 2".into(), vec![2, 0])), None);
        let names: Vec<(&str, &[Rank])> = t.comms.iter().map(|c| (c.name.as_str(), &c.members[..])).collect();
        assert_eq!(
            names,
            [("comm 1", &[0, 2][..]), ("comm 1", &[1, 3]), ("comm 2", &[0, 2])]
        );
    }

    #[test]
    fn a_table_filled_directly_is_indexed_before_it_is_searched() {
        let mut comms = vec![Communicator {
            name: "MPI_COMM_WORLD".into(),
            members: vec![0, 1],
        }];
        let mut index = HashMap::new();
        assert_eq!(
            intern(&mut comms, &mut index, 0, ("MPI_COMM_WORLD".into(), vec![0, 1])),
            0
        );
        assert_eq!(intern(&mut comms, &mut index, 0, ("x".into(), vec![1])), 1);
        assert_eq!(comms.len(), 2);
    }

    #[test]
    fn local_ranks_outside_the_communicator_have_no_world_rank() {
        assert_eq!(world_rank(&[4, 7, 9], 1), Some(7));
        assert_eq!(world_rank(&[4, 7, 9], 3), None);
        assert_eq!(world_rank(&[], 0), None);
    }
}
