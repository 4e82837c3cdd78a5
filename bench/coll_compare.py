#!/usr/bin/env python3
"""Collective benchmarks at every message size, Plexus against MPICH and Open MPI.

For each benchmark (osu_bcast, osu_allreduce, osu_alltoall, osu_allgather by
default) and placement (N ranks on one node; N ranks over K emulated nodes,
root), every library runs --reps times, interleaved; the per-size medians are
compared and each size gets the ratio Plexus / better peer (latency: below 1
means Plexus is faster). Sizes where Plexus is more than 10% slower than the
better peer are listed. Output: Markdown on stdout, progress on stderr, and
every run's figures as JSON in --json (default bench/results/coll_compare-DATE.json).
Benchmarks print figures, they never fail a build.

  python3 bench/coll_compare.py --reps 3 --np 4,8 --nodes 2,4
  python3 bench/coll_compare.py --np "" --nodes 4 --ppn 2   # 8 ranks, 2 per node
"""

import signal

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare  # noqa: E402

RUN_SH = os.path.join(HERE, "osu", "run.sh")
PXFAB = [sys.executable, "-m", "plexus.fab"]
FAB_ENV = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(HERE), "python"))
RESULTS = os.path.join(HERE, "results")


def sizes(out):
    """{size: latency} from an OSU collective's output."""
    r = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 2 and f[0].isdigit():
            try:
                r[int(f[0])] = float(f[1])
            except ValueError:
                pass
    return r


def argv_for(mpi, bench, np, nodes, args, ppn=1, timeout=600):
    a = [RUN_SH, "--mpi", mpi, "--np", str(np), "--timeout", str(timeout)]
    if nodes:
        names = ",".join("node%d" % i for i in range(nodes))
        a += ["--nodes", names, "--rails", "rail0", "--mgmt", "pxf-mgmt"]
        if ppn > 1:
            a += ["--ppn", str(ppn)]
    return a + ["collective/" + bench] + args


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--mpis", default="mpich,openmpi,plexus")
    ap.add_argument("--benches", default="osu_bcast,osu_allreduce,osu_alltoall,osu_allgather")
    ap.add_argument("--np", default="4,8", help="rank counts on one node")
    ap.add_argument("--nodes", default="2,4",
                    help="emulated node counts (pxfab; root; no fabric may be up)")
    ap.add_argument("--ppn", type=int, default=1, help="ranks per emulated node")
    ap.add_argument("--max", default="1048576", help="largest message size")
    ap.add_argument("--iters", default="osu",
                    help="OSU iterations per size; 'osu' (default): OSU's own counts, 1,000 "
                         "up to 8 KB and 100 above (100 of a small size vary by up to 30%% "
                         "from one run to the next)")
    ap.add_argument("--rate", default="10gbit", help="rate of the emulated links (pxfab)")
    ap.add_argument("--json", help="write the raw results here (default bench/results/coll_compare-DATE.json)")
    args = ap.parse_args()
    mpis = compare.available_mpis([m for m in args.mpis.split(",") if m])

    def on_signal(signum, _frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_signal)
    osu_args = ["-m", "1:%s" % args.max, "-f"]
    if args.iters != "osu":
        osu_args[2:2] = ["-i", args.iters, "-x", "10"]
    placements = [(int(n), 0) for n in args.np.split(",") if n]
    made = False
    if args.nodes and os.geteuid() == 0:
        kmax = max(int(k) for k in args.nodes.split(","))
        r = subprocess.run(PXFAB + ["up", "--nodes", str(kmax), "--rails", "1", "--rate", args.rate],
                           capture_output=True, text=True, env=FAB_ENV)
        if r.returncode == 0:
            made = True
            placements += [(int(k) * args.ppn, int(k)) for k in args.nodes.split(",") if k]
        else:
            print("coll_compare: no namespace nodes: " + r.stderr.strip(), file=sys.stderr)
    started = time.strftime("%Y-%m-%d %H:%M")
    print("Run %s, %s; median of %d runs; OSU %s. Ratio: Plexus / better peer (below 1: Plexus faster)."
          % (started, ", ".join(compare.MPIS[m] for m in mpis), args.reps,
             " ".join(osu_args)))
    slow = []
    raw = []
    try:
        for np_, nodes in placements:
            where = ("%d ranks on one node" % np_ if not nodes else
                     "%d nodes, %d rank%s each" % (nodes, args.ppn, "s" if args.ppn > 1 else ""))
            for bench in args.benches.split(","):
                res = {m: [] for m in mpis}
                cmds = {}
                for rep in range(args.reps):
                    for m in mpis:
                        argv = argv_for(m, bench, np_, nodes, osu_args, args.ppn)
                        cmds[m] = compare.show_cmd(argv)
                        t0 = time.time()
                        rc, out = compare.run(argv, 900)
                        v = sizes(out) if rc == 0 else {}
                        if v:
                            res[m].append(v)
                        print("coll_compare: %s %s %s run %d: %s (%.0f s)"
                              % (where, bench, m, rep + 1, "ok" if v else "FAILED rc=%d" % rc,
                                 time.time() - t0), file=sys.stderr, flush=True)
                allsz = sorted({s for m in mpis for r in res[m] for s in r})
                med = {m: {s: statistics.median([r[s] for r in res[m] if s in r])
                           for s in allsz if any(s in r for r in res[m])} for m in mpis}
                raw.append({"bench": bench, "placement": where, "np": np_, "nodes": nodes,
                            "ppn": args.ppn if nodes else None, "commands": dict(cmds),
                            "runs_us": res, "median_us": med})
                print("\n#### %s, %s (µs)\n" % (bench, where))
                print("| size | " + " | ".join(compare.MPIS[m] for m in mpis) + " | ratio |")
                print("|---" * (len(mpis) + 2) + "|")
                for s in allsz:
                    cells = ["%.2f" % med[m][s] if s in med[m] else "–" for m in mpis]
                    peers = [med[m][s] for m in mpis if m != "plexus" and s in med[m]]
                    ratio = ""
                    if "plexus" in med and s in med["plexus"] and peers:
                        q = med["plexus"][s] / min(peers)
                        ratio = "%.2f" % q
                        if q > 1.10:
                            slow.append("%s %s size %d: %.2f" % (bench, where, s, q))
                            ratio = "**%s**" % ratio
                    print("| %d | %s | %s |" % (s, " | ".join(cells), ratio))
                print("\nCommands:\n")
                for m in mpis:
                    print("    " + cmds.get(m, ""))
                sys.stdout.flush()
    except KeyboardInterrupt:
        print("coll_compare: interrupted", file=sys.stderr)
    finally:
        if made:
            subprocess.run(PXFAB + ["down"], capture_output=True, env=FAB_ENV)
    print("\nSizes where Plexus is more than 10%% slower than the better peer: %s"
          % ("; ".join(slow) if slow else "none"))
    path = args.json or os.path.join(RESULTS, "coll_compare-%s.json" % time.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"date": started, "reps": args.reps, "osu_args": osu_args, "rate": args.rate,
                   "mpis": [compare.MPIS[m] for m in mpis], "machine": compare.machine(),
                   "results": raw, "slower_than_peer": slow}, f, indent=1)
    print("coll_compare: raw results in %s" % path, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
