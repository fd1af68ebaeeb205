#!/bin/bash
# Records OpenFOAM's incompressible solver icoFoam (Debian's package `openfoam`, unmodified) on
# the lid-driven cavity of its tutorials, on 8 ranks with SST DUMPI preloaded. The mesh is
# split into 8 irregular subdomains (a Voronoi partition of the cells around 8 fixed random
# points, written as a `manual` decomposition: Debian's build has no graph partitioner), so the
# ranks' neighbours follow the partition, not a grid: a non-Cartesian placement, as a graph
# partitioner gives. Run from the repository root:
#
#   tools/record/openfoam-cavity.sh [OUT_DIR [CELLS STEPS]]
#
# Default: tests/data/apps/openfoam-cavity-8, a 40x40 mesh, 10 time steps (the corpus run).
# Needs `openfoam` and `openfoam-examples` (apt). README_ONLY=1 rewrites the README.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-$root/tests/data/apps/openfoam-cavity-8}
cells=${2:-40}
steps=${3:-10}
tutorial=/usr/share/doc/openfoam-examples/examples/incompressible/icoFoam/cavity/cavity

readme() {
    cat > "$dir/README.md" <<README
# $(basename "$dir"): OpenFOAM icoFoam, lid-driven cavity on 8 irregular subdomains

Recorded by \`tools/record/openfoam-cavity.sh\` (see docs/corpus.md) on $(sed -n 's/^date: //p' "$dir/versions.txt")
($(sed -n 's/^host: //p' "$dir/versions.txt"), time-shared: durations are real but not representative).

- Program: Debian's \`icoFoam\` (package openfoam $(dpkg-query -W -f '${Version}' openfoam 2>/dev/null || echo '?')), unmodified,
  SST DUMPI 13.0.0 preloaded (\`LD_PRELOAD\`), Open MPI.
- Command: \`$(cat "$dir/command.txt")\`
- Case: the tutorial \`incompressible/icoFoam/cavity/cavity\` (package openfoam-examples) with a
  ${cells}x${cells} mesh, \`deltaT 0.001\`, $steps time steps, no field output; decomposed by
  \`decomposePar\` with method \`manual\` into 8 subdomains: each cell goes to the nearest of 8 points
  drawn by Python's \`random.seed(7)\` (a Voronoi partition: irregular neighbours, unequal sizes).
- Trace: \`dumpi.tar.zst\` (the DUMPI \`.meta\` and one \`.bin\` per rank, packed). Our own data.

## Ground truth
- Which subdomains share faces, from \`decomposePar\`'s own log (\`log.decomposePar\`, lines
  "Number of faces shared with processor N"): the processor patches across which icoFoam exchanges
  halo values in every linear-solver iteration.
- Time steps: the \`Time = \` lines of icoFoam's log (\`stdout.txt\`): $(grep -c '^Time = ' "$dir/stdout.txt").
- Call counts: \`expected/dumpi2ascii-counts.txt\`, from the tracer's own \`dumpi2ascii\`
  (\`tools/record/dumpi-counts.sh\`).
README
}

if [ -n "${README_ONLY:-}" ]; then readme; exit 0; fi
[ -d "$tutorial" ] || { echo "openfoam-cavity.sh: $tutorial is missing (apt install openfoam openfoam-examples)" >&2; exit 1; }
case_dir=$(mktemp -d /tmp/openfoam-cavity.XXXXXX)
trap 'rm -rf "$case_dir"' EXIT
cp -r "$tutorial"/. "$case_dir"/
sed -i "s/(20 20 1)/($cells $cells 1)/" "$case_dir/system/blockMeshDict"
end=$(python3 -c "print($steps * 0.001)")
sed -i "s/^endTime .*/endTime         $end;/; s/^deltaT .*/deltaT          0.001;/; s/^writeInterval .*/writeInterval   100000;/" \
    "$case_dir/system/controlDict"
python3 - "$case_dir" "$cells" <<'PY'
import random, sys
case, n = sys.argv[1], int(sys.argv[2])
random.seed(7)
points = [(random.random(), random.random()) for _ in range(8)]
owner = []
for j in range(n):          # blockMesh numbers the cells x fastest
    for i in range(n):
        x, y = (i + 0.5) / n, (j + 0.5) / n
        owner.append(min(range(8), key=lambda k: (x - points[k][0]) ** 2 + (y - points[k][1]) ** 2))
head = "FoamFile\n{\n    version     2.0;\n    format      ascii;\n    class       labelList;\n    object      cellDecomposition;\n}\n"
open(f"{case}/constant/cellDecomposition", "w").write(head + f"{len(owner)}\n(\n" + "\n".join(map(str, owner)) + "\n)\n")
PY
cat > "$case_dir/system/decomposeParDict" <<'EOF'
FoamFile
{
    version     2.0;
    format      ascii;
    class       dictionary;
    object      decomposeParDict;
}
numberOfSubdomains 8;
method          manual;
coeffs
{
    dataFile    "cellDecomposition";
}
EOF
# OpenFOAM's tools find their etc/ files through its environment (its bashrc is not `set -eu` clean).
set +eu
# shellcheck disable=SC1091
. /usr/share/openfoam/etc/bashrc > /dev/null 2>&1
set -eu
(cd "$case_dir" && blockMesh > log.blockMesh 2>&1 && decomposePar > log.decomposePar 2>&1)
rm -rf "$dir"
"$root/tools/record/record.sh" "$dir" 8 -- icoFoam -case "$case_dir" -parallel
cp "$case_dir/log.decomposePar" "$dir/"
mkdir -p "$dir/expected"
"$root/tools/record/dumpi-counts.sh" "$dir" > "$dir/expected/dumpi2ascii-counts.txt"
(cd "$dir" && tar cf - dumpi-*.meta dumpi-*.bin | zstd -19 -q -o dumpi.tar.zst && rm -f dumpi-*.meta dumpi-*.bin)
for f in stdout.txt stderr.txt; do [ -s "$dir/$f" ] || rm -f "$dir/$f"; done
readme
