#!/bin/bash
# Records hypre's own examples (multigrid solvers) as held-out runs, kept OUTSIDE the repository
# and never used to tune anything (docs/corpus.md, "Held-out check"): the example programs of
# hypre 2.26.0 (tag v2.26.0 of hypre-space/hypre, the version Debian ships: `apt-get install -y
# libhypre-dev`), built unchanged with mpicc against Debian's libHYPRE (-lHYPRE -lm), on Open MPI,
# with SST DUMPI preloaded or with tools/otf2-tracer. Nobody tuned tracelogic for hypre. Nothing is
# downloaded here; get the examples' sources first, e.g. from a mirror of hypre-space/hypre:
#
#   git --git-dir=HYPRE.git archive v2.26.0 src/examples | tar x --strip-components=2 -C EXAMPLES
#
# then, from the repository root:
#
#   tools/record/hypre.sh EXAMPLES [OUT_ROOT [RUN...]]   (default /work/heldout/runs, every run)
#   tools/record/check-heldout.py OUT_ROOT hypre-...      (one table)
#
# EXAMPLES is the folder holding ex3.c, ex5.c and ex.h. Runs already present are skipped, so it can
# be interrupted and rerun. A run's name says what it is: hypre-PROG-NP[-otf2][-rankfile], DUMPI
# unless `-otf2`, `-rankfile` under an Open MPI rankfile (the permutation of heldout.sh's
# `rankfile`: the placement changes, not the numbering; kept as RUN/rankfile, stderr.txt has
# --report-bindings). PROG is (inputs fixed here, so every recording computes the same thing):
#   ex3     ex3.c, Struct interface: 5-point Laplacian, 33 x 33 cells per rank on an N x N process
#           grid (NP = N^2; rank r is at pi = r % N, pj = r / N, its box [pi*33, pi*33+32] x
#           [pj*33, pj*33+32]), `-n 33 -solver 0`: PCG (print level 2: one line per iteration)
#           preconditioned by one SMG V-cycle (1 pre, 1 post relaxation).
#   ex3smg  the same with `-solver 1`: SMG alone as the solver.
#   ex5     ex5.c, IJ interface: the same Laplacian on one 33 x 33 grid (1089 rows) split into
#           contiguous row blocks (rank r: rows r*L + min(r, E) .. , L = 1089 / NP, E = the
#           remainder), `-n 33 -solver 0`: BoomerAMG alone (print level 3: set-up levels, one
#           line per V-cycle; Gaussian elimination on the coarsest level).
# Every run must print "Iterations = " or the script stops naming it (its output moved to /tmp).
#
# A run's folder: command.txt, versions.txt, the example's source, hypre.out (the program's
# output), the trace packed (dumpi.tar.zst or trace.tar.zst; the unpacked files are removed) and
# the truth in expected/, independently of tracelogic:
#   hypre-log.txt   the process grid and each rank's box (ex3) or rows (ex5), computed here from
#                   the source's formulas; "Iterations = N", the final relative residual norm and
#                   the number of iteration lines printed (PCG's, SMG's or AMG's cycles); for ex5
#                   BoomerAMG's levels (rows per level)
#   dumpi2ascii-counts.txt / otf2-print-counts.txt  calls per function, sends, bytes, receives
#   dumpi2ascii-per-rank.txt / otf2-print-per-rank.txt  per-rank sends, bytes, receives
# and OUT_ROOT/hypre-pairs.txt lists pairs with their expected `compare` verdict (the format of
# check-heldout.py's pairs.txt; copy or link it as pairs.txt to check them).
#
# Needs mpicc and Open MPI (4.1.4 tested; `--rankfile FILE`, not `--rankfile=FILE`), libhypre-dev,
# SST DUMPI (tools/record/build-dumpi.sh; DUMPI_PREFIX), the OTF2 tracer (tools/otf2-tracer/build.sh;
# OTF2_TRACER), otf2-print (apt: otf2-tools) and zstd. Takes about a minute on 2 cores.
set -eu
usage() { echo "usage: hypre.sh EXAMPLES [OUT_ROOT [RUN...]]" >&2; exit 2; }
[ $# -ge 1 ] || usage
root=$(cd "$(dirname "$0")/../.." && pwd)
rec=$root/tools/record
# shellcheck source=tools/record/runs.sh
. "$rec/runs.sh"
src=$1
shift
out=${1:-/work/heldout/runs}
[ $# -gt 0 ] && shift
only=$*
for f in ex3.c ex5.c ex.h; do
    [ -f "$src/$f" ] || { echo "hypre.sh: $src/$f missing (EXAMPLES is hypre's src/examples)" >&2; exit 2; }
done
src=$(cd "$src" && pwd)
[ -f /usr/include/hypre/HYPRE.h ] || { echo "hypre.sh: hypre is missing (apt-get install -y libhypre-dev)" >&2; exit 1; }

runs="hypre-ex3-4 hypre-ex3-4-rankfile hypre-ex3-9-otf2 hypre-ex3smg-4-otf2 \
hypre-ex5-4 hypre-ex5-8-otf2 hypre-ex5-9-otf2 hypre-ex5-4-otf2-rankfile"
select_runs hypre

build_dir hypre
fail() { echo "hypre.sh: $1" >&2; exit 1; }

for e in ex3 ex5; do
    mpicc -O2 -I/usr/include/hypre -I"$src" -o "$build/$e" "$src/$e.c" -lHYPRE -lm || fail "building $e failed"
done
commit=$(cat "$src/.commit" 2>/dev/null || echo "v2.26.0")

# The truth from the program's own output and its source's formulas (see the top of this file).
truth() { # prog np hypre.out
    local prog=$1 np=$2 log=$3
    echo "# From hypre.out (the program's output) and the example's source; hypre.sh."
    echo "program: $prog, $np ranks"
    case $prog in
    ex3*)
        awk -v P="$np" -v n=33 'BEGIN {
            N = int(sqrt(P) + 0.5)
            printf "process grid: %d x %d (pi = r %% %d, pj = r / %d), %d x %d cells per rank\n", N, N, N, N, n, n
            for (r = 0; r < P; r++) {
                pj = int(r / N); pi = r - pj * N; nb = ""
                if (pi > 0) nb = nb " " (r - 1); if (pi < N - 1) nb = nb " " (r + 1)
                if (pj > 0) nb = nb " " (r - N); if (pj < N - 1) nb = nb " " (r + N)
                printf "rank %d: (pi,pj) = (%d,%d) box [%d,%d] x [%d,%d] 5-point neighbours:%s\n", r, pi, pj, pi * n, pi * n + n - 1, pj * n, pj * n + n - 1, nb
            } }'
        if [ "$prog" = ex3 ]; then
            echo "PCG iteration lines: $(grep -cE '^ +[0-9]+ +[0-9.e+-]+ +[0-9.e+-]+ +[0-9.e+-]+$' "$log")"
        fi ;;
    ex5*)
        awk -v P="$np" -v n=33 'BEGIN {
            N = n * n; L = int(N / P); E = N - L * P
            printf "rows: %d (a %d x %d grid, row = j * %d + i), contiguous blocks of %d or %d\n", N, n, n, n, L, L + 1
            for (r = 0; r < P; r++) {
                lo = L * r + (r < E ? r : E); hi = L * (r + 1) + (r + 1 < E ? r + 1 : E) - 1
                nb = ""; if (r > 0) nb = nb " " (r - 1); if (r < P - 1) nb = nb " " (r + 1)
                printf "rank %d: rows %d..%d (%d) fine-grid neighbours:%s\n", r, lo, hi, hi - lo + 1, nb
            } }'
        grep -E '^ Num levels' "$log"
        sed -n '/^Operator Matrix Information/,/^Interpolation Matrix Information/p' "$log" |
            awk '/^ +[0-9]+ +[0-9]+ / { print "level " $1 ": " $2 " rows" }'
        echo "AMG cycle lines: $(grep -cE '^ +Cycle +[0-9]+ ' "$log")" ;;
    esac
    grep -E '^Iterations = |^Final Relative Residual Norm = ' "$log"
}

for name in $todo; do
    b=${name#hypre-}                 # PROG-NP[-otf2][-rankfile]
    prog=${b%%-*}
    np=${b#*-}; np=${np%%-*}
    exe=${prog%smg}
    case $prog in
        ex3) args=(-n 33 -solver 0) ;;
        ex3smg) args=(-n 33 -solver 1) ;;
        ex5) args=(-n 33 -solver 0) ;;
    esac
    dir=$out/$name
    set -- --input "$src/$exe.c"
    otf2=no
    case $name in *-otf2*) set -- "$@" --otf2; otf2=yes ;; esac
    case $name in *-rankfile)
        rankfile "$np" "$build/rankfile-$name"
        # record.sh splits an --mpirun-opt into words; Open MPI 4.1.4 rejects --rankfile=FILE.
        set -- "$@" --mpirun-opt "--rankfile $build/rankfile-$name" --mpirun-opt --report-bindings ;;
    esac
    echo "==> $name" >&2
    current=$dir
    "$rec/record.sh" "$dir" "$np" "$@" -- "$build/$exe" "${args[@]}" < /dev/null || fail "$name: record.sh failed"
    cd "$dir"
    mv stdout.txt hypre.out
    grep -q '^Iterations = ' hypre.out || fail "$name: no 'Iterations = ' in hypre.out"
    [ -s stderr.txt ] || rm -f stderr.txt
    case $name in *-rankfile) cp "$build/rankfile-$name" rankfile ;; esac
    {
        echo "package: libhypre-dev $(dpkg-query -W -f='${Version}' libhypre-dev 2>/dev/null)"
        echo "examples: hypre-space/hypre $commit, src/examples/$exe.c, built with mpicc -O2 -lHYPRE -lm"
    } >> versions.txt
    mkdir -p expected
    truth "$prog" "$np" hypre.out > expected/hypre-log.txt
    pack_run "$name" "$otf2"
done
# Pairs whose compare verdict is known from the programs: one example under two tracers or
# placements is similar; the Struct PCG+SMG example and the IJ BoomerAMG example are not (compare
# needs equal rank counts: ex5 also runs on 9 ranks for ex3's 3 x 3 grid).
cat > "$out/hypre-pairs.txt" <<'PAIRS'
# A B expected
hypre-ex3-4 hypre-ex3-4-rankfile similar
hypre-ex5-4 hypre-ex5-4-otf2-rankfile similar
hypre-ex3-4 hypre-ex5-4 different
hypre-ex3-9-otf2 hypre-ex5-9-otf2 different
PAIRS
echo "hypre.sh: runs in $out; check them with: tools/record/check-heldout.py $out hypre-..." >&2
