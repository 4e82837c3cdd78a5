"""A 2-leaf 2-spine fat-tree, 4 nodes, 2 rails, 2 paths per rail: connectivity,
routes checked with link counters, link faults, loss, partitions and schedules (root)."""

import json
import subprocess
import time

import pytest

from conftest import (finish_probe, module_fabric, probe, pxfab, reachable, routes, start_probe,
                      stats, wait_for)

ARGS = ("--leaves", 2, "--spines", 2, "--nodes-per-leaf", 2, "--rails", 2, "--paths", 2,
        "--rate", "1gbit")


@pytest.fixture(scope="module")
def fab():
    yield from module_fabric(*ARGS)


@pytest.fixture(autouse=True)
def clean_faults(fab):
    yield
    pxfab("fault", "reset", check=False)


def addrs_of(st, node, rail=None):
    n = next(x for x in st["nodes"] if x["name"] == node)
    return [a.split("/")[0] for r, lst in sorted(n["ifaces"].items()) if rail in (None, r) for a in lst]


def test_every_rail_and_path_reachable(fab):
    nodes = [n["name"] for n in fab["nodes"]]
    for src in nodes:
        # Bind the source address so each (rail, path) is exercised both ways.
        targets = [f"{r['src']}:{r['dst']}" for dst in nodes if dst != src
                   for r in routes(src, dst) if r["src_path"] == r["path"]]
        assert len(targets) == 3 * 2 * 2
        res = reachable(src, targets, timeout=2)
        assert all(res.values()), [t for t, ok in res.items() if not ok]
    # and the management network, including the root namespace's address
    mg = [n["mgmt"] for n in fab["nodes"][1:]] + [fab["mgmt"]["host"]]
    assert all(reachable("node0", mg).values())


def test_paths_cross_the_promised_spine(fab):
    """UDP bursts to each remote address go up exactly the leaf->spine link the routes name."""
    for dst in ("node2", "node3"):
        for row in routes("node0", dst):
            if row["rail"] != "rail0" or row["src_path"] != row["path"]:
                continue
            spine = row["hops"][2]
            up = {s: f"r0-leaf0:r0-spine{s[-1]}" for s in ("r0-spine0", "r0-spine1")}
            down_link = f"r0-leaf1:{spine}"
            before = stats(*up.values(), down_link)
            probe("node0", "udp-send", row["dst"], "--port", 9999, "--count", 400, "--size", 100,
                  "--src", row["src"])
            after = stats(*up.values(), down_link)
            # a is the leaf end of leaf:spine links, so a_to_b is leaf -> spine
            d = {s: after[l]["a_to_b"]["packets"] - before[l]["a_to_b"]["packets"] for s, l in up.items()}
            assert d[spine] >= 400, (row, d)
            other = next(s for s in d if s != spine)
            assert d[other] < 40, (row, d)
            down_pk = after[down_link]["b_to_a"]["packets"] - before[down_link]["b_to_a"]["packets"]
            assert down_pk >= 400, (row, down_pk)


def expected_pairs(src, dst, same_path=True):
    return [r for r in routes(src, dst) if not same_path or r["src_path"] == r["path"]]


def check_reachability_matches_routes(src, dst):
    """Ping every (rail, path) pair; reachable exactly when routes say both ways are intact."""
    rows = expected_pairs(src, dst)
    res = reachable(src, [f"{r['src']}:{r['dst']}" for r in rows], timeout=1)
    got = {(r["src"], r["dst"]): res[f"{r['src']}:{r['dst']}"] for r in rows}
    want = {(r["src"], r["dst"]): r["ok"] and r["back"]["ok"] for r in rows}
    assert got == want
    return want


def test_spine_link_down_breaks_exactly_its_paths_and_up_restores(fab):
    pxfab("fault", "down", "r0-spine1:r0-leaf0")
    st = json.loads(pxfab("status", "--json").stdout)
    assert st["faults"]["down"] == ["r0-leaf0:r0-spine1"]
    rail0, rail1 = {}, {}
    for src, dst in (("node0", "node2"), ("node0", "node3"), ("node2", "node1")):
        want = check_reachability_matches_routes(src, dst)
        rail0.update({k: v for k, v in want.items() if k[1].startswith("10.100.")})
        rail1.update({k: v for k, v in want.items() if k[1].startswith("10.101.")})
    assert True in rail0.values() and False in rail0.values(), rail0   # some paths broken, not all
    assert all(rail1.values())                                         # the other rail untouched
    # same-leaf traffic never touches the spines
    assert all(check_reachability_matches_routes("node0", "node1").values())
    pxfab("fault", "up", "r0-leaf0:r0-spine1")
    for dst in ("node2", "node3"):
        assert all(check_reachability_matches_routes("node0", dst).values())


def test_node_rail_down_and_up(fab):
    pxfab("fault", "down", "node1:rail1")
    out = subprocess.run(["ip", "-n", "node1", "-j", "link", "show", "rail1"], capture_output=True, text=True)
    assert "DOWN" in json.loads(out.stdout)[0]["operstate"]
    r = reachable("node0", addrs_of(fab, "node1"))
    assert r == {a: not a.startswith("10.101.") for a in addrs_of(fab, "node1")}
    pxfab("fault", "up", "node1:rail1")
    assert all(reachable("node0", addrs_of(fab, "node1"), timeout=2).values())


def test_loss_ten_percent(fab):
    pxfab("fault", "loss", "node0:rail0", "10")
    rx = start_probe("node0", "udp-recv", "--port", 9100, "--idle", 1)
    probe("node1", "udp-send", "10.100.0.1", "--port", 9100, "--count", 2000, "--size", 200,
          "--pps", 20000)
    got = finish_probe(rx)
    lost = 1 - got["received"] / 2000
    assert 0.05 <= lost <= 0.16, got
    s = stats("node0:rail0")["node0:rail0"]
    assert s["loss_percent"] == 10
    assert s["b_to_a"]["drops"] >= 2000 - got["received"]
    pxfab("fault", "loss", "node0:rail0", "0")
    rx = start_probe("node0", "udp-recv", "--port", 9101, "--idle", 1)
    probe("node1", "udp-send", "10.100.0.1", "--port", 9101, "--count", 1000, "--pps", 20000)
    assert finish_probe(rx)["received"] == 1000


def test_loss_hits_each_datagram_of_an_offloaded_send(fab):
    """A send the stack cuts into 8 datagrams (UDP segmentation offload) loses them
    one at a time, as a wire would, not all or none."""
    pxfab("fault", "loss", "node0:rail0", "10")
    rx = start_probe("node0", "udp-recv", "--port", 9103, "--idle", 1, "--group", 8)
    probe("node1", "udp-send", "10.100.0.1", "--port", 9103, "--count", 500, "--size", 1000,
          "--gso", 8, "--pps", 2000)
    got = finish_probe(rx)
    lost = 1 - got["received"] / 4000
    assert 0.05 <= lost <= 0.16, got
    # each group of 8 loses some of its datagrams with 1 - 0.9^8 - 0.1^8 = 57%
    assert got["partial"] >= 0.3 * 500, got
    pxfab("fault", "loss", "node0:rail0", "0")
    rx = start_probe("node0", "udp-recv", "--port", 9104, "--idle", 1, "--group", 8)
    probe("node1", "udp-send", "10.100.0.1", "--port", 9104, "--count", 200, "--size", 1000,
          "--gso", 8, "--pps", 2000)
    got = finish_probe(rx)
    assert got["received"] == 1600 and got["partial"] == 0, got


def test_loss_all(fab):
    """100% loss: the link stays up and silently carries nothing."""
    pxfab("fault", "loss", "node0:rail0", "100")
    rx = start_probe("node0", "udp-recv", "--port", 9102, "--idle", 1, "--first-timeout", 2)
    probe("node1", "udp-send", "10.100.0.1", "--port", 9102, "--count", 200, "--pps", 20000)
    assert finish_probe(rx)["received"] == 0
    assert stats("node0:rail0")["node0:rail0"]["b_to_a"]["drops"] >= 200
    pxfab("fault", "loss", "node0:rail0", "0")


def test_partition_isolates_node_and_heal_restores(fab):
    pxfab("fault", "partition", "node3")
    others = ["node0", "node1", "node2"]
    targets = addrs_of(fab, "node3") + [next(n["mgmt"] for n in fab["nodes"] if n["name"] == "node3")]
    for src in others:
        assert not any(reachable(src, targets).values()), src
    assert all(reachable("node0", addrs_of(fab, "node1") + addrs_of(fab, "node2")).values())
    pxfab("fault", "heal", "node3")
    assert all(reachable("node0", targets, timeout=2).values())
    pxfab("fault", "partition", "node3", "--rails-only")
    r = reachable("node0", targets)
    assert r[targets[-1]] and not any(r[a] for a in targets[:-1])


def test_schedule_in_background(fab, tmp_path):
    f = tmp_path / "s.json"
    f.write_text(json.dumps([{"at": 0.3, "action": "down", "link": "node1:rail1"},
                             {"at": 1.6, "action": "up", "link": "node1:rail1"}]))
    t0 = time.time()
    pxfab("schedule", f, "--background")

    def oper():
        out = subprocess.run(["ip", "-n", "node1", "-j", "link", "show", "rail1"], capture_output=True, text=True)
        return json.loads(out.stdout)[0]["operstate"]
    assert wait_for(lambda: oper() == "DOWN", timeout=1.5)
    assert time.time() - t0 < 1.6
    assert wait_for(lambda: oper() == "UP", timeout=4)
    st = json.loads(pxfab("status", "--json").stdout)
    assert wait_for(lambda: not any(j["alive"] for j in json.loads(pxfab("status", "--json").stdout)["jobs"]), 3)
    assert st["faults"]["down"] == []


def test_bad_fault_input_changes_nothing(fab, tmp_path):
    before = json.loads(pxfab("status", "--json").stdout)
    r = pxfab("fault", "down", "node7:rail0", check=False)
    assert r.returncode == 2 and "unknown link" in r.stderr
    r = pxfab("fault", "loss", "node0:rail0", "250", check=False)
    assert r.returncode == 2 and "between 0 and 100" in r.stderr
    r = pxfab("fault", "partition", "nodeX", check=False)
    assert r.returncode == 2 and "unknown node" in r.stderr
    f = tmp_path / "bad.json"
    f.write_text(json.dumps([{"at": 0, "action": "down", "link": "node0:rail0"},
                             {"at": 1, "action": "down", "link": "nope"}]))
    r = pxfab("schedule", f, check=False)
    assert r.returncode == 2 and "event 1" in r.stderr
    after = json.loads(pxfab("status", "--json").stdout)
    assert after["faults"] == before["faults"]
    assert all(l["state"] == "up" for l in after["links"])


def test_exec_stats_export(fab):
    out = pxfab("exec", "node2", "--", "ip", "-br", "addr").stdout
    assert "10.100.0.3/24" in out and "10.101.1.3/24" in out and "10.99.0.3/16" in out
    s = stats()
    assert len(s) == 16 and all(v["a"]["present"] and v["b"]["present"] for v in s.values())
    topo = json.loads(pxfab("export", "--format", "plexus-json").stdout)
    assert [n["name"] for n in topo["nodes"]] == ["node0", "node1", "node2", "node3"]
    assert "SwitchName=r0-spine0 Switches=r0-leaf[0-1]" in pxfab("export", "--format", "slurm").stdout
