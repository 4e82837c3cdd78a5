#!/bin/bash
# Cost of fault tolerance without faults: osu_latency and osu_bw between two
# emulated nodes with PX_RAIL_FT=1 (default) and PX_RAIL_FT=0, the same build,
# runs interleaved; prints the median of each size and the ratio on/off.
#
#   bench/ft_overhead.sh [--reps N] [--rails 1|2] [--rate RATE]
#
# Needs root (network namespaces, bench/netns-pair.sh), Plexus built in build/
# and OSU built for it (bench/osu/build.sh OSU_SRC plexus). The pair of nodes
# is created and removed by the script.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
reps=5
rails=1
rate=""
while [ $# -gt 0 ]; do
    case "$1" in
        --reps) reps=$2; shift 2 ;;
        --rails) rails=$2; shift 2 ;;
        --rate) rate=$2; shift 2 ;;
        -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
    "$HERE/osu/run.sh" --mpi plexus --nodes bnode0,bnode1 --rails "$railist" \
        --env PX_RAIL_FT="$ft" "$b" "$@" 2>/dev/null |
        awk '/^[0-9]/ {print $1, $2}' >"$out/$b.$ft.$rep"
}

for rep in $(seq 1 "$reps"); do
    for ft in 1 0; do
        run osu_latency "$ft" "$rep" -m 1:65536 -i 10000 -x 1000
        run osu_bw "$ft" "$rep" -m 1:4194304
    done
done

for b in osu_latency osu_bw; do
    echo "== $b ($rails rail(s)${rate:+ at $rate}), median of $reps interleaved runs"
    printf "%10s %12s %12s %8s\n" size "FT on" "FT off" "on/off"
    python3 - "$out" "$b" <<'EOF'
import glob, statistics, sys
d, b = sys.argv[1], sys.argv[2]
vals = {1: {}, 0: {}}
for ft in (1, 0):
    for f in glob.glob(f"{d}/{b}.{ft}.*"):
        for line in open(f):
            s, v = line.split()
            vals[ft].setdefault(int(s), []).append(float(v))
for s in sorted(vals[1]):
    if s in vals[0]:
        on, off = statistics.median(vals[1][s]), statistics.median(vals[0][s])
        print(f"{s:>10} {on:>12.2f} {off:>12.2f} {on / off:>8.3f}")
EOF
done
rm -rf "$out"
