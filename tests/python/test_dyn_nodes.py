"""Dynamic processes between emulated nodes (root): MPI_Comm_spawn places
the children with the parent's launcher and hosts, so they run on several
nodes and talk to their parents over the rails; two separate pxrun jobs on
different nodes accept, connect and exchange checked data. Every payload is
checked by the programs (tests/mpi/dyn_spawn.c, dyn_twojobs.c).
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


def launch(hosts, np_, *args):
    return [PXRUN, "--launcher", "ip netns exec {host}", "--hosts", hosts,
            "--bootstrap-iface", "pxf-mgmt", "--timeout", "90", "-n", str(np_),
            "--env", "PX_NET=shm,tcp", *args]


@pytest.fixture(scope="module")
def three_nodes():
    for p in (PXRUN, SPAWN, TWOJOBS):
        if not os.access(p, os.X_OK):
            pytest.skip(f"{p} not built (set PX_BUILD_DIR)")
    yield from module_fabric("--nodes", 3, "--rails", 2, "--rate", "1gbit")


@pytest.mark.parametrize("np_", [1, 2])
def test_spawn_across_nodes(three_nodes, np_):
    p = subprocess.run(launch("node0:1,node1:1,node2:1", np_, SPAWN), capture_output=True,
                       text=True, timeout=120)
    m = re.search(rf"PASS dyn_spawn np={np_}: .* on (\d+) host", p.stdout)
    assert p.returncode == 0 and m, f"rc={p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
    # 4 children dealt over the parent's 3 hosts
    assert int(m.group(1)) == 3, p.stdout


def test_two_jobs_on_different_nodes(three_nodes):
    with tempfile.TemporaryDirectory() as tmp:
        port = os.path.join(tmp, "port")
        a = subprocess.Popen(launch("node0:1,node1:1", 2, TWOJOBS, "accept", port, "3"),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        c = subprocess.run(launch("node2:2,node1:1", 3, TWOJOBS, "connect", port, "2"),
                           capture_output=True, text=True, timeout=120)
        aout, aerr = a.communicate(timeout=120)
    assert a.returncode == 0 and "PASS dyn_twojobs np=2:" in aout, f"{aout}\n{aerr[-3000:]}"
    assert c.returncode == 0 and "PASS dyn_twojobs np=3:" in c.stdout, \
        f"{c.stdout}\n{c.stderr[-3000:]}"
