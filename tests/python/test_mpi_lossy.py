"""The MPI test suite over lossy datagrams, on an emulated fabric (root).

Runs the programs of tests/mpi/testlist across four pxfab nodes (two rails
each) while every rail loses 5% of its packets in each direction, in two
modes:

  udp      PX_NET=udp: every message, between nodes and inside one, on
           datagrams made reliable by the rail layer (messages of 512 KB
           and more by udp-zcopy, with its own acknowledgements);
  hybrid   PX_NET=udp,tcp with the default thresholds: datagrams to every
           peer, connections to the few that carry enough.

Each job must pass its own checks (every test program verifies the data it
receives and prints PASS only when all ranks agree), exit 0 and leave no
process behind (tests/mpi/run_expect.sh). At the end, the fabric must have
dropped packets on every rail, or the run proved nothing.

Ranks are dealt round-robin over the nodes, so at up to 4 ranks every pair
crosses a lossy rail. By default a subset runs: each program once at up to
4 ranks over udp (but p2p_large and p2p_many, which move hundreds of
megabytes), and four of them over hybrid channels; PX_LOSSY_SUITE=all runs
every (program, ranks) line of the testlist in both modes, forced
collective algorithms included (514 jobs, about 100 minutes here). Programs
that are expected to fail (fault_*) are left out: their failure is the
launcher's, not the network's.
"""

import os
import re
import subprocess

import pytest

from conftest import ROOT, module_fabric, pxfab, stats

BUILD = os.environ.get("PX_BUILD_DIR", os.path.join(ROOT, "build"))
PXRUN = os.path.join(BUILD, "bin", "pxrun")
TESTDIR = os.path.join(BUILD, "tests", "mpi")
RUN_EXPECT = os.path.join(ROOT, "tests", "mpi", "run_expect.sh")
TESTLIST = os.path.join(ROOT, "tests", "mpi", "testlist")

NODES = 4
RAILS = 2
LOSS = 5  # percent, each direction, every rail
MODES = {
    "udp": {"PX_NET": "udp", "PX_CHANNELS": "size>=512k:udp-zcopy|*:udp"},
    "hybrid": {"PX_NET": "udp,tcp"},
}
ALL = os.environ.get("PX_LOSSY_SUITE") == "all"


def parse_testlist():
    """[(prog, variant, [nprocs], {env}, timeout)] for the jobs expected to pass."""
    out = []
    with open(TESTLIST) as f:
        for line in f:
            line = line.split("#", 1)[0].strip() if line.lstrip().startswith("#") else line.strip()
            if not line:
                continue
            fields = line.split()
            prog, nps, opts = fields[0], [int(n) for n in fields[1].split(",")], fields[2:]
            env, variant, timeout, expected_ok = {}, "", 60, True
            for o in opts:
                if o.startswith("env="):
                    k, v = o[4:].split("=", 1)
                    env[k] = v
                elif o.startswith("name="):
                    variant = o[5:]
                elif o.startswith("timeout="):
                    timeout = int(o[8:])
                elif o.startswith("expect_exit=") or o.startswith("expect_output="):
                    expected_ok = False
                elif o.startswith("transports=") and "udp" not in o[11:].split(","):
                    expected_ok = False  # kept off datagrams (bigcount_huge: 2 GB messages)
            if expected_ok:
                out.append((prog, variant, nps, env, timeout))
    return out


# The default run: every program once over datagrams (but the two that move
# hundreds of megabytes), and a few over hybrid channels.
HEAVY = {"p2p_large", "p2p_many"}
# Timing bounds that assume every rank is in MPI when a message of its is
# lost: progress_sleep's rank 0 sleeps outside MPI between waking the
# others, so a lost wake-up (or acknowledgement) waits up to its whole
# second there, and the waiters keep sending again to a rank that does not
# answer; progress_sleep_mt bounds the mean time of an operation, which
# each retransmission lengthens by a timeout. They run without loss in the
# MPI suite.
LOSS_TIMING = {"progress_sleep", "progress_sleep_mt"}
HYBRID_FEW = {"p2p_sizes", "coll_all", "rail_check", "ft_stream"}


def cases():
    sel = []
    for prog, variant, nps, env, timeout in parse_testlist():
        nps = [n for n in nps if n >= 2]
        if not nps:
            continue
        for mode in MODES:
            if ALL:
                chosen = nps
            elif (variant or prog in HEAVY or prog in LOSS_TIMING
                  or (mode == "hybrid" and prog not in HYBRID_FEW)):
                chosen = []
            else:
                chosen = [max(n for n in nps if n <= NODES)] if min(nps) <= NODES else []
            for n in chosen:
                name = f"{prog}{'-' + variant if variant else ''}.np{n}.{mode}"
                sel.append(pytest.param(prog, n, env, timeout, mode, id=name))
    return sel


def hosts(n):
    per = [0] * NODES
    for i in range(n):
        per[i % NODES] += 1
    return ",".join(f"node{k}:{c}" for k, c in enumerate(per) if c)


def rail_links():
    return [f"node{k}:rail{r}" for k in range(NODES) for r in range(RAILS)]


def dropped():
    s = stats(*rail_links())
    return {l: s[l]["a_to_b"]["drops"] + s[l]["b_to_a"]["drops"] for l in rail_links()}


@pytest.fixture(scope="module")
def lossy_fabric():
    for p in (PXRUN, RUN_EXPECT):
        if not os.path.exists(p):
            pytest.skip(f"{p} not built (set PX_BUILD_DIR)")
    gen = module_fabric("--nodes", NODES, "--rails", RAILS)
    fab = next(gen)
    try:
        for link in rail_links():
            pxfab("fault", "loss", link, LOSS)
        yield {"fabric": fab, "before": dropped()}
    finally:
        pxfab("fault", "reset", check=False)
        next(gen, None)


@pytest.mark.parametrize("prog,np,env,timeout,mode", cases())
def test_mpi_suite_lossy(lossy_fabric, prog, np, env, timeout, mode):
    exe = os.path.join(TESTDIR, prog)
    if not os.access(exe, os.X_OK):
        pytest.skip(f"{exe} not built")
    cmd = ["bash", RUN_EXPECT, "--prog", exe, "--output", f"PASS {prog} np={np}:", "--",
           PXRUN, "-n", str(np), "--hosts", hosts(np), "--launcher", "ip netns exec {host}",
           "--bootstrap-iface", "pxf-mgmt", "--timeout", str(timeout * 2)]
    for k, v in dict(MODES[mode], **env).items():
        cmd += ["--env", f"{k}={v}"]
    cmd.append(exe)
    # pxrun hands PX_* variables to the ranks; the test's own is not one of theirs
    penv = {k: v for k, v in os.environ.items() if k != "PX_BUILD_DIR"}
    p = subprocess.run(cmd, capture_output=True, text=True, env=penv, timeout=timeout * 2 + 60)
    tail = "\n".join((p.stdout + p.stderr).strip().splitlines()[-30:])
    assert p.returncode == 0, f"{' '.join(cmd)}\n{tail}"
    assert not re.search(r"run_expect: FAIL", p.stdout), tail


def test_zz_packets_were_lost(lossy_fabric):
    """The suite above ran while every rail dropped packets."""
    after = dropped()
    for link, n in after.items():
        assert n > lossy_fabric["before"].get(link, 0), \
            f"{link}: no packet dropped during the lossy suite ({after})"
