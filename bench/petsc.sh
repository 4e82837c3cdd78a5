#!/usr/bin/env bash
# PETSc built with an MPI's compiler wrappers, as its users build it, then its
# own checks and parts of its test harness run with that MPI's launcher.
#
#   bench/petsc.sh PETSC_SRC [--mpi plexus|mpich|openmpi] [--search PATTERN]...
#
# PETSC_SRC: an unpacked PETSc source tree, for example the sdist PyPI serves:
#   pip download --no-deps --no-binary :all: petsc==3.26.1 -d /tmp/petsc
#   tar xzf /tmp/petsc/petsc-3.26.1.tar.gz -C /tmp/petsc
# The tree is copied to bench/.cache/petsc/<mpi> (PETSc builds inside its
# tree) and built once (configure and make take about 10 minutes on 2 cores;
# BLAS and LAPACK from Debian's liblapack-dev). Then `make check` and, for
# each --search pattern (default: the star-forest tests, which use
# one-sided and neighbourhood communication, and the KSP and SNES tutorials),
# PETSc's harness with that pattern. Prints each part's counts of passed and
# failed tests and its time; raw counts go to
# bench/results/petsc-<mpi>-DATE.json. A benchmark: it never fails a build.
set -u

usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 1 ] || usage
src=$(readlink -f "$1") || usage
shift
mpi=plexus
searches=()
while [ $# -gt 0 ]; do
    case "$1" in
    --mpi) mpi="$2"; shift 2 ;;
    --search) searches+=("$2"); shift 2 ;;
    *) usage ;;
    esac
done
[ ${#searches[@]} -gt 0 ] || searches=('vec_is_sf_tests-*' 'ksp_ksp_tutorials-*' 'snes_tutorials-*')
[ -x "$src/configure" ] || { echo "petsc.sh: $src is not a PETSc source tree" >&2; exit 2; }

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${PLEXUS_BUILD:-$root/build}
case "$mpi" in
plexus) cc=$build/bin/mpicc fc=$build/bin/mpifort exe=$build/bin/pxrun ;;
mpich) cc=mpicc.mpich fc=mpifort.mpich exe=mpiexec.mpich ;;
openmpi)
    cc=mpicc.openmpi fc=mpifort.openmpi exe="mpirun.openmpi --oversubscribe"
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ;;
*) usage ;;
esac

dir=$here/.cache/petsc/$mpi
arch=arch-$mpi
if [ ! -f "$dir/$arch/lib/petsc/conf/petscvariables" ] || [ ! -f "$dir/.built" ]; then
    rm -rf "$dir"
    mkdir -p "$(dirname "$dir")"
    cp -a "$src" "$dir"
    (cd "$dir" && ./configure PETSC_DIR="$dir" PETSC_ARCH=$arch --with-cc="$cc" --with-cxx=0 \
        --with-fc="$fc" --with-mpiexec="$exe" --with-debugging=0 --with-x=0 \
        COPTFLAGS=-O2 FOPTFLAGS=-O2 >"$dir/configure.out" 2>&1) ||
        { echo "petsc.sh: configure failed, see $dir/configure.out" >&2; exit 1; }
    make -C "$dir" PETSC_DIR="$dir" PETSC_ARCH=$arch all >"$dir/make.out" 2>&1 ||
        { echo "petsc.sh: make failed, see $dir/make.out" >&2; exit 1; }
    touch "$dir/.built"
fi

stamp=$(date +%Y%m%d-%H%M)
json=$here/results/petsc-$mpi-$stamp.json
mkdir -p "$here/results"
parts=()
t0=$(date +%s.%N)
make -C "$dir" PETSC_DIR="$dir" PETSC_ARCH=$arch check >"$dir/check.out" 2>&1
check_rc=$?
t1=$(date +%s.%N)
echo "PETSc $(basename "$src") with $mpi, $(date '+%F %H:%M')"
printf '%-24s %8s %8s %10s\n' part passed failed seconds
printf '%-24s %8s %8s %10.1f\n' "make check" "$(grep -c 'run successfully' "$dir/check.out")" \
    "$(grep -ci 'possible error\|possible problem' "$dir/check.out")" "$(echo "$t1 - $t0" | bc)"
for s in "${searches[@]}"; do
    rm -f "$dir/$arch/tests/counts/"$s.counts
    t0=$(date +%s.%N)
    make -C "$dir" -f gmakefile test PETSC_DIR="$dir" PETSC_ARCH=$arch search="$s" \
        >"$dir/test-${s//[^A-Za-z0-9_]/_}.out" 2>&1
    t1=$(date +%s.%N)
    read -r ok bad < <(cat "$dir/$arch/tests/counts/"$s.counts 2>/dev/null |
        awk '$1 == "success" {s += $2} $1 == "failed" {f += $2} END {print s + 0, f + 0}')
    secs=$(echo "$t1 - $t0" | bc)
    printf '%-24s %8s %8s %10.1f\n' "$s" "$ok" "$bad" "$secs"
    parts+=("{\"search\": \"$s\", \"passed\": $ok, \"failed\": $bad, \"seconds\": $secs}")
    grep '^ *not ok' "$dir/test-${s//[^A-Za-z0-9_]/_}.out" | head -20 | sed 's/^/    /'
done
{
    echo "{\"mpi\": \"$mpi\", \"petsc\": \"$(basename "$src")\", \"date\": \"$stamp\","
    echo " \"check_rc\": $check_rc, \"parts\": ["
    (IFS=,; echo "  ${parts[*]}")
    echo " ]}"
} >"$json"
echo "raw counts: $json"
