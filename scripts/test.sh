#!/bin/sh
# Runs the whole Plexus test suite (unit, MPI integration over shm and tcp,
# launcher, tools, emulated-fabric tests when root). Builds first.
#   scripts/test.sh [ctest arguments, e.g. -R mpi.p2p -j2]
set -eu
cd "$(dirname "$0")/.."
scripts/setup.sh --no-demo
# Ranks outnumber the 2 cores of a small machine already; tests run one at a time.
ctest --test-dir build --output-on-failure --timeout 300 "$@"
