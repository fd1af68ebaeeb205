//! Kinds of communication: a pattern's shape up to a renaming of ranks.
//!
//! Two communication patterns are of one *kind* when they differ only in which ranks play the
//! parts: a ping-pong between ranks 0 and 1 and one between 0 and 2, a ring in natural order and
//! one in a random order. Each rank's event string is written with its peers renamed in the
//! order the rank first meets them (`S2 R1 S1 R2` → `S#0 R#1 S#1 R#0`; `R*` and collectives
//! unchanged), and the kind is the multiset of these strings over the pattern's ranks. This is
//! an invariant of the pattern under any renaming of ranks (a renaming maps each rank's string
//! to the same local form and permutes the ranks), so two patterns that are one shape on other
//! ranks always share a kind; it is not a complete one (two different shapes whose ranks each
//! see the same local strings share it too, e.g. one ring of 6 and two rings of 3), which only
//! makes the section level coarser.

use std::collections::HashMap;
use std::fmt::Write;

/// One rank's event string with its peers renamed in order of first appearance.
fn local_form<'a, T: AsRef<str> + ?Sized + 'a>(events: impl IntoIterator<Item = &'a T>) -> String {
    let mut peers: HashMap<&str, usize> = HashMap::new();
    let mut out = String::new();
    for e in events {
        let e: &str = e.as_ref();
        let (dir, peer) = match e.as_bytes().first() {
            Some(b'S') | Some(b'R') if e.len() > 1 && e[1..].bytes().all(|b| b.is_ascii_digit()) => e.split_at(1),
            _ => {
                out.push_str(e);
                out.push(' ');
                continue;
            }
        };
        let n = peers.len();
        let id = *peers.entry(peer).or_insert(n);
        // Written in place (no string per event).
        let _ = write!(out, "{dir}#{id} ");
    }
    out
}

/// The kind of a pattern given by its ranks' event strings (see the module docs).
pub fn kind_key<'a, E, T>(events: impl IntoIterator<Item = E>) -> String
where
    E: IntoIterator<Item = &'a T>,
    T: AsRef<str> + ?Sized + 'a,
{
    let mut forms: Vec<String> = events.into_iter().map(|e| local_form(e)).collect();
    forms.sort();
    forms.join("| ")
}

/// Dense kind id of every pattern of `comm` (same order as `comm.patterns`), and the number of
/// kinds.
pub fn pattern_kinds(comm: &crate::patterns::CommunicationAnalysis) -> (Vec<u32>, usize) {
    let mut ids: HashMap<String, u32> = HashMap::new();
    let kinds = comm
        .patterns
        .iter()
        .map(|p| {
            let key = kind_key(p.events.values());
            let n = ids.len() as u32;
            *ids.entry(key).or_insert(n)
        })
        .collect();
    (kinds, ids.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    /// A ping-pong between 0 and 1 and one between 0 and 2 (started by either side) are one
    /// kind; a ring of 4 in natural order and one in another order are one kind; a ping-pong and
    /// a ring are not.
    #[test]
    fn renamed_ranks_share_a_kind() {
        let pp01 = kind_key(&[ev(&["S1", "R1"]), ev(&["R0", "S0"])]);
        let pp02 = kind_key(&[ev(&["R2", "S2"]), ev(&["S0", "R0"])]);
        assert_eq!(pp01, pp02);
        let ring = |order: [usize; 4]| {
            let mut per = vec![Vec::new(); 4];
            for k in 0..4 {
                let (r, next, prev) = (order[k], order[(k + 1) % 4], order[(k + 3) % 4]);
                per[r] = ev(&[&format!("S{next}"), &format!("R{prev}")]);
            }
            kind_key(&per)
        };
        assert_eq!(ring([0, 1, 2, 3]), ring([2, 0, 3, 1]));
        assert_ne!(ring([0, 1, 2, 3]), pp01);
        // Collectives keep their names; a different collective is another kind.
        let a = kind_key(&[ev(&["MPI_Allreduce"]), ev(&["MPI_Allreduce"])]);
        let b = kind_key(&[ev(&["MPI_Bcast"]), ev(&["MPI_Bcast"])]);
        assert_ne!(a, b);
        // Two ranks differ from three.
        assert_ne!(
            a,
            kind_key(&[ev(&["MPI_Allreduce"]), ev(&["MPI_Allreduce"]), ev(&["MPI_Allreduce"])])
        );
    }
}
