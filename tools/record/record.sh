#!/bin/sh
# Records one run of an MPI program with the SST DUMPI tracer preloaded (no relinking).
#
#   tools/record/record.sh OUT_DIR NP [--mpirun-opt OPT]... -- PROGRAM [ARGS...]
#
# OUT_DIR must not exist or be empty; the program runs in it (so its input files must be copied
# there first with --input FILE, or given by absolute path). Afterwards OUT_DIR holds
# dumpi-<stamp>.meta, one dumpi-<stamp>-NNNN.bin per rank, stdout.txt and stderr.txt,
# command.txt (the exact command) and versions.txt. DUMPI_PREFIX (default /opt/dumpi) names the
# tracer build (tools/record/build-dumpi.sh).
#
# Options before `--`:
#   --input FILE        copy FILE into OUT_DIR before the run (repeatable)
#   --mpirun-opt OPT    pass OPT to mpirun (repeatable), e.g. --mpirun-opt --rankfile=rf
#   --untraced          run without the tracer (twin runs that write map files)
#   --fortran           also preload DUMPI's Fortran bindings (libdumpif77.so): Open MPI's Fortran
#                       interface calls PMPI_* directly, so Fortran programs (NAS) need them
#   --preload LIB       preload LIB after the tracer (e.g. libiotimes.so, see iotimes.c)
#   --otf2              record OTF2 instead of DUMPI, with tools/otf2-tracer (the official OTF2
#                       writer in Score-P's layout; OTF2_TRACER names the built library, default
#                       /opt/tracelogic-otf2/libtracelogic_otf2.so): OUT_DIR/trace/traces.otf2
set -eu
usage() { echo "usage: record.sh OUT_DIR NP [--input FILE]... [--mpirun-opt OPT]... [--untraced] [--fortran] [--preload LIB]... -- PROGRAM [ARGS...]" >&2; exit 2; }
[ $# -ge 4 ] || usage
out=$1; np=$2; shift 2
prefix=${DUMPI_PREFIX:-/opt/dumpi}
inputs=; mpiopts=; traced=yes; fortran=no; extra=; otf2=no
otf2lib=${OTF2_TRACER:-/opt/tracelogic-otf2/libtracelogic_otf2.so}
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    case $1 in
        --input) inputs="$inputs $2"; shift 2 ;;
        --mpirun-opt) mpiopts="$mpiopts $2"; shift 2 ;;
        --untraced) traced=no; shift ;;
        --fortran) fortran=yes; shift ;;
        --preload) extra="$extra:$2"; shift 2 ;;
        --otf2) otf2=yes; shift ;;
        *) usage ;;
    esac
done
[ "${1:-}" = "--" ] || usage
shift
[ $# -ge 1 ] || usage
if [ -e "$out" ] && [ -n "$(ls -A "$out")" ]; then
    echo "record.sh: $out exists and is not empty" >&2; exit 2
fi
mkdir -p "$out"
for f in $inputs; do cp "$f" "$out"/; done
preload=
if [ $traced = yes ] && [ $otf2 = yes ]; then
    [ -f "$otf2lib" ] || { echo "record.sh: $otf2lib missing (run tools/otf2-tracer/build.sh)" >&2; exit 2; }
    preload="-x TRACELOGIC_OTF2_DIR=trace -x LD_PRELOAD=$otf2lib$extra"
elif [ $traced = yes ]; then
    [ -f "$prefix/lib/libdumpi.so" ] || { echo "record.sh: $prefix/lib/libdumpi.so missing (run tools/record/build-dumpi.sh)" >&2; exit 2; }
    libs=$prefix/lib/libdumpi.so
    [ $fortran = yes ] && libs="$prefix/lib/libdumpif77.so:$libs"
    preload="-x LD_PRELOAD=$libs$extra"
elif [ -n "$extra" ]; then
    preload="-x LD_PRELOAD=${extra#:}"
fi
cd "$out"
{
    # shellcheck disable=SC2086
    printf '%s' "mpirun --allow-run-as-root --oversubscribe -np $np"
    for o in $mpiopts $preload; do printf ' %s' "$o"; done
    for a in "$@"; do case $a in *[!A-Za-z0-9_./=:-]*) printf " '%s'" "$a" ;; *) printf ' %s' "$a" ;; esac; done
    echo
} > command.txt
{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(uname -srm), $(nproc) cores"
    echo "mpirun: $(mpirun --version 2>/dev/null | head -n 1)"
    [ $traced = yes ] && [ $otf2 = yes ] && echo "tracer: tools/otf2-tracer (PMPI, Score-P layout) with the OTF2 library $(otf2-config --version 2>/dev/null | sed 's/.*version //'), built into $(dirname "$otf2lib")"
    [ $traced = yes ] && [ $otf2 = no ] && echo "tracer: SST DUMPI 13.0.0 (sstsimulator/sst-dumpi), built by tools/record/build-dumpi.sh into $prefix"
    command -v dpkg-query >/dev/null && dpkg-query -W -f='package: ${Package} ${Version}\n' lammps hpcc quantum-espresso cp2k openmpi-bin 2>/dev/null || true
} > versions.txt
# shellcheck disable=SC2086
mpirun --allow-run-as-root --oversubscribe -np "$np" $mpiopts $preload "$@" > stdout.txt 2> stderr.txt
if [ $otf2 = yes ]; then
    echo "recorded $(ls trace/traces/*.evt 2>/dev/null | wc -l) OTF2 locations in $out ($(du -sh . | cut -f1))"
else
    echo "recorded $(ls dumpi-*.bin 2>/dev/null | wc -l) rank files in $out ($(du -sh . | cut -f1))"
fi
