#!/usr/bin/env python3
"""Frames of several datagrams go with segmentation and receive offload, and
arrive intact either way.

A udp job whose path MTU is taken as 1,500 bytes (PX_UDP_MTU) cuts every frame
above about 1.4 KB into datagrams. With PX_UDP_OFFLOAD on (the default), each
rank's profile counters must show such frames written with one send each and
datagrams received several at a time, more datagrams than frames, and the
program's checked data must arrive (PASS); with lanes (their DSCP marks go with
each send) too. With PX_UDP_OFFLOAD=0 no send or receive may be offloaded and
the data must arrive all the same.

usage: udp_offload_test.py PXRUN P2P_SIZES"""
import re
import subprocess
import sys

pxrun, prog = sys.argv[1], sys.argv[2]
PROFILE = re.compile(r"rank (\d) udp: datagrams tx (\d+) rx (\d+) frames tx (\d+) rx (\d+) "
                     r"offloaded tx (\d+) rx (\d+)")


def run(np, **env):
    cmd = [pxrun, "-n", str(np), "--timeout", "90"]
    env = {"PX_NET": "udp", "PX_UDP_MTU": "1500", "PX_PROFILE": "1", **env}
    for k, v in env.items():
        cmd += ["--env", f"{k}={v}"]
    p = subprocess.run(cmd + [prog], capture_output=True, text=True, timeout=150)
    out = p.stdout + p.stderr
    what = " ".join(f"{k}={v}" for k, v in env.items())
    if p.returncode != 0 or f"PASS p2p_sizes np={np}:" not in out:
        sys.exit(f"FAIL: {what}: exit {p.returncode}\n{out[-3000:]}")
    ranks = {}
    for m in PROFILE.finditer(out):
        ranks[int(m.group(1))] = [int(x) for x in m.groups()[1:]]
    if sorted(ranks) != list(range(np)):
        sys.exit(f"FAIL: {what}: udp counters of ranks {sorted(ranks)}, expected 0..{np - 1}\n"
                 f"{out[-3000:]}")
    return what, ranks


def expect_offload(np, **env):
    what, ranks = run(np, **env)
    for r, (dtx, drx, ftx, frx, otx, orx) in ranks.items():
        print(f"{what}: rank {r}: datagrams {dtx}/{drx}, frames {ftx}/{frx}, "
              f"offloaded sends {otx}, receives {orx}")
        if dtx < 2 * ftx:
            sys.exit(f"FAIL: {what}: rank {r} sent {dtx} datagrams for {ftx} frames: "
                     "frames of several datagrams expected")
        if otx < ftx // 4 or orx < frx // 4:
            sys.exit(f"FAIL: {what}: rank {r}: {otx} offloaded sends of {ftx} frames and "
                     f"{orx} offloaded receives of {frx}: segmentation and receive offload "
                     "expected for most frames")


def expect_none(np, **env):
    what, ranks = run(np, **env)
    for r, (dtx, drx, ftx, frx, otx, orx) in ranks.items():
        print(f"{what}: rank {r}: datagrams {dtx}/{drx}, frames {ftx}/{frx}, "
              f"offloaded sends {otx}, receives {orx}")
        if otx or orx:
            sys.exit(f"FAIL: {what}: rank {r} offloaded {otx} sends and {orx} receives")


expect_offload(2)
expect_offload(2, PX_LANES="3", PX_LANE_POLICY="class")
expect_none(2, PX_UDP_OFFLOAD="0")
print("PASS")
