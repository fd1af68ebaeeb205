#!/bin/sh
# Records a third batch of LAMMPS example inputs from Debian's lammps-examples package, with
# SST DUMPI preloaded into the unmodified `lmp`, each with its `run` lengths divided so that a
# trace stays small (the only edit; the edited input is kept in the run folder beside
# log.lammps, which gives the truth: grid, steps, neighbour-list builds): `nemd` (6 ranks),
# `colloid` (8, 2-D, a rebuild every few steps with `delay 0`, a barostat's reductions every
# step), `dipole` (4, 2-D), `dreiding` (4, molecular), `granregion.funnel` (4, granular, three
# runs) and `body` (4).
#
#   tools/record/lammps-examples-third.sh OUT_ROOT
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: lammps-examples-third.sh OUT_ROOT}
ex=/usr/share/lammps/examples
rec=$root/tools/record/record.sh
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# one NAME NP INPUT DIVISOR [EXTRA_INPUT...]: INPUT with every `run N` as `run N/DIVISOR`.
one() {
    name=$1; np=$2; src=$3; div=$4; shift 4
    awk -v d="$div" '$1 == "run" && $2 ~ /^[0-9]+$/ { $2 = int($2 / d) } { print }' "$src" > "$tmp/in.$name"
    extra=
    for f in "$@"; do extra="$extra --input $f"; done
    rm -rf "${out:?}/$name"
    # shellcheck disable=SC2086
    "$rec" "$out/$name" "$np" --input "$tmp/in.$name" $extra -- \
        timeout 600 lmp -in "in.$name" -log log.lammps -screen none || echo "lammps-examples-third.sh: $name failed" >&2
    grep -h "processor grid\|Loop time\|Neighbor list builds" "$out/$name/log.lammps" || true
}
one nemd-6 6 "$ex/nemd/in.nemd" 50
one colloid-8 8 "$ex/colloid/in.colloid" 20
one dipole-4 4 "$ex/dipole/in.dipole" 10
one dreiding-4 4 "$ex/dreiding/in.dreiding" 1 "$ex/dreiding/data.dreiding"
one granregion-funnel-4 4 "$ex/granregion/in.granregion.funnel" 100
one body-4 4 "$ex/body/in.body" 10 "$ex/body/data.body"
