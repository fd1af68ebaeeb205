//! An OTF2 archive held in memory: the anchor, the global definitions, and per location its
//! local definitions and event file. This is the low-level API: it yields OTF2 events as the
//! official reader does (clock-offset correction and local→global mapping applied), per
//! location or merged over all locations in time order.

use super::defs::{Anchor, GlobalDefs, LocalDefs};
use super::events::{Event, LocationEvents};
use crate::{FormatError, InputFile};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// One location's files.
#[derive(Debug, Clone)]
pub struct LocationFiles {
    /// The location id.
    pub id: u64,
    /// Its local definitions (empty when the archive has no `.def` for it).
    pub local: LocalDefs,
    /// Index of its `.evt` in the input files; `None` when absent.
    pub evt: Option<usize>,
    /// Index of its `.def` in the input files, when present.
    pub def: Option<usize>,
}

/// A parsed archive over borrowed input files.
#[derive(Debug)]
pub struct Archive<'a> {
    /// All input files (unrelated ones are ignored).
    pub files: &'a [InputFile],
    /// Index of the anchor file.
    pub anchor_file: usize,
    /// Index of the global definition file.
    pub defs_file: usize,
    /// The anchor.
    pub anchor: Anchor,
    /// Global definitions.
    pub defs: GlobalDefs,
    /// One entry per defined location, in definition order.
    pub locations: Vec<LocationFiles>,
    /// What the archive's layout suggests is wrong though it can be read (a location's local
    /// definitions missing while the others have them), for [`tracelogic_model::Trace::warnings`].
    pub warnings: Vec<String>,
}

/// Find the anchor of an OTF2 archive among `files`: the one `.otf2` file.
fn find_anchor(files: &[InputFile]) -> Result<usize, FormatError> {
    let anchors: Vec<usize> = (0..files.len()).filter(|&i| files[i].name.ends_with(".otf2")).collect();
    match anchors.as_slice() {
        [i] => Ok(*i),
        [] => Err(FormatError::new(
            "(input)",
            "no OTF2 anchor file (NAME.otf2) among the input files",
        )),
        many => Err(FormatError::new(
            &files[many[1]].name,
            format!(
                "several OTF2 anchor files in one input ({} and {}); give one archive at a time",
                files[many[0]].name, files[many[1]].name
            ),
        )),
    }
}

impl<'a> Archive<'a> {
    /// Parse the anchor, the global definitions and every location's local definitions.
    /// Event files are only located here; they are decoded by [`Archive::events`].
    pub fn open(files: &'a [InputFile]) -> Result<Archive<'a>, FormatError> {
        Archive::open_selected(files, &|_| true)
    }

    /// [`Archive::open`] parsing the local definitions of only the locations (by position in
    /// the global definitions) that `parse` keeps: the others' stay empty, so their events must
    /// not be read. A reader of some ranks reads and parses only their local definitions.
    pub fn open_selected(files: &'a [InputFile], parse: &dyn Fn(usize) -> bool) -> Result<Archive<'a>, FormatError> {
        let anchor_file = find_anchor(files)?;
        let anchor_name = &files[anchor_file].name;
        let anchor = Anchor::parse(anchor_name, &files[anchor_file].bytes)?;
        let base = &anchor_name[..anchor_name.len() - ".otf2".len()];
        let by_name: HashMap<&str, usize> = files.iter().enumerate().map(|(i, f)| (f.name.as_str(), i)).collect();
        let defs_name = format!("{base}.def");
        let defs_file = *by_name.get(defs_name.as_str()).ok_or_else(|| {
            FormatError::new(
                &defs_name,
                format!("global definition file {defs_name} is missing: an OTF2 trace needs it beside {anchor_name}"),
            )
        })?;
        let defs = GlobalDefs::parse(&defs_name, &files[defs_file].bytes, anchor.chunk_size_defs)?;
        let mut locations = Vec::with_capacity(defs.locations.len());
        for (index, l) in defs.locations.items.iter().enumerate() {
            let def = by_name.get(format!("{base}/{}.def", l.id).as_str()).copied();
            let evt = by_name.get(format!("{base}/{}.evt", l.id).as_str()).copied();
            let local = match def.filter(|_| parse(index)) {
                Some(i) => LocalDefs::parse(&files[i].name, &files[i].bytes, anchor.chunk_size_defs)?,
                None => LocalDefs {
                    maps: vec![None; super::defs::MAPPING_TYPES],
                    clock_offsets: Vec::new(),
                },
            };
            if evt.is_none() && l.number_of_events > 0 {
                return Err(FormatError::new(
                    &format!("{base}/{}.evt", l.id),
                    format!(
                        "event file of location {} is missing ({} events announced in {defs_name})",
                        l.id, l.number_of_events
                    ),
                ));
            }
            locations.push(LocationFiles {
                id: l.id,
                local,
                evt,
                def,
            });
        }
        let warnings = missing_local_defs(base, &locations);
        Ok(Archive {
            files,
            anchor_file,
            defs_file,
            anchor,
            defs,
            locations,
            warnings,
        })
    }

    /// Name of the anchor file.
    pub fn anchor_name(&self) -> &'a str {
        &self.files[self.anchor_file].name
    }

    /// Events of location number `index` (position in [`Archive::locations`]) in file order;
    /// `None` when the location has no event file.
    pub fn events(&self, index: usize) -> Result<Option<LocationEvents<'_>>, FormatError> {
        self.events_in(index, self.files)
    }

    /// [`Archive::events`] with the event file's bytes taken from `files`, a set with the
    /// archive's files at the same positions (a reader that loads event files one at a time
    /// opens the archive on a set whose event files are empty).
    pub fn events_in<'s>(
        &'s self,
        index: usize,
        files: &'s [InputFile],
    ) -> Result<Option<LocationEvents<'s>>, FormatError> {
        let l = &self.locations[index];
        match l.evt {
            None => Ok(None),
            Some(i) => {
                let f = &files[i];
                Ok(Some(LocationEvents::new(
                    &f.name,
                    &f.bytes,
                    self.anchor.chunk_size_events,
                    &l.local,
                )?))
            }
        }
    }

    /// All events of all locations merged by corrected time; equal times keep location
    /// definition order, and events of one location keep file order.
    pub fn merged_events(&self) -> Result<MergedEvents<'_>, FormatError> {
        let mut streams = Vec::new();
        for i in 0..self.locations.len() {
            if let Some(ev) = self.events(i)? {
                streams.push((self.locations[i].id, ev));
            }
        }
        let mut m = MergedEvents {
            heads: vec![None; streams.len()],
            streams,
            heap: BinaryHeap::new(),
            failed: false,
        };
        for i in 0..m.streams.len() {
            m.advance(i)?;
        }
        Ok(m)
    }
}

/// A warning when locations with events have no local `.def` while another location's local
/// definitions hold id mapping tables or clock offsets. Score-P writes a location's mapping tables
/// there (its events use ids local to it), so a deleted or lost local `.def` leaves that
/// location's communicator, region and other ids read as if global: its messages then do not
/// match, without any decoding error. Checked once per archive, not per event.
fn missing_local_defs(base: &str, locations: &[LocationFiles]) -> Vec<String> {
    let Some(model) = locations
        .iter()
        .find(|l| l.local.maps.iter().any(Option::is_some) || !l.local.clock_offsets.is_empty())
    else {
        return Vec::new();
    };
    let missing: Vec<&LocationFiles> = locations
        .iter()
        .filter(|l| l.def.is_none() && l.evt.is_some())
        .collect();
    let Some(first) = missing.first() else {
        return Vec::new();
    };
    let holds = match (
        model.local.maps.iter().any(Option::is_some),
        !model.local.clock_offsets.is_empty(),
    ) {
        (true, true) => "id mapping tables and clock offsets",
        (true, false) => "id mapping tables",
        _ => "clock offsets",
    };
    let times = if model.local.clock_offsets.is_empty() {
        ""
    } else {
        " and their times without clock-offset correction"
    };
    let which = if missing.len() == 1 {
        format!(
            "{base}/{}.def (local definitions of location {}) is",
            first.id, first.id
        )
    } else {
        let names: Vec<String> = missing.iter().take(5).map(|l| format!("{base}/{}.def", l.id)).collect();
        let more = missing.len().saturating_sub(5);
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        format!(
            "the local definitions of {} locations ({}{more}) are",
            missing.len(),
            names.join(", ")
        )
    };
    vec![format!(
        "{which} missing from the OTF2 trace, while {base}/{}.def holds {holds}: the events of {} were read with \
         their ids taken as global ids{times}, so communicators, regions and message matches involving {} \
         may be wrong",
        model.id,
        if missing.len() == 1 {
            "that location"
        } else {
            "those locations"
        },
        if missing.len() == 1 { "it" } else { "them" },
    )]
}

/// Iterator over `(location id, event)` of all locations in time order.
pub struct MergedEvents<'a> {
    streams: Vec<(u64, LocationEvents<'a>)>,
    heads: Vec<Option<Event>>,
    heap: BinaryHeap<Reverse<(u64, usize)>>,
    failed: bool,
}

impl MergedEvents<'_> {
    fn advance(&mut self, i: usize) -> Result<(), FormatError> {
        match self.streams[i].1.next() {
            Some(Ok(e)) => {
                self.heap.push(Reverse((e.time, i)));
                self.heads[i] = Some(e);
            }
            Some(Err(e)) => return Err(e),
            None => self.heads[i] = None,
        }
        Ok(())
    }
}

impl Iterator for MergedEvents<'_> {
    type Item = Result<(u64, Event), FormatError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let Reverse((_, i)) = self.heap.pop()?;
        let e = self.heads[i].take()?;
        if let Err(err) = self.advance(i) {
            self.failed = true;
            return Some(Err(err));
        }
        Some(Ok((self.streams[i].0, e)))
    }
}
