#!/bin/sh
# Builds the SST DUMPI tracer (libdumpi.so, dumpi2ascii) from a local copy of its public source
# (github.com/sstsimulator/sst-dumpi, DUMPI 13.0.0). Nothing is downloaded here.
#
#   tools/record/build-dumpi.sh SST_DUMPI_SOURCE [PREFIX]
#
# PREFIX defaults to /opt/dumpi. The build happens in a copy of the source (under /tmp), so the
# source folder stays clean. Needs: openmpi-bin libopenmpi-dev autoconf automake libtool
# (Debian: apt-get install -y ...), and gfortran for the Fortran bindings (NAS programs); without
# gfortran the C bindings alone are built, enough for C/C++ programs (LAMMPS, hpcc).
set -eu
src=${1:?usage: build-dumpi.sh SST_DUMPI_SOURCE [PREFIX]}
prefix=${2:-/opt/dumpi}
[ -f "$src/bootstrap.sh" ] || { echo "build-dumpi.sh: $src is not an sst-dumpi source folder" >&2; exit 2; }
for tool in mpicc mpicxx autoreconf libtoolize; do
    command -v "$tool" >/dev/null || { echo "build-dumpi.sh: $tool missing (apt-get install -y openmpi-bin libopenmpi-dev autoconf automake libtool)" >&2; exit 2; }
done
work=$(mktemp -d /tmp/dumpi-build.XXXXXX)
cp -a "$src"/. "$work"/
cd "$work"
./bootstrap.sh
fortran=
if command -v mpif90 >/dev/null && command -v gfortran >/dev/null; then
    fortran="--enable-f77 --enable-f90"
fi
# Open MPI 4 hides the MPI-1 functions removed in MPI-3 (MPI_Type_hvector, MPI_Address, ...) behind
# a _Static_assert in mpi.h, though libmpi still exports them; DUMPI's Fortran bindings call them,
# so their declarations are asked for explicitly.
# shellcheck disable=SC2086
./configure --enable-libdumpi --prefix="$prefix" CC=mpicc CXX=mpicxx FC=mpif90 F77=mpif77 \
    CFLAGS="-O2 -DOMPI_OMIT_MPI1_COMPAT_DECLS=0" $fortran
make -j2
make install
echo "DUMPI installed in $prefix (libdumpi: $prefix/lib/libdumpi.so, dumpi2ascii: $prefix/bin/dumpi2ascii); build folder $work"
