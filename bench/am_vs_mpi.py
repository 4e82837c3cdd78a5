#!/usr/bin/env python3
"""MPI against the layer below it, and how each library waits (docs/vibe.md).

Two ranks on this machine, over shared memory and over TCP or datagrams on
the loopback, runs in turn, REPS times:

  layers   Plexus's osu_latency and osu_bw (OSU 7.4 built with Plexus's
           mpicc, bench/osu/build.sh) against pxperf's transfer-size rows,
           the same sizes over the active-message layer MPI is built on
           (latency: half a round trip; bandwidth: a window of 64 messages,
           osu_bw with 100 windows at every size):
           MPI's latency over the layer's, and its bandwidth over the
           layer's, at 4 bytes and from 64 KB on.
  waiting  bench/loops/idle_wait (4-byte latency and its CPU use, the CPU a
           rank burns while it waits IDLE seconds for a message, and the
           cost of waking up) for Plexus in each PX_PROGRESS_MODE, MPICH
           (UCX; it has no blocking mode) and Open MPI, polling and with
           mpi_yield_when_idle.
  threads  OSU's osu_latency_mt at 8 bytes with 1, 4 and 8 thread pairs
           (MPI_THREAD_MULTIPLE) over shared memory, in the same ways of
           waiting: one thread of a process sleeping in the kernel for all;
           then Plexus with its threads free to move (PX_BIND=none; by
           default a rank's threads run on its share of the CPUs) and MPICH
           with them bound to the rank's core (mpiexec -bind-to core; Open
           MPI's mpirun binds two ranks to cores by default).

Prints Markdown tables (medians of the repetitions; for the layers, MPI/layer
as the median of the ratios within each repetition, with the lowest and
highest, since the machine's speed moves between runs) and writes every run as
JSON to --json (default bench/results/am-vs-mpi-DATE.json). A benchmark:
prints figures, never fails a build.

  python3 bench/am_vs_mpi.py --reps 3
  python3 bench/am_vs_mpi.py --parts waiting --nets shm,tcp
  python3 bench/am_vs_mpi.py --parts threads
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
RUN_SH = os.path.join(HERE, "osu", "run.sh")
RESULTS = os.path.join(HERE, "results")
CACHE = os.path.join(HERE, ".cache", "am-vs-mpi")
IDLE_SRC = os.path.join(HERE, "loops", "idle_wait.c")
THREAD_PAIRS = (1, 4, 8)
LAYER_SIZES = [4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def run(argv, env=None, limit=600):
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=limit, cwd=ROOT,
                           env=env)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return None, ""


def osu_table(out):
    """{size: value} from an OSU benchmark's output."""
    vals = {}
    for line in out.splitlines():
        m = re.match(r"^\s*(\d+)\s+([\d.]+)\s*$", line)
        if m:
            vals[int(m.group(1))] = float(m.group(2))
    return vals


def pxperf(build, net):
    """pxperf's transfer-size rows over PX_NET=net: {size: (latency_us, MB/s)}."""
    path = os.path.join(CACHE, f"pxperf-{net.replace(',', '+')}.json")
    os.makedirs(CACHE, exist_ok=True)
    rc, out = run([os.path.join(build, "bin", "pxrun"), "-n", "2", "--env", "PX_NET=" + net,
                   "--env", "PX_PROGRESS_MODE=spin", os.path.join(build, "bin", "pxperf"),
                   "--json", path])
    if rc != 0:
        log(f"pxperf over {net} failed ({rc}): {out[-400:]}")
        return None
    with open(path) as f:
        doc = json.load(f)
    rows = {}
    for row in doc.get("varied", {}).get("transfer_size", []):
        size = int(row["value"])
        lat, bw = rows.get(size, (None, None))
        if row["metric"] == "latency_us":
            lat = row["result"]
        elif row["metric"] == "bandwidth_mbs":
            bw = row["result"]
        rows[size] = (lat, bw)
    return rows


def osu(mpi, net, bench, osu_dir, env=(), args=(), no_finalize=False, launcher_env=()):
    argv = [RUN_SH, "--mpi", mpi, "--net", net]
    if osu_dir:
        argv += ["--osu-dir", osu_dir]
    for e in env:
        argv += ["--env", e]
    lenv = dict(os.environ, **dict(e.split("=", 1) for e in launcher_env)) if launcher_env else None
    rc, out = run(argv + [bench] + list(args), env=lenv)
    table = osu_table(out)
    # OSU 7.4's osu_latency_mt returns from main without MPI_Finalize, which
    # pxrun and Open MPI's mpirun report: its figure counts all the same
    if rc != 0 and not (no_finalize and rc is not None and table):
        log(f"{bench} ({mpi}, {net}) failed ({rc}): {out[-400:]}")
        return None
    return table


def idle_prog(mpi, build):
    os.makedirs(CACHE, exist_ok=True)
    cc = {"plexus": os.path.join(build, "bin", "mpicc"), "mpich": "mpicc.mpich",
          "openmpi": "mpicc.openmpi"}[mpi]
    exe = os.path.join(CACHE, "idle_wait-" + mpi)
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(IDLE_SRC) or \
            (mpi == "plexus" and os.path.getmtime(exe) < os.path.getmtime(cc)):
        subprocess.run([cc, "-O2", "-std=c11", "-D_POSIX_C_SOURCE=200809L", IDLE_SRC, "-o", exe],
                       check=True)
    return exe


def idle_wait(mpi, net, exe, idle, env=()):
    argv = [RUN_SH, "--mpi", mpi, "--net", net]
    for e in env:
        argv += ["--env", e]
    rc, out = run(argv + [exe, str(idle)])
    for line in out.splitlines():
        if line.startswith("{"):
            return json.loads(line)
    log(f"idle_wait ({mpi}, {net}, {' '.join(env)}) failed ({rc}): {out[-400:]}")
    return None


def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def fmt(v, digits=2):
    return "–" if v is None else "%.*f" % (digits, v)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parts", default="layers,waiting,threads")
    ap.add_argument("--nets", default="shm,tcp,udp", help="shm, tcp, udp (layers; waiting "
                    "runs shm and tcp, the peers having no datagram transport)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--idle", type=float, default=1.0, help="seconds of each idle wait")
    ap.add_argument("--plexus-build", default=os.environ.get("PX_BUILD_DIR",
                                                             os.path.join(ROOT, "build")))
    ap.add_argument("--osu-dir", help="Plexus's OSU build (default: run.sh's)")
    ap.add_argument("--json")
    args = ap.parse_args()
    build = os.path.abspath(args.plexus_build)
    os.environ["PLEXUS_BUILD"] = build
    nets = args.nets.split(",")
    parts = args.parts.split(",")
    stamp = time.strftime("%Y-%m-%d %H:%M")
    runs = []
    lines = []

    if "layers" in parts:
        pnet = {"shm": "shm,tcp", "tcp": "tcp", "udp": "udp"}
        raw = {}
        for rep in range(args.reps):
            for net in nets:
                log(f"layers rep {rep + 1}: {net}")
                px = pxperf(build, pnet[net])
                lat = osu("plexus", net, "osu_latency", args.osu_dir,
                          env=("PX_PROGRESS_MODE=spin",))
                # OSU's default for large messages is 20 windows (72 MB at 64 KB),
                # which over tcp spread by 2x from run to run; 100 windows
                # move about what pxperf moves per size (256 MB)
                bw = osu("plexus", net, "osu_bw", args.osu_dir, env=("PX_PROGRESS_MODE=spin",),
                         args=("-i", "100", "-x", "10"))
                runs.append({"part": "layers", "net": net, "rep": rep, "pxperf": px,
                             "osu_latency": lat, "osu_bw": bw})
                for s in LAYER_SIZES:
                    d = raw.setdefault((net, s), {"al": [], "ab": [], "ml": [], "mb": [],
                                                  "rl": [], "rb": []})
                    if px and s in px:
                        d["al"].append(px[s][0])
                        d["ab"].append(px[s][1])
                    if lat and s in lat:
                        d["ml"].append(lat[s])
                    if bw and s in bw:
                        d["mb"].append(bw[s])
                    # the ratio within one repetition: its runs follow one
                    # another and share the machine's state of the moment
                    if px and s in px and lat and s in lat and px[s][0]:
                        d["rl"].append(lat[s] / px[s][0])
                    if px and s in px and bw and s in bw and px[s][1]:
                        d["rb"].append(bw[s] / px[s][1])
        lines += [f"MPI (OSU) against the active-message layer (pxperf), {stamp}; medians of "
                  f"{args.reps} runs in turn, PX_PROGRESS_MODE=spin; MPI/layer: the median of "
                  "the ratios within each repetition [lowest–highest].", "",
                  "| net | bytes | layer µs | MPI µs | MPI/layer | layer MB/s | MPI MB/s "
                  "| MPI/layer |", "|---|---|---|---|---|---|---|---|"]

        def ratios(v):
            return f"{fmt(med(v))} [{fmt(min(v))}–{fmt(max(v))}]" if v else "–"

        for net in nets:
            for s in LAYER_SIZES:
                d = raw.get((net, s))
                if not d:
                    continue
                al, ml, ab, mb = med(d["al"]), med(d["ml"]), med(d["ab"]), med(d["mb"])
                lines.append(f"| {net} | {s} | {fmt(al)} | {fmt(ml)} | {ratios(d['rl'])} "
                             f"| {fmt(ab, 0)} | {fmt(mb, 0)} | {ratios(d['rb'])} |")
        lines.append("")

    if "threads" in parts:
        # 8-byte osu_latency_mt, N thread pairs each a ping-pong between the
        # two ranks with its own tag, in each way of waiting
        # (mpi, label, rank environment, launcher environment)
        configs = []
        for mode in ("auto", "spin", "block", "sleep"):
            configs.append(("plexus", f"Plexus {mode}", (f"PX_PROGRESS_MODE={mode}",), ()))
        configs.append(("mpich", "MPICH", (), ()))
        configs.append(("openmpi", "Open MPI", (), ()))
        configs.append(("openmpi", "Open MPI yield", ("OMPI_MCA_mpi_yield_when_idle=1",), ()))
        for mode in ("auto", "block"):
            configs.append(("plexus", f"Plexus {mode}, threads free to move",
                            (f"PX_PROGRESS_MODE={mode}", "PX_BIND=none"), ()))
        configs.append(("mpich", "MPICH, bound to cores", (), ("HYDRA_BINDING=core",)))
        res = {}
        for rep in range(args.reps):
            for n in THREAD_PAIRS:
                for mpi, label, env, lenv in configs:
                    log(f"threads rep {rep + 1}: {label}, {n} pair(s)")
                    t = osu(mpi, "shm", "osu_latency_mt", args.osu_dir if mpi == "plexus" else None,
                            env=env, args=("-m", "8:8", "-i", str(8000 // n), "-x",
                                           str(800 // n), "-t", f"{n}:{n}"), no_finalize=True,
                            launcher_env=lenv)
                    v = t.get(8) if t else None
                    runs.append({"part": "threads", "mpi": mpi, "label": label,
                                 "env": list(env) + list(lenv), "pairs": n, "rep": rep,
                                 "latency_us": v})
                    res.setdefault((label, n), []).append(v)
        lines += [f"8-byte latency with threads (osu_latency_mt, shared memory), {stamp}; "
                  f"medians of {args.reps} runs in turn, [min–max].", "",
                  "| library, mode | " + " | ".join(f"{n} pair{'s' if n > 1 else ''} µs"
                                                    for n in THREAD_PAIRS) + " |",
                  "|---|" + "---|" * len(THREAD_PAIRS)]
        for _, label, _, _ in configs:
            cells = []
            for n in THREAD_PAIRS:
                vs = [v for v in res.get((label, n), []) if v is not None]
                cells.append("–" if not vs else
                             f"{fmt(med(vs))} [{fmt(min(vs))}–{fmt(max(vs))}]")
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines.append("")

    if "waiting" in parts:
        configs = []
        for net in [n for n in nets if n in ("shm", "tcp")]:
            for mode in ("spin", "block", "sleep"):
                configs.append(("plexus", net, f"Plexus {mode}", (f"PX_PROGRESS_MODE={mode}",)))
            configs.append(("mpich", net, "MPICH", ()))
            configs.append(("openmpi", net, "Open MPI", ()))
            configs.append(("openmpi", net, "Open MPI yield",
                            ("OMPI_MCA_mpi_yield_when_idle=1",)))
        exes = {}
        res = {}
        for rep in range(args.reps):
            for mpi, net, label, env in configs:
                if mpi not in exes:
                    exes[mpi] = idle_prog(mpi, build)
                log(f"waiting rep {rep + 1}: {label} over {net}")
                r = idle_wait(mpi, net, exes[mpi], args.idle, env)
                runs.append({"part": "waiting", "mpi": mpi, "net": net, "label": label,
                             "env": list(env), "rep": rep, "result": r})
                res.setdefault((net, label), []).append(r)
        lines += [f"How each library waits, {stamp}; medians of {args.reps} runs in turn; idle "
                  f"waits of {args.idle:g} s.", "",
                  "| net | library, mode | 4 B latency µs | CPU in ping-pong (0, 1) "
                  "| CPU idle-waiting | wake-up µs |", "|---|---|---|---|---|---|"]
        for (net, label), rs in res.items():
            ok = [r for r in rs if r]

            def m(k):
                return med([r[k] for r in ok])
            cpu = "–" if not ok else f"{100 * m('cpu_pingpong'):.0f}%, " \
                f"{100 * m('cpu_pingpong_peer'):.0f}%"
            idle = "–" if not ok else f"{100 * m('idle_cpu'):.1f}%"
            lines.append(f"| {net} | {label} | {fmt(m('latency_us') if ok else None)} | {cpu} "
                         f"| {idle} | {fmt(m('wake_us') if ok else None, 1)} |")
        lines.append("")

    text = "\n".join(lines)
    print(text)
    os.makedirs(RESULTS, exist_ok=True)
    path = args.json or os.path.join(RESULTS, "am-vs-mpi-%s.json" % time.strftime("%Y%m%d-%H%M"))
    with open(path, "w") as f:
        json.dump({"date": stamp, "runs": runs, "table": text}, f, indent=1)
    log(f"am_vs_mpi: raw results in {path}")


if __name__ == "__main__":
    main()
