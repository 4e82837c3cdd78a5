#!/bin/sh
# pxperf over each transport and progress mode (docs/vibe.md): one JSON and
# one table per run in $OUT, then the summary docs/vibe.md shows: base
# latency, bandwidth and CPU per transport and mode, idle-wait CPU and
# wake-up, and the reliability levels side by side (reliable datagrams,
# udp, against tcp), which the interface cannot vary within one run.
#   BUILD=build OUT=vibe-results NP=2 QUICK=--quick sh bench/vibe.sh
# NETS and MODES override the lists (NETS="shm,ofi" with libfabric).
set -eu
BUILD=${BUILD:-build}
OUT=${OUT:-vibe-results}
NP=${NP:-2}
QUICK=${QUICK:-}
NETS=${NETS:-"shm,tcp tcp udp udp,tcp"}
MODES=${MODES:-"spin block sleep"}
mkdir -p "$OUT"
for net in $NETS; do
    for mode in $MODES; do
        name=$(echo "$net" | tr , +)-$mode
        "$BUILD/bin/pxrun" -n "$NP" --env "PX_NET=$net" --env "PX_PROGRESS_MODE=$mode" \
            "$BUILD/bin/pxperf" $QUICK --json "$OUT/$name.json" >"$OUT/$name.txt"
    done
done
python3 - "$OUT" <<'PY'
import glob, json, sys
runs = [json.load(open(f)) for f in sorted(glob.glob(sys.argv[1] + "/*.json"))]
print("| PX_NET | channel | mode | latency µs | bandwidth MB/s | CPU ping-pong | CPU streaming "
      "| CPU idle-waiting | wake from idle µs |")
print("|---|---|---|---|---|---|---|---|---|")
for r in runs:
    b = r["base"]
    print(f"| {r['net']} | {r['transport']} | {r['progress_mode']} | {b['latency_us']:.2f} "
          f"| {b['bandwidth_mbs']:.0f} | {100 * b['cpu_latency']:.0f}% "
          f"| {100 * b['cpu_bandwidth']:.0f}% | {100 * b['idle_cpu']:.1f}% "
          f"| {b['idle_wake_us']:.1f} |")
# reliability: the same mode over reliable datagrams and over TCP
by = {(r["transport"], r["progress_mode"]): r for r in runs}
for mode in sorted({r["progress_mode"] for r in runs}):
    t, u = by.get(("tcp", mode)), by.get(("udp", mode))
    if t and u:
        for m in ("latency_us", "bandwidth_mbs"):
            a, b = u["base"][m], t["base"][m]
            print(f"reliability ({mode}): {m} udp {a:.2f} against tcp {b:.2f} ({100 * (a - b) / b:+.1f}%)")
PY
