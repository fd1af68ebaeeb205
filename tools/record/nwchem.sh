#!/bin/bash
# Records NWChem (Debian's `nwchem-openmpi`, 7.0.2, unmodified: Global Arrays over MPI windows)
# computing the SCF and then the B3LYP DFT energy of one water molecule (6-31G*;
# tools/record/inputs/nwchem-h2o.nw) with SST DUMPI preloaded, and dates NWChem's module banners
# on the trace's clock. Nobody tuned tracelogic for it. Run from the repository root:
#
#   tools/record/nwchem.sh [OUT_DIR [RANKS]]      (default /tmp/nwchem-h2o-4, 4 ranks)
#
# OUT_DIR gets the DUMPI files, stdout.txt (NWChem's output), and expected/log-times.tsv,
# log-calls.tsv (tools/record/log-times.py: the SCF and DFT modules' banners, their energies and
# the final "Total times" line, each dated by the iotimes shim, and the calls between them).
# Needs `nwchem-openmpi` (apt) and DUMPI (tools/record/build-dumpi.sh). Kept out of the
# repository: 4 ranks make ~0.3 M calls, 14 MB unpacked (docs/corpus.md, NWChem).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-/tmp/nwchem-h2o-4}
ranks=${2:-4}
command -v nwchem.openmpi >/dev/null || { echo "nwchem.sh: nwchem.openmpi is missing (apt-get install -y nwchem-openmpi)" >&2; exit 1; }
rm -rf "$dir"
shim=$(mktemp -d /tmp/iotimes.XXXXXX)
trap 'rm -rf "$shim"' EXIT
gcc -shared -fPIC -O2 -o "$shim/libiotimes.so" "$root/tools/record/iotimes.c" -ldl
cp "$root/tools/record/inputs/nwchem-h2o.nw" "$shim/h2o.nw"
IOTIMES_WRITES=1 IOTIMES_MATCH=stdout "$root/tools/record/record.sh" "$dir" "$ranks" --fortran \
    --input "$shim/h2o.nw" --preload "$shim/libiotimes.so" \
    --mpirun-opt "-x IOTIMES_WRITES -x IOTIMES_MATCH" -- nwchem.openmpi h2o.nw
cd "$dir"
rm -f h2o.b h2o.b^-1 h2o.c h2o.cfock h2o.db h2o.gridpts.* h2o.movecs h2o.p h2o.zmat
dpkg-query -W -f 'package: ${Package} ${Version}\n' nwchem-openmpi >> versions.txt
"$root/tools/record/log-times.py" . stdout.txt 'scf=NWChem SCF Module' 'scfdone=Total SCF energy' \
    'dft=NWChem DFT Module' 'dftdone=Total DFT energy' 'end=Total times'
echo "recorded $dir ($(du -sh . | cut -f1))"
