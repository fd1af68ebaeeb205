#!/bin/sh
# Builds the OTF2 tracer (tracelogic_otf2.c) against the system's MPI and OTF2 library.
#   tools/otf2-tracer/build.sh [PREFIX]      (default /opt/tracelogic-otf2)
# Needs mpicc (Debian: openmpi-bin libopenmpi-dev) and the OTF2 library with its headers
# (Debian: libotf2-trace-dev; otf2-tools for the official `otf2-print`).
set -eu
prefix=${1:-/opt/tracelogic-otf2}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$prefix"
mpicc -shared -fPIC -O2 -Wall -Wextra -o "$prefix/libtracelogic_otf2.so" "$here/tracelogic_otf2.c" -lotf2 -ldl
echo "built $prefix/libtracelogic_otf2.so"
