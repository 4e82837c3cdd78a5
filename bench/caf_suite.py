#!/usr/bin/env python3
"""OpenCoarrays' own test programs under Plexus, MPICH and Open MPI side by
side: Debian ships them built for MPICH (libcoarrays-mpich-dev) and for
Open MPI (libcoarrays-openmpi-dev). Plexus runs the MPICH build through the
ABI (build/lib first on LD_LIBRARY_PATH), MPICH the same binaries with its
own library, Open MPI its own build. Each program runs once per MPI with the
image count and arguments of tests/abi/opencoarrays.txt (4 images
otherwise), the listed skips included unless --skip; it passes when it exits
0 and prints "Test passed" within --limit seconds. Prints per MPI the passes,
failures, timeouts and wall time, and the programs whose outcome differs;
raw runs go to --json (default bench/results/caf-suite-DATE.json). A
benchmark: it prints figures and never fails a build.

    bench/caf_suite.py [--mpis plexus,mpich,openmpi] [--limit 30] [--skip]
"""

import argparse
import datetime
import glob
import json
import os
import re
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.environ.get("PLEXUS_BUILD", os.path.join(ROOT, "build"))
TABLE = os.path.join(ROOT, "tests", "abi", "opencoarrays.txt")
TESTS = "/usr/lib/x86_64-linux-gnu/open-coarrays/{}/bin/OpenCoarrays-*-tests"

MPIS = {
    "plexus": {"build": "mpich", "env": {"LD_LIBRARY_PATH": os.path.join(BUILD, "lib")},
               "run": [os.path.join(BUILD, "bin", "pxrun"), "-n"]},
    "mpich": {"build": "mpich", "env": {}, "run": ["mpiexec.mpich", "-n"]},
    "openmpi": {"build": "openmpi",
                "env": {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"},
                "run": ["mpirun.openmpi", "--oversubscribe", "-n"]},
}


def read_table():
    """{program: (np, args)} and [(prefix-or-name pattern, why)]"""
    runs, skips = {}, []
    for line in open(TABLE):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = re.match(r"(\S+) skip=(.+)$", line)
        if m:
            skips.append((re.compile("^" + m.group(1).replace("*", ".*") + "$"), m.group(2)))
            continue
        m = re.match(r"(\S+) np=(\d+)(?: args=(.+))?$", line)
        if not m:
            raise SystemExit(f"{TABLE}: cannot read '{line}'")
        runs[m.group(1)] = (int(m.group(2)), (m.group(3) or "").split())
    return runs, skips


def run_one(mpi, path, np_, args, limit):
    cfg = MPIS[mpi]
    env = dict(os.environ, **cfg["env"])
    t0 = time.monotonic()
    try:
        p = subprocess.run(cfg["run"] + [str(np_), path] + args, env=env, capture_output=True,
                           timeout=limit, start_new_session=True)
        out, rc = (p.stdout + p.stderr).decode(errors="replace"), p.returncode
        outcome = "pass" if rc == 0 and re.search(r"[Tt]est passed", out) else "fail"
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace")
        rc, outcome = None, "timeout"
        subprocess.run(["pkill", "-KILL", "-f", path], check=False)
    return {"outcome": outcome, "rc": rc, "seconds": round(time.monotonic() - t0, 3),
            "tail": out[-400:]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mpis", default="plexus,mpich,openmpi")
    ap.add_argument("--limit", type=float, default=30, help="seconds per program")
    ap.add_argument("--skip", action="store_true", help="leave out the table's skips")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    runs, skips = read_table()
    mpis = a.mpis.split(",")
    results = {}
    for mpi in mpis:
        dirs = glob.glob(TESTS.format(MPIS[mpi]["build"]))
        if not dirs:
            print(f"{mpi}: no OpenCoarrays tests built for {MPIS[mpi]['build']} "
                  f"(install libcoarrays-{MPIS[mpi]['build']}-dev)")
            continue
        results[mpi] = {}
        for path in sorted(glob.glob(os.path.join(dirs[0], "*"))):
            prog = os.path.basename(path)
            if a.skip and any(p.match(prog) for p, _ in skips):
                continue
            np_, args = runs.get(prog, (4, []))
            results[mpi][prog] = run_one(mpi, path, np_, args, a.limit)
    print(f"OpenCoarrays test programs, {datetime.date.today()}, limit {a.limit:g} s each")
    print("| MPI | programs | pass | fail | timeout | wall time (s) |")
    print("|---|---|---|---|---|---|")
    for mpi, res in results.items():
        c = {k: sum(r["outcome"] == k for r in res.values()) for k in ("pass", "fail", "timeout")}
        wall = sum(r["seconds"] for r in res.values())
        print(f"| {mpi} | {len(res)} | {c['pass']} | {c['fail']} | {c['timeout']} | {wall:.1f} |")
    progs = sorted(set().union(*[set(r) for r in results.values()])) if results else []
    differ = [p for p in progs
              if len({results[m].get(p, {}).get("outcome") for m in results}) > 1]
    if differ:
        print("\nOutcomes that differ:")
        for p in differ:
            print(f"  {p}: " + ", ".join(f"{m} {results[m].get(p, {}).get('outcome', '-')}"
                                        for m in results))
    path = a.json or os.path.join(
        HERE, "results", datetime.datetime.now().strftime("caf-suite-%Y%m%d-%H%M.json"))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"date": datetime.datetime.now().isoformat(timespec="seconds"),
                   "limit": a.limit, "results": results}, f, indent=1)
    print(f"\nraw runs: {path}")


if __name__ == "__main__":
    main()
