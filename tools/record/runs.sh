# shellcheck shell=bash
# shellcheck disable=SC2154  # runs, only, out and current are the calling script's
# runs.sh: what the scripts recording a set of held-out runs share (heldout.sh, heldout-nas.sh,
# hypre.sh, saturne.sh, freefem.sh), read by `. "$root/tools/record/runs.sh"` after `set -eu`.

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

# pack_run NAME OTF2: in a recorded run's folder (the current directory), the decoders' counts
# into expected/ (expected-counts.sh), then the trace packed as trace.tar.zst (OTF2 = yes) or
# dumpi.tar.zst and the unpacked files removed; leaves the folder, and the run is complete
# (`current` emptied).
pack_run() {
    local rec
    rec=$(dirname "${BASH_SOURCE[0]}")
    "$rec/expected-counts.sh" . || { echo "$runs_name.sh: $1: the decoder failed" >&2; exit 1; }
    if [ "$2" = yes ]; then
        tar -cf - trace | zstd -12 -q -T2 -o trace.tar.zst && rm -rf trace
    else
        tar -cf - dumpi-*.meta dumpi-*.bin | zstd -12 -q -T2 -o dumpi.tar.zst && rm -f dumpi-*.meta dumpi-*.bin
    fi
    echo "recorded $(pwd) ($(du -sh dumpi.tar.zst trace.tar.zst 2>/dev/null | cut -f1 | tr '\n' ' '))" >&2
    cd - > /dev/null
    current=
}
