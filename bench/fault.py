#!/usr/bin/env python3
"""Rail failures under a running job: Plexus against MPICH/UCX, Open MPI and
Open MPI over MPTCP, on a pxfab fabric of 2 nodes x 2 rails (root).

Every library runs the same program, tests/mpi/ft_stream.c (numbered,
checksummed messages of 1 KiB to 4 MiB from node0 to node1, nonblocking
windows, an exchange and an allreduce per epoch; --exchange watched, the
default, tests the window while the exchange is under way so that every
completion is timed), built with its own compiler wrapper
into bench/.cache/fault/. A run streams a fixed number of bytes while a timer
breaks the fabric; each run has a hard time limit and a job still running
then is recorded as hung and killed.

Scenarios (plexus.fab.scenarios, shared with the fault-tolerance tests; the
times here are this script's):
  base  no fault (reference completion time and rate)
  1     node0:rail1 down for good, 5 s in
  2     node0:rail1 down 20 s (3 s to 23 s), then up
  3     node0:rail1 flapping: down/up every second for 30 s from 3 s in
  4     5% random loss on node0:rail1 from 1 s in
  5     both rails of node0 down 10 s (3 s to 13 s), then up
  6     node1 cut off on every rail for good, 3 s in (each library's default
        timeouts; Plexus: PX_PARTITION_TIMEOUT=30)
  7     a 2-leaf 2-spine fat-tree with 2 paths routed by path index (one rail
        per node): the leaf0-spine0 link (path 0) down for good, 3 s in; the
        table shows how much each library sent over each spine
  blackhole  every packet of node0:rail1 dropped for good, 3 s in, the link
        up (a cable pulled where no carrier loss shows: only timeouts tell)
  down5 node0:rail1 down 5 s (3 s to 8 s), then up

Libraries (--mpis): mpich (UCX over tcp on rail0,rail1), openmpi (ob1 + TCP
BTL on rail0,rail1), mptcp (Open MPI on rail0 only, its sockets made MPTCP by
mptcpize, with a subflow endpoint on rail1 in each node; on the fat-tree on
rail0's path-1 address), plexus (pxrun, the build in --plexus-build, over
TCP), plexus-udp (the same over Plexus's reliable datagrams, PX_NET=udp). On the
fat-tree the peers are given rail0, the node's one interface. Peers are launched through bench/osu/run.sh as in
bench/multirail.py.

Output: one Markdown table per scenario (outcome, completion time, longest
stall, rates during and after the fault, lost/dup/corrupt; for scenario 2 also
when rail1 carried traffic again) on stdout and in --out; raw results (every
row with the job's exit, events and ft_stream verdict) as JSON in --json
(default bench/results/fault-DATE.json). Benchmarks print figures; they never
fail a build.

  sudo bench/fault.py --mpis mpich,openmpi,mptcp --out /tmp/fault_peers.md
  sudo bench/fault.py --mpis plexus --plexus-build build
  sudo bench/fault.py --mpis plexus --scenarios 1 --json /tmp/fault1.json
"""

import argparse
import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
import multirail  # noqa: E402  (osu(): peer launch through run.sh on pxfab nodes; fab())
from plexus.fab import cli as fabcli, scenarios  # noqa: E402
from plexus.fab.scenarios import CUT, SPINES  # noqa: E402

CACHE = os.path.join(HERE, ".cache", "fault")
EXCHANGE = ["watched"]  # ft_stream --exchange (--exchange here)
RESULTS = os.path.join(HERE, "results")
SRC = os.path.join(ROOT, "tests", "mpi", "ft_stream.c")
MPTCP_LIB = "/usr/lib/x86_64-linux-gnu/mptcpize/libmptcpwrap.so.0"
CC = {"mpich": "mpicc.mpich", "openmpi": "mpicc.openmpi", "mptcp": "mpicc.openmpi"}
LABEL = {"mpich": "MPICH/UCX", "openmpi": "Open MPI (ob1/tcp)", "mptcp": "Open MPI over MPTCP",
         "plexus": "Plexus", "plexus-udp": "Plexus (datagrams)"}
PLEXUS = {"plexus": "tcp", "plexus-udp": "udp"}
NODE_ADDR = {"node0": 1, "node1": 2}

# bytes each scenario streams; its faults, times and fabric are the shared ones
BYTES = {"base": "3g", "1": "3g", "2": "4g", "3": "4g", "4": "1g", "5": "2g", "6": "4g", "7": "2g",
         "blackhole": "3g", "down5": "3g"}
SCENARIOS = {sc: scenarios.scenario(sc) for sc in BYTES}
PEER_LOST_RE = re.compile(r"rank \d+.*\bunreachable\b|\bunreachable\b.*rank \d+", re.I)
HARD_LIMIT_SLACK = 60   # seconds on top of the scenario's outage and expected run


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def build(mpi, plexus_build):
    if mpi in PLEXUS:
        return os.path.join(plexus_build, "tests", "mpi", "ft_stream")
    return compile_ft(CC[mpi], os.path.join(CACHE, "ft_stream-" +
                                            ("openmpi" if mpi == "mptcp" else mpi)))


def compile_ft(cc, exe):
    """ft_stream.c built with the compiler wrapper cc into exe, unless exe is
    newer than both; exe."""
    os.makedirs(os.path.dirname(exe), exist_ok=True)
    newest = max(os.path.getmtime(SRC), os.path.getmtime(shutil.which(cc) or cc))
    if not os.path.exists(exe) or os.path.getmtime(exe) < newest:
        subprocess.run([cc, "-O2", "-std=c11", "-D_POSIX_C_SOURCE=200809L", SRC, "-o", exe],
                       check=True)
    return exe


def command(mpi, exe, args, plexus_build, fabric="rails"):
    if mpi in PLEXUS:
        a = [os.path.join(plexus_build, "bin", "pxrun"), "--hosts", "node0:1,node1:1",
             "--launcher", "ip netns exec {host}", "--bootstrap-iface", "pxf-mgmt",
             "--timeout", "600", "--env", "PX_NET=" + PLEXUS[mpi]]
        return a + [exe] + args
    if mpi == "mptcp":
        return multirail.osu("openmpi", exe, args, rails="rail0", env=["LD_PRELOAD=" + MPTCP_LIB])
    return multirail.osu(mpi, exe, args, rails="rail0,rail1" if fabric == "rails" else "rail0")


def mptcp_setup(on, fabric="rails"):
    """A subflow endpoint on the second rail (two-rail fabric) or on rail0's
    path-1 address (fat-tree) in each node."""
    for node, i in NODE_ADDR.items():
        ex = ["ip", "netns", "exec", node]
        subprocess.run(ex + ["ip", "mptcp", "endpoint", "flush"], check=False)
        if on:
            addr, dev = ("10.101.0.%d" % i, "rail1") if fabric == "rails" else \
                ("10.100.1.%d" % i, "rail0")
            subprocess.run(ex + ["sysctl", "-qw", "net.mptcp.enabled=1"], check=True)
            subprocess.run(ex + ["ip", "mptcp", "limits", "set", "subflow", "4",
                                 "add_addr_accepted", "4"], check=True)
            subprocess.run(ex + ["ip", "mptcp", "endpoint", "add", addr, "dev", dev,
                                 "subflow", "signal"], check=True)


def kill_leftovers(exe):
    """Ranks of this run that outlived their launcher (our own binary, by pid)."""
    p = subprocess.run(["pgrep", "-f", "^" + re.escape(exe) + "( |$)"], capture_output=True, text=True)
    for pid in p.stdout.split():
        try:
            os.kill(int(pid), signal.SIGKILL)
            log("    killed leftover rank pid %s" % pid)
        except (ProcessLookupError, ValueError):
            pass


def apply_fault(*args):
    # In this process, not through a new `pxfab` (a Python start-up of about
    # 0.1 s of CPU): on a 2-core machine that start-up takes the CPU from the
    # job under test just when the fault hits, and the stall measured would
    # include it.
    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
        rc = fabcli.main(["fault"] + [str(a) for a in args])
    if rc:
        raise RuntimeError("pxfab fault %s: exit status %s" % (" ".join(map(str, args)), rc))


def fault_plan(sc):
    return scenarios.plan(SCENARIOS[sc], apply_fault)


def fabric_args(fabric, rate):
    # fat-tree uplinks at the node links' rate: one path alone can carry a node's traffic
    return scenarios.fabric_args(fabric, rate)


def run_job(argv, plan, limit, sample_links=()):
    """Run argv in its own process group; faults from plan at FT_START + t;
    kill the group after `limit` seconds. Returns a dict of what happened."""
    from plexus.fab import fabric
    r = {"rc": None, "hung": False, "t0": None, "events": {}, "prog": [], "samples": [],
         "json": None}
    started, done = threading.Event(), threading.Event()
    out_lines = []
    t_launch = time.time()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         start_new_session=True, cwd=ROOT)

    def reader():
        for line in p.stdout:
            out_lines.append(line)
            m = re.match(r"FT_START epoch=([\d.]+)", line)
            if m:
                r["t0"] = float(m.group(1))
                started.set()
            m = re.match(r"PROG t=([\d.]+) bytes=(\d+)", line)
            if m:
                r["prog"].append((float(m.group(1)), int(m.group(2))))
            if line.startswith("{"):
                try:
                    r["json"] = json.loads(line)
                except ValueError:
                    pass

    def injector():
        if not started.wait(120):
            return
        for at, name, fn in plan:
            if done.wait(max(0.0, r["t0"] + at - time.time())):
                return
            try:
                fn()
                r["events"][name] = time.time() - r["t0"]
            except Exception as e:  # noqa: BLE001
                log("    fault %s failed: %s" % (name, e))

    def sampler():
        if not started.wait(120):
            return
        while not done.is_set():
            try:
                st = fabric.stats(list(sample_links))["links"]
                r["samples"].append((time.time() - r["t0"],
                                     {l: st[l]["a_to_b"]["bytes"] for l in sample_links}))
            except Exception:  # noqa: BLE001
                pass
            done.wait(0.25)

    ts = [threading.Thread(target=reader), threading.Thread(target=injector)]
    if sample_links:
        ts.append(threading.Thread(target=sampler))
    for t in ts:
        t.start()
    try:
        p.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        r["hung"] = True
    finally:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
        done.set()
        started.set()
        for t in ts:
            t.join(timeout=30)
    r["rc"] = p.returncode
    r["wall"] = time.time() - t_launch
    r["t_end"] = time.time() - r["t0"] if r["t0"] else None
    r["tail"] = "".join(l for l in out_lines if not l.startswith(("PROG", "TIMELINE")))[-2000:]
    return r


def prog_metrics(prog, t_end, a, b):
    """From rank 1's PROG lines (cumulative bytes every 100 ms while it polls):
    longest time without new bytes up to t_end, and MB/s within [a, b)."""
    if not prog:
        return None, None
    pts = [(0.0, 0)] + prog + ([(t_end, prog[-1][1])] if t_end else [])
    stall, last_t, last_b = 0.0, 0.0, 0
    for t, b_ in pts:
        if b_ > last_b:
            stall = max(stall, t - last_t)
            last_t, last_b = t, b_
    if t_end:
        stall = max(stall, t_end - last_t)

    def at(t):
        v = 0
        for tt, bb in pts:
            if tt <= t:
                v = bb
        return v
    rate = (at(b) - at(a)) / (b - a) / 1e6 if b is not None and b > a else None
    return stall, rate


def back_in_use(samples, link, t_up, min_bytes=1_000_000):
    base = None
    for t, bb in samples:
        b = bb[link]
        if t < t_up:
            continue
        if base is None:
            base = b
        elif b - base >= min_bytes:
            return t - t_up
    return None


def moved(samples, link, a, b):
    """MB the link carried between a and b seconds after FT_START."""
    pts = [(t, bb[link]) for t, bb in samples if a <= t <= b]
    return (pts[-1][1] - pts[0][1]) / 1e6 if len(pts) >= 2 else None


def summarize(mpi, sc, r, limit):
    fat, fend = SCENARIOS[sc].fault_at, SCENARIOS[sc].fault_end
    j = r["json"]
    row = {"library": LABEL[mpi], "rc": r["rc"], "hung": r["hung"]}
    if r["hung"] and j is not None and j["ok"]:
        row["outcome"] = "verified in %.1f s, then did not exit (killed after %d s)" % (
            j["seconds"], limit)
    elif r["hung"]:
        prog = r["prog"]
        t_kill = r["t_end"] or 0
        recent = [b for t, b in prog if t >= t_kill - 10]
        if prog and recent and recent[-1] > min(recent):
            total = parse_bytes(BYTES[sc])
            # rank 1 alone receives in pairs mode, so its count is the job's
            row["outcome"] = "too slow: killed after %d s, still moving (%d%% done)" % (
                limit, 100 * prog[-1][1] // total)
        else:
            row["outcome"] = "hung (killed after %d s)" % limit
    elif j is None and sc == "6" and r["t_end"] is not None:
        named = "names the peer" if PEER_LOST_RE.search(r["tail"]) else "no message naming the peer"
        row["outcome"] = "ended with exit %s %.1f s after the cut, %s" % (
            r["rc"], r["t_end"] - fat, named)
    elif j is None:
        row["outcome"] = "failed (exit %s, no result)" % r["rc"]
    elif j["ok"] and r["rc"] == 0:
        row["outcome"] = "completed, verified"
    else:
        row["outcome"] = "completed with errors (exit %s)" % r["rc"]
    row["completion_s"] = r["t_end"] if not r["hung"] else None
    after_start = (fend if fend else (fat + 1 if fat is not None else None))
    if j is not None:
        # the gaps the fault caused (ft_stream's stall_after_fault_s), not start-up
        row["max_stall_s"] = j.get("stall_after_fault_s", j["max_stall_s"])
        row["during_MBs"] = j.get("rate_during_MBs")
        row["after_MBs"] = j.get("rate_after_MBs")
        row["rate_MBs"] = j.get("rate_MBs")
        row["lost_dup_corrupt"] = "%d/%d/%d" % (j["lost"], j["dup"], j["corrupt"])
    else:
        t_end = r["t_end"]
        stall, during = prog_metrics(r["prog"], t_end, fat or 0, fend if fend else t_end)
        _, after = prog_metrics(r["prog"], t_end, after_start, t_end) \
            if after_start is not None and t_end and t_end > after_start else (None, None)
        row["max_stall_s"] = stall
        row["during_MBs"] = during
        row["after_MBs"] = after
        row["rate_MBs"] = None
        row["lost_dup_corrupt"] = "–"
    if sc == "2" and "up" in r["events"]:
        row["back_s"] = back_in_use(r["samples"], CUT, r["events"]["up"])
    if sc == "7" and r["samples"]:
        end = r["samples"][-1][0]
        row["spines"] = "%s / %s → %s / %s" % tuple(
            fmt(moved(r["samples"], l, a, b)) for a, b in ((0, fat), (fat + 1, end))
            for l in SPINES)
    return row


def parse_bytes(s):
    mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    return int(float(s[:-1]) * mult[s[-1]]) if s[-1] in mult else int(s)


def fmt(v, unit="", digits=1):
    if v is None or v < 0:  # ft_stream says -1 for a rate with no interval
        return "–"
    return ("%.*f" % (digits, v)) + unit


def table(sc, rows):
    out = ["", "#### Scenario %s: %s (%s B, node0 -> node1)" % (sc, SCENARIOS[sc].title, BYTES[sc]), ""]
    hdr = ["library", "outcome", "completion (s)", "max stall (s)", "rate during fault (MB/s)",
           "rate after (MB/s)", "lost/dup/corrupt"]
    if sc == "base":
        hdr[4] = "rate (MB/s)"
        hdr[5] = "–"
    if sc == "2":
        hdr.append("rail1 in use again after (s)")
    if sc == "7":
        hdr.append("MB over spine0 / spine1: before → after the cut")
    out.append("| " + " | ".join(hdr) + " |")
    out.append("|" + "---|" * len(hdr))
    for w in rows:
        cells = [w["library"], w["outcome"], fmt(w["completion_s"]), fmt(w["max_stall_s"], digits=3),
                 fmt(w["rate_MBs"] if sc == "base" else w["during_MBs"]),
                 "–" if sc == "base" else fmt(w["after_MBs"]), w["lost_dup_corrupt"]]
        if sc == "2":
            cells.append(fmt(w.get("back_s")) if "back_s" in w else "–")
        if sc == "7":
            cells.append(w.get("spines", "–"))
        out.append("| " + " | ".join(cells) + " |")
    return out


def run_one(sc, fab, m, exe, plexus_build, reap=True):
    """One run of scenario sc with library m on the fabric that is up (shape fab),
    faults cleared after; its table row, with the raw outcome under "raw". reap:
    kill leftover ranks after the run by their binary's path (kill_leftovers)."""
    fat, fend = SCENARIOS[sc].fault_at, SCENARIOS[sc].fault_end
    fa = ["--seconds", "0", "--bytes", BYTES[sc], "--exchange", EXCHANGE[0]]
    if fat is not None:
        fa += ["--fault-at", str(fat)]
    if fend is not None:
        fa += ["--fault-end", str(fend)]
    argv = command(m, exe, fa, plexus_build, fab)
    outage = (fend - fat) if fend else 0
    limit = 40 + outage + HARD_LIMIT_SLACK
    if sc == "6":  # Plexus ends 30 s (PX_PARTITION_TIMEOUT) after the cut
        limit = fat + 30 + 30
    if m == "mptcp":
        mptcp_setup(True, fab)
    log("scenario %s, %s: %s" % (sc, LABEL[m], " ".join(shlex.quote(a) for a in argv)))
    links = (CUT,) if sc == "2" else SPINES if sc == "7" else ()
    try:
        r = run_job(argv, fault_plan(sc), limit, sample_links=links)
    finally:
        multirail.fab("fault", "reset", check=False)
        if m == "mptcp":
            mptcp_setup(False, fab)
        if reap:
            kill_leftovers(exe)
    row = summarize(m, sc, r, limit)
    row["scenario"] = sc
    row["command"] = " ".join(shlex.quote(a) for a in argv)
    log("  -> %s, %s s, stall %s s" % (row["outcome"], fmt(row["completion_s"]),
                                      fmt(row["max_stall_s"], digits=3)))
    if not r["json"]:
        log("    " + "\n    ".join(r["tail"].strip().splitlines()[-6:]))
    return dict(row, raw={k: r[k] for k in ("rc", "hung", "events", "json", "t_end", "tail")})


def run_scenario(sc, fab, mpis, exes, plexus_build, lines, results, reps=1):
    rows = []
    stalls = {}
    for m in mpis:
        res = run_one(sc, fab, m, exes[m], plexus_build)
        rows.append({k: v for k, v in res.items() if k != "raw"})
        results.append(res)
        if m in PLEXUS:
            stalls[m] = [res["max_stall_s"]]
    # Plexus again, for the spread of its stall (the peers' outcomes, hangs
    # included, do not vary from run to run)
    for m in stalls:
        for _ in range(reps - 1):
            res = run_one(sc, fab, m, exes[m], plexus_build)
            results.append(dict(res, repeat=True))
            stalls[m].append(res["max_stall_s"])
    t = table(sc, rows)
    for m, runs in stalls.items():
        if len(runs) < 2:
            continue
        ok = sorted(x for x in runs if x is not None)
        t += ["", "%s over %d runs: max stall median %s s, worst %s s%s." % (
            LABEL[m], len(runs), fmt(ok[len(ok) // 2], digits=3) if ok else "–",
            fmt(ok[-1], digits=3) if ok else "–",
            "" if len(ok) == len(runs) else " (%d runs without a figure)" % (len(runs) - len(ok)))]
    print("\n".join(t), flush=True)
    lines += t


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mpis", default="mpich,openmpi,mptcp,plexus")
    ap.add_argument("--scenarios", default="base,1,2,4,3,5,6,7")
    ap.add_argument("--rate", default="1gbit", help="rate of each rail (default 1gbit)")
    ap.add_argument("--plexus-build", default=os.environ.get("PX_BUILD_DIR", os.path.join(ROOT, "build")))
    ap.add_argument("--reps", type=int, default=1,
                    help="runs of Plexus per scenario (the peers run once); the table adds the "
                         "median and worst stall")
    ap.add_argument("--exchange", choices=("blocking", "watched"), default="watched",
                    help="ft_stream's exchange at the end of each epoch: MPI_Sendrecv, or "
                         "nonblocking with the window tested meanwhile, so that the stall "
                         "is timed from every completion (default watched)")
    ap.add_argument("--out", help="also write the Markdown here")
    ap.add_argument("--json", help="write the raw results here (default bench/results/fault-DATE.json)")
    args = ap.parse_args()
    EXCHANGE[0] = args.exchange
    if os.geteuid() != 0:
        log("fault: needs root (pxfab)")
        return 1
    if os.path.exists("/run/pxfab/state.json"):
        log("fault: a pxfab fabric is up; 'pxfab down' first")
        return 1
    mpis = [m for m in args.mpis.split(",") if m]
    plexus_build = os.path.abspath(args.plexus_build)
    exes = {}
    for m in mpis:
        try:
            exes[m] = build(m, plexus_build)
        except (OSError, subprocess.CalledProcessError) as e:
            log("fault: skipping %s: cannot build ft_stream: %s" % (m, e))
    mpis = [m for m in mpis if m in exes and os.access(exes[m], os.X_OK)]

    def on_signal(signum, _frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_signal)

    started = time.strftime("%Y-%m-%d %H:%M")
    lines = ["Run %s; 2 nodes x 2 rails of %s (pxfab), one rank per node, ft_stream "
             "--mode pairs --exchange %s; faults at FT_START + t." % (started, args.rate,
                                                                  args.exchange)]
    results = []
    wanted = [s for s in args.scenarios.split(",") if s]
    for sc in wanted:
        if sc not in SCENARIOS:
            log("fault: unknown scenario " + sc)
    for fab in ("rails", "fattree"):
        todo = [sc for sc in wanted if sc in SCENARIOS and SCENARIOS[sc].fabric == fab]
        if not todo:
            continue
        multirail.fab("up", *fabric_args(fab, args.rate))
        try:
            for sc in todo:
                run_scenario(sc, fab, mpis, exes, plexus_build, lines, results, args.reps)
        finally:
            multirail.fab("down", check=False)
    lines += ["", "Commands (ft_stream built with each library's mpicc into bench/.cache/fault/):", ""]
    seen = set()
    for w in results:
        c = w["command"].replace(ROOT + "/", "")
        if c not in seen:
            seen.add(c)
            lines.append("    " + c)
    path = args.json or os.path.join(RESULTS, "fault-%s.json" % time.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"date": started, "rate": args.rate, "mpis": [LABEL[m] for m in mpis],
                   "scenarios": {sc: dict(SCENARIOS[sc]._asdict(), bytes=BYTES[sc])
                                 for sc in wanted if sc in SCENARIOS},
                   "results": results}, f, indent=1)
    log("fault: raw results in %s" % path)
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
