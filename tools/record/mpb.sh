#!/bin/bash
# Records MPB 1.11.1 (MIT Photonic Bands: eigenmodes of periodic dielectric structures) as Debian
# ships it (`apt-get install mpb-mpi`: /usr/bin/mpb-mpi, unchanged, Open MPI 4.1.4), with SST
# DUMPI preloaded or with tools/otf2-tracer. Nobody tuned tracelogic for MPB. Run from the
# repository root:
#
#   tools/record/mpb.sh OUT_DIR [RANKS [--otf2] [--rankfile FILE]]
#
# The input written here (deterministic; MPB's tutorial crystal, no example ships with the
# package): a 2-D square lattice of dielectric rods (radius 0.2, epsilon 12) in air, TE bands only
# (`run-te`), 8 bands, resolution 32 (a 32 x 32 grid), the k-points Gamma, X, M, Gamma with 2
# interpolated between each (10 k-points). MPB distributes the grid by slabs of rows over the
# ranks and transforms the fields with FFTW's MPI transforms: every 2-D FFT transposes the grid
# (an all-to-all); the block conjugate-gradient eigensolver also sums dot products over all
# ranks (MPI_Allreduce). It solves the k-points one after the other and prints, from rank 0 only,
# "solve_kpoint (k):", "Finished solving for bands ... after N iterations" and one line
# "tefreqs:, K, ..." per k-point: the natural iterations of the run. The fields start from
# random numbers (the iteration counts per k-point differ a little between recordings: 31 or
# 29 at the first k-point; the frequencies agree to the printed digits). RANKS
# defaults to 4. --rankfile FILE binds the ranks as FILE says (kept as OUT_DIR/rankfile).
#
# Afterwards OUT_DIR holds the trace packed (dumpi.tar.zst or trace.tar.zst; unpacked files
# removed), rods.ctl (the input), mpb.out (the program's output; rods-epsilon.h5 is removed) and
# the truth in expected/, independently of tracelogic:
#   kpoints.tsv     per k-point: its index, the eigensolver's iterations ("Finished solving ...
#                   after N iterations") and the TE frequencies (the "tefreqs:" line)
#   dumpi2ascii-counts.txt / otf2-print-counts.txt  calls per function, sends, bytes, receives
#   dumpi2ascii-per-rank.txt / otf2-print-per-rank.txt  per-rank sends, bytes, receives
#   log-times.tsv, log-calls.tsv  the start of the fields ("Initializing fields"), each k-point's
#                   "solve_kpoint" and "tefreqs:, K" lines and the last "elapsed time" line
#                   dated on the trace's clock (iotimes shim, tools/record/iotimes.c, with
#                   IOTIMES_STDOUT_LINES=1: every line stdio writes to stdout is dated), and the
#                   MPI calls between them (tools/record/log-times.py): k-point K is solved
#                   between its "solve_kpoint" line and its "tefreqs:, K" line.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tools/record/args.sh"
command -v mpb-mpi >/dev/null || { echo "mpb.sh: mpb-mpi is missing (apt-get install -y mpb-mpi)" >&2; exit 1; }
[ -n "$rankfile" ] && opts+=(--mpirun-opt "--rankfile $rankfile --report-bindings")
rm -rf "$out"
tmp=$(mktemp -d /tmp/mpb.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
gcc -shared -fPIC -O2 -o "$tmp/libiotimes.so" "$root/tools/record/iotimes.c" -ldl
cat > "$tmp/rods.ctl" <<'EOF'
; MPB's square lattice of dielectric rods (TE bands), small: tools/record/mpb.sh
(set! num-bands 8)
(set! k-points (list (vector3 0 0 0) (vector3 0.5 0 0) (vector3 0.5 0.5 0) (vector3 0 0 0)))
(set! k-points (interpolate 2 k-points))
(set! geometry (list (make cylinder (center 0 0 0) (radius 0.2) (height infinity)
                           (material (make dielectric (epsilon 12))))))
(set! geometry-lattice (make lattice (size 1 1 no-size)))
(set! resolution 32)
(run-te)
EOF
IOTIMES_WRITES=1 IOTIMES_MATCH=stdout IOTIMES_STDOUT_LINES=1 \
    "$root/tools/record/record.sh" "$out" "$ranks" \
    --input "$tmp/rods.ctl" --preload "$tmp/libiotimes.so" "${opts[@]}" \
    --mpirun-opt "-x IOTIMES_WRITES -x IOTIMES_MATCH -x IOTIMES_STDOUT_LINES" \
    -- mpb-mpi rods.ctl
cd "$out"
[ -n "$rankfile" ] && cp "$rankfile" rankfile
mv stdout.txt mpb.out
rm -f rods-epsilon.h5
[ -s stderr.txt ] || rm -f stderr.txt
grep -q '^tefreqs:, 10,' mpb.out || { echo "mpb.sh: MPB did not solve the 10 k-points (mpb.out)" >&2; exit 1; }
"$root/tools/record/rank0-iotimes.sh" .
mkdir -p expected
{
    echo "# per k-point (mpb.out): index, eigensolver iterations, TE frequencies of bands 1-8"
    awk '/^Finished solving for bands/ { it = $(NF-1) }
         /^tefreqs:, [0-9]/ { sub(/^tefreqs:, /, ""); n = split($0, f, ", "); printf "%s\t%s", f[1], it
                              for (i = 6; i <= n; i++) printf "\t%s", f[i]; printf "\n" }' mpb.out
} > expected/kpoints.tsv
"$root/tools/record/expected-counts.sh" .
"$root/tools/record/log-times.py" . mpb.out 'fields=^Initializing fields' 'kpoint=^solve_kpoint' \
    'freqs=^tefreqs:, [0-9]' 'end=^elapsed time for k point'
if [ $otf2 = yes ]; then
    tar -cf - trace | zstd -12 -q -T2 -o trace.tar.zst && rm -rf trace
else
    tar -cf - dumpi-*.meta dumpi-*.bin | zstd -12 -q -T2 -o dumpi.tar.zst && rm -f dumpi-*.meta dumpi-*.bin
fi
echo "recorded $out ($(du -sh dumpi.tar.zst trace.tar.zst 2>/dev/null | cut -f1 | tr '\n' ' '))"
