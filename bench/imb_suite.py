#!/usr/bin/env python3
"""Intel MPI Benchmarks (IMB) in its checking build, against Plexus and, in
the same run, Debian's MPICH and Open MPI.

IMB built with -DCHECK fills every buffer with values that depend on the
rank, the iteration and the position, and after each benchmark compares
what arrived with what should have: each row of its tables then ends with a
"defects" column (0 when every byte was right). So one run measures two
things side by side: whether every benchmark of IMB-MPI1, IMB-NBC, IMB-RMA,
IMB-MPI4 (persistent collectives), IMB-RMA, IMB-EXT and IMB-IO runs and
delivers the right data under each MPI, and how long each row took. Each
benchmark runs as a job of its own (one that crashes or hangs takes no other
with it); the summary gives, per binary and rank count, how many benchmarks
passed under each MPI and the geometric mean, over the benchmarks all of them
passed and their message sizes, of the first MPI's time over each other's.
IMB-IO runs on tmpfs (--io-dir, /dev/shm by default), and its nonblocking
rows count by t_pure: their t_ovrl adds about a millisecond of computation
whose speed IMB measures once per job, which moves by a third from job to
job and would decide their ratios.

A measurement, not a CI test (CI cannot fetch IMB). The user points --imb-src
at a tree of github.com/intel/mpi-benchmarks (the folder holding src_c):

    bench/imb_suite.py --imb-src /tmp/imb --mpi plexus,mpich,openmpi --np 2,4

Each MPI's binaries are built with its own mpicc from a copy of src_c under
--work (git-ignored, bench/.cache/imb by default); nothing from IMB enters
this repository. Raw results go to bench/results/imb-DATE.json.
"""
import argparse
import datetime
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("PLEXUS_BUILD", REPO / "build"))

MPIS = {
    "plexus": {"cc": str(BUILD / "bin/mpicc"), "run": [str(BUILD / "bin/pxrun"), "-n"],
               "env": {}},
    "mpich": {"cc": "mpicc.mpich", "run": ["mpiexec.mpich", "-n"], "env": {}},
    "openmpi": {"cc": "mpicc.openmpi", "run": ["mpirun.openmpi", "--oversubscribe", "-n"],
                "env": {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}},
}
TARGETS = ["MPI1", "NBC", "MPI4", "RMA", "EXT", "IO"]
ROW = re.compile(r"^\s*\d+(\s+[-+0-9.eE]+)+\s*$")


def build(mpi, src, work, targets):
    """Builds IMB-<target> for each target with mpi's mpicc: {target: path}."""
    tree = work / mpi / "src_c"
    if not tree.exists():
        shutil.copytree(src / "src_c", tree)
    made = {}
    for t in targets:
        exe = tree / f"IMB-{t}"
        if not exe.exists():
            p = subprocess.run(["make", "-s", "-j2", f"TARGET={t}", f"CC={MPIS[mpi]['cc']}",
                                "CFLAGS=-O2 -DCHECK -Wno-deprecated-declarations"],
                               cwd=tree, capture_output=True, text=True)
            if p.returncode != 0:
                print(f"  {mpi}: IMB-{t} did not build:\n{p.stdout[-1500:]}{p.stderr[-1500:]}")
                continue
        made[t] = exe
    return made


def parse(out, pure=False):
    """The benchmarks IMB printed: [{name, rows, defects, max_defect, times}]
    with times the timing column of each row: t_avg or t[usec], for
    nonblocking rows t_ovrl (the operation with computation it may overlap),
    or with pure their t_pure (the operation alone)."""
    benches, cur = [], None
    for line in out.splitlines():
        m = re.match(r"# Benchmarking (?:Multi-)?(\S+)", line)
        if m:
            cur = {"name": m.group(1), "rows": 0, "defects": None, "max_defect": 0.0,
                   "cols": None, "times": {}}
            benches.append(cur)
            continue
        if cur is None:
            continue
        if line.strip().startswith("#bytes") or line.strip().startswith("#repetitions"):
            cur["cols"] = line.split()
            continue
        if ROW.match(line) and cur["cols"]:
            vals = line.split()
            cur["rows"] += 1
            if cur["cols"][-1] == "defects" and len(vals) == len(cur["cols"]):
                cur["defects"] = True
                cur["max_defect"] = max(cur["max_defect"], abs(float(vals[-1])))
            names = ("t_avg[usec]", "t[usec]", "t_pure[usec]" if pure else "t_ovrl[usec]")
            tcol = next((i for i, c in enumerate(cur["cols"]) if c in names), None)
            if tcol is not None and tcol < len(vals):
                size = vals[0] if cur["cols"][0] == "#bytes" else "0"
                cur["times"][size] = float(vals[tcol])
    return benches


def bench_names(src, target):
    """Every benchmark of IMB-<target> (its ALLC list) in IMB's order."""
    text = (src / "src_c" / f"IMB_bnames_{target.lower()}.h").read_text()
    block = re.search(r"char \*ALLC\[\]\s*=\s*\{(.*?)\};", text, re.S).group(1)
    return re.findall(r'"(\w+)"', block)


def run(mpi, exe, np_, name, opts):
    """One benchmark of one binary at np_ ranks."""
    cfg = MPIS[mpi]
    argv = cfg["run"] + [str(np_), str(exe), name, "-npmin", str(np_), "-msglog", opts.msglog,
                         "-iter", str(opts.iter), "-time", "5", "-mem", "1"]
    env = dict(os.environ, **cfg["env"])
    io = exe.name == "IMB-IO"
    cwd = (opts.io_dir / f"px-imb-{mpi}-{np_}") if io else exe.parent / f"run-{np_}"
    cwd.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, timeout=opts.timeout,
                           start_new_session=True)
        out, rc = (p.stdout + p.stderr).decode(errors="replace"), p.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = (e.stdout or b"").decode(errors="replace"), None
        subprocess.run(["pkill", "-KILL", "-f", str(exe)], check=False)
    secs = round(time.monotonic() - t0, 2)
    if io:
        shutil.rmtree(cwd, ignore_errors=True)
    benches = [b for b in parse(out, pure=io) if b["name"] == name]
    rows = benches[0]["rows"] if benches else 0
    defect = max((b["max_defect"] for b in benches), default=0.0)
    ended = "# All processes entering MPI_Finalize" in out
    status = ("timeout" if rc is None else "defects" if defect > 0 or "Got invalid buffer" in out
              else "passed" if rc == 0 and ended and rows else "failed")
    return {"mpi": mpi, "np": np_, "bench": name, "seconds": secs, "rc": rc, "status": status,
            "rows": rows, "times": benches[0]["times"] if benches else {},
            "tail": out[-1500:] if status != "passed" else ""}


def ratio(a, b):
    """Geometric mean over the sizes both have of a's time over b's."""
    common = [k for k in a if k in b and a[k] > 0 and b[k] > 0]
    if not common:
        return None
    return math.exp(sum(math.log(a[k] / b[k]) for k in common) / len(common))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--imb-src", type=Path, required=True, help="tree holding src_c")
    ap.add_argument("--mpi", default="plexus,mpich,openmpi")
    ap.add_argument("--np", default="2,4")
    ap.add_argument("--targets", default=",".join(TARGETS))
    ap.add_argument("--msglog", default="0:18", help="IMB's -msglog (sizes 2^a..2^b)")
    ap.add_argument("--iter", type=int, default=100, help="IMB's -iter")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per binary and np")
    ap.add_argument("--work", type=Path, default=REPO / "bench/.cache/imb")
    ap.add_argument("--json", type=Path, help="default: bench/results/imb-DATE.json")
    ap.add_argument("--net", help="PX_NET for Plexus (default: its own choice)")
    ap.add_argument("--io-dir", type=Path, default=Path("/dev/shm"),
                    help="where IMB-IO's files go (default: tmpfs, so that the disk's "
                    "write-back does not decide)")
    opts = ap.parse_args()
    opts.work = opts.work.resolve()
    opts.imb_src = opts.imb_src.resolve()
    if not (opts.imb_src / "src_c").is_dir():
        sys.exit(f"{opts.imb_src}/src_c: not an IMB tree")
    if opts.net:
        MPIS["plexus"]["env"]["PX_NET"] = opts.net
    mpis = opts.mpi.split(",")
    targets = opts.targets.split(",")
    nps = [int(n) for n in opts.np.split(",")]
    opts.work.mkdir(parents=True, exist_ok=True)
    started = datetime.datetime.now()
    exes = {m: build(m, opts.imb_src, opts.work, targets) for m in mpis}
    results = []
    # one MPI after the other for each benchmark: side by side in one run
    for t in targets:
        for n in nps:
            for name in bench_names(opts.imb_src, t):
                line = []
                for m in mpis:
                    if t not in exes[m]:
                        r = {"mpi": m, "np": n, "bench": name, "status": "not_built", "times": {}}
                    else:
                        r = run(m, exes[m][t], n, name, opts)
                    r["target"] = t
                    results.append(r)
                    line.append(f"{m} {r['status']}" + (f" {r['seconds']:.2f} s" if "seconds" in r
                                                        else ""))
                print(f"IMB-{t:4} np={n} {name:24} " + ", ".join(line), flush=True)
    print("\n| target | np | benchmarks | " + " | ".join(f"{m} passed" for m in mpis) +
          "".join(f" | {mpis[0]}/{m} time" for m in mpis[1:]) + " |")
    print("|---|---|---|" + "---|" * (2 * len(mpis) - 1))
    for t in targets:
        for n in nps:
            rs = [r for r in results if r["target"] == t and r["np"] == n]
            names = list(dict.fromkeys(r["bench"] for r in rs))
            cells = [str(sum(r["status"] == "passed" for r in rs if r["mpi"] == m)) for m in mpis]
            for m in mpis[1:]:
                rats = []
                for b in names:
                    x = next(r for r in rs if r["bench"] == b and r["mpi"] == mpis[0])
                    y = next(r for r in rs if r["bench"] == b and r["mpi"] == m)
                    if x["status"] == y["status"] == "passed":
                        q = ratio(x["times"], y["times"])
                        if q:
                            rats.append(q)
                cells.append(f"{math.exp(sum(map(math.log, rats)) / len(rats)):.2f} "
                             f"({len(rats)})" if rats else "-")
            print(f"| IMB-{t} | {n} | {len(names)} | " + " | ".join(cells) + " |")
    for r in results:
        if r["status"] not in ("passed", "not_built"):
            print(f"\n--- IMB-{r['target']} {r['bench']} np={r['np']} {r['mpi']}: {r['status']}\n"
                  + r["tail"][-600:])
    out = opts.json or REPO / f"bench/results/imb-{started:%Y%m%d-%H%M%S}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"started": started.isoformat(timespec="seconds"),
                               "argv": sys.argv, "results": results}, indent=1))
    print(f"\nresults: {out}")


if __name__ == "__main__":
    main()
