#!/bin/bash
# Cost of fault tolerance without faults: osu_latency and osu_bw between two
# emulated nodes with PX_RAIL_FT=1 (default) and PX_RAIL_FT=0, the same build,
# runs interleaved; prints the median of each size and the ratio on/off.
#
#   bench/ft_overhead.sh [--reps N] [--rails 1|2] [--rate RATE] [--only osu_latency|osu_bw]
#                        [--sizes MIN:MAX] [--pin]
#
# --pin runs the rank of each node on its own CPU (bench/osu/pin-exec.sh):
# steadier bandwidth, but latency then includes waking the other CPU.
#
# Besides the median of each size it prints the ratio of the best runs
# (min latency, max bandwidth): on a small shared machine single runs fall
# into fast and slow modes, and the best of several is the steadier figure.
#
# --rate shapes every rail (default 100gbit, far above what a veth carries on
# a small machine: memory speed, the CPU is the limit).
#
# Needs root (pxfab), Plexus built in $PLEXUS_BUILD (default build/) and OSU
# built for it (bench/osu/build.sh OSU_SRC plexus). The two nodes are brought
# up by the script (tools/pxfab up --nodes 2 --rails N --rate RATE) and taken
# down at the end; it refuses to run while another fabric is up.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
PXFAB="$HERE/../tools/pxfab"
reps=5
rails=1
rate=100gbit
only=""
sizes=""
pin=""
while [ $# -gt 0 ]; do
    case "$1" in
        --reps) reps=$2; shift 2 ;;
        --rails) rails=$2; shift 2 ;;
        --rate) rate=$2; shift 2 ;;
        --only) only=$2; shift 2 ;;
        --sizes) sizes=$2; shift 2 ;;
        --pin) pin=--pin; shift ;;
        -h|--help) sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "ft_overhead.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
if [ -e "${PXFAB_STATE_DIR:-/run/pxfab}/state.json" ]; then
    echo "ft_overhead.sh: a pxfab fabric is up; 'tools/pxfab down' first" >&2
    exit 1
fi
trap '"$PXFAB" down >/dev/null' EXIT
trap 'exit 130' INT TERM
"$PXFAB" up --nodes 2 --rails "$rails" --rate "$rate" >/dev/null || exit 1
railist=rail0
[ "$rails" -ge 2 ] && railist=rail0,rail1
out=$(mktemp -d)

run() { # bench ft rep args...
    local b=$1 ft=$2 rep=$3
    shift 3
    "$HERE/osu/run.sh" --mpi plexus $pin --nodes node0,node1 --mgmt pxf-mgmt --rails "$railist" \
        --env PX_RAIL_FT="$ft" "$b" "$@" 2>/dev/null |
        awk '/^[0-9]/ {print $1, $2}' >"$out/$b.$ft.$rep"
}

benches="osu_latency osu_bw"
[ -n "$only" ] && benches=$only
for rep in $(seq 1 "$reps"); do
    for ft in 1 0; do
        for b in $benches; do
            case $b in
                osu_latency) run osu_latency "$ft" "$rep" -m "${sizes:-1:65536}" -i 10000 -x 1000 ;;
                osu_bw) run osu_bw "$ft" "$rep" -m "${sizes:-1:4194304}" ;;
            esac
        done
    done
done

for b in $benches; do
    echo "== $b ($rails rail(s) at $rate${pin:+, pinned}), median and best of $reps interleaved runs"
    printf "%10s %12s %12s %8s %12s %12s %8s\n" size "FT on" "FT off" "on/off" "best on" "best off" "on/off"
    python3 - "$out" "$b" <<'EOF'
import glob, statistics, sys
d, b = sys.argv[1], sys.argv[2]
vals = {1: {}, 0: {}}
for ft in (1, 0):
    for f in glob.glob(f"{d}/{b}.{ft}.*"):
        for line in open(f):
            s, v = line.split()
            vals[ft].setdefault(int(s), []).append(float(v))
best = min if b == "osu_latency" else max
for s in sorted(vals[1]):
    if s in vals[0]:
        on, off = statistics.median(vals[1][s]), statistics.median(vals[0][s])
        bon, boff = best(vals[1][s]), best(vals[0][s])
        print(f"{s:>10} {on:>12.2f} {off:>12.2f} {on / off:>8.3f} {bon:>12.2f} {boff:>12.2f} {bon / boff:>8.3f}")
EOF
done
rm -rf "$out"
