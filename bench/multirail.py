#!/usr/bin/env python3
"""Multi-rail and multi-path benchmarks on pxfab fabrics (root).

Scenarios (each builds its own fabric with pxfab and takes it down after):
  rails2x1g   two 1 Gbit/s rails: osu_bw, osu_bibw, osu_mbw_mr, osu_latency,
              osu_alltoall with MPICH (UCX on both rails), Open MPI (TCP BTL on
              both rails) and Plexus; single-rail references.
  rails1g250m rails of 1 Gbit/s and 250 Mbit/s: osu_bw, osu_bibw.
  rma2x1g     two 1 Gbit/s rails, one-sided: osu_put_bw, osu_get_bw (each rail
              alone and both), osu_put_bibw, 1 MB; MPICH, Open MPI, Plexus.
  interleave  two 1 Gbit/s rails, the one-sided interleaving test
              (bench/multirail/interleave.c: 16 puts then 16 gets of 1 MB per
              epoch) on one rail and on two; MPICH, Open MPI, and Plexus with
              its pacing of large puts (PX_RMA_PACE) on and off.
  hotspot     fat-tree, 2 leaves x 2 spines, 2 paths; 4 background TCP flows
              load one spine; Plexus node0 -> node2 osu_bw 1-4 MB under the
              policies even, adaptive and bss.
  fattree4    4 nodes on a 2-leaf, 2-spine fat-tree with 2 paths routed by
              path index: displaced ring (bench/multirail/ring.c) and
              osu_alltoall, Plexus with one path (PX_PATHS=1) and with two.

Every case runs --reps times per library, interleaved; medians with [min-max]
and the exact commands are printed as Markdown, and every run's figure goes
as JSON to --json (default bench/results/multirail-DATE.json). Benchmarks
print figures, they never fail a build. Prerequisites: bench/osu/build.sh
OSU_SRC all, Plexus built (in $PLEXUS_BUILD, default build/).
"""

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import compare  # noqa: E402  (run, parse_osu, available_mpis, machine, fmt)

RUN_SH = os.path.join(HERE, "osu", "run.sh")
PXFAB = [sys.executable, "-m", "plexus.fab"]
ENV = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
RING_SRC = os.path.join(HERE, "multirail", "ring.c")
RING = os.path.join(HERE, ".cache", "multirail", "ring")
INTERLEAVE_SRC = os.path.join(HERE, "multirail", "interleave.c")
MPICC = {"mpich": "mpicc.mpich", "openmpi": "mpicc.openmpi",
         "plexus": os.path.join(compare.PLEXUS_BUILD, "bin", "mpicc")}
RESULTS = os.path.join(HERE, "results")


def fab(*args, check=True):
    p = subprocess.run(PXFAB + [str(a) for a in args], capture_output=True, text=True, env=ENV)
    if check and p.returncode != 0:
        raise RuntimeError("pxfab %s: %s" % (" ".join(map(str, args)), p.stderr.strip()))
    return p


def osu(mpi, bench, args, nodes="node0,node1", rails="rail0,rail1", np=2, env=(), ppn=None):
    a = [RUN_SH, "--mpi", mpi, "--np", str(np), "--nodes", nodes, "--mgmt", "pxf-mgmt",
         "--rails", rails, "--timeout", "240"]
    if ppn:
        a += ["--ppn", str(ppn)]
    for e in env:
        a += ["--env", e]
    return a + [bench] + list(args)


def plexus_prog(prog, args, nodes, env=(), ppn=1):
    a = [os.path.join(compare.PLEXUS_BUILD, "bin", "pxrun"), "--hosts", nodes, "--ppn", str(ppn),
         "--launcher", "ip netns exec {host}", "--bootstrap-iface", "pxf-mgmt", "--timeout", "240",
         "--env", "PX_NET=shm,tcp"]
    for e in env:
        a += ["--env", e]
    return a + [prog] + [str(x) for x in args]


def value(out, size):
    if size == "ring":
        m = re.search(r"([\d.]+) MB/s per rank", out)
        return float(m.group(1)) if m else None
    if size == "interleave":
        m = re.search(r"epochs: ([\d.]+) MB/s$", out, re.M)
        return float(m.group(1)) if m else None
    return compare.parse_osu(out, size)


def measure(rows, reps, log):
    """rows: list of (label, argv, size). Interleaved reps; returns {label: [values]}."""
    res = {r[0]: [] for r in rows}
    for rep in range(reps):
        for label, argv, size in rows:
            t0 = time.time()
            rc, out = compare.run(argv, 300)
            v = value(out, size) if rc == 0 else None
            if v is not None:
                res[label].append(v)
            log("  %-34s run %d/%d: %s (%.0f s)" % (label, rep + 1, reps,
                                                   "%.2f" % v if v is not None else "FAILED rc=%d" % rc,
                                                   time.time() - t0))
            if v is None:
                log("    " + "\n    ".join(out.strip().splitlines()[-6:]))
    return res


def med(vals):
    if not vals:
        return "failed", None
    m = statistics.median(vals)
    return ("%.1f [%.1f–%.1f]" % (m, min(vals), max(vals)) if len(vals) > 1 else "%.1f" % m), m


def table(title, rows, res, ref=None, ref_label="ratio", raw=None):
    """Markdown lines; with raw (a list), also appends the table's figures to it."""
    out = ["", "#### " + title, "", "| case | median [min–max] | %s |" % ref_label, "|---|---|---|"]
    cases = []
    for label, argv, size in rows:
        s, m = med(res[label])
        r = ""
        base = None
        if ref and m is not None:
            base = ref(label, res)
            r = "%.2f" % (m / base) if base else ""
        out.append("| %s | %s | %s |" % (label, s, r))
        cases.append({"case": label, "size": size, "command": compare.show_cmd(argv),
                      "values": res[label], "median": m, "ratio": (m / base) if base else None})
    if raw is not None:
        raw.append({"title": title, "ratio": ref_label if ref else None, "cases": cases})
    out.append("")
    out.append("Commands:")
    out.append("")
    seen = set()
    for label, argv, size in rows:
        c = compare.show_cmd(argv)
        if c not in seen:
            seen.add(c)
            out.append("    " + c)
    return out


def peers_and_plexus(mpis, bench, args, rails, np=2, ppn=None, extra_plexus=()):
    rows = []
    for m in mpis:
        rows.append(("%s %s %s" % (compare.MPIS[m], bench.split("/")[-1], rails), osu(m, bench, args, rails=rails, np=np, ppn=ppn), None))
    for label, env in extra_plexus:
        rows.append(("Plexus %s %s %s" % (bench.split("/")[-1], rails, label),
                     osu("plexus", bench, args, rails=rails, np=np, ppn=ppn, env=env), None))
    return rows


def bw_args(size):
    """osu_bw / osu_bibw arguments of the rail scenarios: a window of 16 messages,
    6 x 16 x 4 MB per run, seconds even on the 250 Mbit/s rail."""
    return ["-m", "%d:%d" % (size, size), "-i", "5", "-x", "1", "-W", "16"]


def rails_fabric(slow):
    """pxfab commands of the rail scenarios' fabric: two nodes, two rails of
    1 Gbit/s; with slow, rail1 at 250 Mbit/s (both ends)."""
    cmds = [("up", "--nodes", 2, "--rails", 2, "--rate", "1gbit")]
    if slow:
        cmds += [("fault", "rate", "node0:rail1", "250mbit"),
                 ("fault", "rate", "node1:rail1", "250mbit")]
    return cmds


def up(cmds):
    """Run pxfab commands, the first an `up`; nothing stays up when a later one fails."""
    fab(*cmds[0])
    try:
        for c in cmds[1:]:
            fab(*c)
    except BaseException:
        fab("down", check=False)
        raise


def rails_sum(label, res):
    """A two-rail row's reference: the sum of the same library's single rails."""
    lib = label.split(" rail")[0]
    r0, r1 = res.get(lib + " rail0"), res.get(lib + " rail1")
    if not r0 or not r1 or label.endswith((" rail0", " rail1")):
        return None
    return statistics.median(r0) + statistics.median(r1)


def scenario_rails(mpis, reps, log, slow, raw=None):
    title = "two rails, 1 Gbit/s + 250 Mbit/s" if slow else "two rails of 1 Gbit/s"
    up(rails_fabric(slow))
    out = []
    try:
        size = 4194304
        bw = bw_args(size)
        benches = [("pt2pt/osu_bw", bw, 2, None), ("pt2pt/osu_bibw", bw, 2, None)]
        if not slow:
            benches += [("pt2pt/osu_mbw_mr", bw, 2, None),
                        ("pt2pt/osu_latency", ["-m", "8:8", "-i", "5000", "-x", "500"], 2, None),
                        ("collective/osu_alltoall", ["-m", "1048576:1048576", "-i", "10", "-x", "2"], 4, 2)]
        for bench, args, np, ppn in benches:
            sz = int(args[1].split(":")[0])
            rows = []
            for rails in ("rail0", "rail1", "rail0,rail1") if bench.endswith(("osu_bw", "osu_latency")) else ("rail0,rail1",):
                for m in mpis:
                    rows.append(("%s %s" % (compare.MPIS[m], rails), osu(m, bench, args, rails=rails, np=np, ppn=ppn), sz))
            if "plexus" in mpis and not bench.endswith("osu_latency"):
                for pol in ("even", "adaptive"):
                    rows.append(("Plexus rail0,rail1 %s" % pol,
                                 osu("plexus", bench, args, rails="rail0,rail1", np=np, ppn=ppn,
                                     env=["PX_RAIL_POLICY=" + pol]), sz))
            log("%s: %s" % (title, bench))
            res = measure(rows, reps, log)

            has_single = bench.endswith("osu_bw")
            out += table("%s — %s, %d B (MB/s%s)" % (title, bench.split("/")[-1], sz,
                                                      "" if not bench.endswith("osu_latency") else "; µs"),
                         rows, res, rails_sum if has_single else None,
                         "of the library's rail0 + rail1" if has_single else "", raw)
    finally:
        fab("down", check=False)
    return out


def scenario_rma(mpis, reps, log, raw=None):
    """One-sided bandwidth on two rails of 1 Gbit/s: OSU's defaults
    (MPI_Win_allocate, MPI_Win_flush; bibw: post/start/complete/wait), a
    window of 32 operations of 1 MB."""
    title = "one-sided, two rails of 1 Gbit/s"
    up(rails_fabric(False))
    out = []
    try:
        size = 1048576
        args = ["-m", "%d:%d" % (size, size), "-i", "10", "-x", "2"]
        for bench in ("one-sided/osu_put_bw", "one-sided/osu_get_bw", "one-sided/osu_put_bibw"):
            single = not bench.endswith("bibw")
            rows = []
            for rails in ("rail0", "rail1", "rail0,rail1") if single else ("rail0,rail1",):
                for m in mpis:
                    rows.append(("%s %s" % (compare.MPIS[m], rails), osu(m, bench, args, rails=rails),
                                 size))
            log("%s: %s" % (title, bench))
            res = measure(rows, reps, log)

            out += table("%s — %s, %d B (MB/s)" % (title, bench.split("/")[-1], size), rows, res,
                         rails_sum if single else None,
                         "of the library's rail0 + rail1" if single else "",
                         raw)
    finally:
        fab("down", check=False)
    return out


def scenario_interleave(mpis, reps, log, raw=None):
    """The interleaving test of the multi-rail thesis (chapter 5): per epoch
    (post/start/complete/wait) 16 puts then 16 gets of 1 MB from rank 0 to
    rank 1's window. Plexus paces large puts (PX_RMA_PACE, default on) so
    the gets go ahead and both directions of the link work; PX_RMA_PACE=0
    sends the puts as issued."""
    progs = {}
    for m in mpis:
        progs[m] = os.path.join(HERE, ".cache", "multirail", "interleave-" + m)
        os.makedirs(os.path.dirname(progs[m]), exist_ok=True)
        subprocess.run([MPICC[m], "-O2", INTERLEAVE_SRC, "-o", progs[m]], check=True)
    title = "one-sided interleaving test, 16 puts + 16 gets of 1 MB per epoch"
    up(rails_fabric(False))
    out = []
    try:
        rows = []
        args = ["1048576", "10"]
        for rails in ("rail0", "rail0,rail1"):
            for m in mpis:
                if m == "plexus":
                    rows.append(("Plexus %s, pacing off" % rails,
                                 osu(m, progs[m], args, rails=rails, env=["PX_RMA_PACE=0"]),
                                 "interleave"))
                    rows.append(("Plexus %s" % rails, osu(m, progs[m], args, rails=rails),
                                 "interleave"))
                else:
                    rows.append(("%s %s" % (compare.MPIS[m], rails), osu(m, progs[m], args, rails=rails),
                                 "interleave"))
        log(title)
        res = measure(rows, reps, log)

        def ref(label, res):
            off = res.get(label + ", pacing off")
            return statistics.median(off) if off else None
        out += table("%s, two rails of 1 Gbit/s (MB/s, both directions)" % title, rows, res, ref,
                     "pacing on / off", raw)
    finally:
        fab("down", check=False)
    return out


def background(src, dst_node, dst_addr, flows, seconds):
    rx = subprocess.Popen(["ip", "netns", "exec", dst_node, sys.executable, "-m", "plexus.fab.probe",
                           "tcp-recv", "--port", "9555", "--flows", str(flows)],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=ENV)
    rx.stdout.readline()
    tx = subprocess.Popen(["ip", "netns", "exec", src, sys.executable, "-m", "plexus.fab.probe",
                           "tcp-send", dst_addr, "--port", "9555", "--time", str(seconds),
                           "--flows", str(flows)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    return rx, tx


def scenario_hotspot(reps, log, raw=None):
    fab("up", "--leaves", 2, "--spines", 2, "--nodes-per-leaf", 2, "--rails", 1, "--paths", 2,
        "--rate", "1gbit")
    out = []
    try:
        # node3's path-0 address is reached over spine (3 + 0) mod 2 = 1: the
        # background flows node1 -> node3 load leaf0 -> spine1, which is
        # Plexus's path 1 from node0 to node2 (path 0 goes over spine0).
        rows = []
        for size in (1048576, 2097152, 4194304):
            for pol in ("even", "adaptive", "bss"):
                rows.append(("%d B %s" % (size, pol),
                             osu("plexus", "pt2pt/osu_bw", ["-m", "%d:%d" % (size, size), "-i", "5", "-x", "1", "-W", "16"],
                                 nodes="node0,node2", rails="rail0", env=["PX_RAIL_POLICY=" + pol]), size))
        rx, tx = background("node1", "node3", "10.100.0.4", 4, 3600)
        time.sleep(1)
        try:
            log("hotspot: osu_bw node0 -> node2 with 4 background flows on spine1")
            res = measure(rows, reps, log)
        finally:
            tx.kill()
            rx.kill()

        def ref(label, res):
            e = res.get(label.rsplit(" ", 1)[0] + " even")
            return statistics.median(e) if e else None
        out += table("hot spot: osu_bw node0 -> node2 over 2 paths, one spine loaded by 4 TCP flows (MB/s)",
                     rows, res, ref, "vs even striping", raw)
        out.append("")
        out.append("Background: `ip netns exec node1 python3 -m plexus.fab.probe tcp-send 10.100.0.4 "
                   "--port 9555 --flows 4 --time 3600` (receiver `tcp-recv` in node3).")
    finally:
        fab("down", check=False)
    return out


def scenario_fattree4(reps, log, raw=None):
    os.makedirs(os.path.dirname(RING), exist_ok=True)
    subprocess.run([os.path.join(compare.PLEXUS_BUILD, "bin", "mpicc"), "-O2", RING_SRC, "-o", RING], check=True)
    # routing by path index (as with one LID per path): every flow's path 0
    # crosses spine0, so one path makes the two flows leaving a leaf share an
    # uplink while the other spine idles
    fab("up", "--leaves", 2, "--spines", 2, "--nodes-per-leaf", 2, "--rails", 1, "--paths", 2,
        "--rate", "1gbit", "--routing", "path")
    out = []
    try:
        nodes = "node0,node1,node2,node3"
        rows = []
        for paths in (1, 2):
            env = ["PX_PATHS=%d" % paths]
            rows.append(("ring, displacement 2, 4 MB, %d path%s" % (paths, "s" if paths > 1 else ""),
                         plexus_prog(RING, [4194304, 20, 2], nodes, env), "ring"))
        for paths in (1, 2):
            rows.append(("osu_alltoall 1 MB, %d path%s (µs)" % (paths, "s" if paths > 1 else ""),
                         osu("plexus", "collective/osu_alltoall", ["-m", "1048576:1048576", "-i", "10", "-x", "2"],
                             nodes=nodes, rails="rail0", np=4, env=["PX_PATHS=%d" % paths]), 1048576))
        log("fattree4: displaced ring and alltoall, 1 vs 2 paths")
        res = measure(rows, reps, log)

        def ref(label, res):
            one = res.get(label.replace("2 paths", "1 path"))
            if not one or "1 path" in label:
                return None
            return statistics.median(one)
        out += table("4 nodes, 2 leaves, 2 spines, 2 paths: one path vs two (ring: MB/s per rank; alltoall: µs)",
                     rows, res, ref, "2 paths / 1 path", raw)
    finally:
        fab("down", check=False)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--mpis", default="mpich,openmpi,plexus")
    ap.add_argument("--scenarios", default="rails2x1g,rails1g250m,hotspot,fattree4")
    ap.add_argument("--json", help="write the raw results here (default bench/results/multirail-DATE.json)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("multirail: needs root (pxfab)", file=sys.stderr)
        return 1
    if os.path.exists("/run/pxfab/state.json"):
        print("multirail: a pxfab fabric is up; 'pxfab down' first", file=sys.stderr)
        return 1
    mpis = compare.available_mpis([m for m in args.mpis.split(",") if m])

    def on_signal(signum, _frame):  # take running jobs and the fabric down with us
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_signal)

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    started = time.strftime("%Y-%m-%d %H:%M")
    print("Run %s; median of %d runs." % (started, args.reps), flush=True)
    raw = {}
    try:
        for sc in args.scenarios.split(","):
            raw[sc] = []
            if sc == "rails2x1g":
                out = scenario_rails(mpis, args.reps, log, slow=False, raw=raw[sc])
            elif sc == "rails1g250m":
                out = scenario_rails(mpis, args.reps, log, slow=True, raw=raw[sc])
            elif sc == "rma2x1g":
                out = scenario_rma(mpis, args.reps, log, raw=raw[sc])
            elif sc == "interleave":
                out = scenario_interleave(mpis, args.reps, log, raw=raw[sc])
            elif sc == "hotspot":
                out = scenario_hotspot(args.reps, log, raw=raw[sc])
            elif sc == "fattree4":
                out = scenario_fattree4(args.reps, log, raw=raw[sc])
            else:
                log("unknown scenario " + sc)
                del raw[sc]
                continue
            print("\n".join(out), flush=True)
    finally:
        # the tables finished so far, also when interrupted
        path = args.json or os.path.join(RESULTS, "multirail-%s.json" % time.strftime("%Y%m%d-%H%M%S"))
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w") as f:
            json.dump({"date": started, "reps": args.reps, "mpis": [compare.MPIS[m] for m in mpis],
                       "machine": compare.machine(), "scenarios": raw}, f, indent=1)
        log("multirail: raw results in %s" % path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
