#!/usr/bin/env bash
# Plexus over libfabric against libfabric alone and against Plexus over TCP,
# between two emulated nodes (pxfab, 2 nodes, 2 rails): fi_pingpong
# (libfabric-bin: the provider's own round trip, no MPI), then OSU's
# osu_latency and osu_bw with PX_NET=ofi and PX_NET=tcp on one rail and on
# two. Prints figures, asserts nothing. Debian's libfabric-bin has no
# streaming benchmark; with --fabtests, libfabric's own fabtests (the
# fabtests folder of a libfabric source tree of the installed version,
# fetched outside the repository) are built into bench/.cache/fabtests and
# fi_rdm_tagged_bw (the provider's reliable-datagram endpoint, as Plexus
# uses it) and fi_msg_bw (its connected endpoint, the provider before the
# ofi_rxm layer) give the provider's own bandwidth.
#
# usage: bench/ofi.sh [--rate RATE] [--provider PROV] [--osu-dir DIR] [--reps N] [--fabtests DIR]
#   --rate      per-rail rate of the emulated links (default: unlimited)
#   --provider  libfabric provider (default 'tcp;ofi_rxm')
#   --osu-dir   OSU build against Plexus (default bench/.cache/osu-plexus/src)
#   --reps      runs per cell, the median is printed (default 3)
#   --fabtests  a fabtests source folder (e.g. git archive v1.17.0 fabtests of
#               libfabric's repository): also its bandwidth benchmarks
# Needs root, and no pxfab fabric up (it brings up its own and takes it down).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUN="$ROOT/bench/osu/run.sh"
PXFAB="$ROOT/tools/pxfab"
BUILD=${PLEXUS_BUILD:-$ROOT/build}
rate=""
prov="tcp;ofi_rxm"
osu_dir="$ROOT/bench/.cache/osu-plexus/src"
reps=3
fabtests=""
while [ $# -gt 0 ]; do
    case "$1" in
        --rate) rate=$2; shift 2 ;;
        --provider) prov=$2; shift 2 ;;
        --osu-dir) osu_dir=$2; shift 2 ;;
        --reps) reps=$2; shift 2 ;;
        --fabtests) fabtests=$(cd "$2" && pwd); shift 2 ;;
        *) echo "usage: $0 [--rate RATE] [--provider PROV] [--osu-dir DIR] [--reps N] [--fabtests DIR]" >&2; exit 2 ;;
    esac
done
[ "$(id -u)" -eq 0 ] || { echo "ofi.sh: needs root (network namespaces)" >&2; exit 2; }
command -v fi_pingpong >/dev/null || { echo "ofi.sh: fi_pingpong missing (libfabric-bin)" >&2; exit 2; }
# fabtests, built once into the cache against the installed libfabric
ftdir="$ROOT/bench/.cache/fabtests"
if [ -n "$fabtests" ] && [ ! -x "$ftdir/benchmarks/fi_rdm_tagged_bw" ]; then
    [ -f "$fabtests/configure.ac" ] || { echo "ofi.sh: $fabtests is not a fabtests source folder" >&2; exit 2; }
    rm -rf "$ftdir" && mkdir -p "$ftdir" && cp -r "$fabtests/." "$ftdir/"
    (cd "$ftdir" && ./autogen.sh && ./configure --with-libfabric=/usr &&
        make -j"$(nproc)" benchmarks/fi_rdm_tagged_bw benchmarks/fi_msg_bw) >"$ftdir.log" 2>&1 ||
        { echo "ofi.sh: building fabtests failed, see $ftdir.log" >&2; exit 1; }
fi
if "$PXFAB" status 2>/dev/null | grep -q "fabric: up"; then
    echo "ofi.sh: a pxfab fabric is up already (another job?); 'tools/pxfab down' first" >&2
    exit 2
fi
"$PXFAB" up --nodes 2 --rails 2 ${rate:+--rate "$rate"} >/dev/null
trap '"$PXFAB" down >/dev/null 2>&1 || true' EXIT
peer=$(ip netns exec node1 ip -4 -o addr show dev rail0 | awk '{ split($4, a, "/"); print a[1] }')

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR ? a[int((NR + 1) / 2)] : "nan") }'; }

# fi_pingpong SIZE -> "usec/xfer MB/s" (median of the runs by latency)
pingpong() {
    local size=$1 out=() iters=2000
    [ "$size" -ge 65536 ] && iters=200
    for _ in $(seq "$reps"); do
        ip netns exec node1 timeout 60 fi_pingpong -p "$prov" -e rdm -d rail0 -I "$iters" \
            -S "$size" >/dev/null 2>&1 &
        local srv=$!
        sleep 0.5
        out+=("$(ip netns exec node0 timeout 60 fi_pingpong -p "$prov" -e rdm -d rail0 -I "$iters" \
            -S "$size" "$peer" 2>/dev/null | awk '$1 ~ /^[0-9]/ { print $7, $6; exit }')")
        wait "$srv" || true
    done
    printf '%s\n' "${out[@]}" | sort -g | awk '{ a[NR] = $0 } END { print (NR ? a[int((NR + 1) / 2)] : "nan nan") }'
}

# fabtests BENCH PROV SIZE -> MB/s (median of the runs); the server on node1's
# rail0, the client from node0's
ftbw() {
    local bench=$1 p=$2 size=$3 vals=() iters=2000 mine
    [ "$size" -ge 65536 ] && iters=200
    mine=$(ip netns exec node0 ip -4 -o addr show dev rail0 | awk '{ split($4, a, "/"); print a[1] }')
    for _ in $(seq "$reps"); do
        ip netns exec node1 timeout 60 "$ftdir/benchmarks/$bench" -p "$p" -s "$peer" -I "$iters" \
            -S "$size" >/dev/null 2>&1 &
        local srv=$!
        sleep 0.5
        vals+=("$(ip netns exec node0 timeout 60 "$ftdir/benchmarks/$bench" -p "$p" -s "$mine" \
            -I "$iters" -S "$size" "$peer" 2>/dev/null | awk '$1 ~ /^[0-9]/ { print $5; exit }')")
        wait "$srv" || true
    done
    printf '%s\n' "${vals[@]}" | median
}

# osu MPI BENCH SIZE NET RAILS -> the median value at SIZE
osu() {
    local mpi=$1 bench=$2 size=$3 net=$4 rails=$5 vals=() args=()
    if [ "$mpi" = plexus ]; then
        args=(--osu-dir "$osu_dir" --env "PX_OFI_PROVIDER=$prov" --env "LD_LIBRARY_PATH=$BUILD/lib")
    fi
    for _ in $(seq "$reps"); do
        vals+=("$("$RUN" --mpi "$mpi" "${args[@]}" --nodes node0,node1 --rails "$rails" \
            --net "$net" "pt2pt/$bench" -m "$size:$size" 2>/dev/null |
            awk -v s="$size" '$1 == s { print $2; exit }')")
    done
    printf '%s\n' "${vals[@]}" | median
}

echo "two emulated nodes${rate:+, $rate per rail}; provider $prov; median of $reps"
printf '%-30s %10s %10s %10s %10s\n' "" "8 B" "4 KB" "64 KB" "1 MB"
for what in lat bw; do
    row=()
    for size in 8 4096 65536 1048576; do
        r=$(pingpong "$size")
        if [ "$what" = lat ]; then row+=("${r%% *}"); else row+=("${r##* }"); fi
    done
    label="fi_pingpong rail0 $([ "$what" = lat ] && echo "us/xfer" || echo "MB/s")"
    printf '%-30s %10s %10s %10s %10s\n' "$label" "${row[@]}"
done
if [ -n "$fabtests" ]; then
    for b in "fi_rdm_tagged_bw:$prov" "fi_msg_bw:${prov%%;*}"; do
        row=()
        for size in 8 4096 65536 1048576; do row+=("$(ftbw "${b%%:*}" "${b#*:}" "$size")"); done
        printf '%-30s %10s %10s %10s %10s\n' "${b%%:*} ${b#*:} rail0 MB/s" "${row[@]}"
    done
fi
# the runs of one rail set, Plexus's transports and then the peers over TCP
peers=()
for mpi in mpich openmpi; do
    [ -x "$ROOT/bench/.cache/osu-$mpi/src/c/mpi/pt2pt/standard/osu_latency" ] && peers+=("$mpi")
done
for rails in rail0 rail0,rail1; do
    for run in plexus:ofi plexus:tcp "${peers[@]/%/:tcp}"; do
        mpi=${run%%:*} net=${run##*:} lat=() bw=()
        for size in 8 4096 65536 1048576; do
            lat+=("$(osu "$mpi" osu_latency "$size" "$net" "$rails")")
            bw+=("$(osu "$mpi" osu_bw "$size" "$net" "$rails")")
        done
        printf '%-30s %10s %10s %10s %10s\n' "osu_latency $mpi/$net $rails us" "${lat[@]}"
        printf '%-30s %10s %10s %10s %10s\n' "osu_bw $mpi/$net $rails MB/s" "${bw[@]}"
    done
done
