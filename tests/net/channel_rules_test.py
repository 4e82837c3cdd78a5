#!/usr/bin/env python3
"""PX_CHANNELS: the rule table that picks each message's channel. Runs the
checksummed stream (tests/mpi/ft_stream: every message arrives once, intact
and in order per source and tag) under several tables and reads, from the
PX_PROFILE=1 lines, which entry chose each message and what each channel
carried:
  - hybrid (udp,tcp): small messages on datagrams, the rest by rendezvous
    over the connection once it is open; messages cross between the two
    channels all the time and must stay in order;
  - connections only: an entry naming udp never applies;
  - one node: large messages copied through shared memory ('copy');
  - udp-zcopy: large messages over pooled sockets, landing in place; with
    an empty pool, copied instead;
  - invalid tables: MPI_Init fails at once, naming the position; pxinfo
    --channels prints the table or the same error.

usage: channel_rules_test.py PXRUN PXINFO FT_STREAM"""
import os
import re
import subprocess
import sys

pxrun, pxinfo, prog = sys.argv[1:4]
NP = 4
HITS_RE = re.compile(r"rank (\d+) channel rules: (.*) \| kept in order on the previous "
                     r"channel (\d+)")
SENT_RE = re.compile(r"rank (\d+) channels: .* \| sent: (.*)")
HYBRID = {"PX_NET": "udp,tcp", "PX_RC_PROMOTE_AFTER": 2, "PX_RC_PROMOTE_SIZE": 0,
          "PX_MAX_RC_CONN": 3}
problems = []
LAST_ERR = [""]


def check(cond, what):
    if not cond:
        problems.append(what)


def run(env, sizes="64,1k,48k,1m", expect_ok=True):
    cmd = [pxrun, "-n", str(NP), "--timeout", "60", "--env", "PX_PROFILE=1"]
    for k, v in env.items():
        cmd += ["--env", f"{k}={v}"]
    p = subprocess.run(cmd + [prog, "--seconds", "1.5", "--mode", "all", "--sizes", sizes],
                       capture_output=True, text=True, timeout=120)
    tag = " ".join(f"{k}={v}" for k, v in env.items())
    LAST_ERR[0] = p.stderr
    if not expect_ok:
        return tag, p
    if p.returncode != 0 or "PASS ft_stream" not in p.stdout:
        problems.append(f"[{tag}] job failed ({p.returncode}): {p.stdout[-600:]}{p.stderr[-1500:]}")
        return tag, None
    ranks = {}
    for m in HITS_RE.finditer(p.stderr):
        hits = [(rule, int(n)) for rule, n in
                re.findall(r"\d+ (\S+) (\d+)(?:, |$)", m.group(2))]
        ranks[int(m.group(1))] = {"hits": hits, "fenced": int(m.group(3))}
    for m in SENT_RE.finditer(p.stderr):
        vol = {k: (int(n), int(b)) for k, n, b in
               re.findall(r"(\w+) (\d+) msgs (\d+) bytes", m.group(2))}
        ranks.setdefault(int(m.group(1)), {})["sent"] = vol
    if len(ranks) != NP or any("hits" not in c or "sent" not in c for c in ranks.values()):
        problems.append(f"[{tag}] profile lines missing:\n{p.stderr[-1500:]}")
        return tag, None
    for r, c in ranks.items():
        # every message sent was chosen by exactly one entry (or the default)
        msgs = sum(n for n, _ in c["sent"].values())
        check(sum(n for _, n in c["hits"]) == msgs,
              f"[{tag}] rank {r}: entries chose {c['hits']}, but {msgs} messages sent")
    return tag, ranks


def total(ranks, f):
    return sum(f(c) for c in ranks.values())


# hybrid: small messages on datagrams, medium ones eager over the
# connection, large ones by rendezvous with the data over the connection
env = dict(HYBRID, PX_CHANNELS="size<=1k:udp|size<=48k:tcp|*:tcp-rndv|*:udp")
tag, ranks = run(env)
if ranks:
    names = ("size<=1024:udp", "size<=49152:tcp", "*:tcp-rndv", "*:udp", "default")
    for i, name in enumerate(names):
        for r, c in ranks.items():
            check(c["hits"][i][0] == name, f"[{tag}] rank {r}: entry {i + 1} is {c['hits'][i]}")
    for i in range(3):
        check(total(ranks, lambda c: c["hits"][i][1]) > 0, f"[{tag}] no message took {names[i]}")
    check(total(ranks, lambda c: c["hits"][4][1]) == 0, f"[{tag}] the default was used")
    check(total(ranks, lambda c: c["sent"]["tcp"][1]) > 0, f"[{tag}] nothing on tcp")
    check(total(ranks, lambda c: c["sent"]["udp"][0]) > 0, f"[{tag}] nothing on udp")
    # the connection carries large messages; datagrams mostly small ones
    # (and the large ones sent before the connection was open)
    check(total(ranks, lambda c: c["sent"]["tcp"][1]) > total(ranks, lambda c: c["sent"]["udp"][1]),
          f"[{tag}] {[c['sent'] for c in ranks.values()]}")
    # small and medium messages alternate between the two channels: some
    # had to wait for the other channel's acknowledgements
    check(total(ranks, lambda c: c["fenced"]) > 0,
          f"[{tag}] no message had to wait for the previous channel: nothing crossed over")

# the same table with connections forbidden: tcp-rndv never applies
tag, ranks = run(dict(HYBRID, PX_MAX_RC_CONN=0, PX_CHANNELS="size<=1k:udp|*:tcp-rndv|*:udp"))
if ranks:
    check(total(ranks, lambda c: c["hits"][1][1]) == 0, f"[{tag}] tcp-rndv applied")
    check(total(ranks, lambda c: c["hits"][2][1]) > 0, f"[{tag}] large messages not on *:udp")
    check(total(ranks, lambda c: c["sent"]["tcp"][0]) == 0, f"[{tag}] something on tcp")

# connections only: udp is never allocated
tag, ranks = run({"PX_NET": "tcp", "PX_CHANNELS": "size<=1k:udp|*:copy"})
if ranks:
    check(total(ranks, lambda c: c["hits"][0][1]) == 0, f"[{tag}] a udp entry applied")
    check(total(ranks, lambda c: c["hits"][1][1]) > 0, f"[{tag}] copy never applied")
    check(total(ranks, lambda c: c["sent"]["udp"][0]) == 0, f"[{tag}] something on udp")

# one node: large messages copied through shared memory instead of read
tag, ranks = run({"PX_NET": "shm", "PX_CHANNELS": "size<=4k:shm|*:copy"})
if ranks:
    check(total(ranks, lambda c: c["hits"][1][1]) > 0, f"[{tag}] copy never applied")
    check(total(ranks, lambda c: c["hits"][2][1]) == 0, f"[{tag}] the default was used")

# udp-zcopy: large messages over pooled sockets straight into the buffer;
# with no socket in the pool, the same transfers are copied instead
ZC_RE = re.compile(r"rank (\d+) udp-zcopy: sockets (\d+) \+ (\d+) sending \| rx transfers (\d+) "
                   r"bytes (\d+) in place (\d+) moved (\d+) dropped (\d+) bad (\d+) no socket "
                   r"(\d+) \| tx transfers (\d+) bytes (\d+)")
for pool in (8, 0):
    env = {"PX_NET": "udp", "PX_CHANNELS": "size>=48k:udp-zcopy|*:udp", "PX_UDP_ZCOPY_POOL": pool}
    tag, ranks = run(env)
    if not ranks:
        continue
    check(total(ranks, lambda c: c["hits"][0][1]) > 0, f"[{tag}] udp-zcopy never applied")
    check(total(ranks, lambda c: c["hits"][1][1]) > 0, f"[{tag}] *:udp never applied")
    zc = [tuple(int(v) for v in m) for m in ZC_RE.findall(LAST_ERR[0])]
    check(len(zc) == NP, f"[{tag}] {len(zc)} udp-zcopy lines")
    rx, rx_bytes, inplace = (sum(z[i] for z in zc) for i in (3, 4, 5))
    tx, tx_bytes, nosock = (sum(z[i] for z in zc) for i in (10, 11, 9))
    check(rx == tx and rx_bytes == tx_bytes, f"[{tag}] received {rx}/{rx_bytes}, sent {tx}/{tx_bytes}")
    if pool:
        check(rx > 0 and inplace > 0, f"[{tag}] no transfer landed in place: {zc}")
    else:
        check(rx == 0 and nosock > 0, f"[{tag}] without sockets: {zc}")

# invalid tables: MPI_Init fails at once and says where
for table, pos, what in (("size<=1k:udp|*:tcq", 16, "unknown channel 'tcq'"),
                         ("size<=1k:udp|size>>1k:tcp", 19, "expected a size"),
                         ("size>8k&size<4k:udp", 9, "never hold")):
    tag, p = run(dict(HYBRID, PX_CHANNELS=table), expect_ok=False)
    msg = f"PX_CHANNELS='{table}': position {pos} "
    check(p.returncode != 0 and msg in p.stderr and what in p.stderr,
          f"[{tag}] exit {p.returncode}, wanted '{msg}... {what}':\n{p.stderr[-800:]}")
    q = subprocess.run([pxinfo, "--channels"], capture_output=True, text=True,
                       env=dict(os.environ, PX_CHANNELS=table))
    check(q.returncode == 1 and f"position {pos} " in q.stderr and what in q.stderr,
          f"pxinfo --channels with '{table}': {q.returncode} {q.stderr}")

q = subprocess.run([pxinfo, "--channels"], capture_output=True, text=True,
                   env=dict(os.environ, PX_CHANNELS="size<=2k:shm|size<=8k:udp|*:tcp-rndv"))
rows = re.findall(r"^(\d+)\s+(\S+)\s+(\S+)", q.stdout, re.M)
check(q.returncode == 0 and rows == [("1", "size<=2048", "shm"), ("2", "size<=8192", "udp"),
                                     ("3", "*", "tcp-rndv")], f"pxinfo --channels: {q.stdout}")

if problems:
    print("\n".join("FAIL: " + p for p in problems))
    sys.exit(1)
print(f"PASS channel_rules: {NP} ranks; hybrid, connections only, one node, udp-zcopy with "
      "and without sockets, and three invalid tables; every message counted by its entry, in "
      "order and intact")
