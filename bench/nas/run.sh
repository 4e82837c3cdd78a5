#!/bin/sh
# Builds the NAS Parallel Benchmarks (MPI versions) from a source tree you
# fetched yourself against one MPI, into bench/.cache/npb-<mpi>, runs them and
# prints each benchmark's time and verification result. Never gates a build.
#
#   bench/nas/run.sh NPB_MPI_DIR [--mpi plexus|mpich|openmpi] [--class S|A|B]
#                    [--np 4] [--benchmarks "is ep cg mg ft lu bt sp"] [--build-only]
#
# NPB_MPI_DIR is the NPB3.x-MPI folder (holding config/, common/, IS/, ...).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
src=${1:-}
[ -n "$src" ] || { echo "usage: $0 NPB_MPI_DIR [--mpi M] [--class C] [--np N] [--benchmarks LIST]" >&2; exit 2; }
shift
mpi=plexus class=S np=4 list="is ep cg mg ft lu bt sp" run=1
while [ $# -gt 0 ]; do
    case "$1" in
    --mpi) mpi=$2; shift 2 ;;
    --class) class=$2; shift 2 ;;
    --np) np=$2; shift 2 ;;
    --benchmarks) list=$2; shift 2 ;;
    --build-only) run=0; shift ;;
    *) echo "run.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
done
if [ ! -d "$src/config" ] || [ ! -d "$src/common" ]; then
    echo "run.sh: '$src' is not an NPB MPI source folder (no config/ or common/)." >&2
    echo "run.sh: fetch the NAS Parallel Benchmarks and pass their NPB3.x-MPI folder." >&2
    exit 2
fi
case "$mpi" in
plexus)
    cc=$ROOT/build/bin/mpicc fc=$ROOT/build/bin/mpifort
    launch="$ROOT/build/bin/pxrun -n $np" ;;
mpich)
    cc=mpicc.mpich fc=mpifort.mpich launch="mpiexec.mpich -n $np" ;;
openmpi)
    cc=mpicc.openmpi fc=mpifort.openmpi
    launch="mpirun.openmpi --oversubscribe --mca pml ob1 --mca btl vader,self -n $np"
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ;;
*) echo "run.sh: unknown MPI '$mpi'" >&2; exit 2 ;;
esac
[ -x "$cc" ] || command -v "$cc" >/dev/null || { echo "run.sh: $cc not found (build Plexus first)" >&2; exit 2; }

work=$ROOT/bench/.cache/npb-$mpi
rm -rf "$work"
mkdir -p "$work"
cp -r "$src"/. "$work"/
mkdir -p "$work/bin" # an empty folder a source archive may leave out
cat >"$work/config/make.def" <<MK
MPIFC = $fc
FLINK = \$(MPIFC)
FFLAGS = -O2 -fallow-argument-mismatch
FLINKFLAGS = \$(FFLAGS)
MPICC = $cc
CLINK = \$(MPICC)
CFLAGS = -O2
CLINKFLAGS = \$(CFLAGS)
CC = gcc
BINDIR = ../bin
CONVERTFLAG = -DFORTRAN_REC_SIZE=1
RAND = randdp
MK
cd "$work"
for b in $list; do
    if ! make "$b" CLASS="$class" NPROCS="$np" >"build_$b.log" 2>&1; then
        echo "$b.$class: build failed (see $work/build_$b.log)"
        continue
    fi
    [ "$run" = 1 ] || { echo "$b.$class: built (bin/$b.$class.x)"; continue; }
    start=$(date +%s)
    out=$(timeout 1800 $launch "bin/$b.$class.x" 2>&1 || true)
    t=$(echo "$out" | awk '/Time in seconds/ {print $NF}')
    v=$(echo "$out" | grep -qi "verification *= *successful" && echo SUCCESSFUL || echo FAILED)
    echo "$b.$class np=$np $mpi: time ${t:-?} s (wall $(( $(date +%s) - start )) s), verification $v"
done
