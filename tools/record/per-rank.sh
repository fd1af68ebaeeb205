#!/bin/sh
# Per-rank point-to-point counts from the tracer's own decoder, independently of tracelogic: one
# line per rank, `RANK SENDS BYTES_SENT RECEIVES` (BYTES_SENT -1 when dumpi2ascii cannot size a
# send's datatype, e.g. a Fortran type it names only by number). Used by the held-out check
# (docs/corpus.md) as the truth each rank's expansion of the logical trace must give.
#
#   tools/record/per-rank.sh RUN/trace/traces.otf2 > RUN/expected/otf2-print-per-rank.txt
#   tools/record/per-rank.sh RUN_DIR_WITH_DUMPI_FILES > RUN/expected/dumpi2ascii-per-rank.txt
#
# OTF2: MPI_SEND/MPI_ISEND events (bytes: their Length) and MPI_RECV/MPI_IRECV events per location
# of `otf2-print`. DUMPI: as tools/record/dumpi-counts.sh, per .bin file (rank order = name order);
# a persistent request (`MPI_Send_init`, `MPI_Recv_init`, ...) counts once per `MPI_Start` or
# `MPI_Startall` that names its handle (PETSc's vector scatters send that way).
set -eu
src=${1:?usage: per-rank.sh TRACE.otf2 | DUMPI_DIR}
case $src in
*.otf2)
    otf2-print "$src" | awk '
$1 == "MPI_SEND" || $1 == "MPI_ISEND" { r = $2 + 0; s[r]++; for (i = 4; i <= NF; i++) if ($i == "Length:") { v = $(i + 1); gsub(/,/, "", v); b[r] += v } if (r > m) m = r }
$1 == "MPI_RECV" || $1 == "MPI_IRECV" { r = $2 + 0; rc[r]++; if (r > m) m = r }
END { for (r = 0; r <= m; r++) printf "%d %d %d %d\n", r, s[r], b[r], rc[r] }' ;;
*)
    d2a=${DUMPI2ASCII:-/opt/dumpi/bin/dumpi2ascii}
    r=0
    for f in "$src"/*.bin; do
        "$d2a" "$f" | awk -v R=$r '
function flush() { if (isrecv && src != -2) rc++; isrecv = 0; if (issend && dest != -2) { s++; if (sz < 0) unk = 1; else b += cnt * sz } issend = 0; isinit = 0 }
function start(list,   n, q, i) { gsub(/[^0-9,-]/, "", list); n = split(list, q, ","); for (i = 1; i <= n; i++) { if (kind[q[i]] == "s") { s++; if (bytes[q[i]] < 0) unk = 1; else b += bytes[q[i]] } else if (kind[q[i]] == "r") rc++ } }
/ entering at walltime / { flush(); fn = $1; isrecv = (fn ~ /^MPI_(Recv|Irecv|Sendrecv|Sendrecv_replace)$/); issend = (fn ~ /^MPI_(Send|Isend|Ssend|Issend|Rsend|Irsend|Bsend|Ibsend|Sendrecv|Sendrecv_replace)$/); isinit = (fn ~ /^MPI_(Send|Bsend|Ssend|Rsend|Recv)_init$/); isstart = (fn ~ /^MPI_Start(all)?$/); cnt = 0; sz = -1; dest = 0; src = 0; next }
/ returning at walltime / { flush(); isstart = 0; next }
(issend || isinit) && /^int (count|sendcount)=/ { split($2, a, "="); cnt = a[2] + 0 }
(issend || isinit) && /^MPI_Datatype (datatype|sendtype)=/ { t = $3; sz = -1; if (t ~ /\((MPI_DOUBLE|MPI_LONG|MPI_DOUBLE_PRECISION)\)/) sz = 8; else if (t ~ /\((MPI_INT|MPI_FLOAT|MPI_INTEGER)\)/) sz = 4; else if (t ~ /\((MPI_BYTE|MPI_CHAR)\)/) sz = 1 }
(issend || isinit) && /^int dest=/ { split($2, a, "="); dest = a[2] + 0 }
(isrecv || isinit) && /^int source=/ { split($2, a, "="); src = a[2] + 0 }
isinit && /^MPI_Request request=/ { h = $2; gsub(/[^0-9-]/, "", h); if (fn == "MPI_Recv_init") kind[h] = (src == -2 ? "" : "r"); else { kind[h] = (dest == -2 ? "" : "s"); bytes[h] = (sz < 0 ? -1 : cnt * sz) } }
isstart && /^MPI_Request request/ { sub(/^[^=]*=/, ""); start($0) }
END { flush(); printf "%d %d %d %d\n", R, s, (unk ? -1 : b), rc }'
        r=$((r + 1))
    done ;;
esac
