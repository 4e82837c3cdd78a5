"""The fabric model against the traffic of pxfab's emulated fat-tree (root).

A 2-leaf 2-spine fat-tree, 4 nodes, 2 paths per rail. pxtopo's model of the
running fabric (pxfab export, in Plexus JSON and in ibnetdiscover form) must
name the links that real UDP bursts move: every switch link the route crosses
carries the burst in the route's direction, the other switch links almost
nothing; the hop count is the number of switches on it. Then an MPI job over
the emulated nodes with PX_TOPO set: every rank sees the same, correct hop
counts (tests/topo/topo_ranks).
"""

import os
import subprocess

import pytest

from conftest import ROOT, module_fabric, probe, pxfab, stats
from plexus import topo

ARGS = ("--leaves", 2, "--spines", 2, "--nodes-per-leaf", 2, "--rails", 1, "--paths", 2,
        "--rate", "1gbit")
BUILD = os.environ.get("PX_BUILD_DIR", os.path.join(ROOT, "build"))
PXRUN = os.path.join(BUILD, "bin", "pxrun")
TOPO_RANKS = os.path.join(BUILD, "bin", "topo_ranks")
BURST = 400


@pytest.fixture(scope="module")
def fab():
    yield from module_fabric(*ARGS)


@pytest.fixture(scope="module")
def exported(fab, tmp_path_factory):
    d = tmp_path_factory.mktemp("topo")
    files = {}
    for fmt, name in (("plexus-json", "fabric.json"), ("ibnetdiscover", "ibnet.txt")):
        files[fmt] = str(d / name)
        pxfab("export", "--format", fmt, "-o", files[fmt])
    return files


def switch_link_names(model, counters):
    """Model link index -> (pxfab's name of the link, its a end, its b end), for the
    switch-switch links (pxfab names a link a:b in the order its description gives)."""
    out = {}
    for i, l in enumerate(model.links):
        a, b = model.v[l.v[0]], model.v[l.v[1]]
        if a.is_host or b.is_host:
            continue
        if f"{a.name}:{b.name}" in counters:
            out[i] = (f"{a.name}:{b.name}", a.name, b.name)
        else:
            out[i] = (f"{b.name}:{a.name}", b.name, a.name)
        assert out[i][0] in counters, out[i]
    return out


@pytest.mark.parametrize("fmt", ["plexus-json", "ibnetdiscover"])
def test_routes_match_link_counters(fab, exported, fmt):
    model = topo.load(exported[fmt])
    names = switch_link_names(model, stats())
    nodes = {n["name"]: n for n in fab["nodes"]}
    for src in nodes:
        for dst in nodes:
            if src == dst:
                continue
            dst_addrs = [a.split("/")[0] for a in nodes[dst]["ifaces"]["rail0"]]
            for p, addr in enumerate(dst_addrs):
                sws, links = model.walk(src, dst, 0, p)
                assert len(sws) == model.hops(src, dst, 0, p) and len(sws) in (1, 3)
                # the directions the route crosses each switch link in
                want = {}
                for k in range(1, len(sws)):
                    frm = model.switch_name(sws[k - 1])
                    want[links[k]] = frm
                before = stats(*[n[0] for n in names.values()])
                probe(src, "udp-send", addr, "--port", 9999, "--count", BURST, "--size", 100)
                after = stats(*[n[0] for n in names.values()])
                for i, (lname, a_end, b_end) in names.items():
                    for key, frm in (("a_to_b", a_end), ("b_to_a", b_end)):
                        moved = after[lname][key]["packets"] - before[lname][key]["packets"]
                        if want.get(i) == frm:
                            assert moved >= BURST, (src, dst, p, lname, key, moved)
                        else:
                            assert moved < BURST // 10, (src, dst, p, lname, key, moved)


def test_mpi_ranks_see_hops(fab, exported):
    for p in (PXRUN, TOPO_RANKS):
        if not os.access(p, os.X_OK):
            pytest.skip(f"{p} not built (set PX_BUILD_DIR)")
    cmd = [PXRUN, "--launcher", "ip netns exec {host}", "--hosts", "node0:2,node1:1,node2:1,node3:2",
           "--bootstrap-iface", "pxf-mgmt", "--timeout", "120", "--env", "PX_NET=shm,tcp",
           "--env", f"PX_TOPO={exported['plexus-json']}", TOPO_RANKS]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert r.returncode == 0 and "PASS topo_ranks np=6: hop counts agree" in r.stdout, \
        f"{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
