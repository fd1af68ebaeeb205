#!/bin/bash
# Records a PETSc tutorial (PETSc 3.18.5 as Debian ships it: `apt-get install -y petsc-dev`, whose
# libpetsc3.18-dev-examples holds the tutorials' sources, identical to the v3.18.5 tag), built
# unchanged with mpicc against Debian's libpetsc_real (pkg-config PETSc), on Open MPI, with SST
# DUMPI preloaded or with tools/otf2-tracer. Nobody tuned tracelogic for PETSc. Run from the
# repository root:
#
#   tools/record/petsc.sh OUT_DIR PROGRAM [RANKS [--otf2] [--grid MxN] [--rankfile FILE]]
#
# PROGRAM is one of (inputs fixed here, so every recording computes the same thing):
#   ex5   snes/tutorials/ex5.c, the Bratu problem on a 2-D DMDA (5-point star, 64 x 64 grid),
#         Newton (`-snes_monitor`: 4 iterations) with GMRES + block Jacobi/ILU; one stage (Main).
#   ex29  ksp/ksp/tutorials/ex29.c, a 2-D DMDA Poisson problem (65 x 65 after `-da_refine 5`)
#         solved by FGMRES with geometric multigrid (`-pc_type mg`, 6 levels); `-testsolver`
#         solves it twice in the Main Stage, then 20 more times in its own registered stage
#         "Solve only" (PetscLogStageRegister), each solve's iterations printed by -ksp_monitor.
# RANKS defaults to 4. --grid MxN forces the DMDA's process grid (-da_processors_x M
# -da_processors_y N) instead of PETSc's choice; --rankfile FILE binds ranks by an Open MPI
# rankfile (kept as OUT_DIR/rankfile). Every run adds -dm_view (the process grid: "Processor [r]
# M .. N .. m .. n .." and each rank's index ranges) and -log_view (per stage: time, messages,
# message lengths, reductions).
#
# Afterwards OUT_DIR holds the trace packed (dumpi.tar.zst or trace.tar.zst; the unpacked files
# are removed), petsc.out (the program's output with -dm_view and -log_view), the source and the
# truth in expected/, independently of tracelogic:
#   dumpi2ascii-counts.txt / otf2-print-counts.txt  calls per function, sends, bytes, receives
#   dumpi2ascii-per-rank.txt / otf2-print-per-rank.txt  per-rank sends, bytes, receives
#   petsc-log.txt   the DMDA process grids (-dm_view), the solver iterations, and -log_view's
#                   "Summary of Stages" (Messages = half of all ranks' sends + receives counted by
#                   PETSc's MPI macros, i.e. messages sent; Reductions = collective calls per rank
#                   on communicators of more than one process: MPI_Allreduce, MPI_Bcast, ...)
#   log-times.tsv, log-calls.tsv  the monitor lines dated on the trace's clock (iotimes shim,
#                   tools/record/iotimes.c; PETSc prints from rank 0 and flushes each line;
#                   iotimes.log keeps rank 0's writes: the process that wrote the most), and the
#                   MPI calls between them (tools/record/log-times.py). For ex29 the third
#                   "0 KSP Residual norm" line is the start of the stage "Solve only".
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: petsc.sh OUT_DIR PROGRAM [RANKS [--otf2] [--grid MxN] [--rankfile FILE]]}
prog=${2:?usage: petsc.sh OUT_DIR PROGRAM [RANKS ...]}
ranks=${3:-4}
shift $(( $# < 3 ? $# : 3 ))
opts=(); rankfile=; otf2=no; grid=()
while [ $# -gt 0 ]; do
    case $1 in
        --otf2) opts+=(--otf2); otf2=yes; shift ;;
        --grid) grid=(-da_processors_x "${2%x*}" -da_processors_y "${2#*x}"); shift 2 ;;
        --rankfile) rankfile=$(realpath "$2"); shift 2 ;;
        *) echo "petsc.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
examples=/usr/share/petsc/3.18/share/petsc/examples/src
case $prog in
    ex5) src=$examples/snes/tutorials/ex5.c
         args=(-da_grid_x 64 -da_grid_y 64 -snes_monitor) ;;
    ex29) src=$examples/ksp/ksp/tutorials/ex29.c
          args=(-da_refine 5 -pc_type mg -ksp_type fgmres -ksp_monitor -testsolver) ;;
    *) echo "petsc.sh: PROGRAM is ex5 or ex29" >&2; exit 2 ;;
esac
[ -f "$src" ] && pkg-config --exists PETSc || { echo "petsc.sh: PETSc is missing (apt-get install -y petsc-dev)" >&2; exit 1; }
[ -n "$rankfile" ] && opts+=(--mpirun-opt "--rankfile $rankfile --report-bindings")
rm -rf "$out"
tmp=$(mktemp -d /tmp/petsc.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
gcc -shared -fPIC -O2 -o "$tmp/libiotimes.so" "$root/tools/record/iotimes.c" -ldl
# shellcheck disable=SC2046
mpicc -O2 -o "$tmp/$prog" "$src" $(pkg-config --cflags --libs PETSc) -lm
IOTIMES_WRITES=1 IOTIMES_MATCH=stdout "$root/tools/record/record.sh" "$out" "$ranks" \
    --input "$src" --preload "$tmp/libiotimes.so" "${opts[@]}" \
    --mpirun-opt "-x IOTIMES_WRITES -x IOTIMES_MATCH" \
    -- "$tmp/$prog" "${args[@]}" "${grid[@]}" -dm_view -log_view
cd "$out"
[ -n "$rankfile" ] && cp "$rankfile" rankfile
mv stdout.txt petsc.out
[ -s stderr.txt ] || rm -f stderr.txt
grep -q 'Summary of Stages' petsc.out || { echo "petsc.sh: no -log_view in petsc.out" >&2; exit 1; }
"$root/tools/record/rank0-iotimes.sh" .
mkdir -p expected
{
    grep -m1 'Processor \[0\]' petsc.out | sed 's/^/finest-or-first DMDA: /'
    grep '^Processor \[\|range of indices' petsc.out | head -n $((2 * ranks))
    grep -c 'SNES Function norm' petsc.out | sed 's/^/SNES iterations (incl. 0): /'
    grep -c ' 0 KSP Residual norm' petsc.out | sed 's/^/KSP solves: /'
    grep -c 'KSP Residual norm' petsc.out | sed 's/^/KSP monitor lines: /'
    sed -n '/^Summary of Stages/,/^---/p' petsc.out
    grep -E '^(MPI Msg Count|MPI Msg Len|MPI Reductions|Time \(sec\))' petsc.out
} > expected/petsc-log.txt
"$root/tools/record/expected-counts.sh" .
"$root/tools/record/log-times.py" . petsc.out 'solve= 0 KSP Residual norm' \
    'newton=[0-9]+ SNES Function norm' 'logview=PETSc Performance Summary'
if [ $otf2 = yes ]; then
    tar -cf - trace | zstd -12 -q -T2 -o trace.tar.zst && rm -rf trace
else
    tar -cf - dumpi-*.meta dumpi-*.bin | zstd -12 -q -T2 -o dumpi.tar.zst && rm -f dumpi-*.meta dumpi-*.bin
fi
echo "recorded $out ($(du -sh dumpi.tar.zst trace.tar.zst 2>/dev/null | cut -f1 | tr '\n' ' '))"
