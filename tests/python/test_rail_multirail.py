"""Multi-rail, multi-path virtual channels on emulated fabrics (root).

* ordering and integrity of mixed, checksummed traffic between many pairs
  (wildcard receives, blocking, nonblocking and collective traffic) under
  every PX_RAIL_POLICY, on two rails and on a fat-tree with two paths, and
  every rail or path carries a share of it;
* adaptive striping learns the capacity ratio of a 4:1 pair of rails;
* BSS stops using a path made 10x slower and returns to it once it recovers;
* bad rail configurations fail MPI_Init with a clear message, or fall back
  when PX_RAIL_FALLBACK says so.
"""

import os
import re
import subprocess
import tempfile
import threading

import sys

import pytest

from conftest import ENV, ROOT, finish_probe, module_fabric, pxfab, start_probe, stats

BUILD = os.environ.get("PX_BUILD_DIR", os.path.join(ROOT, "build"))
PXRUN = os.path.join(BUILD, "bin", "pxrun")
CHECK = os.path.join(BUILD, "tests", "mpi", "rail_check")
STREAM = os.path.join(BUILD, "tests", "mpi", "rail_stream")
POLICIES = ["bind", "rr", "wrr", "window", "even", "weighted", "adaptive", "bss", "epc"]


def launch(hosts, args, env=None, timeout=120):
    cmd = [PXRUN, "--launcher", "ip netns exec {host}", "--hosts", hosts,
           "--bootstrap-iface", "pxf-mgmt", "--timeout", str(timeout)]
    for k, v in (env or {}).items():
        cmd += ["--env", f"{k}={v}"]
    return cmd + [str(a) for a in args]


def run(hosts, args, env=None, timeout=120):
    return subprocess.run(launch(hosts, args, env, timeout), capture_output=True, text=True,
                          timeout=timeout + 30)


def sent(*links):
    """Bytes each link's node end has sent so far."""
    s = stats(*links)
    return {l: s[l]["a_to_b"]["bytes"] for l in links}


def weights(stderr, src=0, dst=1):
    """{sub: weight} from rank src's PX_PROFILE lines about rank dst."""
    w = {}
    for m in re.finditer(rf"rank {src} -> {dst} sub (\d+) \(([^)]*)\) policy \S+ weight ([\d.]+)",
                         stderr):
        w[m.group(2).split()[0]] = float(m.group(3))
    return w


def need_programs():
    for p in (PXRUN, CHECK, STREAM):
        if not os.access(p, os.X_OK):
            pytest.skip(f"{p} not built (set PX_BUILD_DIR)")


# ---------- two rails ----------

@pytest.fixture(scope="module")
def two_rails():
    need_programs()
    yield from module_fabric("--nodes", 2, "--rails", 2, "--rate", "1gbit")


@pytest.mark.parametrize("policy", POLICIES)
def test_integrity_every_policy_two_rails(two_rails, policy):
    links = ("node0:rail0", "node0:rail1", "node1:rail0", "node1:rail1")
    before = sent(*links)
    p = run("node0:2,node1:2", [CHECK, 2],
            env={"PX_NET": "tcp", "PX_RAIL_POLICY": policy, "PX_RAIL_STRIPE_MIN": "16k",
                 "PX_RAIL_BIND": "scatter"})
    assert p.returncode == 0 and "PASS rail_check np=4" in p.stdout, p.stdout + p.stderr
    after = sent(*links)
    moved = {l: after[l] - before[l] for l in links}
    # every policy spreads this job over both rails (bind: local rank 0 on
    # rail0, local rank 1 on rail1)
    for l in links:
        assert moved[l] > 2_000_000, f"{policy}: {l} carried only {moved[l]} bytes: {moved}"


def rail_capacity(dst, port, seconds=1.5):
    """Goodput (MB/s) of one TCP flow node0 -> dst: what the rail really carries."""
    rx = start_probe("node1", "tcp-recv", "--port", port)
    args = ["ip", "netns", "exec", "node0", sys.executable, "-m", "plexus.fab.probe", "tcp-send",
            dst, "--port", port, "--time", seconds]
    subprocess.run([str(a) for a in args], check=True, capture_output=True, env=ENV, timeout=60)
    return finish_probe(rx)["bps"] / 8e6


def test_adaptive_weights_learn_a_4_to_1_pair(two_rails):
    pxfab("fault", "rate", "node0:rail0", "400mbit")
    pxfab("fault", "rate", "node0:rail1", "100mbit")
    try:
        cap = {"rail0": rail_capacity("10.100.0.2", 9301), "rail1": rail_capacity("10.101.0.2", 9302)}
        true_ratio = cap["rail1"] / cap["rail0"]
        with tempfile.TemporaryDirectory() as gate:
            open(os.path.join(gate, "go0"), "w").close()
            p = run("node0,node1", [STREAM, 1, 160, gate, 4 << 20, 8],
                    env={"PX_RAIL_POLICY": "adaptive", "PX_PROFILE": "1"})
        assert p.returncode == 0 and "PASS rail_stream" in p.stdout, p.stdout + p.stderr
        w = weights(p.stderr)
        assert set(w) == {"rail0", "rail1"}, p.stderr
        ratio = w["rail1"] / w["rail0"]
        assert abs(ratio / true_ratio - 1) <= 0.10, \
            f"weights {w}: ratio {ratio:.3f}; rails carry {cap} MB/s, ratio {true_ratio:.3f}"
    finally:
        pxfab("fault", "reset")


def test_bad_rail_names_and_policies_fail_init(two_rails):
    p = run("node0,node1", [CHECK, 1], env={"PX_RAILS": "rail0,nosuch7"}, timeout=30)
    assert p.returncode != 0
    assert "PX_RAILS=rail0,nosuch7" in p.stderr and "nosuch7" in p.stderr, p.stderr
    p = run("node0,node1", [CHECK, 1], env={"PX_RAIL_POLICY": "fastest"}, timeout=30)
    assert p.returncode != 0 and "PX_RAIL_POLICY=fastest: invalid value" in p.stderr, p.stderr


def test_rails_without_common_subnet(two_rails):
    # an interface named alike on both nodes, on different subnets
    for node, addr in (("node0", "10.210.0.1/24"), ("node1", "10.211.0.2/24")):
        for cmd in (["ip", "link", "add", "xr0", "type", "veth", "peer", "name", "xr0p"],
                    ["ip", "addr", "add", addr, "dev", "xr0"], ["ip", "link", "set", "xr0", "up"],
                    ["ip", "link", "set", "xr0p", "up"]):
            subprocess.run(["ip", "netns", "exec", node] + cmd, check=True)
    try:
        p = run("node0,node1", [CHECK, 1], env={"PX_RAILS": "xr0"}, timeout=30)
        assert p.returncode != 0 and "shares no rail subnet" in p.stderr, p.stderr
        assert "PX_RAIL_FALLBACK=1" in p.stderr
        p = run("node0,node1", [CHECK, 1], env={"PX_RAILS": "xr0", "PX_RAIL_FALLBACK": "1"})
        assert p.returncode == 0 and "PASS rail_check" in p.stdout, p.stdout + p.stderr
        assert "using the bootstrap network" in p.stderr, p.stderr
    finally:
        for node in ("node0", "node1"):
            subprocess.run(["ip", "netns", "exec", node, "ip", "link", "del", "xr0"])


def test_pxinfo_shows_counters_of_a_running_job(two_rails):
    pxinfo = os.path.join(BUILD, "bin", "pxinfo")
    with tempfile.TemporaryDirectory() as gate:
        cmd = launch("node0,node1", [STREAM, 2, 16, gate, 1 << 20, 4], env={"PX_STATS": "1"})
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert proc.stdout.readline().startswith("READY 0")
            open(os.path.join(gate, "go0"), "w").close()
            assert proc.stdout.readline().startswith("PHASE 0")
            assert proc.stdout.readline().startswith("READY 1")  # job waits: counters are live
            out = subprocess.run([pxinfo, "--stats"], capture_output=True, text=True).stdout
            open(os.path.join(gate, "go1"), "w").close()
            rest, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 0 and "PASS rail_stream" in rest, rest + err
    m = re.findall(r"-> 1 sub (\d) (rail\d) \S+ +(?:up|suspect|DOWN) +weight ([\d.]+) tx (\d+) B", out)
    assert {s[1] for s in m} == {"rail0", "rail1"}, out
    assert sum(int(s[3]) for s in m) >= 16 << 20, out  # phase 0's 16 MB went out over them
    leftovers = [f for f in os.listdir("/dev/shm") if "-stats-" in f]
    assert not leftovers, leftovers


def conn_tx_rails(stderr):
    """{(rank, peer): set of rails} on which the rank's connection to the
    peer (hybrid mode: TCP subchannels, not udp:) sent data frames."""
    used = {}
    for m in re.finditer(r"rank (\d+) -> (\d+) sub \d+ \(([^)]*)\) policy \S+ weight [\d.]+ "
                         r"frames tx (\d+)", stderr):
        label = m.group(3)
        if label.startswith("udp:") or int(m.group(4)) == 0:
            continue
        used.setdefault((int(m.group(1)), int(m.group(2))), set()).add(label.split()[0])
    return used


@pytest.mark.parametrize("fast", [0, 8])
def test_hybrid_fastest_path_limit(two_rails, fast):
    """PX_RC_FAST_MAX: connections beyond it send on one subchannel (chosen by
    local rank), the others stripe over both rails."""
    p = run("node0:2,node1:2", [CHECK, 2],
            env={"PX_NET": "udp,tcp", "PX_RC_PROMOTE_AFTER": 1, "PX_RC_PROMOTE_SIZE": 0,
                 "PX_MAX_RC_CONN": 8, "PX_RC_FAST_MAX": fast, "PX_RAIL_STRIPE_MIN": "16k",
                 "PX_PROFILE": 1})
    assert p.returncode == 0 and "PASS rail_check np=4" in p.stdout, p.stdout + p.stderr
    conns = {int(m.group(1)): (int(m.group(2)), int(m.group(3))) for m in re.finditer(
        r"rank (\d+) channels: .* tcp (\d+) \(opened here \d+, by peers \d+; fastest path (\d+)\)",
        p.stderr)}
    assert len(conns) == 4, p.stderr
    used = conn_tx_rails(p.stderr)
    for rank, (n, nfast) in conns.items():
        assert n == 3, f"rank {rank}: {n} connections, expected one to each peer"
        assert nfast == min(fast, n), f"rank {rank}: {nfast} on the fastest path"
        mine = {peer: rails for (r, peer), rails in used.items() if r == rank}
        assert len(mine) == 3, f"rank {rank} sent over connections to {mine}"
        both = [peer for peer, rails in mine.items() if len(rails) == 2]
        if fast == 0:
            # one subchannel each: the rail of the rank's local rank (node0:2,node1:2)
            want = f"rail{rank % 2}"
            assert all(rails == {want} for rails in mine.values()), (rank, mine)
        else:
            assert len(both) == 3, f"rank {rank}: only {both} striped over both rails: {mine}"


# ---------- three rails: BSS ----------

@pytest.fixture(scope="module")
def three_rails():
    need_programs()
    yield from module_fabric("--nodes", 2, "--rails", 3, "--rate", "400mbit")


def test_bss_leaves_a_slow_path_and_returns(three_rails):
    links = ("node0:rail0", "node0:rail1", "node0:rail2")
    marks, rates = [], []
    with tempfile.TemporaryDirectory() as gate:
        cmd = launch("node0,node1", [STREAM, 4, 96, gate],
                     env={"PX_RAIL_POLICY": "bss", "PX_RAIL_BSS_BATCH": "2"})
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        err = []
        t = threading.Thread(target=lambda: err.append(proc.stderr.read()))
        t.start()
        # phase 0: all equal; phase 1: rail2 10x slower (the blocks already
        # split onto it drain); phase 2: still slow, steady; phase 3: rail2
        # back, rail0 10x slower
        plan = {1: [("node0:rail2", "40mbit")],
                3: [("node0:rail2", "400mbit"), ("node0:rail0", "40mbit")]}
        try:
            for line in proc.stdout:
                m = re.match(r"READY (\d+)", line)
                if m:
                    k = int(m.group(1))
                    marks.append(sent(*links))
                    for link, rate in plan.get(k, []):
                        pxfab("fault", "rate", link, rate)
                    open(os.path.join(gate, f"go{k}"), "w").close()
                if line.startswith("PHASE"):
                    rates.append(line.strip())
                if line.startswith(("PASS", "FAIL")):
                    marks.append(sent(*links))
                    out = line
            proc.wait(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
            t.join()
            pxfab("fault", "reset")
    assert proc.returncode == 0 and out.startswith("PASS"), "".join(err)
    share = []
    for a, b in zip(marks, marks[1:]):
        d = {l: b[l] - a[l] for l in links}
        tot = sum(d.values())
        share.append({l.split(":")[1]: d[l] / tot for l in links})
    # phase 2: the slow rail2 is left out (only the periodic retries reach it,
    # and a retry's small stripe must not put it back in the batch)
    assert share[2]["rail2"] < 0.08, f"{share} {rates}"
    # phase 3: rail2 is back in the batch and carries more than the now slow rail0
    assert share[3]["rail2"] > 0.30 and share[3]["rail0"] < share[3]["rail2"], f"{share} {rates}"


# ---------- fat-tree with two paths ----------

@pytest.fixture(scope="module")
def fat_tree_paths():
    need_programs()
    yield from module_fabric("--leaves", 2, "--spines", 2, "--nodes-per-leaf", 1, "--rails", 1,
                             "--paths", 2, "--rate", "1gbit")


@pytest.mark.parametrize("policy", POLICIES)
def test_integrity_over_two_paths(fat_tree_paths, policy):
    links = ("leaf0:spine0", "leaf0:spine1")
    before = stats(*links)
    p = run("node0:2,node1:2", [CHECK, 2],
            env={"PX_RAIL_POLICY": policy, "PX_RAIL_STRIPE_MIN": "16k"})
    assert p.returncode == 0 and "PASS rail_check np=4" in p.stdout, p.stdout + p.stderr
    after = stats(*links)
    for l in links:
        moved = sum(after[l][d]["bytes"] - before[l][d]["bytes"] for d in ("a_to_b", "b_to_a"))
        assert moved > 2_000_000, f"{policy}: {l} carried only {moved} bytes"


