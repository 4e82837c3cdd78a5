"""up/down leave nothing behind, failures roll back, crashes are cleaned up, bad input
changes nothing, and the root check speaks clearly (root, except the last test's subject)."""

import json
import os
import subprocess
import sys

import pytest

from conftest import ENV, netns_names, pxfab, reachable, root_links

STATE = "/run/pxfab/state.json"


def ours_left():
    """Everything of pxfab's that could survive: namespaces, root devices, nft tables, state."""
    left = [ns for ns in netns_names() if ns.startswith("pxf-") or ns.startswith("node")
            and ns in _created]
    left += [d for d in root_links() if d.startswith("pxf-")]
    tables = subprocess.run(["nft", "list", "tables"], capture_output=True, text=True).stdout
    left += [t for t in tables.splitlines() if "pxfab" in t]
    qd = subprocess.run(["tc", "qdisc", "show"], capture_output=True, text=True).stdout
    left += [q for q in qd.splitlines() if "pxf-" in q]
    if os.path.exists(STATE):
        left.append(STATE)
    return left


_created = set()


@pytest.fixture
def clean(need_fabric_env):
    before = netns_names()
    _created.clear()
    try:
        yield before
    finally:
        pxfab("down", check=False)
        subprocess.run(["ip", "netns", "del", "fabtest-foreign"], capture_output=True)


def test_up_down_leaves_nothing(clean):
    pxfab("up", "--leaves", 2, "--spines", 1, "--nodes-per-leaf", 1, "--rails", 2)
    _created.update({"node0", "node1"})
    assert {"node0", "node1", "pxf-r0-leaf0", "pxf-r1-spine0"} <= netns_names()
    assert "pxf-mgmt" in root_links()
    pxfab("fault", "loss", "node0:rail0", 5)       # leave an nft table and a partition behind
    pxfab("fault", "partition", "node1")
    # a process still running on a node goes down with it
    sleeper = subprocess.Popen(["ip", "netns", "exec", "node0", "sleep", "60"])
    out = pxfab("down").stdout
    assert "removed" in out
    assert sleeper.wait(timeout=5) != 0
    assert ours_left() == []
    assert netns_names() == clean                 # nobody else's namespace was touched
    assert "no fabric" in pxfab("down").stdout    # idempotent


def test_failure_half_way_rolls_back(clean):
    env = dict(ENV, PXFAB_TEST_FAIL_AT="addresses")
    r = pxfab("up", "--nodes", 3, "--rails", 2, env=env, check=False)
    assert r.returncode == 1 or r.returncode == 2
    assert "removed" in r.stderr and "injected failure" in r.stderr
    _created.update({"node0", "node1", "node2"})
    assert ours_left() == []
    assert netns_names() == clean


def test_crash_leftovers_cleaned_by_next_up(clean):
    env = dict(ENV, PXFAB_TEST_CRASH_AT="shaping")
    r = pxfab("up", "--leaves", 2, "--spines", 1, "--nodes-per-leaf", 1, env=env, check=False)
    assert r.returncode == 99
    _created.update({"node0", "node1"})
    assert "node0" in netns_names()               # the crash left things behind ...
    st = json.loads(pxfab("status", "--json").stdout)
    assert st["phase"] == "creating"
    r = pxfab("fault", "down", "node0:rail0", check=False)
    assert r.returncode == 2 and "phase" in r.stderr
    out = pxfab("up", "--nodes", 2).stdout        # ... which the next up removes
    assert "leftovers" in out
    assert "pxf-leaf0" not in netns_names() and "pxf-rail0" in netns_names()
    assert all(reachable("node0", ["10.100.0.2"], timeout=2).values())
    pxfab("down")
    assert ours_left() == []


def test_bad_descriptions_change_nothing(clean, tmp_path):
    before_links = root_links()
    cases = {
        "broken.json": ('{"nodes": [', "invalid JSON"),
        "overlap.json": (json.dumps({
            "nodes": [{"name": "fa", "ifaces": {"rail0": ["10.7.0.1/24"], "rail1": ["10.7.0.129/25"]}},
                      {"name": "fb", "ifaces": {"rail0": ["10.7.0.2/24"], "rail1": ["10.8.0.2/24"]}}],
            "switches": [{"name": "s0", "kind": "bridge"}, {"name": "s1", "kind": "bridge"}],
            "links": [{"a": "fa:rail0", "b": "s0"}, {"a": "fb:rail0", "b": "s0"},
                      {"a": "fa:rail1", "b": "s1"}, {"a": "fb:rail1", "b": "s1"}]}), "overlaps"),
        "unknown.json": (json.dumps({
            "nodes": [{"name": "fa", "ifaces": {"rail0": ["10.7.0.1/24"]}}],
            "switches": [{"name": "s0", "kind": "bridge"}],
            "links": [{"a": "fa:rail0", "b": "s9"}]}), "neither a node nor a switch"),
    }
    for name, (text, msg) in cases.items():
        f = tmp_path / name
        f.write_text(text)
        r = pxfab("up", f, check=False)
        assert r.returncode == 2, (name, r.stdout, r.stderr)
        assert msg in r.stderr, (name, r.stderr)
    r = pxfab("up", "--nodes", 2, "--mgmt-subnet", "10.99.0.0/33", check=False)
    assert r.returncode == 2 and "management subnet" in r.stderr
    assert netns_names() == clean and root_links() == before_links
    assert not os.path.exists(STATE)


def test_existing_foreign_namespace_is_not_touched(clean, tmp_path):
    subprocess.run(["ip", "netns", "add", "fabtest-foreign"], check=True)
    d = json.loads(pxfab("gen", "--nodes", 2).stdout)
    d["nodes"][0]["name"] = "fabtest-foreign"
    d["links"][0]["a"] = "fabtest-foreign:rail0"
    f = tmp_path / "d.json"
    f.write_text(json.dumps(d))
    r = pxfab("up", f, check=False)
    assert r.returncode == 2 and "not created by pxfab" in r.stderr
    assert "fabtest-foreign" in netns_names()
    assert netns_names() == clean | {"fabtest-foreign"}


def test_mgmt_subnet_clash_with_root_routes(clean):
    """A management subnet that overlaps a route of the root namespace is refused."""
    routes = json.loads(subprocess.run(["ip", "-j", "-4", "route", "show"], capture_output=True,
                                       text=True).stdout or "[]")
    taken = [r["dst"] for r in routes if "/" in r.get("dst", "") and not r.get("dev", "").startswith("pxf-")]
    if not taken:
        pytest.skip("the root namespace has no subnet route to collide with")
    r = pxfab("up", "--nodes", 2, "--mgmt-subnet", taken[0], check=False)
    assert r.returncode == 2 and "overlaps route" in r.stderr, r.stderr
    assert netns_names() == clean
    r = pxfab("up", "--nodes", 2, "--mgmt-subnet", "127.42.0.0/16", check=False)
    assert r.returncode == 2 and "loopback" in r.stderr, r.stderr


def test_jumbo_mtu_and_rsh_agent(clean):
    pxfab("up", "--nodes", 2, "--rails", 2, "--mtu", 9000)
    _created.update({"node0", "node1"})
    out = subprocess.run(["ip", "-n", "node0", "-j", "link", "show", "rail1"], capture_output=True, text=True)
    assert json.loads(out.stdout)[0]["mtu"] == 9000
    # the ssh-compatible agent MPI launchers use: options skipped, command run on the node
    r = subprocess.run(["/run/pxfab/rsh", "-x", "-o", "StrictHostKeyChecking=no", "node1",
                        "ip", "-br", "addr", "show", "rail0"], capture_output=True, text=True)
    assert r.returncode == 0 and "10.100.0.2/24" in r.stdout
    r = pxfab("rsh", "-x", "node0", "ip -br addr show rail1")
    assert "10.101.0.1/24" in r.stdout
    # a full-size jumbo datagram crosses without fragmentation (DF set by ping probe's raw socket? use UDP)
    from conftest import finish_probe, probe, start_probe
    rx = start_probe("node1", "udp-recv", "--port", 9300, "--idle", 0.5)
    probe("node0", "udp-send", "10.101.0.2", "--port", 9300, "--count", 10, "--size", 8900)
    got = finish_probe(rx)
    assert got["received"] == 10 and got["bytes"] == 89000
    stats = json.loads(pxfab("stats", "node0:rail1").stdout)["links"]["node0:rail1"]
    assert 10 <= stats["a_to_b"]["packets"] < 20      # not fragmented into 60+ packets


def test_not_root_is_told_clearly(need_fabric_env):
    # an interpreter an unprivileged user can run (the test runner's may live under /root)
    py = next((p for p in (sys.executable, "/usr/bin/python3")
               if subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                  p, "-c", "pass"], capture_output=True).returncode == 0), None)
    if py is None:
        pytest.skip("no Python interpreter usable by an unprivileged user")
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                        py, "-m", "plexus.fab", "up", "--nodes", "2"], capture_output=True,
                       text=True, env=ENV, cwd="/")
    assert r.returncode == 3, r.stderr
    assert "needs root" in r.stderr
    assert not os.path.exists(STATE)
