#!/usr/bin/env python3
"""Streams and latency under random loss: Plexus over its reliable datagrams
and over TCP against MPICH and Open MPI over TCP, on a pxfab fabric of 2
nodes joined by one rail (root).

For each loss rate (percent of the packets dropped each way on node0's
rail; 0 = none) and each library, REPS times in turn:
  - tests/mpi/ft_stream --bytes B --sizes 1m: a checksummed stream of 1 MB
    messages from node0 to node1; the rate over the whole stream and from
    its first 100 MB on (the ramp-up left out);
  - bench/loops/pingpong_pct SIZE N for each of --lat-sizes (8 B and 4 KB):
    one-way latency, median and 99th percentile (4 KB is three datagrams
    at the rail's 1,500-byte MTU).
Each program is built with each library's own compiler wrapper into
bench/.cache/loss/ (Plexus's ft_stream is the build's). Output: one Markdown
table (medians of the repetitions) on stdout and in --out; every run as
JSON in --json (default bench/results/loss-DATE.json). A benchmark: prints
figures, never fails a build.

  sudo bench/loss_stream.py --losses 0,0.1,5 --reps 3
  sudo bench/loss_stream.py --mpis plexus-udp --losses 5 --reps 1
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
import multirail  # noqa: E402  (fab(), osu(): peers launched through bench/osu/run.sh)

CACHE = os.path.join(HERE, ".cache", "loss")
RESULTS = os.path.join(HERE, "results")
FT_SRC = os.path.join(ROOT, "tests", "mpi", "ft_stream.c")
PP_SRC = os.path.join(HERE, "loops", "pingpong_pct.c")
LABEL = {"plexus-udp": "Plexus (datagrams)", "plexus": "Plexus (TCP)", "mpich": "MPICH/UCX (TCP)",
         "openmpi": "Open MPI (TCP)"}
NET = {"plexus-udp": "udp", "plexus": "tcp"}
FIRST = 100 << 20  # the ramp-up left out of the steady rate


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def compiler(mpi, build):
    if mpi in NET:
        return os.path.join(build, "bin", "mpicc")
    return {"mpich": "mpicc.mpich", "openmpi": "mpicc.openmpi"}[mpi]


def build_prog(mpi, src, name, build):
    if mpi in NET and name == "ft_stream":
        return os.path.join(build, "tests", "mpi", "ft_stream")
    os.makedirs(CACHE, exist_ok=True)
    exe = os.path.join(CACHE, "%s-%s" % (name, "plexus" if mpi in NET else mpi))
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(src):
        subprocess.run([compiler(mpi, build), "-O2", "-std=c11", "-D_POSIX_C_SOURCE=200809L", src,
                        "-o", exe], check=True)
    return exe


def command(mpi, exe, args, build):
    if mpi in NET:
        return [os.path.join(build, "bin", "pxrun"), "--hosts", "node0:1,node1:1", "--launcher",
                "ip netns exec {host}", "--bootstrap-iface", "pxf-mgmt", "--timeout", "240",
                "--env", "PX_NET=" + NET[mpi], exe] + [str(a) for a in args]
    return multirail.osu(mpi, exe, [str(a) for a in args], rails="rail0")


def run(argv, limit=300):
    t0 = time.time()
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=limit, cwd=ROOT)
        out, rc = p.stdout + p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) \
            else (e.stdout or ""), None
    verdict = None
    for line in out.splitlines():
        if line.startswith("{"):
            try:
                verdict = json.loads(line)
            except ValueError:
                pass
    return {"rc": rc, "wall_s": time.time() - t0, "json": verdict, "out": out}


def steady_rate(out):
    """MB/s from the first progress line past FIRST bytes to the last one."""
    prog = [(float(t), int(b)) for t, b in re.findall(r"PROG t=([\d.]+) bytes=(\d+)", out)]
    start = next((p for p in prog if p[1] >= FIRST), None)
    if not start or prog[-1][0] <= start[0]:
        return None
    return (prog[-1][1] - start[1]) / (prog[-1][0] - start[0]) / 1e6


def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def fmt(v, digits=1):
    return "–" if v is None else "%.*f" % (digits, v)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mpis", default="plexus-udp,plexus,mpich,openmpi")
    ap.add_argument("--losses", default="0,0.1,5", help="percent, comma-separated")
    ap.add_argument("--bytes", default="300m", help="bytes each stream sends")
    ap.add_argument("--iters", type=int, default=5000, help="round trips of the latency test")
    ap.add_argument("--lat-sizes", default="8,4096", help="bytes of the latency tests, comma-separated")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--rate", default="1gbit")
    ap.add_argument("--plexus-build", default=os.environ.get("PX_BUILD_DIR", os.path.join(ROOT, "build")))
    ap.add_argument("--out")
    ap.add_argument("--json")
    args = ap.parse_args()
    if os.geteuid() != 0:
        log("loss_stream: needs root (pxfab)")
        return 1
    if os.path.exists("/run/pxfab/state.json"):
        log("loss_stream: a pxfab fabric is up; 'pxfab down' first")
        return 1
    build = os.path.abspath(args.plexus_build)
    mpis, exes = [], {}
    for m in [m for m in args.mpis.split(",") if m]:
        try:
            exes[m] = (build_prog(m, FT_SRC, "ft_stream", build),
                       build_prog(m, PP_SRC, "pingpong_pct", build))
            mpis.append(m)
        except (OSError, subprocess.CalledProcessError, KeyError) as e:
            log("loss_stream: skipping %s: %s" % (m, e))
    losses = [float(x) for x in args.losses.split(",") if x]
    sizes = [int(x) for x in args.lat_sizes.split(",") if x]
    runs = []
    multirail.fab("up", "--nodes", "2", "--rails", "1", "--rate", args.rate)
    try:
        for loss in losses:
            multirail.fab("fault", "reset", check=False)
            if loss > 0:
                multirail.fab("fault", "loss", "node0:rail0", "%g" % loss)
            for rep in range(args.reps):
                for m in mpis:
                    ft, pp = exes[m]
                    s = run(command(m, ft, ["--seconds", 0, "--bytes", args.bytes, "--sizes", "1m"],
                                    build))
                    j = s["json"] or {}
                    row = {"mpi": m, "loss": loss, "rep": rep, "stream_ok": bool(j.get("ok")),
                           "rate_MBs": j.get("rate_MBs"), "steady_MBs": steady_rate(s["out"]),
                           "stream_rc": s["rc"], "stream_wall_s": s["wall_s"]}
                    lats = []
                    for size in sizes:
                        lat = run(command(m, pp, [size, args.iters], build))
                        lj = lat["json"] or {}
                        row["lat_%d" % size] = {"median_us": lj.get("median_us"),
                                                "p99_us": lj.get("p99_us"),
                                                "max_us": lj.get("max_us"), "rc": lat["rc"]}
                        lats.append("%d B %s / %s us" % (size, fmt(lj.get("median_us")),
                                                         fmt(lj.get("p99_us"))))
                    if not row["stream_ok"]:
                        row["tail"] = s["out"][-1500:]
                    runs.append(row)
                    log("loss %g%% %s: stream %s MB/s (from 100 MB: %s)%s, %s" % (
                        loss, LABEL[m], fmt(row["rate_MBs"]), fmt(row["steady_MBs"]),
                        "" if row["stream_ok"] else " NOT VERIFIED", ", ".join(lats)))
    finally:
        multirail.fab("fault", "reset", check=False)
        multirail.fab("down", check=False)
    lines = ["Run %s; 2 nodes, one rail of %s (pxfab), loss each way on node0's rail; "
             "medians of %d runs; stream: %s of 1 MB messages, checksummed." % (
                 time.strftime("%Y-%m-%d %H:%M"), args.rate, args.reps, args.bytes), "",
             "| loss | library | stream MB/s | from 100 MB on | %s verified |" % "".join(
                 "%d B median µs | %d B p99 µs | " % (z, z) for z in sizes),
             "|---|---|---|---|%s---|" % ("---|---|" * len(sizes))]
    for loss in losses:
        for m in mpis:
            rs = [r for r in runs if r["mpi"] == m and r["loss"] == loss]
            lat = "".join("%s | %s | " % (fmt(med(r["lat_%d" % z]["median_us"] for r in rs)),
                                          fmt(med(r["lat_%d" % z]["p99_us"] for r in rs)))
                          for z in sizes)
            lines.append("| %g%% | %s | %s | %s | %s%d/%d |" % (
                loss, LABEL[m], fmt(med(r["rate_MBs"] for r in rs)),
                fmt(med(r["steady_MBs"] for r in rs)), lat, sum(r["stream_ok"] for r in rs),
                len(rs)))
    print("\n".join(lines))
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")
    path = args.json or os.path.join(RESULTS, "loss-%s.json" % time.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"args": vars(args), "runs": runs}, f, indent=1)
    log("loss_stream: raw results in " + path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
