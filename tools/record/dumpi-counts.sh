#!/bin/sh
# Counts a DUMPI trace with the tracer's own decoder (dumpi2ascii), independently of tracelogic:
# MPI calls per function, point-to-point sends and the bytes they carry (count x size of the
# predefined datatype). Writes the counts to stdout:
#
#   tools/record/dumpi-counts.sh TRACE > TRACE_DIR/expected/dumpi2ascii-counts.txt
#
# TRACE is a folder of DUMPI files or a .tar.zst of them (unpacked into a temporary folder).
# Sends are MPI_Send, MPI_Isend, MPI_Ssend, MPI_Issend, MPI_Rsend, MPI_Irsend, MPI_Bsend,
# MPI_Ibsend and the send half of MPI_Sendrecv / MPI_Sendrecv_replace; a send to MPI_PROC_NULL
# (dest=-2 in DUMPI's dump) carries nothing and is not counted. A send of a derived datatype
# (no predefined name in the dump) is counted in `p2p_sends_unknown_type` and not in the bytes.
# Receives are MPI_Recv, MPI_Irecv and the receive half of MPI_Sendrecv(_replace), unless from
# MPI_PROC_NULL (source=-2). A persistent request (MPI_Send_init, MPI_Recv_init, ...) is counted as
# a send or receive at every MPI_Start / MPI_Startall naming it. `rank_calls R N`: rank R (the Rth .bin file in name order) made N calls.
set -eu
dir=${1:?usage: dumpi-counts.sh TRACE}
d2a=${DUMPI2ASCII:-/opt/dumpi/bin/dumpi2ascii}
case $dir in
    *.tar.zst | *.tzst)
        tmp=$(mktemp -d /tmp/dumpi-counts.XXXXXX)
        trap 'rm -rf "$tmp"' EXIT
        zstd -dc "$dir" | tar xf - -C "$tmp"
        dir=$tmp ;;
esac
for f in "$dir"/*.bin; do echo "### dumpi-counts next rank"; "$d2a" "$f"; done | awk '
function tsize(name) {
    if (name ~ /^(MPI_DOUBLE|MPI_LONG|MPI_LONG_LONG|MPI_LONG_LONG_INT|MPI_UNSIGNED_LONG|MPI_INT64_T|MPI_UINT64_T|MPI_DOUBLE_PRECISION|MPI_INTEGER8|MPI_REAL8|MPI_AINT|MPI_OFFSET|MPI_COMPLEX)$/) return 8
    if (name ~ /^(MPI_INT|MPI_UNSIGNED|MPI_FLOAT|MPI_INTEGER|MPI_REAL|MPI_INT32_T|MPI_UINT32_T|MPI_INTEGER4|MPI_REAL4)$/) return 4
    if (name ~ /^(MPI_SHORT|MPI_UNSIGNED_SHORT|MPI_INT16_T)$/) return 2
    if (name ~ /^(MPI_BYTE|MPI_CHAR|MPI_SIGNED_CHAR|MPI_UNSIGNED_CHAR|MPI_PACKED|MPI_CHARACTER|MPI_INT8_T|MPI_UINT8_T|MPI_LOGICAL1)$/) return 1
    if (name ~ /^(MPI_DOUBLE_COMPLEX|MPI_LONG_DOUBLE|MPI_COMPLEX16)$/) return 16
    return -1
}
function flush() {
    if (isrecv && src != -2) recvs++
    isrecv = 0
    if (issend && dest != -2) {
        sends++
        s = tsize(dtype)
        if (s < 0) unknown++; else bytes += cnt * s
    }
    issend = 0; isinit = 0
}
# A persistent request counts once per MPI_Start/MPI_Startall naming its handle (kind: s or r).
function start(list,   n, q, i, k) {
    gsub(/[^0-9,-]/, "", list); n = split(list, q, ",")
    for (i = 1; i <= n; i++) {
        k = rank SUBSEP q[i]
        if (kind[k] == "s") { sends++; if (ptype[k] < 0) unknown++; else bytes += pbytes[k] }
        else if (kind[k] == "r") recvs++
    }
}
/^### dumpi-counts next rank$/ { flush(); rank++; next }
/ entering at walltime / {
    flush()
    fn = $1; calls[fn]++; rcalls[rank]++
    isrecv = (fn ~ /^MPI_(Recv|Irecv|Sendrecv|Sendrecv_replace)$/)
    src = 0
    issend = (fn ~ /^MPI_(Send|Isend|Ssend|Issend|Rsend|Irsend|Bsend|Ibsend|Sendrecv|Sendrecv_replace)$/)
    isinit = (fn ~ /^MPI_(Send|Bsend|Ssend|Rsend|Recv)_init$/)
    isstart = (fn ~ /^MPI_Start(all)?$/)
    cnt = 0; dtype = ""; dest = 0
    next
}
/ returning at walltime / { flush(); isstart = 0; next }
(issend || isinit) && /^int (count|sendcount)=/ { split($2, a, "="); cnt = a[2] + 0 }
(issend || isinit) && /^MPI_Datatype (datatype|sendtype)=/ { dtype = ($3 ~ /^\(/) ? substr($3, 2, length($3) - 2) : "" }
(issend || isinit) && /^int dest=/ { split($2, a, "="); dest = a[2] + 0 }
(isrecv || isinit) && /^int source=/ { split($2, a, "="); src = a[2] + 0 }
isinit && /^MPI_Request request=/ {
    h = $2; gsub(/[^0-9-]/, "", h); k = rank SUBSEP h
    if (fn == "MPI_Recv_init") kind[k] = (src == -2 ? "" : "r")
    else { kind[k] = (dest == -2 ? "" : "s"); ptype[k] = tsize(dtype); pbytes[k] = cnt * ptype[k] }
}
isstart && /^MPI_Request request/ { sub(/^[^=]*=/, ""); start($0) }
END {
    flush()
    print "# Counted by tools/record/dumpi-counts.sh from dumpi2ascii (SST DUMPI 13.0.0), all ranks."
    print "# calls <MPI function> <number of calls>"
    n = 0
    for (f in calls) names[++n] = f
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (names[j] < names[i]) { t = names[i]; names[i] = names[j]; names[j] = t }
    total = 0
    for (i = 1; i <= n; i++) { printf "calls %s %d\n", names[i], calls[names[i]]; total += calls[names[i]] }
    printf "calls_total %d\n", total
    printf "p2p_sends %d\n", sends
    printf "p2p_send_bytes %.0f\n", bytes
    printf "p2p_sends_unknown_type %d\n", unknown
    printf "p2p_receives %d\n", recvs
    for (r = 1; r <= rank; r++) printf "rank_calls %d %d\n", r - 1, rcalls[r]
}'
