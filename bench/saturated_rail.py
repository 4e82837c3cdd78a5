#!/usr/bin/env python3
"""A rail filled by another job's traffic (root): how often Plexus takes it
for dead, and how long the stream stalls.

Two pxfab nodes joined by two rails at --rate; four TCP flows from node0 to
node1 fill rail1 (plexus.fab.probe.background_tcp) while tests/mpi/ft_stream
sends a checksummed stream of 1 KB to 4 MB messages from node0 to node1 over
both rails for --seconds. With --slow RATE, rail1's link also drops to RATE
--slow-at seconds after the job starts (a degraded link under the same
traffic). Each run brings the fabric up afresh (a run on a fabric that has
carried traffic before differs). For each build in --build (comma-separated:
their runs alternate) and each PX_RAIL_DETECT in --detect, --reps runs; per
run: subchannels declared DOWN, subchannels found late (delivering nothing
while their path answered), the longest gap between completed messages, the
stream's rate, bytes sent twice. Output: a Markdown table on stdout, every
run as JSON in --json (default bench/results/saturated-rail-DATE.json). A
benchmark: prints figures, never fails a build.

  bench/saturated_rail.py --reps 20 --detect 0.5,1
  bench/saturated_rail.py --reps 10 --slow 20mbit --build /tmp/old/build,build
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "results")
PXFAB = os.path.join(ROOT, "tools", "pxfab")
SIZES = "1k,48k,1m,4m"
sys.path.insert(0, os.path.join(ROOT, "python"))
from plexus.fab.probe import background_tcp  # noqa: E402


def run_once(build, a, detect):
    subprocess.run([PXFAB, "down"], capture_output=True)
    subprocess.run([PXFAB, "up", "--nodes", "2", "--rails", "2", "--rate", a.rate],
                   capture_output=True, check=True)
    cmd = [os.path.join(build, "bin", "pxrun"), "--launcher", "ip netns exec {host}",
           "--hosts", "node0:1,node1:1", "--bootstrap-iface", "pxf-mgmt", "--timeout",
           str(a.seconds + 30), "--env", f"PX_NET={a.net}", "--env", "PX_PROFILE=1",
           "--env", f"PX_RAIL_DETECT={detect}",
           os.path.join(build, "tests", "mpi", "ft_stream"), "--seconds", str(a.seconds),
           "--mode", "pairs", "--sizes", SIZES]
    slow = None
    if a.slow:
        slow = threading.Timer(a.slow_at, subprocess.run,
                               ([PXFAB, "fault", "rate", "node1:rail1", a.slow],),
                               {"capture_output": True})
    with background_tcp("node0", "node1", "10.101.0.2", a.seconds + 4):
        if slow:
            slow.start()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.seconds + 60)
        finally:
            if slow:
                slow.cancel()
                slow.join()
    res = None
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            res = json.loads(line)
    down = sum(int(d) for d in re.findall(r"faults: .*? down (\d+) ", p.stderr))
    late = sum(int(d) for d in re.findall(r"faults: .* late (\d+) ", p.stderr))
    again = sum(int(b) for b in re.findall(r"failover frames \d+ bytes (\d+)", p.stderr))
    return {"build": build, "detect_s": detect, "slow": a.slow, "rc": p.returncode,
            "ok": bool(res and res.get("ok")), "down": down, "late": late,
            "max_stall_s": res and res["max_stall_s"], "rate_MBs": res and res["rate_MBs"],
            "bytes": res and res["bytes"], "bytes_sent_twice": again,
            **({} if res and res.get("ok") else {"log_tail": p.stderr[-6000:]})}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"),
                    help="build directories, comma-separated (their runs alternate)")
    ap.add_argument("--detect", default="0.5", help="PX_RAIL_DETECT values, comma-separated")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--seconds", type=int, default=8)
    ap.add_argument("--rate", default="1gbit")
    ap.add_argument("--slow", help="rail1's rate from --slow-at on (pxfab fault rate)")
    ap.add_argument("--slow-at", type=float, default=3.0)
    ap.add_argument("--net", default="tcp")
    ap.add_argument("--json", default=os.path.join(
        RESULTS, time.strftime("saturated-rail-%Y%m%d-%H%M.json")))
    a = ap.parse_args()
    builds = [os.path.abspath(b) for b in a.build.split(",")]
    runs = []
    try:
        for d in a.detect.split(","):
            for i in range(a.reps):
                for b in builds:
                    r = run_once(b, a, float(d))
                    runs.append(r)
                    print(f"{b} PX_RAIL_DETECT={d} run {i + 1}: {r}", file=sys.stderr, flush=True)
    finally:
        subprocess.run([PXFAB, "down"], capture_output=True)
        os.makedirs(os.path.dirname(a.json), exist_ok=True)
        with open(a.json, "w") as f:
            json.dump({"date": time.strftime("%Y-%m-%d"), "net": a.net, "rate": a.rate,
                       "slow": a.slow, "slow_at": a.slow_at, "seconds": a.seconds,
                       "runs": runs}, f, indent=1)
    print("| build | PX_RAIL_DETECT (s) | runs | correct | runs with a DOWN | runs with a late "
          "rail | longest stall, median [min–max] (s) | rate, median (MB/s) | sent twice, "
          "median (MB) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for b in builds:
        for d in a.detect.split(","):
            rs = [r for r in runs if r["detect_s"] == float(d) and r["build"] == b]
            stalls = sorted(r["max_stall_s"] for r in rs if r["max_stall_s"] is not None)
            rates = [r["rate_MBs"] for r in rs if r["rate_MBs"] is not None]
            twice = [r["bytes_sent_twice"] / 1e6 for r in rs]
            cells = (f"{statistics.median(stalls):.2f} [{stalls[0]:.2f}–{stalls[-1]:.2f}] | "
                     f"{statistics.median(rates):.0f} | {statistics.median(twice):.1f}"
                     if stalls and rates else "– | – | –")
            print(f"| {os.path.relpath(b, ROOT)} | {d} | {len(rs)} | {sum(r['ok'] for r in rs)} | "
                  f"{sum(1 for r in rs if r['down'])} | {sum(1 for r in rs if r['late'])} | "
                  f"{cells} |")
    print(f"\nraw runs: {a.json}")


if __name__ == "__main__":
    main()
