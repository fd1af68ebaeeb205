# Sourced by the LAMMPS example batches (lammps-examples-more.sh, -third.sh, -fourth.sh): with
# `root` (the repository) and `out` (the batch's folder) set, makes `out` and a temporary folder
# and defines `one NAME NP INPUT DIVISOR [EXTRA_INPUT...]`, which records INPUT from Debian's
# lammps-examples with every `run N` as `run N/DIVISOR` (the only edit; the edited input is kept
# in the run folder beside log.lammps) on NP ranks with SST DUMPI preloaded, then prints the
# log's grid, loop times and neighbour-list builds. `batch` names the calling script in messages;
# a non-empty `want` (names separated by spaces) records only the runs it names.
ex=/usr/share/lammps/examples
rec=$root/tools/record/record.sh
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
one() {
    name=$1; np=$2; src=$3; div=$4; shift 4
    case " ${want:-} " in "  ") ;; *" $name "*) ;; *) return 0 ;; esac
    awk -v d="$div" '$1 == "run" && $2 ~ /^[0-9]+$/ { $2 = int($2 / d) } { print }' "$src" > "$tmp/in.$name"
    extra=
    for f in "$@"; do extra="$extra --input $f"; done
    rm -rf "${out:?}/$name"
    # shellcheck disable=SC2086
    "$rec" "$out/$name" "$np" --input "$tmp/in.$name" $extra -- \
        timeout 600 lmp -in "in.$name" -log log.lammps -screen none || echo "$batch: $name failed" >&2
    grep -h "processor grid\|Loop time\|Neighbor list builds" "$out/$name/log.lammps" || true
}
