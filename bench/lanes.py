#!/usr/bin/env python3
"""QoS lanes under congestion, against one lane and the peers, on an emulated fabric.

Brings up a pxfab fabric of two nodes whose rail has one HTB class per lane
class of Plexus (CS5 small and control, high priority; AF41 collectives,
AF21 medium, CS1 bulk and the unmarked rest, low priority, weighted; see
docs/lanes.md), and a background TCP stream node0 -> node1 during every run
but those of the two jobs (unmarked, or --background-dscp; --no-background:
none). Then, interleaved, --reps times each:

  arrival   bench/loops/lanes_arrival: rank 0 sends a 2 KB (4 KB) message every
            --interval µs while it streams 1 MB messages to the same rank 1;
            the gaps between arrivals at rank 1 (their tail is head-of-line
            blocking), with a histogram picture (SVG) per size
  multipair OSU osu_mbw_mr (bandwidth, message rate) and osu_multi_lat,
            --np ranks (half on each node: --np/2 pairs), medium sizes
  alltoall  OSU osu_alltoall, --np ranks, medium sizes
  jobs      two jobs sharing the link: OSU osu_alltoall (2 ranks, the
            protected job) while a Plexus bulk stream (tests/mpi/ft_stream)
            runs as a second job; alone, shared, and shared with the jobs
            segregated (PX_LANE_JOB_CLASS: --protected-class for the
            alltoall, bulk for the stream)

The default --np 2 puts one rank on each core of a 2-core machine: more
ranks oversubscribe the cores and measure the scheduler, not the network.
Configurations (--mpis): plexus-1 (PX_LANES=1), plexus-lanes (PX_LANES=4,
policy class), plexus-dist (PX_LANES=4, policy distribute), mpich, openmpi.
Needs root, the OSU benchmarks built for each MPI (bench/osu/build.sh SRC
all) and no fabric up. A benchmark: prints Markdown tables and never fails a
build. Raw runs go to bench/results/lanes-DATE.json, pictures to --svg-dir.

  python3 bench/lanes.py --reps 3 --svg-dir docs
"""

import argparse
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
BUILD = os.environ.get("PLEXUS_BUILD", os.path.join(ROOT, "build"))
RUN_SH = os.path.join(HERE, "osu", "run.sh")
PXFAB = [sys.executable, "-m", "plexus.fab"]
FAB_ENV = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
RESULTS = os.path.join(HERE, "results")
CACHE = os.path.join(HERE, ".cache", "lanes")
CLASSES = "40:1:high,34:4,18:2,8:1"
CONFIG_ENV = {"plexus-1": ["PX_LANES=1"], "plexus-lanes": ["PX_LANES=4"],
              "plexus-dist": ["PX_LANES=4", "PX_LANE_POLICY=distribute"]}
CC = {"plexus": os.path.join(BUILD, "bin", "mpicc"), "mpich": "mpicc.mpich",
      "openmpi": "mpicc.openmpi"}


def pxfab(*args):
    subprocess.run(PXFAB + [str(a) for a in args], check=True, env=FAB_ENV,
                   stdout=subprocess.DEVNULL)


class Background:
    """An unmarked TCP stream node0 -> node1 (pxfab's probe), for the length of a run."""

    def __init__(self, on, port, dscp=0):
        self.procs = []
        if not on:
            return
        probe = ["-m", "plexus.fab.probe"]
        rx = subprocess.Popen(["ip", "netns", "exec", "node1", sys.executable] + probe +
                              ["tcp-recv", "--port", str(port)], env=FAB_ENV,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        rx.stdout.readline()  # "ready"
        tx = subprocess.Popen(["ip", "netns", "exec", "node0", sys.executable] + probe +
                              ["tcp-send", "10.100.0.2", "--port", str(port), "--time", "3600",
                               "--tos", str(dscp << 2)],
                              env=FAB_ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.procs = [tx, rx]
        time.sleep(1.0)  # past slow start

    def stop(self):
        for p in self.procs:
            p.send_signal(signal.SIGKILL)
            p.wait()


def build_loop(mpi):
    os.makedirs(CACHE, exist_ok=True)
    out = os.path.join(CACHE, "lanes_arrival-" + mpi)
    src = os.path.join(HERE, "loops", "lanes_arrival.c")
    if not os.path.exists(out) or os.path.getmtime(out) < os.path.getmtime(src):
        subprocess.run([CC[mpi], "-O2", "-Wno-stringop-overflow", "-o", out, src], check=True)
    return out


def run(who, prog, args, np_=2, ppn=1, env=(), timeout=45):
    mpi = who.split("-")[0]
    argv = [RUN_SH, "--mpi", mpi, "--np", str(np_), "--timeout", str(timeout), "--nodes",
            "node0,node1", "--rails", "rail0", "--mgmt", "pxf-mgmt"]
    if ppn > 1:
        argv += ["--ppn", str(ppn)]
    own = list(env) if any(e.startswith("PX_LANES=") for e in env) else []
    for e in (own or list(CONFIG_ENV.get(who, [])) + list(env)):
        argv += ["--env", e]
    return subprocess.run(argv + [prog] + [str(a) for a in args], capture_output=True, text=True)


def osu_rows(out):
    """{size: [column values]} from an OSU benchmark's output."""
    r = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 2 and f[0].isdigit():
            try:
                r[int(f[0])] = [float(x) for x in f[1:]]
            except ValueError:
                pass
    return r


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(math.ceil(q * len(xs))) - 1)]


def svg_histogram(path, title, series, interval):
    """Log-binned histogram of gaps (µs), one step line per configuration, log counts."""
    colors = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e"]
    lo, hi = 10.0, max(max(g) for g in series.values()) * 1.05
    nb = 48
    edges = [lo * (hi / lo) ** (i / nb) for i in range(nb + 1)]
    W, H, L, B, T, R = 720, 400, 64, 48, 36, 150
    pw, ph = W - L - R, H - B - T
    maxc = 1
    hists = {}
    for name, g in series.items():
        c = [0] * nb
        for x in g:
            x = min(max(x, lo), hi * 0.9999)
            c[min(nb - 1, int(math.log(x / lo) / math.log(hi / lo) * nb))] += 1
        hists[name] = c
        maxc = max(maxc, max(c))
    ytop = math.log10(maxc) + 0.2

    def X(v):
        return L + pw * math.log(v / lo) / math.log(hi / lo)

    def Y(c):
        return T + ph * (1 - (math.log10(c) if c >= 1 else -0.3) / ytop) if c else T + ph

    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
         f'font-family="sans-serif" font-size="12">',
         f'<rect width="{W}" height="{H}" fill="white"/>',
         f'<text x="{W / 2}" y="20" text-anchor="middle" font-size="14">{title}</text>',
         f'<line x1="{L}" y1="{T + ph}" x2="{L + pw}" y2="{T + ph}" stroke="black"/>',
         f'<line x1="{L}" y1="{T}" x2="{L}" y2="{T + ph}" stroke="black"/>']
    d = 1
    while d <= hi:
        for m in (1, 2, 5):
            v = d * m
            if lo <= v <= hi:
                o.append(f'<line x1="{X(v):.1f}" y1="{T + ph}" x2="{X(v):.1f}" y2="{T + ph + 4}" '
                         f'stroke="black"/><text x="{X(v):.1f}" y="{T + ph + 16}" '
                         f'text-anchor="middle">{v if v < 1000 else f"{v // 1000:g}k"}</text>')
        d *= 10
    o.append(f'<line x1="{X(interval):.1f}" y1="{T}" x2="{X(interval):.1f}" y2="{T + ph}" '
             f'stroke="#999" stroke-dasharray="4 3"/>')
    o.append(f'<text x="{L + pw / 2}" y="{H - 10}" text-anchor="middle">gap between arrivals, '
             f'µs (log); dashed: the sending interval</text>')
    for e in range(0, int(ytop) + 1):
        y = T + ph * (1 - e / ytop)
        o.append(f'<line x1="{L - 4}" y1="{y:.1f}" x2="{L}" y2="{y:.1f}" stroke="black"/>'
                 f'<text x="{L - 6}" y="{y + 4:.1f}" text-anchor="end">{10 ** e}</text>')
    o.append(f'<text x="16" y="{T + ph / 2}" transform="rotate(-90 16 {T + ph / 2})" '
             f'text-anchor="middle">messages (log)</text>')
    for i, (name, c) in enumerate(hists.items()):
        pts = []
        for b in range(nb):
            pts += [f"{X(edges[b]):.1f},{Y(c[b]):.1f}", f"{X(edges[b + 1]):.1f},{Y(c[b]):.1f}"]
        col = colors[i % len(colors)]
        o.append(f'<polyline fill="none" stroke="{col}" stroke-width="1.6" points="{" ".join(pts)}"/>')
        o.append(f'<line x1="{W - R + 12}" y1="{T + 14 + 18 * i}" x2="{W - R + 32}" '
                 f'y2="{T + 14 + 18 * i}" stroke="{col}" stroke-width="2"/>'
                 f'<text x="{W - R + 36}" y="{T + 18 + 18 * i}">{name}</text>')
    o.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--parts", default="arrival,multipair,alltoall,jobs")
    p.add_argument("--mpis", default="plexus-1,plexus-lanes,mpich,openmpi")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--rate", default="500mbit")
    p.add_argument("--classes", default=CLASSES, help="pxfab --lanes")
    p.add_argument("--high-limit", type=int, default=0, help="pxfab --high-limit")
    p.add_argument("--no-background", action="store_true")
    p.add_argument("--background-dscp", type=int, default=0,
                   help="DSCP of the background stream (0: unmarked, the default class)")
    p.add_argument("--small", default="2048,4096")
    p.add_argument("--count", type=int, default=3000)
    p.add_argument("--interval", type=float, default=1000, help="µs between small messages")
    p.add_argument("--bulk", type=int, default=1 << 20)
    p.add_argument("--window", type=int, default=4)
    p.add_argument("--protected-class", default="coll")
    p.add_argument("--svg-dir", default=RESULTS)
    p.add_argument("--osu-iters", default="20")
    p.add_argument("--np", type=int, default=2,
                   help="ranks of the OSU runs, half on each node (2: one per core of a 2-core "
                        "machine; more oversubscribes the cores)")
    p.add_argument("--json", default=os.path.join(RESULTS, "lanes-%s.json" %
                                                  time.strftime("%Y%m%d-%H%M%S")))
    p.add_argument("--report", metavar="JSON",
                   help="print the tables (and draw the pictures in --svg-dir) of an earlier run")
    a = p.parse_args()
    if a.report:
        with open(a.report) as f:
            d = json.load(f)
        meta = argparse.Namespace(**(d["meta"] | {"svg_dir": a.svg_dir}))
        meta.__dict__.setdefault("background_dscp", 0)
        for r in d["runs"]:  # JSON keys are strings; sizes are ints in a live run
            if "rows" in r:
                r["rows"] = {int(k): v for k, v in r["rows"].items()}
        report(meta, d["runs"], meta.mpis.split(","))
        return
    parts = a.parts.split(",")
    whos = a.mpis.split(",")
    os.makedirs(RESULTS, exist_ok=True)
    if subprocess.run(PXFAB + ["status"], env=FAB_ENV, capture_output=True, text=True).stdout \
            .strip().startswith("up"):
        sys.exit("lanes.py: a pxfab fabric is up; bring it down first")
    loops = {w: build_loop(w.split("-")[0]) for w in whos} if "arrival" in parts else {}
    osu = {m: os.path.join(HERE, ".cache", f"osu-{m}", "src", "c", "mpi")
           for m in {w.split("-")[0] for w in whos}}
    pxfab("up", "--nodes", 2, "--rails", 1, "--rate", a.rate, "--lanes", a.classes,
          "--high-limit", a.high_limit)
    runs = []
    meta = vars(a) | {"date": time.strftime("%Y-%m-%d"), "fabric": "2 nodes, 1 rail"}
    port = [9600]

    def save():
        with open(a.json, "w") as f:
            json.dump({"meta": meta, "runs": runs}, f)

    def one(part, who, rep, prog, args, np_=2, ppn=1, env=(), extra=None, background=True):
        port[0] += 1
        bg = Background(background and not a.no_background, port[0], a.background_dscp)
        t0 = time.time()
        try:
            r = run(who, prog, args, np_, ppn, env)
        finally:
            bg.stop()
        rec = {"part": part, "mpi": who, "rep": rep, "rc": r.returncode,
               "seconds": round(time.time() - t0, 1)} | (extra or {})
        if r.returncode:
            rec["stderr"] = r.stderr[-1500:]
            rec["killed_after_timeout"] = r.returncode == 124
        print(f"{part} {who} rep {rep} {extra or ''}: rc {r.returncode} "
              f"({rec['seconds']} s)", file=sys.stderr)
        return r, rec

    try:
        if "arrival" in parts:
            for size in [int(s) for s in a.small.split(",")]:
                for rep in range(a.reps):
                    for who in whos:
                        r, rec = one("arrival", who, rep, loops[who],
                                     [size, a.count, a.interval, a.bulk, a.window],
                                     extra={"size": size})
                        for line in r.stdout.splitlines():
                            if line.startswith("gaps_us"):
                                rec["gaps_us"] = [float(x) for x in line.split()[1:]]
                            elif line.startswith("bulk_mbps"):
                                rec["bulk_mbps"] = float(line.split()[1])
                            elif line.startswith("send_late_us"):
                                rec["send_late_max_us"] = float(line.split()[4])
                        runs.append(rec)
                        save()
        osu_args = ["-i", a.osu_iters, "-x", "5"]
        for part, bench, np_, ppn, args in (
                ("multipair", "pt2pt/standard/osu_mbw_mr", a.np, a.np // 2,
                 ["-m", "2048:131072", "-W", "16"]),
                ("multipair", "pt2pt/standard/osu_multi_lat", a.np, a.np // 2, ["-m", "2048:524288"]),
                ("alltoall", "collective/blocking/osu_alltoall", a.np, a.np // 2,
                 ["-m", "1024:65536"])):
            if part not in parts:
                continue
            for rep in range(a.reps):
                for who in whos:
                    prog = os.path.join(osu[who.split("-")[0]], bench)
                    r, rec = one(part, who, rep, prog, args + osu_args, np_, ppn,
                                 extra={"bench": os.path.basename(bench)})
                    rec["rows"] = osu_rows(r.stdout)
                    runs.append(rec)
                    save()
        if "jobs" in parts:
            stream = os.path.join(BUILD, "tests", "mpi", "ft_stream")
            for rep in range(a.reps):
                for who in [w for w in whos if w in ("plexus-1", "mpich", "openmpi")]:
                    for mode in ("alone", "shared", "segregated"):
                        if mode == "segregated" and not who.startswith("plexus"):
                            continue
                        env_a, env_b = [], ["PX_LANES=1"]
                        if mode == "segregated":
                            env_a = ["PX_LANES=2", f"PX_LANE_JOB_CLASS={a.protected_class}"]
                            env_b = ["PX_LANES=2", "PX_LANE_JOB_CLASS=bulk"]
                        bjob = None
                        if mode != "alone":
                            bjob = subprocess.Popen(
                                [os.path.join(BUILD, "bin", "pxrun"), "--launcher",
                                 "ip netns exec {host}", "--hosts", "node0:1,node1:1",
                                 "--bootstrap-iface", "pxf-mgmt", "--timeout", "900"] +
                                sum((["--env", e] for e in ["PX_NET=tcp"] + env_b), []) +
                                [stream, "--seconds", "600", "--sizes", "1m"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                            time.sleep(2)
                        try:
                            prog = os.path.join(osu[who.split("-")[0]],
                                                "collective/blocking/osu_alltoall")
                            r, rec = one("jobs", who, rep, prog,
                                         ["-m", "4096:65536"] + osu_args, 2, 1,
                                         env=env_a if who.startswith("plexus") else (),
                                         extra={"mode": mode}, background=False)
                        finally:
                            if bjob:
                                bjob.kill()
                                bjob.wait()
                        rec["rows"] = osu_rows(r.stdout)
                        runs.append(rec)
                        save()
    finally:
        subprocess.run(PXFAB + ["down"], env=FAB_ENV, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    save()
    report(a, runs, whos)
    print(f"\nruns: {a.json}")


def report(a, runs, whos):
    bg = "" if a.no_background else (f", a TCP stream of DSCP {a.background_dscp} alongside"
                                     if a.background_dscp else ", an unmarked TCP stream alongside")
    # MPICH (ch4:ucx) may hang in MPI_Finalize after printing everything while
    # other traffic loads the link; such a run is killed but its figures stand
    ok = [r for r in runs if r["rc"] == 0 or (r["rc"] == 124 and (r.get("rows") or r.get("gaps_us")))]
    for size in sorted({r["size"] for r in ok if r["part"] == "arrival"}):
        print(f"\n### Gaps between {size}-byte arrivals: one every {a.interval:g} µs, with 1 MB "
              f"messages streamed to the same rank{bg}; link {a.rate}; {a.reps} runs pooled, µs\n")
        print("| | median | p99 | p99.9 | max | max / one lane | bulk Mbit/s | sender late, max |")
        print("|---|---|---|---|---|---|---|---|")
        series = {}
        for who in whos:
            gaps = [g for r in ok if r["part"] == "arrival" and r["size"] == size
                    and r["mpi"] == who for g in r.get("gaps_us", [])]
            if not gaps:
                continue
            series[who] = gaps
        base = max(series["plexus-1"]) if "plexus-1" in series else None
        for who, gaps in series.items():
            bw = statistics.median(r["bulk_mbps"] for r in ok if r["part"] == "arrival"
                                   and r["size"] == size and r["mpi"] == who and "bulk_mbps" in r)
            late = [r["send_late_max_us"] for r in ok if r["part"] == "arrival" and r["size"] == size
                    and r["mpi"] == who and "send_late_max_us" in r]
            late_s = f"{max(late):.0f}" if late else "–"
            print(f"| {who} | {pct(gaps, .5):.0f} | {pct(gaps, .99):.0f} | {pct(gaps, .999):.0f} | "
                  f"{max(gaps):.0f} | {max(gaps) / base if base else float('nan'):.2f} | {bw:.0f} | "
                  f"{late_s} |")
        if series:
            busy = "" if a.no_background else "-bg"
            path = os.path.join(a.svg_dir, f"lanes-arrival-{size // 1024}k{busy}.svg")
            svg_histogram(path, f"Gaps between {size // 1024} KB arrivals, 1 MB stream to the same "
                          f"rank{'' if a.no_background else ' and a TCP stream'} ({a.rate})",
                          series, a.interval)
            print(f"\npicture: {path}")

    def table(part, bench, col, title, unit, higher_better, mode=None):
        rs = [r for r in ok if r["part"] == part and r.get("bench", "osu_alltoall") == bench
              and (mode is None or r.get("mode") == mode)]
        if not rs:
            return
        print(f"\n### {title}{bg}; link {a.rate}; median of {a.reps}, {unit}\n")
        cols = [w for w in whos if any(r["mpi"] == w for r in rs)]
        print("| size | " + " | ".join(cols) + " | lanes / one lane | lanes / better peer |")
        print("|---" * (len(cols) + 3) + "|")
        sizes = sorted({s for r in rs for s in r["rows"]})
        for s in sizes:
            med = {}
            for w in cols:
                v = [r["rows"][s][col] for r in rs if r["mpi"] == w and s in r["rows"]]
                if v:
                    med[w] = statistics.median(v)
            ln, one = med.get("plexus-lanes"), med.get("plexus-1")
            peers = [med[w] for w in ("mpich", "openmpi") if w in med]
            best = (max if higher_better else min)(peers) if peers else None
            row = [f"{med[w]:.1f}" if w in med else "–" for w in cols]
            r1 = f"{ln / one:.2f}" if ln and one else "–"
            r2 = f"{ln / best:.2f}" if ln and best else "–"
            print(f"| {s} | " + " | ".join(row) + f" | {r1} | {r2} |")

    table("multipair", "osu_mbw_mr", 0, f"Bandwidth (osu_mbw_mr, window 16), {a.np // 2} pair(s) across 2 nodes", "MB/s", True)
    table("multipair", "osu_mbw_mr", 1, f"Message rate (osu_mbw_mr), {a.np // 2} pair(s) across 2 nodes",
          "messages/s", True)
    table("multipair", "osu_multi_lat", 0, f"Latency (osu_multi_lat), {a.np // 2} pair(s) across 2 nodes", "µs", False)
    table("alltoall", "osu_alltoall", 0, f"Alltoall, {a.np} ranks on 2 nodes", "µs", False)
    rs = [r for r in ok if r["part"] == "jobs"]
    if rs:
        print(f"\n### Two jobs: a 2-rank alltoall while a second job streams 1 MB messages over "
              f"the same link; link {a.rate}; median of {a.reps}, µs\n")
        keys = [(w, m) for w in whos for m in ("alone", "shared", "segregated")
                if any(r["mpi"] == w and r["mode"] == m for r in rs)]
        print("| size | " + " | ".join(f"{w} {m}" for w, m in keys) +
              " | segregated / shared (Plexus) |")
        print("|---" * (len(keys) + 2) + "|")
        sizes = sorted({s for r in rs for s in r["rows"]})
        for s in sizes:
            med = {}
            for k in keys:
                v = [r["rows"][s][0] for r in rs if (r["mpi"], r["mode"]) == k and s in r["rows"]]
                if v:
                    med[k] = statistics.median(v)
            seg, sh = med.get(("plexus-1", "segregated")), med.get(("plexus-1", "shared"))
            print(f"| {s} | " + " | ".join(f"{med[k]:.0f}" if k in med else "–" for k in keys) +
                  (f" | {seg / sh:.2f} |" if seg and sh else " | – |"))


if __name__ == "__main__":
    main()
