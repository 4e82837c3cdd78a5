#!/usr/bin/env python3
"""Run OSU Micro-Benchmark cases with Plexus, MPICH and Open MPI side by side.

Each case runs --reps times per MPI, the MPIs interleaved so that drift of the
machine hits all of them alike; medians are reported with their spread, and
ratios Plexus/MPICH and Plexus/Open MPI. Output: a Markdown table with the exact
commands on stdout, and all raw figures as JSON in --json (default
bench/results/compare-DATE.json).

Prerequisites: bench/osu/build.sh OSU_SRC_DIR all. Cases between emulated
nodes need root; they run between pxfab nodes node0 and node1 over rail0. When
no fabric is up, two nodes joined by one rail of --rate are brought up for the
run (tools/pxfab up --nodes 2 --rails 1 --rate RATE) and taken down afterwards;
a fabric that is up already is used as it is.

Benchmarks print figures; they never fail a build. The exit status is non-zero
only when no MPI could run any case.
"""

import argparse
import datetime
import json
import os
import platform
import re
import shlex
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RUN_SH = os.path.join(HERE, "osu", "run.sh")
PXFAB = os.path.join(ROOT, "tools", "pxfab")
CACHE = os.path.join(HERE, ".cache")
RESULTS = os.path.join(HERE, "results")
PLEXUS_BUILD = os.environ.get("PLEXUS_BUILD", os.path.join(ROOT, "build"))

MPIS = {
    "mpich": "MPICH",
    "openmpi": "Open MPI",
    "plexus": "Plexus",
}

NODES = ["node0", "node1"]
RAIL = "rail0"
MGMT = "pxf-mgmt"      # pxfab's management bridge in the root namespace
MGMT_NS_IF = "mgmt"    # and its end inside each node
# Far above what a veth carries on a small machine: the CPU, not the shaper,
# limits the namespace cases unless --rate says otherwise.
UNSHAPED = "100gbit"
OSU_WINDOW = 64  # osu_bw default window (-W)


class Case:
    def __init__(self, key, title, bench, size, unit, higher_better, args,
                 np=2, net="shm", nodes=False, default=True, rx=False, no_finalize=False):
        self.key = key
        self.title = title
        self.bench = bench
        self.size = size
        self.unit = unit
        self.higher_better = higher_better
        self.args = args
        self.np = np
        self.net = net
        self.nodes = nodes
        self.default = default
        self.rx = rx  # the payload comes to rank 0 (gets): its rail's rx bytes are checked
        # the benchmark never calls MPI_Finalize (OSU 7.4's osu_latency_mt):
        # launchers that report that (pxrun, Open MPI's mpirun) end with a
        # non-zero status, and the figure printed before is taken anyway
        self.no_finalize = no_finalize

    def run_args(self, mpi):
        a = [RUN_SH, "--mpi", mpi, "--np", str(self.np), "--timeout", "120"]
        if self.nodes:
            a += ["--nodes", ",".join(NODES), "--rails", RAIL, "--mgmt", MGMT]
        else:
            a += ["--net", self.net]
        return a + [self.bench] + self.args

    def expected_rail_bytes(self):
        """Lower bound of payload bytes rank 0 sends (rx: receives) over the rail."""
        it = int(self.args[self.args.index("-i") + 1])
        wu = int(self.args[self.args.index("-x") + 1])
        if "osu_bw" in self.bench:
            return (it + wu) * OSU_WINDOW * self.size
        return (it + wu) * self.size


def osu_args(size, iters, warmup):
    return ["-m", "%d:%d" % (size, size), "-i", str(iters), "-x", str(warmup)]


CASES = [
    Case("shm_lat", "shared memory, 8 B latency", "pt2pt/osu_latency",
         8, "µs", False, osu_args(8, 20000, 2000)),
    Case("shm_bw", "shared memory, 4 MB bandwidth", "pt2pt/osu_bw",
         4194304, "MB/s", True, osu_args(4194304, 40, 5)),
    Case("ns_lat", "TCP between namespace nodes, 8 B latency", "pt2pt/osu_latency",
         8, "µs", False, osu_args(8, 10000, 1000), nodes=True),
    Case("ns_bw", "TCP between namespace nodes, 4 MB bandwidth", "pt2pt/osu_bw",
         4194304, "MB/s", True, osu_args(4194304, 20, 3), nodes=True),
    Case("allreduce4", "4 ranks on 2 cores, 4 KB allreduce", "collective/osu_allreduce",
         4096, "µs", False, osu_args(4096, 200, 20), np=4),
    # Not in the default set: one node, TCP forced over loopback.
    Case("tcp_lat", "TCP on one node (loopback), 8 B latency", "pt2pt/osu_latency",
         8, "µs", False, osu_args(8, 10000, 1000), net="tcp", default=False),
    Case("tcp_bw", "TCP on one node (loopback), 4 MB bandwidth", "pt2pt/osu_bw",
         4194304, "MB/s", True, osu_args(4194304, 20, 3), net="tcp", default=False),
] + [
    # One-sided (--cases rma): OSU's defaults, MPI_Win_allocate and
    # MPI_Win_flush (osu_put_bibw: post/start/complete/wait); "create": the
    # program's own memory (MPI_Win_create, lock/unlock).
    Case("rma_" + where + key, where_title + title, "one-sided/" + bench, size, unit, hb,
         osu_args(size, it, wu) + extra, nodes=nodes, default=False, rx="get" in bench)
    for where, where_title, nodes in (
        ("", "shared memory, ", False),
        ("ns_", "TCP between namespace nodes, ", True))
    for key, title, bench, size, unit, hb, it, wu, extra in (
        ("put_lat", "put 8 B latency", "osu_put_latency", 8, "µs", False, 20000, 2000, []),
        ("get_lat", "get 8 B latency", "osu_get_latency", 8, "µs", False, 20000, 2000, []),
        ("acc_lat", "accumulate 8 B latency", "osu_acc_latency", 8, "µs", False, 20000, 2000,
         []),
        # MPI_Win_create: with MPI_Win_allocate, OSU 7.4's atomics benchmarks
        # free the window's memory after MPI_Win_free and crash at exit
        ("fop_lat", "fetch-and-op 8 B latency, MPI_Win_create", "osu_fop_latency", 1, "µs",
         False, 20000, 2000, ["-w", "create"]),  # it prints its size as 1
        ("put_lat_create", "put 8 B latency, MPI_Win_create + lock", "osu_put_latency", 8, "µs",
         False, 20000, 2000, ["-w", "create", "-s", "lock"]),
        ("put_lat_64k", "put 64 KB latency", "osu_put_latency", 65536, "µs", False, 2000, 200,
         []),
        ("get_lat_64k", "get 64 KB latency", "osu_get_latency", 65536, "µs", False, 2000, 200,
         []),
        ("put_bw", "put 1 MB bandwidth", "osu_put_bw", 1048576, "MB/s", True, 100, 10, []),
        ("get_bw", "get 1 MB bandwidth", "osu_get_bw", 1048576, "MB/s", True, 100, 10, []),
        ("put_bibw", "put 1 MB bidirectional bandwidth", "osu_put_bibw", 1048576, "MB/s", True,
         100, 10, []),
        ("put_bw_create", "put 1 MB bandwidth, MPI_Win_create + lock", "osu_put_bw", 1048576,
         "MB/s", True, 100, 10, ["-w", "create", "-s", "lock"]),
    )
]
# Small messages over shared memory (--cases small): what each message
# costs beyond its bytes, beside shm_lat.
CASES += [
    Case("shm_lat_1k", "shared memory, 1 KB latency", "pt2pt/osu_latency", 1024, "µs", False,
         osu_args(1024, 20000, 2000), default=False),
] + [
    Case("shm_bw_%s" % name, "shared memory, %s bandwidth" % title, "pt2pt/osu_bw", size, "MB/s",
         True, osu_args(size, 2000, 200), default=False)
    for name, title, size in (("8", "8 B", 8), ("64", "64 B", 64), ("1k", "1 KB", 1024))
]
# Threads (--cases threads): osu_latency_mt with N sender and N receiver
# threads (MPI_THREAD_MULTIPLE), each pair a ping-pong on MPI_COMM_WORLD;
# the 1-thread row beside shm_lat shows what the thread level alone costs.
# OSU 7.4's osu_latency_mt returns from main without MPI_Finalize.
CASES += [
    Case("mt_lat%d" % n, "shared memory, 8 B latency, %d thread pair%s (osu_latency_mt)"
         % (n, "s" if n > 1 else ""), "pt2pt/osu_latency_mt", 8, "µs", False,
         osu_args(8, 20000 // n, 2000 // n) + ["-t", "%d:%d" % (n, n)], default=False,
         no_finalize=True)
    for n in (1, 2, 4)
]
for _c in CASES:  # fewer iterations between nodes: each takes longer
    if _c.nodes and _c.key.startswith("rma_"):
        i = _c.args.index("-i")
        _c.args[i + 1] = str(max(20, int(_c.args[i + 1]) // 4))
        x = _c.args.index("-x")
        _c.args[x + 1] = str(max(2, int(_c.args[x + 1]) // 4))


def rel(path):
    return os.path.relpath(path, ROOT) if path.startswith(ROOT + os.sep) else path


def show_cmd(argv):
    return " ".join(shlex.quote(rel(a)) for a in argv)


def parse_osu(out, size):
    """Value of the row for `size` in OSU's output (second column)."""
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 2 and f[0] == str(size):
            try:
                return float(f[1])
            except ValueError:
                return None
    return None


def run(argv, timeout):
    """Run argv in its own process group; kill the whole group on timeout."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, start_new_session=True, cwd=ROOT)
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        return -9, (out or "") + "\n[compare.py: timed out after %d s]" % timeout
    except BaseException:
        # Interrupted: take the launcher and its ranks down with us.
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()
        raise


def ns_counters():
    """tx/rx byte counters of the rail and management ports of each node."""
    c = {}
    for n in NODES:
        for dev in (RAIL, MGMT_NS_IF):
            for d in ("tx_bytes", "rx_bytes"):
                r = subprocess.run(["ip", "netns", "exec", n, "cat",
                                    "/sys/class/net/%s/statistics/%s" % (dev, d)],
                                   capture_output=True, text=True)
                c["%s/%s/%s" % (n, dev, d)] = int(r.stdout) if r.returncode == 0 else 0
    return c


def ns_exists():
    r = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    names = {line.split()[0] for line in r.stdout.splitlines() if line.strip()}
    return all(n in names for n in NODES)


def fabric_up():
    """A pxfab fabric is up (or half up): bringing up another would replace it."""
    p = subprocess.run([PXFAB, "status", "--json"], capture_output=True, text=True)
    try:
        return p.returncode != 0 or bool(json.loads(p.stdout).get("phase"))
    except ValueError:
        return True


def available_mpis(wanted):
    ok = []
    for m in wanted:
        if m == "plexus" and not os.path.exists(os.path.join(PLEXUS_BUILD, "bin", "mpicc")):
            print("compare: skipping Plexus: %s/bin/mpicc does not exist yet "
                  "(build Plexus, then bench/osu/build.sh OSU_SRC_DIR plexus)." % rel(PLEXUS_BUILD),
                  file=sys.stderr)
            continue
        osu = os.path.join(CACHE, "osu-%s" % m, "src", "c", "mpi", "pt2pt", "standard", "osu_latency")
        if not os.access(osu, os.X_OK):
            print("compare: skipping %s: no OSU build in bench/.cache/osu-%s "
                  "(run bench/osu/build.sh OSU_SRC_DIR %s)." % (MPIS[m], m, m), file=sys.stderr)
            continue
        ok.append(m)
    return ok


def fmt(v):
    if v is None:
        return "–"
    if v >= 100:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    return "%.2f" % v


def summarize(values):
    if not values:
        return None
    med = statistics.median(values)
    return {"median": med, "min": min(values), "max": max(values),
            "spread": (max(values) - min(values)) / med if med else 0.0, "n": len(values)}


def machine():
    def out(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout
        except (OSError, subprocess.TimeoutExpired):
            return ""
    model = ""
    for line in out(["lscpu"]).splitlines():
        if line.startswith("Model name:"):
            model = line.split(":", 1)[1].strip()
    def deb(pkg):
        v = out(["dpkg-query", "-W", "-f=${Version}", pkg]).strip()
        return v or "?"
    mpich_dev = re.search(r"Device:\s+(\S+)", out(["mpichversion"]))
    return {
        "nproc": os.cpu_count(),
        "cpu": model,
        "kernel": platform.release(),
        "os": (open("/etc/debian_version").read().strip()
               if os.path.exists("/etc/debian_version") else platform.platform()),
        "mpich": deb("mpich") + (" (%s)" % mpich_dev.group(1) if mpich_dev else ""),
        "openmpi": deb("openmpi-bin"),
        "ucx": deb("libucx0"),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=5, help="runs per case and MPI (default 5)")
    ap.add_argument("--mpis", default="mpich,openmpi,plexus",
                    help="comma-separated subset of mpich,openmpi,plexus")
    ap.add_argument("--cases", default="",
                    help="comma-separated case keys (default: the default set; 'all' for every case; "
                         "'rma' for the one-sided ones, 'rma_ns' for those between nodes, 'threads' for "
                         "osu_latency_mt with 1, 2 and 4 thread pairs beside shm_lat; 'small' for "
                         "small messages over shared memory)")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    ap.add_argument("--json", default="", help="write raw results here (default bench/results/compare-DATE.json)")
    ap.add_argument("--rate", default=UNSHAPED,
                    help="rate of the rail when the script brings the nodes up (default %s: "
                         "in effect unshaped)" % UNSHAPED)
    args = ap.parse_args()

    if args.list:
        for c in CASES:
            print("%-11s %-8s %s" % (c.key, "default" if c.default else "extra", c.title))
        return 0

    if args.cases == "all":
        cases = list(CASES)
    elif args.cases in ("rma", "rma_ns"):
        cases = [c for c in CASES if c.key.startswith(args.cases + "_")]
    elif args.cases == "small":
        cases = [c for c in CASES if c.key == "shm_lat" or c.key in ("shm_lat_1k", "shm_bw_8",
                                                                     "shm_bw_64", "shm_bw_1k")]
    elif args.cases == "threads":
        cases = [c for c in CASES if c.key == "shm_lat" or c.key.startswith("mt_lat")]
    elif args.cases:
        keys = args.cases.split(",")
        unknown = [k for k in keys if k not in {c.key for c in CASES}]
        if unknown:
            ap.error("unknown case(s): %s (see --list)" % ",".join(unknown))
        cases = [c for c in CASES if c.key in keys]
    else:
        cases = [c for c in CASES if c.default]
    wanted = [m.strip() for m in args.mpis.split(",") if m.strip()]
    for m in wanted:
        if m not in MPIS:
            ap.error("unknown MPI '%s'" % m)
    if args.reps < 1:
        ap.error("--reps must be at least 1")

    mpis = available_mpis(wanted)
    if not mpis:
        print("compare: no MPI to run.", file=sys.stderr)
        return 1

    made_fabric = False
    if any(c.nodes for c in cases):
        if os.geteuid() != 0:
            print("compare: skipping cases between namespace nodes (need root).", file=sys.stderr)
            cases = [c for c in cases if not c.nodes]
        elif ns_exists():
            pass
        elif fabric_up():
            print("compare: skipping cases between namespace nodes: the pxfab fabric that is up "
                  "has no %s ('tools/pxfab down' first)." % " and ".join(NODES), file=sys.stderr)
            cases = [c for c in cases if not c.nodes]
        else:
            r = subprocess.run([PXFAB, "up", "--nodes", str(len(NODES)), "--rails", "1",
                                "--rate", args.rate], capture_output=True, text=True)
            if r.returncode != 0:
                print("compare: could not bring up the nodes:\n" + r.stdout + r.stderr,
                      file=sys.stderr)
                cases = [c for c in cases if not c.nodes]
            else:
                made_fabric = True

    # Take the fabric down even when interrupted.
    def on_signal(signum, _frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_signal)

    # Launcher lines as run.sh expands them, taken while the nodes exist.
    expanded = {}
    for c in cases:
        for m in MPIS:
            argv = c.run_args(m)
            dry = subprocess.run(argv[:1] + ["--dry-run"] + argv[1:], capture_output=True,
                                 text=True, cwd=ROOT)
            if dry.returncode == 0:
                expanded[(c.key, m)] = dry.stdout.strip()

    results = {}
    try:
        for c in cases:
            for m in mpis:
                results[(c.key, m)] = {"values": [], "fails": [], "rail": []}
            for rep in range(args.reps):
                for m in mpis:
                    argv = c.run_args(m)
                    before = ns_counters() if c.nodes else None
                    t0 = time.time()
                    rc, out = run(argv, 180)
                    dt = time.time() - t0
                    v = parse_osu(out, c.size) if rc == 0 or c.no_finalize else None
                    res = results[(c.key, m)]
                    if v is None:
                        res["fails"].append({"rc": rc, "tail": out[-1500:]})
                        status = "FAILED rc=%d" % rc
                    else:
                        res["values"].append(v)
                        status = "%s %s" % (fmt(v), c.unit)
                    if before is not None:
                        after = ns_counters()
                        d = {k: after[k] - before[k] for k in after}
                        res["rail"].append(d)
                    print("compare: %-10s %-8s run %d/%d: %s (%.1f s)"
                          % (c.key, m, rep + 1, args.reps, status, dt), file=sys.stderr)
                    if v is None:
                        print("  " + "\n  ".join(out.strip().splitlines()[-8:]), file=sys.stderr)
    except KeyboardInterrupt:
        print("compare: interrupted; reporting what ran.", file=sys.stderr)
    finally:
        if made_fabric:
            subprocess.run([PXFAB, "down"], capture_output=True)

    # ---- report ----
    info = machine()
    now = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    lines = []
    lines.append("Run %s on %s (%d cores, Linux %s, Debian %s); MPICH %s, Open MPI %s, UCX %s; "
                 "median of %d runs, [min–max] in brackets."
                 % (now, info["cpu"] or "?", info["nproc"], info["kernel"], info["os"],
                    info["mpich"], info["openmpi"], info["ucx"], args.reps))
    lines.append("")
    lines.append("| case | unit | MPICH | Open MPI | Plexus | Plexus/MPICH | Plexus/Open MPI |")
    lines.append("|---|---|---|---|---|---|---|")
    summary = {}
    for c in cases:
        cells = {}
        for m in MPIS:
            if m not in mpis:
                cells[m] = "pending" if m == "plexus" else "not run"
                continue
            r = results.get((c.key, m), {"values": [], "fails": []})
            s = summarize(r["values"])
            summary[(c.key, m)] = s
            if s is None:
                cells[m] = "failed (%d/%d)" % (len(r["fails"]), args.reps) if r["fails"] else "not run"
                continue
            cell = "%s [%s–%s]" % (fmt(s["median"]), fmt(s["min"]), fmt(s["max"]))
            if r["fails"]:
                cell += " (%d failed)" % len(r["fails"])
            elif s["n"] < args.reps:
                cell += " (n=%d)" % s["n"]
            cells[m] = cell
        ratios = []
        px = summary.get((c.key, "plexus"))
        for peer in ("mpich", "openmpi"):
            ps = summary.get((c.key, peer))
            if px and ps and ps["median"]:
                ratios.append("%.2f" % (px["median"] / ps["median"]))
            else:
                ratios.append("–")
        unit = c.unit + (" (higher is better)" if c.higher_better else " (lower is better)")
        lines.append("| %s | %s | %s | %s | %s | %s | %s |"
                     % (c.title, unit, cells["mpich"], cells["openmpi"], cells["plexus"],
                        ratios[0], ratios[1]))

    wide = [(c, m, summary[(c.key, m)]) for c in cases for m in mpis
            if summary.get((c.key, m)) and summary[(c.key, m)]["spread"] > 0.10]
    if wide:
        lines.append("")
        lines.append("Wide spreads (max−min over median above 10%): " + "; ".join(
            "%s %s %.0f%%" % (c.key, MPIS[m], s["spread"] * 100) for c, m, s in wide) + ".")

    ns_cases = [c for c in cases if c.nodes]
    if ns_cases:
        lines.append("")
        lines.append("Traffic check for the namespace cases (bytes counted on the nodes' "
                     "interfaces during each run, median over runs):")
        lines.append("")
        lines.append("| case | MPI | %s tx bytes (%s) | expected payload ≥ | %s tx bytes (%s) | on the rail |"
                     % (RAIL, NODES[0], MGMT_NS_IF, NODES[0]))
        lines.append("|---|---|---|---|---|---|")
        for c in ns_cases:
            for m in mpis:
                r = results.get((c.key, m))
                if not r or not r["rail"]:
                    continue
                rail_tx = statistics.median(
                    d["%s/%s/%s_bytes" % (NODES[0], RAIL, "rx" if c.rx else "tx")] for d in r["rail"])
                mg_tx = statistics.median(d["%s/%s/tx_bytes" % (NODES[0], MGMT_NS_IF)] for d in r["rail"])
                exp = c.expected_rail_bytes()
                lines.append("| %s | %s | %d | %d | %d | %s |"
                             % (c.key, MPIS[m], rail_tx, exp, mg_tx,
                                "yes" if rail_tx >= exp else "NO"))

    lines.append("")
    lines.append("Commands (from the repository root; `bench/osu/run.sh ... --dry-run` prints "
                 "the launcher line it runs):")
    lines.append("")
    for c in cases:
        for m in MPIS:
            lines.append("- %s, %s: `%s`" % (c.key, MPIS[m], show_cmd(c.run_args(m))))
            if expanded.get((c.key, m)):
                lines.append("  - runs: `%s`" % expanded[(c.key, m)])
    print("\n".join(lines))

    path = args.json or os.path.join(
        RESULTS, "compare-%s.json" % datetime.datetime.now().strftime("%Y%m%d-%H%M%S"))
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"machine": info, "reps": args.reps, "date": now,
                   "cases": {c.key: {"title": c.title, "unit": c.unit,
                                     "command": {m: show_cmd(c.run_args(m)) for m in MPIS},
                                     "runs": {m: results.get((c.key, m)) for m in mpis}}
                             for c in cases}}, f, indent=1)
    print("compare: raw results in %s" % rel(path), file=sys.stderr)
    ran = any(summary.get((c.key, m)) for c in cases for m in mpis)
    return 0 if ran else 1


if __name__ == "__main__":
    sys.exit(main())
