#!/usr/bin/env python3
"""A rail filled by another job's traffic (root): how often Plexus takes it
for dead, and how long the stream stalls.

Two pxfab nodes joined by two rails at --rate; four TCP flows from node0 to
node1 fill rail1 (plexus.fab.probe) while tests/mpi/ft_stream sends a
checksummed stream of 1 KB to 4 MB messages from node0 to node1 over both
rails for --seconds. Each run brings the fabric up afresh (a run on a fabric
that has carried traffic before differs). For each PX_RAIL_DETECT in
--detect, --reps runs; per run: subchannels declared DOWN, the longest gap
between completed messages, the stream's rate, bytes sent twice. Output: a
Markdown table on stdout, every run as JSON in --json (default
bench/results/saturated-rail-DATE.json). A benchmark: prints figures, never
fails a build.

  bench/saturated_rail.py --reps 20 --detect 0.5,1
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "results")
PXFAB = os.path.join(ROOT, "tools", "pxfab")
SIZES = "1k,48k,1m,4m"


def run_once(build, rate, seconds, detect, net):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    subprocess.run([PXFAB, "down"], capture_output=True)
    subprocess.run([PXFAB, "up", "--nodes", "2", "--rails", "2", "--rate", rate],
                   capture_output=True, check=True)
    rx = subprocess.Popen(["ip", "netns", "exec", "node1", sys.executable, "-m", "plexus.fab.probe",
                           "tcp-recv", "--port", "9555", "--flows", "4"],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        rx.stdout.readline()
        tx = subprocess.Popen(["ip", "netns", "exec", "node0", sys.executable, "-m",
                               "plexus.fab.probe", "tcp-send", "10.101.0.2", "--port", "9555",
                               "--time", str(seconds + 4), "--flows", "4"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        try:
            cmd = [os.path.join(build, "bin", "pxrun"), "--launcher", "ip netns exec {host}",
                   "--hosts", "node0:1,node1:1", "--bootstrap-iface", "pxf-mgmt", "--timeout",
                   str(seconds + 30), "--env", f"PX_NET={net}", "--env", "PX_PROFILE=1",
                   "--env", f"PX_RAIL_DETECT={detect}",
                   os.path.join(build, "tests", "mpi", "ft_stream"), "--seconds", str(seconds),
                   "--mode", "pairs", "--sizes", SIZES]
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 60)
        finally:
            tx.kill()
            tx.wait()
    finally:
        rx.kill()
        rx.wait()
    res = None
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            res = json.loads(line)
    down = sum(int(d) for d in re.findall(r"faults: .*? down (\d+) ", p.stderr))
    again = sum(int(b) for b in re.findall(r"failover frames \d+ bytes (\d+)", p.stderr))
    return {"detect_s": detect, "rc": p.returncode, "ok": bool(res and res.get("ok")),
            "down": down, "max_stall_s": res and res["max_stall_s"],
            "rate_MBs": res and res["rate_MBs"], "bytes": res and res["bytes"],
            "bytes_sent_twice": again}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--detect", default="0.5", help="PX_RAIL_DETECT values, comma-separated")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--seconds", type=int, default=8)
    ap.add_argument("--rate", default="1gbit")
    ap.add_argument("--net", default="tcp")
    ap.add_argument("--json", default=os.path.join(
        RESULTS, time.strftime("saturated-rail-%Y%m%d-%H%M.json")))
    a = ap.parse_args()
    runs = []
    try:
        for d in a.detect.split(","):
            for i in range(a.reps):
                r = run_once(a.build, a.rate, a.seconds, float(d), a.net)
                runs.append(r)
                print(f"PX_RAIL_DETECT={d} run {i + 1}: {r}", file=sys.stderr, flush=True)
    finally:
        subprocess.run([PXFAB, "down"], capture_output=True)
        os.makedirs(os.path.dirname(a.json), exist_ok=True)
        with open(a.json, "w") as f:
            json.dump({"date": time.strftime("%Y-%m-%d"), "net": a.net, "rate": a.rate,
                       "seconds": a.seconds, "runs": runs}, f, indent=1)
    print(f"| PX_RAIL_DETECT (s) | runs | correct | runs with a DOWN | longest stall, runs with a "
          f"DOWN (s) | longest stall, the others (s) | median rate (MB/s) |")
    print("|---|---|---|---|---|---|---|")
    for d in a.detect.split(","):
        rs = [r for r in runs if r["detect_s"] == float(d)]
        dn = [r["max_stall_s"] for r in rs if r["down"] and r["max_stall_s"] is not None]
        up = [r["max_stall_s"] for r in rs if not r["down"] and r["max_stall_s"] is not None]
        rates = [r["rate_MBs"] for r in rs if r["rate_MBs"] is not None]
        print(f"| {d} | {len(rs)} | {sum(r['ok'] for r in rs)} | {len(dn)} | "
              f"{', '.join(f'{s:.2f}' for s in sorted(dn)) or '–'} | "
              f"{max(up):.2f} | {statistics.median(rates):.0f} |" if up and rates else
              f"| {d} | {len(rs)} | {sum(r['ok'] for r in rs)} | {len(dn)} | – | – | – |")
    print(f"\nraw runs: {a.json}")


if __name__ == "__main__":
    main()
