#!/usr/bin/env python3
"""Hybrid channels (PX_NET=udp,tcp): every peer is reached over datagrams
from the start; a connection is opened only to peers that received
PX_RC_PROMOTE_AFTER messages (of at least PX_RC_PROMOTE_SIZE, each counting
once per PX_RC_PROMOTE_SIZE it holds), and only when both processes hold
fewer than PX_MAX_RC_CONN; the PX_PROFILE=1 channel table says so. Checked
with a checksummed all-to-all stream (tests/mpi/ft_stream) at 6 ranks, with
connections-only and with connections forbidden for comparison.

usage: hybrid_channels_test.py PXRUN FT_STREAM"""
import re
import subprocess
import sys

pxrun, prog = sys.argv[1], sys.argv[2]
NP = 6
CH_RE = re.compile(r"rank (\d+) channels: self (\d+) shm (\d+) udp (\d+) tcp (\d+)"
                   r"(?: \(opened here (\d+), by peers (\d+); fastest path \d+\))? \| sent: (.*)")
problems = []


def run(env, extra=()):
    cmd = [pxrun, "-n", str(NP), "--timeout", "90", "--env", "PX_PROFILE=1"]
    for k, v in env.items():
        cmd += ["--env", f"{k}={v}"]
    p = subprocess.run(cmd + [prog, "--seconds", "3", "--mode", "all"] + list(extra),
                       capture_output=True, text=True, timeout=120)
    tag = " ".join(f"{k}={v}" for k, v in env.items())
    if p.returncode != 0 or "PASS ft_stream" not in p.stdout:
        problems.append(f"[{tag}] job failed ({p.returncode}): {p.stdout[-800:]}{p.stderr[-1500:]}")
        return tag, {}
    ranks = {}
    for m in CH_RE.finditer(p.stderr):
        vol = {k: (int(n), int(b)) for k, n, b in
               re.findall(r"(\w+) (\d+) msgs (\d+) bytes", m.group(8))}
        ranks[int(m.group(1))] = {
            "udp": int(m.group(4)), "tcp": int(m.group(5)),
            "out": None if m.group(6) is None else int(m.group(6)),
            "in": None if m.group(7) is None else int(m.group(7)), "vol": vol}
    if len(ranks) != NP:
        problems.append(f"[{tag}] {len(ranks)} channel lines for {NP} ranks:\n{p.stderr[-1500:]}")
    return tag, ranks


def check(cond, what):
    if not cond:
        problems.append(what)


# hybrid: at most 2 connections opened per process, after 4 messages
tag, ranks = run({"PX_NET": "udp,tcp", "PX_RC_PROMOTE_AFTER": 4, "PX_RC_PROMOTE_SIZE": 0,
                  "PX_MAX_RC_CONN": 2})
for r, c in ranks.items():
    check(c["udp"] == NP - 1, f"[{tag}] rank {r}: {c['udp']} datagram channels, not {NP - 1}")
    check(c["out"] is not None and c["out"] <= 2, f"[{tag}] rank {r} opened {c['out']} (max 2)")
    # crossing requests may each count one connection as their own: 2 + 1 at most
    check(c["tcp"] <= 3, f"[{tag}] rank {r} holds {c['tcp']} connections (max 2)")
    check(c["out"] is not None and c["tcp"] == c["out"] + c["in"],
          f"[{tag}] rank {r}: {c['tcp']} connections, opened {c['out']} + by peers {c['in']}")
    check(c["tcp"] < NP - 1 or c["in"] > 0, f"[{tag}] rank {r}: a connection to every peer")
if ranks:
    check(sum(c["out"] or 0 for c in ranks.values()) > 0, f"[{tag}] no connection opened")
    check(sum(c["vol"]["tcp"][1] for c in ranks.values()) > 0, f"[{tag}] nothing sent on tcp")
    check(sum(c["vol"]["udp"][1] for c in ranks.values()) > 0, f"[{tag}] nothing sent on udp")

# every message smaller than PX_RC_PROMOTE_SIZE: none counts, no connection
tag, ranks = run({"PX_NET": "udp,tcp", "PX_RC_PROMOTE_AFTER": 1, "PX_RC_PROMOTE_SIZE": "64m"})
for r, c in ranks.items():
    check(c["tcp"] == 0, f"[{tag}] rank {r}: {c['tcp']} connections for messages below the size")

# a message counts once per PX_RC_PROMOTE_SIZE it holds: 4 MiB messages reach
# 1000 units of 4 KiB at the first one to each peer (far fewer than 1000 messages)
tag, ranks = run({"PX_NET": "udp,tcp", "PX_RC_PROMOTE_AFTER": 1000, "PX_RC_PROMOTE_SIZE": "4k"},
                 ["--sizes", "4m"])
for r, c in ranks.items():
    check(c["tcp"] == NP - 1, f"[{tag}] rank {r}: {c['tcp']} connections, not {NP - 1}")
    check(c["vol"]["udp"][0] < 1000 * (NP - 1),
          f"[{tag}] rank {r}: {c['vol']['udp'][0]} datagram messages (the count alone would do)")

# connections forbidden: datagrams only
tag, ranks = run({"PX_NET": "udp,tcp", "PX_MAX_RC_CONN": 0})
for r, c in ranks.items():
    check(c["tcp"] == 0 and c["vol"]["tcp"][0] == 0, f"[{tag}] rank {r}: {c}")

# connections only: one to every peer it talked to
tag, ranks = run({"PX_NET": "tcp"})
for r, c in ranks.items():
    check(c["tcp"] == NP - 1 and c["udp"] == 0, f"[{tag}] rank {r}: {c}")

if problems:
    print("\n".join("FAIL: " + p for p in problems))
    sys.exit(1)
print(f"PASS hybrid_channels: {NP} ranks; connections opened only after the threshold and "
      "within PX_MAX_RC_CONN; none when forbidden; one per peer with tcp only")
