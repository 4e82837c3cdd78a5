#!/bin/sh
# Build the IOR benchmark against one or several MPI libraries.
#
#   bench/io/build.sh SRC_DIR [mpich|openmpi|plexus|all] [--force]
#
# SRC_DIR is an unpacked IOR 4.0 source tree kept outside the repository
# (e.g. `git archive 4.0.0` of github.com/hpc/ior). Each build goes to
# bench/.cache/ior-<mpi>, which git ignores; bench/io/ior.py runs them.
# Plexus is built with $PLEXUS_BUILD/bin/mpicc (default <repo>/build).
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CACHE="$ROOT/bench/.cache"
JOBS=${JOBS:-2}
PLEXUS_BUILD=${PLEXUS_BUILD:-$ROOT/build}

src=""
which_mpi=all
force=0
for arg in "$@"; do
    case "$arg" in
        -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
        --force) force=1 ;;
        mpich|openmpi|plexus|all) which_mpi=$arg ;;
        -*) echo "build.sh: unknown option '$arg'" >&2; exit 2 ;;
        *) src=$arg ;;
    esac
done
if [ -z "$src" ] || [ ! -f "$src/configure.ac" ] || [ ! -f "$src/src/ior.c" ]; then
    echo "build.sh: give an IOR source tree (the directory holding configure.ac and src/ior.c)" >&2
    exit 2
fi
src=$(cd "$src" && pwd)

build_one() {
    mpi=$1
    case "$mpi" in
        mpich) cc=mpicc.mpich ;;
        openmpi) cc=mpicc.openmpi ;;
        plexus) cc=$PLEXUS_BUILD/bin/mpicc ;;
    esac
    if ! command -v "$cc" >/dev/null 2>&1; then
        echo "build.sh: skipping $mpi: $cc not found"
        return 0
    fi
    dest=$CACHE/ior-$mpi
    if [ "$force" -eq 0 ] && [ -x "$dest/src/ior" ] && [ "$dest/src/ior" -nt "$(command -v "$cc")" ]; then
        echo "build.sh: $mpi: up to date in $dest (--force to rebuild)"
        return 0
    fi
    echo "build.sh: $mpi: building in $dest with CC=$cc"
    rm -rf "$dest"
    mkdir -p "$dest"
    cp -a "$src/." "$dest/" || return 1
    (
        cd "$dest" || exit 1
        [ -x configure ] || ./bootstrap || exit 1
        ./configure CC="$cc" MPICC="$cc" --without-hdf5 --without-ncmpi || exit 1
        make -j"$JOBS"
    ) >"$dest/build.log" 2>&1
    if [ ! -x "$dest/src/ior" ]; then
        echo "build.sh: $mpi: IOR was not built; last lines of $dest/build.log:" >&2
        tail -20 "$dest/build.log" >&2
        return 1
    fi
    echo "build.sh: $mpi: $dest/src/ior"
}

rc=0
for m in mpich openmpi plexus; do
    if [ "$which_mpi" = all ] || [ "$which_mpi" = "$m" ]; then
        build_one "$m" || rc=1
    fi
done
exit $rc
