"""plexus.topo and pxtopo on the hand-written samples of tests/topo: parsing,
routes and hop counts, switch clusters, the queries, the command line.
No root and no fabric needed."""

import json
import os
import subprocess
import sys

import pytest

from conftest import ENV, ROOT
from plexus import topo
from plexus.fab import desc, export

SAMPLES = os.path.join(ROOT, "tests", "topo")


def sample(name):
    return topo.load(os.path.join(SAMPLES, name))


def pxtopo(*args, check=True):
    p = subprocess.run([sys.executable, "-m", "plexus.topo"] + list(args),
                       capture_output=True, text=True, env=ENV, timeout=60)
    if check:
        assert p.returncode == 0, p.stderr
    return p


def test_hostlist():
    assert topo.expand_hostlist("node[01-03,7],gpu1") == ["node01", "node02", "node03", "node7",
                                                           "gpu1"]
    assert topo.expand_hostlist("r[1-2]n[1-2]") == ["r1n1", "r1n2", "r2n1", "r2n2"]
    with pytest.raises(topo.TopoError):
        topo.expand_hostlist("n[3-1]")


def test_slurm_figure54():
    fab = sample("figure54.topology.conf")
    assert fab.format == "slurm"
    assert fab.host_names() == [f"cn{i:02d}" for i in range(1, 9)]
    assert fab.hops("cn01", "cn02") == 1
    assert fab.hops("cn01", "cn04") == 3
    assert fab.hops("cn08", "cn01") == 5
    assert fab.path("cn02", "cn06") == ["edge0", "agg0", "core", "agg1", "edge2"]
    assert fab.depth() == 3
    assert fab.clusters(1) == [["cn01", "cn02", "cn03", "cn04"], ["cn05", "cn06", "cn07", "cn08"]]
    assert [len(fab.clusters(level)) for level in range(4)] == [1, 2, 4, 8]
    assert fab.num_clusters(2, ["cn01", "cn03", "cn04"]) == 2
    assert fab.hosts_per_leaf(["cn01", "cn03", "cn04"]) == 1.5
    assert fab.host_find("cn05.cluster.example") == 4
    _, links = fab.walk("cn01", "cn03")
    assert [fab.links[l].rate for l in links] == [10**10, 4 * 10**10, 4 * 10**10, 10**10]


def test_uneven_clusters():
    fab = sample("uneven.topology.conf")
    assert fab.depth() == 4
    assert fab.clusters(1) == [["a1", "a2", "a3", "a4", "a5", "x1", "x2"], ["a6", "a7"]]
    assert fab.clusters(2) == [["a1", "a2", "a3", "a4", "a5"], ["a6"], ["a7"], ["x1", "x2"]]
    assert fab.clusters(3)[:2] == [["a1", "a2", "a3"], ["a4", "a5"]]


def test_ibnetdiscover_fattree():
    fab = sample("fattree.ibnet")
    assert fab.format == "ibnetdiscover"
    assert (len(fab.hosts), len(fab.switches), len(fab.links)) == (10, 6, 18)
    assert fab.path("node01", "node06") == ["leaf-1", "spine-2", "leaf-2"]
    assert fab.path("node07", "node04", path=1) == ["leaf-2", "spine-1", "leaf-1"]
    assert fab.hops("node01", "node05") == 1
    assert fab.links[fab.walk("node01", "node06")[1][0]].rate == 40 * 10**9
    assert sorted(fab.sharing(["node01", "node02", "node06", "node07"])) == \
        ["node01", "node02", "node06", "node07"]
    assert fab.sharing(["node01", "node06"]) == []
    assert fab.sharing(["node01", "node02", "node06"]) == ["node01", "node02"]
    assert fab.hosts_per_leaf() == 5.0


def test_opensm_forwarding_tables():
    """ibroute / dump_lfts.sh output (lft.ibnet) and opensm-lfts.dump
    (lft-opensm.ibnet) after the ibnetdiscover text: the switches forward
    by them, not by the computed min-hop routes."""
    fab = sample("lft.ibnet")
    assert (len(fab.hosts), len(fab.switches), len(fab.links)) == (6, 5, 12)
    assert fab.path("node01", "node03") == ["leaf-1", "spine-2", "leaf-2"]
    assert fab.path("node02", "node05") == ["leaf-1", "spine-1", "leaf-2", "spine-2", "leaf-3"]
    assert fab.hops("node01", "node05") == 5
    assert fab.path("node01", "node06", path=1) == ["leaf-1", "spine-1", "leaf-3"]
    assert fab.hops("node01", "node06", path=2) == -1
    with open(os.path.join(SAMPLES, "lft.ibnet")) as f:
        text = f.read()
    plain = topo.parse(text[:text.index("Unicast lids")], "no-tables")
    assert plain.path("node01", "node03") == ["leaf-1", "spine-1", "leaf-2"]
    assert plain.hops("node01", "node05") == 3
    osm = sample("lft-opensm.ibnet")
    assert osm.path("node02", "node05") == ["leaf-1", "spine-2", "leaf-3"]
    assert osm.path("node03", "node05") == ["leaf-2", "spine-1", "leaf-3"]
    head = text[:text.index("Unicast lids")]
    with pytest.raises(topo.TopoError, match="0x0002c902005000ff"):
        topo.parse(head + "Unicast lids [0x0-0xc] of switch Lid 9 guid 0x0002c902005000ff (x):\n"
                   "0x0006 001 : (Channel Adapter portguid 0x0002c90300b0c101: 'n')\n", "bad")
    with pytest.raises(topo.TopoError, match="port 20"):
        topo.parse(head + "Unicast lids [0-12] of switch Lid 3 guid 0x0002c90200500011 "
                   "('leaf-1'):\n0x0006 020 # Channel Adapter portguid 0x1: 'node01 HCA-1'\n",
                   "bad")


def test_rates_and_names():
    assert topo.formats.ib_rate(' "x" lid 3 4xQDR') == 40 * 10**9
    assert topo.formats.ib_rate(" lid 3 lmc 0 \"sw\" lid 1 12xEDR") == 300 * 10**9
    assert topo.formats.ib_rate(" rate 10Gbit") == 10 * 10**9


def test_pxfab_json_tables_match_computed_routes():
    fab = sample("pxfab-fattree.json")
    assert fab.format == "plexus-json"
    assert fab.path("node0", "node2") == ["leaf0", "spine0", "leaf1"]
    assert fab.path("node0", "node2", path=1) == ["leaf0", "spine1", "leaf1"]
    with open(os.path.join(SAMPLES, "pxfab-fattree.json")) as f:
        d = json.load(f)
    del d["routing"]
    computed = topo.parse(json.dumps(d))
    for a in range(4):
        for b in range(4):
            for p in range(2):
                assert fab.path(a, b, path=p) == computed.path(a, b, path=p)


@pytest.mark.parametrize("shape", [(2, 2, 2, 2), (3, 2, 3, 1), (2, 4, 3, 3), (4, 3, 2, 2)])
def test_computed_routes_match_pxfab(shape):
    """pxfab's route tables (its description only: no fabric is built) against the
    routes Plexus computes from the same fabric without them, in every format
    pxfab exports."""
    leaves, spines, per_leaf, paths = shape
    fab = desc.load(desc.gen_fattree(leaves, spines, per_leaf, paths=paths))
    tables = topo.parse(export.export(fab, "plexus-json"))
    d = json.loads(export.export(fab, "plexus-json"))
    del d["routing"]
    computed = topo.parse(json.dumps(d))
    ibnet = topo.parse(export.export(fab, "ibnetdiscover"))
    slurm = topo.parse(export.export(fab, "slurm"))
    n = len(fab.nodes)
    for a in range(n):
        for b in range(n):
            for p in range(paths):
                want = fab.trace(fab.nodes[a]["ifaces"]["rail0"][0].ip,
                                 fab.nodes[b]["ifaces"]["rail0"][p].ip)["hops"][1:-1]
                assert tables.path(a, b, path=p) == want
                assert computed.path(a, b, path=p) == want
                assert ibnet.path(a, b, path=p) == want
            assert slurm.hops(a, b) == len(want) if a != b else True


def test_cli(tmp_path):
    conf = os.path.join(SAMPLES, "fattree.ibnet")
    assert pxtopo("--topo", conf, "hops", "node01", "node06").stdout.strip() == "3"
    assert pxtopo("--topo", conf, "path", "node01", "node06").stdout.strip() == \
        "node01 leaf-1 spine-2 leaf-2 node06"
    assert pxtopo("--topo", conf, "depth").stdout.strip() == "2"
    out = pxtopo("--topo", conf, "clusters", "--level", "1").stdout.splitlines()
    assert out == ["level 1 cluster 0: node01 node02 node03 node04 node05",
                   "level 1 cluster 1: node06 node07 node08 node09 node10"]
    hosts = tmp_path / "hosts"
    hosts.write_text("node01:4\nnode02 slots=4\n# a comment\nnode06\nnode07\n")
    assert pxtopo("--topo", conf, "sharing", str(hosts)).stdout.strip() == \
        "4 of 4 hosts share a link above the leaf level: node01 node02 node06 node07"
    env_out = subprocess.run([sys.executable, "-m", "plexus.topo", "depth"], capture_output=True,
                             text=True, env=dict(ENV, PX_TOPO=conf), timeout=60)
    assert env_out.stdout.strip() == "2"
    bad = pxtopo("--topo", conf, "hops", "node01", "nope", check=False)
    assert bad.returncode == 1 and "nope" in bad.stderr
    missing = pxtopo("--topo", str(tmp_path / "none"), "depth", check=False)
    assert missing.returncode == 1 and "cannot open" in missing.stderr
