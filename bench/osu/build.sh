#!/bin/sh
# Build the OSU Micro-Benchmarks against one or several MPI libraries.
#
#   bench/osu/build.sh SRC_DIR [mpich|openmpi|plexus|all] [--force] [--dest DIR]
#
# SRC_DIR is an unpacked OSU Micro-Benchmarks 7.4 source tree kept outside the
# repository (see docs/performance.md for how to obtain it). Each build goes to
# bench/.cache/osu-<mpi>/src, which git ignores. A build is skipped when the
# source, the compiler wrapper and its mpi.h are unchanged since the last one.
#
# Plexus is built with $PLEXUS_BUILD/bin/mpicc (default <repo>/build); when that
# does not exist yet the Plexus build is skipped with a message (not an error).
# --dest DIR puts a single MPI's build in DIR/src instead of bench/.cache/osu-<mpi>,
# e.g. to keep a build against another Plexus build directory apart.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CACHE="$ROOT/bench/.cache"
JOBS=${JOBS:-2}
PLEXUS_BUILD=${PLEXUS_BUILD:-$ROOT/build}

usage() {
    cat >&2 <<EOF
usage: $0 SRC_DIR [mpich|openmpi|plexus|all] [--force] [--dest DIR]

SRC_DIR     OSU Micro-Benchmarks 7.4 source tree (the directory holding configure.ac)
--force     rebuild even when nothing changed
--dest DIR  build directory for a single MPI (default bench/.cache/osu-<mpi>)
Environment: JOBS (make parallelism, default 2),
             PLEXUS_BUILD (Plexus build directory holding bin/mpicc, default <repo>/build)
EOF
}

src=""
which_mpi="all"
force=0
dest_opt=""
want_dest=0
for arg in "$@"; do
    if [ "$want_dest" -eq 1 ]; then
        dest_opt=$arg
        want_dest=0
        continue
    fi
    case "$arg" in
        -h|--help) usage; exit 0 ;;
        --force) force=1 ;;
        --dest) want_dest=1 ;;
        --dest=*) dest_opt=${arg#--dest=} ;;
        mpich|openmpi|plexus|all) which_mpi=$arg ;;
        -*) echo "build.sh: unknown option '$arg'" >&2; usage; exit 2 ;;
        *)
            if [ -n "$src" ]; then
                echo "build.sh: unexpected argument '$arg'" >&2; usage; exit 2
            fi
            src=$arg ;;
    esac
done

if [ -z "$src" ] || [ "$want_dest" -eq 1 ]; then
    usage
    exit 2
fi
if [ -n "$dest_opt" ] && [ "$which_mpi" = all ]; then
    echo "build.sh: --dest needs one MPI (mpich, openmpi or plexus), not all" >&2
    exit 2
fi
case "$dest_opt" in
    ""|/*) ;;
    *) dest_opt="$PWD/$dest_opt" ;;
esac

if [ ! -f "$src/configure.ac" ] || [ ! -d "$src/c/mpi" ]; then
    cat >&2 <<EOF
build.sh: '$src' is not an OSU Micro-Benchmarks source tree (no configure.ac and c/mpi/).
Put an unpacked OSU Micro-Benchmarks 7.4 source there, for example:
  - the release tarball osu-micro-benchmarks-7.4.tar.gz from the OSU web site
    (mvapich.cse.ohio-state.edu/benchmarks), unpacked: tar -xzf ... -C /some/dir
  - or the first commit of the GitHub mirror johnpzh/osu-micro-benchmarks-7.4-ext:
      git clone https://github.com/johnpzh/osu-micro-benchmarks-7.4-ext osu.git
      mkdir -p /some/dir && git -C osu.git archive \$(git -C osu.git rev-list --max-parents=0 HEAD) | tar -x -C /some/dir
Then run: $0 /some/dir all
Keep the source outside the repository; builds go to bench/.cache/ (git-ignored).
EOF
    exit 1
fi
src=$(cd "$src" && pwd)

# Compiler wrappers per MPI; "plexus" uses the in-tree build.
wrappers() {
    case "$1" in
        mpich) echo "mpicc.mpich mpicxx.mpich" ;;
        openmpi) echo "mpicc.openmpi mpicxx.openmpi" ;;
        plexus) echo "$PLEXUS_BUILD/bin/mpicc $PLEXUS_BUILD/bin/mpicxx" ;;
    esac
}

# Fingerprint of what a build depends on: source location and contents listing,
# the wrapper's -show line, and the mpi.h it would use.
fingerprint() {
    _cc=$1
    {
        echo "src=$src"
        (cd "$src" && find c configure.ac -type f \( -name '*.[ch]' -o -name '*.am' -o -name '*.ac' \) \
            -exec cksum {} + | sort)
        echo "cc=$_cc"
        "$_cc" -show 2>/dev/null || true
        for inc in $("$_cc" -show 2>/dev/null | tr ' ' '\n' | sed -n 's/^-I//p'); do
            [ -f "$inc/mpi.h" ] && cksum "$inc/mpi.h"
        done
        cksum "$(command -v "$_cc")" 2>/dev/null || true
    } | cksum | cut -d' ' -f1
}

build_one() {
    mpi=$1
    set -- $(wrappers "$mpi")
    cc=$1
    cxx=$2
    if ! command -v "$cc" >/dev/null 2>&1; then
        if [ "$mpi" = plexus ]; then
            echo "build.sh: skipping plexus: $cc does not exist yet (build Plexus first: cmake -S . -B build && cmake --build build)."
            return 0
        fi
        echo "build.sh: skipping $mpi: $cc not found (install with scripts/install-deps.sh --peers)."
        return 0
    fi
    if ! command -v "$cxx" >/dev/null 2>&1; then
        # The C benchmarks are what we run; a C++ wrapper only matters for configure.
        echo "build.sh: $mpi: $cxx not found, using $cc as CXX"
        cxx=$cc
    fi

    dest=${dest_opt:-$CACHE/osu-$mpi}
    fp=$(fingerprint "$cc")
    if [ "$force" -eq 0 ] && [ -f "$dest/.stamp" ] && [ "$(cat "$dest/.stamp")" = "$fp" ] \
            && [ -x "$dest/src/c/mpi/pt2pt/standard/osu_latency" ]; then
        echo "build.sh: $mpi: up to date in $dest/src (--force to rebuild)"
        return 0
    fi

    echo "build.sh: $mpi: building in $dest/src with CC=$cc CXX=$cxx"
    rm -rf "$dest"
    mkdir -p "$dest"
    cp -a "$src" "$dest/src" || return 1
    log="$dest/build.log"
    (
        cd "$dest/src" || exit 1
        # regenerated every time: a tree's configure and ltmain.sh come from
        # the libtool of whoever made the release, and a mismatch with this
        # machine's libtool stops the link ("Version mismatch error")
        if [ ! -x configure ] || [ configure.ac -nt configure ] || command -v autoreconf > /dev/null; then
            echo "== autoreconf -fi"
            autoreconf -fi || exit 1
        fi
        echo "== ./configure CC=$cc CXX=$cxx"
        ./configure CC="$cc" CXX="$cxx" || exit 1
        # -k: a library still missing some MPI functions (e.g. one-sided) must
        # not prevent the benchmarks it can link from being built.
        echo "== make -k -j$JOBS"
        make -k -j"$JOBS"
        # OSU's configure only builds these two when MPI_Accumulate exists
        # (its MPI-2 probe), although neither uses one-sided calls.
        echo "== make -k osu_latency_mt osu_latency_mp"
        make -k -C c/mpi/pt2pt/standard osu_latency_mt osu_latency_mp
        exit 0
    ) >"$log" 2>&1
    rc=$?
    if [ "$rc" -ne 0 ]; then
        echo "build.sh: $mpi: configure failed; last lines of $log:" >&2
        tail -20 "$log" >&2
        return 1
    fi

    # Benchmarks the source's Makefiles would build (stray .c files are ignored).
    expected=$(cd "$dest/src" && for c in $(find c/mpi -name 'osu_*.c' ! -path '*/utils/*' | sort); do
        grep -qw "$(basename "${c%.c}")" "$(dirname "$c")/Makefile.am" 2>/dev/null && echo "${c%.c}"
    done)
    total=$(echo "$expected" | wc -w)
    built=0
    missing=""
    for b in $expected; do
        if [ -x "$dest/src/$b" ]; then built=$((built + 1)); else missing="$missing $b"; fi
    done
    echo "build.sh: $mpi: $built of $total benchmarks built (log: $log)"
    if [ -n "$missing" ]; then
        echo "build.sh: $mpi: not built (usually MPI functions the library lacks):"
        for b in $missing; do echo "    $b"; done | head -40
        # Undefined MPI symbols are the usual cause with a young MPI library.
        grep -o "undefined reference to \`[A-Za-z_0-9]*'" "$log" | sort | uniq -c | sort -rn | head -20 \
            | sed 's/^/    /'
    fi
    if [ ! -x "$dest/src/c/mpi/pt2pt/standard/osu_latency" ]; then
        echo "build.sh: $mpi: osu_latency was not built; see $log" >&2
        return 1
    fi
    echo "$fp" >"$dest/.stamp"
    return 0
}

if [ "$which_mpi" = all ]; then
    list="mpich openmpi plexus"
else
    list=$which_mpi
fi

status=0
for m in $list; do
    build_one "$m" || status=1
done
exit $status
