#!/bin/sh
# Every rank's point-to-point operations in the order it posted them, from the tracer's own
# decoder (`otf2-print` for OTF2, `dumpi2ascii` for DUMPI), independently of tracelogic: one line
# per operation, `RANK send|recv PEER BYTES`, ranks in order.
# OTF2: a send is its MPI_SEND/MPI_ISEND event (peer: the receiver's location, bytes: Length); a
# receive is posted at its MPI_IRECV_REQUEST (or MPI_RECV) event and takes the peer and Length of
# the MPI_IRECV event that completes the same request.
# DUMPI: the send and receive calls in call order (a `MPI_Sendrecv` gives its send, then its
# receive), peer `dest`/`source` as the call names it, bytes as tools/record/per-rank.sh sizes them
# (-1 when dumpi2ascii cannot size the datatype, e.g. a Fortran type it names only by number).
# Used as the truth a logical trace's expansion must give back, operation for operation
# (tests/logical_apps.rs, held-out NAS MG S 16; MG S 32 measured by hand, docs/corpus.md).
#
#   tools/record/p2p-sequence.sh RUN/trace/traces.otf2 | zstd -19 > RUN/expected/otf2-print-p2p.txt.zst
#   DUMPI2ASCII=/opt/dumpi/bin/dumpi2ascii tools/record/p2p-sequence.sh RUN_DIR_WITH_DUMPI_FILES
set -eu
src=${1:?usage: p2p-sequence.sh TRACE.otf2 | DUMPI_DIR}
case $src in
*.otf2)
otf2-print "$src" | awk '
function loc(field,   i, v) { for (i = 3; i <= NF; i++) if ($i == field) { v = $(i + 4); gsub(/[<>),]/, "", v); return v } return -1 }
function val(field,   i, v) { for (i = 3; i <= NF; i++) if ($i == field) { v = $(i + 1); gsub(/,/, "", v); return v } return -1 }
function add(r, text) { n[r]++; op[r, n[r]] = text; if (r > m) m = r }
$1 == "MPI_SEND" || $1 == "MPI_ISEND" { r = $2 + 0; add(r, r " send " loc("Receiver:") " " val("Length:")) }
$1 == "MPI_RECV" { r = $2 + 0; add(r, r " recv " loc("Sender:") " " val("Length:")) }
$1 == "MPI_IRECV_REQUEST" { r = $2 + 0; add(r, ""); pending[r, val("Request:")] = n[r] }
$1 == "MPI_IRECV" { r = $2 + 0; k = pending[r, val("Request:")]; op[r, k] = r " recv " loc("Sender:") " " val("Length:") }
END { for (r = 0; r <= m; r++) for (k = 1; k <= n[r]; k++) print op[r, k] }' ;;
*)
    d2a=${DUMPI2ASCII:-/opt/dumpi/bin/dumpi2ascii}
    r=0
    for f in "$src"/*.bin; do
        "$d2a" "$f" 2>/dev/null | awk -v R=$r '
function size(t) { if (t ~ /\((MPI_DOUBLE|MPI_LONG|MPI_DOUBLE_PRECISION)\)/) return 8; if (t ~ /\((MPI_INT|MPI_FLOAT|MPI_INTEGER)\)/) return 4; if (t ~ /\((MPI_BYTE|MPI_CHAR)\)/) return 1; return -1 }
function flush() { if (issend && dest != -2) print R, "send", dest, (ssz < 0 ? -1 : scnt * ssz); if (isrecv && src != -2) print R, "recv", src, (rsz < 0 ? -1 : rcnt * rsz); issend = 0; isrecv = 0 }
/ entering at walltime / { flush(); fn = $1; isrecv = (fn ~ /^MPI_(Recv|Irecv|Sendrecv|Sendrecv_replace)$/); issend = (fn ~ /^MPI_(Send|Isend|Ssend|Issend|Rsend|Irsend|Bsend|Ibsend|Sendrecv|Sendrecv_replace)$/); scnt = rcnt = 0; ssz = rsz = -1; dest = src = 0; next }
/ returning at walltime / { flush(); next }
/^int (count|sendcount)=/ { split($2, a, "="); if (issend) scnt = a[2] + 0; if (isrecv && $2 ~ /^count/) rcnt = a[2] + 0 }
/^int recvcount=/ { split($2, a, "="); rcnt = a[2] + 0 }
/^MPI_Datatype (datatype|sendtype)=/ { if (issend) ssz = size($3); if (isrecv && $2 ~ /^datatype/) rsz = size($3) }
/^MPI_Datatype recvtype=/ { rsz = size($3) }
/^int dest=/ { split($2, a, "="); dest = a[2] + 0 }
/^int source=/ { split($2, a, "="); src = a[2] + 0 }
END { flush() }'
        r=$((r + 1))
    done ;;
esac
