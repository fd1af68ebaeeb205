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
# DUMPI's Fortran bindings (tof77.c) hand the buffer addresses of Fortran callers to the C
# functions unchanged, but Fortran's MPI_IN_PLACE and MPI_BOTTOM are addresses of common blocks,
# not C's sentinels: every in-place reduction of a Fortran program then reads the sentinel as
# data (Quantum ESPRESSO stops in init_ortho_group, CP2K in cp_fm_struct, one rank or many).
# The Fortran side now reports both addresses with the status sentinels, and every buffer passed
# to an MPI_ function (sendbuf, recvbuf, buf) is translated first.
lib=dumpi/libdumpi
if ! grep -q libdumpi_f77_put_buffer_info $lib/fromf77.f; then
    sed -i 's/^\(     &     mpi_statuses_ignore)\)$/\1\n      call libdumpi_f77_put_buffer_info(mpi_in_place, mpi_bottom)/' $lib/fromf77.f
    grep -q libdumpi_f77_put_buffer_info $lib/fromf77.f || { echo "build-dumpi.sh: fromf77.f not patched" >&2; exit 1; }
    awk '
        /^static inline void init_constants\(\) \{/ && !done {
            print "static void *f77_in_place = NULL, *f77_bottom = NULL;"
            print "void F77_FUNC_(libdumpi_f77_put_buffer_info, LIBDUMPI_F77_PUT_BUFFER_INFO)(void *in_place, void *bottom)"
            print "{"
            print "  f77_in_place = in_place;"
            print "  f77_bottom = bottom;"
            print "}"
            print ""
            held = 1
        }
        { print }
        held && /^}/ {
            print ""
            print "static inline void *f2c_buf(void *b) {"
            print "  init_constants();"
            print "  if(b == f77_in_place) return MPI_IN_PLACE;"
            print "  if(b == f77_bottom) return MPI_BOTTOM;"
            print "  return b;"
            print "}"
            held = 0; done = 1
        }' $lib/tof77.c > $lib/tof77.c.new
    mv $lib/tof77.c.new $lib/tof77.c
    sed -i '/ierr = MPI_[A-Za-z_]*(/ s/\([(, ]\)\(sendbuf\|recvbuf\|buf\)\([,)]\)/\1f2c_buf(\2)\3/g' $lib/tof77.c
    [ "$(grep -c 'f2c_buf(' $lib/tof77.c)" -gt 50 ] || { echo "build-dumpi.sh: tof77.c not patched" >&2; exit 1; }
    # Three more faults of the same file, which corrupt the memory of Fortran callers (CP2K
    # aborts in free() after its first MPI_Waitany): the indices MPI_Waitany/Testany and
    # MPI_Waitsome/Testsome return are C's (from 0), Fortran's count from 1; and a status array
    # of Fortran holds MPI_STATUS_SIZE integers per status, where the copies stepped by one.
    sed -i 's/^  \*index = id;$/  *index = (id == MPI_UNDEFINED) ? id : id + 1;/;
            s/indices\[i\] = cindices\[i\];/indices[i] = cindices[i] + 1;/;
            s/MPI_Status_f2c(statuses+i, cstatus+i)/MPI_Status_f2c(statuses+i*f77_status_size, cstatus+i)/;
            s/MPI_Status_c2f(cstatuses+i, fstatuses+i)/MPI_Status_c2f(cstatuses+i, fstatuses+i*f77_status_size)/' $lib/tof77.c
    [ "$(grep -c 'id + 1;\|cindices\[i\] + 1;\|i\*f77_status_size' $lib/tof77.c)" -eq 6 ] || { echo "build-dumpi.sh: tof77.c indices not patched" >&2; exit 1; }
    # MPI_Wait's status is an output, but the binding reads it as an input and asserts that it is
    # not MPI_STATUS_IGNORE: CP2K (DBCSR) waits with MPI_STATUS_IGNORE and aborts on its first
    # MPI_Wait. It is treated as an output, as MPI_Test already is.
    sed -i 's/^  stat = start_inbound_status(status);$/  stat = start_outbound_status(status);/' $lib/tof77.c
    grep -q 'start_inbound_status(status);$' $lib/tof77.c && [ "$(grep -c '^  stat = start_inbound_status' $lib/tof77.c)" -eq 0 ] || { echo "build-dumpi.sh: tof77.c MPI_Wait not patched" >&2; exit 1; }
    # MPI_Pack's and MPI_Unpack's position is an input and an output (where to go on packing),
    # but the binding handed C an uninitialised copy: MUMPS packs its messages in several calls
    # and stops at the first with MPI_ERR_TRUNCATE (or packs at a random offset). The copy now
    # starts from the caller's position.
    sed -i 's/^  int cposition;$/  int cposition = *position;/' $lib/tof77.c
    [ "$(grep -c '^  int cposition = \*position;$' $lib/tof77.c)" -eq 2 ] || { echo "build-dumpi.sh: tof77.c MPI_Pack/Unpack not patched" >&2; exit 1; }
fi
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
