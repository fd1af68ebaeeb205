#!/bin/sh
# Records the hpcc runs of the corpus (tests/data/apps/hpcc-*) with SST DUMPI preloaded into
# Debian's `hpcc` (package hpcc), plus the iotimes shim that dates every close of hpcc's output file
# on DUMPI's clock, so each test section of hpccoutf.txt gets a begin and end time on the trace's
# time axis (tools/record/hpcc-sections.py). Run from the repository root:
#
#   tools/record/hpcc.sh [OUT_ROOT]        (default tests/data/apps)
#
# The DUMPI files of an hpcc run are large (RandomAccess polls MPI_Testany thousands of times, the
# latency/bandwidth test runs thousands of ping-pongs), so they are packed into dumpi.tar.zst, which
# tracelogic reads as it is.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/tests/data/apps}
shim=$(mktemp -d /tmp/iotimes.XXXXXX)
gcc -shared -fPIC -O2 -o "$shim/libiotimes.so" "$root/tools/record/iotimes.c" -ldl

one() { # name np P Q
    name=$1 np=$2
    dir=$out/$name
    rm -rf "$dir"
    tmp=$(mktemp -d /tmp/hpccinf.XXXXXX)
    cp "$root/tools/record/inputs/hpccinf-$3x$4.txt" "$tmp/hpccinf.txt"
    # mpi_yield_when_idle: ranks waiting inside MPI yield the (oversubscribed) cores, which keeps
    # the number of MPI_Testany polls of RandomAccess, and so the trace, small.
    "$root/tools/record/record.sh" "$dir" "$np" --input "$tmp/hpccinf.txt" --preload "$shim/libiotimes.so" \
        --mpirun-opt "--mca mpi_yield_when_idle 1" -- hpcc
    rm -rf "$tmp"
    mkdir -p "$dir/expected"
    "$root/tools/record/dumpi-counts.sh" "$dir" > "$dir/expected/dumpi2ascii-counts.txt"
    "$root/tools/record/hpcc-sections.py" "$dir"
    (cd "$dir" && tar cf - dumpi-*.meta dumpi-*.bin | zstd -19 -q -o dumpi.tar.zst && rm -f dumpi-*.meta dumpi-*.bin)
    for f in stdout.txt stderr.txt; do [ -s "$dir/$f" ] || rm -f "$dir/$f"; done
    readme "$dir" "$np" "$3" "$4"
}

readme() { # dir np P Q
    cat > "$1/README.md" <<README
# $(basename "$1"): HPC Challenge (hpcc), $2 ranks, HPL grid $3x$4

Recorded by \`tools/record/hpcc.sh\` (see docs/corpus.md) on $(sed -n 's/^date: //p' "$1/versions.txt")
($(sed -n 's/^host: //p' "$1/versions.txt"), time-shared: durations are real but not representative).

- Program: Debian's \`hpcc\` ($(sed -n 's/^package: hpcc //p' "$1/versions.txt")), unmodified, SST DUMPI 13.0.0 and the
  iotimes shim (\`tools/record/iotimes.c\`) preloaded, Open MPI $(sed -n 's/^mpirun: mpirun (Open MPI) //p' "$1/versions.txt").
- Command: \`$(cat "$1/command.txt")\`
- Input: \`hpccinf.txt\` (Debian's template \`_hpccinf.txt\` with N=48, NB=8, P=$3, Q=$4): a tiny problem,
  so RandomAccess, FFT and STREAM, whose sizes follow HPL's memory, are tiny too.
- Trace: \`dumpi.tar.zst\` (the DUMPI \`.meta\` and one \`.bin\` per rank, packed; tracelogic reads the
  archive). Our own data.

## Ground truth
- Test sections, their order and their times: hpcc's own output \`hpccoutf.txt\` marks "Begin of X
  section." / "End of X section." for every test; \`iotimes.log\` has the CLOCK_MONOTONIC time (DUMPI's
  clock) and file size at every close of that file by rank 0, so each mark is dated to within the
  writing of one line group. \`expected/sections.tsv\`: section, begin and end in seconds since the
  trace's first event (earliest call over all ranks in dumpi2ascii). hpcc calls MPI_Barrier before
  each section.
- What each section communicates: \`expected/section-calls.tsv\`, the calls of all ranks entered in
  each section and in the gaps between, by function, from dumpi2ascii (MPIRandomAccess: Isend/Irecv
  and MPI_Testany polling; PTRANS: Sendrecv on row/column communicators; MPIFFT: Alltoall;
  LatencyBandwidth: ping-pong Send/Recv and ring Sendrecv / Isend+Irecv+Waitall; HPL: panel
  broadcasts by Send/Recv/Iprobe on the $3x$4 grid; Star*/Single*: local work, only collectives).
- Call counts: \`expected/dumpi2ascii-counts.txt\` (tools/record/dumpi-counts.sh, before packing).
README
}

one hpcc-4 4 2 2
one hpcc-6 6 2 3
rm -rf "$shim"
