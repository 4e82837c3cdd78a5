"""Shared pytest set-up for Plexus's Python tooling.

Puts python/ on the import path (no install needed) and provides helpers for
the emulated-fabric tests (test_fab_*.py), which need root, `ip netns`, tc and
nft; they are skipped with the reason when those are missing.
"""

import json
import os
import shutil
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYDIR = os.path.join(ROOT, "python")
if PYDIR not in sys.path:
    sys.path.insert(0, PYDIR)

ENV = dict(os.environ)
ENV["PYTHONPATH"] = PYDIR + (os.pathsep + ENV["PYTHONPATH"] if ENV.get("PYTHONPATH") else "")


def _netns_unusable():
    """Reason the fabric tests cannot run here, or None."""
    if os.geteuid() != 0:
        return "needs root (network namespaces); run the tests as root"
    for tool in ("ip", "tc", "nft", "bridge"):
        if shutil.which(tool) is None:
            return f"'{tool}' is missing (apt-get install -y iproute2 nftables procps)"
    probe = f"pxf-probe{os.getpid()}"
    p = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if p.returncode != 0:
        return f"'ip netns add' does not work here: {p.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


_REASON = None
_CHECKED = False


def fab_skip_reason():
    global _REASON, _CHECKED
    if not _CHECKED:
        _CHECKED = True
        _REASON = _netns_unusable()
        if _REASON is None and os.path.exists("/run/pxfab/state.json") and \
                not os.environ.get("PXFAB_TESTS_REPLACE"):
            _REASON = ("a pxfab fabric is already up and the tests would replace it "
                       "('pxfab down' first, or set PXFAB_TESTS_REPLACE=1)")
    return _REASON


@pytest.fixture(scope="session")
def need_fabric_env():
    reason = fab_skip_reason()
    if reason:
        pytest.skip(reason)


def pxfab(*args, check=True, env=None, timeout=120, **kw):
    """Run the pxfab CLI as a user would (python3 -m plexus.fab with PYTHONPATH)."""
    p = subprocess.run([sys.executable, "-m", "plexus.fab"] + [str(a) for a in args],
                       capture_output=True, text=True, env=env or ENV, timeout=timeout, **kw)
    if check and p.returncode != 0:
        raise AssertionError(f"pxfab {' '.join(map(str, args))} failed ({p.returncode}):\n"
                             f"{p.stdout}\n{p.stderr}")
    return p


def probe(node, *args, timeout=60):
    """Run plexus.fab.probe inside a node and return its JSON result."""
    p = subprocess.run(["ip", "netns", "exec", node, sys.executable, "-m", "plexus.fab.probe"]
                       + [str(a) for a in args], capture_output=True, text=True, env=ENV,
                       timeout=timeout)
    assert p.returncode == 0, f"probe {args} in {node} failed: {p.stderr}"
    return json.loads(p.stdout.strip().splitlines()[-1])


def start_probe(node, *args):
    """Start a receiver in a node; returns the Popen once it printed 'ready'."""
    p = subprocess.Popen(["ip", "netns", "exec", node, sys.executable, "-m", "plexus.fab.probe"]
                         + [str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=ENV)
    line = p.stdout.readline()
    assert line.strip() == "ready", f"receiver did not start: {line!r} {p.stderr.read() if p.poll() is not None else ''}"
    return p


def finish_probe(p, timeout=30):
    out, err = p.communicate(timeout=timeout)
    assert p.returncode == 0, f"receiver failed: {err}"
    return json.loads(out.strip().splitlines()[-1])


def reachable(node, addrs, src=None, timeout=1.0):
    """{target: True/False} from one ICMP echo per target ("DST" or "SRC:DST"), sent in parallel."""
    args = ["ping"] + list(addrs) + ["--timeout", timeout]
    if src:
        args += ["--src", src]
    res = probe(node, *args)
    return {a: r["received"] > 0 for a, r in res.items()}


def stats(*links):
    """Per-link counters (in-process: the CLI's `pxfab stats` is tested separately)."""
    from plexus.fab import fabric
    return fabric.stats(list(links) or None)["links"]


def routes(src, dst):
    """Rows of `pxfab routes SRC DST --json` for the running fabric (in-process)."""
    from plexus.fab import cli, fabric
    st, fab = fabric.current()
    return cli.route_table(fab, src, dst, set(st["faults"]["down"]))


def netns_names():
    try:
        return set(os.listdir("/run/netns"))
    except FileNotFoundError:
        return set()


def root_links():
    out = subprocess.run(["ip", "-j", "link", "show"], capture_output=True, text=True).stdout
    return {l["ifname"] for l in json.loads(out or "[]")}


@pytest.fixture
def fabric_up(need_fabric_env):
    """Factory: bring up a fabric with pxfab arguments; always taken down afterwards."""
    started = []

    def make(*args):
        pxfab("up", *args)
        started.append(args)
        return json.loads(pxfab("status", "--json").stdout)

    try:
        yield make
    finally:
        if started or os.path.exists("/run/pxfab/state.json"):
            pxfab("down", check=False)


def module_fabric(*args):
    """Module-scoped fabric fixture body: up, yield status, always down."""
    reason = fab_skip_reason()
    if reason:
        pytest.skip(reason)
    pxfab("up", *args)
    try:
        yield json.loads(pxfab("status", "--json").stdout)
    finally:
        pxfab("down", check=False)


def wait_for(pred, timeout=5.0, step=0.05):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(step)
    return pred()
