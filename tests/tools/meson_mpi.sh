#!/bin/sh
# A Meson project as its users write it, with Plexus's bin directory first on
# PATH: dependency('mpi') through the compiler wrapper (method config-tool:
# Open MPI's --showme queries) must take Plexus's mpicc, and the project's MPI
# test (mpiexec -n 2) must run as one 2-rank job.
#   meson_mpi.sh BINDIR
set -eu
bindir=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/meson.build" <<'MB'
project('mesonmpi', 'c')
mpi = dependency('mpi', language: 'c', method: 'config-tool')
exe = executable('sum', 'sum.c', dependencies: mpi)
test('sum', find_program('mpiexec'), args: ['-n', '2', exe])
MB
cp "$(dirname "$0")/mpi_sum.c" "$work/sum.c"
export PATH="$bindir:$PATH"
out=$(cd "$work" && meson setup build 2>&1) || { echo "$out"; echo "FAIL: meson setup"; exit 1; }
echo "$out" | grep -q "mpicc found: YES ($bindir/mpicc)" ||
    { echo "$out"; echo "FAIL: Meson did not take $bindir/mpicc"; exit 1; }
echo "$out" | grep -q "Program mpiexec found: YES ($bindir/mpiexec)" ||
    { echo "$out"; echo "FAIL: Meson did not take $bindir/mpiexec"; exit 1; }
meson test -C "$work/build" --print-errorlogs || { echo "FAIL: the project's MPI test"; exit 1; }
echo "PASS Meson: mpicc and mpiexec of $bindir"
