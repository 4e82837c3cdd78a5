"""Arbitration between high- and low-priority classes (InfiniBand VL arbitration
emulated with HTB priorities, docs/fabric.md): on a 100 Mbit/s link whose class
DSCP 40 is high priority (weight 1) and DSCP 8 low (weight 4), high_limit 4
(16 KB of high data per low packet), a high flow takes most of the link against
a low one despite its smaller weight, and the low one is not starved (root)."""

import json
import subprocess
import sys

import pytest

SECONDS = 2

from conftest import ENV, finish_probe, module_fabric, pxfab, start_probe


@pytest.fixture(scope="module")
def fab():
    yield from module_fabric("--nodes", 2, "--rails", 1, "--rate", "100mbit",
                             "--lanes", "40:1:high,8:4", "--high-limit", 4)


def compete(tos_a, tos_b, port):
    rx_a = start_probe("node1", "tcp-recv", "--port", port)
    rx_b = start_probe("node1", "tcp-recv", "--port", port + 1)
    base = ["ip", "netns", "exec", "node0", sys.executable, "-m", "plexus.fab.probe", "tcp-send",
            "10.100.0.2", "--time", str(SECONDS)]
    a = subprocess.Popen(base + ["--port", str(port), "--tos", str(tos_a)], env=ENV,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    b = subprocess.Popen(base + ["--port", str(port + 1), "--tos", str(tos_b)], env=ENV,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    a.wait(30)
    b.wait(30)
    return finish_probe(rx_a)["bps"], finish_probe(rx_b)["bps"]


def test_high_priority_class_goes_first(fab):
    hi, lo = compete(40 << 2, 8 << 2, 9311)
    assert 0.85e8 <= hi + lo <= 1.10e8, (hi, lo)
    # by weight alone the low class (4 of 5) would take 80%; the arbitration
    # gives it one 1514-byte packet per 16 KB of high data (8.5%)
    assert hi / (hi + lo) >= 0.80, f"high {hi / 1e6:.1f} Mbit/s, low {lo / 1e6:.1f} Mbit/s"
    assert lo >= 0.02e8, f"low class starved: {lo / 1e6:.2f} Mbit/s"


def test_low_classes_take_the_link_when_high_is_idle(fab):
    # what the high class leaves is lent to the low ones (HTB's quantum by weight;
    # a TCP sender keeps only about a millisecond of data in the queue, so the
    # split of what is lent follows the flows more than the weights)
    lo, other = compete(8 << 2, 0, 9321)
    assert 0.85e8 <= lo + other <= 1.10e8, (lo, other)
    assert min(lo, other) >= 0.15e8, f"DSCP 8 {lo / 1e6:.1f} Mbit/s, unmarked {other / 1e6:.1f}"


def test_stats_name_each_class_priority(fab):
    st = json.loads(pxfab("stats", "node0:rail0").stdout)
    cls = {str(c["dscp"]): c for c in st["links"]["node0:rail0"]["classes"]}
    assert cls["[40]"]["priority"] == "high" and cls["[8]"]["priority"] == "low"
    assert cls["[40]"]["a_to_b"]["bytes"] > 10_000_000
    tc = subprocess.run(["ip", "netns", "exec", "node0", "tc", "class", "show", "dev", "rail0"],
                        capture_output=True, text=True, check=True).stdout
    assert "prio 0" in tc and "prio 1" in tc, tc
