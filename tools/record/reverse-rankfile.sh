#!/bin/sh
# Writes an Open MPI rankfile placing rank i on core (NP - 1 - i) mod cores: the placement of a
# run changes, not its numbering (the "-rankfile" twin of every held-out run).
#
#   tools/record/reverse-rankfile.sh NP FILE
set -eu
if [ $# -ne 2 ]; then echo "usage: reverse-rankfile.sh NP FILE" >&2; exit 2; fi
np=$1; cores=$(nproc); i=0
: > "$2"
while [ "$i" -lt "$np" ]; do
    echo "rank $i=localhost slot=$(( (np - 1 - i) % cores ))" >> "$2"; i=$((i + 1))
done
