#!/bin/bash
# Records ABINIT 9.6.2 (plane-wave density-functional theory) as Debian ships it (`apt-get install
# abinit abinit-data`: /usr/bin/abinit, unchanged, Open MPI 4.1.4, pseudopotentials from
# /usr/share/abinit/psp), with SST DUMPI preloaded or with tools/otf2-tracer. Nobody tuned
# tracelogic for ABINIT. Run from the repository root:
#
#   tools/record/abinit.sh OUT_DIR [RANKS [--otf2] [--rankfile FILE]]
#
# The input written here (deterministic; ABINIT's first tutorial system): crystalline silicon,
# 2 atoms in the FCC cell (acell 10.26 bohr), LDA Troullier-Martins pseudopotential 14si.pspnc,
# ecut 8 Ha, a 4x4x4 Monkhorst-Pack grid with 4 shifts (10 irreducible k-points), ground-state SCF
# until the total energy changes by less than 1e-8 Ha (toldfe). ABINIT spreads the k-points over
# the ranks (10 k-points on 4 ranks: 3, 3, 2, 2; it says "nkpt*nsppol (10) is not a multiple of
# nproc_spkpt (4)") and sums densities and energies over them every SCF iteration
# (MPI_Allreduce); only rank 0 writes the log, one "ETOT  N" line per SCF iteration. RANKS
# defaults to 4. --rankfile FILE binds the ranks as FILE says (kept as OUT_DIR/rankfile).
#
# ABINIT is Fortran: DUMPI's Fortran wrappers are preloaded too (record.sh --fortran; the build
# with build-dumpi.sh's MPI_Pack fix, DUMPI_PREFIX) and gfortran writes unit 6 unbuffered
# (GFORTRAN_UNBUFFERED_PRECONNECTED=y) so that the iotimes shim dates each line.
#
# Afterwards OUT_DIR holds the trace packed (dumpi.tar.zst or trace.tar.zst; unpacked files
# removed), si.abi (the input), abinit.out (the log on stdout), si.abo (ABINIT's main output;
# the other output files are removed) and the truth in expected/, independently of tracelogic:
#   scf.tsv         the SCF iterations ("ETOT  N" lines of abinit.out: N, total energy, its
#                   change, residuals)
#   dumpi2ascii-counts.txt / otf2-print-counts.txt  calls per function, sends, bytes, receives
#   dumpi2ascii-per-rank.txt / otf2-print-per-rank.txt  per-rank sends, bytes, receives
#   log-times.tsv, log-calls.tsv  the first "ETOT" line, every later one and "Calculation
#                   completed" dated on the trace's clock (iotimes shim, tools/record/iotimes.c),
#                   and the MPI calls between them (tools/record/log-times.py): one SCF
#                   iteration between consecutive ETOT lines.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tools/record/args.sh"
command -v abinit >/dev/null || { echo "abinit.sh: abinit is missing (apt-get install -y abinit abinit-data)" >&2; exit 1; }
[ -f /usr/share/abinit/psp/14si.pspnc ] || { echo "abinit.sh: 14si.pspnc is missing (apt-get install -y abinit-data)" >&2; exit 1; }
[ -n "$rankfile" ] && opts+=(--mpirun-opt "--rankfile $rankfile --report-bindings")
rm -rf "$out"
tmp=$(mktemp -d /tmp/abinit.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
gcc -shared -fPIC -O2 -o "$tmp/libiotimes.so" "$root/tools/record/iotimes.c" -ldl
cat > "$tmp/si.abi" <<'EOF'
# Crystalline silicon, 2 atoms, LDA (ABINIT's first tutorial system): tools/record/abinit.sh
pp_dirpath "/usr/share/abinit/psp"
pseudos "14si.pspnc"
acell 3*10.26
rprim 0.0 0.5 0.5  0.5 0.0 0.5  0.5 0.5 0.0
ntypat 1
znucl 14
natom 2
typat 1 1
xred 0.0 0.0 0.0  0.25 0.25 0.25
ecut 8.0
kptopt 1
ngkpt 4 4 4
nshiftk 4
shiftk 0.5 0.5 0.5  0.5 0.0 0.0  0.0 0.5 0.0  0.0 0.0 0.5
nstep 20
toldfe 1.0d-8
diemac 12.0
EOF
GFORTRAN_UNBUFFERED_PRECONNECTED=y IOTIMES_WRITES=1 IOTIMES_MATCH=stdout \
    "$root/tools/record/record.sh" "$out" "$ranks" --fortran \
    --input "$tmp/si.abi" --preload "$tmp/libiotimes.so" "${opts[@]}" \
    --mpirun-opt "-x IOTIMES_WRITES -x IOTIMES_MATCH -x GFORTRAN_UNBUFFERED_PRECONNECTED" \
    -- abinit si.abi
cd "$out"
[ -n "$rankfile" ] && cp "$rankfile" rankfile
mv stdout.txt abinit.out
rm -f sio_* abinit.log
[ -s stderr.txt ] || rm -f stderr.txt
grep -q 'Calculation completed' abinit.out || { echo "abinit.sh: ABINIT did not finish (abinit.out)" >&2; exit 1; }
"$root/tools/record/rank0-iotimes.sh" .
mkdir -p expected
{
    echo "# SCF iterations (abinit.out): N, total energy (Ha), its change, residuals"
    awk '/^ ETOT +[0-9]/ { $1 = ""; sub(/^ /, ""); gsub(/ +/, "\t"); print }' abinit.out
} > expected/scf.tsv
"$root/tools/record/expected-counts.sh" .
"$root/tools/record/log-times.py" . abinit.out 'first=^ ETOT +1 ' 'etot=^ ETOT +[0-9]+ ' 'end=Calculation completed'
if [ $otf2 = yes ]; then
    tar -cf - trace | zstd -12 -q -T2 -o trace.tar.zst && rm -rf trace
else
    tar -cf - dumpi-*.meta dumpi-*.bin | zstd -12 -q -T2 -o dumpi.tar.zst && rm -f dumpi-*.meta dumpi-*.bin
fi
echo "recorded $out ($(du -sh dumpi.tar.zst trace.tar.zst 2>/dev/null | cut -f1 | tr '\n' ' '))"
