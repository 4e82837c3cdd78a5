"""MPI_T events of the rail layer under a real subchannel failure (root).

tests/mpi/mpit_events runs two ranks over TCP on two rails (two addresses
of a network namespace of the test's own, so that no fabric is needed and
none is disturbed) and records every rail_subchannel_state event while the
test drops every packet of the second rail with nftables, then lets them
through again. Each rank must see that subchannel go DOWN and come back
UP, each event once (the counters rail_downs and rail_recoveries over the
same time agree with the events), in timestamp order, with every element
read alike by MPI_T_event_read and MPI_T_event_copy; a registration whose
only callback needs MPI_T_CB_REQUIRE_NONE gets none of them, its dropped
handler counts them all instead. Meanwhile a tool thread of each rank
(MPI_T_init_thread with MPI_THREAD_MULTIPLE) reads every process-wide
performance variable over and over, without an error.
"""

import json
import os
import shutil
import subprocess
import time

import pytest

from conftest import ROOT

BUILD = os.environ.get("PX_BUILD_DIR", os.path.join(ROOT, "build"))
PXRUN = os.path.join(BUILD, "bin", "pxrun")
PROG = os.path.join(BUILD, "tests", "mpi", "mpit_events")
RAILS = ("10.201.0.1", "10.201.1.1")
SECONDS = 10
DOWN_AT, UP_AT = 2.5, 5.0   # seconds after the job's start
UP, SUSPECT, DOWN = 0, 1, 2


def sh(*args, check=True):
    p = subprocess.run(args, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError(f"{' '.join(args)}: {p.stderr.strip()}")
    return p


@pytest.fixture
def netns():
    if os.geteuid() != 0:
        pytest.skip("needs root (a network namespace and nftables)")
    for tool in ("ip", "nft"):
        if shutil.which(tool) is None:
            pytest.skip(f"'{tool}' is missing")
    for p in (PXRUN, PROG):
        if not os.access(p, os.X_OK):
            pytest.skip(f"{p} not built (set PX_BUILD_DIR)")
    ns = f"pxt-mpit-{os.getpid()}"
    sh("ip", "netns", "add", ns)
    try:
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        for a in RAILS:
            sh("ip", "-n", ns, "addr", "add", a + "/32", "dev", "lo")
        yield ns
    finally:
        sh("ip", "netns", "del", ns, check=False)


def nft(ns, *args):
    sh("ip", "netns", "exec", ns, "nft", *args)


def test_subchannel_down_and_up_events(netns):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PX_")}
    cmd = ["ip", "netns", "exec", netns, PXRUN, "-n", "2", "--timeout", str(SECONDS + 30),
           "--env", "PX_NET=tcp", "--env", "PX_RAILS=" + ",".join(RAILS),
           PROG, "--seconds", str(SECONDS)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    try:
        line = proc.stdout.readline()
        assert line.startswith("FT_START"), f"the job did not start: {line!r}"
        t0 = time.time()
        time.sleep(DOWN_AT)
        nft(netns, "add", "table", "ip", "pxt")
        nft(netns, "add", "chain", "ip", "pxt", "out",
            "{ type filter hook output priority 0; }")
        nft(netns, "add", "rule", "ip", "pxt", "out", "ip", "daddr", RAILS[1], "drop")
        time.sleep(max(0.0, t0 + UP_AT - time.time()))
        nft(netns, "delete", "table", "ip", "pxt")
        out, err = proc.communicate(timeout=SECONDS + 60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    why = f"rc={proc.returncode}\nstdout:\n{out[-3000:]}\nstderr:\n{err[-3000:]}"
    assert proc.returncode == 0 and "PASS mpit_events np=2" in out, why
    ranks = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    assert sorted(r["rank"] for r in ranks) == [0, 1], why
    for r in ranks:
        events = r["events"]
        assert r["bad_copy"] == 0 and r["bad_source"] == 0, why
        assert all(e[0] == 1 - r["rank"] and e[4] == 0 for e in events), why
        assert [e[5] for e in events] == sorted(e[5] for e in events), "timestamps out of order"
        downs = [i for i, e in enumerate(events) if e[3] == DOWN]
        assert downs, f"rank {r['rank']} saw no subchannel go DOWN: {why}"
        sub = events[downs[0]][1]
        assert any(e[1] == sub and e[2] == DOWN and e[3] == UP for e in events[downs[0]:]), \
            f"rank {r['rank']}: subchannel {sub} did not come back UP: {events}"
        # each event once, as many as the rail layer counted
        assert r["rail_downs"] == len(downs), why
        assert r["rail_recoveries"] == sum(1 for e in events if e[2] == DOWN and e[3] == UP), why
        assert r["rail_suspects"] == sum(1 for e in events if e[3] == SUSPECT), why
        assert r["none_calls"] == 0 and r["dropped"] == len(events) and r["dropped_calls"] >= 1, \
            why
        assert r["rail_bytes_sent"] > 0, why
        assert r["reader_rounds"] > 0 and r["reader_errors"] == 0, why
    assert "DOWN" in err, "the rail layer did not report the failure: " + why
