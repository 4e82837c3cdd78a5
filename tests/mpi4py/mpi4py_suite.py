#!/usr/bin/env python3
"""mpi4py's own test suite against Plexus, built the way its users build it.

    mpi4py_suite.py --build BUILD setup
        downloads mpi4py's source release from PyPI (once), builds a wheel
        with MPICC=BUILD/bin/mpicc and installs it into a virtual environment
        under BUILD/mpi4py. The wheel is cached (PX_MPI4PY_CACHE, default
        ~/.cache/plexus-mpi4py) under the list of MPI functions libmpi
        exports, since mpi4py's build looks for them, and the library's
        path, which the wheel keeps as its run path: the same library in the
        same place reuses it.
    mpi4py_suite.py --build BUILD run --np N [MODULE...]
        runs mpi4py's test modules (test/main.py; none named: the whole
        suite, spawn tests included) under pxrun -n N; fails on any failure
        or error, and on any skipped test but those ALLOWED_SKIPS lists

Exit 77 (a skipped test for CTest) when PyPI cannot be reached and nothing
was downloaded before.
"""
import argparse
import glob
import hashlib
import os
import re
import subprocess
import sys
import tarfile

VERSION = "4.1.2"
SKIP = 77

# The skips that say nothing of Plexus: optional Python packages not
# installed, tests for another number of ranks, and features beyond MPI-4.0
# (MPI-4.1's MPI_COMM_TYPE_RESOURCE_GUIDED, the fault-tolerance proposal's
# MPIX_Comm_revoke). Any other skip fails the run.
ALLOWED_SKIPS = re.compile(r"(numpy|numba|cupy|cffi|yaml|dill|mpi-world-size[<>]\d+|"
                           r"comm\.size==1|mpi-comm-split_type-resource_guided|"
                           r"mpi-comm_revoke)")


def sh(cmd, **kw):
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, **kw)


def paths(build):
    top = os.path.join(build, "mpi4py")
    return {
        "top": top,
        "venv": os.path.join(top, "venv"),
        "python": os.path.join(top, "venv", "bin", "python"),
        "sdist": os.path.join(top, f"mpi4py-{VERSION}.tar.gz"),
        "src": os.path.join(top, f"mpi4py-{VERSION}"),
        "stamp": os.path.join(top, "venv", "built-against"),
    }


def libmpi_id(build):
    """The MPI functions libmpi exports (what mpi4py's build detects), and
    where the library is: the wheel's extension finds it by the run path
    mpicc gave it, so a wheel built against another build tree (since
    removed) cannot be reused."""
    lib = os.path.join(build, "lib", "libmpi.so")
    out = subprocess.run(["nm", "-D", "--defined-only", lib], stdout=subprocess.PIPE,
                         text=True, check=True).stdout
    names = sorted(x.split()[-1] for x in out.splitlines() if " MPI_" in x or " PMPI_" in x)
    h = hashlib.sha256((VERSION + "\n" + os.path.realpath(lib) + "\n" +
                        "\n".join(names)).encode()).hexdigest()
    return h[:16]


def setup(build):
    p = paths(build)
    os.makedirs(p["top"], exist_ok=True)
    if not os.path.exists(p["sdist"]):
        r = sh([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                "-d", p["top"], f"mpi4py=={VERSION}"])
        if r.returncode != 0 or not os.path.exists(p["sdist"]):
            print(f"SKIP: cannot download mpi4py {VERSION} from PyPI")
            return SKIP
    if not os.path.isdir(p["src"]):
        with tarfile.open(p["sdist"]) as t:
            t.extractall(p["top"])
    key = libmpi_id(build)
    if os.path.exists(p["stamp"]) and open(p["stamp"]).read() == key:
        print(f"mpi4py {VERSION} already installed (libmpi exports {key})")
        return 0
    cache = os.environ.get("PX_MPI4PY_CACHE") or os.path.expanduser("~/.cache/plexus-mpi4py")
    wdir = os.path.join(cache, key)
    wheels = glob.glob(os.path.join(wdir, "mpi4py-*.whl"))
    if not wheels:
        env = dict(os.environ, MPICC=os.path.join(build, "bin", "mpicc"))
        r = sh([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-binary", "mpi4py",
                "-w", wdir, p["sdist"]], env=env)
        wheels = glob.glob(os.path.join(wdir, "mpi4py-*.whl"))
        if r.returncode != 0 or not wheels:
            return r.returncode or 1
    else:
        print(f"mpi4py wheel from the cache: {wheels[0]}")
    if not os.path.exists(p["python"]):
        r = sh([sys.executable, "-m", "venv", p["venv"]])
        if r.returncode != 0:
            return r.returncode
    r = sh([p["python"], "-m", "pip", "install", "--force-reinstall", "--no-deps", wheels[0]])
    if r.returncode != 0:
        return r.returncode
    with open(p["stamp"], "w") as f:
        f.write(key)
    return 0


def run(build, np, modules, timeout):
    p = paths(build)
    if not os.path.exists(p["stamp"]):
        print("SKIP: mpi4py was not built (setup could not download it)")
        return SKIP
    cmd = [os.path.join(build, "bin", "pxrun"), "-n", str(np), "--timeout", str(timeout),
           p["python"], os.path.join(p["src"], "test", "main.py"), "-v"] + modules
    r = sh(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = r.stdout
    sys.stdout.write(out)
    ran = re.findall(r"^Ran (\d+) tests", out, re.M)
    skipped = [r for r in re.findall(r"\.\.\. skipped '([^']*)'", out)
               if not ALLOWED_SKIPS.fullmatch(r)]
    bad = re.findall(r"^(FAIL|ERROR): ", out, re.M)
    ok = r.returncode == 0 and len(ran) == np and not bad and not skipped
    print(f"mpi4py {VERSION} {' '.join(modules) or 'whole suite'} np={np}: "
          f"{'PASS' if ok else 'FAIL'} "
          f"(ranks reporting {len(ran)}, tests {ran[0] if ran else 0}, failures/errors "
          f"{len(bad)}, skipped for Plexus {len(skipped)} {sorted(set(skipped))}, "
          f"exit {r.returncode})")
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("setup")
    rp = sub.add_parser("run")
    rp.add_argument("--np", type=int, required=True)
    rp.add_argument("--timeout", type=int, default=600)
    rp.add_argument("modules", nargs="*")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    if a.cmd == "setup":
        return setup(build)
    return run(build, a.np, a.modules, a.timeout)


if __name__ == "__main__":
    sys.exit(main())
