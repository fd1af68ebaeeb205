#!/bin/bash
# Records MrBayes 3.2.7a (Bayesian phylogenetics, Metropolis-coupled MCMC) on Open MPI with SST
# DUMPI preloaded or with tools/otf2-tracer. Nobody tuned tracelogic for it. Run from the
# repository root:
#
#   tools/record/mrbayes.sh OUT_DIR [RANKS [--otf2] [--rankfile FILE]]
#
# Debian's `mrbayes-mpi` 3.2.7a-6 is no MPI program: its /usr/lib/mrbayes-mpi/mb-mpi links no MPI
# library (ldd), so `mpirun -np 4 mb-mpi` runs 4 independent serial copies that all write the
# same output files and call no MPI function (DUMPI writes no trace). This script therefore
# builds MrBayes from Debian's source package (the upstream tarball of the same version, fetched
# with apt-get source through a private source list, the system's apt configuration untouched)
# with `./configure --with-mpi --without-beagle --without-readline`, unmodified, into
# MRBAYES_PREFIX (default /opt/mrbayes-mpi; about a minute on 2 cores), once.
#
# The MPI version spreads the chains (nruns x nchains) over the ranks in blocks (rank r holds
# chains r*C/N ...); every generation, for each run, all ranks draw the same pair of chains from
# the shared swap seed, and if the two are on different ranks these two exchange their states
# (MPI_Isend/MPI_Irecv of 5 doubles each way, MPI_Waitall; if the swap is accepted, then one
# message of 7 doubles each way per move for the moves' statistics); pairs on one rank swap
# without a message. Rank 0 gathers the samples and the chains' printed states (MPI_Send/MPI_Recv)
# and everyone takes part in MPI_Allreduce error checks and the convergence diagnostics.
#
# RANKS defaults to 4. --rankfile FILE binds the ranks as FILE says (Open MPI rankfile, kept as
# OUT_DIR/rankfile). The input is the package's example primates.nex (12 taxa, 898 sites; the
# `mrbayes` package's /usr/share/doc/mrbayes/examples, here taken from the source tarball) with a
# fixed batch block (batch.nex): `set seed=11 swapseed=13`, `lset nst=6 rates=gamma`,
# `mcmc ngen=MB_NGEN (default 4000) nchains=4 nruns=2 samplefreq=100 printfreq=500
# diagnfreq=1000`: 8 chains, so 2 per rank on 4 ranks (swaps between ranks 0-1 and 2-3 only:
# the two runs' chains never meet) and one per rank on 8 (each run's 4 ranks all-to-all).
#
# Afterwards OUT_DIR holds the trace packed (dumpi.tar.zst or trace.tar.zst; unpacked files
# removed), batch.nex, primates.nex, mrbayes.out (the program's output: generations, the chain
# swap information per run, timing), MrBayes's own files (primates.nex.run*.p/.t, .mcmc) and the
# truth in expected/, independently of tracelogic:
#   dumpi2ascii-counts.txt / otf2-print-counts.txt  calls per function, sends, bytes, receives
#   dumpi2ascii-per-rank.txt / otf2-print-per-rank.txt  per-rank sends, bytes, receives
#   mrbayes-log.txt  the chain swap tables (lower triangle: attempted swaps between chains,
#                    upper: the share accepted) and the timing lines of mrbayes.out
#   log-times.tsv, log-calls.tsv  the MCMC's start, its printed generations and diagnostics and
#                    its end on the trace's clock (iotimes shim, tools/record/iotimes.c: MrBayes
#                    prints from rank 0 only and fflushes each message; iotimes.log keeps rank 0's
#                    writes: the process that wrote the most), and the MPI calls between them
#                    (tools/record/log-times.py)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tools/record/args.sh"
prefix=${MRBAYES_PREFIX:-/opt/mrbayes-mpi}
ngen=${MB_NGEN:-4000}
if [ ! -x "$prefix/bin/mb" ] || [ ! -f "$prefix/examples/primates.nex" ]; then
    echo "mrbayes.sh: building MrBayes with MPI into $prefix" >&2
    src=$(mktemp -d /tmp/mrbayes-src.XXXXXX)
    codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
    mkdir -p "$src/lists/partial"
    echo "deb-src http://deb.debian.org/debian $codename main" > "$src/sources.list"
    aptopts=(-o "Dir::Etc::SourceList=$src/sources.list" -o Dir::Etc::SourceParts=/dev/null
             -o "Dir::State::Lists=$src/lists")
    apt-get "${aptopts[@]}" update > "$src/apt.log" 2>&1
    # Only the upstream tarball is needed (the Debian part may be missing from the mirror).
    (cd "$src" && apt-get "${aptopts[@]}" source --download-only mrbayes >> apt.log 2>&1 || true)
    tarball=$(ls "$src"/mrbayes_*.orig.tar.gz 2>/dev/null | head -n 1)
    [ -n "$tarball" ] || { echo "mrbayes.sh: no MrBayes source (see $src/apt.log)" >&2; exit 1; }
    tar -xzf "$tarball" -C "$src"
    dir=$(ls -d "$src"/MrBayes-* | head -n 1)
    (cd "$dir" && ./configure --with-mpi --without-beagle --without-readline --prefix="$prefix" \
        > "$src/configure.log" 2>&1 && make -j"$(nproc)" > "$src/make.log" 2>&1 && make install > /dev/null)
    mkdir -p "$prefix/examples" && cp "$dir"/examples/*.nex "$prefix/examples/"
    ldd "$prefix/bin/mb" | grep -q libmpi || { echo "mrbayes.sh: $prefix/bin/mb has no MPI" >&2; exit 1; }
    rm -rf "$src"
fi
[ -n "$rankfile" ] && opts+=(--mpirun-opt "--rankfile $rankfile --report-bindings")
rm -rf "$out"
tmp=$(mktemp -d /tmp/mrbayes.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
gcc -shared -fPIC -O2 -o "$tmp/libiotimes.so" "$root/tools/record/iotimes.c" -ldl
cp "$prefix/examples/primates.nex" "$tmp/"
cat > "$tmp/batch.nex" <<EOF
#NEXUS
begin mrbayes;
    set autoclose=yes nowarn=yes seed=11 swapseed=13;
    execute primates.nex;
    lset nst=6 rates=gamma;
    mcmc ngen=$ngen nchains=4 nruns=2 samplefreq=100 printfreq=500 diagnfreq=1000;
    quit;
end;
EOF
IOTIMES_WRITES=1 IOTIMES_MATCH=stdout "$root/tools/record/record.sh" "$out" "$ranks" \
    --input "$tmp/primates.nex" --input "$tmp/batch.nex" \
    --preload "$tmp/libiotimes.so" "${opts[@]}" \
    --mpirun-opt "-x IOTIMES_WRITES -x IOTIMES_MATCH" \
    -- "$prefix/bin/mb" batch.nex
cd "$out"
[ -n "$rankfile" ] && cp "$rankfile" rankfile
mv stdout.txt mrbayes.out
[ -s stderr.txt ] || rm -f stderr.txt
grep -q 'Chain swap information' mrbayes.out || { echo "mrbayes.sh: no swap table in mrbayes.out" >&2; exit 1; }
"$root/tools/record/rank0-iotimes.sh" .
mkdir -p expected
{
    grep -E 'Running on|chains|Analysis (completed|used)' mrbayes.out
    sed -n '/Chain swap information for run/,/^ *4 |/p' mrbayes.out
} > expected/mrbayes-log.txt
"$root/tools/record/expected-counts.sh" .
"$root/tools/record/log-times.py" . mrbayes.out 'start=Chain results' 'gen=^ +[0-9]+ -- [(\[]' \
    'diag=Average standard deviation of split' 'end=Analysis completed in'
if [ $otf2 = yes ]; then
    tar -cf - trace | zstd -12 -q -T2 -o trace.tar.zst && rm -rf trace
else
    tar -cf - dumpi-*.meta dumpi-*.bin | zstd -12 -q -T2 -o dumpi.tar.zst && rm -f dumpi-*.meta dumpi-*.bin
fi
echo "recorded $out ($(du -sh dumpi.tar.zst trace.tar.zst 2>/dev/null | cut -f1 | tr '\n' ' '))"
