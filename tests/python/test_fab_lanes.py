"""QoS lanes seen from the fabric (root): two emulated nodes whose rail has one
weighted HTB class per DSCP of Plexus's lane classes (CS5 small, AF41
collectives, AF21 medium, CS1 bulk), and MPI jobs whose traffic must land in
the classes its lanes are marked with, as pxfab's per-class counters show:
every class with PX_LANES=4 (policy class), one class only for a job given
PX_LANE_JOB_CLASS, and the small class for a communicator whose info hint
says so (docs/lanes.md).
"""

import json
import os
import subprocess

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


def run_job(prog, *env):
    before = class_bytes()
    cmd = [PXRUN, "--launcher", "ip netns exec {host}", "--hosts", "node0:1,node1:1",
           "--bootstrap-iface", "pxf-mgmt", "--timeout", "120", "--env", "PX_NET=tcp"]
    for e in env:
        cmd += ["--env", e]
    p = subprocess.run(cmd + [os.path.join(BUILD, "tests", "mpi", prog)], capture_output=True,
                       text=True, timeout=150)
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
