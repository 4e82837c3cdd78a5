"""Small traffic tools for checking the fabric (run inside a node with `pxfab exec`).

    python3 -m plexus.fab.probe ping 10.100.0.2 10.100.1.1:10.100.1.2 [--src ADDR] [--count N]
    python3 -m plexus.fab.probe udp-recv --port 9000 [--idle 1]
    python3 -m plexus.fab.probe udp-send 10.100.0.2 --port 9000 --count 1000 [--size 200] [--gso N]
    python3 -m plexus.fab.probe tcp-recv --port 9001 [--flows N]
    python3 -m plexus.fab.probe tcp-send 10.100.0.2 --port 9001 --time 2 [--flows N]

Every command prints one JSON object. Receivers first print a line "ready".
Only the standard library is used, so it runs anywhere the fabric does.
"""

import argparse
import contextlib
import json
import os
import selectors
import socket
import struct
import subprocess
import sys
import threading
import time


def _checksum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def ping(targets, src=None, count=1, timeout=1.0, interval=0.01):
    """ICMP echo to every target ("DST" or "SRC:DST" to send from a given address).

    Returns {target: {"sent", "received", "rtt_ms"}}; all echoes are in flight
    at once, so unreachable targets cost one timeout in total.
    """
    ident = os.getpid() & 0xFFFF
    socks = {}
    plan = []
    for t in targets:
        s, _, d = t.rpartition(":")
        s = s or src
        if s not in socks:
            sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
            if s:
                sock.bind((s, 0))
            # Blocking sends: echoes waiting for ARP hold send-buffer space for a while.
            sock.settimeout(2.0)
            socks[s] = sock
        plan.append((t, s, d))
    res = {t: {"sent": 0, "received": 0, "rtt_ms": []} for t in targets}
    sent_at = {}
    seq = 0
    for c in range(count):
        for t, s, d in plan:
            seq = (seq + 1) & 0xFFFF
            payload = struct.pack("!d", time.monotonic()) + b"pxfab-probe"
            hdr = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
            pkt = struct.pack("!BBHHH", 8, 0, _checksum(hdr + payload), ident, seq) + payload
            res[t]["sent"] += 1
            try:
                socks[s].sendto(pkt, (d, 0))
                sent_at[seq] = (t, d, time.monotonic())
            except OSError:
                pass
        if c + 1 < count:
            time.sleep(interval)
    sel = selectors.DefaultSelector()
    for sock in socks.values():
        sock.setblocking(False)
        sel.register(sock, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    while sent_at:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        for key, _ in sel.select(left):
            try:
                data, (frm, _) = key.fileobj.recvfrom(4096)
            except BlockingIOError:
                continue
            ihl = (data[0] & 0x0F) * 4
            typ, code, _, rid, rseq = struct.unpack("!BBHHH", data[ihl:ihl + 8])
            # Every raw socket sees every echo reply: match on id, sequence and sender.
            if typ != 0 or rid != ident or rseq not in sent_at or sent_at[rseq][1] != frm:
                continue
            t, d, when = sent_at.pop(rseq)
            res[t]["received"] += 1
            res[t]["rtt_ms"].append(round((time.monotonic() - when) * 1000, 3))
    for sock in socks.values():
        sock.close()
    return res


def udp_recv(port, idle=1.0, first_timeout=10.0, bind="0.0.0.0", ready=print, group=0):
    """Datagrams received; with `group`, also how many groups of that many
    consecutive sequence numbers arrived in part only ("partial")."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    sock.bind((bind, port))
    ready("ready")
    n = nbytes = 0
    seqs = set()
    sock.settimeout(first_timeout)
    while True:
        try:
            data = sock.recv(65536)
        except socket.timeout:
            break
        n += 1
        nbytes += len(data)
        if len(data) >= 4:
            seqs.add(struct.unpack("!I", data[:4])[0])
        sock.settimeout(idle)
    res = {"received": n, "bytes": nbytes, "distinct": len(seqs)}
    if group:
        per = {}
        for q in seqs:
            per[q // group] = per.get(q // group, 0) + 1
        res["partial"] = sum(1 for c in per.values() if c < group)
    return res


def udp_send(addr, port, count, size=200, pps=0, src=None, tos=0, gso=0):
    """`count` sends of one datagram of `size` bytes each, or with `gso` of that
    many datagrams each (segmentation offload: the stack cuts them), every
    datagram numbered in its first 4 bytes."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    if src:
        sock.bind((src, 0))
    if tos:
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
    if gso:
        sock.setsockopt(socket.IPPROTO_UDP, 103, size)  # UDP_SEGMENT
    pad = b"x" * max(0, size - 4)
    errors = 0
    t0 = time.monotonic()
    for i in range(count):
        try:
            if gso:
                sock.sendto(b"".join(struct.pack("!I", i * gso + j) + pad for j in range(gso)),
                            (addr, port))
            else:
                sock.sendto(struct.pack("!I", i) + pad, (addr, port))
        except OSError:
            errors += 1
        if pps:
            wait = t0 + (i + 1) / pps - time.monotonic()
            if wait > 0:
                time.sleep(wait)
    return {"sent": count, "errors": errors, "seconds": round(time.monotonic() - t0, 3)}


def tcp_recv(port, flows=1, warmup=0.3, accept_timeout=15.0, bind="0.0.0.0", ready=print):
    """Accept `flows` connections and measure the aggregate delivered rate in steady state."""
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((bind, port))
    ls.listen(64)
    ready("ready")
    sel = selectors.DefaultSelector()
    ls.settimeout(accept_timeout)
    conns = []
    for _ in range(flows):
        c, _ = ls.accept()
        c.setblocking(False)
        conns.append(c)
        sel.register(c, selectors.EVENT_READ, len(conns) - 1)
    ls.close()
    per = [0] * flows
    total = 0
    samples = []          # (time, total bytes) while every flow is still open
    first = None
    open_flows = flows
    closed_at = None
    buf = bytearray(1 << 20)
    while open_flows:
        for key, _ in sel.select(timeout=5.0):
            c = key.fileobj
            try:
                n = c.recv_into(buf)
            except BlockingIOError:
                continue
            now = time.monotonic()
            if n == 0:
                sel.unregister(c)
                c.close()
                open_flows -= 1
                if closed_at is None:
                    closed_at = now
                continue
            if first is None:
                first = now
            per[key.data] += n
            total += n
            if closed_at is None:
                samples.append((now, total))
        else:
            if not sel.get_map():
                break
    if not samples or first is None:
        return {"flows": flows, "bytes": total, "bps": 0.0, "seconds": 0.0}
    start_t = first + warmup
    start = next(((t, b) for t, b in samples if t >= start_t), samples[0])
    end = samples[-1]
    dt = end[0] - start[0]
    bps = (end[1] - start[1]) * 8 / dt if dt > 0 else 0.0
    return {"flows": flows, "bytes": total, "per_flow_bytes": per, "bps": round(bps),
            "seconds": round(dt, 3)}


def tcp_send(addr, port, seconds, flows=1, src=None, tos=0, chunk=256 << 10):
    """`flows` parallel connections, each sending as fast as it can for `seconds`."""
    data = b"\0" * chunk
    sent = [0] * flows
    errors = []

    def one(i):
        try:
            s = socket.create_connection((addr, port), timeout=10, source_address=(src, 0) if src else None)
            if tos:
                s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
            s.settimeout(None)
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                sent[i] += s.send(data)
            s.shutdown(socket.SHUT_WR)
            s.close()
        except OSError as e:
            errors.append(str(e))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(flows)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"flows": flows, "sent_bytes": sent, "errors": errors}


@contextlib.contextmanager
def background_tcp(src, dst, addr, seconds, flows=4, port=9555, env=None):
    """Another job's bulk traffic while the body runs: `flows` TCP flows from
    node `src` to `addr` on node `dst` (tcp-recv and tcp-send in those
    namespaces, started from outside them, as root), for at most `seconds`;
    both ends are stopped when the body ends."""
    env = dict(os.environ if env is None else env)
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = here + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    me = [sys.executable, "-m", "plexus.fab.probe"]
    rx = subprocess.Popen(["ip", "netns", "exec", dst] + me +
                          ["tcp-recv", "--port", str(port), "--flows", str(flows)],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    tx = None
    try:
        if not rx.stdout.readline():
            raise RuntimeError(f"background receiver on {dst} did not start")
        tx = subprocess.Popen(["ip", "netns", "exec", src] + me +
                              ["tcp-send", addr, "--port", str(port), "--time", str(seconds),
                               "--flows", str(flows)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        yield
    finally:
        for p in (tx, rx):
            if p:
                p.kill()
                p.wait()


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m plexus.fab.probe", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("ping")
    p.add_argument("targets", nargs="+", metavar="[SRC:]DST")
    p.add_argument("--src")
    p.add_argument("--count", type=int, default=1)
    p.add_argument("--timeout", type=float, default=1.0)
    p = sub.add_parser("udp-recv")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--idle", type=float, default=1.0)
    p.add_argument("--first-timeout", type=float, default=10.0)
    p.add_argument("--group", type=int, default=0)
    p = sub.add_parser("udp-send")
    p.add_argument("addr")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--size", type=int, default=200)
    p.add_argument("--pps", type=float, default=0)
    p.add_argument("--src")
    p.add_argument("--tos", type=int, default=0)
    p.add_argument("--gso", type=int, default=0)
    p = sub.add_parser("tcp-recv")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--flows", type=int, default=1)
    p.add_argument("--warmup", type=float, default=0.3)
    p = sub.add_parser("tcp-send")
    p.add_argument("addr")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--time", type=float, default=2.0)
    p.add_argument("--flows", type=int, default=1)
    p.add_argument("--src")
    p.add_argument("--tos", type=int, default=0)
    a = ap.parse_args(argv)
    ready = lambda m: print(m, flush=True)  # noqa: E731
    if a.cmd == "ping":
        r = ping(a.targets, a.src, a.count, a.timeout)
    elif a.cmd == "udp-recv":
        r = udp_recv(a.port, a.idle, a.first_timeout, ready=ready, group=a.group)
    elif a.cmd == "udp-send":
        r = udp_send(a.addr, a.port, a.count, a.size, a.pps, a.src, a.tos, a.gso)
    elif a.cmd == "tcp-recv":
        r = tcp_recv(a.port, a.flows, a.warmup, ready=ready)
    else:
        r = tcp_send(a.addr, a.port, a.time, a.flows, a.src, a.tos)
    print(json.dumps(r), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
