//! Sizes of user datatypes as a rank's records build them.
//!
//! A DUMPI file ends with one size per datatype handle, but libdumpi registers a handle's size
//! only the first time it sees the handle (`libdumpi_register_datatype_size`), and MPI reuses a
//! freed datatype's handle for the next one created: a program that builds, uses and frees a
//! datatype per message (BLACS builds an `MPI_Type_vector` for every block it sends) leaves
//! the size of the first type under every later one, so the table alone sizes those messages
//! wrongly. The records of the type constructors carry what the size is made of (count, block
//! length, old types), so the reader follows them in record order: after
//! `MPI_Type_vector(count, blocklength, stride, old, new)` the handle `new` has
//! `count · blocklength · size(old)` bytes until it is built again. `MPI_Type_size` records
//! and `MPI_Type_match_size` records give the size itself. Constructors whose size the record does not determine
//! (`MPI_Type_create_darray`) keep the table's size.

use super::Record;

/// The size in bytes that a type-constructor record gives its new handle, or `None` when the
/// record builds no datatype or does not determine its size; `size` is the current size of a
/// handle. Sizes saturate; negative counts count as 0.
pub(crate) fn constructed_size(rec: &Record, size: impl Fn(u16) -> u64) -> Option<(u16, u64)> {
    let int = |n: &str| rec.int(n).map(|v| v.max(0) as u64);
    let ints = |n: &str| rec.ints(n);
    let sum = |n: &str| ints(n).map(|v| v.iter().map(|&x| x.max(0) as u64).fold(0u64, u64::saturating_add));
    // An old type of unknown size (0: made where no call was recorded, as by Fortran bindings
    // that call PMPI directly) leaves the new handle's table size in place.
    let known = |t: u16| Some(size(t)).filter(|&s| s > 0);
    let old = || known(rec.int("oldtype")? as u16);
    let (handle, bytes) = match rec.spec().name {
        // `MPI_Type_match_size` answers a type of `size` bytes (Fortran's kind types: Quantum
        // ESPRESSO builds its vectors on them).
        "Type_size" | "Type_match_size" => (rec.int("datatype")?, int("size")?),
        "Type_contiguous" => (rec.int("newtype")?, int("count")?.saturating_mul(old()?)),
        "Type_vector" | "Type_hvector" | "Type_create_hvector" | "Type_create_indexed_block" => (
            rec.int("newtype")?,
            int("count")?.saturating_mul(int("blocklength")?).saturating_mul(old()?),
        ),
        "Type_indexed" | "Type_hindexed" => (rec.int("newtype")?, sum("lengths")?.saturating_mul(old()?)),
        "Type_create_hindexed" => (rec.int("newtype")?, sum("blocklengths")?.saturating_mul(old()?)),
        "Type_struct" | "Type_create_struct" => {
            let lengths = ints(if rec.spec().name == "Type_struct" {
                "lengths"
            } else {
                "blocklengths"
            })?;
            let types = ints("oldtypes")?;
            if lengths.len() != types.len() {
                return None;
            }
            let mut bytes = 0u64;
            for (&l, &t) in lengths.iter().zip(types) {
                bytes = bytes.saturating_add((l.max(0) as u64).saturating_mul(known(t as u16)?));
            }
            (rec.int("newtype")?, bytes)
        }
        "Type_create_subarray" => {
            let sub = ints("subsizes")?;
            let elements = sub.iter().map(|&x| x.max(0) as u64).fold(1u64, u64::saturating_mul);
            (rec.int("newtype")?, elements.saturating_mul(old()?))
        }
        "Type_dup" | "Type_create_resized" => (rec.int("newtype")?, old()?),
        _ => return None,
    };
    Some((handle as u16, bytes))
}

/// Apply a type-constructor record to `sizes` (indexed by handle, grown as needed).
pub(crate) fn follow_constructor(rec: &Record, sizes: &mut Vec<u64>) {
    let found = constructed_size(rec, |h| sizes.get(h as usize).copied().unwrap_or(0));
    if let Some((handle, bytes)) = found {
        let h = handle as usize;
        if h >= sizes.len() {
            sizes.resize(h + 1, 0);
        }
        sizes[h] = bytes;
    }
}
