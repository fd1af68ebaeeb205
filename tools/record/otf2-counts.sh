#!/bin/sh
# Counts an OTF2 trace with the official OTF2 reader (`otf2-print`, Debian package otf2-tools),
# independently of tracelogic, in the format of dumpi-counts.sh: MPI calls per function (Enter
# events of each MPI region, or CallingContextEnter events of an MPI region's calling context, which
# otf2-print names by that region), point-to-point sends (MpiSend and MpiIsend events) and the bytes
# they carry (their Length), receives (MpiRecv and MpiIrecv events), and calls per rank (location).
#
#   tools/record/otf2-counts.sh TRACE.otf2 > RUN/expected/otf2-print-counts.txt
#
# TRACE.otf2 is the anchor file, or a .tar.zst holding one (unpacked into a temporary folder).
set -eu
anchor=${1:?usage: otf2-counts.sh TRACE.otf2}
case $anchor in
    *.tar.zst | *.tzst)
        tmp=$(mktemp -d /tmp/otf2-counts.XXXXXX)
        trap 'rm -rf "$tmp"' EXIT
        zstd -dc "$anchor" | tar xf - -C "$tmp"
        anchor=$(find "$tmp" -name '*.otf2' | head -n 1) ;;
esac
otf2-print "$anchor" | awk '
($1 == "ENTER" && $4 == "Region:") || ($1 == "CALLING_CONTEXT_ENTER" && $4 $5 == "CallingContext:") {
    name = $1 == "ENTER" ? $5 : $6; gsub(/"/, "", name)
    if (name ~ /^MPI_/) { calls[name]++; total++; rank[$2 + 0]++; if ($2 + 0 > maxr) maxr = $2 + 0 }
}
$1 == "MPI_SEND" || $1 == "MPI_ISEND" {
    sends++
    for (i = 4; i <= NF; i++) if ($i == "Length:") { v = $(i + 1); gsub(/,/, "", v); bytes += v }
}
$1 == "MPI_RECV" || $1 == "MPI_IRECV" { recvs++ }
END {
    print "# Counted by tools/record/otf2-counts.sh from otf2-print (the official OTF2 reader), all ranks."
    print "# calls <MPI function> <number of calls>"
    for (f in calls) print "calls", f, calls[f] | "sort"
    close("sort")
    print "calls_total", total + 0
    print "p2p_sends", sends + 0
    print "p2p_send_bytes", sprintf("%.0f", bytes)
    print "p2p_sends_unknown_type 0"
    print "p2p_receives", recvs + 0
    for (r = 0; r <= maxr; r++) print "rank_calls", r, rank[r] + 0
}'
