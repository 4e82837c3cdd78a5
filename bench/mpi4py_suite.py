#!/usr/bin/env python3
"""mpi4py's whole test suite, timed under Plexus, MPICH and Open MPI side by
side: mpi4py (the sdist tests/mpi4py downloads) is built once per MPI with
that MPI's mpicc into its own virtual environment under bench/.cache (for
Plexus, the one tests/mpi4py built is used when it exists), then
main.py runs under each MPI's launcher at --np ranks, --reps times in turn.
Prints the wall time (median) and the outcome of each; raw runs go to
--json (default bench/results/mpi4py-suite-DATE.json). A benchmark: it
prints figures and never fails a build.

    bench/mpi4py_suite.py [--np 2] [--reps 3] [--mpis plexus,mpich,openmpi]
"""

import argparse
import datetime
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.environ.get("PLEXUS_BUILD", os.path.join(ROOT, "build"))
CACHE = os.path.join(HERE, ".cache", "mpi4py")
VERSION = "4.1.2"

MPIS = {
    "plexus": {"mpicc": os.path.join(BUILD, "bin", "mpicc"),
               "run": [os.path.join(BUILD, "bin", "pxrun"), "-n"]},
    "mpich": {"mpicc": "mpicc.mpich", "run": ["mpiexec.mpich", "-n"]},
    "openmpi": {"mpicc": "mpicc.openmpi",
                "run": ["mpirun.openmpi", "--allow-run-as-root", "--oversubscribe", "-n"]},
}


def venv_for(name, sdist):
    """A virtual environment with mpi4py built by this MPI's mpicc (for
    Plexus, the one tests/mpi4py built, when there is one)."""
    own = os.path.join(BUILD, "mpi4py", "venv", "bin", "python")
    if name == "plexus" and os.path.exists(own):
        return own
    top = os.path.join(CACHE, name)
    py = os.path.join(top, "venv", "bin", "python")
    stamp = os.path.join(top, "built")
    if os.path.exists(stamp):
        return py
    os.makedirs(top, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", os.path.join(top, "venv")], check=True)
    env = dict(os.environ, MPICC=MPIS[name]["mpicc"])
    subprocess.run([py, "-m", "pip", "install", "--no-cache-dir", "--no-deps",
                    "--no-binary", "mpi4py", sdist], env=env, check=True)
    open(stamp, "w").write(MPIS[name]["mpicc"])
    return py


def run_once(name, py, tests, np_, limit):
    cmd = MPIS[name]["run"] + [str(np_), py, os.path.join(tests, "main.py")]
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=limit, start_new_session=True)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else e.stdout or ""
        subprocess.run(["pkill", "-9", "-f", py])
        last = [l for l in out.splitlines() if " ... " in l][-1:] or ["?"]
        return {"seconds": None, "exit": None, "tests": 0,
                "outcome": f"no end within {limit} s (last: {last[0][:80]})"}
    dt = time.monotonic() - t0
    ran = re.findall(r"^Ran (\d+) tests", p.stdout, re.M)
    status = re.findall(r"^(OK.*|FAILED.*)$", p.stdout, re.M)
    return {"seconds": dt, "exit": p.returncode, "tests": int(ran[0]) if ran else 0,
            "outcome": status[0] if status else "no summary"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--mpis", default="plexus,mpich,openmpi")
    ap.add_argument("--limit", type=int, default=600, help="seconds a run may take")
    ap.add_argument("--json")
    a = ap.parse_args()
    sdist = os.path.join(BUILD, "mpi4py", f"mpi4py-{VERSION}.tar.gz")
    tests = os.path.join(BUILD, "mpi4py", f"mpi4py-{VERSION}", "test")
    if not os.path.exists(sdist) or not os.path.isdir(tests):
        sys.exit(f"{sdist} missing: run tests/mpi4py/mpi4py_suite.py --build {BUILD} setup")
    names = a.mpis.split(",")
    pys = {n: venv_for(n, sdist) for n in names}
    runs = {n: [] for n in names}
    for _ in range(a.reps):
        for n in names:  # in turn, so that the machine's state is shared
            runs[n].append(run_once(n, pys[n], tests, a.np, a.limit))
    out = a.json or os.path.join(
        HERE, "results", f"mpi4py-suite-{datetime.datetime.now():%Y%m%d-%H%M%S}.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    json.dump({"np": a.np, "version": VERSION, "runs": runs}, open(out, "w"), indent=1)
    def med(n):
        t = [r["seconds"] for r in runs[n] if r["seconds"] is not None]
        return statistics.median(t) if t else None
    base = med(names[0])
    print(f"mpi4py {VERSION} whole suite, {a.np} ranks, median of {a.reps} (raw: {out})")
    for n in names:
        m = med(n)
        fig = f"{m:7.1f} s" + (f"  ({m / base:.2f} of {names[0]})" if m and base else "") \
            if m is not None else "    -   "
        print(f"  {n:8s} {fig}  {runs[n][-1]['tests']} tests, {runs[n][-1]['outcome']}, "
              f"exit {runs[n][-1]['exit']}")


if __name__ == "__main__":
    main()
