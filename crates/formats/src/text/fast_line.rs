//! The fast path through a call line: its words read eight bytes at a time, keys compared as
//! integers, digits converted without a loop per digit; and the name cache.

use super::*;

/// A line of the file for the plain-line fast path, as the file from the line's first byte
/// on: the fast path finds the line's end itself (a `\n`, a `\r\n` or the end of the file, as
/// the general reader's line splitting), and any eight bytes are one load.
///
/// The byte that ends a line (`\r`, `\n` or none) is not a digit, a space or a letter, so a
/// digit run or key read from a word stops at the line's end by itself.
#[derive(Clone, Copy)]
pub(super) struct LineWords<'a> {
    /// The file from the line's first byte on.
    pub(super) rest: &'a [u8],
}

impl<'a> LineWords<'a> {
    /// The line that starts `rest`.
    pub(super) fn new(rest: &'a [u8]) -> LineWords<'a> {
        LineWords { rest }
    }

    /// True when the line ends at `pos`: `\n`, `\r\n`, a `\r` ending the file, or the file's end.
    #[inline(always)]
    pub(super) fn ends_at(&self, pos: usize) -> bool {
        match self.rest.get(pos) {
            None | Some(b'\n') => true,
            Some(b'\r') => matches!(self.rest.get(pos + 1), None | Some(b'\n')),
            _ => false,
        }
    }

    /// True when a token ends at `pos`: a space or the line's end.
    #[inline(always)]
    pub(super) fn token_ends_at(&self, pos: usize) -> bool {
        self.rest.get(pos) == Some(&b' ') || self.ends_at(pos)
    }

    /// `pos` when the byte there is a space.
    #[inline(always)]
    pub(super) fn space_at(&self, pos: usize) -> Option<usize> {
        (self.rest.get(pos) == Some(&b' ')).then_some(pos)
    }

    /// True when the line continues at `pos` with `text` (which holds no line end).
    #[inline(always)]
    pub(super) fn has_at(&self, pos: usize, text: &[u8]) -> bool {
        self.rest.get(pos..).is_some_and(|r| r.starts_with(text))
    }

    /// Eight bytes of the file from the line's byte `pos` on, as a little-endian word (the
    /// first byte lowest); zero bytes past the end of the file.
    #[inline(always)]
    pub(super) fn word(&self, pos: usize) -> u64 {
        match self.rest.get(pos..pos + 8) {
            Some(bytes) => {
                let mut w = [0u8; 8];
                w.copy_from_slice(bytes);
                u64::from_le_bytes(w)
            }
            None => self.last_word(pos),
        }
    }

    /// [`LineWords::word`] within eight bytes of the end of the file.
    #[cold]
    #[inline(never)]
    pub(super) fn last_word(&self, pos: usize) -> u64 {
        let mut w = [0u8; 8];
        let rest = self.rest.get(pos..).unwrap_or(&[]);
        w[..rest.len()].copy_from_slice(rest);
        u64::from_le_bytes(w)
    }
}

pub(super) const ONES: u64 = 0x0101_0101_0101_0101;
pub(super) const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// Number of leading ASCII digits in the word `w` (0 to 8).
#[inline(always)]
pub(super) fn leading_digits(w: u64) -> u32 {
    // A byte is a digit when its high nibble is 3 and stays 3 after adding 6. A carry out of a
    // byte can only come from a non-digit, so it only disturbs bytes after the first one.
    let high = w & 0xF0F0_F0F0_F0F0_F0F0;
    let high_plus_6 = w.wrapping_add(6 * ONES) & 0xF0F0_F0F0_F0F0_F0F0;
    let not_digit = (high ^ (0x30 * ONES)) | (high_plus_6 ^ (0x30 * ONES));
    not_digit.trailing_zeros() / 8
}

/// Bytes of the word `w` before its first byte below `!` (a space, a control byte such as
/// `\r` or `\n`, or the zero bytes past the end of the file); 8 when there is none.
#[inline(always)]
pub(super) fn bytes_before_space_or_control(w: u64) -> u32 {
    // Exact at the lowest such byte: a borrow only comes out of a byte that is one.
    (w.wrapping_sub(0x21 * ONES) & !w & HIGH_BITS).trailing_zeros() / 8
}

/// Value of the first `n` (1 to 8) bytes of `w`, all ASCII digits, the first one most
/// significant (the eight-digit multiply-and-shift reduction).
#[inline(always)]
pub(super) fn digits_value(w: u64, n: u32) -> u64 {
    // Shift the digits to the top of the word: the zero bytes below read as leading zeros.
    let w = (w << (8 * (8 - n))) & 0x0F0F_0F0F_0F0F_0F0F;
    let w = w.wrapping_mul(10 * 256 + 1) >> 8;
    let w = (w & 0x00FF_00FF_00FF_00FF).wrapping_mul(100 * 65_536 + 1) >> 16;
    (w & 0x0000_FFFF_0000_FFFF).wrapping_mul(10_000 * (1 << 32) + 1) >> 32
}

/// Powers of ten up to 10^8, to append a run of digits to a value.
pub(super) const POW10: [u64; 9] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000];

/// Digits at `pos` up to the next non-digit (1 to 19 of them, so they fit a u64), or `None`.
#[inline(always)]
pub(super) fn fast_digits(b: LineWords, pos: &mut usize) -> Option<u64> {
    let w = b.word(*pos);
    let n = leading_digits(w);
    if n == 0 {
        return None;
    }
    *pos += n as usize;
    let v = digits_value(w, n);
    if n < 8 || !b.rest.get(*pos).is_some_and(u8::is_ascii_digit) {
        Some(v)
    } else {
        more_digits(b, pos, v)
    }
}

/// [`fast_digits`] past its first eight digits `v`.
#[inline(never)]
pub(super) fn more_digits(b: LineWords, pos: &mut usize, mut v: u64) -> Option<u64> {
    for max in [8, 3] {
        let w = b.word(*pos);
        let n = leading_digits(w);
        if n > max {
            // A 20th digit may not fit: the general parser decides.
            return None;
        }
        if n > 0 {
            *pos += n as usize;
            v = v * POW10[n as usize] + digits_value(w, n);
        }
        if n < 8 {
            return Some(v);
        }
    }
    Some(v)
}

/// A whole value of digits ending the token (at a space or the end of the line).
#[inline(always)]
pub(super) fn fast_value(b: LineWords, pos: &mut usize) -> Option<u64> {
    let v = fast_digits(b, pos)?;
    b.token_ends_at(*pos).then_some(v)
}

impl Reader<'_> {
    /// A rank of this trace written in plain digits ending the token.
    #[inline]
    pub(super) fn fast_rank(&self, b: LineWords, pos: &mut usize) -> Option<Rank> {
        let r = fast_value(b, pos)?;
        (r < u64::from(self.trace.num_ranks())).then_some(r as Rank)
    }

    /// The fast path for call lines in the writer's plain form: `R ENTER EXIT FUNC` with times in
    /// plain nanoseconds, single spaces, and only the keys `send= recv= tag= bytes= req= coll=
    /// root= sent= recvd= wait=` with plain values (no quotes, units, `any` tags on collectives,
    /// comments or other keys). Fields are decoded by byte scanning into the same items the
    /// general parser builds and appended by the same [`Reader::commit`]; with the result comes
    /// the line's length (without its `\r\n` or `\n`). `None` when the line is anything else or
    /// a value the general parser would refuse: nothing has changed then, and the general parser
    /// reads the line and words any error.
    pub(super) fn fast_call(&mut self, words: LineWords) -> Option<(Result<(), String>, usize)> {
        let b = words.rest;
        let mut pos = 0usize;
        // Each of the three numbers is followed by a space: the line goes on to the name.
        let r = self.fast_rank(words, &mut pos)?;
        pos = words.space_at(pos)? + 1;
        let enter = fast_value(words, &mut pos)?;
        pos = words.space_at(pos)? + 1;
        let exit = fast_value(words, &mut pos)?;
        pos = words.space_at(pos)? + 1;
        if exit < enter {
            return None;
        }
        let name_start = pos;
        let name = ShortName::at(words, pos);
        let cached = name.and_then(|n| self.names.get(&n));
        if cached.is_some() {
            // The same bytes as a name an earlier line validated.
            pos += name.map_or(0, |n| n.len as usize);
        } else {
            while !words.token_ends_at(pos) {
                let c = b[pos];
                if !(c.is_ascii_alphanumeric() || c == b'_') {
                    return None;
                }
                pos += 1;
            }
            if pos == name_start {
                return None;
            }
        }
        let name_end = pos;
        let mut waits = std::mem::take(&mut self.waits);
        waits.clear();
        self.items.clear();
        let Some(line_len) = self.fast_keys(words, pos, &mut waits) else {
            self.waits = waits;
            return None;
        };
        let (func, kind) = match cached {
            Some(hit) => hit,
            None => {
                let func_name = std::str::from_utf8(&b[name_start..name_end]).ok()?;
                let func = self.func_id(func_name);
                let kind = self.kinds[func as usize];
                if let Some(n) = name {
                    self.names.put(n, func, kind);
                }
                (func, kind)
            }
        };
        if kind == CallKind::Collective && self.items.is_empty() {
            self.items.push(Item::Coll {
                op: None,
                comm: COMM_WORLD,
                root: NO_ROOT,
                sent: 0,
                recvd: 0,
            });
        }
        self.fast_lines += 1;
        Some((self.commit(r, enter, exit, func, kind, 0, NO_CALLPATH, waits), line_len))
    }

    /// The `key=value` tokens of a plain call line from `pos` into `self.items` and `waits`, and
    /// the line's length; `None` at anything the fast path leaves to the general parser.
    pub(super) fn fast_keys(&mut self, words: LineWords, mut pos: usize, waits: &mut Vec<u64>) -> Option<usize> {
        let b = words.rest;
        while !words.ends_at(pos) {
            // The space, the key and its `=` (at most 7 bytes) are compared with each key the
            // fast path takes as one integer: what follows the key is found without a search.
            let w = words.word(pos);
            let (key, key_len) = match w & LOW_6_BYTES {
                SPACED_SEND => (KEY_SEND, 6),
                SPACED_RECV => (KEY_RECV, 6),
                SPACED_WAIT => (KEY_WAIT, 6),
                SPACED_COLL => (KEY_COLL, 6),
                SPACED_ROOT => (KEY_ROOT, 6),
                SPACED_SENT => (KEY_SENT, 6),
                _ => match w & LOW_5_BYTES {
                    SPACED_TAG => (KEY_TAG, 5),
                    SPACED_REQ => (KEY_REQ, 5),
                    _ => match w & LOW_7_BYTES {
                        SPACED_BYTES => (KEY_BYTES, 7),
                        SPACED_RECVD => (KEY_RECVD, 7),
                        _ => return None,
                    },
                },
            };
            pos += key_len;
            match key {
                KEY_SEND | KEY_RECV => {
                    let peer = if words.has_at(pos, b"any") && words.token_ends_at(pos + 3) {
                        pos += 3;
                        ANY_SOURCE
                    } else {
                        self.fast_rank(words, &mut pos)?
                    };
                    let dir = if key == KEY_SEND { P2pDir::Send } else { P2pDir::Recv };
                    // The writer follows a peer with ` tag=`, ` bytes=` and, for a non-blocking
                    // call, ` req=`: take those in that order by comparing the literal keys
                    // (what the loop below would do with them, without finding each key's end).
                    let (mut tag, mut bytes, mut req) = (0, 0, None);
                    if words.word(pos) & LOW_5_BYTES == SPACED_TAG {
                        pos += 5;
                        tag = fast_tag(words, &mut pos)?;
                        if words.word(pos) & LOW_7_BYTES == SPACED_BYTES {
                            pos += 7;
                            bytes = fast_value(words, &mut pos)?;
                            if words.word(pos) & LOW_5_BYTES == SPACED_REQ {
                                pos += 5;
                                req = Some(fast_value(words, &mut pos)?);
                            }
                        }
                    }
                    self.items.push(Item::P2p {
                        dir,
                        peer,
                        tag,
                        comm: COMM_WORLD,
                        bytes,
                        req,
                        done: None,
                    });
                }
                KEY_TAG => {
                    let v = fast_tag(words, &mut pos)?;
                    match self.items.last_mut()? {
                        Item::P2p { tag, .. } => *tag = v,
                        Item::Coll { .. } => return None,
                    }
                }
                KEY_BYTES => {
                    let v = fast_value(words, &mut pos)?;
                    match self.items.last_mut()? {
                        Item::P2p { bytes, .. } => *bytes = v,
                        Item::Coll { sent, recvd, .. } => {
                            *sent = v;
                            *recvd = v;
                        }
                    }
                }
                KEY_REQ => {
                    let v = fast_value(words, &mut pos)?;
                    match self.items.last_mut()? {
                        Item::P2p { req, .. } => *req = Some(v),
                        Item::Coll { .. } => return None,
                    }
                }
                KEY_SENT | KEY_RECVD => {
                    let v = fast_value(words, &mut pos)?;
                    match self.items.last_mut()? {
                        Item::Coll { sent, .. } if key == KEY_SENT => *sent = v,
                        Item::Coll { recvd, .. } => *recvd = v,
                        Item::P2p { .. } => return None,
                    }
                }
                KEY_WAIT => loop {
                    waits.push(fast_digits(words, &mut pos)?);
                    if b.get(pos) == Some(&b',') {
                        pos += 1;
                    } else if words.token_ends_at(pos) {
                        break;
                    } else {
                        return None;
                    }
                },
                KEY_ROOT => {
                    let rank = self.fast_rank(words, &mut pos)?;
                    match self.items.last_mut()? {
                        Item::Coll { root, .. } => *root = rank,
                        Item::P2p { .. } => return None,
                    }
                }
                KEY_COLL => {
                    let mut end = pos;
                    while !words.token_ends_at(end) {
                        end += 1;
                    }
                    let name = &b[pos..end];
                    let op = COLLECTIVE_OPS.iter().find(|(n, _)| n.as_bytes() == name)?.1;
                    pos = end;
                    self.items.push(Item::Coll {
                        op: Some(op),
                        comm: COMM_WORLD,
                        root: NO_ROOT,
                        sent: 0,
                        recvd: 0,
                    });
                }
                _ => return None,
            }
        }
        Some(pos)
    }
}

/// The value of a `tag=` key: `any` or an `i32` in plain digits, ending the token.
#[inline(always)]
pub(super) fn fast_tag(b: LineWords, pos: &mut usize) -> Option<i32> {
    if b.has_at(*pos, b"any") {
        *pos += 3;
        return b.token_ends_at(*pos).then_some(ANY_TAG);
    }
    i32::try_from(fast_value(b, pos)?).ok()
}

pub(super) const LOW_5_BYTES: u64 = (1 << 40) - 1;
pub(super) const LOW_6_BYTES: u64 = (1 << 48) - 1;
pub(super) const LOW_7_BYTES: u64 = (1 << 56) - 1;

/// The bytes of a key (at most 8) as the little-endian integer [`LineWords::word`] reads them as.
pub(super) const fn key_word(key: &[u8]) -> u64 {
    let mut w = 0u64;
    let mut i = 0;
    while i < key.len() {
        w |= (key[i] as u64) << (8 * i);
        i += 1;
    }
    w
}

pub(super) const KEY_SEND: u64 = key_word(b"send");
pub(super) const KEY_RECV: u64 = key_word(b"recv");
pub(super) const KEY_TAG: u64 = key_word(b"tag");
pub(super) const KEY_BYTES: u64 = key_word(b"bytes");
pub(super) const KEY_REQ: u64 = key_word(b"req");
pub(super) const KEY_SENT: u64 = key_word(b"sent");
pub(super) const KEY_RECVD: u64 = key_word(b"recvd");
pub(super) const KEY_WAIT: u64 = key_word(b"wait");
pub(super) const KEY_ROOT: u64 = key_word(b"root");
pub(super) const KEY_COLL: u64 = key_word(b"coll");

/// Each key with the space before it and its `=`, as [`LineWords::word`] reads them.
pub(super) const SPACED_SEND: u64 = key_word(b" send=");
pub(super) const SPACED_RECV: u64 = key_word(b" recv=");
pub(super) const SPACED_WAIT: u64 = key_word(b" wait=");
pub(super) const SPACED_COLL: u64 = key_word(b" coll=");
pub(super) const SPACED_ROOT: u64 = key_word(b" root=");
pub(super) const SPACED_SENT: u64 = key_word(b" sent=");
pub(super) const SPACED_TAG: u64 = key_word(b" tag=");
pub(super) const SPACED_REQ: u64 = key_word(b" req=");
pub(super) const SPACED_BYTES: u64 = key_word(b" bytes=");
pub(super) const SPACED_RECVD: u64 = key_word(b" recvd=");

/// A function name of 1 to 16 bytes as two little-endian words (zero bytes after the name)
/// and its length: the key of [`NameCache`].
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct ShortName {
    pub(super) lo: u64,
    pub(super) hi: u64,
    pub(super) len: u32,
}

impl ShortName {
    /// The bytes at `pos` up to the next space, control byte or the end of the file, if 1 to
    /// 16. A plain name ends at a space or the line's end, both such bytes; a cached name
    /// (letters, digits and `_`) matches only when the name is those bytes, and the caller then
    /// checks what follows.
    #[inline(always)]
    pub(super) fn at(b: LineWords, pos: usize) -> Option<ShortName> {
        let below = |n: u32| if n >= 8 { u64::MAX } else { (1u64 << (8 * n)) - 1 };
        let lo = b.word(pos);
        let n = bytes_before_space_or_control(lo);
        if n < 8 {
            return (n > 0).then_some(ShortName {
                lo: lo & below(n),
                hi: 0,
                len: n,
            });
        }
        let hi = b.word(pos + 8);
        let m = bytes_before_space_or_control(hi);
        (m < 8).then_some(ShortName {
            lo,
            hi: hi & below(m),
            len: 8 + m,
        })
    }
}

/// Slots of [`NameCache`] (a power of two).
pub(super) const NAME_CACHE_SLOTS: usize = 64;

/// Function names of up to 16 bytes that plain call lines used, with their id and kind,
/// direct-mapped by a hash of the name's words: a call line's name costs two word compares
/// instead of hashing and comparing its bytes in the function map. Filled only after the
/// function map answered, so it never holds a name the map does not.
pub(super) struct NameCache {
    pub(super) slots: [Option<(ShortName, FuncId, CallKind)>; NAME_CACHE_SLOTS],
}

impl NameCache {
    pub(super) fn new() -> NameCache {
        NameCache {
            slots: [None; NAME_CACHE_SLOTS],
        }
    }

    #[inline(always)]
    pub(super) fn slot(name: &ShortName) -> usize {
        let h = (name.lo ^ name.hi.rotate_left(29) ^ u64::from(name.len)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> 58) as usize % NAME_CACHE_SLOTS
    }

    /// The function id and kind of `name`, if it is cached.
    #[inline(always)]
    pub(super) fn get(&self, name: &ShortName) -> Option<(FuncId, CallKind)> {
        match self.slots[Self::slot(name)] {
            Some((n, func, kind)) if n == *name => Some((func, kind)),
            _ => None,
        }
    }

    /// Caches `name` as function `func` of kind `kind` (replacing whatever shared its slot).
    pub(super) fn put(&mut self, name: ShortName, func: FuncId, kind: CallKind) {
        self.slots[Self::slot(&name)] = Some((name, func, kind));
    }
}
