"""Plexus under a real Slurm cluster (root): Debian's slurmctld and one
slurmd in each of two emulated nodes (scripts/slurm-local.sh up --pxfab),
joined by two 1 Gbit/s rails. MPI test programs run with srun --mpi=pmi2 and
--mpi=pmix at 1 to 8 ranks over one and two nodes, sbatch runs a script that
uses srun and pxrun (which takes its hosts from the allocation and starts
the other node's ranks through srun), MPI_Comm_spawn from a step starts its
children on the allocation's nodes, an MPI_Abort ends the step with its
code, and srun without a process-management interface is refused with a
message that says what to do.
"""

import os
import re
import shutil
import subprocess
import time

import pytest

from conftest import ROOT, module_fabric

BUILD = os.environ.get("PX_BUILD_DIR", os.path.join(ROOT, "build"))
PXRUN = os.path.join(BUILD, "bin", "pxrun")
TESTS = os.path.join(BUILD, "tests", "mpi")
SLURM_LOCAL = os.path.join(ROOT, "scripts", "slurm-local.sh")
SLURM_DIR = "/tmp/plexus-slurm-tests"
CPUS = 4  # per node: 8 ranks fill both

# point to point, collectives, communicators, one-sided, I/O, the node map
PROGRAMS = ["env_query", "p2p_order", "p2p_wildcard", "p2p_large", "p2p_many", "coll_basic",
            "coll_nb", "comm_basic", "comm_create_group", "rma_epochs", "rma_atomics",
            "io_basic", "node_map"]


def slurm_env():
    env = dict(os.environ)
    env["SLURM_CONF"] = os.path.join(SLURM_DIR, "slurm.conf")
    env["PX_SLURM_DIR"] = SLURM_DIR
    # the tests' own Plexus settings would leak into the jobs
    for k in list(env):
        if k.startswith("PX_") and k not in ("PX_SLURM_DIR",):
            del env[k]
    return env


@pytest.fixture(scope="module")
def cluster():
    if os.geteuid() != 0:
        pytest.skip("needs root (Slurm's daemons, network namespaces)")
    for tool in ("slurmctld", "slurmd", "srun", "sbatch", "munged"):
        if shutil.which(tool) is None and not os.path.exists("/usr/sbin/" + tool):
            pytest.fail(f"{tool} is missing: scripts/install-deps.sh installs Slurm")
    for p in [PXRUN] + [os.path.join(TESTS, n) for n in PROGRAMS]:
        if not os.access(p, os.X_OK):
            pytest.skip(f"{p} not built (set PX_BUILD_DIR)")
    fab = module_fabric("--nodes", 2, "--rails", 2, "--rate", "1gbit")
    next(fab)
    env = slurm_env()
    try:
        p = subprocess.run([SLURM_LOCAL, "up", "--pxfab", "--cpus", str(CPUS)], env=env,
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, f"Slurm did not come up:\n{p.stdout}\n{p.stderr}"
        yield env
    finally:
        subprocess.run([SLURM_LOCAL, "down"], env=env, capture_output=True, timeout=60)
        next(fab, None)


def srun(env, mpi, np_, prog, *args, timeout=150):
    nodes = 1 if np_ == 1 else 2
    cmd = ["srun", f"--mpi={mpi}", "-N", str(nodes), "-n", str(np_), "--time=3",
           os.path.join(TESTS, prog), *args]
    t0 = time.time()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    return p, time.time() - t0


def passed(p, prog, np_):
    return p.returncode == 0 and f"PASS {prog} np={np_}:" in p.stdout


@pytest.mark.parametrize("np_", [1, 2, 4, 8])
@pytest.mark.parametrize("prog", PROGRAMS)
def test_srun_pmi2(cluster, prog, np_):
    p, _ = srun(cluster, "pmi2", np_, prog)
    assert passed(p, prog, np_), f"rc={p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"


@pytest.mark.parametrize("np_", [1, 5])
@pytest.mark.parametrize("prog", PROGRAMS)
def test_srun_pmix(cluster, prog, np_):
    p, _ = srun(cluster, "pmix", np_, prog)
    assert passed(p, prog, np_), f"rc={p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"


def test_sbatch_srun_and_pxrun(cluster, tmp_path):
    """A batch script over both nodes: srun with either interface, and pxrun
    taking node[0-1] and 4,1 tasks from the allocation."""
    out = tmp_path / "job.out"
    script = tmp_path / "job.sh"
    nm = os.path.join(TESTS, "node_map")
    big = os.path.join(TESTS, "p2p_large")
    script.write_text("#!/bin/sh\n"
                      "echo \"alloc $SLURM_JOB_NODELIST $SLURM_TASKS_PER_NODE\"\n"
                      f"srun --mpi=pmi2 {nm}; echo \"rc $?\"\n"
                      f"srun --mpi=pmix {nm}; echo \"rc $?\"\n"
                      f"{PXRUN} {nm}; echo \"rc $?\"\n"
                      f"{PXRUN} {big}; echo \"rc $?\"\n")
    script.chmod(0o755)
    p = subprocess.run(["sbatch", "-W", "-N", "2", "-n", "5", "--time=5", "-o", str(out),
                        str(script)], env=cluster, capture_output=True, text=True, timeout=300)
    text = out.read_text() if out.exists() else ""
    assert p.returncode == 0, f"sbatch rc={p.returncode}\n{p.stderr}\n{text}"
    assert "alloc node[0-1] 4,1" in text, text
    assert text.count("PASS node_map np=5: 5 ranks on 2 nodes") == 3, text
    assert "PASS p2p_large np=5:" in text, text
    assert text.count("rc 0") == 4, text


@pytest.mark.parametrize("mpi,np_", [("pmi2", 1), ("pmi2", 2), ("pmix", 2)])
def test_spawn_under_srun(cluster, mpi, np_):
    """dyn_spawn in a step: MPI_Comm_spawn starts the children with pxrun,
    which takes the hosts from the allocation and reaches the other node
    through srun; 4 children, data checked both ways, spawn_multiple, and
    the failures reported. Over two nodes the children run on both."""
    p, _ = srun(cluster, mpi, np_, "dyn_spawn", timeout=150)
    m = re.search(rf"PASS dyn_spawn np={np_}: .* on (\d+) host", p.stdout)
    assert p.returncode == 0 and m, f"rc={p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
    assert int(m.group(1)) == (1 if np_ == 1 else 2), p.stdout


@pytest.mark.parametrize("mpi", ["pmi2", "pmix"])
def test_abort_ends_step(cluster, mpi):
    """fault_abort: one rank calls MPI_Abort(3) while the others wait in MPI;
    the step ends at once. srun's own code is the abort's under PMIx; under
    PMI-2 Slurm kills the other tasks and srun reports the highest code, the
    killed tasks' 137, while naming the aborting task's 3."""
    p, dt = srun(cluster, mpi, 4, "fault_abort", timeout=60)
    assert dt < 20, f"the step took {dt:.1f} s to end"
    assert "bort" in p.stderr + p.stdout, p.stderr
    if mpi == "pmix":
        assert p.returncode == 3, f"rc={p.returncode}\n{p.stderr[-2000:]}"
    else:
        assert p.returncode != 0 and "Exited with exit code 3" in p.stderr, \
            f"rc={p.returncode}\n{p.stderr[-2000:]}"


def test_killed_rank_ends_job(cluster):
    """fault_kill: a rank dies by SIGKILL; the others find out and the step
    ends with an error, not a hang."""
    p, dt = srun(cluster, "pmi2", 4, "fault_kill", timeout=90)
    assert p.returncode != 0, p.stdout
    assert dt < 60, f"the step took {dt:.1f} s to end"


def test_srun_without_pmi_is_refused(cluster):
    p, _ = srun(cluster, "none", 2, "env_query", timeout=60)
    assert p.returncode != 0, p.stdout
    assert "--mpi=pmi2" in p.stderr and "cannot meet" in p.stderr, p.stderr


def test_boot_backend_forced(cluster):
    """PX_BOOT names the backend: asking for pmix under a PMI-2 step fails
    with a message, and pmi2 under a PMI-2 step runs."""
    env = dict(cluster)
    env["PX_BOOT"] = "pmix"
    p, _ = srun(env, "pmi2", 2, "env_query", timeout=60)
    assert p.returncode != 0 and "PX_BOOT=pmix" in p.stderr, p.stderr
    env["PX_BOOT"] = "pmi2"
    p, _ = srun(env, "pmi2", 2, "env_query", timeout=60)
    assert passed(p, "env_query", 2), p.stderr
