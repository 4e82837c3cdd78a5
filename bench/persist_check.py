#!/usr/bin/env python3
"""Persistent collectives with their data checked, against MPICH.

bench/loops/persist_check starts every MPI-4.0 persistent collective
(MPI_*_init) on MPI_COMM_WORLD STARTS times with new data before each start
and checks every result: IMB-MPI4 times the same calls but looks at no data,
so a library that skips work after the first start looks fast there. Each
MPI's program is built with its own mpicc (into --work, git-ignored); the
MPIs run in turn, REPS times. Prints, per collective and size, each MPI's
median time per start (MPI_Start + MPI_Wait, averaged over the ranks), the
starts whose result was wrong at some rank, and Plexus's time over the
peer's where the peer's results were right. Debian's Open MPI 4.1.4 has no
persistent collectives; it is left out unless asked for. Raw runs go to
--json (default bench/results/persist-check-DATE.json). A benchmark: prints
figures, never fails a build.

--loop io_shared runs bench/loops/io_shared.c the same way instead: the
shared file pointer's calls (write_shared, read_shared, the ordered ones,
get_position_shared), each record checked, the file on tmpfs unless
PX_BENCH_DIR names another directory; --starts is then the calls per size.

  python3 bench/persist_check.py --np 2 --sizes 4,4096,65536,262144,1048576 --reps 3
  python3 bench/persist_check.py --loop io_shared --mpi plexus,mpich,openmpi --sizes 8,4096 \
      --starts 20000
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("PLEXUS_BUILD", REPO / "build"))
MPIS = {
    "plexus": {"cc": str(BUILD / "bin/mpicc"), "run": [str(BUILD / "bin/pxrun"), "-n"], "env": {}},
    "mpich": {"cc": "mpicc.mpich", "run": ["mpiexec.mpich", "-n"], "env": {}},
    "openmpi": {"cc": "mpicc.openmpi", "run": ["mpirun.openmpi", "--oversubscribe", "-n"],
                "env": {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}},
}


def build(mpi, work, loop):
    exe = work / f"{loop}.{mpi}"
    src = REPO / f"bench/loops/{loop}.c"
    r = subprocess.run([MPIS[mpi]["cc"], "-O2", "-o", str(exe), str(src)], capture_output=True,
                       text=True)
    if r.returncode:
        print(f"{mpi}: build failed: {r.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return exe


def run(mpi, exe, np_, starts, sizes, timeout):
    """{(name, bytes): (us, wrong)} of one run, or None."""
    env = dict(os.environ, **MPIS[mpi]["env"])
    cmd = MPIS[mpi]["run"] + [str(np_), str(exe), str(starts)] + [str(s) for s in sizes]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"{mpi}: no end within {timeout} s", file=sys.stderr)
        return None
    out = {}
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) == 4:
            out[(f[0], int(f[1]))] = (float(f[2]), int(f[3]))
    if r.returncode or not out:
        print(f"{mpi}: exit {r.returncode}: {r.stderr.strip()[-300:]}", file=sys.stderr)
    return out or None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--loop", default="persist_check", choices=["persist_check", "io_shared"])
    ap.add_argument("--mpi", default="plexus,mpich")
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--sizes", default="4,4096,65536,262144,1048576")
    ap.add_argument("--starts", type=int, default=200)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--work", type=Path, default=REPO / "bench/.cache/persist_check")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    a.work.mkdir(parents=True, exist_ok=True)
    exes = {m: build(m, a.work, a.loop) for m in a.mpi.split(",")}
    mpis = [m for m in exes if exes[m]]
    runs = {m: [] for m in mpis}
    for _ in range(a.reps):
        for m in mpis:
            r = run(m, exes[m], a.np, a.starts, sizes, a.timeout)
            if r:
                runs[m].append(r)
    when = datetime.datetime.now()
    keys = []
    for m in mpis:
        for r in runs[m]:
            keys += [k for k in r if k not in keys]
    peers = [m for m in mpis if m != "plexus"]
    head = ["collective" if a.loop == "persist_check" else "call", "bytes"]
    head += [f"{m} µs (wrong)" for m in mpis]
    head += [f"plexus/{p}" for p in peers if "plexus" in mpis]
    print(f"\n{a.np} ranks, {a.starts} {'starts' if a.loop == 'persist_check' else 'calls'}, "
          f"median of {a.reps} runs, "
          f"{when:%Y-%m-%d %H:%M}\n")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    table = []
    for k in keys:
        cell, med = [], {}
        for m in mpis:
            got = [r[k] for r in runs[m] if k in r]
            if not got:
                cell.append("–")
                continue
            us = statistics.median(g[0] for g in got)
            wrong = max(g[1] for g in got)
            med[m] = (us, wrong)
            cell.append(f"{us:.2f}" + (f" ({wrong} wrong)" if wrong else ""))
        for p in peers:
            if "plexus" not in med or p not in med:
                cell.append("–")
            elif med[p][1]:
                cell.append("its data wrong")
            else:
                cell.append(f"{med['plexus'][0] / med[p][0]:.2f}")
        table.append({"coll": k[0], "bytes": k[1], **{m: med.get(m) for m in mpis}})
        print(f"| {k[0]} | {k[1]} | " + " | ".join(cell) + " |")
    out = a.json or REPO / f"bench/results/{a.loop.replace('_', '-')}-{when:%Y%m%d-%H%M}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"date": when.isoformat(), "np": a.np, "starts": a.starts,
                               "reps": a.reps, "runs": {m: [[[k[0], k[1], *v] for k, v in r.items()]
                                                             for r in runs[m]] for m in mpis},
                               "table": table}, indent=1))
    print(f"\nraw: {out.relative_to(REPO) if out.is_relative_to(REPO) else out}")


if __name__ == "__main__":
    main()
