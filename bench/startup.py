#!/usr/bin/env python3
"""Job start-up time: pxrun against srun (--mpi=pmi2, --mpi=pmix) on a local
Slurm cluster, 1 to 64 ranks.

The program is MPI_Init, MPI_Barrier and MPI_Finalize; the figure is the
wall time of the whole command (launch, bootstrap, wire-up, teardown), median
of --reps runs taken in turn. A one-node Slurm cluster declaring 64 CPUs
(scripts/slurm-local.sh up --cpus 64) is brought up for the run when none is,
and taken down afterwards; needs root. Raw figures go to --json (default
bench/results/startup-DATE.json). Benchmarks print figures; they never fail
a build.
"""

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.environ.get("PLEXUS_BUILD", os.path.join(ROOT, "build"))
CACHE = os.path.join(HERE, ".cache", "startup")
SLURM_LOCAL = os.path.join(ROOT, "scripts", "slurm-local.sh")
SLURM_DIR = "/tmp/plexus-slurm-bench"

PROG = r"""
#include <mpi.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--np", default="1,2,4,8,16,32,64")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--launchers", default="pxrun,srun-pmi2,srun-pmix")
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("startup: needs root (Slurm's daemons)", file=sys.stderr)
        return 1

    os.makedirs(CACHE, exist_ok=True)
    src = os.path.join(CACHE, "init_fini.c")
    exe = os.path.join(CACHE, "init_fini")
    with open(src, "w") as f:
        f.write(PROG)
    subprocess.run([os.path.join(BUILD, "bin", "mpicc"), "-O2", "-o", exe, src], check=True)

    env = dict(os.environ, SLURM_CONF=os.path.join(SLURM_DIR, "slurm.conf"),
               PX_SLURM_DIR=SLURM_DIR)
    up = subprocess.run([SLURM_LOCAL, "up", "--cpus", "64"], env=env, capture_output=True,
                        text=True)
    if up.returncode != 0:
        print(up.stdout + up.stderr, file=sys.stderr)
        return 1

    cmds = {
        "pxrun": lambda n: [os.path.join(BUILD, "bin", "pxrun"), "-n", str(n), exe],
        "srun-pmi2": lambda n: ["srun", "--mpi=pmi2", "-n", str(n), exe],
        "srun-pmix": lambda n: ["srun", "--mpi=pmix", "-n", str(n), exe],
    }
    launchers = [l for l in args.launchers.split(",") if l in cmds]
    nps = [int(x) for x in args.np.split(",")]
    raw = {}
    try:
        for n in nps:
            for rep in range(args.reps):
                for l in launchers:
                    t0 = time.time()
                    p = subprocess.run(cmds[l](n), env=env, capture_output=True, text=True,
                                       timeout=300)
                    dt = time.time() - t0
                    raw.setdefault(l, {}).setdefault(str(n), []).append(
                        dt if p.returncode == 0 else None)
                    print("startup: %-9s np=%-3d run %d: %s" % (
                        l, n, rep + 1, "%.3f s" % dt if p.returncode == 0
                        else "FAILED rc=%d %s" % (p.returncode, p.stderr[-300:])),
                        file=sys.stderr)
    finally:
        subprocess.run([SLURM_LOCAL, "down"], env=env, capture_output=True)

    now = datetime.datetime.now()
    path = args.json or os.path.join(HERE, "results",
                                     "startup-%s.json" % now.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"date": now.isoformat(), "nproc": os.cpu_count(), "raw": raw}, f, indent=1)

    print("| ranks | " + " | ".join(launchers) + " |")
    print("|---|" + "---|" * len(launchers))
    for n in nps:
        cells = []
        for l in launchers:
            v = [x for x in raw.get(l, {}).get(str(n), []) if x is not None]
            cells.append("%.3f [%.3f–%.3f]" % (statistics.median(v), min(v), max(v))
                         if v else "failed")
        print("| %d | %s |" % (n, " | ".join(cells)))
    print("\nseconds, median [min–max] of %d; raw: %s" % (args.reps, os.path.relpath(path, ROOT)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
