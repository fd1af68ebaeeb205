#!/bin/sh
# Records HyPhy's FEL (site-wise selection tests of S. L. Kosakovsky Pond et al.; Debian's
# `hyphy-mpi` 2.5, HYPHYMPI, on Open MPI) as held-out runs, kept OUTSIDE the repository and never
# used to tune anything (docs/corpus.md, "Held-out check"), with SST DUMPI and the iotimes shim
# preloaded. Nothing is downloaded: the alignment is the one HyPhy ships,
# /usr/share/hyphy/data/p51.nex (8 HIV-1 sequences, 440 codons, with its tree).
# `apt-get install -y --no-install-recommends hyphy-mpi`. From the repository root:
#
#   tools/record/hyphy.sh [OUT_ROOT]        (default /work/heldout/runs-apps8)
#
# Runs (15-30 s each on 2 shared cores): hyphy-fel-4 and -8,
#     mpirun -np N HYPHYMPI-avx LIBPATH=/usr/share/hyphy/ fel --alignment p51.nex
# (Debian's /usr/bin/HYPHYMPI wrapper passes its arguments as one word, which HyPhy reads as a
# batch file name; the binary it would run is called directly.) A master-worker program: rank 0
# fits the models, then hands each site pattern to a worker (MPI_Send/MPI_Recv, the master
# polling with MPI_Iprobe). Its log's sections (markdown `###` lines): the nucleotide GTR fit, the
# global omega, the full codon model (the first work sent to the workers), the site-wise tests
# ("For partition 1 these sites are significant") and the result ("Found _N_ sites"), dated on
# the trace's clock by the shim (expected/log-times.tsv, expected/log-calls.tsv by
# tools/record/log-times.py: the truth for phases).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-/work/heldout/runs-apps8}
exe=/usr/lib/hyphy/bin/HYPHYMPI-avx
grep -q avx /proc/cpuinfo || exe=/usr/lib/hyphy/bin/HYPHYMPI
[ -x "$exe" ] || { echo "hyphy.sh: $exe missing (apt-get install -y hyphy-mpi)" >&2; exit 1; }
data=/usr/share/hyphy/data/p51.nex
mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d /tmp/hyphy-rec.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
gcc -shared -fPIC -O2 -o "$tmp/libiotimes.so" "$root/tools/record/iotimes.c" -ldl
for np in 4 8; do
    dir=$out/hyphy-fel-$np
    [ -e "$dir" ] && { echo "hyphy.sh: $dir exists, skipped"; continue; }
    IOTIMES_MATCH=stdout IOTIMES_WRITES=1 IOTIMES_STDOUT_LINES=1 \
        "$root/tools/record/record.sh" "$dir" "$np" --input "$data" --preload "$tmp/libiotimes.so" \
        --mpirun-opt "-x IOTIMES_MATCH" --mpirun-opt "-x IOTIMES_WRITES" --mpirun-opt "-x IOTIMES_STDOUT_LINES" \
        -- "$exe" LIBPATH=/usr/share/hyphy/ fel --alignment p51.nex
    dpkg-query -W -f='package: ${Package} ${Version}\n' hyphy-mpi >> "$dir/versions.txt"
    grep -q "Found _" "$dir/stdout.txt" || { echo "hyphy.sh: $dir did not finish" >&2; exit 1; }
    "$root/tools/record/expected-counts.sh" "$dir"
    "$root/tools/record/rank0-iotimes.sh" "$dir"
    python3 "$root/tools/record/log-times.py" "$dir" "$dir/stdout.txt" \
        gtr="### Obtaining branch lengths" omega="### Obtaining the global omega" \
        codon="### Improving branch lengths" sites="### For partition 1" done="### \*\* Found"
done
