"""What bench/caf_suite.py and bench/scalapack_suite.py share: how each MPI
runs programs Debian builds for MPICH and for Open MPI (Plexus runs the
MPICH build through the ABI, build/lib first on LD_LIBRARY_PATH; MPICH the
same binaries with its own library; Open MPI its own build), the summary
table, the outcomes that differ, and the raw runs as JSON."""

import datetime
import json
import os
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.environ.get("PLEXUS_BUILD", os.path.join(ROOT, "build"))

MPIS = {
    "plexus": {"build": "mpich", "env": {"LD_LIBRARY_PATH": os.path.join(BUILD, "lib")},
               "run": [os.path.join(BUILD, "bin", "pxrun"), "-n"]},
    "mpich": {"build": "mpich", "env": {}, "run": ["mpiexec.mpich", "-n"]},
    "openmpi": {"build": "openmpi",
                "env": {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"},
                "run": ["mpirun.openmpi", "--oversubscribe", "-n"]},
}


def launch(mpi, np_, argv, limit, cwd=None):
    """Runs argv at np_ ranks under mpi: (output, exit code or None on
    timeout, seconds); a program that outlives the limit is killed."""
    cfg = MPIS[mpi]
    env = dict(os.environ, **cfg["env"])
    t0 = time.monotonic()
    try:
        p = subprocess.run(cfg["run"] + [str(np_)] + argv, env=env, cwd=cwd, capture_output=True,
                           timeout=limit, start_new_session=True)
        out, rc = (p.stdout + p.stderr).decode(errors="replace"), p.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = (e.stdout or b"").decode(errors="replace"), None
        subprocess.run(["pkill", "-KILL", "-f", argv[0]], check=False)
    return out, rc, round(time.monotonic() - t0, 3)


def report(title, name, results, limit, json_path=None, extra=None):
    """results: {mpi: {program: {"outcome": pass|fail|timeout, "seconds": s, ...}}};
    extra: (column title, function of one MPI's results) for one more column."""
    print(f"{title}, {datetime.date.today()}, limit {limit:g} s each")
    head = "| MPI | programs | pass | fail | timeout |" + (f" {extra[0]} |" if extra else "")
    print(head + " wall time (s) |")
    print("|---" * (head.count("|")) + "|")
    for mpi, res in results.items():
        c = {k: sum(r["outcome"] == k for r in res.values()) for k in ("pass", "fail", "timeout")}
        wall = sum(r["seconds"] for r in res.values())
        more = f" {extra[1](res)} |" if extra else ""
        print(f"| {mpi} | {len(res)} | {c['pass']} | {c['fail']} | {c['timeout']} |{more}"
              f" {wall:.1f} |")
    progs = sorted(set().union(*[set(r) for r in results.values()])) if results else []
    differ = [p for p in progs
              if len({results[m].get(p, {}).get("outcome") for m in results}) > 1]
    if differ:
        print("\nOutcomes that differ:")
        for p in differ:
            print(f"  {p}: " + ", ".join(f"{m} {results[m].get(p, {}).get('outcome', '-')}"
                                        for m in results))
    path = json_path or os.path.join(
        HERE, "results", datetime.datetime.now().strftime(f"{name}-%Y%m%d-%H%M.json"))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"date": datetime.datetime.now().isoformat(timespec="seconds"),
                   "limit": limit, "results": results}, f, indent=1)
    print(f"\nraw runs: {path}")
