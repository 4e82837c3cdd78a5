"""QoS lanes seen from the fabric (root): two emulated nodes whose rail has one
weighted HTB class per DSCP of Plexus's lane classes (CS5 small, AF41
collectives, AF21 medium, CS1 bulk), and MPI jobs whose traffic must land in
the classes its lanes are marked with, as pxfab's per-class counters show:
every class with PX_LANES=4 (policy class), one class only for a job given
PX_LANE_JOB_CLASS, and for two such jobs at once, the small class for a
communicator whose info hint says so, and the other lanes carrying the bulk
data while the bulk lane's class is dropped on the link (docs/lanes.md).
Over udp, every datagram carries its lane's socket priority too, as
nftables sees it leave.
"""

import json
import os
import platform
import subprocess
import time

import pytest

from conftest import ROOT, module_fabric, pxfab

BUILD = os.environ.get("PX_BUILD_DIR", os.path.join(ROOT, "build"))
PXRUN = os.path.join(BUILD, "bin", "pxrun")
SMALL, COLL, MEDIUM, BULK = 40, 34, 18, 8


@pytest.fixture(scope="module")
def fab():
    for p in [PXRUN] + [os.path.join(BUILD, "tests", "mpi", n) for n in ("lanes", "lanes_comm")]:
        if not os.access(p, os.X_OK):
            pytest.skip(f"{p} not built (set PX_BUILD_DIR)")
    yield from module_fabric("--nodes", 2, "--rails", 1, "--rate", "1gbit",
                             "--lanes", f"{SMALL}:4,{COLL}:3,{MEDIUM}:2,{BULK}:1")


def class_bytes():
    """Bytes each class of the rail carried, both ways: {dscp or 'other': bytes}."""
    st = json.loads(pxfab("stats", "node0:rail0").stdout)
    out = {}
    for c in st["links"]["node0:rail0"]["classes"]:
        key = c["dscp"][0] if isinstance(c["dscp"], list) else c["dscp"]
        out[key] = c["a_to_b"].get("bytes", 0) + c["b_to_a"].get("bytes", 0)
    return out


def job_cmd(prog, *env, net="tcp"):
    cmd = [PXRUN, "--launcher", "ip netns exec {host}", "--hosts", "node0:1,node1:1",
           "--bootstrap-iface", "pxf-mgmt", "--timeout", "120", "--env", "PX_NET=" + net]
    for e in env:
        cmd += ["--env", e]
    return cmd + [os.path.join(BUILD, "tests", "mpi", prog)]


def run_job(prog, *env):
    before = class_bytes()
    p = subprocess.run(job_cmd(prog, *env), capture_output=True, text=True, timeout=150)
    assert p.returncode == 0 and f"PASS {prog} np=2:" in p.stdout, \
        f"{prog} {env}: rc={p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
    after = class_bytes()
    return {k: after[k] - before.get(k, 0) for k in after}


def test_each_class_on_its_marked_lane(fab):
    d = run_job("lanes", "PX_LANES=4")
    # lanes sends 8 B .. 300 KB messages with allreduces and broadcasts in flight
    assert d[SMALL] > 50_000, d
    assert d[COLL] > 1_000_000, d
    assert d[MEDIUM] > 500_000, d
    assert d[BULK] > 5_000_000, d
    assert d["other"] < 64_000, f"unmarked traffic on the rail: {d}"


def nft0(*args):
    return subprocess.run(["ip", "netns", "exec", "node0", "nft", *args], check=True,
                          capture_output=True, text=True)


@pytest.mark.skipif(tuple(int(x) for x in platform.release().split(".")[:2]) < (6, 14),
                    reason="SO_PRIORITY per datagram needs Linux 6.14")
def test_udp_datagrams_carry_their_lane_priority(fab):
    """Over udp one socket carries every lane, so each datagram carries its
    lane's marks as ancillary data: the DSCP (IP_TOS) and the socket
    priority (SO_PRIORITY). nftables in node0 counts the job's datagrams
    leaving per DSCP, and those of each DSCP with its class's priority
    (meta priority): the counts must be equal, and every class used."""
    prio = {SMALL: 6, COLL: 4, MEDIUM: 0, BULK: 2}
    nft0("add", "table", "inet", "pxprio")
    try:
        nft0("add", "chain", "inet", "pxprio", "out",
             "{ type filter hook output priority 0; policy accept; }")
        for d, pr in prio.items():
            nft0("add", "rule", "inet", "pxprio", "out", "meta", "l4proto", "udp", "ip", "dscp",
                 str(d), "counter", "comment", f"d{d}")
            nft0("add", "rule", "inet", "pxprio", "out", "meta", "l4proto", "udp", "ip", "dscp",
                 str(d), "meta", "priority", f"0:{pr}", "counter", "comment", f"p{d}")
        p = subprocess.run(job_cmd("lanes", "PX_LANES=4", net="udp"), capture_output=True,
                           text=True, timeout=150)
        assert p.returncode == 0 and "PASS lanes np=2:" in p.stdout, \
            f"rc={p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
        count = {}
        for item in json.loads(nft0("-j", "list", "table", "inet", "pxprio").stdout)["nftables"]:
            r = item.get("rule")
            if r and r.get("comment"):
                count[r["comment"]] = next(e["counter"]["packets"] for e in r["expr"]
                                           if "counter" in e)
    finally:
        subprocess.run(["ip", "netns", "exec", "node0", "nft", "delete", "table", "inet",
                        "pxprio"], capture_output=True)
    for d in prio:
        assert count[f"d{d}"] > 0, f"no datagram with DSCP {d}: {count}"
        assert count[f"p{d}"] == count[f"d{d}"], \
            f"DSCP {d}: {count[f'd{d}'] - count[f'p{d}']} datagrams without priority {prio[d]}: {count}"


def test_job_class_keeps_the_job_in_one_class(fab):
    d = run_job("lanes", "PX_LANES=2", "PX_LANE_JOB_CLASS=bulk")
    assert d[BULK] > 10_000_000, d
    for k in (SMALL, COLL, MEDIUM):
        assert d[k] < 4_000, f"a job of class bulk put {d[k]} bytes in DSCP {k}: {d}"


def test_communicator_hint_marks_its_traffic(fab):
    # lanes_comm sends 2 x 6 x 4 MB on communicators left by size (bulk) and
    # 6 x 4 MB each way on one whose hint is small
    d = run_job("lanes_comm", "PX_LANES=4")
    assert d[SMALL] > 40_000_000, d
    assert d[BULK] > 80_000_000, d


def test_two_concurrent_jobs_stay_in_their_classes(fab):
    """Two jobs at once on the same two nodes, one given the small class and
    one the bulk class: each class carries one job's traffic, no other class
    carries either (the segregation of jobs of docs/lanes.md)."""
    before = class_bytes()
    jobs = [subprocess.Popen(job_cmd("lanes", "PX_LANES=2", f"PX_LANE_JOB_CLASS={c}"),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for c in ("small", "bulk")]
    for j in jobs:
        out, err = j.communicate(timeout=150)
        assert j.returncode == 0 and "PASS lanes np=2:" in out, f"{out[-2000:]}\n{err[-3000:]}"
    after = class_bytes()
    d = {k: after[k] - before.get(k, 0) for k in after}
    assert d[SMALL] > 10_000_000 and d[BULK] > 10_000_000, d
    # both ran the same program: neither class holds much more than one job's share
    assert 0.5 <= d[SMALL] / d[BULK] <= 2.0, d
    for k in (COLL, MEDIUM):
        assert d[k] < 8_000, f"DSCP {k} carried {d[k]} bytes of jobs marked small and bulk: {d}"


def test_lane_blocked_mid_transfer_fails_over(fab):
    """The bulk lane's class (CS1) dropped on the link for 2 s while a checksummed
    stream of 1 KB to 1 MB messages runs with PX_LANES=4: the lane fails over
    to the medium lane (it carries the bulk data meanwhile, the small lane
    does not), the bulk lane rejoins when the class passes again, and
    ft_stream finds nothing lost, duplicated or corrupted."""
    cmd = job_cmd("ft_stream", "PX_LANES=4")
    cmd += ["--seconds", "6", "--sizes", "1k,48k,1m"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for line in p.stdout:
            if line.startswith("FT_START"):
                break
        time.sleep(1.0)
        pxfab("fault", "block", "node0:rail0", str(BULK))
        at_block = class_bytes()
        time.sleep(2.0)
        during = class_bytes()
        pxfab("fault", "unblock", "node0:rail0")
        out, err = p.communicate(timeout=90)
    finally:
        pxfab("fault", "reset", check=False)
        if p.poll() is None:
            p.kill()
            p.wait()
    after = class_bytes()
    assert p.returncode == 0 and "PASS ft_stream np=2:" in out, f"{out[-2000:]}\n{err[-3000:]}"
    moved = {k: during[k] - at_block.get(k, 0) for k in during}
    # the 1 MB messages went on over the medium lane, the nearest class, while
    # CS1 was dropped (hundreds of MB at 1 Gbit/s), not over the small one
    assert moved[MEDIUM] > 20_000_000, f"little traffic while the bulk lane was blocked: {moved}"
    assert moved[SMALL] < 8_000_000, f"bulk data moved to the small-message lane: {moved}"
    # and the bulk lane carried bulk data again once it passed
    assert after[BULK] - during[BULK] > 1_000_000, (during, after)
