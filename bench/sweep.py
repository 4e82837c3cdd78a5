#!/usr/bin/env python3
"""Run OSU benchmarks over their whole size range with Plexus, MPICH and Open MPI.

compare.py measures chosen sizes; this sweeps every size an OSU benchmark
prints (1 B to 4 MB), so that "at least as fast at every size" can be checked.
Runs are interleaved between the MPIs (rep 1 of each, then rep 2, ...); the
table gives per size the median of each MPI and Plexus's ratio to the better
peer (times: below 1 is faster; bandwidths: above 1 is faster). Raw figures go
to --json (default bench/results/sweep-DATE.json).

Between nodes (--where nodes, as root) the runs go between pxfab nodes node0
and node1 over rail0; a fabric of two nodes and one rail of --rate is brought
up when none is, and taken down afterwards.

Prerequisites: bench/osu/build.sh OSU_SRC_DIR all. Benchmarks print figures;
they never fail a build.
"""

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys

import compare

BENCHES = {
    # name: (OSU path, unit, higher is better)
    "put_lat": ("one-sided/osu_put_latency", "µs", False),
    "get_lat": ("one-sided/osu_get_latency", "µs", False),
    "acc_lat": ("one-sided/osu_acc_latency", "µs", False),
    "put_bw": ("one-sided/osu_put_bw", "MB/s", True),
    "get_bw": ("one-sided/osu_get_bw", "MB/s", True),
    "put_bibw": ("one-sided/osu_put_bibw", "MB/s", True),
    "lat": ("pt2pt/osu_latency", "µs", False),
    "bw": ("pt2pt/osu_bw", "MB/s", True),
}


def parse_rows(out):
    """{size: value} of every row of an OSU table."""
    rows = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 2 and f[0].isdigit():
            try:
                rows[int(f[0])] = float(f[1])
            except ValueError:
                pass
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--benches", default="put_lat,get_lat,put_bw,get_bw",
                    help="comma-separated, of: " + ",".join(BENCHES))
    ap.add_argument("--where", default="shm", choices=("shm", "tcp", "nodes"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--mpis", default="mpich,openmpi,plexus")
    ap.add_argument("--max", default="4194304", help="largest size (default 4 MB)")
    ap.add_argument("--iters", default="",
                    help="OSU -i/-x as I:X (default: OSU's own for shm/tcp, 100:10 between nodes)")
    ap.add_argument("--rate", default="1gbit", help="rail rate when the nodes are brought up")
    ap.add_argument("--json", default="")
    args = ap.parse_args()

    benches = [b for b in args.benches.split(",") if b]
    for b in benches:
        if b not in BENCHES:
            ap.error("unknown bench %s" % b)
    mpis = compare.available_mpis([m for m in args.mpis.split(",") if m])
    if not mpis:
        return 1
    iters = args.iters or ("100:10" if args.where == "nodes" else "")

    made = False
    if args.where == "nodes":
        if os.geteuid() != 0:
            print("sweep: --where nodes needs root", file=sys.stderr)
            return 1
        if not compare.ns_exists():
            if compare.fabric_up():
                print("sweep: a pxfab fabric without node0/node1 is up", file=sys.stderr)
                return 1
            r = subprocess.run([compare.PXFAB, "up", "--nodes", "2", "--rails", "1",
                                "--rate", args.rate], capture_output=True, text=True)
            if r.returncode != 0:
                print(r.stdout + r.stderr, file=sys.stderr)
                return 1
            made = True

    def argv(mpi, bench):
        a = [compare.RUN_SH, "--mpi", mpi, "--np", "2", "--timeout", "600"]
        if args.where == "nodes":
            a += ["--nodes", ",".join(compare.NODES), "--rails", compare.RAIL,
                  "--mgmt", compare.MGMT]
        else:
            a += ["--net", args.where]
        a += [BENCHES[bench][0], "-m", "1:" + args.max]
        if iters:
            i, x = iters.split(":")
            a += ["-i", i, "-x", x]
        return a

    raw = {}
    try:
        for b in benches:
            for rep in range(args.reps):
                for m in mpis:
                    rc, out = compare.run(argv(m, b), 900)
                    rows = parse_rows(out) if rc == 0 else {}
                    raw.setdefault(b, {}).setdefault(m, []).append(rows)
                    print("sweep: %s %s run %d/%d: %s" % (b, m, rep + 1, args.reps,
                          "%d sizes" % len(rows) if rows else "FAILED rc=%d" % rc),
                          file=sys.stderr)
    except KeyboardInterrupt:
        print("sweep: interrupted; reporting what ran.", file=sys.stderr)
    finally:
        if made:
            subprocess.run([compare.PXFAB, "down"], capture_output=True)

    now = datetime.datetime.now()
    path = args.json or os.path.join(compare.RESULTS, "sweep-%s-%s.json"
                                     % (args.where, now.strftime("%Y%m%d-%H%M%S")))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"date": now.isoformat(), "where": args.where, "machine": compare.machine(),
                   "argv": {b: {m: compare.show_cmd(argv(m, b)) for m in mpis} for b in benches},
                   "raw": {b: {m: [{str(k): v for k, v in r.items()} for r in runs]
                               for m, runs in per.items()} for b, per in raw.items()}},
                  f, indent=1)

    peers = [m for m in mpis if m != "plexus"]
    for b in benches:
        _, unit, hb = BENCHES[b]
        per = raw.get(b, {})
        sizes = sorted({s for runs in per.values() for r in runs for s in r})
        med = {}
        for m in mpis:
            for s in sizes:
                v = [r[s] for r in per.get(m, []) if s in r]
                med[(m, s)] = statistics.median(v) if v else None
        print("\n%s, %s (%s; %s)\n" % (BENCHES[b][0], args.where, unit,
                                       "higher is better" if hb else "lower is better"))
        print("| size | " + " | ".join(compare.MPIS[m] for m in mpis) + " | Plexus/better peer |")
        print("|---|" + "---|" * len(mpis) + "---|")
        behind = []
        for s in sizes:
            cells = [compare.fmt(med[(m, s)]) for m in mpis]
            px = med.get(("plexus", s))
            pv = [med[(m, s)] for m in peers if med[(m, s)]]
            ratio = "–"
            if px and pv:
                best = max(pv) if hb else min(pv)
                r = px / best
                ratio = "%.2f" % r
                if (r < 1 if hb else r > 1):
                    behind.append(s)
            print("| %d | %s | %s |" % (s, " | ".join(cells), ratio))
        print("\nbehind the better peer at: %s" % (", ".join(map(str, behind)) or "no size"))
    print("\nraw: %s" % compare.rel(path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
