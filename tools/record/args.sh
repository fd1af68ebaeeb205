# args.sh: the arguments every recording script takes, read by `. "$root/tools/record/args.sh"`
# right after `set -eu` and `root=...` (it reads and shifts the caller's own arguments):
#   SCRIPT OUT_DIR [RANKS [--otf2] [--rankfile FILE]]
# Sets out, ranks (default 4), opts (for record.sh: --otf2), rankfile (absolute, or empty) and
# otf2 (yes/no). Scripts with options of their own (mumps.sh, meep.sh, cp2k.sh) parse them alone.
script=$(basename "$0")
out=${1:?usage: $script OUT_DIR [RANKS [--otf2] [--rankfile FILE]]}
ranks=${2:-4}
shift $(( $# < 2 ? $# : 2 ))
opts=(); rankfile=; otf2=no
while [ $# -gt 0 ]; do
    case $1 in
        --otf2) opts+=(--otf2); otf2=yes; shift ;;
        --rankfile) rankfile=$(realpath "$2"); shift 2 ;;
        *) echo "$script: unknown option $1" >&2; exit 2 ;;
    esac
done
