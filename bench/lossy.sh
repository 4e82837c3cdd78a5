#!/usr/bin/env bash
# Times MPI test programs over an emulated fabric that loses packets: four
# pxfab nodes with two rails each, LOSS percent of the packets dropped in each
# direction on every rail, one rank per node; each program is run REPS times
# with each PX_NET. Prints the wall time of each run (pxrun's, start-up
# included) and whether it passed, and writes every run as a JSON line to
# bench/results/lossy-DATE.jsonl. A benchmark: prints figures, asserts
# nothing. Needs root; replaces any pxfab fabric that is up.
#
#   sudo bench/lossy.sh [--loss 5] [--reps 3] [--nets "udp tcp udp,tcp"]
#                       [--progs "p2p_order p2p_sizes p2p_persistent"] [--np 4]
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${PX_BUILD_DIR:-$ROOT/build}
loss=5 reps=3 nets="udp tcp udp,tcp" progs="p2p_order p2p_sizes p2p_persistent" np=4
while [ $# -gt 0 ]; do
    case "$1" in
    --loss) loss=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --nets) nets=$2; shift 2 ;;
    --progs) progs=$2; shift 2 ;;
    --np) np=$2; shift 2 ;;
    *) echo "lossy.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
done
export PYTHONPATH=$ROOT/python
fab() { python3 -m plexus.fab "$@" >/dev/null; }
fab down || true
fab up --nodes 4 --rails 2
trap 'python3 -m plexus.fab down >/dev/null 2>&1 || true' EXIT
for k in 0 1 2 3; do
    for r in 0 1; do
        fab fault loss node$k:rail$r "$loss"
    done
done
hosts=""
for ((i = 0; i < np; i++)); do
    hosts="${hosts:+$hosts,}node$((i % 4)):1"
done
# ranks beyond 4 share nodes: merge node:1 entries into node:N
hosts=$(echo "$hosts" | tr ',' '\n' | sort | uniq -c | awk '{split($2, a, ":"); printf "%s%s:%d", s, a[1], $1; s=","}')
mkdir -p "$ROOT/bench/results"
raw="$ROOT/bench/results/lossy-$(date +%Y%m%d-%H%M%S).jsonl"
echo "loss ${loss}% each way on every rail of 4 nodes x 2 rails, $np ranks ($hosts)"
printf '%-16s %-10s %s\n' program PX_NET "wall s per run (FAIL: did not pass)"
for p in $progs; do
    for net in $nets; do
        line=""
        for ((k = 0; k < reps; k++)); do
            t0=$(date +%s.%N)
            if "$BUILD/bin/pxrun" -n "$np" --hosts "$hosts" --launcher 'ip netns exec {host}' \
                --bootstrap-iface pxf-mgmt --timeout 300 --env PX_NET="$net" \
                "$BUILD/tests/mpi/$p" 2>/dev/null | grep -q "^PASS $p"; then
                ok=""
            else
                ok=" FAIL"
            fi
            t=$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { printf "%.2f", a - b }')
            line="$line $t$ok"
            printf '{"prog": "%s", "net": "%s", "np": %d, "loss": %s, "rep": %d, "wall_s": %s, "passed": %s}\n' \
                "$p" "$net" "$np" "$loss" "$k" "$t" "$([ -z "$ok" ] && echo true || echo false)" >>"$raw"
        done
        printf '%-16s %-10s%s\n' "$p" "$net" "$line"
    done
done
echo "raw runs: $raw"
