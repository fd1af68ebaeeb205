//! NPB CG's process grid and transpose partner (cg.f, `setup_submatrix_info`).

/// The process grid NPB CG uses for `ranks` ranks (setparams.c `write_cg_info`): `npcols =
/// 2^⌈log2(ranks)/2⌉`, `nprows = ranks / npcols`; `None` unless `ranks` is a power of two.
pub fn nas_cg_grid(ranks: u32) -> Option<[u32; 2]> {
    if ranks == 0 || !ranks.is_power_of_two() {
        return None;
    }
    let l = ranks.trailing_zeros();
    let cols = 1u32 << l.div_ceil(2);
    Some([ranks / cols, cols])
}

/// Checks NAS CG dimensions: `[nprows, npcols]` as NPB sets them, or the shorthand `[d]` for
/// 2^d ranks on NPB's own grid (as `hypercube:d`).
pub(super) fn nas_cg_dims(dims: &[u32]) -> Result<Vec<u32>, String> {
    match *dims {
        [d] if d <= 30 => Ok(nas_cg_grid(1 << d).expect("power of two").to_vec()),
        [rows, cols]
            if rows >= 1
                && rows.is_power_of_two()
                && cols.is_power_of_two()
                && (cols == rows || Some(cols) == rows.checked_mul(2))
                && rows.checked_mul(cols).is_some_and(|n| n <= 1 << 30) =>
        {
            Ok(vec![rows, cols])
        }
        _ => Err(format!(
            "nas-cg: give NPROWSxNPCOLS (powers of two, npcols = nprows or 2·nprows, e.g. 4x4 or 4x8) \
             or one exponent d for 2^d ranks; got {dims:?}"
        )),
    }
}

/// The transpose partner of `rank` in NPB CG (`exch_proc` in cg.f `setup_submatrix_info`):
/// the transposed position on a square grid; with `npcols = 2·nprows`, ranks go in pairs
/// `(2h, 2h+1)` and pair `h` is transposed on an `nprows × nprows` grid.
pub(super) fn nas_cg_transpose(rows: u32, cols: u32, rank: u32) -> u32 {
    if rows == cols {
        (rank % rows) * rows + rank / rows
    } else {
        let h = rank / 2;
        2 * ((h % rows) * rows + h / rows) + rank % 2
    }
}
