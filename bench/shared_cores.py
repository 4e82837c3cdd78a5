#!/usr/bin/env python3
"""Ping-pong latency when another job shares the cores.

Two ranks on one machine, bench/loops/pingpong_pct (median one-way latency),
each MPI in turn: alone, then two copies of the same job at once, as when
two jobs, or a job and other programs, share a node's cores. Plexus runs in
its default progress mode and with PX_PROGRESS_MODE=spin (a process that
never yields the processor while it waits); MPICH and Open MPI as Debian
builds them, launched with their defaults.

    python3 bench/shared_cores.py [--reps 3] [--sizes 8,65536,1048576]

Prints a table (medians over the repetitions, µs) and writes every run to
bench/results/shared-cores-DATE.json. A benchmark, not a test.
"""
import argparse, datetime, json, os, re, statistics, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SRC = os.path.join(HERE, "loops", "pingpong_pct.c")
CACHE = os.path.join(HERE, ".cache", "shared-cores")
ITERS = {8: 20000, 65536: 2000, 1048576: 300}
NAMES = {"plexus": "Plexus", "plexus-spin": "Plexus spin", "mpich": "MPICH",
         "openmpi": "Open MPI"}


def build(mpi, plexus_build):
    cc = os.path.join(plexus_build, "bin", "mpicc") if mpi.startswith("plexus") \
        else "/usr/bin/mpicc." + mpi
    os.makedirs(CACHE, exist_ok=True)
    exe = os.path.join(CACHE, "pingpong_pct-" + ("plexus" if mpi.startswith("plexus") else mpi))
    subprocess.run([cc, "-O2", "-o", exe, SRC], check=True)
    return exe


def command(mpi, exe, size, plexus_build):
    args = [exe, str(size), str(ITERS.get(size, 1000))]
    if mpi == "plexus":
        return [os.path.join(plexus_build, "bin", "pxrun"), "-n", "2", "--timeout", "120"] + args
    if mpi == "plexus-spin":
        return [os.path.join(plexus_build, "bin", "pxrun"), "-n", "2", "--timeout", "120",
                "--env", "PX_PROGRESS_MODE=spin"] + args
    if mpi == "mpich":
        return ["mpiexec.mpich", "-n", "2"] + args
    return ["mpirun.openmpi", "--allow-run-as-root", "--oversubscribe", "-n", "2"] + args


def median_of(out):
    m = re.search(r'"median_us":([0-9.]+)', out)
    return float(m.group(1)) if m else None


def run_jobs(cmd, copies):
    env = dict(os.environ, MPIEXEC_TIMEOUT="120")
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env=env) for _ in range(copies)]
    res = []
    for p in procs:
        try:
            out, _ = p.communicate(timeout=180)
        except subprocess.TimeoutExpired:
            p.kill()
            out = ""
        res.append(median_of(out))
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--sizes", default="8,65536,1048576")
    ap.add_argument("--mpis", default="plexus,plexus-spin,mpich,openmpi")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    opts = ap.parse_args()
    sizes = [int(s) for s in opts.sizes.split(",")]
    mpis = opts.mpis.split(",")
    exes = {m: build(m, opts.build) for m in mpis}
    runs = []
    for rep in range(opts.reps):
        for size in sizes:
            for copies in (1, 2):
                for m in mpis:  # each MPI in turn, the same conditions
                    lat = run_jobs(command(m, exes[m], size, opts.build), copies)
                    runs.append({"rep": rep, "mpi": m, "bytes": size, "jobs": copies,
                                 "median_us": lat})
                    print(f"  rep {rep} {m} {size} B, {copies} job(s): {lat}", file=sys.stderr)

    def cell(m, size, copies):
        v = [x for r in runs if r["mpi"] == m and r["bytes"] == size and r["jobs"] == copies
             for x in r["median_us"] if x is not None]
        return statistics.median(v) if v else None

    fmt = lambda v: "–" if v is None else (f"{v:.2f}" if v < 100 else f"{v:.0f}")
    ratio = lambda a, b: "–" if a is None or b is None else f"{a / b:.2f}"
    head = [NAMES.get(m, m) for m in mpis]
    print("| size | jobs | " + " | ".join(head) + " | Plexus/MPICH | Plexus/Open MPI |")
    print("|---" * (len(mpis) + 4) + "|")
    for size in sizes:
        for copies in (1, 2):
            c = {m: cell(m, size, copies) for m in mpis}
            print(f"| {size} B | {copies} | " + " | ".join(fmt(c[m]) for m in mpis) +
                  f" | {ratio(c.get('plexus'), c.get('mpich'))}"
                  f" | {ratio(c.get('plexus'), c.get('openmpi'))} |")
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    out = os.path.join(HERE, "results",
                       f"shared-cores-{datetime.datetime.now():%Y%m%d-%H%M}.json")
    with open(out, "w") as f:
        json.dump({"date": datetime.datetime.now().isoformat(timespec="seconds"),
                   "iters": ITERS, "runs": runs}, f, indent=1)
    print(f"runs: {out}")


if __name__ == "__main__":
    main()
