"""Dynamic processes between emulated nodes (root): MPI_Comm_spawn places
the children with the parent's launcher and hosts, so they run on several
nodes and talk to their parents over the rails; two separate pxrun jobs on
different nodes accept, connect and exchange checked data, also when the
jobs' own ranks talk over datagrams (the other job's processes are then
reached over connections opened for them). Every payload is checked by the
programs (tests/mpi/dyn_spawn.c, dyn_twojobs.c).
"""

import os
import re
import subprocess
import tempfile

import pytest

from conftest import ROOT, module_fabric

BUILD = os.environ.get("PX_BUILD_DIR", os.path.join(ROOT, "build"))
PXRUN = os.path.join(BUILD, "bin", "pxrun")
SPAWN = os.path.join(BUILD, "tests", "mpi", "dyn_spawn")
TWOJOBS = os.path.join(BUILD, "tests", "mpi", "dyn_twojobs")


def launch(hosts, np_, *args, net="shm,tcp"):
    return [PXRUN, "--launcher", "ip netns exec {host}", "--hosts", hosts,
            "--bootstrap-iface", "pxf-mgmt", "--timeout", "90", "-n", str(np_),
            "--env", "PX_NET=" + net, *args]


@pytest.fixture(scope="module")
def three_nodes():
    for p in (PXRUN, SPAWN, TWOJOBS):
        if not os.access(p, os.X_OK):
            pytest.skip(f"{p} not built (set PX_BUILD_DIR)")
    yield from module_fabric("--nodes", 3, "--rails", 2, "--rate", "1gbit")


@pytest.mark.parametrize("np_,net", [(1, "shm,tcp"), (2, "shm,tcp"), (2, "shm,udp")])
def test_spawn_across_nodes(three_nodes, np_, net):
    p = subprocess.run(launch("node0:1,node1:1,node2:1", np_, SPAWN, net=net),
                       capture_output=True, text=True, timeout=120)
    m = re.search(rf"PASS dyn_spawn np={np_}: .* on (\d+) host", p.stdout)
    assert p.returncode == 0 and m, f"rc={p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
    # 4 children dealt over the parent's 3 hosts
    assert int(m.group(1)) == 3, p.stdout


@pytest.mark.parametrize("net", ["shm,tcp", "shm,udp"])
def test_two_jobs_on_different_nodes(three_nodes, net):
    with tempfile.TemporaryDirectory() as tmp:
        port = os.path.join(tmp, "port")
        a = subprocess.Popen(launch("node0:1,node1:1", 2, TWOJOBS, "accept", port, "3", net=net),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        c = subprocess.run(launch("node2:2,node1:1", 3, TWOJOBS, "connect", port, "2", net=net),
                           capture_output=True, text=True, timeout=120)
        aout, aerr = a.communicate(timeout=120)
    assert a.returncode == 0 and "PASS dyn_twojobs np=2:" in aout, f"{aout}\n{aerr[-3000:]}"
    assert c.returncode == 0 and "PASS dyn_twojobs np=3:" in c.stdout, \
        f"{c.stdout}\n{c.stderr[-3000:]}"
