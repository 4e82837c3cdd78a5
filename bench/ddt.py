#!/usr/bin/env python3
"""Non-contiguous point-to-point messages against MPICH and Open MPI.

Two ranks on one machine, bench/loops/ddt_pingpong (a vector type of
64-byte blocks, every other one, and the same bytes contiguous for
reference), over shared memory and over TCP on loopback (each MPI told to
use TCP between its ranks, as bench/osu/run.sh --net tcp does). Each MPI in
turn for every case, --reps times.

    python3 bench/ddt.py [--reps 3] [--sizes 1024,65536,1048576,16777216,67108864]
                         [--nets shm,tcp] [--mpis plexus,mpich,openmpi]

Prints a table (medians over the repetitions of each run's median one-way
time, µs), then for messages from 16 MB the most a rank's peak resident
memory grew during a vector ping-pong (MB: the library's buffers for the
message), and writes every run to bench/results/ddt-DATE.json. A
benchmark, not a test.
"""
import argparse, datetime, json, os, re, statistics, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SRC = os.path.join(HERE, "loops", "ddt_pingpong.c")
CACHE = os.path.join(HERE, ".cache", "ddt")
NAMES = {"plexus": "Plexus", "mpich": "MPICH", "openmpi": "Open MPI"}


def iters(size):
    return max(5, min(2000, (256 << 20) // max(size, 1) // 8))


def build(mpi, plexus_build):
    cc = os.path.join(plexus_build, "bin", "mpicc") if mpi == "plexus" else "/usr/bin/mpicc." + mpi
    os.makedirs(CACHE, exist_ok=True)
    exe = os.path.join(CACHE, "ddt_pingpong-" + mpi)
    subprocess.run([cc, "-O2", "-o", exe, SRC], check=True)
    return exe


def command(mpi, net, exe, size, layout, plexus_build):
    args = [exe, str(size), str(iters(size)), layout]
    if mpi == "plexus":
        return [os.path.join(plexus_build, "bin", "pxrun"), "-n", "2", "--timeout", "300",
                "--env", "PX_NET=" + ("shm,tcp" if net == "shm" else "tcp")] + args
    if mpi == "mpich":
        tcp = ["-genv", "MPIR_CVAR_NOLOCAL", "1", "-genv", "UCX_TLS", "tcp,self",
               "-genv", "UCX_NET_DEVICES", "lo"] if net == "tcp" else []
        return ["mpiexec.mpich", "-n", "2"] + tcp + args
    tcp = ["--mca", "pml", "ob1", "--mca", "btl", "tcp,self",
           "--mca", "btl_tcp_if_include", "lo"] if net == "tcp" else []
    return ["mpirun.openmpi", "--allow-run-as-root", "--oversubscribe", "-n", "2"] + tcp + args


def run(cmd):
    env = dict(os.environ, MPIEXEC_TIMEOUT="300")
    try:
        out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             env=env, timeout=400).stdout
    except subprocess.TimeoutExpired:
        return None, "timeout"
    m = re.search(r'\{"bytes".*\}', out)
    if not m:
        return None, out[-300:]
    res = json.loads(m.group(0))
    if res["wrong"]:
        return None, "%d wrong bytes" % res["wrong"]
    return res, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--sizes", default="1024,65536,1048576,16777216,67108864")
    ap.add_argument("--nets", default="shm,tcp")
    ap.add_argument("--mpis", default="plexus,mpich,openmpi")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    opts = ap.parse_args()
    sizes = [int(s) for s in opts.sizes.split(",")]
    nets, mpis = opts.nets.split(","), opts.mpis.split(",")
    exes = {m: build(m, opts.build) for m in mpis}
    runs = []
    for rep in range(opts.reps):
        for net in nets:
            for size in sizes:
                for layout in ("vector", "contig"):
                    for m in mpis:  # each MPI in turn, the same conditions
                        res, err = run(command(m, net, exes[m], size, layout, opts.build))
                        us = res["median_us"] if res else None
                        runs.append({"rep": rep, "mpi": m, "net": net, "bytes": size,
                                     "layout": layout, "median_us": us,
                                     "grew_mb": res.get("grew_mb") if res else None,
                                     "error": err})
                        print(f"  rep {rep} {net} {m} {size} B {layout}: {us} {err or ''}",
                              file=sys.stderr)

    def cell(m, net, size, layout, key="median_us"):
        v = [r[key] for r in runs if r["mpi"] == m and r["net"] == net
             and r["bytes"] == size and r["layout"] == layout and r.get(key) is not None]
        return statistics.median(v) if v else None

    fmt = lambda v: "–" if v is None else (f"{v:.2f}" if v < 100 else f"{v:.0f}")
    ratio = lambda a, b: "–" if a is None or b is None else f"{a / b:.2f}"
    print("| where | bytes | " + " | ".join(NAMES[m] + " vector (contig)" for m in mpis) +
          " | Plexus/MPICH | Plexus/Open MPI |")
    print("|---" * (len(mpis) + 4) + "|")
    for net in nets:
        for size in sizes:
            v = {m: cell(m, net, size, "vector") for m in mpis}
            c = {m: cell(m, net, size, "contig") for m in mpis}
            print(f"| {net} | {size} | " +
                  " | ".join(f"{fmt(v[m])} ({fmt(c[m])})" for m in mpis) +
                  f" | {ratio(v.get('plexus'), v.get('mpich'))}"
                  f" | {ratio(v.get('plexus'), v.get('openmpi'))} |")
    big = [s for s in sizes if s >= 16 << 20]
    if big:
        print("\npeak memory growth of a rank, vector, MB\n")
        print("| where | bytes | " + " | ".join(NAMES[m] for m in mpis) + " |")
        print("|---" * (len(mpis) + 2) + "|")
        for net in nets:
            for size in big:
                g = {m: cell(m, net, size, "vector", "grew_mb") for m in mpis}
                print(f"| {net} | {size} | " +
                      " | ".join("–" if g[m] is None else f"{g[m]:.0f}" for m in mpis) + " |")
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    out = os.path.join(HERE, "results", f"ddt-{datetime.datetime.now():%Y%m%d-%H%M}.json")
    with open(out, "w") as f:
        json.dump({"date": datetime.datetime.now().isoformat(timespec="seconds"),
                   "runs": runs}, f, indent=1)
    print(f"runs: {out}")


if __name__ == "__main__":
    main()
