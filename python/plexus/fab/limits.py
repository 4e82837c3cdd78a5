"""Measure where the emulation stops being faithful on this machine.

    python3 -m plexus.fab.limits [--flows 1,2,4,8] [--rates 100mbit,1gbit,2gbit] [--seconds 2]
                                 [--shape rails|fattree] [--replace]

Builds a fabric with one node pair per flow (rails: one bridge switch; fattree:
the pairs sit under different leaves so every flow crosses a spine, 2 spines,
uplinks at flows x rate so that they are not the bottleneck),
runs `flows` TCP flows in parallel, each between its own pair through links
shaped to `rate`, and prints the aggregate delivered rate against the ideal
(flows x rate x 1448/1514, TCP payload over Ethernet frame at MTU 1500).
A configuration is faithful while delivered >= 90% of configured.
"""

import argparse
import json
import os
import subprocess
import sys

from . import desc as D
from . import fabric as F

GOODPUT = 1448 / 1514      # TCP payload per wire byte at MTU 1500 with timestamps


def _env():
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def run_flows(pairs, seconds, port=9400):
    """pairs: [(src node, dst node, dst addr)]; returns summed receiver-measured bit/s."""
    env = _env()
    rx = []
    for i, (src, dst, addr) in enumerate(pairs):
        p = subprocess.Popen(["ip", "netns", "exec", dst, sys.executable, "-m", "plexus.fab.probe",
                              "tcp-recv", "--port", str(port + i)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
        rx.append(p)
    for p in rx:
        if p.stdout.readline().strip() != "ready":
            raise RuntimeError(p.stderr.read())
    tx = [subprocess.Popen(["ip", "netns", "exec", src, sys.executable, "-m", "plexus.fab.probe",
                            "tcp-send", addr, "--port", str(port + i), "--time", str(seconds)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
          for i, (src, dst, addr) in enumerate(pairs)]
    for p in tx:
        p.wait()
    total = 0
    per = []
    for p in rx:
        out, _ = p.communicate(timeout=30)
        bps = json.loads(out.strip().splitlines()[-1])["bps"]
        per.append(bps)
        total += bps
    return total, per


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m plexus.fab.limits", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flows", default="1,2,4,8")
    ap.add_argument("--rates", default="100mbit,500mbit,1gbit,2gbit,4gbit")
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--shape", choices=("rails", "fattree"), default="rails")
    ap.add_argument("--replace", action="store_true", help="replace a fabric that is already up")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    if os.geteuid() != 0:
        print("pxfab limits: needs root", file=sys.stderr)
        return 3
    if F.load_state() is not None and not a.replace:
        print("pxfab limits: a fabric is up; 'pxfab down' first or pass --replace", file=sys.stderr)
        return 2
    flows = [int(x) for x in a.flows.split(",")]
    rates = [D.parse_rate(r) for r in a.rates.split(",")]
    n = 2 * max(flows)
    if a.shape == "rails":
        raw = D.gen_rails(n, rate=D.format_rate(rates[0]))
        pairs_all = [(f"node{2 * i}", f"node{2 * i + 1}", f"10.100.0.{2 * i + 2}") for i in range(max(flows))]
    else:
        # two leaves, senders under leaf0, receivers under leaf1: every flow crosses a spine
        k = max(flows)
        raw = D.gen_fattree(2, 2, k, rate=D.format_rate(rates[0]))
        pairs_all = [(f"node{i}", f"node{k + i}", f"10.100.0.{k + i + 1}") for i in range(k)]
    fab = D.Fabric(raw)
    F.up(fab, log=None)
    results = []
    try:
        for rate in rates:
            st, fab = F.current()
            for l in fab.links:
                # fat-tree uplinks are made non-blocking so that only node links shape
                F.set_rate(fab, l, rate if l.kind == "node" else rate * max(flows))
            for k in flows:
                load0 = os.getloadavg()[0]
                total, per = run_flows(pairs_all[:k], a.seconds)
                ideal = k * rate * GOODPUT
                row = {"shape": a.shape, "rate": D.format_rate(rate), "flows": k,
                       "configured_bps": k * rate, "delivered_bps": total,
                       "of_configured": round(total / (k * rate), 3), "of_ideal": round(total / ideal, 3),
                       "min_flow_of_rate": round(min(per) / rate, 3), "load1": round(load0, 2)}
                results.append(row)
                if not a.json:
                    print(f"{a.shape:7s} rate {row['rate']:>8s} x {k} flows: delivered "
                          f"{total / 1e6:8.1f} Mbit/s = {row['of_configured'] * 100:5.1f}% of configured "
                          f"({row['of_ideal'] * 100:5.1f}% of TCP ideal), slowest flow "
                          f"{row['min_flow_of_rate'] * 100:5.1f}%  [load {row['load1']}]", flush=True)
    finally:
        F.down(log=None)
    if a.json:
        print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
