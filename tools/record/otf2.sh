#!/bin/sh
# Records the OTF2 runs of the corpus (tests/data/apps/otf2-*): unmodified MPI programs with
# tools/otf2-tracer preloaded, which writes OTF2 through the official OTF2 library in Score-P's
# layout (Score-P itself is not packaged by Debian). Run from the repository root:
#
#   tools/record/otf2.sh [NPB3.4-MPI_SOURCE] [OUT_ROOT]      (default tests/data/apps)
#
# Without an NPB source only LAMMPS and hpcc are recorded. Needs: openmpi-bin libopenmpi-dev
# gfortran libotf2-trace-dev otf2-tools lammps hpcc. Each run folder gets `trace.tar.zst` (the OTF2
# archive `trace/traces.otf2`, packed; tracelogic reads the archive as it is), the program's own
# output, `command.txt`, `versions.txt`, `README.md` and `expected/otf2-print-counts.txt` (counted
# with the official reader `otf2-print`, tools/record/otf2-counts.sh).
# README_ONLY=1 rewrites the READMEs without recording.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
npb=${1:-}
out=${2:-$root/tests/data/apps}
rec=$root/tools/record/record.sh
inputs=$root/tools/record/inputs
export OTF2_TRACER=${OTF2_TRACER:-/opt/tracelogic-otf2/libtracelogic_otf2.so}
[ -n "${README_ONLY:-}" ] || [ -f "$OTF2_TRACER" ] || "$root/tools/otf2-tracer/build.sh" "$(dirname "$OTF2_TRACER")"

finish() { # dir
    mkdir -p "$1/expected"
    "$root/tools/record/otf2-counts.sh" "$1/trace/traces.otf2" > "$1/expected/otf2-print-counts.txt"
    (cd "$1" && tar cf - trace | zstd -19 -q -o trace.tar.zst && rm -rf trace)
    for f in stdout.txt stderr.txt; do [ -s "$1/$f" ] || rm -f "$1/$f"; done
}

readme() { # dir title truth
    cat > "$1/README.md" <<README
# $(basename "$1"): $2

Recorded by \`tools/record/otf2.sh\` (see docs/corpus.md) on $(sed -n 's/^date: //p' "$1/versions.txt")
($(sed -n 's/^host: //p' "$1/versions.txt"), time-shared: durations are real but not representative).

- Tracer: \`tools/otf2-tracer\` preloaded (PMPI wrappers writing OTF2 $(sed -n 's/^tracer: .*OTF2 library \([0-9.]*\).*/\1/p' "$1/versions.txt") through the official
  library, in Score-P's layout: communicator-local ranks, local communicator ids with mapping
  tables, COMM_LOCATIONS/COMM_GROUP groups, Cartesian topologies as CartTopology definitions).
- Command: \`$(cat "$1/command.txt")\`
- Trace: \`trace.tar.zst\` (\`trace/traces.otf2\`, \`traces.def\`, one \`.evt\` and \`.def\` per rank).
- Counts by the official reader: \`expected/otf2-print-counts.txt\` (\`tools/record/otf2-counts.sh\`).
- Ground truth: $3
README
}

lammps() { # name np px py pz map truth
    dir=$out/$1
    if [ -z "${README_ONLY:-}" ]; then
        rm -rf "$dir"
        "$rec" "$dir" "$2" --otf2 --input "$inputs/in.melt" -- \
            lmp -in in.melt -var px "$3" -var py "$4" -var pz "$5" -var pmap "$6" -log log.lammps -screen none
        finish "$dir"
    fi
    readme "$dir" "LAMMPS Lennard-Jones melt, $2 ranks, rank map $6" "$7"
}

lammps otf2-lammps-melt-8 8 '*' '*' '*' cart \
    "LAMMPS's log (\`log.lammps\`: \"2 by 2 by 2 MPI processor grid\", 50 steps); the grid is declared with MPI_Cart_create (map cart) and recorded as an OTF2 CartTopology. The same program as lammps-melt-8 (DUMPI)."
lammps otf2-lammps-melt-12-xzy 12 '*' '*' '*' xzy \
    "LAMMPS's log (\"2 by 2 by 3 MPI processor grid\", 50 steps); rank map xzy: LAMMPS places ranks itself, no MPI Cartesian communicator is created, so nothing is declared. The same program as lammps-melt-12-xzy (DUMPI)."

dir=$out/otf2-hpcc-4
if [ -z "${README_ONLY:-}" ]; then
    rm -rf "$dir"
    mkdir -p /tmp/otf2-hpcc-input && cp "$inputs/hpccinf-2x2.txt" /tmp/otf2-hpcc-input/hpccinf.txt
    "$rec" "$dir" 4 --otf2 --input /tmp/otf2-hpcc-input/hpccinf.txt -- hpcc
    finish "$dir"
fi
readme "$dir" "HPC Challenge 1.5.0, 4 ranks, HPL grid 2x2" \
    "hpcc's own output \`hpccoutf.txt\` (16 test sections; HPL on a 2x2 process grid). The same program and input as hpcc-4 (DUMPI)."

if [ -n "$npb" ]; then
    bin=$(mktemp -d /tmp/npb-otf2.XXXXXX)
    # An NPB folder that is already built (bin/bt.S.x ...) is used as it is.
    if [ -x "$npb/bin/bt.S.x" ] && [ -x "$npb/bin/cg.S.x" ]; then rm -rf "$bin"; bin=$npb; npb_built=yes; fi
    if [ -z "${README_ONLY:-}" ] && [ -z "${npb_built:-}" ]; then
        cp -a "$npb"/. "$bin"/
        (cd "$bin" &&
            sed -e 's/^FFLAGS\t= -O3/FFLAGS\t= -O2 -fallow-argument-mismatch/' -e 's/^RAND   = randi8/RAND   = randdp/' \
                config/make.def.template > config/make.def &&
            printf 'bt\tS\nlu\tS\nmg\tS\ncg\tS\n' > config/suite.def && mkdir -p bin &&
            make suite > build.log 2>&1) || { tail -20 "$bin/build.log" >&2; exit 1; }
    fi
    nas() { # name np binary truth [mpirun option]
        dir=$out/$1
        if [ -z "${README_ONLY:-}" ]; then
            rm -rf "$dir"
            "$rec" "$dir" "$2" --otf2 ${5:+--mpirun-opt "$5"} -- "$bin/bin/$3"
            finish "$dir"
        fi
        readme "$dir" "NAS Parallel Benchmarks 3.4 $(echo "$3" | cut -d. -f1 | tr a-z A-Z) class S, $2 ranks" "$4"
    }
    nas otf2-npb-bt.S.9 9 bt.S.x "the program's output (\`stdout.txt\`: 60 time steps, verification SUCCESSFUL) and BT's source (3x3 square process grid, each cell exchanging with 6 neighbours: BT/make_set.f). The same benchmark and size as the DUMPI sample npb-bt.S.9 (NPB 3.3.1 there, 3.4 here; the same messages)."
    nas otf2-npb-lu.S.8 8 lu.S.x "the program's output (50 SSOR iterations) and LU's source (4x2 grid without wrap-around: LU/proc_grid.f, neighbors.f). The same benchmark and size as the DUMPI sample npb-lu.S.8 (NPB 3.3.1 there; the same messages)."
    nas otf2-npb-mg.S.8 8 mg.S.x "the program's output (4 V-cycles) and MG's source (2x2x2 grid of processes, exchanges with the 6 face neighbours: MG/mg.f setup). The same benchmark and size as the DUMPI sample npb-mg.S.8 (NPB 3.3.1 there; the same messages)."
    nas otf2-npb-cg.S.8 8 cg.S.x "the program's output (15 iterations) and CG's source (row and transpose partners: CG/cg.f setup_proc_info). Recorded in DUMPI only at 16 ranks (npb-cg.S.16)."
    # Calls as CallingContextEnter/Leave, as Score-P writes them when it unwinds the stack.
    nas otf2-cc-npb-lu.S.4 4 lu.S.x "the program's output (50 SSOR iterations) and LU's source (2x2 grid: LU/proc_grid.f, neighbors.f). Recorded with TRACELOGIC_OTF2_CALLING_CONTEXTS=1: every call is a CallingContextEnter/Leave of a calling context whose region is the MPI function (a child of a \`main\` context), as Score-P writes calls when it unwinds the stack (SCOREP_ENABLE_UNWINDING), instead of Enter/Leave. The same program and size as otf2-npb-lu.S.4 (plain Enter/Leave; the same messages)." "-x TRACELOGIC_OTF2_CALLING_CONTEXTS=1"
    [ -n "${npb_built:-}" ] || rm -rf "$bin"
fi
