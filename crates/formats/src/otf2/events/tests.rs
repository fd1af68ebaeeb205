use super::*;
use crate::otf2::defs::MAPPING_TYPES;

/// A deterministic pseudo-random sequence (no dependency for the tests).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.below(256) as u8).collect()
    }
}

/// A compressed integer of at most `max` payload bytes, mostly in its common encoding
/// (width 0 to `max`), sometimes too wide or all ones (0xFF); true when common.
fn field(rng: &mut Lcg, max: usize, out: &mut Vec<u8>) -> bool {
    let width = match rng.below(10) {
        0 => 0xFF,
        1 => max + 1 + rng.below((9 - max) as u64) as usize,
        _ => rng.below(max as u64 + 1) as usize,
    };
    out.push(width as u8);
    if width == 0xFF {
        return false;
    }
    out.extend(rng.bytes(width));
    width <= max
}

fn as_kind(hot: Hot) -> EventKind {
    match hot {
        Hot::Enter(region) => EventKind::Enter { region },
        Hot::Leave(region) => EventKind::Leave { region },
        Hot::Request(16, request) => EventKind::MpiIsendComplete { request },
        Hot::Request(_, request) => EventKind::MpiIrecvRequest { request },
        Hot::P2p(id, p) => match id {
            14 => EventKind::MpiSend {
                receiver: p.peer,
                comm: p.comm,
                tag: p.tag,
                length: p.length,
            },
            15 => EventKind::MpiIsend {
                receiver: p.peer,
                comm: p.comm,
                tag: p.tag,
                length: p.length,
                request: p.request,
            },
            18 => EventKind::MpiRecv {
                sender: p.peer,
                comm: p.comm,
                tag: p.tag,
                length: p.length,
            },
            _ => EventKind::MpiIrecv {
                sender: p.peer,
                comm: p.comm,
                tag: p.tag,
                length: p.length,
                request: p.request,
            },
        },
        Hot::Timestamp(_) => unreachable!("timestamps are compared apart"),
    }
}

/// Every hot record, with compressed fields of every width (too wide and all-ones ones
/// too), exact, padded, short and long record lengths, and 0 to 40 bytes of chunk past the
/// window: where the whole-record decoder decodes a record, the general decoder gives the
/// same event and ends at the same byte; every common encoding is decoded whole.
#[test]
fn whole_record_decoding_agrees_with_the_general_decoder() {
    let mut rng = Lcg(0x5eed_07f2);
    let local = LocalDefs {
        maps: vec![None; MAPPING_TYPES],
        clock_offsets: Vec::new(),
    };
    let mut decoded = [0usize; 20];
    for case in 0..200_000 {
        let id = [5u8, 12, 13, 14, 15, 16, 17, 18, 19][rng.below(9) as usize];
        let mut data = vec![0x03, 0x42];
        data.extend([0; 16]);
        let start = data.len();
        data.push(id);
        let common = match id {
            5 => {
                data.extend(rng.bytes(8));
                true
            }
            12 | 13 => field(&mut rng, 4, &mut data),
            16 | 17 => field(&mut rng, 8, &mut data),
            _ => {
                let mut body = Vec::new();
                let mut common = true;
                for max in [4, 4, 4, 8] {
                    common &= field(&mut rng, max, &mut body);
                }
                if id == 15 || id == 19 {
                    common &= field(&mut rng, 8, &mut body);
                }
                match rng.below(8) {
                    0 if !body.is_empty() => {
                        let short = 1 + rng.below(body.len() as u64) as usize;
                        data.push((body.len() - short) as u8);
                        common = false;
                    }
                    1 => {
                        data.push(0xFF);
                        data.extend((body.len() as u64).to_le_bytes());
                        common = false;
                    }
                    2 => {
                        let n = 1 + rng.below(3) as usize;
                        let extra = rng.bytes(n);
                        data.push((body.len() + extra.len()) as u8);
                        body.extend(extra);
                    }
                    _ => data.push(body.len() as u8),
                }
                data.extend(body);
                common
            }
        };
        // The record after a timestamp, so that the general path has an event to stop at.
        if id == 5 {
            data.extend([12, 0]);
        }
        let past_window = rng.below(41) as usize;
        let tail = (start + HOT_WINDOW + past_window).saturating_sub(data.len());
        data.extend(rng.bytes(tail));
        let window: &[u8; HOT_WINDOW] = data[start..start + HOT_WINDOW].try_into().unwrap();
        let hot = decode_hot(window, data.len() - start);
        let mut general = LocationEvents::new("t.evt", &data, 1 << 20, &local).unwrap();
        let record = general.next_record();
        match hot {
            Some((Hot::Timestamp(raw), len)) => {
                assert_eq!(len, 9, "case {case}");
                assert_eq!(record.unwrap(), Some((12, start + 9)), "case {case}");
                assert_eq!(general.raw_time(), raw, "case {case}");
            }
            Some((hot, len)) => {
                assert_eq!(record.unwrap(), Some((id, start)), "case {case}");
                let kind = general.decode(id).unwrap_or_else(|e| panic!("case {case}: {e}"));
                assert_eq!(kind, as_kind(hot), "case {case}: {:02x?}", &data[start..]);
                assert_eq!(general.file.cur.pos, start + len, "case {case}");
            }
            None => assert!(!common, "case {case}: common encoding {:02x?}", &data[start..]),
        }
        if hot.is_some() {
            decoded[id as usize] += 1;
        }
    }
    for id in [5, 12, 13, 14, 15, 16, 17, 18, 19] {
        assert!(
            decoded[id] > 1000,
            "record {id} decoded whole only {} times",
            decoded[id]
        );
    }
}
