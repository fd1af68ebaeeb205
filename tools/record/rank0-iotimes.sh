#!/bin/sh
# Keep rank 0's dated writes of a run recorded with iotimes.c preloaded into every process: in
# RUN, iotimes.log (all processes) becomes iotimes-all.log and iotimes.log keeps the lines of the
# process whose stdout grew the most (rank 0 prints the program's log), for log-times.py.
#
#   tools/record/rank0-iotimes.sh RUN
set -eu
cd "$1"
mv iotimes.log iotimes-all.log
pid=$(sort -k3,3n iotimes-all.log | tail -n 1 | cut -d' ' -f2)
awk -v P="$pid" '$2 == P' iotimes-all.log > iotimes.log
