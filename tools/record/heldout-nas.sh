#!/bin/sh
# Records the NAS part of the held-out set: 19 runs of the NAS Parallel Benchmarks 3.4 MPI (BT, SP,
# LU, CG, MG at classes S and W; FT, IS, EP at class S; BT, SP, LU, CG at 32–64 ranks, which
# yield the core while they wait) at rank counts, classes, tracers and core
# placements the corpus does not have, kept OUTSIDE the repository and never used to tune anything
# (docs/corpus.md, "Held-out check"). A fresh machine has none of them; this script builds the
# benchmarks and records them again with the recording scripts beside it. Runs already present are
# skipped, so it can be interrupted and rerun. Then check every analysis on them:
#
#   tools/record/heldout-nas.sh NPB3.4-MPI_SOURCE [OUT_ROOT [RUN...]]   (default /work/heldout/runs-nas, every run)
#   tools/record/check-heldout.py OUT_ROOT                               (one table)
#
# NPB3.4-MPI_SOURCE is the folder NPB3.4-MPI of the mirror mbdevpl/nas-parallel-benchmarks (e.g.
# `git archive HEAD NPB3.4-MPI | tar x`). The benchmarks the wanted runs need are built in a
# temporary copy with the make.def edits of tools/record/npb.sh (-O2 -fallow-argument-mismatch,
# RAND=randdp; config/suite.def holds "bench<TAB>class" lines: NPB 3.4 takes the process count at
# run time and would read a third column as a subtype). A run's name says what it is:
# npb-BENCH.CLASS.NP, recorded with tools/record/record.sh --fortran (DUMPI), `-otf2` with the OTF2
# tracer instead, `-rankfile` under an Open MPI rankfile (the permutation of heldout.sh's
# `rankfile`, kept as RUN/rankfile; stderr.txt has --report-bindings). Every run must print
# "Verification = SUCCESSFUL" or the script stops naming it (its output moved to /tmp). A run's
# folder: command.txt, versions.txt, npb-output.txt (the benchmark's output: size, iterations,
# processes, verification), the trace (DUMPI's .meta and .bin files, unpacked, or trace/traces.otf2)
# and expected/dumpi2ascii-per-rank.txt or expected/otf2-print-per-rank.txt (tools/record/per-rank.sh:
# the decoder's per-rank sends, bytes and receives that check-heldout.py compares with).
#
# Needs gfortran, mpicc and Open MPI (4.1.4 tested; it takes `--rankfile FILE`, not
# `--rankfile=FILE`), SST DUMPI with its Fortran bindings (tools/record/build-dumpi.sh with gfortran
# installed; DUMPI_PREFIX), the OTF2 tracer (tools/otf2-tracer/build.sh; OTF2_TRACER) and otf2-print
# (apt: otf2-tools). Takes 10 to 20 minutes on 2 cores: about a minute to build, most of the rest
# is SP W on 16 ranks under DUMPI (452 s on a loaded 2-core VM). RUN names one run of the list
# below (e.g. `npb-ep.S.4 npb-is.S.8-otf2`).
set -eu
usage() { echo "usage: heldout-nas.sh NPB3.4-MPI_SOURCE [OUT_ROOT [RUN...]]" >&2; exit 2; }
[ $# -ge 1 ] || usage
root=$(cd "$(dirname "$0")/../.." && pwd)
rec=$root/tools/record
# shellcheck source=tools/record/runs.sh
. "$rec/runs.sh"
src=$1
shift
out=${1:-/work/heldout/runs-nas}
[ $# -gt 0 ] && shift
only=$*
if [ ! -f "$src/LU/proc_grid.f" ] || [ ! -f "$src/config/make.def.template" ]; then
    echo "heldout-nas.sh: $src is not an NPB3.4-MPI source folder" >&2; exit 2
fi
src=$(cd "$src" && pwd)

runs="npb-bt.S.16 npb-bt.W.9-otf2-rankfile \
npb-sp.S.9-otf2 npb-sp.W.16-rankfile \
npb-lu.S.8-otf2 npb-lu.W.16 \
npb-cg.S.32 npb-cg.W.8-otf2-rankfile \
npb-mg.S.32-otf2 npb-mg.W.16-rankfile \
npb-ft.S.8 npb-is.S.8-otf2 npb-ep.S.4 \
npb-bt.W.36 npb-sp.W.36 npb-lu.W.32 npb-bt.W.64 npb-sp.W.64 npb-cg.W.64"
select_runs heldout-nas

build_dir heldout-nas
fail() { echo "heldout-nas.sh: $1" >&2; exit 1; }

# Build every BENCH.CLASS the wanted runs need (npb-BENCH.CLASS.NP...).
suite=
for n in $todo; do
    b=${n#npb-}; b=${b%.*}
    case "$suite " in *" $b "*) ;; *) suite="$suite $b" ;; esac
done
echo "heldout-nas.sh: building$suite in $build" >&2
cp -a "$src"/. "$build"/
sed -e 's/^FFLAGS\t= -O3/FFLAGS\t= -O2 -fallow-argument-mismatch/' -e 's/^RAND   = randi8/RAND   = randdp/' \
    "$build/config/make.def.template" > "$build/config/make.def"
: > "$build/config/suite.def"
for b in $suite; do printf '%s\t%s\n' "${b%.*}" "${b#*.}" >> "$build/config/suite.def"; done
mkdir -p "$build/bin"
rm -f "$build"/bin/*.x
(cd "$build" && make suite > build.log 2>&1) || true
for b in $suite; do
    [ -x "$build/bin/$b.x" ] || { tail -20 "$build/build.log" >&2; fail "building $b failed"; }
done

for name in $todo; do
    b=${name#npb-}                  # BENCH.CLASS.NP[-otf2][-rankfile]
    exe=${b%.*}.x
    np=${b##*.}; np=${np%%-*}
    dir=$out/$name
    set -- --fortran
    case $name in *-otf2*) set -- "$@" --otf2 ;; esac
    # 32 and more processes on a few cores: waiting ranks yield instead of spinning.
    [ "$np" -ge 32 ] && set -- "$@" --mpirun-opt "--mca mpi_yield_when_idle 1"
    case $name in *-rankfile)
        rankfile "$np" "$build/rankfile-$name"
        # record.sh splits an --mpirun-opt into words; Open MPI 4.1.4 rejects --rankfile=FILE.
        set -- "$@" --mpirun-opt "--rankfile $build/rankfile-$name" --mpirun-opt --report-bindings ;;
    esac
    echo "==> $name" >&2
    current=$dir
    "$rec/record.sh" "$dir" "$np" "$@" -- "$build/bin/$exe" < /dev/null || fail "$name: record.sh failed"
    grep -q "Verification    =               SUCCESSFUL" "$dir/stdout.txt" || fail "$name did not verify"
    mv "$dir/stdout.txt" "$dir/npb-output.txt"
    [ -s "$dir/stderr.txt" ] || rm -f "$dir/stderr.txt"
    case $name in *-rankfile) cp "$build/rankfile-$name" "$dir/rankfile" ;; esac
    mkdir -p "$dir/expected"
    case $name in
        *-otf2*) "$rec/per-rank.sh" "$dir/trace/traces.otf2" > "$dir/expected/otf2-print-per-rank.txt" ||
            fail "$name: otf2-print failed" ;;
        *) "$rec/per-rank.sh" "$dir" > "$dir/expected/dumpi2ascii-per-rank.txt" ||
            fail "$name: dumpi2ascii failed" ;;
    esac
    current=
done
# Pairs whose compare verdict is known from the programs and PACPM's Table 4 (check-heldout.py
# reads this file): one benchmark under two classes, tracers or placements is similar, BT and SP
# are (Table 4), the others are not.
cat > "$out/pairs.txt" <<'PAIRS'
# A B expected
npb-bt.S.16 npb-sp.W.16-rankfile similar
npb-bt.W.9-otf2-rankfile npb-sp.S.9-otf2 similar
npb-bt.S.16 npb-lu.W.16 different
npb-sp.W.16-rankfile npb-lu.W.16 different
npb-lu.W.16 npb-mg.W.16-rankfile different
npb-bt.S.16 npb-mg.W.16-rankfile different
npb-lu.S.8-otf2 npb-cg.W.8-otf2-rankfile different
npb-ft.S.8 npb-is.S.8-otf2 different
npb-bt.W.36 npb-sp.W.36 similar
npb-bt.W.64 npb-sp.W.64 similar
npb-bt.W.64 npb-cg.W.64 different
PAIRS
echo "heldout-nas.sh: runs in $out; check them with: tools/record/check-heldout.py $out" >&2
