#!/usr/bin/env python3
"""ScaLAPACK's own test programs under Plexus, MPICH and Open MPI side by
side: Debian ships them built for MPICH and for Open MPI (scalapack-mpi-test).
Plexus runs the MPICH build through the ABI (build/lib first on
LD_LIBRARY_PATH), MPICH the same binaries with its own library, Open MPI its
own build. Every driver, PBLAS tester and BLACS tester runs once per MPI at
4 ranks, in a directory of its own with the package's input files, within
--limit seconds. A program passes as in tests/abi/scalapack_suite_check.sh:
it ends normally (the BLACS testers in their BLACS_ABORT) and reports passed
checks and no failed one. The programs tests/abi/scalapack_suite.txt skips
are run too unless --skip. Prints per MPI the passes, failures, timeouts,
failed checks and wall time, and the programs whose outcome differs; raw
runs go to --json (default bench/results/scalapack-suite-DATE.json). A
benchmark: it prints figures and never fails a build.

    bench/scalapack_suite.py [--mpis plexus,mpich,openmpi] [--limit 60] [--skip]
"""

import argparse
import glob
import os
import re
import tempfile

from mpi_suites import MPIS, ROOT, launch, report

TABLE = os.path.join(ROOT, "tests", "abi", "scalapack_suite.txt")
TESTS = "/usr/lib/x86_64-linux-gnu/scalapack/{}-tests"

PBLAS_ROW = re.compile(r"^ *\| +P[SDCZ][A-Z0-9_]+ +(\d+) +(\d+) +(\d+) +(\d+)", re.M)


def skips():
    out = set()
    for line in open(TABLE):
        m = re.match(r"(\S+) skip=", line)
        if m:
            out.add(m.group(1))
    return out


def programs(d):
    progs = [os.path.basename(p) for p in glob.glob(os.path.join(d, "x*"))]
    progs += [os.path.basename(p) for p in glob.glob(os.path.join(d, "PBLAS", "?pb?tst"))]
    return sorted(set(progs))


def judge(prog, out, rc):
    """(outcome, failed checks)"""
    if prog in ("xCbtest", "xFbtest"):
        sections = re.findall(r"TESTS: +\d+ TESTS;.*?(\d+) FAILED\.", out)
        failed = sum(int(n) for n in sections)
        ok = len(sections) >= 20 and failed == 0 and "killed other procs" in out
        return ("pass" if ok else "fail"), failed
    if prog.endswith("tst"):
        rows = PBLAS_ROW.findall(out)
        failed = sum(int(r[2]) for r in rows)
        ok = rc == 0 and rows and failed == 0 and "End of Tests" in out
        return ("pass" if ok else "fail"), failed
    failed = sum(int(n) for n in re.findall(r"^ *(\d+) tests completed and failed", out, re.M))
    lines = [ln for ln in out.splitlines() if re.search("fail", ln, re.I)
             and not re.search(r"^ *0 tests completed and failed|indication of which .* failed", ln)]
    ok = rc == 0 and not lines and re.search("passed", out, re.I)
    return ("pass" if ok else "fail"), failed or (1 if lines else 0)


def run_one(mpi, d, prog, limit):
    path = os.path.join(d, "PBLAS", prog) if prog.endswith("tst") else os.path.join(d, prog)
    with tempfile.TemporaryDirectory(prefix="px-scalapack-") as wd:
        for f in glob.glob(os.path.join(d, "*.dat")) + glob.glob(os.path.join(d, "*", "*.dat")):
            if not os.path.exists(os.path.join(wd, os.path.basename(f))):
                os.symlink(f, os.path.join(wd, os.path.basename(f)))
        out, rc, secs = launch(mpi, 4, [path], limit, cwd=wd)
    outcome, failed = ("timeout", 0) if rc is None else judge(prog, out, rc)
    return {"outcome": outcome, "rc": rc, "failed_checks": failed, "seconds": secs,
            "tail": out[-400:]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mpis", default="plexus,mpich,openmpi")
    ap.add_argument("--limit", type=float, default=60, help="seconds per program")
    ap.add_argument("--skip", action="store_true", help="leave out the table's skips")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    skip = skips() if a.skip else set()
    results = {}
    for mpi in a.mpis.split(","):
        d = TESTS.format(MPIS[mpi]["build"])
        if not os.path.isdir(d):
            print(f"{mpi}: no ScaLAPACK tests built for {MPIS[mpi]['build']} "
                  "(install scalapack-mpi-test)")
            continue
        results[mpi] = {p: run_one(mpi, d, p, a.limit) for p in programs(d) if p not in skip}
    report("ScaLAPACK test programs at 4 ranks", "scalapack-suite", results, a.limit, a.json,
           ("failed checks", lambda res: sum(r["failed_checks"] for r in res.values())))


if __name__ == "__main__":
    main()
