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
# Needs root (network namespaces, bench/netns-pair.sh), Plexus built in build/
# and OSU built for it (bench/osu/build.sh OSU_SRC plexus). The pair of nodes
# is created and removed by the script.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
reps=5
rails=1
rate=""
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
        -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "ft_overhead.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
up=("$HERE/netns-pair.sh" up --rails "$rails")
[ -n "$rate" ] && up+=(--rate "$rate")
"${up[@]}" >/dev/null || exit 1
trap '"$HERE/netns-pair.sh" down >/dev/null' EXIT INT TERM
railist=rail0
[ "$rails" -ge 2 ] && railist=rail0,rail1
out=$(mktemp -d)

run() { # bench ft rep args...
    local b=$1 ft=$2 rep=$3
    shift 3
    "$HERE/osu/run.sh" --mpi plexus $pin --nodes bnode0,bnode1 --rails "$railist" \
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
    echo "== $b ($rails rail(s)${rate:+ at $rate}${pin:+, pinned}), median and best of $reps interleaved runs"
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
