//! A tiny hand encoder of DUMPI `.bin` files for tests that need records the samples do not
//! have (wildcards with statuses, splits with colours and keys, PAPI counters, corrupt data).
//! Included by the other `dumpi_*` tests with `#[path]`; it has no tests of its own.
#![allow(dead_code)]

use tracelogic_formats::InputFile;

/// One argument as stored.
pub enum A {
    /// `i32`
    I(i32),
    /// `u16` handle
    H(u16),
    /// `u8`
    B(u8),
    /// `u64`
    L(u64),
    /// `i32` array
    Arr(Vec<i32>),
    /// statuses: (bytes, source, tag)
    St(Vec<(i32, i32, i32)>),
    /// `str32`
    S(&'static str),
}

/// A `.bin` file under construction.
pub struct Bin {
    pub version: (u8, u8, u8),
    pub body: Vec<u8>,
    pub sizes: Vec<i32>,
    pub perf_labels: Vec<&'static str>,
    pub functions: Vec<(u64, &'static str)>,
    pub wall_bias: u32,
}

impl Default for Bin {
    fn default() -> Self {
        Bin {
            version: (8, 0, 0),
            body: Vec::new(),
            sizes: vec![
                0, 0, 1, 1, 1, 1, 4, 2, 2, 4, 4, 8, 8, 4, 8, 16, 0, 8, 8, 1, 0, 0, 8, 12, 16, 6, 8, 32, 24,
            ],
            perf_labels: Vec::new(),
            functions: Vec::new(),
            wall_bias: 1000,
        }
    }
}

fn be16(v: &mut Vec<u8>, x: u16) {
    v.extend_from_slice(&x.to_be_bytes());
}
fn be32(v: &mut Vec<u8>, x: u32) {
    v.extend_from_slice(&x.to_be_bytes());
}
fn be64(v: &mut Vec<u8>, x: u64) {
    v.extend_from_slice(&x.to_be_bytes());
}
fn str16(v: &mut Vec<u8>, s: &str) {
    be16(v, s.len() as u16);
    v.extend_from_slice(s.as_bytes());
}

impl Bin {
    /// Append a record of call `id` at `t_us` microseconds (wall, lasting 1 µs) on thread 0.
    pub fn call(&mut self, id: u16, t_us: u64, args: &[A]) -> &mut Self {
        self.call_perf(id, t_us, &[], args)
    }

    /// Like [`Bin::call`] with PAPI counter values (at entry, at exit).
    pub fn call_perf(&mut self, id: u16, t_us: u64, perf: &[(u64, u64)], args: &[A]) -> &mut Self {
        let b = &mut self.body;
        be16(b, id);
        b.push(0x4b | if perf.is_empty() { 0 } else { 0x80 });
        be16(b, 0);
        for t in [t_us, t_us + 1] {
            be16(b, (t / 1_000_000) as u16);
            be32(b, (t % 1_000_000) as u32 * 1000);
        }
        if !perf.is_empty() {
            b.push(perf.len() as u8);
            for &(x, y) in perf {
                be64(b, x);
                be64(b, y);
            }
        }
        for a in args {
            match a {
                A::I(x) => be32(b, *x as u32),
                A::H(x) => be16(b, *x),
                A::B(x) => b.push(*x),
                A::L(x) => be64(b, *x),
                A::Arr(v) => {
                    be32(b, v.len() as u32);
                    v.iter().for_each(|&x| be32(b, x as u32));
                }
                A::St(v) => {
                    be32(b, v.len() as u32);
                    for &(bytes, src, tag) in v {
                        be32(b, bytes as u32);
                        be32(b, src as u32);
                        b.push(0);
                        b.push(0);
                        be32(b, tag as u32);
                    }
                }
                A::S(s) => {
                    be32(b, s.len() as u32);
                    b.extend_from_slice(s.as_bytes());
                }
            }
        }
        self
    }

    /// The whole file: magic, body, header, footer, perf labels, sizes, function names, index.
    pub fn finish(&self) -> Vec<u8> {
        let magic = [0xff, 0xaa, 0xdd, 0x44, 0x55, 0x4d, 0x50, 0x49];
        let mut f = magic.to_vec();
        let body = f.len() as u64;
        be32(&mut f, 0);
        be32(&mut f, self.wall_bias);
        f.extend_from_slice(&self.body);
        be16(&mut f, 293);
        let header = f.len() as u64;
        f.extend_from_slice(&[self.version.0, self.version.1, self.version.2]);
        be64(&mut f, 1_700_000_000);
        str16(&mut f, "node0");
        str16(&mut f, "tester");
        be32(&mut f, 0);
        let footer = f.len() as u64;
        be64(&mut f, 0xf007_fee7);
        (0..583).for_each(|_| be32(&mut f, 0));
        let perf = f.len() as u64;
        be32(&mut f, self.perf_labels.len() as u32);
        self.perf_labels.iter().for_each(|l| str16(&mut f, l));
        let sizes = f.len() as u64;
        be32(&mut f, self.sizes.len() as u32);
        self.sizes.iter().for_each(|&s| be32(&mut f, s as u32));
        let funcs = f.len() as u64;
        be32(&mut f, self.functions.len() as u32);
        for &(a, n) in &self.functions {
            be64(&mut f, a);
            str16(&mut f, n);
        }
        f.extend_from_slice(&magic);
        for off in [sizes, funcs, perf, header, body, footer, 0] {
            be64(&mut f, off);
        }
        f
    }
}

/// A trace named `t`: `t.meta` and `t-NNNN.bin` for the given files.
pub fn trace_files(bins: &[Vec<u8>]) -> Vec<InputFile> {
    let mut files = vec![InputFile::new(
        "t.meta",
        format!("hostname=node0\nnumprocs={}\nusername=tester\nstartime=1700000000\nfileprefix=t\nversion=8\nsubversion=0\nsubsubversion=0\n", bins.len()),
    )];
    for (r, b) in bins.iter().enumerate() {
        files.push(InputFile::new(format!("t-{r:04}.bin"), b.clone()));
    }
    files
}

/// Call ids used by the tests.
pub mod id {
    pub const SEND: u16 = 0;
    pub const RECV: u16 = 1;
    pub const ISEND: u16 = 8;
    pub const IRECV: u16 = 12;
    pub const WAIT: u16 = 13;
    pub const TEST: u16 = 14;
    pub const WAITANY: u16 = 16;
    pub const WAITALL: u16 = 18;
    pub const WAITSOME: u16 = 20;
    pub const SENDRECV: u16 = 33;
    pub const BARRIER: u16 = 52;
    pub const BCAST: u16 = 53;
    pub const GATHER: u16 = 54;
    pub const ALLREDUCE: u16 = 65;
    pub const COMM_GROUP: u16 = 72;
    pub const GROUP_EXCL: u16 = 77;
    pub const COMM_DUP: u16 = 84;
    pub const COMM_CREATE: u16 = 85;
    pub const COMM_SPLIT: u16 = 86;
    pub const INIT: u16 = 124;
    pub const FINALIZE: u16 = 125;
    pub const ENTER: u16 = 291;
    pub const EXIT: u16 = 292;
}
