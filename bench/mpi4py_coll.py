#!/usr/bin/env python3
"""mpi4py's collectives timed under Plexus, MPICH and Open MPI side by side:
the pickled ones (gather, scatter, allgather, alltoall, bcast of a small
dict) and the buffer v-collectives (Gatherv, Alltoallv, Allgatherv of one
int per rank), each --iters times after 200 warm-up calls, the slowest
rank's mean per call in µs; --np ranks on this machine, each MPI in turn,
--reps times. Each MPI's mpi4py is the one bench/mpi4py_suite.py builds
(for Plexus, the one tests/mpi4py built, when there is one).

    python3 bench/mpi4py_coll.py [--np 2] [--reps 5] [--mpis plexus,mpich,openmpi]

Prints a table (median [min–max]) and writes every run to
bench/results/mpi4py-coll-DATE.json. A benchmark, not a test.
"""
import argparse, datetime, json, os, statistics, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mpi4py_suite as suite  # noqa: E402  (venv_for, MPIS, BUILD, VERSION)

PROGRAM = r'''
import array, json, sys, time
from mpi4py import MPI
c = MPI.COMM_WORLD
r, n = c.Get_rank(), c.Get_size()
iters = int(sys.argv[1])
obj = {"rank": r, "data": list(range(4))}
sb, rb = array.array("i", [r] * n), array.array("i", [0] * n)
cd = ([1] * n, list(range(n)))
cases = [
    ("gather(obj)", lambda: c.gather(obj, root=0)),
    ("scatter(obj)", lambda: c.scatter([obj] * n if r == 0 else None, root=0)),
    ("allgather(obj)", lambda: c.allgather(obj)),
    ("alltoall(obj)", lambda: c.alltoall([obj] * n)),
    ("bcast(obj)", lambda: c.bcast(obj, root=0)),
    ("Gatherv", lambda: c.Gatherv(sb[:1], [rb, cd, MPI.INT], root=0)),
    ("Alltoallv", lambda: c.Alltoallv([sb, cd, MPI.INT], [rb, cd, MPI.INT])),
    ("Allgatherv", lambda: c.Allgatherv(sb[:1], [rb, cd, MPI.INT])),
]
out = {}
for name, f in cases:
    for _ in range(200):
        f()
    c.Barrier()
    t0 = time.perf_counter()
    for _ in range(iters):
        f()
    us = (time.perf_counter() - t0) / iters * 1e6
    out[name] = c.reduce(us, op=MPI.MAX, root=0)
if r == 0:
    print("RESULT " + json.dumps(out))
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20000)
    ap.add_argument("--mpis", default="plexus,mpich,openmpi")
    a = ap.parse_args()
    sdist = os.path.join(suite.BUILD, "mpi4py", f"mpi4py-{suite.VERSION}.tar.gz")
    if not os.path.exists(sdist):
        sys.exit(f"{sdist} missing: run tests/mpi4py/mpi4py_suite.py --build {suite.BUILD} setup")
    names = a.mpis.split(",")
    pys = {m: suite.venv_for(m, sdist) for m in names}
    prog = tempfile.NamedTemporaryFile("w", suffix=".py", delete=False)
    prog.write(PROGRAM)
    prog.close()
    runs = []
    for rep in range(a.reps):
        for m in names:  # in turn, so that the machine's state is shared
            cmd = suite.MPIS[m]["run"] + [str(a.np), pys[m], prog.name, str(a.iters)]
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=600)
            line = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
            res = json.loads(line[0][7:]) if line else {}
            runs.append({"rep": rep, "mpi": m, "us": res, "error": None if res else p.stdout[-300:]})
            print(f"  rep {rep} {m}: {res or p.stdout[-200:]}", file=sys.stderr)
    os.unlink(prog.name)
    cases = list(next((r["us"] for r in runs if r["us"]), {}))
    print(f"\nmpi4py {suite.VERSION}, {a.np} ranks, µs per call, median [min–max] of {a.reps}\n")
    print("| call | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 1) + "|")
    for k in cases:
        cells = []
        for m in names:
            v = [r["us"][k] for r in runs if r["mpi"] == m and k in r["us"]]
            cells.append(f"{statistics.median(v):.2f} [{min(v):.2f}–{max(v):.2f}]" if v else "–")
        print(f"| {k} | " + " | ".join(cells) + " |")
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    path = os.path.join(HERE, "results", f"mpi4py-coll-{datetime.date.today().isoformat()}.json")
    with open(path, "w") as f:
        json.dump({"command": sys.argv, "np": a.np, "runs": runs}, f, indent=1)
    print(f"\nraw runs: {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
