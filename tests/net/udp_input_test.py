#!/usr/bin/env python3
"""Bad datagrams are dropped and counted, never delivered: the job carries on
and its data arrive intact.

While ranks 0 and 1 of a udp job exchange numbered messages, this test sends
rank 0's datagram socket: a runt, a wrong magic number, a wrong job key, the
key of another job, a datagram from a rank that does not exist, one from the
right rank but the wrong address, inconsistent lengths, and (with the source
address of rank 1, forged on a raw socket: root only) a frame whose sequence
number lies far outside the window and one of an unknown type. rank 0's
profile counters must show each kind dropped, and the job must pass.

The job key is derived from the job secret, which the test reads from a
rank's environment as any process of the job's user could.

usage: udp_input_test.py PXRUN IDLE_JOB"""
import hashlib
import hmac
import os
import re
import socket
import struct
import subprocess
import sys
import time

pxrun, prog = sys.argv[1], sys.argv[2]
env = {"PX_NET": "udp", "PX_PROFILE": "1", "PX_LOG_LEVEL": "debug", "PX_LOG_SUBSYS": "udp,boot,rail"}
cmd = [pxrun, "-n", "3", "--timeout", "60"]
for k, v in env.items():
    cmd += ["--env", f"{k}={v}"]
job = subprocess.Popen(cmd + [prog, "4"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
lines, socks = [], {}
deadline = time.time() + 20
while time.time() < deadline and not (0 in socks and 1 in socks):
    line = job.stderr.readline()
    if not line:
        break
    lines.append(line)
    m = re.search(r"rank (\d) debug udp .*datagram sockets [^,]+,([\d.]+),\d+,(\d+),", line)
    if m:
        socks[int(m.group(1))] = (m.group(2), int(m.group(3)))


def fail(msg, err=""):
    job.kill()
    out, rest = job.communicate()
    sys.exit(f"FAIL: {msg}\n{err or ''.join(lines) + rest}"[-4000:])


if 0 not in socks or 1 not in socks:
    fail("could not learn the datagram sockets of ranks 0 and 1")


def launched_by_us(pid):
    """pid descends from our pxrun (other jobs may run beside this one)."""
    for _ in range(6):
        try:
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
        if pid == job.pid:
            return True
    return False


def rank_env():
    """PX_JOB_SECRET and PX_JOB_ID from the environment of one of our ranks."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                e = dict(kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv)
        except OSError:
            continue
        if b"PX_JOB_SECRET" in e and b"PX_JOB_ID" in e and launched_by_us(pid):
            return bytes.fromhex(e[b"PX_JOB_SECRET"].decode()), int(e[b"PX_JOB_ID"], 16)
    return None, None


secret, jobid = rank_env()
if secret is None:
    fail("could not read the job secret from a rank")


def job_key(jid):
    mac = hmac.new(secret, b"plexus-udp" + struct.pack("<Q", jid), hashlib.sha256).digest()
    return mac[:8]


KEY = job_key(jobid)
MAGIC = 0x50585544
RAIL_HDR = struct.Struct("<IIIBBHQ")   # seq, ack, oseq, type, flags, sub, off
PX_RAIL_DATA = 1


def dgram(frame, key=KEY, frm=1, sub=0, magic=MAGIC, hdr_len=None, frame_len=None, frag_off=0,
          frame_no=12345):
    hl = RAIL_HDR.size if hdr_len is None else hdr_len
    fl = len(frame) if frame_len is None else frame_len
    return struct.pack("<IHH8sIIII", magic, hl, sub, key, frm, frame_no, fl, frag_off) + frame


def rail_frame(seq, typ=PX_RAIL_DATA, payload=b"x" * 40):
    return RAIL_HDR.pack(seq, 0, 0, typ, 0, 0, 0) + payload


target = socks[0]
rank1 = socks[1]
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sent = {"bad_length": 0, "bad_magic": 0, "bad_key": 0, "unknown_peer": 0, "wrong_source": 0}


def send(kind, data, n=5):
    for _ in range(n):
        u.sendto(data, target)
    sent[kind] += n


send("bad_length", b"PXUD\x00\x01")                                 # runt
send("bad_magic", dgram(rail_frame(1), magic=0xdeadbeef))
send("bad_key", dgram(rail_frame(1), key=os.urandom(8)))             # wrong secret
send("bad_key", dgram(rail_frame(1), key=job_key(jobid ^ 1)))        # another job
send("unknown_peer", dgram(rail_frame(1), frm=99))                   # no such rank
send("unknown_peer", dgram(rail_frame(1), frm=0))                    # rank 0 itself
send("unknown_peer", dgram(rail_frame(1), sub=200))                  # no such subchannel
send("wrong_source", dgram(rail_frame(1)))                           # rank 1, wrong address
send("bad_length", dgram(rail_frame(1), frame_len=8))                # more data than the frame
send("bad_length", dgram(rail_frame(1), hdr_len=4000))               # header beyond the frame
send("bad_length", dgram(rail_frame(1), frame_len=1 << 30))          # absurd frame


def forged(payload):
    """payload sent to rank 0 from rank 1's datagram address (raw socket)."""
    src = socket.inet_aton(rank1[0])
    dst = socket.inet_aton(target[0])
    udp = struct.pack("!HHHH", rank1[1], target[1], 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0x1234, 0, 64,
                     socket.IPPROTO_UDP, 0, src, dst)
    r = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    r.sendto(ip + udp, (target[0], 0))
    r.close()


out_of_window = 0
raw = os.geteuid() == 0
if raw:
    for k in range(5):
        forged(dgram(rail_frame(0x40000000 + k)))  # far beyond any window
        out_of_window += 1
    forged(dgram(rail_frame(7, typ=0x7f)))            # unknown frame type

out, err = job.communicate(timeout=60)
err = "".join(lines) + err
problems = []
if job.returncode != 0 or "PASS idle_job" not in out:
    problems.append(f"job exit {job.returncode}, output: {out.strip()}")
m = re.search(r"rank 0 udp: datagrams .*\| dropped rx: (.*)", err)
if not m:
    problems.append("rank 0 printed no datagram counters")
else:
    got = {k: int(v) for k, v in re.findall(r"(\w+) (\d+)", m.group(1))}
    for kind, n in sent.items():
        if got.get(kind, 0) < n:
            problems.append(f"{kind}: {n} sent, {got.get(kind, 0)} counted")
if raw:
    m = re.search(r"rank 0 reliability: .*out-of-window dropped (\d+)", err)
    if not m or int(m.group(1)) < out_of_window:
        problems.append(f"out-of-window frames: {out_of_window} sent, counted: "
                        f"{m.group(1) if m else 'nothing printed'}")
    if not re.search(r"rank 0 warn rail .*unknown type 127 from rank 1", err):
        problems.append("the frame of unknown type was not reported")
if problems:
    print("\n".join("FAIL: " + p for p in problems))
    print(err[-3000:])
    sys.exit(1)
print(f"PASS udp_input: {sum(sent.values())} bad datagrams and "
      f"{out_of_window} out-of-window frames dropped and counted; the job completed")
