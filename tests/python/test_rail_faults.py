"""Rail and path failures under a running job, on emulated fabrics (root).

Each scenario runs tests/mpi/ft_stream (numbered, checksummed messages of
1 KiB to 4 MiB, nonblocking windows, blocking exchanges and allreduces)
between two emulated nodes while a timer thread breaks the fabric, and
asserts on ft_stream's JSON verdict (nothing lost, duplicated, reordered or
corrupted), on how long traffic stalled, on the rates before, during and
after the fault, and on how and when the job ended:

  baseline   no fault: correct, both rails carry traffic;
  1          one rail down for good: completes, stall <= 1 s, rate afterwards
             >= 90% of what the surviving rail alone carries; the same with
             non-contiguous messages of 16 and 24 MB (through rings);
  2          one rail down 20 s, then up: continues on the other rail; the
             rail carries traffic again within 5 s of coming back;
  3          one rail flapping (down/up every second) for FLAP_FOR seconds;
  4          5% random loss on one rail for the whole run;
  5          every rail down 10 s (< PX_PARTITION_TIMEOUT), then up: completes;
  6          every rail down for good, PX_PARTITION_TIMEOUT=4: a clear error
             naming the peer within timeout + 2 s, non-zero exit, no process left;
  7          fat-tree, 2 paths: a leaf-spine link down, the other path carries on;
  rma        one-sided epochs (tests/mpi/ft_rma: puts, gets and accumulates
             between fences, checked every epoch) with one rail down for good:
             data intact, every accumulate applied exactly once, stall <= 1 s;
  1 (3 rails) one of three rails down for good: its unacknowledged stripes
             are re-split over the two survivors, which both carry on;
  ft-off     PX_RAIL_FT=0 and one rail down: the job fails with a clear error;
  udp        with PX_NET=udp: both rails in use, 5% loss on every rail, and
             one rail down for good (the rail layer's own acknowledgements
             and retransmissions); 5% loss on every rail with large messages
             by udp-zcopy (its own acknowledgements and go-back-N); every
             packet dropped with the links up (a clear error, no hang); a
             peer busy for longer than PX_PARTITION_TIMEOUT (no error).

The faults (what breaks, in which order) are plexus.fab.scenarios, shared
with bench/fault.py; the times are this file's. Faults are cleared in finally
blocks (pxfab fault reset). PX_BUILD_DIR selects the build (default:
<repo>/build).
"""

import json
import os
import re
import signal
import subprocess
import threading
import time

import pytest

from conftest import ROOT, module_fabric, pxfab, stats
from plexus.fab import scenarios
from plexus.fab.scenarios import CUT, RAILS, SPINES

BUILD = os.environ.get("PX_BUILD_DIR", os.path.join(ROOT, "build"))
PXRUN = os.path.join(BUILD, "bin", "pxrun")
FT = os.path.join(BUILD, "tests", "mpi", "ft_stream")
FT_RMA = os.path.join(BUILD, "tests", "mpi", "ft_rma")

RATE = "200mbit"          # per rail: the network, not the 2 cores, is the bottleneck
UPLINK_RATE = "100mbit"   # fat-tree leaf-spine links (scenario 7)
PAIR = "node0:1,node1:1"  # rank 0 on node0 streams to rank 1 on node1
MANY = "node0:2,node1:2"  # 4 ranks, every rank to every other (--mode all)
FLAP_FOR = 30             # seconds of flapping in scenario 3
MAX_STALL_S = 1.0         # a rail failure may stop traffic this long at most
# Messages of at most 1 MiB where the stall is asserted: at 200 Mbit/s one
# 4 MiB message alone keeps the only surviving rail busy for 0.18 s, which is
# message size, not failover (the stall is the longest time between two
# completed messages).
STALL_SIZES = ["--sizes", "1k,48k,1m"]
PARTITION_TIMEOUT = 4     # scenario 6
EXIT_SLACK_S = 1.5        # launcher tear-down on top of timeout + 2 s
UDP_TWO_RAILS = 1.5       # datagrams over both rails, against one rail with tcp
UDP_LOSSY = 0.3           # ... with 5% loss on every rail
# A job that lost every path to a peer must say which one (rank N) and why.
PEER_LOST_RE = re.compile(r"rank \d+.*\b(unreachable|partition(ed)?)\b"
                          r"|\b(unreachable|partition(ed)?)\b.*rank \d+", re.I)
# With failover off, a rail failure must end the job with an error about it.
FT_OFF_RE = re.compile(r"rank \d+.*\b(rail\d|unreachable|partition|connection|DOWN)\b", re.I)


def need_programs():
    for p in (PXRUN, FT):
        if not os.access(p, os.X_OK):
            pytest.skip(f"{p} not built (set PX_BUILD_DIR)")


class Run:
    """One ft_stream job: exit code, output, verdict, timing, link samples."""

    def __init__(self):
        self.rc = None
        self.out = self.err = ""
        self.result = None
        self.t0 = None          # FT_START (wall clock, shared with the ranks)
        self.t_exit = None
        self.events = {}        # name -> wall time an injected fault took effect
        self.samples = []       # (wall time, {link: bytes the node end sent})
        self.hung = False

    def rel(self, name):
        return self.events[name] - self.t0

    def why(self):
        lines = self.err.strip().splitlines()
        tail = "\n".join(lines[-25:])
        # a job that hung says where each rank waits (pxrun --timeout asks
        # for the ranks' state): that first, so it survives any cut
        state = "\n".join(l for l in lines if " state] " in l)
        state = f"ranks' state when ended:\n{state}\n" if state else ""
        return f"rc={self.rc} result={self.result}\n{state}stdout tail:\n" \
               f"{self.out.strip()[-1500:]}\nstderr tail:\n{tail}"


def ft_stream(hosts, args, env=None, plan=(), sample=(), timeout=None, prog=FT):
    """Run ft_stream (or prog, which speaks the same: FT_START, a JSON verdict)
    with pxrun; plan: [(seconds after FT_START, name, fn)] run
    in a timer thread; sample: links whose counters are read every 0.25 s.
    pxrun ends the job `timeout` seconds after launch (default: the stream's
    --seconds + 30)."""
    if timeout is None:
        timeout = int(float(args[args.index("--seconds") + 1])) + 30
    cmd = [PXRUN, "--launcher", "ip netns exec {host}", "--hosts", hosts,
           "--bootstrap-iface", "pxf-mgmt", "--timeout", str(timeout)]
    for k, v in (env or {}).items():
        cmd += ["--env", f"{k}={v}"]
    cmd += [prog] + [str(a) for a in args]
    r = Run()
    started = threading.Event()
    done = threading.Event()
    errors = []
    # pxrun hands PX_* variables to the ranks; the test's own is not one of theirs
    penv = {k: v for k, v in os.environ.items() if k != "PX_BUILD_DIR"}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env=penv)
    out_lines, err_lines = [], []

    def read_out():
        for line in proc.stdout:
            out_lines.append(line)
            m = re.match(r"FT_START epoch=([\d.]+)", line)
            if m:
                r.t0 = float(m.group(1))
                started.set()

    def read_err():
        for line in proc.stderr:
            err_lines.append(line)

    def inject():
        if not started.wait(60):
            return
        for at, name, fn in sorted(plan, key=lambda x: x[0]):
            delay = r.t0 + at - time.time()
            if done.wait(max(0.0, delay)):
                return
            try:
                fn()
                r.events[name] = time.time()
            except Exception as e:  # noqa: BLE001  reported by the test
                errors.append(f"{name}: {e}")

    def sampler():
        if not started.wait(60):
            return
        while not done.is_set():
            try:
                s = stats(*sample)
                r.samples.append((time.time(), {l: s[l]["a_to_b"]["bytes"] for l in sample}))
            except Exception as e:  # noqa: BLE001
                errors.append(f"stats: {e}")
            done.wait(0.25)

    threads = [threading.Thread(target=read_out), threading.Thread(target=read_err),
               threading.Thread(target=inject)]
    if sample:
        threads.append(threading.Thread(target=sampler))
    for t in threads:
        t.start()
    try:
        try:
            proc.wait(timeout=timeout + 15)
        except subprocess.TimeoutExpired:
            r.hung = True
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        r.t_exit = time.time()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        done.set()
        started.set()
        for t in threads:
            t.join(timeout=60)
    r.rc = proc.returncode
    r.out, r.err = "".join(out_lines), "".join(err_lines)
    for line in out_lines:
        if line.startswith("{"):
            r.result = json.loads(line)
    assert not errors, f"fault injection failed: {errors}"
    return r


def assert_correct(r):
    """The job finished by itself and ft_stream found nothing wrong."""
    assert not r.hung and "job timed out" not in r.err, "job hung: " + r.why()
    assert r.rc == 0 and r.result is not None, r.why()
    res = r.result
    assert res["ok"] and res["lost"] == 0 and res["dup"] == 0 and res["corrupt"] == 0 \
        and res.get("order", 0) == 0 and res.get("coll_bad", 0) == 0, r.why()
    assert "PASS ft_stream" in r.out, r.why()


def leftovers():
    """Pids of ft_stream ranks still alive (a few moments for them to go)."""
    pat = "^" + re.escape(FT) + "( |$)"
    for _ in range(20):
        p = subprocess.run(["pgrep", "-f", pat], capture_output=True, text=True)
        if not p.stdout.strip():
            return []
        time.sleep(0.1)
    return p.stdout.split()


def plan(key, **timing):
    """The injections of a fault scenario at the given times, for ft_stream."""
    return scenarios.plan(scenarios.scenario(key, **timing), lambda *a: pxfab("fault", *a))


def stream_args(seconds, fault_at=None, fault_end=None, mode="pairs", extra=()):
    a = ["--seconds", seconds, "--mode", mode]
    if fault_at is not None:
        a += ["--fault-at", fault_at]
    if fault_end is not None:
        a += ["--fault-end", fault_end]
    return a + list(extra)


# ---------- two nodes, two rails ----------

@pytest.fixture(scope="module")
def two_rails():
    need_programs()
    yield from module_fabric(*scenarios.fabric_args("rails", RATE))


@pytest.fixture(scope="module")
def one_rail_rate(two_rails):
    """MB/s that rail0 alone carries for ft_stream (after a 1 s ramp)."""
    r = ft_stream(PAIR, stream_args(5, fault_at=1), env={"PX_RAILS": "rail0"})
    assert_correct(r)
    rate = r.result["rate_after_MBs"]
    assert rate > 5, f"rail0 alone carried {rate} MB/s at {RATE}: {r.why()}"
    return rate


@pytest.fixture(autouse=True)
def clear_faults():
    yield
    if os.path.exists("/run/pxfab/state.json"):
        pxfab("fault", "reset", check=False)


def test_baseline_no_fault(two_rails, one_rail_rate):
    links = RAILS
    # the epoch's exchange nonblocking too (every completion timed)
    r = ft_stream(PAIR, stream_args(6, fault_at=1, extra=["--exchange", "watched"]), sample=links)
    assert_correct(r)
    moved = {l: r.samples[-1][1][l] - r.samples[0][1][l] for l in links}
    for l in links:
        assert moved[l] > 0.2 * sum(moved.values()), f"{l} idle: {moved}"
    assert r.result["rate_after_MBs"] >= 1.6 * one_rail_rate, \
        f"two rails {r.result['rate_after_MBs']} MB/s, one rail {one_rail_rate}: {r.why()}"


def rail_down_for_good(one_rail_rate, env, min_ratio):
    """Scenario 1: rail1 down at 3 s; stall and rate afterwards bounded."""
    try:
        r = ft_stream(PAIR, stream_args(10, fault_at=3, extra=STALL_SIZES), env=env,
                      plan=plan("1", at=3))
    finally:
        pxfab("fault", "reset")
    assert_correct(r)
    res = r.result
    assert res["stall_after_fault_s"] <= MAX_STALL_S, r.why()
    assert res["rate_after_MBs"] >= min_ratio * one_rail_rate, \
        f"after: {res['rate_after_MBs']} MB/s, rail0 alone: {one_rail_rate}: {r.why()}"
    return r


def test_1_rail_down_for_good(two_rails, one_rail_rate):
    r = rail_down_for_good(one_rail_rate, {"PX_PROFILE": "1"}, 0.9)
    assert "DOWN" in r.err, "no subchannel DOWN event logged: " + r.why()
    assert "faults:" in r.err, "PX_PROFILE=1 printed no fault counters: " + r.why()


def test_1_rail_down_non_contiguous(two_rails, one_rail_rate):
    """Scenario 1 with messages of a non-contiguous type of 16 and 24 MB,
    each through a ring of two 4 MB windows at either end
    (src/proto/proto_ring.c): the frames the failed rail held go again from
    the sender's ring, whose places are written again only once their
    frames are acknowledged; none is lost, repeated or corrupted."""
    args = stream_args(10, fault_at=3,
                       extra=["--layout", "swapped", "--sizes", "16m,24m", "--window", "2"])
    try:
        r = ft_stream(PAIR, args, plan=plan("1", at=3))
    finally:
        pxfab("fault", "reset")
    assert_correct(r)
    assert r.result["rate_after_MBs"] >= 0.8 * one_rail_rate, \
        f"after: {r.result['rate_after_MBs']} MB/s, rail0 alone: {one_rail_rate}: {r.why()}"


def test_rma_rail_down_for_good(two_rails):
    """Scenario 1 under one-sided communication: puts and gets striped over
    both rails and accumulates in flight when rail1 goes down; the frames
    of the failed rail go again on the other exactly once."""
    if not os.access(FT_RMA, os.X_OK):
        pytest.skip(f"{FT_RMA} not built")
    try:
        r = ft_stream(PAIR, ["--seconds", 10, "--fault-at", 3], env={"PX_PROFILE": "1"},
                      plan=plan("1", at=3), prog=FT_RMA)
    finally:
        pxfab("fault", "reset")
    assert not r.hung and "job timed out" not in r.err, "job hung: " + r.why()
    assert r.rc == 0 and r.result is not None, r.why()
    res = r.result
    assert res["ok"] and res["lost"] == 0 and res["dup"] == 0 and res["corrupt"] == 0, r.why()
    assert res["epochs"] > 100, r.why()
    assert res["stall_after_fault_s"] <= MAX_STALL_S, r.why()
    assert "DOWN" in r.err, "no subchannel DOWN event logged: " + r.why()
    assert "PASS ft_rma" in r.out, r.why()
    print("ft_rma:", json.dumps(res))


def first_use_after(r, link, t_from, min_bytes=1_000_000):
    """Seconds from t_from until link had sent min_bytes more than at t_from."""
    base = None
    for t, b in r.samples:
        if t < t_from:
            continue
        if base is None:
            base = b[link]
        elif b[link] - base >= min_bytes:
            return t - t_from
    return None


def test_2_rail_down_20s_then_up(two_rails, one_rail_rate):
    try:
        r = ft_stream(PAIR, stream_args(30, fault_at=3, fault_end=23),
                      plan=plan("2", at=3, end=23),
                      sample=(CUT, "node0:rail0"))
    finally:
        pxfab("fault", "reset")
    assert_correct(r)
    res = r.result
    assert res["rate_during_MBs"] >= 0.7 * one_rail_rate, \
        f"during the outage {res['rate_during_MBs']} MB/s, rail0 alone {one_rail_rate}: {r.why()}"
    back = first_use_after(r, CUT, r.events["up"])
    assert back is not None and back <= 5.0, \
        f"{CUT} back in use {back} s after coming up; samples {r.samples[-8:]}: {r.why()}"


def test_3_rail_flapping(two_rails, one_rail_rate):
    start = 3
    try:
        r = ft_stream(MANY, stream_args(start + FLAP_FOR + 4, fault_at=start,
                                        fault_end=start + FLAP_FOR, mode="all"),
                      plan=plan("3", at=start, period=2, duration=FLAP_FOR))
    finally:
        pxfab("fault", "reset")
    assert_correct(r)
    # the other rail is always there: traffic keeps moving through the flapping
    assert r.result["rate_during_MBs"] >= 0.5 * one_rail_rate, r.why()


def test_4_loss_on_one_rail(two_rails, one_rail_rate):
    try:
        r = ft_stream(MANY, stream_args(10, fault_at=0.5, mode="all"),
                      plan=plan("4", at=0.5, percent=5))
    finally:
        pxfab("fault", "reset")
    assert_correct(r)
    assert r.result["rate_after_MBs"] >= 0.5 * one_rail_rate, r.why()


def test_5_all_rails_down_10s_then_up(two_rails, one_rail_rate):
    try:
        r = ft_stream(MANY, stream_args(18, fault_at=3, fault_end=13, mode="all"),
                      env={"PX_PARTITION_TIMEOUT": 30}, plan=plan("5", at=3, end=13))
    finally:
        pxfab("fault", "reset")
    assert_correct(r)
    res = r.result
    # the outage really stopped the stream, and it came back afterwards
    assert res["max_stall_s"] >= 5, r.why()
    assert res["rate_after_MBs"] >= 0.5 * one_rail_rate, r.why()


def test_6_all_rails_down_for_good(two_rails):
    try:
        r = ft_stream(PAIR, stream_args(40, fault_at=3),
                      env={"PX_PARTITION_TIMEOUT": PARTITION_TIMEOUT},
                      plan=plan("6", at=3),
                      timeout=60)
    finally:
        pxfab("fault", "reset")
    left = leftovers()
    assert not r.hung and "job timed out" not in r.err, "job hung: " + r.why()
    assert r.rc != 0, r.why()
    took = r.t_exit - r.events["partition"]
    assert took <= PARTITION_TIMEOUT + 2 + EXIT_SLACK_S, f"ended {took:.1f} s after the fault: " + r.why()
    assert PEER_LOST_RE.search(r.err), "no message naming the unreachable peer: " + r.why()
    assert not left, f"ft_stream processes left: {left}"


def test_ft_off_one_rail_down_fails_cleanly(two_rails):
    bound = 20
    try:
        r = ft_stream(PAIR, stream_args(60, fault_at=2), env={"PX_RAIL_FT": 0},
                      plan=plan("1", at=2), timeout=bound + 10)
    finally:
        pxfab("fault", "reset")
    left = leftovers()
    assert not r.hung and "job timed out" not in r.err, "job hung: " + r.why()
    assert r.rc != 0, "PX_RAIL_FT=0 rode through a rail failure: " + r.why()
    took = r.t_exit - r.events["down"]
    assert took <= bound, f"ended {took:.1f} s after the fault: " + r.why()
    assert FT_OFF_RE.search(r.err), "no clear error message: " + r.why()
    assert not left, f"ft_stream processes left: {left}"


# ---------- the same two rails with datagrams (PX_NET=udp) ----------

UDP = {"PX_NET": "udp", "PX_PROFILE": "1"}
RETX_RE = re.compile(r"reliability: retransmitted on timeout (\d+) fast (\d+)")


def retransmitted(r):
    return sum(int(a) + int(b) for a, b in RETX_RE.findall(r.err))


def test_udp_both_rails(two_rails, one_rail_rate):
    links = RAILS
    r = ft_stream(PAIR, stream_args(6, fault_at=1), env=UDP, sample=links)
    assert_correct(r)
    moved = {l: r.samples[-1][1][l] - r.samples[0][1][l] for l in links}
    for l in links:
        assert moved[l] > 0.2 * sum(moved.values()), f"{l} idle: {moved}"
    assert r.result["rate_after_MBs"] >= UDP_TWO_RAILS * one_rail_rate, \
        f"two rails {r.result['rate_after_MBs']} MB/s, one (tcp) rail {one_rail_rate}: {r.why()}"


def lossy_stream(seconds, env):
    """Every rank to every other, 5% of the datagrams lost each way on both
    rails from 0.5 s on; the stream must still be correct."""
    try:
        r = ft_stream(MANY, stream_args(seconds, fault_at=0.5, mode="all"), env=env,
                      plan=plan("loss-all", at=0.5, percent=5))
    finally:
        pxfab("fault", "reset")
    assert_correct(r)
    return r


def test_udp_loss_on_every_rail(two_rails, one_rail_rate):
    """5% of the datagrams lost each way on both rails, every rank to every
    other: the rail layer's retransmissions deliver everything exactly once."""
    r = lossy_stream(10, UDP)
    assert retransmitted(r) > 0, "nothing was retransmitted: was anything lost? " + r.why()
    assert r.result["rate_after_MBs"] >= UDP_LOSSY * one_rail_rate, r.why()


ZC_RE = re.compile(r"udp-zcopy: .* rx transfers (\d+) bytes (\d+) in place (\d+) moved (\d+) "
                   r"dropped (\d+) bad (\d+) no socket (\d+) \| tx transfers (\d+) bytes (\d+) "
                   r"datagrams (\d+) resent bytes (\d+) timeouts (\d+)")


def test_udp_zcopy_loss_on_every_rail(two_rails, one_rail_rate):
    """PX_CHANNELS udp-zcopy (large messages over pooled sockets straight
    into the receive buffer, outside the rail layer's reliability) with 5%
    of the datagrams lost on both rails: its own acknowledgements and
    go-back-N deliver everything exactly once."""
    r = lossy_stream(6, dict(UDP, PX_CHANNELS="size>=64k:udp-zcopy|*:udp"))
    zc = [tuple(int(v) for v in m) for m in ZC_RE.findall(r.err)]
    assert len(zc) == 4, r.why()
    assert sum(z[0] for z in zc) > 0 and sum(z[2] for z in zc) > 0, f"no zero-copy transfer: {zc}"
    # received transfers and bytes match the sent ones, job-wide
    assert sum(z[0] for z in zc) == sum(z[7] for z in zc), zc
    assert sum(z[1] for z in zc) == sum(z[8] for z in zc), zc
    lost = sum(z[4] for z in zc)   # dropped as out of order after a loss
    resent = sum(z[10] for z in zc)
    assert lost > 0 and resent > 0, f"nothing lost or sent again: {zc}"
    assert r.result["rate_after_MBs"] >= UDP_LOSSY * one_rail_rate, r.why()


def test_udp_rail_down_for_good(two_rails, one_rail_rate):
    rail_down_for_good(one_rail_rate, UDP, 0.8)


BULK_MOVED_RE = re.compile(r"faults: .* bulk_moved (\d+) bulk_rest_bytes (\d+)")


def test_udp_zcopy_rail_down_for_good(two_rails, one_rail_rate):
    """Scenario 1 with udp-zcopy carrying the large messages: a transfer
    whose path fails stops where the receiver had it, and the rest goes in
    the channel's frames over the surviving rail; the checksummed stream
    loses and duplicates nothing, within the same stall bound."""
    env = dict(UDP, PX_CHANNELS="size>=64k:udp-zcopy|*:udp")
    r = rail_down_for_good(one_rail_rate, env, 0.5)
    zc = [tuple(int(v) for v in m) for m in ZC_RE.findall(r.err)]
    assert zc and sum(z[0] for z in zc) > 0, f"no zero-copy transfer: {r.why()}"
    moved = [(int(a), int(b)) for a, b in BULK_MOVED_RE.findall(r.err)]
    assert moved and sum(a for a, _ in moved) > 0, \
        "no transfer was under way on the failed rail: " + r.why()


def test_udp_silent_loss_for_good(two_rails):
    """Scenario 6 over datagrams with the links up: every packet of node1's
    rails dropped. No transport reports anything; the rail layer's path check
    (answered by the peer's kernel) finds the paths dead, and the job ends
    with the peer named after PX_PARTITION_TIMEOUT."""
    try:
        r = ft_stream(PAIR, stream_args(40, fault_at=3),
                      env=dict(UDP, PX_PARTITION_TIMEOUT=PARTITION_TIMEOUT), plan=plan("silent", at=3),
                      timeout=60)
    finally:
        pxfab("fault", "reset")
    left = leftovers()
    assert not r.hung and "job timed out" not in r.err, "job hung: " + r.why()
    assert r.rc != 0, r.why()
    took = r.t_exit - r.events["loss1"]
    detect = 0.5 * 2  # PX_RAIL_DETECT of silence, then a path check of as long
    assert took <= detect + PARTITION_TIMEOUT + 2 + EXIT_SLACK_S, \
        f"ended {took:.1f} s after the fault: " + r.why()
    assert PEER_LOST_RE.search(r.err), "no message naming the unreachable peer: " + r.why()
    assert not left, f"ft_stream processes left: {left}"


ONE_WAY_TABLE = "pxtest_oneway"


def one_way_udp(on):
    """Every datagram arriving at node1 on its rails dropped (on) or not: node1's
    own still reach node0, and TCP (the path check) passes both ways."""
    if not on:
        subprocess.run(["ip", "netns", "exec", "node1", "nft", "delete", "table", "netdev",
                        ONE_WAY_TABLE], capture_output=True)
        return
    chains = "".join(f'  chain in{i} {{ type filter hook ingress device "rail{i}" priority 0; '
                     f'meta l4proto udp counter drop; }}\n' for i in range(len(RAILS)))
    subprocess.run(["ip", "netns", "exec", "node1", "nft", "-f", "-"], check=True, text=True,
                   input=f"table netdev {ONE_WAY_TABLE} {{\n{chains}}}\n")


def test_udp_one_way_loss_ends_with_error(two_rails):
    """Over datagrams, everything node0 sends to node1 lost for good while
    node1's frames keep arriving: no silence shows it and node1's path check
    finds node0's kernel answering. node0 hears its peer but has nothing
    acknowledged, takes every subchannel down after 2 x PX_RAIL_DETECT, and
    the job ends with the peer named after PX_PARTITION_TIMEOUT instead of
    sending again until the launcher's timeout."""
    try:
        r = ft_stream(PAIR, stream_args(40, fault_at=3),
                      env=dict(UDP, PX_PARTITION_TIMEOUT=PARTITION_TIMEOUT),
                      plan=[(3, "oneway", lambda: one_way_udp(True))], timeout=60)
    finally:
        one_way_udp(False)
    left = leftovers()
    assert not r.hung and "job timed out" not in r.err, "job hung: " + r.why()
    assert r.rc != 0, r.why()
    took = r.t_exit - r.events["oneway"]
    assert took <= 2 * 0.5 + PARTITION_TIMEOUT + 1 + EXIT_SLACK_S, \
        f"ended {took:.1f} s after the fault: " + r.why()
    assert "acknowledged nothing" in r.err, "no message saying why: " + r.why()
    assert PEER_LOST_RE.search(r.err), "no message naming the unreachable peer: " + r.why()
    assert not left, f"ft_stream processes left: {left}"


def test_udp_busy_peer_is_not_lost(two_rails):
    """The other side of the path check: a peer that makes no MPI call for
    twice PX_PARTITION_TIMEOUT (tests/mpi/busy_peer) while its partner's
    frames wait is only busy; its kernel answers, the job completes."""
    prog = os.path.join(BUILD, "tests", "mpi", "busy_peer")
    if not os.access(prog, os.X_OK):
        pytest.skip(f"{prog} not built")
    cmd = [PXRUN, "--launcher", "ip netns exec {host}", "--hosts", PAIR, "--bootstrap-iface",
           "pxf-mgmt", "--timeout", "60", "--env", "PX_NET=udp", "--env", "PX_PARTITION_TIMEOUT=2",
           prog]
    penv = {k: v for k, v in os.environ.items() if k != "PX_BUILD_DIR"}
    p = subprocess.run(cmd, capture_output=True, text=True, env=penv, timeout=90)
    assert p.returncode == 0 and "PASS busy_peer np=2" in p.stdout, p.stdout + p.stderr


# ---------- three rails: two survivors ----------

RESPLIT_RE = re.compile(r"faults: .* resplit (\d+) pieces (\d+)")


@pytest.fixture(scope="module")
def three_rails():
    need_programs()
    yield from module_fabric(*scenarios.fabric_args("rails", RATE, rails=3))


def test_1_three_rails_one_down_resplit(three_rails):
    """Scenario 1 with two survivors: the stripes the failed rail had not got
    acknowledged are sent again cut by the survivors' weights (re-split),
    and both survivors carry the stream afterwards."""
    survivors = ("node0:rail0", "node0:rail2")
    # 1 MiB messages only: a stripe is re-split only when it is at least
    # twice PX_RAIL_RESPLIT_MIN (128 KiB), so with smaller messages in the mix
    # the cut could find nothing but small stripes unacknowledged
    try:
        r = ft_stream(PAIR, stream_args(8, fault_at=3, extra=["--sizes", "1m"]), env={"PX_PROFILE": "1"},
                      plan=plan("1", at=3), sample=survivors)
    finally:
        pxfab("fault", "reset")
    assert_correct(r)
    assert r.result["stall_after_fault_s"] <= MAX_STALL_S, r.why()
    split = [(int(a), int(b)) for a, b in RESPLIT_RE.findall(r.err)]
    assert split and sum(a for a, _ in split) > 0, "no stripe was re-split: " + r.why()
    assert all(b >= 2 * a for a, b in split), f"pieces per re-split stripe: {split}"
    after = [s for t, s in r.samples if t > r.events["down"] + 1]
    moved = {l: after[-1][l] - after[0][l] for l in survivors}
    for l in survivors:
        assert moved[l] > 0.3 * sum(moved.values()), f"after the cut: {moved}"


# ---------- fat-tree, two paths ----------

@pytest.fixture(scope="module")
def fat_tree():
    need_programs()
    # uplinks at half the node link's rate, so a path alone carries half of
    # what the two do
    yield from module_fabric(*scenarios.fabric_args("fattree", RATE, uplink_rate=UPLINK_RATE))


def test_7_leaf_spine_link_down(fat_tree):
    r1 = ft_stream(PAIR, stream_args(5, fault_at=1), env={"PX_PATHS": 1})
    assert_correct(r1)
    one_path = r1.result["rate_after_MBs"]
    assert one_path > 3, r1.why()
    links = SPINES
    try:
        r = ft_stream(PAIR, stream_args(10, fault_at=3),
                      plan=plan("7", at=3, link="leaf0:spine1"), sample=links)
    finally:
        pxfab("fault", "reset")
    assert_correct(r)
    res = r.result
    # the stall is the longest gap between completed messages: on a path of
    # a few MB/s one 4 MiB message alone takes a good part of a second. A
    # link failing inside the fabric gives no local error: it is found by
    # overdue acknowledgements (suspect, then down PX_RAIL_DETECT later),
    # measured 0.8-1.4 s in all (with 1 MiB messages 0.8-1.2 s), hence the
    # 0.25 s beyond the rule of the other scenarios
    bound = MAX_STALL_S + 4.2 / one_path + 0.25
    assert res["stall_after_fault_s"] <= bound, f"stall bound {bound:.2f} s: {r.why()}"
    assert res["rate_after_MBs"] >= 0.9 * one_path, \
        f"after: {res['rate_after_MBs']} MB/s, one path alone: {one_path}: {r.why()}"
    # both paths were in use before the cut
    before = [s for t, s in r.samples if t < r.events["down"]]
    moved = {l: before[-1][l] - before[0][l] for l in links}
    assert min(moved.values()) > 1_000_000, f"paths before the cut: {moved}"
