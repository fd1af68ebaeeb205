# shellcheck shell=bash
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
