# shellcheck shell=bash
# shellcheck disable=SC2154  # runs, only, out and current are the calling script's
# runs.sh: what the scripts recording a set of held-out runs share (heldout.sh, heldout-nas.sh,
# hypre.sh), read by `. "$root/tools/record/runs.sh"` after `set -eu`.

# rankfile RANKS FILE: a permutation of the ranks' cores for an Open MPI rankfile (single host:
# cores, not nodes): rank i on core (RANKS - 1 - i) mod cores, so the placement changes and the
# numbering does not.
rankfile() {
    local cores i
    cores=$(nproc)
    : > "$2"
    for i in $(seq 0 $(($1 - 1))); do
        echo "rank $i=localhost slot=$(( ($1 - 1 - i) % cores ))" >> "$2"
    done
}

# build_dir NAME: sets `build` (a temporary folder, removed at exit) and `current` (empty). The
# script sets `current` to a run's folder while recording it: when the script fails or is
# interrupted, that folder leaves OUT_ROOT for /tmp, so a rerun records it again.
build_dir() {
    runs_name=$1
    build=$(mktemp -d "/tmp/$runs_name-build.XXXXXX")
    current=
    trap runs_cleanup EXIT
    trap 'exit 130' INT TERM
}

runs_cleanup() {
    local keep
    if [ -n "$current" ] && [ -e "$current" ]; then
        keep=$(mktemp -d "/tmp/$runs_name-failed.XXXXXX")
        mv "$current" "$keep"/
        echo "$runs_name.sh: $(basename "$current") incomplete, its output moved to $keep/$(basename "$current")" >&2
    fi
    rm -rf "$build"
}

# select_runs NAME: from `runs` (every run's name), `only` (the runs asked for; empty: all) and
# `out`: refuses a name not in `runs`, makes `out` absolute (creating it), and sets `todo` to the
# runs asked for that `out` lacks; exits 0, saying how to check the runs, when there are none.
select_runs() {
    local n
    for n in $only; do
        case " $runs " in *" $n "*) ;; *) echo "$1.sh: no run $n (runs: $runs)" >&2; exit 2 ;; esac
    done
    mkdir -p "$out"
    out=$(cd "$out" && pwd)
    todo=
    for n in $runs; do
        if [ -n "$only" ]; then
            case " $only " in *" $n "*) ;; *) continue ;; esac
        fi
        if [ -e "$out/$n" ]; then
            echo "$1.sh: $n exists, skipped" >&2
            continue
        fi
        todo="$todo $n"
    done
    if [ -z "$todo" ]; then
        echo "$1.sh: nothing to record; check with: tools/record/check-heldout.py $out" >&2
        exit 0
    fi
}
