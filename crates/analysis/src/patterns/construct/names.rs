//! One rank's events of a communication pattern as symbol ids into a name table shared by every
//! pattern of an analysis: 4 bytes an event instead of a `String` each. LU class C on 128 ranks
//! has one pattern of 16.5 M events; as strings it was ~1.8 GB of small allocations, built once
//! and copied once more for the report. Names appear only where the events are printed or sent:
//! [`EventNames`] serializes as the list of names (the JSON is the one `Vec<String>` gave).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::HashMap;
use std::sync::Arc;

/// A rank's events in a pattern: ids into a name table (`names[id]` is the symbol, `S2`,
/// `MPI_Allreduce`, ...). Reads as a list of `&str`; compares, prints and serializes by names.
#[derive(Clone)]
pub struct EventNames {
    ids: Vec<u32>,
    names: Arc<[String]>,
}

impl EventNames {
    /// Events `ids` over the table `names` (every id must index it).
    pub fn new(ids: Vec<u32>, names: Arc<[String]>) -> EventNames {
        debug_assert!(ids.iter().all(|&i| (i as usize) < names.len()));
        EventNames { ids, names }
    }

    /// Events given by their names, over a table of their own.
    pub fn from_names<S: AsRef<str>>(events: impl IntoIterator<Item = S>) -> EventNames {
        let mut index: HashMap<String, u32> = HashMap::new();
        let mut table: Vec<String> = Vec::new();
        let ids = events
            .into_iter()
            .map(|e| {
                let e = e.as_ref();
                match index.get(e) {
                    Some(&i) => i,
                    None => {
                        let i = table.len() as u32;
                        index.insert(e.to_owned(), i);
                        table.push(e.to_owned());
                        i
                    }
                }
            })
            .collect();
        EventNames {
            ids,
            names: table.into(),
        }
    }

    /// Number of events.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// No events.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The events' names, in order.
    pub fn iter(&self) -> Names<'_> {
        Names {
            ids: self.ids.iter(),
            names: &self.names,
        }
    }

    /// The name of event `i`.
    pub fn get(&self, i: usize) -> Option<&str> {
        self.ids.get(i).map(|&s| self.names[s as usize].as_str())
    }

    /// The symbol ids (into [`EventNames::table`]).
    pub fn ids(&self) -> &[u32] {
        &self.ids
    }

    /// The name table the ids index.
    pub fn table(&self) -> &Arc<[String]> {
        &self.names
    }

    /// The names as owned strings.
    pub fn to_vec(&self) -> Vec<String> {
        self.iter().map(str::to_owned).collect()
    }
}

/// The names of [`EventNames`], in order.
#[derive(Clone)]
pub struct Names<'a> {
    ids: std::slice::Iter<'a, u32>,
    names: &'a [String],
}

impl<'a> Iterator for Names<'a> {
    type Item = &'a str;
    fn next(&mut self) -> Option<&'a str> {
        self.ids.next().map(|&s| self.names[s as usize].as_str())
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.ids.size_hint()
    }
}

impl DoubleEndedIterator for Names<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.ids.next_back().map(|&s| self.names[s as usize].as_str())
    }
}

impl ExactSizeIterator for Names<'_> {}

impl<'a> IntoIterator for &'a EventNames {
    type Item = &'a str;
    type IntoIter = Names<'a>;
    fn into_iter(self) -> Names<'a> {
        self.iter()
    }
}

impl std::ops::Index<usize> for EventNames {
    type Output = str;
    fn index(&self, i: usize) -> &str {
        &self.names[self.ids[i] as usize]
    }
}

impl PartialEq for EventNames {
    fn eq(&self, other: &EventNames) -> bool {
        if Arc::ptr_eq(&self.names, &other.names) {
            return self.ids == other.ids;
        }
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for EventNames {}

impl<S: AsRef<str>> PartialEq<Vec<S>> for EventNames {
    fn eq(&self, other: &Vec<S>) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter().map(AsRef::as_ref))
    }
}

impl<S: AsRef<str>, const N: usize> PartialEq<[S; N]> for EventNames {
    fn eq(&self, other: &[S; N]) -> bool {
        self.len() == N && self.iter().eq(other.iter().map(AsRef::as_ref))
    }
}

impl std::fmt::Debug for EventNames {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<S: AsRef<str>> FromIterator<S> for EventNames {
    fn from_iter<I: IntoIterator<Item = S>>(events: I) -> EventNames {
        EventNames::from_names(events)
    }
}

impl From<Vec<String>> for EventNames {
    fn from(events: Vec<String>) -> EventNames {
        EventNames::from_names(events)
    }
}

impl Serialize for EventNames {
    fn serialize<Ser: Serializer>(&self, serializer: Ser) -> Result<Ser::Ok, Ser::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for EventNames {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<EventNames, D::Error> {
        Vec::<String>::deserialize(deserializer).map(EventNames::from_names)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ids over a shared table and names over their own table read, compare and serialize alike;
    /// the JSON is that of the plain list of names.
    #[test]
    fn ids_read_compare_and_serialize_as_their_names() {
        let table: Arc<[String]> = vec!["S1".to_owned(), "R0".to_owned(), "MPI_Barrier".to_owned()].into();
        let ids = EventNames::new(vec![0, 1, 1, 2, 0], table);
        let plain = vec!["S1", "R0", "R0", "MPI_Barrier", "S1"];
        let own = EventNames::from_names(&plain);
        assert_eq!(ids, own);
        assert_eq!(ids, plain);
        assert_eq!(ids.len(), 5);
        assert_eq!(&ids[3], "MPI_Barrier");
        assert_eq!(ids.iter().next_back(), Some("S1"));
        assert_eq!(ids.get(5), None);
        let json = serde_json::to_string(&ids).unwrap();
        assert_eq!(json, serde_json::to_string(&plain).unwrap());
        let back: EventNames = serde_json::from_str(&json).unwrap();
        assert_eq!(back, ids);
        assert_eq!(back.table().len(), 3);
        assert_ne!(ids, EventNames::from_names(["S1", "R0"]));
        assert_ne!(ids, EventNames::from_names(["S1", "R0", "R0", "MPI_Barrier", "R0"]));
    }
}
