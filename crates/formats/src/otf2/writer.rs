//! Native OTF2 writer: a [`Trace`] becomes an archive the official OTF2 library reads (anchor,
//! global definitions, an empty local definition file and an event file per location, chunked).
//!
//! Timestamps are written in nanoseconds (timer resolution 1e9, global offset 0), so reading
//! the archive back gives the same times. Each MPI call becomes `Enter`/`Leave` of a region
//! named after the function, with the MPI event records of its operations inside; call paths
//! become `Enter`/`Leave` of user regions around the calls.

use super::buffer::{CHUNK_HEADER, CHUNK_HEADER_LEN, END_OF_BUFFER, END_OF_CHUNK, END_OF_FILE, LITTLE_ENDIAN};
use super::build::collective_to_enum;
use crate::InputFile;
use std::collections::{HashMap, HashSet};
use tracelogic_model::{
    CallIdx, CallKind, CollectiveOp, P2pDir, Rank, RankTrace, Trace, ANY_SOURCE, NOT_COMPLETED, NO_CALLPATH, NO_ROOT,
};

/// Default chunk size of event files (the OTF2 default, 1 MiB).
const DEFAULT_EVENT_CHUNK: u64 = 1 << 20;
/// Chunk size of definition files (the OTF2 default, 4 MiB).
const DEFINITION_CHUNK: u64 = 4 << 20;
/// Smallest and largest chunk sizes OTF2 accepts.
const MIN_CHUNK: u64 = 256 * 1024;
const MAX_CHUNK: u64 = 16 * 1024 * 1024;
const UNDEFINED: u32 = u32::MAX;

/// Write `trace` as an OTF2 archive: `NAME.otf2`, `NAME.def` and `NAME/<location>.{evt,def}`.
pub fn write(trace: &Trace, name: &str) -> Vec<InputFile> {
    write_with_chunk_size(trace, name, DEFAULT_EVENT_CHUNK)
}

/// [`write`] with a chosen event chunk size (clamped to OTF2's 256 KiB – 16 MiB), e.g. to
/// produce several chunks from a small trace.
pub fn write_with_chunk_size(trace: &Trace, name: &str, chunk_size: u64) -> Vec<InputFile> {
    let chunk_size = chunk_size.clamp(MIN_CHUNK, MAX_CHUNK);
    let mut w = ArchiveWriter::new(trace);
    let locations = w.plan_locations();
    let mut files = Vec::new();
    let mut event_counts = Vec::new();
    for (r, rt) in trace.ranks.iter().enumerate() {
        let n = locations[r].len();
        let mut streams: Vec<EventStream> = (0..n).map(|_| EventStream::default()).collect();
        w.events_of_rank(r as Rank, rt, &mut streams);
        for (li, s) in streams.into_iter().enumerate() {
            let id = locations[r][li].0;
            event_counts.push(s.count);
            files.push(InputFile::new(format!("{name}/{id}.evt"), s.finish(chunk_size)));
            files.push(InputFile::new(format!("{name}/{id}.def"), empty_chunked_file()));
        }
    }
    let (defs, records) = w.definitions(&locations, &event_counts);
    let nloc = event_counts.len() as u64;
    let mut out = vec![
        InputFile::new(format!("{name}.otf2"), anchor(chunk_size, nloc, records)),
        InputFile::new(format!("{name}.def"), defs),
    ];
    out.extend(files);
    out
}

/// [`write`] for archives larger than memory: `trace` written `repeats` times end to end (the
/// events of repetition `k` shifted by `k × period`, `period` = the trace's last timestamp plus
/// 1 µs), one rank at a time. Each file goes to `sink(relative name, bytes)` as soon as it is
/// encoded (a rank's event files first, the anchor and global definitions last), so only one
/// rank's events are held at once whatever `repeats` is: what `tracelogic generate --repeat`
/// uses to write traces of tens of GB on a machine that can hold one repetition. Every
/// repetition is a whole run (its messages matched and its requests completed within it), so
/// the archive reads as one run `repeats` times as long; request ids restart per repetition, as
/// OTF2 allows once a request has completed.
///
/// Complexity: O(repeats × events) time, O(largest rank's events × repeats) memory for the
/// rank being written.
pub fn write_repeated<E>(
    trace: &Trace,
    name: &str,
    repeats: u64,
    mut sink: impl FnMut(&str, &[u8]) -> Result<(), E>,
) -> Result<(), E> {
    let repeats = repeats.max(1);
    let period = trace.span().1.saturating_add(1_000);
    let mut w = ArchiveWriter::new(trace);
    w.end = Some(period.saturating_mul(repeats));
    let locations = w.plan_locations();
    let mut event_counts = Vec::new();
    for (r, rt) in trace.ranks.iter().enumerate() {
        let n = locations[r].len();
        let mut streams: Vec<EventStream> = (0..n).map(|_| EventStream::default()).collect();
        for k in 0..repeats {
            if k == 0 {
                w.events_of_rank(r as Rank, rt, &mut streams);
            } else {
                w.events_of_rank(r as Rank, &shifted(rt, k * period), &mut streams);
            }
        }
        for (li, s) in streams.into_iter().enumerate() {
            let id = locations[r][li].0;
            event_counts.push(s.count);
            sink(&format!("{name}/{id}.evt"), &s.finish(DEFAULT_EVENT_CHUNK))?;
            sink(&format!("{name}/{id}.def"), &empty_chunked_file())?;
        }
    }
    let (defs, records) = w.definitions(&locations, &event_counts);
    let nloc = event_counts.len() as u64;
    sink(&format!("{name}.def"), &defs)?;
    sink(&format!("{name}.otf2"), &anchor(DEFAULT_EVENT_CHUNK, nloc, records))
}

/// `rt` with every timestamp moved `by` nanoseconds later.
fn shifted(rt: &RankTrace, by: u64) -> RankTrace {
    let mut out = rt.clone();
    out.calls.enter.wrapping_add_all(by);
    for m in &mut out.metrics {
        for t in &mut m.time {
            *t += by;
        }
    }
    out.span = out.span.map(|(a, b)| (a + by, b + by));
    out
}

/// Little-endian OTF2 field encoder.
#[derive(Default)]
struct Enc(Vec<u8>);

impl Enc {
    fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }
    fn full64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn full32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn compressed(&mut self, v: u64, all_ones: u64) -> &mut Self {
        if v == 0 {
            self.0.push(0);
        } else if v == all_ones {
            self.0.push(0xFF);
        } else {
            let n = 8 - (v.leading_zeros() / 8) as usize;
            self.0.push(n as u8);
            self.0.extend_from_slice(&v.to_le_bytes()[..n]);
        }
        self
    }
    fn cu32(&mut self, v: u32) -> &mut Self {
        self.compressed(v as u64, u32::MAX as u64)
    }
    fn cu64(&mut self, v: u64) -> &mut Self {
        self.compressed(v, u64::MAX)
    }
    fn ci64(&mut self, v: i64) -> &mut Self {
        if v < 0 {
            self.0.push(8);
            self.0.extend_from_slice(&v.to_le_bytes());
            self
        } else {
            self.compressed(v as u64, u64::MAX)
        }
    }
    fn cstring(&mut self, s: &str) -> &mut Self {
        self.0.extend(s.bytes().filter(|&b| b != 0));
        self.0.push(0);
        self
    }
    /// A record with a length field: id, length, then `fields`.
    fn record(&mut self, id: u8, fields: &Enc) -> &mut Self {
        self.0.push(id);
        let n = fields.0.len();
        if n < 0xFF {
            self.0.push(n as u8);
        } else {
            self.0.push(0xFF);
            self.0.extend_from_slice(&(n as u64).to_le_bytes());
        }
        self.0.extend_from_slice(&fields.0);
        self
    }
}

fn fields(f: impl FnOnce(&mut Enc)) -> Enc {
    let mut e = Enc::default();
    f(&mut e);
    e
}

fn chunk_header(first: u64, last: u64) -> Vec<u8> {
    let mut h = vec![CHUNK_HEADER, LITTLE_ENDIAN];
    h.extend_from_slice(&first.to_le_bytes());
    h.extend_from_slice(&last.to_le_bytes());
    h
}

fn empty_chunked_file() -> Vec<u8> {
    let mut v = chunk_header(1, 0);
    v.extend_from_slice(&[END_OF_FILE, END_OF_BUFFER]);
    v
}

fn anchor(chunk_size_events: u64, locations: u64, definitions: u64) -> Vec<u8> {
    let mut e = Enc::default();
    e.u8(CHUNK_HEADER).u8(LITTLE_ENDIAN).cstring("OTF2");
    e.u8(3).u8(2).u8(3).u8(2).u8(0); // anchor format 3, trace format 2, written as OTF2 3.2.0
    e.full64(chunk_size_events).full64(DEFINITION_CHUNK);
    e.u8(1).u8(1); // POSIX substrate, no compression
    e.full64(locations).full64(definitions);
    e.cstring("").cstring("tracelogic").cstring("");
    e.full32(0); // properties
    e.full64(0x7472_6163_656c_6f67); // trace id
    e.full32(0).full32(0); // snapshots, thumbnails
    e.u8(END_OF_FILE).u8(END_OF_BUFFER).u8(0);
    e.0
}

/// Records of a definition file, cut into chunks of [`DEFINITION_CHUNK`].
struct DefFile {
    out: Vec<u8>,
    chunk_start: usize,
    records: u64,
}

impl DefFile {
    fn new() -> DefFile {
        DefFile {
            out: chunk_header(1, 0),
            chunk_start: 0,
            records: 0,
        }
    }
    fn push(&mut self, id: u8, f: Enc) {
        let mut rec = Enc::default();
        rec.record(id, &f);
        if self.out.len() - self.chunk_start + rec.0.len() + 2 > DEFINITION_CHUNK as usize {
            self.out.push(END_OF_CHUNK);
            self.out.resize(self.chunk_start + DEFINITION_CHUNK as usize, 0);
            self.chunk_start = self.out.len();
            self.out.extend(chunk_header(1, 0));
        }
        self.out.extend_from_slice(&rec.0);
        self.records += 1;
    }
    fn finish(mut self) -> (Vec<u8>, u64) {
        self.out.extend_from_slice(&[END_OF_FILE, END_OF_BUFFER]);
        (self.out, self.records)
    }
}

/// The events of one location, in order, before chunking: records encoded back to back.
#[derive(Default)]
struct EventStream {
    /// Encoded records (without timestamp records).
    data: Vec<u8>,
    /// Per event: timestamp and end offset of its record in `data`.
    events: Vec<(u64, usize)>,
    scratch: Enc,
    count: u64,
    time: u64,
}

impl EventStream {
    fn mark(&mut self, t: u64) {
        let t = t.max(self.time);
        self.time = t;
        self.events.push((t, self.data.len()));
        self.count += 1;
    }

    /// A record whose single compressed field has no length byte (Enter, Leave...).
    fn singleton(&mut self, t: u64, id: u8, f: impl FnOnce(&mut Enc)) {
        let mut e = Enc(std::mem::take(&mut self.data));
        e.u8(id);
        f(&mut e);
        self.data = e.0;
        self.mark(t);
    }

    /// A record with a length byte.
    fn with_length(&mut self, t: u64, id: u8, f: impl FnOnce(&mut Enc)) {
        let mut fields = std::mem::take(&mut self.scratch);
        fields.0.clear();
        f(&mut fields);
        let mut e = Enc(std::mem::take(&mut self.data));
        e.record(id, &fields);
        self.data = e.0;
        self.scratch = fields;
        self.mark(t);
    }

    fn metric(&mut self, t: u64, metric: u32, value: f64) {
        self.with_length(t, id::METRIC, |e| {
            e.cu32(metric).u8(1).u8(10).cu64(value.to_bits());
        });
    }

    /// Lay the events out in chunks: every chunk starts with a header and a timestamp record,
    /// ends with an end-of-chunk record and zero padding; the last one ends the file.
    fn finish(self, chunk_size: u64) -> Vec<u8> {
        let size = chunk_size as usize;
        let mut out = Vec::with_capacity(self.data.len() + self.data.len() / 4 + 64);
        let mut chunk_start = 0;
        let mut first = 1u64;
        let mut n = 0u64;
        let mut last_time: Option<u64> = None;
        let mut start = 0;
        out.extend(chunk_header(0, 0));
        for (t, end) in self.events {
            let rec = &self.data[start..end];
            start = end;
            let ts = if last_time == Some(t) { 0 } else { 9 };
            if out.len() - chunk_start + ts + rec.len() + 2 > size && n >= first {
                out[chunk_start..chunk_start + CHUNK_HEADER_LEN].copy_from_slice(&chunk_header(first, n));
                out.push(END_OF_CHUNK);
                out.resize(chunk_start + size, 0);
                chunk_start = out.len();
                first = n + 1;
                out.extend(chunk_header(0, 0));
                last_time = None;
            }
            if last_time != Some(t) {
                out.push(0x05);
                out.extend_from_slice(&t.to_le_bytes());
                last_time = Some(t);
            }
            out.extend_from_slice(rec);
            n += 1;
        }
        out[chunk_start..chunk_start + CHUNK_HEADER_LEN].copy_from_slice(&chunk_header(first, n));
        out.extend_from_slice(&[END_OF_FILE, END_OF_BUFFER]);
        out
    }
}

/// Event record ids (OTF2's event record ids).
mod id {
    pub const ENTER: u8 = 12;
    pub const LEAVE: u8 = 13;
    pub const MPI_SEND: u8 = 14;
    pub const MPI_ISEND: u8 = 15;
    pub const MPI_ISEND_COMPLETE: u8 = 16;
    pub const MPI_IRECV_REQUEST: u8 = 17;
    pub const MPI_RECV: u8 = 18;
    pub const MPI_IRECV: u8 = 19;
    pub const MPI_COLLECTIVE_BEGIN: u8 = 22;
    pub const MPI_COLLECTIVE_END: u8 = 23;
    pub const METRIC: u8 = 31;
}

/// Items grouped by call index (counting sort; items keep their order within a call).
struct CallIndex {
    starts: Vec<usize>,
    items: Vec<usize>,
}

impl CallIndex {
    fn new(calls: usize, pairs: impl Iterator<Item = (CallIdx, usize)> + Clone) -> CallIndex {
        let mut starts = vec![0usize; calls + 2];
        for (c, _) in pairs.clone() {
            if (c as usize) < calls {
                starts[c as usize + 2] += 1;
            }
        }
        for i in 2..starts.len() {
            starts[i] += starts[i - 1];
        }
        let mut items = vec![0; starts[calls + 1]];
        for (c, i) in pairs {
            if (c as usize) < calls {
                let slot = &mut starts[c as usize + 1];
                items[*slot] = i;
                *slot += 1;
            }
        }
        starts.pop();
        CallIndex { starts, items }
    }
    fn of(&self, call: usize) -> &[usize] {
        &self.items[self.starts[call]..self.starts[call + 1]]
    }
}

/// Region role of an MPI function (appendix C).
fn region_role(name: &str) -> u8 {
    match CallKind::classify(name) {
        k if k.is_p2p() => 28,
        CallKind::Collective => match CollectiveOp::from_name(name) {
            Some(CollectiveOp::Barrier) => 15,
            Some(CollectiveOp::Bcast | CollectiveOp::Scatter | CollectiveOp::Scatterv) => 23,
            Some(CollectiveOp::Gather | CollectiveOp::Gatherv | CollectiveOp::Reduce) => 24,
            Some(CollectiveOp::Other) => 26,
            _ => 25,
        },
        _ => 1,
    }
}

/// Shared state: string table and id assignments.
struct ArchiveWriter<'t> {
    trace: &'t Trace,
    strings: Vec<String>,
    string_ids: HashMap<String, u32>,
    /// Region id of each MPI function (index = function id).
    function_region: Vec<u32>,
    /// Region id of each user region (index = region id).
    user_region: Vec<u32>,
    /// Communicator rank of each member, per communicator.
    local_ranks: Vec<HashMap<Rank, u32>>,
    /// The trace length the clock properties give, when not the trace's own last time
    /// ([`write_repeated`]).
    end: Option<u64>,
}

impl<'t> ArchiveWriter<'t> {
    fn new(trace: &'t Trace) -> ArchiveWriter<'t> {
        let nf = trace.functions.len() as u32;
        ArchiveWriter {
            trace,
            strings: Vec::new(),
            string_ids: HashMap::new(),
            function_region: (0..nf).collect(),
            user_region: (0..trace.regions.len() as u32).map(|r| nf + r).collect(),
            local_ranks: trace
                .comms
                .iter()
                .map(|c| c.members.iter().enumerate().map(|(i, &m)| (m, i as u32)).collect())
                .collect(),
            end: None,
        }
    }

    fn string(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.string_ids.get(s) {
            return i;
        }
        let i = self.strings.len() as u32;
        self.strings.push(s.to_owned());
        self.string_ids.insert(s.to_owned(), i);
        i
    }

    /// Location ids and names per rank: the model's ids when they are unique over the trace,
    /// else a fresh numbering.
    fn plan_locations(&self) -> Vec<Vec<(u64, String)>> {
        let mut plan: Vec<Vec<(u64, String)>> = self
            .trace
            .ranks
            .iter()
            .map(|rt| {
                if rt.locations.is_empty() {
                    vec![(0, "Master thread".to_string())]
                } else {
                    rt.locations.iter().map(|l| (l.id, l.name.clone())).collect()
                }
            })
            .collect();
        let mut seen = HashSet::new();
        let unique = plan.iter().flatten().all(|(id, _)| *id != u64::MAX && seen.insert(*id));
        if !unique {
            for (next, (id, _)) in plan.iter_mut().flatten().enumerate() {
                *id = next as u64;
            }
        }
        plan
    }

    /// The events of every location of rank `r`.
    fn events_of_rank(&mut self, r: Rank, rt: &RankTrace, streams: &mut [EventStream]) {
        let trace = self.trace;
        let calls = &rt.calls;
        let nloc = streams.len();
        let loc_of = |c: usize| {
            let l = calls.location[c] as usize;
            if l < nloc {
                l
            } else {
                0
            }
        };
        // Operations by the call that posts or completes them, and collectives by call.
        let n = calls.len();
        let p = &rt.p2p;
        let posted = CallIndex::new(n, (0..p.len()).map(|i| (p.post[i], i)));
        let completed = CallIndex::new(
            n,
            (0..p.len())
                .filter(|&i| p.complete(i) != p.post[i] && p.complete(i) != NOT_COMPLETED)
                .map(|i| (p.complete(i), i)),
        );
        let collectives = CallIndex::new(n, (0..rt.collectives.len()).map(|i| (rt.collectives.call[i], i)));
        let local_rank = |comm: u32, world: Rank| -> u32 {
            if world == ANY_SOURCE {
                return UNDEFINED;
            }
            self.local_ranks
                .get(comm as usize)
                .and_then(|m| m.get(&world).copied())
                .unwrap_or(UNDEFINED)
        };
        // Metric samples, merged into the first location by time.
        let mut samples: Vec<(u64, u32, f64)> = rt
            .metrics
            .iter()
            .flat_map(|m| m.time.iter().zip(&m.value).map(move |(&t, &v)| (t, m.metric, v)))
            .collect();
        samples.sort_by_key(|s| s.0);
        let mut next_sample = 0;
        let mut paths: Vec<Vec<u32>> = vec![Vec::new(); nloc];
        let mut path_ids: Vec<u32> = vec![NO_CALLPATH; nloc];
        // Request ids (1-based, per rank) of the non-blocking operations, fixed up front so a
        // completion never depends on the order calls are visited.
        let mut next_request = 0u64;
        let requests: Vec<u64> = (0..p.len())
            .map(|k| {
                if p.complete(k) == p.post[k] {
                    0
                } else {
                    next_request += 1;
                    next_request
                }
            })
            .collect();
        for c in 0..calls.len() {
            let l = loc_of(c);
            let (t0, t1) = (calls.enter(c), calls.exit(c));
            let s = &mut streams[l];
            if l == 0 {
                while next_sample < samples.len() && samples[next_sample].0 <= t0 {
                    let (t, m, v) = samples[next_sample];
                    s.metric(t, m, v);
                    next_sample += 1;
                }
            }
            // Move the user call path to this call's.
            if path_ids[l] != calls.callpath[c] {
                path_ids[l] = calls.callpath[c];
                let want: &[u32] = match calls.callpath[c] {
                    NO_CALLPATH => &[],
                    p => trace.callpaths.get(p as usize).map_or(&[], Vec::as_slice),
                };
                let open = &mut paths[l];
                let common = open.iter().zip(want).take_while(|(a, b)| a == b).count();
                while open.len() > common {
                    let reg = self.user_region[open.pop().expect("non-empty") as usize];
                    s.singleton(t0, id::LEAVE, |e| {
                        e.cu32(reg);
                    });
                }
                for &reg in &want[common..] {
                    open.push(reg);
                    let reg = self.user_region[reg as usize];
                    s.singleton(t0, id::ENTER, |e| {
                        e.cu32(reg);
                    });
                }
            }
            let region = self.function_region[calls.func[c] as usize];
            s.singleton(t0, id::ENTER, |e| {
                e.cu32(region);
            });
            let ci = c as CallIdx;
            let mut cur = t0;
            for &k in collectives.of(c) {
                let co = &rt.collectives;
                let comm = co.comm[k];
                let root = if co.root[k] == NO_ROOT {
                    UNDEFINED
                } else {
                    local_rank(comm, co.root[k])
                };
                s.with_length(cur, id::MPI_COLLECTIVE_BEGIN, |_| {});
                s.with_length(t1, id::MPI_COLLECTIVE_END, |e| {
                    e.u8(collective_to_enum(co.op[k]))
                        .cu32(comm)
                        .cu32(root)
                        .cu64(co.bytes_sent[k])
                        .cu64(co.bytes_recv[k]);
                });
                cur = t1;
            }
            for &k in posted.of(c) {
                let peer = local_rank(p.comm[k], p.peer[k]);
                let (comm, tag, bytes) = (p.comm[k], p.tag[k] as u32, p.bytes.at(k));
                let blocking = p.complete(k) == ci;
                match (p.dir[k], blocking) {
                    (P2pDir::Send, true) => s.with_length(cur, id::MPI_SEND, |e| {
                        e.cu32(peer).cu32(comm).cu32(tag).cu64(bytes);
                    }),
                    (P2pDir::Send, false) => {
                        let request = requests[k];
                        s.with_length(cur, id::MPI_ISEND, |e| {
                            e.cu32(peer).cu32(comm).cu32(tag).cu64(bytes).cu64(request);
                        });
                    }
                    (P2pDir::Recv, true) => {
                        cur = t1;
                        s.with_length(cur, id::MPI_RECV, |e| {
                            e.cu32(peer).cu32(comm).cu32(tag).cu64(bytes);
                        });
                    }
                    (P2pDir::Recv, false) => {
                        let request = requests[k];
                        s.singleton(cur, id::MPI_IRECV_REQUEST, |e| {
                            e.cu64(request);
                        });
                    }
                }
            }
            for &k in completed.of(c) {
                let req = requests[k];
                match p.dir[k] {
                    P2pDir::Send => s.singleton(t1, id::MPI_ISEND_COMPLETE, |e| {
                        e.cu64(req);
                    }),
                    P2pDir::Recv => {
                        let peer = local_rank(p.comm[k], p.peer[k]);
                        s.with_length(t1, id::MPI_IRECV, |e| {
                            e.cu32(peer)
                                .cu32(p.comm[k])
                                .cu32(p.tag[k] as u32)
                                .cu64(p.bytes.at(k))
                                .cu64(req);
                        });
                    }
                }
            }
            s.singleton(t1, id::LEAVE, |e| {
                e.cu32(region);
            });
        }
        let end = rt.span.map_or(0, |s| s.1);
        for (t, m, v) in samples.drain(next_sample..) {
            streams[0].metric(t, m, v);
        }
        for (l, open) in paths.iter_mut().enumerate() {
            while let Some(reg) = open.pop() {
                let reg = self.user_region[reg as usize];
                streams[l].singleton(end, id::LEAVE, |e| {
                    e.cu32(reg);
                });
            }
        }
        let _ = r;
    }

    /// The global definition file and its record count.
    fn definitions(&mut self, locations: &[Vec<(u64, String)>], event_counts: &[u64]) -> (Vec<u8>, u64) {
        let trace = self.trace;
        let mut d = DefFile::new();
        let end = self.end.unwrap_or(trace.span().1);
        d.push(
            5,
            fields(|e| {
                e.cu64(1_000_000_000).cu64(0).cu64(end).cu64(0);
            }),
        );
        // Strings first (the official writer does the same); collect every name.
        let empty = self.string("");
        let machine = self.string("machine");
        let mut names = Vec::new();
        for r in 0..trace.ranks.len() {
            names.push(self.string(&format!("MPI Rank {r}")));
        }
        let loc_names: Vec<Vec<u32>> = locations
            .iter()
            .map(|ls| ls.iter().map(|(_, n)| self.string(n)).collect())
            .collect();
        let func_names: Vec<u32> = trace.functions.names().iter().map(|n| self.string(n)).collect();
        let region_names: Vec<u32> = trace.regions.names().iter().map(|n| self.string(n)).collect();
        let metric_names: Vec<u32> = trace.metrics.names().iter().map(|n| self.string(n)).collect();
        let comm_names: Vec<u32> = trace.comms.iter().map(|c| self.string(&c.name)).collect();
        let mpi_locations = self.string("MPI locations");
        for (i, s) in self.strings.iter().enumerate() {
            d.push(
                10,
                fields(|e| {
                    e.cu32(i as u32).cstring(s);
                }),
            );
        }
        d.push(
            12,
            fields(|e| {
                e.cu32(0).cu32(machine).cu32(machine).cu32(UNDEFINED);
            }),
        );
        for (r, &n) in names.iter().enumerate() {
            d.push(
                13,
                fields(|e| {
                    e.cu32(r as u32).cu32(n).u8(1).cu32(0).cu32(UNDEFINED);
                }),
            );
        }
        let mut k = 0;
        for (r, ls) in locations.iter().enumerate() {
            for (li, (id, _)) in ls.iter().enumerate() {
                let events = event_counts[k];
                k += 1;
                d.push(
                    14,
                    fields(|e| {
                        e.cu64(*id).cu32(loc_names[r][li]).u8(1).cu64(events).cu32(r as u32);
                    }),
                );
            }
        }
        for (f, &n) in func_names.iter().enumerate() {
            let role = region_role(trace.functions.name(f as u32));
            let id = self.function_region[f];
            d.push(
                15,
                fields(|e| {
                    e.cu32(id).cu32(n).cu32(empty).u8(0).cu32(UNDEFINED).cu32(0).cu32(0);
                    e.cu32(n).u8(role).u8(4).cu32(0);
                }),
            );
        }
        for (r, &n) in region_names.iter().enumerate() {
            let id = self.user_region[r];
            d.push(
                15,
                fields(|e| {
                    e.cu32(id).cu32(n).cu32(empty).u8(0).cu32(UNDEFINED).cu32(0).cu32(0);
                    e.cu32(n).u8(1).u8(1).cu32(0);
                }),
            );
        }
        for (m, &n) in metric_names.iter().enumerate() {
            d.push(
                19,
                fields(|e| {
                    e.cu32(m as u32)
                        .cu32(n)
                        .cu32(empty)
                        .u8(0)
                        .u8(4)
                        .u8(10)
                        .u8(1)
                        .ci64(0)
                        .cu32(empty);
                }),
            );
        }
        for m in 0..metric_names.len() as u32 {
            d.push(
                20,
                fields(|e| {
                    e.cu32(m).u8(1).cu32(m).u8(1).u8(0);
                }),
            );
        }
        // Group 0: world rank -> location; group 1 + c: members of communicator c.
        d.push(
            18,
            fields(|e| {
                e.cu32(0).cu32(mpi_locations).u8(0).cu32(locations.len() as u32);
                for ls in locations {
                    e.cu64(ls[0].0);
                }
                e.u8(4).u8(4).cu32(0);
            }),
        );
        for (c, comm) in trace.comms.iter().enumerate() {
            d.push(
                18,
                fields(|e| {
                    e.cu32(1 + c as u32).cu32(empty).u8(0).cu32(comm.members.len() as u32);
                    for &m in &comm.members {
                        e.cu64(m as u64);
                    }
                    e.u8(5).u8(4).cu32(0);
                }),
            );
        }
        for (c, &n) in comm_names.iter().enumerate() {
            d.push(
                22,
                fields(|e| {
                    e.cu32(c as u32).cu32(n).cu32(1 + c as u32).cu32(UNDEFINED).cu32(0);
                }),
            );
        }
        // Declared Cartesian topologies: their dimensions, the topology, and the coordinates
        // when the trace recorded them (otherwise readers apply MPI's row-major rule).
        let mut dimension = 0u32;
        for (i, t) in trace.cartesian.iter().enumerate() {
            if t.dims.len() > u8::MAX as usize {
                continue; // OTF2 counts dimensions in one byte
            }
            let first = dimension;
            for (&size, &periodic) in t.dims.iter().zip(&t.periods) {
                d.push(
                    30,
                    fields(|e| {
                        e.cu32(dimension).cu32(empty).cu32(size).u8(periodic as u8);
                    }),
                );
                dimension += 1;
            }
            d.push(
                31,
                fields(|e| {
                    e.cu32(i as u32).cu32(empty).cu32(t.comm).u8(t.dims.len() as u8);
                    for k in first..dimension {
                        e.cu32(k);
                    }
                }),
            );
            if t.coords_recorded {
                for (rank, coords) in t.coords.iter().enumerate() {
                    d.push(
                        32,
                        fields(|e| {
                            e.cu32(i as u32).cu32(rank as u32).u8(coords.len() as u8);
                            for &x in coords {
                                e.cu32(x);
                            }
                        }),
                    );
                }
            }
        }
        d.finish()
    }
}
