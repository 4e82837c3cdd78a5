"""pxfab descriptions, generators, routes and exports: pure computation, no root needed."""

import copy
import json

import pytest

from conftest import pxfab
from plexus.fab import desc as D
from plexus.fab import export as E
from plexus.fab import schedule as S
from plexus.fab.desc import FabError


def fattree(**kw):
    args = dict(leaves=2, spines=2, nodes_per_leaf=2, rails=1, paths=2)
    args.update(kw)
    return D.Fabric(D.gen_fattree(**args))


def test_rates():
    assert D.parse_rate("1gbit") == 10**9
    assert D.parse_rate("250mbit") == 250 * 10**6
    assert D.parse_rate("2.5gbit") == 2_500_000_000
    assert D.parse_rate("1mbps") == 8 * 10**6          # tc: bps = bytes per second
    assert D.format_rate(250 * 10**6) == "250mbit"
    for bad in ("fast", "1gbits", "", "-1mbit", "1bit"):
        with pytest.raises(FabError):
            D.parse_rate(bad)


def test_rails_generator_addresses_and_names():
    fab = D.Fabric(D.gen_rails(4, rails=2, paths=2))
    assert [n["name"] for n in fab.nodes] == ["node0", "node1", "node2", "node3"]
    n1 = fab.node_by_name["node1"]
    assert [str(a) for a in n1["ifaces"]["rail1"]] == ["10.101.0.2/24", "10.101.1.2/24"]
    assert str(n1["mgmt"]) == "10.99.0.2"
    assert [s["name"] for s in fab.switches] == ["rail0", "rail1"]
    assert {s["kind"] for s in fab.switches} == {"bridge"}
    assert fab.resolve_link("node1:rail1") is fab.resolve_link("rail1:node1")
    assert len(fab.links) == 8


def test_fattree_paths_use_different_spines():
    fab = fattree(leaves=2, spines=2, nodes_per_leaf=2, paths=4)
    for src in ("node0", "node1"):
        for dst in ("node2", "node3"):
            spines = []
            for p, a in enumerate(fab.node_by_name[dst]["ifaces"]["rail0"]):
                srca = fab.node_by_name[src]["ifaces"]["rail0"][p]
                t = fab.trace(srca.ip, a.ip)
                assert t["ok"], t
                assert t["hops"][0] == src and t["hops"][-1] == dst
                assert len(t["hops"]) == 5          # node, leaf, spine, leaf, node
                spines.append(t["hops"][2])
            for p in range(len(spines) - 1):
                assert spines[p] != spines[p + 1], (src, dst, spines)
            assert set(spines) == {"spine0", "spine1"}


def test_fattree_same_leaf_stays_below_spines():
    fab = fattree()
    t = fab.trace("10.100.0.1", "10.100.1.2")
    assert t["hops"] == ["node0", "leaf0", "node1"]


def test_fattree_rails_are_separate_planes():
    fab = fattree(rails=2, paths=1)
    names = {s["name"] for s in fab.switches}
    assert {"r0-leaf0", "r1-spine1"} <= names
    t = fab.trace("10.101.0.1", "10.101.0.4")
    assert all(h.startswith("r1-") for h in t["hops"][1:-1]), t


def test_routing_path_mode_is_symmetric():
    fab = D.Fabric(D.gen_fattree(2, 2, 2, paths=2, routing="path"))
    for p in range(2):
        fwd = fab.trace(f"10.100.{p}.1", f"10.100.{p}.4")
        back = fab.trace(f"10.100.{p}.4", f"10.100.{p}.1")
        assert fwd["hops"][2] == back["hops"][2] == f"spine{p}"


def test_trace_reports_down_link():
    fab = fattree()
    t = fab.trace("10.100.1.1", "10.100.1.3", down={"leaf0:spine1"})
    assert not t["ok"] and "leaf0:spine1" in t["reason"]


def test_link_aliases_and_unknown_link():
    fab = fattree()
    l = fab.resolve_link("spine1:leaf0")
    assert l.name == "leaf0:spine1"
    assert fab.resolve_link("leaf0:node1").name == "node1:rail0"
    assert fab.resolve_link("node2:mgmt").kind == "mgmt"
    with pytest.raises(FabError, match="unknown link"):
        fab.resolve_link("leaf0:spine7")


def test_interface_names_fit():
    fab = fattree(leaves=4, spines=4, nodes_per_leaf=4, rails=3, paths=2)
    for l in fab.links:
        for e in l.ends():
            assert len(e.dev) <= 15


BASE = {
    "pxfab": 1,
    "nodes": [{"name": "a", "ifaces": {"rail0": ["10.1.0.1/24"]}},
              {"name": "b", "ifaces": {"rail0": ["10.1.0.2/24"]}}],
    "switches": [{"name": "sw", "kind": "bridge"}],
    "links": [{"a": "a:rail0", "b": "sw"}, {"a": "b:rail0", "b": "sw", "rate": "100mbit"}],
}


def test_minimal_description_defaults():
    fab = D.Fabric(copy.deepcopy(BASE))
    assert fab.rate == 10**9 and fab.mtu == 1500
    assert fab.resolve_link("b:rail0").rate == 10**8
    assert str(fab.node_by_name["b"]["mgmt"]) == "10.99.0.2"


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d["nodes"][1]["ifaces"].update(rail0=["10.1.0.1/24"]), "already used"),
    (lambda d: d["nodes"][1]["ifaces"].update(rail0=["10.1.0.2/16"]), "overlap"),
    (lambda d: d.update(mgmt={"subnet": "10.1.0.0/16"}), "overlaps the management"),
    (lambda d: d["links"].append({"a": "a:rail9", "b": "sw"}), "no interface"),
    (lambda d: d["links"].append({"a": "c:rail0", "b": "sw"}), "neither a node nor a switch"),
    (lambda d: d["switches"][0].update(kind="hub"), "kind"),
    (lambda d: d["nodes"][0].update(name="a-very-long-node-name"), "longer than 15"),
    (lambda d: d["nodes"][0].update(name="bad name"), "invalid"),
    (lambda d: d.update(mtu=100), "MTU"),
    (lambda d: d["links"][0].update(rate="quick"), "invalid rate"),
    (lambda d: d.update(colour="blue"), "unknown top-level"),
    (lambda d: d["nodes"].append({"name": "a", "ifaces": {"rail0": ["10.1.0.3/24"]}}), "duplicate"),
    (lambda d: d["nodes"][0]["ifaces"].update(rail1=["10.2.0.1/24"]), "not connected"),
    (lambda d: d["nodes"][0]["ifaces"].update(rail0=["10.1.0.1"]), "prefix length"),
    (lambda d: d.update(nodes=[]), "non-empty"),
])
def test_invalid_descriptions(mutate, message):
    d = copy.deepcopy(BASE)
    mutate(d)
    with pytest.raises(FabError, match=message):
        D.Fabric(d)


def test_same_subnet_on_two_separate_networks_is_rejected():
    d = copy.deepcopy(BASE)
    d["switches"].append({"name": "sw2", "kind": "bridge"})
    d["nodes"][0]["ifaces"]["rail1"] = ["10.1.0.11/24"]
    d["nodes"][1]["ifaces"]["rail1"] = ["10.1.0.12/24"]
    d["links"] += [{"a": "a:rail1", "b": "sw2"}, {"a": "b:rail1", "b": "sw2"}]
    with pytest.raises(FabError, match="overlap"):
        D.Fabric(d)


def test_classes_parse():
    fab = D.Fabric(D.gen_rails(2, lanes="10:3,18+20:1"))
    cls = fab.links[0].classes
    assert [c["dscp"] for c in cls] == [[10], [18, 20]]
    assert [c["weight"] for c in cls] == [3, 1]
    with pytest.raises(FabError):
        D.Fabric(D.gen_rails(2, lanes="10:3,10:1"))


def test_htb_lines_have_parent_default_and_weighted_classes():
    from plexus.fab import fabric as F
    lines = F.htb_lines("rail0", 10**9, 1500, [{"dscp": [10], "weight": 3, "minor": 20}], 300000)
    text = "\n".join(lines)
    assert "root handle 1: htb default 10" in text
    assert "classid 1:1 htb rate 1000000000bit ceil 1000000000bit" in text
    assert "classid 1:10 htb rate 250000000bit ceil 1000000000bit" in text
    assert "classid 1:20 htb rate 750000000bit ceil 1000000000bit" in text
    assert "match ip dsfield 0x28 0xfc flowid 1:20" in text
    # quanta by weight, the lightest class one segmentation-offload packet (64 KB): a
    # quantum below the packets a class sends lets it lose its turns to borrow
    q = {l.split()[l.split().index("classid") + 1]: int(l.split()[l.split().index("quantum") + 1])
         for l in lines if " htb rate " in l}
    assert q["1:10"] == 65536 and q["1:20"] == 3 * 65536, q


def test_htb_lines_arbitration_high_before_low():
    from plexus.fab import fabric as F
    cls = [{"dscp": [40], "weight": 3, "priority": "high", "minor": 20},
           {"dscp": [34], "weight": 1, "priority": "high", "minor": 21},
           {"dscp": [8], "weight": 1, "priority": "low", "minor": 22}]

    def rates(limit, queue="fifo"):
        lines = F.htb_lines("rail0", 10**9, 1500, cls, 300000,
                            arbitration={"high_limit": limit, "queue": queue})
        out = {}
        for l in lines:
            if " htb rate " in l and "classid 1:1 " not in l:
                w = l.split()
                out[w[w.index("classid") + 1]] = (int(w[w.index("rate") + 1][:-3]),
                                                  int(w[w.index("prio") + 1]))
        return out, "\n".join(lines)

    # strict priority: the low group (1:10 and 1:22) keeps only a token rate
    r, text = rates(255)
    assert r["1:20"][1] == r["1:21"][1] == 0 and r["1:10"][1] == r["1:22"][1] == 1
    assert r["1:10"][0] == r["1:22"][0] == 8000
    assert abs(r["1:20"][0] / r["1:21"][0] - 3) < 0.01
    assert "bfifo limit 300000" in text and "fq_codel" not in text
    # limit 0: one low packet per high packet, so half the link for each group
    r, _ = rates(0)
    assert abs(r["1:10"][0] + r["1:22"][0] - 5 * 10**8) < 10**6
    # limit 4: 16 KB of high data per 1514-byte low packet
    r, text = rates(4, "fq")
    low = r["1:10"][0] + r["1:22"][0]
    assert abs(low - 10**9 * 1514 / (16384 + 1514)) < 10**6
    assert "fq_codel memory_limit 300000" in text


def test_arbitration_in_descriptions_and_errors():
    fab = D.Fabric(D.gen_rails(2, lanes="40:4:high,8:1", arbitration={"high_limit": 8}))
    link = fab.links[0]
    assert [c["priority"] for c in link.classes] == ["high", "low"]
    assert link.arbitration == {"high_limit": 8, "queue": "fifo"}
    assert D.Fabric(D.gen_rails(2)).links[0].arbitration == {"high_limit": 255, "queue": "fifo"}
    for bad, msg in (({"high_limit": 256}, "high_limit"), ({"queue": "red"}, "queue"),
                     ({"weights": 1}, "unknown key")):
        with pytest.raises(FabError, match=msg):
            D.Fabric(D.gen_rails(2, lanes="40:4:high", arbitration=bad))
    with pytest.raises(FabError, match="priority"):
        D.Fabric(D.gen_rails(2, lanes="40:4:urgent"))


def test_schedule_check_expands_flap_and_rejects_unknown():
    fab = fattree()
    ev = S.check([{"at": 5, "action": "down", "link": "node1:rail0"},
                  {"at": 1, "action": "flap", "link": "leaf0:spine1", "period": 2, "for": 5},
                  {"at": 2, "action": "loss", "link": "spine0:leaf1", "percent": 10}], fab)
    assert ev[0] == (1, "down", "leaf0:spine1", None)
    assert ev[-1][1] == "up"
    assert [e[1] for e in ev if e[2] == "leaf0:spine1"] == ["down", "up"] * 3
    assert (2, "loss", "leaf1:spine0", 10.0) in ev
    with pytest.raises(FabError, match="unknown link"):
        S.check([{"at": 1, "action": "down", "link": "node9:rail0"}], fab)
    with pytest.raises(FabError, match="action"):
        S.check([{"at": 1, "action": "explode", "link": "node1:rail0"}], fab)
    with pytest.raises(FabError, match="unknown node"):
        S.check([{"at": 1, "action": "partition", "node": "node9"}], fab)


def test_export_formats():
    fab = fattree(rails=2)
    js = E.plexus_json(fab)
    assert js["format"] == "plexus-topology"
    assert len(js["nodes"]) == 4 and len(js["nodes"][0]["rails"]) == 2
    assert js["nodes"][2]["rails"][1]["switch"] == "r1-leaf1"
    assert {s["level"] for s in js["switches"]} == {0, 1}
    slurm = E.slurm(fab, rail=1)
    assert "SwitchName=r1-leaf0 Nodes=node[0-1]" in slurm
    assert "SwitchName=r1-spine1 Switches=r1-leaf[0-1]" in slurm
    ib = E.ibnetdiscover(fab)
    assert ib.count("Switch\t") == 8 and ib.count("Ca\t") == 4
    assert "10.99.0.3\tnode2" in E.hosts(fab)
    assert E.hostlist(["n1", "n2", "n3", "n7", "x"]) == "x,n[1-3,7]"


def test_cli_gen_validate_routes_without_root(tmp_path):
    p = pxfab("gen", "--leaves", "2", "--spines", "2", "--nodes-per-leaf", "2", "--paths", "2")
    f = tmp_path / "ft.json"
    f.write_text(p.stdout)
    assert "valid" in pxfab("validate", f).stdout
    out = pxfab("routes", "--file", f, "node0", "node3", "--json").stdout
    rows = json.loads(out)
    assert len(rows) == 4
    assert {r["hops"][2] for r in rows} == {"spine0", "spine1"}
    bad = tmp_path / "bad.json"
    bad.write_text('{"nodes": [}')
    r = pxfab("validate", bad, check=False)
    assert r.returncode == 2 and "invalid JSON" in r.stderr
