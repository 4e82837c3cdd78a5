"""pxtopo place and pxtopo select (plexus.topo.place): reading communication
graphs, the placement of the topology dissertation's 2x4x4 stencil example
(Table 5.1: 80 messages within nodes and 48 across the spine in rank order,
96 within nodes, 8 over one leaf and 24 across the spine placed), the files
written for pxrun and srun, and node selection that avoids shared uplinks."""

import itertools
import json
import os
import shutil

import pytest

from conftest import ROOT
from plexus import topo
from plexus.topo import place as P
from test_topo import pxtopo

SAMPLES = os.path.join(ROOT, "tests", "topo")
STENCIL = os.path.join(SAMPLES, "stencil-2x4x4.graph")
FIG51 = os.path.join(SAMPLES, "figure51.topology.conf")
HOSTS4 = [("node0", 8), ("node1", 8), ("node2", 8), ("node3", 8)]
need_gpmetis = pytest.mark.skipif(not shutil.which("gpmetis"),
                                  reason="gpmetis (Debian: metis) not installed")


def test_read_metis_and_profile(tmp_path):
    n, edges = P.read_graph(STENCIL)
    assert n == 32 and len(edges) == 64 and all(w == 1 for w in edges.values())
    g = tmp_path / "w.graph"
    # fmt 011: a vertex weight, then neighbour/weight pairs
    g.write_text("% weighted\n3 2 011\n1 2 5\n1 1 5 3 7\n1 2 7\n")
    assert P.read_graph(str(g)) == (3, {(0, 1): 5, (1, 2): 7})
    prof = tmp_path / "p.json"
    prof.write_text(json.dumps({"nranks": 3, "bytes": [[0, 10, 0], [4, 0, 1], [0, 0, 0]]}))
    assert P.read_graph(str(prof)) == (3, {(0, 1): 14, (1, 2): 1})
    g.write_text("2 1\n3\n1\n")
    with pytest.raises(topo.TopoError, match="outside 1..2"):
        P.read_graph(str(g))
    prof.write_text(json.dumps({"nranks": 2, "bytes": [[0]]}))
    with pytest.raises(topo.TopoError, match="2 x 2"):
        P.read_graph(str(prof))


def check_slots(hosts, hostlist):
    for h, s in hostlist:
        assert hosts.count(h) == s, (h, hosts)


@need_gpmetis
def test_stencil_table51():
    fab = topo.load(FIG51)
    n, edges = P.read_graph(STENCIL)
    pl = P.place(n, edges, HOSTS4, fab)
    assert pl.how == "gpmetis"
    check_slots(pl.hosts, HOSTS4)
    assert P.split(edges, pl.default, fab) == {"intra": 80, "3 hops": 48}
    assert P.split(edges, pl.hosts, fab) == {"intra": 96, "1 hops": 8, "3 hops": 24}
    # without a fabric: nodes only (Figure 5.2(b))
    pl = P.place(n, edges, HOSTS4)
    assert P.split(edges, pl.hosts) == {"intra": 96, "inter": 32}


def test_greedy_without_gpmetis():
    fab = topo.load(FIG51)
    n, edges = P.read_graph(STENCIL)
    pl = P.place(n, edges, HOSTS4, fab, partitioner="greedy")
    check_slots(pl.hosts, HOSTS4)
    assert P.cost(edges, pl.hosts, fab) <= P.cost(edges, pl.default, fab)
    # ranks dealt round-robin, one host further each round: the greedy cut
    # must do better than that
    rr = [(f"node{(j + i) % 4}", 1) for i in range(8) for j in range(4)]
    pl = P.place(n, edges, rr, fab, partitioner="greedy")
    check_slots(pl.hosts, HOSTS4)
    assert P.split(edges, pl.default, fab)["intra"] < 80
    assert P.split(edges, pl.hosts, fab)["intra"] >= 80


def test_profile_pairs():
    # 0<->2 and 1<->3 exchange much, the rest little: pairs share a host
    m = [[0, 1, 900, 1], [1, 0, 1, 900], [900, 1, 0, 1], [1, 900, 1, 0]]
    n, edges = P.parse_profile(json.dumps({"nranks": 4, "bytes": m}))
    for part in ("auto", "greedy"):
        pl = P.place(n, edges, [("a", 2), ("b", 2)], partitioner=part)
        assert pl.hosts[0] == pl.hosts[2] and pl.hosts[1] == pl.hosts[3], (part, pl.hosts)
        assert pl.hosts[0] != pl.hosts[1]
    with pytest.raises(topo.TopoError, match="only 3 slots"):
        P.place(n, edges, [("a", 3)])
    # the same traffic as PX_PROFILE=topo writes it: the pairs that talked
    pairs = [{"src": i, "dst": j, "msgs": 1, "bytes": m[i][j]}
             for i in range(4) for j in range(4) if m[i][j]]
    n2, edges2 = P.parse_profile(json.dumps({"ranks": 4, "pairs": pairs, "classes": []}))
    assert (n2, edges2) == (n, edges)
    with pytest.raises(topo.TopoError, match="outside 4 ranks"):
        P.parse_profile(json.dumps({"ranks": 4, "pairs": [{"src": 0, "dst": 4, "bytes": 1}]}))


@need_gpmetis
def test_cli_place(tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("node0 slots=8\nnode1:8\n# comment\nnode2:8\nnode3:8\n")
    out, slurm = tmp_path / "ranks.hosts", tmp_path / "slurm.hosts"
    p = pxtopo("--topo", FIG51, "place", STENCIL, str(hosts), "-o", str(out),
               "--slurm", str(slurm))
    assert "placed: 1 hops 8, 3 hops 24, intra 96" in p.stderr
    assert "host-file order: 3 hops 48, intra 80" in p.stderr
    # pxrun's host file: runs of 'host:N' in rank order, 8 slots per host
    ranks = []
    for line in out.read_text().split():
        h, k = line.split(":")
        ranks += [h] * int(k)
    assert len(ranks) == 32 and all(ranks.count(f"node{i}") == 8 for i in range(4))
    assert slurm.read_text().split() == ranks
    n, edges = P.read_graph(STENCIL)
    assert P.split(edges, ranks, topo.load(FIG51)) == {"intra": 96, "1 hops": 8, "3 hops": 24}
    bad = pxtopo("place", STENCIL, str(tmp_path / "none"), check=False)
    assert bad.returncode == 1 and "cannot open" in bad.stderr


def test_select():
    fab = topo.load(os.path.join(SAMPLES, "fattree.ibnet"))
    free = ["node01", "node02", "node03", "node06", "node07", "node08", "node09"]
    naive_shares = False
    for k in range(1, len(free) + 1):
        chosen, shared = P.select(fab, free, k)
        assert len(set(chosen)) == k and set(chosen) <= set(free)
        assert shared == fab.sharing(chosen)
        apart = any(not fab.sharing(list(c)) for c in itertools.combinations(free, k))
        if apart:
            assert shared == [], (k, chosen)
            naive_shares |= bool(fab.sharing(free[:k]))
    # taking the first free nodes would have shared an uplink somewhere
    assert naive_shares
    with pytest.raises(topo.TopoError, match="8 nodes asked"):
        P.select(fab, free, 8)


def test_cli_select(tmp_path):
    free = tmp_path / "free"
    free.write_text("node01\nnode02\nnode03\nnode06\nnode07\nnode08\nnode09\n")
    conf = os.path.join(SAMPLES, "fattree.ibnet")
    p = pxtopo("--topo", conf, "select", str(free), "4")
    chosen = p.stdout.split()
    assert len(chosen) == 4 and topo.load(conf).sharing(chosen) == []
    p = pxtopo("--topo", conf, "select", str(free), "6")
    assert len(p.stdout.split()) == 6 and "share a link above the leaf level" in p.stderr


def test_many_hosts_laid_by_swaps(tmp_path):
    # a 4x4x4 grid on 16 hosts of 4 slots (more than are tried
    # exhaustively), hosts k, k+4, k+8, k+12 on leaf k
    conf = tmp_path / "topology.conf"
    conf.write_text("SwitchName=top Switches=leaf[0-3]\n" + "".join(
        f"SwitchName=leaf{k} Nodes=h{k},h{k + 4},h{k + 8},h{k + 12}\n" for k in range(4)))
    fab = topo.load(str(conf))
    edges = {}
    for v in range(64):
        c = (v // 16, v // 4 % 4, v % 4)
        for d, step in ((0, 16), (1, 4), (2, 1)):
            if c[d] < 3:
                edges[(v, v + step)] = 1
    hostlist = [(f"h{i}", 4) for i in range(16)]
    pl = P.place(64, edges, hostlist, fab, partitioner="greedy")
    check_slots(pl.hosts, hostlist)
    assert P.cost(edges, pl.hosts, fab) <= P.cost(edges, pl.default, fab)
    if shutil.which("gpmetis"):
        pl = P.place(64, edges, hostlist, fab)
        check_slots(pl.hosts, hostlist)
        s = P.split(edges, pl.hosts, fab)
        assert P.cost(edges, pl.hosts, fab) < P.cost(edges, pl.default, fab), s
        # 2x2 tiles on the hosts, and the tiles of a leaf next to each other
        assert s["intra"] == 128 and s["3 hops"] <= s["1 hops"], s
