#!/bin/sh
# A CMake project as its users write it, with Plexus's bin directory first on
# PATH: find_package(MPI) must find Plexus's mpicc and mpiexec, and the MPI
# test the project adds (mpiexec -n 2) must run as one 2-rank job.
#   cmake_findmpi.sh BINDIR
set -eu
bindir=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(findmpi C)
find_package(MPI REQUIRED COMPONENTS C)
message(STATUS "mpiexec: ${MPIEXEC_EXECUTABLE}")
add_executable(sum sum.c)
target_link_libraries(sum MPI::MPI_C)
enable_testing()
add_test(NAME sum COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS}
         $<TARGET_FILE:sum> ${MPIEXEC_POSTFLAGS})
CM
cp "$(dirname "$0")/mpi_sum.c" "$work/sum.c"
export PATH="$bindir:$PATH"
out=$(cmake -S "$work" -B "$work/build" 2>&1) || { echo "$out"; echo "FAIL: configure"; exit 1; }
echo "$out" | grep -q "mpiexec: $bindir/mpiexec\$" ||
    { echo "$out"; echo "FAIL: FindMPI did not take $bindir/mpiexec"; exit 1; }
echo "$out" | grep -q "Found MPI_C: $(cd "$bindir/../lib" && pwd)/libmpi" ||
    { echo "$out"; echo "FAIL: FindMPI did not take Plexus's library"; exit 1; }
cmake --build "$work/build" >/dev/null 2>&1 || { echo "FAIL: build"; exit 1; }
ctest --test-dir "$work/build" --output-on-failure --timeout 60 || { echo "FAIL: the project's MPI test"; exit 1; }
echo "PASS FindMPI: mpicc and mpiexec of $bindir"
