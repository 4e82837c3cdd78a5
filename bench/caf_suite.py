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
import glob
import os
import re

from mpi_suites import MPIS, ROOT, launch, report

TABLE = os.path.join(ROOT, "tests", "abi", "opencoarrays.txt")
TESTS = "/usr/lib/x86_64-linux-gnu/open-coarrays/{}/bin/OpenCoarrays-*-tests"


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
    out, rc, secs = launch(mpi, np_, [path] + args, limit)
    if rc is None:
        outcome = "timeout"
    else:
        outcome = "pass" if rc == 0 and re.search(r"[Tt]est passed", out) else "fail"
    return {"outcome": outcome, "rc": rc, "seconds": secs, "tail": out[-400:]}


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
    report("OpenCoarrays test programs", "caf-suite", results, a.limit, a.json)


if __name__ == "__main__":
    main()
