#!/usr/bin/env python3
"""Plexus's topology-aware schedules replayed at scale in SimGrid.

Builds bench/topo_sim/topo_sim.cpp (a SimGrid s4u replayer that loads a
fabric with Plexus's own model, src/topo) and topo_tree.c (Plexus's
topology-aware broadcast tree, px_topo_bcast_order) into
bench/results/topo_sim/bin, generates two-level fat-trees whose leaves are
over-subscribed to the spines, and replays on them, at 1,024 and 4,096
processes (8 per node, block placement):

  broadcast  binomial (Plexus's flat tree over the ranks), smp (binomial
             among the node leaders, then within each node) and topo (the
             tree over the hosts renumbered from the delay matrix, then
             within each host), on hosts at one link rate and on hosts at
             two (half the nodes, drawn at random, at a quarter of the rate)
  alltoall   pairwise (Plexus's default for large blocks) and, when a
             schedule generator is given (--a2a-dump: a topo_dump that
             writes `--alltoall tacs1` schedules as JSON), TACS1
  placement  with --place-python (a plexus Python tree with `pxtopo
             place`): a 3-D stencil's halo exchange on the ranks in block
             order and on the ranks `pxtopo place` lays out

and measures the one-time costs as the job grows: the fabric's load, the
delay matrix, the broadcast tree, the alltoall schedule.

  python3 bench/topo_sim.py [--sizes 1024,4096] [--a2a-dump PATH] [--no-alltoall-at 4096]

Prints a table and writes bench/results/topo_sim-<time>.json. Needs
libsimgrid-dev and a build of Plexus (build/lib/libpx_topo.a). A benchmark:
never part of the tests.
"""

import argparse
import json
import os
import random
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "bench", "results", "topo_sim")
BIN = os.path.join(OUT, "bin")

PER_NODE = 8          # processes per node
PER_LEAF = 16         # nodes per leaf switch
SPINES = 4            # one uplink from each leaf to each spine: 16:4, over-subscribed 4:1
RATE = 100 * 10**9    # bit/s, host links and uplinks
SLOW = 25 * 10**9     # the slow hosts of the two-rate fabric


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def build(build_dir):
    os.makedirs(BIN, exist_ok=True)
    lib = os.path.join(build_dir, "lib", "libpx_topo.a")
    if not os.path.exists(lib):
        sys.exit(f"topo_sim: {lib} missing: build Plexus first (cmake, ninja)")
    cflags = sh(["pkg-config", "--cflags", "simgrid", "jansson"]).split()
    libs = sh(["pkg-config", "--libs", "simgrid", "jansson"]).split()
    src = os.path.join(ROOT, "bench", "topo_sim")
    inc = ["-I" + os.path.join(ROOT, "src")]
    sh(["g++", "-O2", "-std=c++17", "-o", os.path.join(BIN, "topo_sim"),
        os.path.join(src, "topo_sim.cpp")] + inc + cflags + [lib] + libs)
    sh(["gcc", "-O2", "-o", os.path.join(BIN, "topo_tree"), os.path.join(src, "topo_tree.c")]
       + inc + [lib] + sh(["pkg-config", "--libs", "jansson"]).split())


def fattree(nodes, mixed):
    """A Plexus JSON fabric: leaves of PER_LEAF nodes, each leaf cabled once to
    each of SPINES spines. mixed: half the nodes, drawn at random (seed 1),
    at SLOW."""
    leaves = (nodes + PER_LEAF - 1) // PER_LEAF
    slow = set(random.Random(1).sample(range(nodes), nodes // 2)) if mixed else set()
    d = {"format": "plexus-topology", "nodes": [], "switches": [], "links": []}
    for s in range(SPINES):
        d["switches"].append({"name": f"spine{s}", "level": 1})
    for l in range(leaves):
        d["switches"].append({"name": f"leaf{l}", "level": 0})
        for s in range(SPINES):
            d["links"].append({"a": f"leaf{l}", "a_port": f"up{s}", "b": f"spine{s}",
                               "b_port": f"down{l}", "rate_bps": RATE})
    for i in range(nodes):
        name = f"n{i:04d}"
        rate = SLOW if i in slow else RATE
        d["nodes"].append({"name": name, "rails": [{"iface": "ib0"}]})
        d["links"].append({"a": name, "a_port": "ib0", "b": f"leaf{i // PER_LEAF}",
                           "b_port": f"p{i % PER_LEAF}", "rate_bps": rate})
    return d


def binomial(n, root):
    """Plexus's binomial broadcast (src/mpi/coll/bcast/bcast_binomial.c)."""
    edges = []
    for vr in range(1, n):
        mask = vr & -vr
        edges.append([(vr - mask + root) % n, (vr + root) % n])
    return edges


def smp(hosts, root):
    """Binomial among the node leaders (the root on its node, the first rank
    elsewhere, nodes in rank order from the root's), then within each node."""
    n = len(hosts)
    lead, order = {}, []
    for k in range(n):
        r = (root + k) % n
        if hosts[r] not in lead:
            lead[hosts[r]] = r
            order.append(r)
    edges = [[order[v - (v & -v)], order[v]] for v in range(1, len(order))]
    edges += [[lead[hosts[r]], r] for r in range(n) if lead[hosts[r]] != r]
    return edges


def pairwise(n, every=1):
    """Plexus's pairwise alltoall: step k, r sends to r+k (every every-th step)."""
    return [[[r, (r + k) % n] for r in range(n)] for k in range(1, n, every)]


def stencil_dims(n):
    """A 3-D grid of n ranks, as even as powers of two allow, x largest."""
    d = [1, 1, 1]
    i = 0
    while d[0] * d[1] * d[2] < n:
        d[i % 3] *= 2
        i += 1
    return d


def stencil(n):
    """A 3-D 7-point stencil's halo exchange (not periodic), rank = x + X*(y + Y*z):
    six steps, +x -x +y -y +z -z, each rank sending one face a step; and its
    graph in METIS's format."""
    X, Y, Z = stencil_dims(n)
    coord = [(r % X, (r // X) % Y, r // (X * Y)) for r in range(n)]
    rank = {c: r for r, c in enumerate(coord)}
    steps, nbr = [], [[] for _ in range(n)]
    for axis in range(3):
        for sign in (1, -1):
            step = []
            for r, c in enumerate(coord):
                t = list(c)
                t[axis] += sign
                if tuple(t) in rank:
                    step.append([r, rank[tuple(t)]])
                    nbr[r].append(rank[tuple(t)])
            steps.append(step)
    m = sum(len(x) for x in nbr) // 2
    graph = f"{n} {m}\n" + "".join(" ".join(str(j + 1) for j in sorted(x)) + "\n" for x in nbr)
    return steps, graph


def replay(fabric, sched, nbytes, path):
    with open(path, "w") as f:
        json.dump(sched, f)
    t0 = time.time()
    out = sh([os.path.join(BIN, "topo_sim"), fabric, path, "--bytes", str(nbytes),
              "--cfg=network/crosstraffic:0", "--log=root.thres:critical"])
    r = json.loads(out.strip().splitlines()[-1])
    r["wall_s"] = time.time() - t0
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1024,4096", help="process counts (default 1024,4096)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="Plexus build dir")
    ap.add_argument("--a2a-dump", help="topo_dump with --alltoall (TACS1 schedules as JSON)")
    ap.add_argument("--bcast-bytes", type=int, default=1 << 20)
    ap.add_argument("--a2a-bytes", type=int, default=16384, help="alltoall block (per pair)")
    ap.add_argument("--no-alltoall-at", default="", help="sizes to skip the alltoall at")
    ap.add_argument("--a2a-every", default="4096:32",
                    help="SIZE:K,...: at SIZE replay every K-th alltoall step only and scale "
                         "the time by the steps left out (default 4096:32; the full "
                         "pairwise alltoall at 4,096 ranks, 16.8M exchanges, takes hours)")
    ap.add_argument("--place-python", help="a plexus python tree whose pxtopo has `place` "
                    "(a stencil's halo exchange replayed on block and placed ranks)")
    ap.add_argument("--halo-bytes", type=int, default=256 << 10, help="stencil face (bytes)")
    ap.add_argument("--roots", default="0,mid", help="broadcast roots (mid: n/2 + 3)")
    args = ap.parse_args()
    build(args.build)
    os.makedirs(OUT, exist_ok=True)
    skip_a2a = {int(x) for x in args.no_alltoall_at.split(",") if x}
    results = {"machine": os.uname().nodename, "per_node": PER_NODE, "per_leaf": PER_LEAF,
               "spines": SPINES, "rate_bps": RATE, "slow_bps": SLOW, "runs": [], "costs": []}
    rows = []
    for n in [int(x) for x in args.sizes.split(",")]:
        nodes = n // PER_NODE
        hosts = [f"n{r // PER_NODE:04d}" for r in range(n)]
        hostfile = os.path.join(OUT, f"hosts-{n}.txt")
        with open(hostfile, "w") as f:
            f.write("\n".join(hosts) + "\n")
        for mixed in (False, True):
            fabric = os.path.join(OUT, f"fattree-{n}{'-mixed' if mixed else ''}.json")
            with open(fabric, "w") as f:
                json.dump(fattree(nodes, mixed), f)
            label = "bcast, two rates" if mixed else "bcast"
            times = {}
            for root in [n // 2 + 3 if x == "mid" else int(x) for x in args.roots.split(",")]:
                t0 = time.time()
                tree = json.loads(sh([os.path.join(BIN, "topo_tree"), fabric, str(root),
                                      hostfile]))
                costs = dict(tree.pop("costs"), nranks=n, root=root, mixed=mixed,
                             tree_tool_wall_s=time.time() - t0)
                results["costs"].append(costs)
                scheds = {
                    "binomial": {"kind": "bcast", "algorithm": "binomial", "root": root,
                                 "nranks": n, "hosts": hosts, "edges": binomial(n, root)},
                    "smp": {"kind": "bcast", "algorithm": "smp", "root": root, "nranks": n,
                            "hosts": hosts, "edges": smp(hosts, root)},
                    "topo": tree,
                }
                for name, s in scheds.items():
                    r = replay(fabric, s, args.bcast_bytes, os.path.join(OUT, f"sched-{n}.json"))
                    r.update(mixed=mixed, root=root)
                    results["runs"].append(r)
                    times.setdefault(name, []).append(r["time_s"])
            avg = {k: sum(v) / len(v) for k, v in times.items()}
            rows.append((n, label, f"{args.bcast_bytes >> 10} KB", avg["binomial"], avg["topo"],
                         avg["binomial"] / avg["topo"], avg["smp"] / avg["topo"]))
        if args.place_python:
            fabric = os.path.join(OUT, f"fattree-{n}.json")
            steps, graph = stencil(n)
            gpath, spath = os.path.join(OUT, f"stencil-{n}.graph"), os.path.join(OUT, "slurm.hosts")
            with open(gpath, "w") as f:
                f.write(graph)
            nodefile = os.path.join(OUT, f"nodes-{n}.txt")
            with open(nodefile, "w") as f:
                f.write("".join(f"n{i:04d}:{PER_NODE}\n" for i in range(nodes)))
            t0 = time.time()
            sh([sys.executable, "-m", "plexus.topo", "--topo", fabric, "place", gpath, nodefile,
                "-o", os.devnull, "--slurm", spath],
               env=dict(os.environ, PYTHONPATH=args.place_python))
            results["costs"].append({"nranks": n, "placement_s": time.time() - t0})
            with open(spath) as f:
                placed = [l.split()[0] for l in f if l.strip()]
            times = {}
            for name, hs in (("block", hosts), ("placed", placed)):
                s = {"kind": "alltoall", "algorithm": f"stencil-{name}", "nranks": n,
                     "hosts": hs, "steps": steps}
                r = replay(fabric, s, args.halo_bytes, os.path.join(OUT, f"sched-{n}.json"))
                r["dims"] = stencil_dims(n)
                results["runs"].append(r)
                times[name] = r["time_s"]
            rows.append((n, "3-D halo, placement", f"{args.halo_bytes >> 10} KB", times["block"],
                         times["placed"], times["block"] / times["placed"], None))
        if n in skip_a2a:
            continue
        fabric = os.path.join(OUT, f"fattree-{n}.json")
        every = dict(tuple(int(y) for y in x.split(":")) for x in args.a2a_every.split(",")
                     if x).get(n, 1)
        a2a = {"pairwise": {"kind": "alltoall", "algorithm": "pairwise", "nranks": n,
                            "hosts": hosts, "steps": pairwise(n, every)}}
        if args.a2a_dump:
            t0 = time.time()
            hostargs = [f"n{i:04d}:{PER_NODE}" for i in range(nodes)]
            a2a["tacs1"] = json.loads(sh([args.a2a_dump, "--alltoall", "tacs1", fabric]
                                         + hostargs))
            results["costs"].append({"nranks": n, "alltoall_schedule_s": time.time() - t0,
                                     "algorithm": "tacs1", "steps": len(a2a["tacs1"]["steps"])})
        times = {}
        for name, s in a2a.items():
            full = len(s["steps"]) if name != "pairwise" else n - 1
            if name != "pairwise":
                s["steps"] = s["steps"][::every]
            r = replay(fabric, s, args.a2a_bytes, os.path.join(OUT, f"sched-{n}.json"))
            r.update(steps=full, steps_replayed=len(s["steps"]),
                     time_replayed_s=r["time_s"], time_s=r["time_s"] * full / len(s["steps"]))
            results["runs"].append(r)
            times[name] = r["time_s"]
        if "tacs1" in times:
            what = "alltoall" + (f" (1/{every} steps)" if every > 1 else "")
            rows.append((n, what, f"{args.a2a_bytes >> 10} KB", times["pairwise"],
                         times["tacs1"], times["pairwise"] / times["tacs1"], None))
        else:
            rows.append((n, "alltoall (pairwise only)", f"{args.a2a_bytes >> 10} KB",
                         times["pairwise"], None, None, None))
    print(f"{'procs':>6} {'collective':<24} {'size':>7} {'default ms':>11} {'topo ms':>9} "
          f"{'default/topo':>13} {'smp/topo':>9}")
    for n, what, size, d, t, ratio, sratio in rows:
        print(f"{n:>6} {what:<24} {size:>7} {d * 1e3:>11.3f} "
              f"{'-' if t is None else f'{t * 1e3:.3f}':>9} "
              f"{'-' if ratio is None else f'{ratio:.3f}':>13} "
              f"{'-' if sratio is None else f'{sratio:.3f}':>9}")
    print("\none-time costs (s): load, delay matrix (all rows), tree (rows it needs), schedule")
    for c in results["costs"]:
        print("  " + ", ".join(f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}"
                               for k, v in c.items()))
    results["table"] = [dict(zip(("nranks", "collective", "size", "default_s", "topo_s",
                                  "default_over_topo", "smp_over_topo"), r)) for r in rows]
    path = os.path.join(ROOT, "bench", "results",
                        time.strftime("topo_sim-%Y%m%d-%H%M%S.json"))
    with open(path, "w") as f:
        json.dump(results, f, indent=1)
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
