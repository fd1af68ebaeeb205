//! The anchor file, global definitions and local definitions of an OTF2 archive
//! (OTF2's anchor file, global definition records, and per-location mapping tables and clock
//! offsets).
//!
//! Definitions are kept in the order the file gives them (the official reader lists them in
//! that order) with an index by id. Fields that only newer OTF2 versions write are `None`/default
//! when absent; bytes a newer writer appends are skipped through the record length.

use super::buffer::{ChunkedFile, Cursor};
use crate::FormatError;
use std::collections::HashMap;
/// Id indexes consulted on every event: foldhash instead of SipHash, seeded per map so a
/// hostile file still cannot choose colliding ids.
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

mod anchor;
mod local;
pub use anchor::Anchor;
pub use local::*;

/// The "undefined" value of every 32-bit reference.
pub const UNDEFINED_U32: u32 = u32::MAX;
/// The "undefined" value of 64-bit references (locations).
pub const UNDEFINED_U64: u64 = u64::MAX;

/// Definitions of one kind, in file order, with an index by id.
#[derive(Debug, Clone)]
pub struct Table<K, T> {
    /// Definitions in file order.
    pub items: Vec<T>,
    index: FastMap<K, usize>,
}

impl<K, T> Default for Table<K, T> {
    fn default() -> Self {
        Table {
            items: Vec::new(),
            index: FastMap::default(),
        }
    }
}

impl<K: std::hash::Hash + Eq + Copy + std::fmt::Display, T> Table<K, T> {
    fn insert(&mut self, id: K, item: T, c: &Cursor, at: usize, kind: &str) -> Result<(), FormatError> {
        if self.index.insert(id, self.items.len()).is_some() {
            return Err(c.error_at(at, format!("{kind} {id} is defined twice")));
        }
        self.items.push(item);
        Ok(())
    }
    /// The definition with id `id`.
    pub fn get(&self, id: K) -> Option<&T> {
        self.index.get(&id).map(|&i| &self.items[i])
    }
    /// Position of `id` in file order.
    pub fn position(&self, id: K) -> Option<usize> {
        self.index.get(&id).copied()
    }
    /// Number of definitions.
    pub fn len(&self) -> usize {
        self.items.len()
    }
    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// Timer facts: converts ticks to seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ClockProperties {
    /// Ticks per second.
    pub timer_resolution: u64,
    /// Tick value of the trace start.
    pub global_offset: u64,
    /// Ticks from start to end.
    pub trace_length: u64,
    /// Wall-clock time of the start in ns since the epoch (OTF2 3.0+ writers).
    pub realtime_timestamp: Option<u64>,
}

/// A node of the system tree (machine, node...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SystemTreeNode {
    /// Id.
    pub id: u32,
    /// Name (string ref).
    pub name: u32,
    /// Class name (string ref), e.g. `node`.
    pub class_name: u32,
    /// Parent node or undefined.
    pub parent: u32,
}

/// A location group: one process (= one MPI rank in Score-P traces).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocationGroup {
    /// Id.
    pub id: u32,
    /// Name (string ref), e.g. `MPI Rank 0`.
    pub name: u32,
    /// 0 UNKNOWN, 1 PROCESS, 2 ACCELERATOR.
    pub kind: u8,
    /// System-tree node it runs on.
    pub system_tree_parent: u32,
}

/// A location: one thread or stream with its own event file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// Id (names the files `NAME/<id>.evt` and `.def`).
    pub id: u64,
    /// Name (string ref), e.g. `Master thread`.
    pub name: u32,
    /// 0 UNKNOWN, 1 CPU_THREAD, 2 ACCELERATOR_STREAM, 3 METRIC.
    pub kind: u8,
    /// Number of events the writer announced.
    pub number_of_events: u64,
    /// The location group (process) it belongs to.
    pub group: u32,
    /// Offset of the definition record in the global definition file.
    pub offset: u64,
}

/// A node of the calling-context tree: the region a [`EventKind::CallingContextEnter`]
/// enters, and its caller's context.
///
/// [`EventKind::CallingContextEnter`]: super::events::EventKind::CallingContextEnter
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallingContext {
    /// Id.
    pub id: u32,
    /// The region (global id).
    pub region: u32,
    /// Source-code location (undefined when absent).
    pub source_code_location: u32,
    /// The calling context of the caller, or undefined at a root.
    pub parent: u32,
}

/// A code region (function, MPI call, loop...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    /// Id.
    pub id: u32,
    /// Name (string ref).
    pub name: u32,
    /// Canonical name (string ref; OTF2 1.1+), undefined when absent.
    pub canonical_name: u32,
    /// Description (string ref).
    pub description: u32,
    /// Role (appendix C), 0 when absent.
    pub role: u8,
    /// Paradigm (appendix C; 4 = MPI), 0 when absent.
    pub paradigm: u8,
    /// Flags.
    pub flags: u32,
    /// Source file (string ref).
    pub source_file: u32,
    /// First source line.
    pub begin_line: u32,
    /// Last source line.
    pub end_line: u32,
}

/// A group: of locations, regions, metrics, or communicator ranks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// Id.
    pub id: u32,
    /// Name (string ref).
    pub name: u32,
    /// Group type (appendix C: 4 COMM_LOCATIONS, 5 COMM_GROUP, 6 COMM_SELF ...).
    pub kind: u8,
    /// Paradigm (4 = MPI).
    pub paradigm: u8,
    /// Group flags (bit 0: GLOBAL_MEMBERS).
    pub flags: u32,
    /// Members: location ids for COMM_LOCATIONS, indices into it (ranks) for COMM_GROUP.
    pub members: Vec<u64>,
    /// Offset of the definition record.
    pub offset: u64,
}

/// A communicator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comm {
    /// Id.
    pub id: u32,
    /// Name (string ref).
    pub name: u32,
    /// Its COMM_GROUP / COMM_SELF group.
    pub group: u32,
    /// Parent communicator or undefined.
    pub parent: u32,
    /// Flags (OTF2 3.0+).
    pub flags: u32,
    /// Offset of the definition record.
    pub offset: u64,
}

/// An inter-communicator (OTF2 3.0+): two groups; peers are ranks of the other group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterComm {
    /// Id (shares the id space with [`Comm`]).
    pub id: u32,
    /// Name (string ref).
    pub name: u32,
    /// The local group of one side.
    pub group_a: u32,
    /// The local group of the other side.
    pub group_b: u32,
    /// Intra-communicator over both groups, or undefined.
    pub common: u32,
    /// Offset of the definition record.
    pub offset: u64,
}

/// An attribute that events may carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attribute {
    /// Id.
    pub id: u32,
    /// Name (string ref).
    pub name: u32,
    /// Value type (appendix C `Type`).
    pub kind: u8,
}

/// One counter of a metric class.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricMember {
    /// Id.
    pub id: u32,
    /// Name (string ref), e.g. `PAPI_TOT_INS`.
    pub name: u32,
    /// Description (string ref).
    pub description: u32,
    /// 0 OTHER, 1 PAPI, 2 RUSAGE, 3 USER.
    pub metric_type: u8,
    /// Accumulated / absolute / relative mode bits.
    pub mode: u8,
    /// Value type (appendix C `Type`).
    pub value_type: u8,
    /// Unit (string ref).
    pub unit: u32,
}

/// A metric class: the counters a Metric event carries, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricClass {
    /// Id (shares the id space with metric instances).
    pub id: u32,
    /// Member ids in value order.
    pub members: Vec<u32>,
    /// Occurrence (appendix C).
    pub occurrence: u8,
    /// Offset of the definition record.
    pub offset: u64,
}

/// A metric instance: a metric class recorded by one location for another scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricInstance {
    /// Id (shares the id space with metric classes).
    pub id: u32,
    /// Its class.
    pub class: u32,
    /// The recording location.
    pub recorder: u64,
}

/// Every global definition a reader needs.
#[derive(Debug, Clone, Default)]
pub struct GlobalDefs {
    /// Clock properties (required).
    pub clock: ClockProperties,
    /// Strings by id.
    pub strings: Table<u32, String>,
    /// System tree nodes.
    pub system_tree_nodes: Table<u32, SystemTreeNode>,
    /// Location groups.
    pub location_groups: Table<u32, LocationGroup>,
    /// Locations.
    pub locations: Table<u64, Location>,
    /// Regions.
    pub regions: Table<u32, Region>,
    /// Groups.
    pub groups: Table<u32, Group>,
    /// Communicators.
    pub comms: Table<u32, Comm>,
    /// Inter-communicators.
    pub inter_comms: Table<u32, InterComm>,
    /// Calling contexts (OTF2 2.0+, written by Score-P when it unwinds the stack).
    pub calling_contexts: Table<u32, CallingContext>,
    /// Attributes.
    pub attributes: Table<u32, Attribute>,
    /// Metric members.
    pub metric_members: Table<u32, MetricMember>,
    /// Metric classes.
    pub metric_classes: Table<u32, MetricClass>,
    /// Metric instances.
    pub metric_instances: Table<u32, MetricInstance>,
    /// Cartesian dimensions: `(id, size, periodic)`.
    pub cart_dimensions: Vec<(u32, u32, bool)>,
    /// Cartesian topologies: `(id, communicator, dimension ids)`.
    pub cart_topologies: Vec<(u32, u32, Vec<u32>)>,
    /// Cartesian coordinates: `(topology, rank in its communicator, coordinates)`.
    pub cart_coordinates: Vec<(u32, u32, Vec<u32>)>,
    /// Number of definition records read.
    pub records: u64,
    /// Ids of records this reader does not know, skipped by their length.
    pub unknown_records: Vec<(u8, u64)>,
}

impl GlobalDefs {
    /// The string behind a reference; `""` for undefined or unknown refs.
    pub fn string(&self, id: u32) -> &str {
        self.strings.get(id).map(String::as_str).unwrap_or("")
    }

    /// Parse the global definition file.
    pub fn parse(file: &str, data: &[u8], chunk_size: u64) -> Result<GlobalDefs, FormatError> {
        let mut defs = GlobalDefs::default();
        let mut f = ChunkedFile::open(file, data, chunk_size)?;
        let mut clock_seen = false;
        while let Some((id, at)) = f.next_type()? {
            let len = f.cur.record_length()?;
            let mut c = f.cur.sub(len);
            let off = at as u64;
            defs.records += 1;
            match id {
                5 => {
                    defs.clock = ClockProperties {
                        timer_resolution: c.cu64("timer resolution")?,
                        global_offset: c.cu64("global offset")?,
                        trace_length: c.cu64("trace length")?,
                        realtime_timestamp: if c.has_more() {
                            Some(c.cu64("realtime timestamp")?)
                        } else {
                            None
                        },
                    };
                    if defs.clock.timer_resolution == 0 {
                        return Err(c.error_at(at, "clock properties give a timer resolution of 0 ticks per second"));
                    }
                    clock_seen = true;
                }
                6..=8 => {} // Paradigm, ParadigmProperty, IoParadigm: not needed.
                10 => {
                    let sid = c.cu32("string id")?;
                    let s = c.cstring("string")?;
                    defs.strings.insert(sid, s, &c, at, "string")?;
                }
                11 => {
                    let a = Attribute {
                        id: c.cu32("attribute id")?,
                        name: c.cu32("attribute name")?,
                        kind: c.u8("attribute type")?,
                    };
                    defs.attributes.insert(a.id, a, &c, at, "attribute")?;
                }
                12 => {
                    let n = SystemTreeNode {
                        id: c.cu32("system tree node id")?,
                        name: c.cu32("name")?,
                        class_name: c.cu32("class name")?,
                        parent: c.cu32("parent")?,
                    };
                    defs.system_tree_nodes.insert(n.id, n, &c, at, "system tree node")?;
                }
                13 => {
                    let g = LocationGroup {
                        id: c.cu32("location group id")?,
                        name: c.cu32("name")?,
                        kind: c.u8("location group type")?,
                        system_tree_parent: c.cu32("system tree parent")?,
                    };
                    defs.location_groups.insert(g.id, g, &c, at, "location group")?;
                }
                14 => {
                    let l = Location {
                        id: c.cu64("location id")?,
                        name: c.cu32("name")?,
                        kind: c.u8("location type")?,
                        number_of_events: c.cu64("number of events")?,
                        group: c.cu32("location group")?,
                        offset: off,
                    };
                    defs.locations.insert(l.id, l, &c, at, "location")?;
                }
                15 => {
                    let mut r = Region {
                        id: c.cu32("region id")?,
                        name: c.cu32("name")?,
                        description: c.cu32("description")?,
                        canonical_name: UNDEFINED_U32,
                        role: 0,
                        paradigm: 0,
                        flags: 0,
                        source_file: UNDEFINED_U32,
                        begin_line: 0,
                        end_line: 0,
                    };
                    c.u8("region type")?;
                    r.source_file = c.cu32("source file")?;
                    r.begin_line = c.cu32("begin line")?;
                    r.end_line = c.cu32("end line")?;
                    if c.has_more() {
                        r.canonical_name = c.cu32("canonical name")?;
                        r.role = c.u8("region role")?;
                        r.paradigm = c.u8("paradigm")?;
                        r.flags = c.cu32("region flags")?;
                    }
                    defs.regions.insert(r.id, r, &c, at, "region")?;
                }
                18 => {
                    let gid = c.cu32("group id")?;
                    let name = c.cu32("name")?;
                    let old_type = c.u8("group type")?;
                    let n = c.cu32("number of members")? as u64;
                    let n = c.count(n, 1, "group members")?;
                    let mut members = Vec::with_capacity(n);
                    for _ in 0..n {
                        members.push(c.cu64("group member")?);
                    }
                    let (kind, paradigm, flags) = if c.has_more() {
                        (c.u8("group type")?, c.u8("paradigm")?, c.cu32("group flags")?)
                    } else {
                        (old_type, 0, 0)
                    };
                    let g = Group {
                        id: gid,
                        name,
                        kind,
                        paradigm,
                        flags,
                        members,
                        offset: off,
                    };
                    defs.groups.insert(gid, g, &c, at, "group")?;
                }
                19 => {
                    let m = MetricMember {
                        id: c.cu32("metric member id")?,
                        name: c.cu32("name")?,
                        description: c.cu32("description")?,
                        metric_type: c.u8("metric type")?,
                        mode: c.u8("metric mode")?,
                        value_type: c.u8("value type")?,
                        unit: {
                            c.u8("base")?;
                            c.ci64("exponent")?;
                            c.cu32("unit")?
                        },
                    };
                    defs.metric_members.insert(m.id, m, &c, at, "metric member")?;
                }
                20 => {
                    let mid = c.cu32("metric class id")?;
                    let n = c.u8("number of metrics")? as u64;
                    let n = c.count(n, 1, "metric members")?;
                    let mut members = Vec::with_capacity(n);
                    for _ in 0..n {
                        members.push(c.cu32("metric member")?);
                    }
                    let occurrence = c.u8("metric occurrence")?;
                    let m = MetricClass {
                        id: mid,
                        members,
                        occurrence,
                        offset: off,
                    };
                    defs.metric_classes.insert(mid, m, &c, at, "metric class")?;
                }
                21 => {
                    let m = MetricInstance {
                        id: c.cu32("metric instance id")?,
                        class: c.cu32("metric class")?,
                        recorder: c.cu64("recorder")?,
                    };
                    defs.metric_instances.insert(m.id, m, &c, at, "metric instance")?;
                }
                22 => {
                    let cm = Comm {
                        id: c.cu32("comm id")?,
                        name: c.cu32("name")?,
                        group: c.cu32("group")?,
                        parent: c.cu32("parent")?,
                        flags: if c.has_more() { c.cu32("comm flags")? } else { 0 },
                        offset: off,
                    };
                    defs.comms.insert(cm.id, cm, &c, at, "communicator")?;
                }
                43 => {
                    let ic = InterComm {
                        id: c.cu32("inter-communicator id")?,
                        name: c.cu32("name")?,
                        group_a: c.cu32("group A")?,
                        group_b: c.cu32("group B")?,
                        common: c.cu32("common communicator")?,
                        offset: off,
                    };
                    if defs.comms.get(ic.id).is_some() {
                        return Err(c.error_at(at, format!("inter-communicator {} reuses a communicator id", ic.id)));
                    }
                    defs.inter_comms.insert(ic.id, ic, &c, at, "inter-communicator")?;
                }
                30 => {
                    let id = c.cu32("cart dimension id")?;
                    let _name = c.cu32("name")?;
                    let size = c.cu32("size")?;
                    let periodic = c.u8("periodicity")? != 0;
                    defs.cart_dimensions.push((id, size, periodic));
                }
                31 => {
                    let id = c.cu32("cart topology id")?;
                    let _name = c.cu32("name")?;
                    let comm = c.cu32("communicator")?;
                    let k = c.u8("number of dimensions")?;
                    let dims = (0..k)
                        .map(|_| c.cu32("cart dimension"))
                        .collect::<Result<Vec<_>, _>>()?;
                    defs.cart_topologies.push((id, comm, dims));
                }
                32 => {
                    let topology = c.cu32("cart topology")?;
                    let rank = c.cu32("rank")?;
                    let k = c.u8("number of dimensions")?;
                    let coords = (0..k).map(|_| c.cu32("coordinate")).collect::<Result<Vec<_>, _>>()?;
                    defs.cart_coordinates.push((topology, rank, coords));
                }
                34 => {
                    let cc = CallingContext {
                        id: c.cu32("calling context id")?,
                        region: c.cu32("region")?,
                        source_code_location: c.cu32("source code location")?,
                        parent: c.cu32("parent")?,
                    };
                    defs.calling_contexts.insert(cc.id, cc, &c, at, "calling context")?;
                }
                16 | 17 | 23..=29 | 33 | 35..=42 => {} // Known, not needed for MPI analysis.
                other => defs.unknown_records.push((other, off)),
            }
        }
        if !clock_seen {
            return Err(FormatError::new(
                file,
                "global definitions lack the ClockProperties record",
            ));
        }
        defs.validate(file)?;
        Ok(defs)
    }

    /// Check the references the model layer follows, so it can index without surprises.
    fn validate(&self, file: &str) -> Result<(), FormatError> {
        for l in &self.locations.items {
            if self.location_groups.get(l.group).is_none() {
                return Err(FormatError::at_offset(
                    file,
                    l.offset,
                    format!("location {} refers to undefined location group {}", l.id, l.group),
                ));
            }
        }
        for cm in &self.comms.items {
            if self.groups.get(cm.group).is_none() {
                return Err(FormatError::at_offset(
                    file,
                    cm.offset,
                    format!("communicator {} refers to undefined group {}", cm.id, cm.group),
                ));
            }
        }
        for ic in &self.inter_comms.items {
            if let Some(g) = [ic.group_a, ic.group_b]
                .into_iter()
                .find(|&g| self.groups.get(g).is_none())
            {
                return Err(FormatError::at_offset(
                    file,
                    ic.offset,
                    format!("inter-communicator {} refers to undefined group {g}", ic.id),
                ));
            }
        }
        for m in &self.metric_classes.items {
            if let Some(bad) = m.members.iter().find(|&&id| self.metric_members.get(id).is_none()) {
                return Err(FormatError::at_offset(
                    file,
                    m.offset,
                    format!("metric class {} refers to undefined metric member {bad}", m.id),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn big_endian_definitions_decode() {
        let mut data = vec![0x03, 0x23];
        data.extend_from_slice(&1u64.to_be_bytes());
        data.extend_from_slice(&0u64.to_be_bytes());
        // ClockProperties: 1e9 ticks/s, offset 5, length 256 (payload most significant first).
        data.extend_from_slice(&[5, 10, 4, 0x3b, 0x9a, 0xca, 0x00, 1, 5, 2, 1, 0]);
        data.extend_from_slice(&[10, 4, 0, b'a', b'b', 0]);
        data.push(0x02);
        let d = GlobalDefs::parse("be.def", &data, 1 << 20).unwrap();
        assert_eq!(
            (d.clock.timer_resolution, d.clock.global_offset, d.clock.trace_length),
            (1_000_000_000, 5, 256)
        );
        assert_eq!(d.string(0), "ab");
    }

    #[test]
    fn clock_offsets_interpolate_and_extrapolate() {
        let at = |time, offset| ClockOffset {
            time,
            offset,
            stddev: 0.0,
        };
        let l = LocalDefs {
            maps: vec![None; MAPPING_TYPES],
            clock_offsets: vec![at(100, 10), at(200, 30), at(300, 30)],
        };
        assert_eq!(l.correct(100), 110);
        assert_eq!(l.correct(150), 170);
        assert_eq!(l.correct(50), 50 + 10 - 10);
        assert_eq!(l.correct(250), 280);
        assert_eq!(l.correct(400), 430);
        let one = LocalDefs {
            clock_offsets: vec![at(100, 10)],
            ..l
        };
        assert_eq!(one.correct(150), 150);
    }
}
