"""Collectives with several ranks on each of several emulated nodes (root).

The selection table and some algorithms depend on where ranks run: the
node-aware algorithms, the "pairs" rows (ranks 2i and 2i+1 on one node)
and Rabenseifner's allreduce, whose halving takes the nearest partners
first when the launcher's node map puts consecutive ranks together. Every
blocking collective is checked against its reference (tests/mpi/coll_all,
counts up to 262144) with the default selection and with the allreduce
forced to each algorithm, over placements in pairs, in triples and uneven;
likewise with the alltoall forced to the staggered phases of two nodes.
"""

import os
import subprocess

import pytest

from conftest import ROOT, module_fabric

BUILD = os.environ.get("PX_BUILD_DIR", os.path.join(ROOT, "build"))
PXRUN = os.path.join(BUILD, "bin", "pxrun")
COLL_ALL = os.path.join(BUILD, "tests", "mpi", "coll_all")
COLL_NB = os.path.join(BUILD, "tests", "mpi", "coll_nb")


@pytest.fixture(scope="module")
def two_nodes():
    for p in (PXRUN, COLL_ALL):
        if not os.access(p, os.X_OK):
            pytest.skip(f"{p} not built (set PX_BUILD_DIR)")
    yield from module_fabric("--nodes", 2, "--rails", 1, "--rate", "10gbit")


def coll_all(hosts, env, timeout=180, prog=COLL_ALL):
    cmd = [PXRUN, "--launcher", "ip netns exec {host}", "--hosts", hosts,
           "--bootstrap-iface", "pxf-mgmt", "--timeout", str(timeout), "--env", "PX_NET=shm,tcp"]
    for k, v in env.items():
        cmd += ["--env", f"{k}={v}"]
    return subprocess.run(cmd + [prog], capture_output=True, text=True, timeout=timeout + 30)


@pytest.mark.parametrize("hosts", ["node0:2,node1:2", "node0:3,node1:3", "node0:1,node1:3"])
@pytest.mark.parametrize("algo", ["", "rabenseifner", "ring", "smp"])
def test_coll_all_several_per_node(two_nodes, hosts, algo):
    env = {"PX_ALLREDUCE_ALGORITHM": algo} if algo else {}
    p = coll_all(hosts, env)
    np_ = sum(int(h.split(":")[1]) for h in hosts.split(","))
    assert p.returncode == 0 and f"PASS coll_all np={np_}:" in p.stdout, \
        f"{hosts} {algo or 'default'}: rc={p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"


@pytest.mark.parametrize("hosts", ["node0:2,node1:2", "node0:3,node1:2", "node0:1,node1:3"])
def test_alltoall_staggered_two_nodes(two_nodes, hosts):
    """The staggered alltoall forced at every size, on even and uneven
    placements over two nodes (its phases follow the node map), blocking
    and nonblocking (in flight with other collectives and point-to-point)."""
    np_ = sum(int(h.split(":")[1]) for h in hosts.split(","))
    for name, prog in (("coll_all", COLL_ALL), ("coll_nb", COLL_NB)):
        p = coll_all(hosts, {"PX_ALLTOALL_ALGORITHM": "staggered"}, prog=prog)
        assert p.returncode == 0 and f"PASS {name} np={np_}:" in p.stdout, \
            f"{hosts} {name}: rc={p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"


def test_pairs_row_in_table():
    """pxinfo --coll shows the allreduce row that applies to ranks in pairs."""
    pxinfo = os.path.join(BUILD, "bin", "pxinfo")
    if not os.access(pxinfo, os.X_OK):
        pytest.skip(f"{pxinfo} not built")
    out = subprocess.run([pxinfo, "--coll"], capture_output=True, text=True, check=True).stdout
    rows = [l.split() for l in out.splitlines() if l.split()[:1] == ["allreduce"]]
    assert ["allreduce", "0", "0", "0", "pairs", "rabenseifner"] in rows, out
