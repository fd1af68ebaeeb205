//! Iterations made of back-to-back copies of one step: that many steps.
//!
//! Where a run's only per-step marker comes every few steps, the loop the parse finds is that
//! period, not the step. LAMMPS with `neigh_modify every 2` checks its neighbour lists (one
//! `MPI_Allreduce`) every second step; each step's messages (halo, PPPM's remaps, the reverse
//! halo) are the same, so the loop's body is two steps and the pattern explaining most came out
//! as 49 occurrences for the log's 100 steps (held-out `dreiding`, 4 ranks).
//!
//! On every rank of every instance of the pattern explaining most, the part's messages (its
//! events less its collectives) are taken as a string; where each of them is `k` ≥ 2 copies of
//! one string (its smallest period divides it, found with the prefix function), the same `k`
//! on every part, every part is cut into `k` pieces, each beginning at a copy's first message
//! (a collective between two copies stays with the copy before it). A part may also be one
//! different stretch and then `k` ≥ 2 copies covering at least half of it ([`copies_after_lead`]:
//! a rebuild every N steps that is the period's only marker, held-out LAMMPS `vashishta`); it
//! is then cut into that stretch and the copies. The messages alone cannot
//! tell two steps from one step whose two halves have the same partners in the same order (a
//! 1-D decomposition's forward and reverse halo exchanges: held-out LAMMPS `obstacle`, every
//! step `X Y X Y`); the time does: steps take about the same time, the halves of one step
//! rarely do (one holds the force computation). So the copies count as steps only where the
//! median duration of each copy over the parts is within [`SAME_TIME`] of the others'. The
//! pieces are put in as the loop's iterations and the patterns constructed again; kept when
//! the first pattern then has more occurrences and the steps, net of events left in instances
//! seen once, cover no less. It runs once, on the analysis kept
//! ([`super::trailing_collectives::join_to_steps`]). O(events of the pattern's parts) plus one
//! construction.

use super::events::EventRef;
use super::fold::{FoldInput, Folded};
use super::steps::{steps_net_of_one_off, with_pieces, NOT_A_STEP};

/// How much longer the slowest copy may take than the quickest (medians over the parts) for
/// the copies to count as steps. Held-out LAMMPS `dreiding` (two steps a part): 1.02; one
/// step of `obstacle` halved at its messages (a 1-D decomposition, whose forward and reverse
/// halo exchanges have the same partners in the same order): 1.54.
const SAME_TIME: f64 = 1.25;

/// The first pattern's iterations cut into the copies they are made of ([module docs](self));
/// `None` where some part is no power or the parts disagree on the number of copies, or the
/// cut explains no more.
pub(super) fn fold_copies(input: &FoldInput, state: &Folded) -> Option<Folded> {
    let events = input.events;
    let (occurrences, loops, c) = state.parts();
    let (top, pattern) = c.explaining_most()?;
    if pattern.occurrences < 2 {
        return None;
    }
    let folded = loops.iter().any(|l| !l.is_empty());
    let l = match c.step_loops.get(top).copied().unwrap_or(NOT_A_STEP) {
        NOT_A_STEP if folded => return None,
        NOT_A_STEP => 0,
        l => l,
    };
    let mut pieces: Vec<Vec<(u32, u32, u32)>> = vec![Vec::new(); events.ranks.len()];
    let mut copies_of_all = None;
    // Per part (rank, first event), the entry time of each copy's first message and the part's
    // own beginning.
    let mut copy_starts: Vec<(u32, u32, Vec<u64>, u64)> = Vec::new();
    for part in c
        .instances
        .iter()
        .filter(|i| i.pattern as usize == top)
        .flat_map(|i| &i.parts)
    {
        let re = &events.ranks[part.rank as usize];
        let calls = &input.trace.ranks[part.rank as usize].calls;
        let (first, end) = (part.first_event as usize, part.last_event as usize + 1);
        let messages: Vec<usize> = (first..end)
            .filter(|&i| !matches!(re.events[i], EventRef::Collective(_)))
            .collect();
        let string: Vec<u32> = messages.iter().map(|&i| re.symbols[i]).collect();
        // The whole part k copies, or one different step (a rebuild) and then k copies.
        let (lead, k) = match copies(&string) {
            k if k >= 2 => (0, k),
            _ => copies_after_lead(&string)?,
        };
        if *copies_of_all.get_or_insert((lead > 0, k)) != (lead > 0, k) {
            return None;
        }
        let period = (string.len() - lead) / k;
        let mut bounds: Vec<usize> = (0..k).map(|j| messages[lead + j * period]).collect();
        if lead > 0 {
            bounds.insert(0, first);
        } else {
            bounds[0] = first;
        }
        bounds.push(end);
        let times = (0..k)
            .map(|j| calls.enter(re.calls[messages[lead + j * period]] as usize))
            .collect();
        // Where the part begins: its first copy, or the different step before the copies.
        let begins = if lead > 0 {
            calls.enter(re.calls[first] as usize)
        } else {
            calls.enter(re.calls[messages[0]] as usize)
        };
        copy_starts.push((part.rank, part.first_event, times, begins));
        for w in bounds.windows(2) {
            pieces[part.rank as usize].push((w[0] as u32, w[1] as u32, l));
        }
    }
    // Per copy (its place in the part), the time from its start to the next copy's (the last
    // copy's: to the rank's next part's start, where there is one).
    copy_starts.sort_unstable_by_key(|&(rank, first, _, _)| (rank, first));
    let (_, k) = copies_of_all?;
    let mut durations: Vec<Vec<u64>> = vec![Vec::new(); k];
    for (i, (rank, _, times, _)) in copy_starts.iter().enumerate() {
        let next = copy_starts.get(i + 1).filter(|n| n.0 == *rank).map(|n| n.3);
        for j in 0..k {
            if let Some(to) = times.get(j + 1).copied().or(next) {
                durations[j].push(to.saturating_sub(times[j]));
            }
        }
    }
    // Copies that are steps take about the same time; halves of one step rarely do.
    let medians: Vec<u64> = durations
        .iter_mut()
        .filter(|d| !d.is_empty())
        .map(|d| {
            d.sort_unstable();
            d[d.len() / 2]
        })
        .collect();
    let (least, most) = (*medians.iter().min()?, *medians.iter().max()?);
    if (most as f64) > SAME_TIME * least as f64 {
        return None;
    }
    let flags: Vec<Vec<u32>> = super::steps::loop_flags(occurrences, loops);
    let cut = with_pieces(input, occurrences, &flags, &mut pieces);
    let more = cut
        .communication
        .explaining_most()
        .is_some_and(|(_, p)| p.occurrences > pattern.occurrences);
    (more && steps_net_of_one_off(&cut.communication) >= steps_net_of_one_off(c)).then_some(cut)
}

/// How many back-to-back copies of one string `s` is: `s.len()` over its smallest period where
/// that divides it, else 1 (0 for the empty string). O(|s|).
fn copies(s: &[u32]) -> usize {
    if s.is_empty() {
        return 0;
    }
    let period = crate::compress::values::smallest_period(s);
    if s.len().is_multiple_of(period) {
        s.len() / period
    } else {
        1
    }
}

/// Where `s` is one different stretch `w` and then `k` ≥ 2 back-to-back copies of one string,
/// the copies covering at least half of `s`: `(|w|, k)` for the longest such run of copies
/// (`w` non-empty; `None` where there is none). A period of a LAMMPS run whose neighbour
/// lists are rebuilt every N steps, with the check and the thermo output at the rebuild only
/// (held-out `vashishta`, `neigh_modify delay 10`, `thermo 10`): the rebuild step migrates
/// atoms and sends new borders, the other N − 1 steps send the same halo messages. O(|s|):
/// one prefix function of the reversed string (its prefix of length `j` is a power of `j`
/// over its smallest period where that divides it).
fn copies_after_lead(s: &[u32]) -> Option<(usize, usize)> {
    let n = s.len();
    let r: Vec<u32> = s.iter().rev().copied().collect();
    let pi = crate::compress::values::prefix_function(&r);
    (2..n).rev().take_while(|&j| 2 * j >= n).find_map(|j| {
        let period = j - pi[j - 1];
        (j.is_multiple_of(period) && j / period >= 2).then_some((n - j, j / period))
    })
}

#[cfg(test)]
mod tests {
    use super::{copies, copies_after_lead};

    /// Checked against the definition by brute force over every string of length 1 to 10 over
    /// two symbols: the longest proper suffix, at least half the string, that is `k` ≥ 2 copies
    /// of one string.
    #[test]
    fn copies_after_a_lead_are_the_longest_power_suffix() {
        for n in 1..=10usize {
            for bits in 0..(1u32 << n) {
                let s: Vec<u32> = (0..n).map(|i| (bits >> i) & 1).collect();
                let brute = (1..n).filter(|&lead| 2 * (n - lead) >= n).find_map(|lead| {
                    let t = &s[lead..];
                    let m = t.len();
                    (2..=m)
                        .rev()
                        .find(|&k| m.is_multiple_of(k) && (0..m).all(|i| t[i] == t[i % (m / k)]))
                        .map(|k| (lead, k))
                });
                assert_eq!(copies_after_lead(&s), brute, "{s:?}");
            }
        }
        // A rebuild step (5, 6, 7) and three equal steps (1, 2).
        assert_eq!(copies_after_lead(&[5, 6, 7, 1, 2, 1, 2, 1, 2]), Some((3, 3)));
        assert_eq!(copies_after_lead(&[5, 6, 7, 1, 2]), None);
    }

    /// Checked against the definition: the largest `k` with `s` equal to `k` copies of its first
    /// `len / k` symbols, by brute force over every string of length 1 to 8 over two symbols.
    #[test]
    fn copies_is_the_largest_power() {
        for n in 1..=8usize {
            for bits in 0..(1u32 << n) {
                let s: Vec<u32> = (0..n).map(|i| (bits >> i) & 1).collect();
                let brute = (1..=n)
                    .rev()
                    .find(|&k| n % k == 0 && (0..n).all(|i| s[i] == s[i % (n / k)]))
                    .unwrap();
                assert_eq!(copies(&s), brute, "{s:?}");
            }
        }
        assert_eq!(copies(&[]), 0);
        assert_eq!(copies(&[1, 2, 1, 2, 1, 2]), 3);
        assert_eq!(copies(&[1, 2, 1, 2, 1]), 1);
    }
}
