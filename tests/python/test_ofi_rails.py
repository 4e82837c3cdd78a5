"""PX_NET=ofi between two emulated nodes with two rails (root).

tests/mpi/ft_stream (numbered, checksummed messages of 1 KiB to 1 MiB,
nonblocking windows, blocking exchanges and allreduces; every message checked
for loss, duplication, order and corruption at the end) runs from node0 to
node1 over libfabric (tcp;ofi_rxm: one endpoint per rail address, paired by
subnet into one subchannel per rail), and:

  striped    no fault: the verdict is clean and both rails carried a good
             share of the bytes (the rail layer stripes over the endpoints);
  rail down  node0:rail1 down for good 3 s into the stream: the verdict is
             clean (the frames the dead rail held went again on rail0 exactly
             once), the subchannel was declared DOWN, traffic stopped for at
             most MAX_STALL_S, and rail0 alone carries on at a fair rate.

The faults are plexus.fab.scenarios' (shared with test_rail_faults.py and
bench/fault.py). Emulated nodes only: the traffic stays on the addresses
pxfab creates. PX_BUILD_DIR selects the build (default: <repo>/build).
"""

import os
import re

import pytest

from conftest import module_fabric, pxfab
from plexus.fab import scenarios
from plexus.fab.scenarios import RAILS
from test_rail_faults import BUILD, PAIR, RATE, assert_correct, ft_stream, need_programs, plan

OFI = {"PX_NET": "ofi", "PX_OFI_PROVIDER": "tcp;ofi_rxm", "PX_PROFILE": "1"}
MAX_STALL_S = 1.0  # as for tcp (test_rail_faults.py): the watchdog finds a dead path
SIZES = ["--sizes", "1k,48k,1m"]
PROFILE_RE = re.compile(r"ofi tcp;ofi_rxm: tx inline (\d+) .* rts (\d+) .*\| reads (\d+) errors (\d+)")


def need_ofi():
    info = os.path.join(BUILD, "bin", "pxinfo")
    out = os.popen(f"{info} 2>/dev/null").read()
    if not re.search(r"^\s+ofi\s+libfabric", out, re.M):
        pytest.skip("this build has no ofi transport (libfabric-dev)")


@pytest.fixture(scope="module")
def two_rails():
    need_programs()
    need_ofi()
    yield from module_fabric(*scenarios.fabric_args("rails", RATE))


@pytest.fixture(autouse=True)
def clear_faults():
    yield
    if os.path.exists("/run/pxfab/state.json"):
        pxfab("fault", "reset", check=False)


def moved(r, links, t_from=None):
    """Bytes each link's node end sent over the run (or from t_from on)."""
    s = [x for t, x in r.samples if t_from is None or t >= t_from]
    return {l: s[-1][l] - s[0][l] for l in links}


def test_ofi_striped_over_two_rails(two_rails):
    r = ft_stream(PAIR, ["--seconds", 5, "--mode", "pairs", "--fault-at", 1] + SIZES, env=OFI,
                  sample=RAILS)
    assert_correct(r)
    m = moved(r, RAILS)
    for l in RAILS:
        assert m[l] > 0.2 * sum(m.values()), f"{l} carried too little: {m}: {r.why()}"
    prof = [tuple(int(v) for v in x) for x in PROFILE_RE.findall(r.err)]
    assert len(prof) == 2, "no ofi counters from both ranks: " + r.why()
    # the 1 MiB messages went by RTS and fi_read from the sender's memory
    assert sum(p[1] for p in prof) > 0 and sum(p[2] for p in prof) > 0, prof
    assert sum(p[3] for p in prof) == 0, f"reads failed without a fault: {prof}"
    two_rails["ofi_rate"] = r.result["rate_after_MBs"]


def test_ofi_rail_down_for_good(two_rails):
    try:
        r = ft_stream(PAIR, ["--seconds", 9, "--mode", "pairs", "--fault-at", 3] + SIZES, env=OFI,
                      plan=plan("1", at=3), sample=RAILS)
    finally:
        pxfab("fault", "reset")
    assert_correct(r)
    res = r.result
    assert "DOWN" in r.err, "no subchannel DOWN event logged: " + r.why()
    assert res["stall_after_fault_s"] <= MAX_STALL_S, r.why()
    after = moved(r, RAILS, r.events["down"] + 1)
    assert after[RAILS[0]] > 1_000_000, f"rail0 idle after the fault: {after}: {r.why()}"
    base = two_rails.get("ofi_rate")
    if base:
        # rail0 alone: half of what both carried, give or take
        assert res["rate_after_MBs"] >= 0.35 * base, \
            f"after: {res['rate_after_MBs']} MB/s, both rails before: {base}: {r.why()}"
