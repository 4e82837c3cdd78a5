#!/usr/bin/env python3
"""One-time cost of the topology-aware alltoall schedules as the job grows.

Writes two-level fat-trees in Slurm's topology.conf (--per-leaf hosts on each
leaf, every leaf cabled to each of --spines spines: over-subscribed when
fewer spines than hosts per leaf) of 16, 64, 256 and 1024 nodes by default,
and for each runs `topo_dump --alltoall ALGO --stats` (build/bin), which
loads the description, applies the DCSS rule and builds the schedule with
routes walked from the model, as the first alltoall of a job does on every
rank. Prints a Markdown table: seconds to load, for DCSS and to build, the
steps against the normal length (the round-robin of pair exchanges), the
most flows on one link in a step and the flows beyond the budget summed
over links and steps (budget 1: 2 flows per link), for the schedule and for
the round-robin. --ppn puts several ranks on each
host. A benchmark: it prints figures and gates nothing.

  python3 bench/topo_sched.py [--build build] [--nodes 16,64,256,1024] [--ppn 1]
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile


def fattree(nodes, per, spines):
    leaves = (nodes + per - 1) // per
    lines = []
    for leaf in range(leaves):
        last = min(nodes, (leaf + 1) * per) - 1
        lines.append(f"SwitchName=leaf{leaf} Nodes=n[{leaf * per:05d}-{last:05d}] LinkSpeed=100000")
    for s in range(spines):
        lines.append(f"SwitchName=spine{s} Switches=leaf[0-{leaves - 1}] LinkSpeed=100000")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--nodes", default="16,64,256,1024")
    ap.add_argument("--per-leaf", type=int, default=16)
    ap.add_argument("--spines", type=int, default=4)
    ap.add_argument("--ppn", type=int, default=1)
    ap.add_argument("--algorithms", default="tacs1,tacs2")
    ap.add_argument("--conflicts", type=int, default=1)
    ap.add_argument("--max-flow-ranks", type=int, default=1024,
                    help="count the flows on the links up to this many ranks (-1 beyond)")
    args = ap.parse_args()
    tool = os.path.join(args.build, "bin", "topo_dump")
    if not os.access(tool, os.X_OK):
        sys.exit(f"{tool}: not built (ninja -C {args.build} topo_dump)")
    print(f"Fat-trees of {args.per_leaf} hosts per leaf, {args.spines} spines, "
          f"{args.ppn} rank(s) per host, conflict budget {args.conflicts}\n")
    print("| nodes | ranks | schedule | load s | DCSS | DCSS s | build s | steps | normal "
          "| busiest link, flows over budget | the same, round-robin |")
    print("|---:|---:|---|---:|---|---:|---:|---:|---:|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for nodes in (int(x) for x in args.nodes.split(",")):
            path = os.path.join(tmp, f"fattree{nodes}.conf")
            with open(path, "w") as f:
                f.write(fattree(nodes, args.per_leaf, args.spines))
            hosts = [f"n{h:05d}:{args.ppn}" for h in range(nodes)]
            normal = None
            for algo in ["roundrobin"] + args.algorithms.split(","):
                out = subprocess.run([tool, "--alltoall", algo, "--conflicts", str(args.conflicts),
                                      "--stats" if nodes * args.ppn <= args.max_flow_ranks
                                      else "--stats-no-flows", path] + hosts, check=True, capture_output=True,
                                     text=True).stdout
                m = re.match(r"(\S+) ranks (\d+) steps (\d+) max_flows_per_link (-?\d+) over_budget (-?\d+) "
                             r"load ([\d.]+) s dcss (\S+) ([\d.]+) s build ([\d.]+) s(.*)", out)
                if not m:
                    sys.exit(f"unexpected output: {out}")
                if algo == "roundrobin":
                    normal = m.group(3)
                    rr = f"{m.group(4)}, {m.group(5)}"
                    continue
                print(f"| {nodes} | {m.group(2)} | {algo} | {m.group(6)} | {m.group(7)} | {m.group(8)} "
                      f"| {m.group(9)} | {m.group(3)} | {normal} | {m.group(4)}, {m.group(5)} | {rr} |",
                      flush=True)


if __name__ == "__main__":
    main()
