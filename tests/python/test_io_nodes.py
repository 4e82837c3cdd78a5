"""MPI-IO between emulated nodes (root): the file in a directory every node
sees, the two-phase exchange with one aggregator per node crossing the
network. Each tests/mpi/io_* program (file objects and errors, strided
views with independent and collective writes compared, shared and ordered
pointers, nonblocking and split collective access, atomic mode, data
representations) runs with ranks spread over two nodes, evenly and
unevenly, over one rail and over two.
"""

import os
import subprocess

import pytest

from conftest import ROOT, module_fabric

BUILD = os.environ.get("PX_BUILD_DIR", os.path.join(ROOT, "build"))
PXRUN = os.path.join(BUILD, "bin", "pxrun")
PROGRAMS = ["io_basic", "io_view", "io_ptrs", "io_nb", "io_atomic", "io_datarep"]


@pytest.fixture(scope="module")
def two_nodes():
    for p in [PXRUN] + [os.path.join(BUILD, "tests", "mpi", n) for n in PROGRAMS]:
        if not os.access(p, os.X_OK):
            pytest.skip(f"{p} not built (set PX_BUILD_DIR)")
    yield from module_fabric("--nodes", 2, "--rails", 2, "--rate", "1gbit")


@pytest.mark.parametrize("rails", ["rail0", "rail0,rail1"])
@pytest.mark.parametrize("hosts", ["node0:2,node1:2", "node0:1,node1:3"])
@pytest.mark.parametrize("prog", PROGRAMS)
def test_io_two_nodes(two_nodes, prog, hosts, rails):
    cmd = [PXRUN, "--launcher", "ip netns exec {host}", "--hosts", hosts,
           "--bootstrap-iface", "pxf-mgmt", "--timeout", "120", "--env", "PX_NET=shm,tcp",
           "--env", f"PX_RAILS={rails}", os.path.join(BUILD, "tests", "mpi", prog)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=150)
    np_ = sum(int(h.split(":")[1]) for h in hosts.split(","))
    assert p.returncode == 0 and f"PASS {prog} np={np_}:" in p.stdout, \
        f"{prog} {hosts} {rails}: rc={p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
