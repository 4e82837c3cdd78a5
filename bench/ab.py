#!/usr/bin/env python3
"""A/B: two builds of Plexus side by side, run by run, to check that a change
(a refactoring, say) costs no performance.

    bench/ab.py --old /tmp/old/build --new build --osu-dir ../osu-plexus/src

--old and --new are two Plexus build directories, typically the previous
commit built in a scratch folder and the working tree's build; --osu-dir is
one OSU build against Plexus (bench/osu/build.sh --dest DIR, then DIR/src).
Both builds provide the same libmpi ABI, so the one OSU build serves both:
every OSU run goes through bench/osu/run.sh with PLEXUS_BUILD set to the
build (its pxrun) and LD_LIBRARY_PATH set for the ranks to the build's lib/
(the OSU binaries' runpath names the build OSU was linked against, which
would otherwise serve both sides); the script checks with ldd before it runs
anything that each side loads its own libmpi.

Cases, by group (--cases takes group numbers or names, or case keys; --list):
  1 shm         osu_latency 8 B and osu_bw 4 MB, 2 ranks on one node
  2 tcp         the same between 2 emulated nodes over one rail (TCP)
  3 rails2      osu_bw 4 MB and osu_latency 8 B over two rails of 1 Gbit/s
  4 rails_uneq  osu_bw 4 MB over rails of 1 Gbit/s and 250 Mbit/s
  5 stall       rail-loss stall: bench/fault.py's scenario 1 (node0:rail1 down
                for good while ft_stream streams 3 GiB over two rails of
                1 Gbit/s); the longest gap between two messages after the
                fault, and the completion time; and the same stream's rate
                with no fault, over TCP and over datagrams (ft_stream is this
                tree's, built with each side's mpicc)
  6 oversub     osu_allreduce 8 B and 64 KB, 4 ranks on one node
  7 coll8       osu_allreduce and osu_alltoall 8 B, 64 KB and 1 MB, 8 ranks on
                4 emulated nodes (2 per node)
  8 zcopy       osu_bw 4 MB over two rails of 1 Gbit/s by datagrams, large
                messages by udp-zcopy (PX_NET=udp,
                PX_CHANNELS=size>=64k:udp-zcopy|*:udp)

The OSU arguments of groups 1 and 2 are bench/compare.py's, those of 3 and 4
bench/multirail.py's, the stall run is bench/fault.py's. Each case runs --reps
times per build, old and new alternating (old, new, old, new, ...). Groups 2-5,
7 and 8 need root and bring up their own pxfab fabric, taking it down after; a
group whose fabric cannot come up because another fabric is up is skipped.

Output: a Markdown table (case, old and new median [min-max], new/old) with
the exact commands on stdout; every run's figure as JSON in --json (default
bench/results/ab-DATE.json). Benchmarks print figures; they never fail a
build. The exit status is non-zero only when no case ran on both builds.
"""

import argparse
import datetime
import json
import os
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import compare  # noqa: E402  (Case, osu_args, run, parse_osu, summarize, fmt, machine, ...)
import multirail  # noqa: E402  (osu, bw_args, rails_fabric, up, fab)
import fault  # noqa: E402  (compile_ft, run_one, fabric_args, SCENARIOS)

SIDES = ("old", "new")
MB4 = 4194304
NODES4 = "node0,node1,node2,node3"
STALL_SCENARIO = "1"


class OsuCase:
    """One OSU figure: run.sh arguments (those of --mpi plexus) without the build."""

    def __init__(self, key, title, unit, higher_better, size, argv):
        self.key = key
        self.metrics = [(key, title, unit, higher_better)]
        self.size = size
        self.argv = argv

    @classmethod
    def of_compare(cls, key, title):
        c = next(c for c in compare.CASES if c.key == key)
        return cls(key, title, c.unit, c.higher_better, c.size, c.run_args("plexus"))

    def command(self, build, osu_dir):
        return (["env", "PLEXUS_BUILD=" + build, self.argv[0], "--osu-dir", osu_dir,
                 "--env", "LD_LIBRARY_PATH=" + os.path.join(build, "lib")] + self.argv[1:])

    def run(self, build, osu_dir):
        """({metric: value} or None, what went wrong or None, command)."""
        argv = self.command(build, osu_dir)
        rc, out = compare.run(argv, 300)
        v = compare.parse_osu(out, self.size) if rc == 0 else None
        if v is None:
            return None, {"rc": rc, "tail": out[-1500:]}, compare.show_cmd(argv)
        return {self.key: v}, None, compare.show_cmd(argv)


def ft_stream(build):
    """tests/mpi/ft_stream.c of this tree built with the build's mpicc (into the
    cache, named by the build): both sides run the same program, whatever
    options an older build's own ft_stream lacks."""
    tag = re.sub(r"[^A-Za-z0-9]+", "_", os.path.realpath(build)).strip("_")
    return fault.compile_ft(os.path.join(build, "bin", "mpicc"),
                            os.path.join(HERE, ".cache", "ab", "ft_stream-" + tag))


class StreamCase:
    """bench/fault.py's checksummed stream (ft_stream) in one of its scenarios,
    with one build: the rail-loss stall (scenario 1), or the rate with no
    fault (scenario base), over TCP or datagrams."""

    def __init__(self, key, scenario, lib="plexus"):
        self.key = key
        self.scenario = scenario
        self.lib = lib
        over = "datagrams" if lib == "plexus-udp" else "TCP"
        size = size_label(fault.parse_bytes(fault.BYTES[scenario]))
        if scenario == "base":
            self.metrics = [(key, "no fault, %s over two rails (%s): rate" % (size, over),
                             "MB/s", True)]
        else:
            title = fault.SCENARIOS[scenario].title
            self.metrics = [
                (key, "rail loss (%s, %s): longest gap between two messages after the fault"
                 % (title, over), "s", False),
                (key + "_total", "rail loss: completion time of %s" % size, "s", False)]

    def run(self, build, osu_dir):
        try:
            exe = ft_stream(build)
        except (OSError, subprocess.CalledProcessError) as e:
            return None, {"error": "ft_stream not built with %s: %s" % (build, e)}, ""
        # pxrun's ranks die with it (PR_SET_PDEATHSIG), and leftovers in the
        # nodes go with the fabric: no reaping by binary path, which others
        # on this machine may be running too.
        row = fault.run_one(self.scenario, "rails", self.lib, exe, build, reap=False)
        cmd = row["command"].replace(ROOT + "/", "")
        if row["outcome"] != "completed, verified":
            return None, row, cmd
        if self.scenario == "base":
            if row.get("rate_MBs") is None:
                return None, row, cmd
            return {self.key: row["rate_MBs"]}, row, cmd
        if row["max_stall_s"] is None:
            return None, row, cmd
        return {self.key: row["max_stall_s"], self.key + "_total": row["completion_s"]}, row, cmd


def coll(bench, size, iters, warmup, np, nodes=None):
    name = bench.split("/")[-1]
    if nodes:
        key = "%s8_%d" % (name[4:], size)
        title = "%s %s, 8 ranks on 4 nodes (2 per node)" % (name, size_label(size))
        argv = multirail.osu("plexus", bench, compare.osu_args(size, iters, warmup),
                             nodes=nodes, rails="rail0", np=np, ppn=2)
    else:
        key = "%s%d_%d" % (name[4:], np, size)
        title = "%s %s, %d ranks on one node (%d cores)" % (name, size_label(size), np,
                                                           os.cpu_count())
        argv = compare.Case(key, title, bench, size, "µs", False,
                            compare.osu_args(size, iters, warmup), np=np).run_args("plexus")
    return OsuCase(key, title, "µs", False, size, argv)


def size_label(size):
    for unit, n in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= n and size % n == 0:
            return "%d %s" % (size // n, unit)
    return "%d B" % size


def bw_case(key, title, env=(), net=None):
    argv = multirail.osu("plexus", "pt2pt/osu_bw", multirail.bw_args(MB4), env=env)
    if net:
        argv[1:1] = ["--net", net]
    return OsuCase(key, title, "MB/s", True, MB4, argv)


class Group:
    def __init__(self, num, name, title, fabric, cases):
        self.num = num
        self.name = name
        self.title = title
        self.fabric = fabric  # pxfab commands (multirail.up), None: no fabric
        self.cases = cases


def groups():
    one_rail = [("up", "--nodes", 2, "--rails", 1, "--rate", compare.UNSHAPED)]
    return [
        Group("1", "shm", "2 ranks on one node, shared memory", None, [
            OsuCase.of_compare("shm_lat", "shm: osu_latency 8 B"),
            OsuCase.of_compare("shm_bw", "shm: osu_bw 4 MB")]),
        Group("2", "tcp", "2 nodes, one rail (TCP)", one_rail, [
            OsuCase.of_compare("ns_lat", "tcp, 2 nodes: osu_latency 8 B"),
            OsuCase.of_compare("ns_bw", "tcp, 2 nodes: osu_bw 4 MB")]),
        Group("3", "rails2", "2 nodes, two rails of 1 Gbit/s", multirail.rails_fabric(False), [
            bw_case("rails2_bw", "two rails of 1 Gbit/s: osu_bw 4 MB"),
            OsuCase("rails2_lat", "two rails of 1 Gbit/s: osu_latency 8 B", "µs", False, 8,
                    multirail.osu("plexus", "pt2pt/osu_latency",
                                  compare.osu_args(8, 20000, 2000)))]),
        Group("4", "rails_uneq", "2 nodes, rails of 1 Gbit/s and 250 Mbit/s",
              multirail.rails_fabric(True), [
                  bw_case("rails_uneq_bw", "rails of 1 Gbit/s + 250 Mbit/s: osu_bw 4 MB")]),
        Group("5", "stall", "bench/fault.py scenario %s" % STALL_SCENARIO,
              [("up",) + tuple(fault.fabric_args(fault.SCENARIOS[STALL_SCENARIO].fabric, "1gbit"))],
              [StreamCase("stall", STALL_SCENARIO), StreamCase("nofault", "base"),
               StreamCase("nofault_udp", "base", "plexus-udp")]),
        Group("6", "oversub", "4 ranks on one node", None, [
            coll("collective/osu_allreduce", 8, 5000, 500, 4),
            coll("collective/osu_allreduce", 65536, 500, 50, 4)]),
        Group("7", "coll8", "8 ranks on 4 nodes, one rail (TCP between nodes)",
              [("up", "--nodes", 4, "--rails", 1, "--rate", compare.UNSHAPED)], [
                  coll("collective/osu_allreduce", 8, 2000, 200, 8, NODES4),
                  coll("collective/osu_allreduce", 65536, 200, 20, 8, NODES4),
                  coll("collective/osu_allreduce", 1048576, 40, 4, 8, NODES4),
                  coll("collective/osu_alltoall", 8, 2000, 200, 8, NODES4),
                  coll("collective/osu_alltoall", 65536, 100, 10, 8, NODES4),
                  coll("collective/osu_alltoall", 1048576, 20, 2, 8, NODES4)]),
        Group("8", "zcopy", "2 nodes, two rails of 1 Gbit/s, datagrams with udp-zcopy",
              multirail.rails_fabric(False), [
                  bw_case("zcopy_bw", "udp-zcopy over two rails of 1 Gbit/s: osu_bw 4 MB",
                          env=("PX_CHANNELS=size>=64k:udp-zcopy|*:udp",), net="udp")]),
    ]


def fabric_text(cmds):
    return "; ".join("tools/pxfab " + " ".join(str(a) for a in c) for c in cmds)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def select(all_groups, tokens):
    """[(group, [cases])] for --cases tokens (group numbers, group names, case keys)."""
    if not tokens:
        return [(g, list(g.cases)) for g in all_groups]
    want = set()
    for t in tokens:
        for k in t.split(","):
            if k.strip():
                want.add(k.strip())
    known = {g.num for g in all_groups} | {g.name for g in all_groups} | \
        {c.key for g in all_groups for c in g.cases}
    unknown = sorted(want - known)
    if unknown:
        raise ValueError("unknown case(s): %s (see --list)" % ", ".join(unknown))
    out = []
    for g in all_groups:
        cs = [c for c in g.cases if {g.num, g.name, c.key} & want]
        if cs:
            out.append((g, cs))
    return out


def osu_dir_of(d):
    d = os.path.abspath(d)
    if not os.path.isdir(os.path.join(d, "c", "mpi")) and \
            os.path.isdir(os.path.join(d, "src", "c", "mpi")):
        d = os.path.join(d, "src")  # bench/osu/build.sh --dest DIR puts the build in DIR/src
    return d


def libmpi_of(build, osu_dir):
    """The libmpi that an OSU binary loads with LD_LIBRARY_PATH=build/lib."""
    prog = os.path.join(osu_dir, "c", "mpi", "pt2pt", "standard", "osu_latency")
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(build, "lib"))
    r = subprocess.run(["ldd", prog], capture_output=True, text=True, env=env)
    m = re.search(r"libmpi\.so\S* => (\S+)", r.stdout)
    return os.path.realpath(m.group(1)) if m else None


def build_info(build):
    """Where a build's source is and which commit it was (from its CMake cache)."""
    info = {"build": build}
    try:
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            m = re.search(r"^CMAKE_HOME_DIRECTORY:INTERNAL=(.*)$", f.read(), re.M)
    except OSError:
        m = None
    if not m:
        return info
    src = info["source"] = m.group(1)
    git = ["git", "--no-optional-locks", "-C", src]
    r = subprocess.run(git + ["rev-parse", "--short=12", "HEAD"], capture_output=True, text=True)
    if r.returncode == 0:
        dirty = subprocess.run(git + ["diff-index", "--quiet", "HEAD", "--"],
                               capture_output=True).returncode == 1
        info["commit"] = r.stdout.strip() + (" + uncommitted changes" if dirty else "")
    return info


def describe(info):
    s = info["build"]
    if info.get("commit"):
        s += " (%s at %s)" % (info.get("source", "?"), info["commit"])
    return s


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", help="build directory of the reference (e.g. the previous commit)")
    ap.add_argument("--new", help="build directory under test")
    ap.add_argument("--osu-dir", help="OSU build against Plexus (its src/, or bench/osu/build.sh's --dest)")
    ap.add_argument("--reps", type=int, default=3, help="runs per case and build (default 3)")
    ap.add_argument("--cases", nargs="*", default=[],
                    help="group numbers or names, or case keys, comma or space separated "
                         "(default: all; see --list)")
    ap.add_argument("--list", action="store_true", help="list the groups and cases and exit")
    ap.add_argument("--json", default="", help="raw results (default bench/results/ab-DATE.json)")
    args = ap.parse_args()

    all_groups = groups()
    if args.list:
        for g in all_groups:
            print("%s %-10s %s%s" % (g.num, g.name, g.title,
                                     "" if g.fabric is None else " [root; %s]" % fabric_text(g.fabric)))
            for c in g.cases:
                for key, title, unit, _ in c.metrics:
                    print("    %-20s %s (%s)" % (key, title, unit))
        return 0
    for opt in ("old", "new", "osu_dir"):
        if not getattr(args, opt):
            ap.error("--%s is required" % opt.replace("_", "-"))
    if args.reps < 1:
        ap.error("--reps must be at least 1")
    try:
        todo = select(all_groups, args.cases)
    except ValueError as e:
        ap.error(str(e))

    builds = {"old": os.path.abspath(args.old), "new": os.path.abspath(args.new)}
    osu_dir = osu_dir_of(args.osu_dir)
    for side, b in builds.items():
        if not os.access(os.path.join(b, "bin", "pxrun"), os.X_OK):
            ap.error("--%s %s: no bin/pxrun there (not a Plexus build?)" % (side, b))
    if not os.path.isdir(os.path.join(osu_dir, "c", "mpi")):
        ap.error("--osu-dir %s: no OSU build there (bench/osu/build.sh --dest DIR, then DIR/src)"
                 % osu_dir)
    info = {side: build_info(b) for side, b in builds.items()}
    for side, b in builds.items():
        lib = libmpi_of(b, osu_dir)
        info[side]["libmpi"] = lib
        if not lib or not lib.startswith(os.path.realpath(os.path.join(b, "lib")) + os.sep):
            print("ab: with LD_LIBRARY_PATH=%s/lib the OSU binaries load %s, not the %s build's "
                  "libmpi; is %s a Plexus build of the same ABI?" % (b, lib, side, b),
                  file=sys.stderr)
            return 1
    if builds["old"] == builds["new"]:
        log("ab: --old and --new are the same build (the table then shows the noise)")

    if os.geteuid() != 0 and any(g.fabric for g, _ in todo):
        log("ab: skipping the groups on emulated nodes (%s): they need root"
            % ", ".join(g.name for g, _ in todo if g.fabric))
        todo = [(g, cs) for g, cs in todo if not g.fabric]

    def on_signal(signum, _frame):  # take the running job and the fabric down with us
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_signal)

    results = {}   # metric key -> side -> {"values", "fails"}
    commands = {}  # case key -> side -> command
    ran_groups = []
    t_start = time.time()
    try:
        for g, cases in todo:
            if g.fabric:
                if compare.fabric_up():
                    log("ab: skipping group %s (%s): a pxfab fabric is up already "
                        "('tools/pxfab down' first if it is a leftover)" % (g.num, g.name))
                    continue
                log("ab: group %s (%s): %s" % (g.num, g.name, fabric_text(g.fabric)))
                try:
                    multirail.up(g.fabric)
                except RuntimeError as e:
                    log("ab: skipping group %s: %s" % (g.num, e))
                    continue
            else:
                log("ab: group %s (%s)" % (g.num, g.name))
            ran_groups.append(g)
            try:
                for c in cases:
                    for key, *_ in c.metrics:
                        results[key] = {s: {"values": [], "fails": []} for s in SIDES}
                    commands[c.key] = {}
                    for rep in range(args.reps):
                        for side in SIDES:
                            t0 = time.time()
                            vals, bad, cmd = c.run(builds[side], osu_dir)
                            commands[c.key][side] = cmd
                            for key, *_ in c.metrics:
                                r = results[key][side]
                                if vals is None:
                                    r["fails"].append(bad)
                                else:
                                    r["values"].append(vals[key])
                            status = ("FAILED" if vals is None else
                                      ", ".join("%s %s" % (k, compare.fmt(v)) for k, v in vals.items()))
                            log("ab: %-16s %s run %d/%d: %s (%.1f s)"
                                % (c.key, side, rep + 1, args.reps, status, time.time() - t0))
                            if vals is None and bad and bad.get("tail"):
                                log("  " + "\n  ".join(bad["tail"].strip().splitlines()[-8:]))
            finally:
                if g.fabric:
                    multirail.fab("down", check=False)
    except KeyboardInterrupt:
        log("ab: interrupted; reporting what ran.")
    elapsed = time.time() - t_start

    # ---- report ----
    mach = compare.machine()
    now = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    lines = ["A/B run %s on %s (%d cores, Linux %s), %.0f min; median of %d runs per build, "
             "old and new alternating, [min–max] in brackets. new/old: below 1 is faster for "
             "times (µs, s), above 1 for rates (MB/s)."
             % (now, mach["cpu"] or "?", mach["nproc"], mach["kernel"], elapsed / 60, args.reps),
             "", "- old: " + describe(info["old"]), "- new: " + describe(info["new"]),
             "- OSU: " + compare.rel(osu_dir), "",
             "| case | old | new | new/old |", "|---|---|---|---|"]
    summary = {}
    apart = []
    for g in ran_groups:
        for c in dict(todo)[g]:
            for key, title, unit, hb in c.metrics:
                if key not in results:
                    continue
                cells = []
                for side in SIDES:
                    r = results[key][side]
                    s = summary[(key, side)] = compare.summarize(r["values"])
                    if s is None:
                        cells.append("failed (%d/%d)" % (len(r["fails"]), args.reps)
                                     if r["fails"] else "not run")
                        continue
                    cell = "%s [%s–%s]" % (compare.fmt(s["median"]), compare.fmt(s["min"]),
                                           compare.fmt(s["max"]))
                    if r["fails"]:
                        cell += " (%d failed)" % len(r["fails"])
                    cells.append(cell)
                so, sn = summary[(key, "old")], summary[(key, "new")]
                ratio = sn["median"] / so["median"] if so and sn and so["median"] else None
                if ratio is not None and (sn["min"] > so["max"] or sn["max"] < so["min"]):
                    better = (sn["median"] > so["median"]) == hb
                    apart.append("%s %s (%.2f)" % (key, "better" if better else "worse", ratio))
                lines.append("| %s (%s, %s is better) | %s | %s | %s |"
                             % (title, unit, "higher" if hb else "lower", cells[0], cells[1],
                                "%.2f" % ratio if ratio is not None else "–"))
    if apart and args.reps >= 3:
        lines += ["", "Ranges that do not overlap (new against old): " + "; ".join(apart) + "."]
    wide = ["%s %s %.0f%%" % (key, side, s["spread"] * 100)
            for (key, side), s in summary.items() if s and s["spread"] > 0.10]
    if wide:
        lines += ["", "Wide spreads (max−min over median above 10%): " + "; ".join(wide) + "."]

    lines += ["", "Commands (from the repository root; old and new differ only in the build):", ""]
    for g in ran_groups:
        lines.append("- group %s, %s%s" % (g.num, g.title,
                                           ": `%s`" % fabric_text(g.fabric) if g.fabric else ""))
        for c in dict(todo)[g]:
            for side in SIDES:
                cmd = commands.get(c.key, {}).get(side)
                if cmd:
                    lines.append("  - %s, %s: `%s`" % (c.key, side, cmd))
    print("\n".join(lines), flush=True)

    path = args.json or os.path.join(
        compare.RESULTS, "ab-%s.json" % datetime.datetime.now().strftime("%Y%m%d-%H%M%S"))
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    cases = {}
    for g in ran_groups:
        for c in dict(todo)[g]:
            for key, title, unit, hb in c.metrics:
                if key in results:
                    cases[key] = {"group": g.name, "title": title, "unit": unit,
                                  "higher_better": hb, "fabric": fabric_text(g.fabric) if g.fabric else None,
                                  "command": commands.get(c.key, {}),
                                  "runs": results[key],
                                  "summary": {s: summary.get((key, s)) for s in SIDES}}
    with open(path, "w") as f:
        json.dump({"date": now, "machine": mach, "reps": args.reps, "seconds": round(elapsed),
                   "osu_dir": osu_dir, "builds": info, "cases": cases}, f, indent=1)
    log("ab: raw results in %s" % compare.rel(os.path.abspath(path)))
    both = any(summary.get((k, "old")) and summary.get((k, "new")) for k in results)
    return 0 if both else 1


if __name__ == "__main__":
    sys.exit(main())
