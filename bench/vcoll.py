#!/usr/bin/env python3
"""Gatherv, scatterv, allgatherv and alltoallv against MPICH and Open MPI,
through the int entry points and the large-count (_c) ones; then gather,
scatter, bcast and reduce through the int ones.

bench/loops/vcoll (COUNT bytes per block, the slowest rank's mean time per
call) built with each library's mpicc, --np ranks on this machine, each MPI
in turn for every case, --reps times. mpi4py calls the _c functions where
the library has them (MPICH 4, Plexus) for every Gatherv, Scatterv,
Allgatherv and Alltoallv, and for its pickled gather, scatter and alltoall;
Open MPI 4.1 has none, so its column gives its int calls in both rows.

    python3 bench/vcoll.py [--reps 3] [--np 2,4] [--count 8] [--sync]
                           [--mpis plexus,mpich,openmpi] [--old OLD_BUILD]

--old adds another Plexus build (the commit before a change, say) as a
column of its own, run in turn with the others, and the ratio of this
build's times to its.

--sync puts a barrier after each call (as OSU's collective benchmarks do):
back to back, a library whose root returns before its blocks are read runs
ahead of the others.

Prints a table (medians over the repetitions, µs per call) and writes every
run to bench/results/vcoll-DATE.json. A benchmark, not a test.
"""
import argparse, datetime, json, os, statistics, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SRC = os.path.join(HERE, "loops", "vcoll.c")
CACHE = os.path.join(HERE, ".cache", "vcoll")
NAMES = {"plexus": "Plexus", "plexus-old": "Plexus before", "mpich": "MPICH",
         "openmpi": "Open MPI"}
KINDS = ["gatherv", "scatterv", "allgatherv", "alltoallv", "gather", "scatter", "bcast", "reduce"]
VKINDS = KINDS[:4]  # these also through their _c calls


def build(mpi, plexus_build):
    cc = (os.path.join(plexus_build, "bin", "mpicc") if mpi.startswith("plexus")
          else "/usr/bin/mpicc." + mpi)
    os.makedirs(CACHE, exist_ok=True)
    exe = os.path.join(CACHE, "vcoll-" + mpi)
    subprocess.run([cc, "-O2", "-o", exe, SRC], check=True)
    return exe


def command(mpi, np, exe, count, iters, sync, plexus_build):
    args = [exe, str(count), str(iters)] + (["sync"] if sync else [])
    if mpi.startswith("plexus"):
        return [os.path.join(plexus_build, "bin", "pxrun"), "-n", str(np), "--timeout", "300"] + args
    if mpi == "mpich":
        return ["mpiexec.mpich", "-n", str(np)] + args
    return ["mpirun.openmpi", "--allow-run-as-root", "--oversubscribe", "-n", str(np)] + args


def run(cmd):
    env = dict(os.environ, MPIEXEC_TIMEOUT="300")
    try:
        out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             env=env, timeout=400).stdout
    except subprocess.TimeoutExpired:
        return {}, "timeout"
    res = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 2 and f[0].removesuffix("_c") in KINDS:
            try:
                res[f[0]] = float(f[1])
            except ValueError:
                pass
    return res, None if res else out[-300:]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--np", default="2,4")
    ap.add_argument("--count", type=int, default=8)
    ap.add_argument("--iters", type=int, default=0, help="calls per case (default: by --np)")
    ap.add_argument("--sync", action="store_true", help="a barrier after each call")
    ap.add_argument("--mpis", default="plexus,mpich,openmpi")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--old", help="another Plexus build, in a column of its own")
    opts = ap.parse_args()
    nps, mpis = [int(n) for n in opts.np.split(",")], opts.mpis.split(",")
    if opts.old:
        mpis.insert(0, "plexus-old")
    where = lambda m: opts.old if m == "plexus-old" else opts.build
    exes = {m: build(m, where(m)) for m in mpis}
    runs = []
    for rep in range(opts.reps):
        for np in nps:
            # ranks beyond the cores make every library slow: fewer calls
            iters = opts.iters or (20000 if np <= 2 else 1000)
            # each MPI in turn, the same conditions; the order turns from one
            # repetition to the next (a run may find the machine as the one
            # before it left it)
            for m in mpis[rep % len(mpis):] + mpis[:rep % len(mpis)]:
                res, err = run(command(m, np, exes[m], opts.count, iters, opts.sync,
                                       where(m)))
                runs.append({"rep": rep, "mpi": m, "np": np, "count": opts.count, "us": res,
                             "error": err})
                print(f"  rep {rep} np {np} {m}: {res} {err or ''}", file=sys.stderr)

    def cell(m, np, key):
        if m == "openmpi":  # no large-count calls: its int ones
            key = key.replace("_c", "")
        v = [r["us"][key] for r in runs if r["mpi"] == m and r["np"] == np and key in r["us"]]
        return statistics.median(v) if v else None

    fmt = lambda v: "–" if v is None else f"{v:.2f}"
    ratio = lambda a, b: "–" if a is None or b is None else f"{a / b:.2f}"
    print(f"\n{opts.count} bytes per block, µs per call" +
          (" (a barrier after each)" if opts.sync else "") + "\n")
    print("| ranks | call | " + " | ".join(NAMES[m] for m in mpis) +
          " | Plexus/MPICH | Plexus/Open MPI |" + (" Plexus/before |" if opts.old else ""))
    print("|---" * (len(mpis) + 4 + bool(opts.old)) + "|")
    for np in nps:
        for k in KINDS:
            for key in (k, k + "_c") if k in VKINDS else (k,):
                v = {m: cell(m, np, key) for m in mpis}
                print(f"| {np} | {key} | " + " | ".join(fmt(v[m]) for m in mpis) +
                      f" | {ratio(v.get('plexus'), v.get('mpich'))}"
                      f" | {ratio(v.get('plexus'), v.get('openmpi'))} |" +
                      (f" {ratio(v.get('plexus'), v.get('plexus-old'))} |" if opts.old else ""))
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    path = os.path.join(HERE, "results", "vcoll-%s.json" % datetime.date.today().isoformat())
    with open(path, "w") as f:
        json.dump({"command": sys.argv, "runs": runs}, f, indent=1)
    print(f"\nraw runs: {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
