#!/usr/bin/env python3
"""Topology-aware collectives on an emulated fat-tree, against the flat ones and the peers.

Brings up a pxfab fat-tree (2 leaves, 2 spines by default) whose leaf-spine
uplinks are slower than the node links (over-subscribed), writes its
description (pxfab export, Plexus JSON) for PX_TOPO, and runs OSU collectives
(osu_gather and osu_scatter by default) with --ppn ranks on each node:
Plexus with PX_TOPO (the topology-aware algorithms), Plexus without it (its
flat algorithms), MPICH and Open MPI, interleaved, --reps times each
(--env-for adds settings to one configuration, e.g. to force an algorithm;
--slow-nodes puts some nodes' links at --slow-rate: two link speeds). With
--background, a bulk stream between a node of each leaf (another Plexus job,
tests/mpi/ft_stream) loads the uplinks during every run, as the
dissertation's measurements under background traffic. For every run it also
reads the bytes the leaf-spine links carried.

Prints a Markdown table per benchmark (median latency per size, the ratios
Plexus-topo / flat and / better peer, uplink bytes per run) and writes every
run as JSON (default bench/results/topo_coll-DATE.json). A benchmark: it
prints figures and never fails a build. Needs root; replaces any pxfab fabric.

  sudo python3 bench/topo_coll.py --reps 3 --nodes-per-leaf 2 --ppn 2 --background
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
from coll_compare import argv_for, sizes  # noqa: E402
from plexus.fab import fabric  # noqa: E402

BUILD = os.environ.get("PLEXUS_BUILD", os.path.join(ROOT, "build"))
PXFAB = [sys.executable, "-m", "plexus.fab"]
FAB_ENV = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
RESULTS = os.path.join(HERE, "results")


def pxfab(*args):
    subprocess.run(PXFAB + [str(a) for a in args], check=True, env=FAB_ENV,
                   stdout=subprocess.DEVNULL)


def uplink_bytes():
    """Bytes carried so far by the leaf-spine links, both ways."""
    links = fabric.stats(None)["links"]
    return sum(v["a_to_b"]["bytes"] + v["b_to_a"]["bytes"]
               for k, v in links.items() if "spine" in k)


def background(nodes, seconds, dst=None):
    """A bulk stream from the first node to dst (default the last, on the other leaf)."""
    dst = dst or f"node{nodes - 1}"
    cmd = [os.path.join(BUILD, "bin", "pxrun"), "--launcher", "ip netns exec {host}",
           "--hosts", f"node0:1,{dst}:1", "--bootstrap-iface", "pxf-mgmt",
           "--timeout", str(seconds + 30), os.path.join(BUILD, "tests", "mpi", "ft_stream"),
           "--seconds", str(seconds), "--sizes", "1m"]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--benches", default="osu_gather,osu_scatter")
    p.add_argument("--leaves", type=int, default=2)
    p.add_argument("--spines", type=int, default=2)
    p.add_argument("--nodes-per-leaf", type=int, default=2)
    p.add_argument("--ppn", type=int, default=2)
    p.add_argument("--rate", default="1gbit", help="node links")
    p.add_argument("--uplink-rate", default="200mbit", help="leaf-spine links")
    p.add_argument("--sizes", default="1:65536", help="OSU -m range")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--iters", type=int, default=200)
    p.add_argument("--background", action="store_true")
    p.add_argument("--background-to", default="",
                   help="the node the background stream goes to (default the last node)")
    p.add_argument("--timeout", type=int, default=300, help="seconds per run before it is killed")
    p.add_argument("--mpis", default="plexus-topo,plexus-flat,mpich,openmpi",
                   help="configurations: plexus-topo (PX_TOPO), plexus-flat, mpich, openmpi, "
                        "or any plexus-NAME given settings with --env-for")
    p.add_argument("--env-for", action="append", default=[], metavar="CONFIG:VAR=VALUE",
                   help="a setting for one configuration, e.g. "
                        "plexus-topo:PX_ALLTOALL_ALGORITHM=topo (repeatable)")
    p.add_argument("--slow-nodes", default="",
                   help="nodes whose link runs at --slow-rate (nodes at two link speeds), "
                        "e.g. node1,node3")
    p.add_argument("--slow-rate", default="100mbit")
    p.add_argument("--json", default=os.path.join(RESULTS, "topo_coll-%s.json" %
                                                  time.strftime("%Y%m%d-%H%M%S")))
    a = p.parse_args()
    nodes = a.leaves * a.nodes_per_leaf
    np_ = nodes * a.ppn
    subprocess.run(PXFAB + ["down"], env=FAB_ENV, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    pxfab("up", "--leaves", a.leaves, "--spines", a.spines, "--nodes-per-leaf",
          a.nodes_per_leaf, "--rate", a.rate, "--uplink-rate", a.uplink_rate)
    for n in filter(None, a.slow_nodes.split(",")):
        pxfab("fault", "rate", f"{n}:rail0", a.slow_rate)
    topo = os.path.join(RESULTS, "topo_coll-fabric.json")
    os.makedirs(RESULTS, exist_ok=True)
    pxfab("export", "--format", "plexus-json", "-o", topo)
    runs = []
    meta = vars(a) | {"np": np_, "nodes": nodes, "date": time.strftime("%Y-%m-%d")}

    def save():  # after every run, so that an interrupted sweep keeps what it has
        with open(a.json, "w") as f:
            json.dump({"meta": meta, "runs": runs}, f, indent=1)

    try:
        for bench in a.benches.split(","):
            for rep in range(a.reps):
                for who in a.mpis.split(","):
                    mpi = who.split("-")[0]
                    args = ["-m", a.sizes, "-i", str(a.iters), "-x", "20"]
                    argv = argv_for(mpi, bench, np_, nodes, args, a.ppn, a.timeout)
                    if who == "plexus-topo":
                        argv[1:1] = ["--env", "PX_TOPO=" + topo]
                    for e in a.env_for:
                        if e.split(":", 1)[0] == who:
                            argv[1:1] = ["--env", e.split(":", 1)[1]]
                    bg = background(nodes, 600, a.background_to) if a.background else None
                    if bg:
                        time.sleep(2)  # the stream ramps up first
                    before = uplink_bytes()
                    t0 = time.time()
                    r = subprocess.run(argv, capture_output=True, text=True)
                    up = uplink_bytes() - before
                    if bg:
                        bg.kill()
                        bg.wait()
                    res = sizes(r.stdout)
                    runs.append({"bench": bench, "mpi": who, "rep": rep, "rc": r.returncode,
                                 "seconds": time.time() - t0, "uplink_bytes": up,
                                 "latency_us": res})
                    print(f"{bench} {who} rep {rep}: rc {r.returncode}, {len(res)} sizes, "
                          f"uplinks {up / 1e6:.1f} MB", file=sys.stderr)
                    save()
    finally:
        subprocess.run(PXFAB + ["down"], env=FAB_ENV, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    save()
    whos = a.mpis.split(",")
    for bench in a.benches.split(","):
        print(f"\n### {bench}: {np_} ranks on {nodes} nodes ({a.leaves} leaves, "
              f"{a.spines} spines, uplinks {a.uplink_rate}, nodes {a.rate}"
              f"{f', {a.slow_nodes} at {a.slow_rate}' if a.slow_nodes else ''})"
              f"{', background stream' if a.background else ''}; median of {a.reps}, µs\n")
        med = {}
        for who in whos:
            rs = [r for r in runs if r["bench"] == bench and r["mpi"] == who and r["rc"] == 0]
            allsz = sorted({s for r in rs for s in r["latency_us"]})
            med[who] = {s: statistics.median(r["latency_us"][s] for r in rs
                                             if s in r["latency_us"]) for s in allsz}
            med[who]["up"] = statistics.median(r["uplink_bytes"] for r in rs) if rs else 0
        peers = [w for w in whos if not w.startswith("plexus")]
        print("| size | " + " | ".join(whos) + " | topo/flat | topo/better peer |")
        print("|---" * (len(whos) + 3) + "|")
        szs = sorted({s for w in whos for s in med[w] if s != "up"})
        for s in szs:
            cells = [f"{med[w][s]:.1f}" if s in med[w] else "–" for w in whos]
            t = med.get("plexus-topo", {}).get(s)
            fl = med.get("plexus-flat", {}).get(s)
            best = min((med[w][s] for w in peers if s in med[w]), default=None)
            r1 = f"{t / fl:.2f}" if t and fl else "–"
            r2 = f"{t / best:.2f}" if t and best else "–"
            print(f"| {s} | " + " | ".join(cells) + f" | {r1} | {r2} |")
        print("| uplink MB per run | " +
              " | ".join(f"{med[w]['up'] / 1e6:.1f}" for w in whos) + " | | |")
    print(f"\nruns: {a.json}")


if __name__ == "__main__":
    main()
