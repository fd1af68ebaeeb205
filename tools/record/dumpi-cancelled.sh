#!/bin/sh
# The receives a DUMPI trace's program cancelled, from the tracer's own decoder (dumpi2ascii),
# independently of tracelogic. One line per rank (the Rth .bin file in name order):
#
#   tools/record/dumpi-cancelled.sh DIR > DIR/expected/cancelled-receives.tsv
#
# columns: rank, receives (MPI_Recv, MPI_Irecv and the receive half of MPI_Sendrecv, in call
# order, unless from MPI_PROC_NULL: source=-2), sends (likewise: dest=-2 not counted), and the
# ordinals (0-based, in that order) of the receives an MPI_Cancel named (its request is the one
# the MPI_Irecv returned), comma-separated. DIR holds the .bin files.
set -eu
dir=${1:?usage: dumpi-cancelled.sh DIR}
d2a=${DUMPI2ASCII:-/opt/dumpi/bin/dumpi2ascii}
echo "# tools/record/dumpi-cancelled.sh (dumpi2ascii): rank, receives, sends, cancelled receive ordinals"
rank=0
for f in $(ls "$dir"/*.bin | sort); do
    "$d2a" "$f" 2>/dev/null | awk -v rank=$rank '
        /^MPI_(Irecv|Recv|Sendrecv) entering/ { fn = $1; recv = 1 }
        /^MPI_(Isend|Send|Ssend|Issend|Rsend|Irsend|Bsend|Ibsend|Sendrecv) entering/ { send = 1 }
        /^int dest=-2/ { send = 0 }
        /^int source=-2/ { recv = 0 }
        /^MPI_Request request=\[/ && fn == "MPI_Irecv" { req = $2; gsub(/.*\[|\].*/, "", req); pending[req] = n }
        /^MPI_Cancel entering/ { cancel = 1 }
        /^MPI_Request request=\[/ && cancel { req = $2; gsub(/.*\[|\].*/, "", req); if (req in pending) { out = out sep pending[req]; sep = "," } }
        / returning at / { if (recv && fn != "") n++; if (send) s++; fn = ""; recv = 0; send = 0; cancel = 0 }
        END { printf "%d\t%d\t%d\t%s\n", rank, n, s, out }'
    rank=$((rank + 1))
done
