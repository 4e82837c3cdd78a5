#!/bin/sh
# Runs the whole Plexus test suite: unit tests, MPI integration tests over
# shared memory and TCP at 1-8 ranks, Fortran bindings, libraries built for
# MPICH run through the ABI (HDF5, ScaLAPACK, NWChem, OpenCoarrays), launcher and tools,
# emulated-fabric tests (as root), then the 2-rank, unit and transport tests
# again under AddressSanitizer + UndefinedBehaviorSanitizer.
#   scripts/test.sh [ctest arguments, e.g. -R mpi.p2p]
#   PX_TEST_SANITIZE=0 scripts/test.sh     skips the sanitizer pass
set -eu
cd "$(dirname "$0")/.."
scripts/setup.sh --no-demo
# Ranks outnumber the 2 cores of a small machine already; tests run one at a time.
ctest --test-dir build --output-on-failure --timeout 300 "$@"

if [ "${PX_TEST_SANITIZE:-1}" != 0 ] && [ $# -eq 0 ]; then
    echo "== sanitizer pass (ASan + UBSan)"
    cmake -S . -B build-sanitize -G Ninja -DPX_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
    cmake --build build-sanitize
    ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        ctest --test-dir build-sanitize --output-on-failure --timeout 300 \
        -R '(np2\.|^unit\.|^net\.)' -E 'fortran|bigcount_huge|^abi\.'
fi
