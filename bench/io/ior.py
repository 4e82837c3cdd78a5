#!/usr/bin/env python3
"""MPI-IO bandwidth with IOR: Plexus against MPICH (ROMIO) and Open MPI (OMPIO).

Cases (IOR's MPI-IO back end, -w -r -e -i 3: write, fsync, read back, three
times in one job; the figure is IOR's mean; -C: each rank reads back the
data of a rank on another node):
  coll-1m     collective, 1 MB transfers, 64 MB per rank (-C -c -t 1m -b 64m)
  coll-64k    collective, 64 KB transfers, 16 MB per rank (-C -c -t 64k -b 16m)
  indep-1m    independent, 1 MB transfers, 64 MB per rank (-C -t 1m -b 64m)
  strided     collective through a strided view: each rank 256 blocks of
              64 KB, rank-interleaved in the file, in one call
              (-c -s 256 -b 64k -t 64k --mpiio.useStridedDatatype --mpiio.useFileView;
              not -C: with it, IOR skips the read call on some ranks only, so
              the collective calls no longer match)
  strided-cb  the same with two-phase collective buffering forced on
              (hints romio_cb_write=enable, romio_cb_read=enable, through
              IOR_HINT__MPI__ variables; Open MPI's OMPIO ignores them and
              aggregates anyway): the aggregation traffic, for the
              multi-rail gain between emulated nodes

Placements: ranks on this machine (--np, default 4,8), and on emulated
nodes of a pxfab fabric (--nodes, default 2,4; two ranks per node, two rails
of 1 Gbit/s): every library with both rails, and Plexus with one rail, for
the multi-rail gain of the aggregation traffic. Files go to each --dirs
directory (default /dev/shm and /var/tmp: memory and disk), on emulated
nodes to --node-dirs (default /dev/shm: the network is what differs).

Every case runs --reps times per library, interleaved; medians with
[min-max] and the commands are printed as Markdown, every run's figures go
as JSON to --json (default bench/results/ior-DATE.json). Benchmarks print
figures, they never fail a build. Prerequisite: bench/io/build.sh IOR_SRC all.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import compare  # noqa: E402

RUN_SH = os.path.join(os.path.dirname(HERE), "osu", "run.sh")
CACHE = os.path.join(os.path.dirname(HERE), ".cache")
RESULTS = os.path.join(os.path.dirname(HERE), "results")
PXFAB = [sys.executable, "-m", "plexus.fab"]
ENV = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))

CASES = {
    "coll-1m": ("collective, 1 MB", ["-C", "-c", "-t", "1m", "-b", "64m"]),
    "coll-64k": ("collective, 64 KB", ["-C", "-c", "-t", "64k", "-b", "16m"]),
    "indep-1m": ("independent, 1 MB", ["-C", "-t", "1m", "-b", "64m"]),
    "strided": ("strided collective, 256 x 64 KB", ["-c", "-s", "256", "-b", "64k", "-t", "64k",
                                                    "--mpiio.useStridedDatatype",
                                                    "--mpiio.useFileView"]),
    "strided-cb": ("strided collective, 256 x 64 KB, two-phase forced",
                   ["-c", "-s", "256", "-b", "64k", "-t", "64k", "--mpiio.useStridedDatatype",
                    "--mpiio.useFileView"],
                   ["IOR_HINT__MPI__romio_cb_write=enable", "IOR_HINT__MPI__romio_cb_read=enable"]),
}


def ior_bin(mpi):
    return os.path.join(CACHE, "ior-" + mpi, "src", "ior")


def command(mpi, np, case, path, nodes=None, rails="rail0,rail1", timeout=300):
    a = [RUN_SH, "--mpi", mpi, "--np", str(np), "--timeout", str(timeout)]
    if nodes:
        a += ["--nodes", ",".join("node%d" % i for i in range(nodes)), "--mgmt", "pxf-mgmt",
              "--rails", rails]
    for e in CASES[case][2] if len(CASES[case]) > 2 else []:
        a += ["--env", e]
    return a + [ior_bin(mpi), "-a", "MPIIO", "-w", "-r", "-e", "-i", "3",
                "-o", path] + CASES[case][1]


def figures(out):
    """(write, read) in MiB/s: the Mean(MiB) column of IOR's summary (three
    repetitions in the job: the first pays for fresh buffers and file pages,
    the others show the steady state)."""
    summary = out.split("Summary of all tests:", 1)
    got = {}
    for op in ("write", "read"):
        m = re.search(r"^%s\s+[\d.]+\s+[\d.]+\s+([\d.]+)" % op, summary[1], re.M) if len(summary) > 1 else None
        got[op] = float(m.group(1)) if m else None
    return got["write"], got["read"]


def med(vals):
    if not vals:
        return "failed", None
    m = statistics.median(vals)
    return ("%.0f [%.0f–%.0f]" % (m, min(vals), max(vals)) if len(vals) > 1 else "%.0f" % m), m


def fab(*args):
    subprocess.run(PXFAB + [str(a) for a in args], check=True, capture_output=True, env=ENV)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--mpis", default="mpich,openmpi,plexus")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--np", default="4,8", help="ranks on this machine ('' for none)")
    ap.add_argument("--nodes", default="2,4", help="emulated nodes, 2 ranks each ('' for none; root)")
    ap.add_argument("--dirs", default="/dev/shm,/var/tmp")
    ap.add_argument("--node-dirs", default="/dev/shm", help="directories for the emulated nodes' runs")
    ap.add_argument("--timeout", type=int, default=300, help="seconds a job may take")
    ap.add_argument("--json")
    args = ap.parse_args()
    mpis = [m for m in args.mpis.split(",") if m and os.access(ior_bin(m), os.X_OK)]
    for m in set(args.mpis.split(",")) - set(mpis):
        print("ior: no IOR build for %s (bench/io/build.sh IOR_SRC %s)" % (m, m), file=sys.stderr)
    cases = [c for c in args.cases.split(",") if c]
    placements = [(int(n), None) for n in args.np.split(",") if n]
    placements += [(2 * int(n), int(n)) for n in args.nodes.split(",") if n]
    started = time.strftime("%Y-%m-%d %H:%M")
    raw = []
    print("Run %s; median of %d runs; MiB/s." % (started, args.reps), flush=True)
    try:
        for np, nodes in placements:
            if nodes:
                fab("up", "--nodes", nodes, "--rails", 2, "--rate", "1gbit")
            try:
                for d in (args.node_dirs if nodes else args.dirs).split(","):
                    rows = []
                    for case in cases:
                        for m in mpis:
                            rows.append((case, compare.MPIS[m], m, "rail0,rail1"))
                            if nodes and m == "plexus":
                                rows.append((case, "Plexus, one rail", m, "rail0"))
                    res = {r: ([], []) for r in rows}
                    cmds = {}
                    for rep in range(args.reps):
                        for r in rows:
                            case, label, m, rails = r
                            tmp = tempfile.mkdtemp(prefix="pxior.", dir=d)
                            argv = command(m, np, case, os.path.join(tmp, "f"), nodes, rails,
                                           args.timeout)
                            cmds[r] = compare.show_cmd(argv)
                            rc, out = compare.run(argv, args.timeout + 30)
                            subprocess.run(["rm", "-rf", tmp])
                            w, rd = figures(out) if rc == 0 else (None, None)
                            print("  %s np=%d %s %s %s run %d: write %s read %s%s" % (
                                d, np, "nodes=%d" % nodes if nodes else "", case, label, rep + 1, w, rd,
                                "" if rc == 0 else " (rc=%d)" % rc), file=sys.stderr, flush=True)
                            if w is not None:
                                res[r][0].append(w)
                            if rd is not None:
                                res[r][1].append(rd)
                    where = "%d emulated nodes, 2 ranks each" % nodes if nodes else "%d ranks, one machine" % np
                    print("\n#### IOR, %s, %s\n" % (where, d))
                    print("| case | library | write | read |\n|---|---|---|---|")
                    for r in rows:
                        case, label, m, rails = r
                        print("| %s | %s | %s | %s |" % (CASES[case][0], label, med(res[r][0])[0],
                                                         med(res[r][1])[0]))
                        raw.append({"np": np, "nodes": nodes, "dir": d, "case": case, "library": label,
                                    "write": res[r][0], "read": res[r][1], "command": cmds.get(r)})
                    print("\nCommands:\n")
                    for r in rows:
                        print("    " + cmds[r])
                    sys.stdout.flush()
            finally:
                if nodes:
                    subprocess.run(PXFAB + ["down"], capture_output=True, env=ENV)
    finally:
        path = args.json or os.path.join(RESULTS, "ior-%s.json" % time.strftime("%Y%m%d-%H%M%S"))
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w") as f:
            json.dump({"date": started, "reps": args.reps, "machine": compare.machine(), "runs": raw},
                      f, indent=1)
        print("ior: raw results in %s" % path, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
