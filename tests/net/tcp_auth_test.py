#!/usr/bin/env python3
"""Data connections are authenticated: a forged handshake (right job, wrong
key) and garbage are rejected and logged, and the job carries on unharmed.

usage: tcp_auth_test.py PXRUN IDLE_JOB"""
import re
import socket
import struct
import subprocess
import sys
import time

pxrun, prog = sys.argv[1], sys.argv[2]
env = {"PX_NET": "tcp", "PX_LOG_LEVEL": "debug", "PX_LOG_SUBSYS": "tcp,boot"}
cmd = [pxrun, "-n", "3", "--timeout", "60"]
for k, v in env.items():
    cmd += ["--env", f"{k}={v}"]
job = subprocess.Popen(cmd + [prog, "4"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
lines, port, jobid = [], None, None
deadline = time.time() + 20
while time.time() < deadline and (port is None or jobid is None):
    line = job.stderr.readline()
    if not line:
        break
    lines.append(line)
    m = re.search(r"rank 0 debug tcp .*listening on [^,]+,([\d.]+),\d+,(\d+),", line)
    if m:
        host, port = m.group(1), int(m.group(2))
    m = re.search(r"rank 0 debug boot .* job ([0-9a-f]+)", line)
    if m:
        jobid = int(m.group(1), 16)
if port is None or jobid is None:
    job.kill()
    sys.exit("FAIL: could not learn rank 0's data port or job id:\n" + "".join(lines))


def knock(payload):
    s = socket.create_connection((host, port), timeout=5)
    s.sendall(payload)
    s.settimeout(5)
    got = b""
    try:
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            got += chunk
    except (ConnectionResetError, socket.timeout):
        pass
    s.close()
    return got


# 1. a well-formed hello claiming rank 2, followed by a wrong key
# magic, version, sub, sender's job, receiver's job, from, to, nonce
hello = struct.pack("<IHHQQII16s", 0x50585443, 2, 0, jobid, jobid, 2, 0, b"\x01" * 16)
reply = knock(hello + b"\x00" * 32)
# rank 0 answers with its own hello and proof, then must hang up
if len(reply) < len(hello):
    job.kill()
    sys.exit(f"FAIL: expected rank 0's hello before the rejection, got {len(reply)} bytes")
# 2. garbage
knock(b"GET / HTTP/1.0\r\n\r\n" + b"\xff" * 64)
# 3. a hello from another job
knock(struct.pack("<IHHQQII16s", 0x50585443, 2, 0, jobid ^ 1, jobid, 2, 0, b"\x02" * 16) + b"\0" * 32)

out, err = job.communicate(timeout=60)
err = "".join(lines) + err
ok = True
if job.returncode != 0 or "PASS idle_job" not in out:
    print(f"FAIL: job exit {job.returncode}, output: {out}")
    ok = False
if not re.search(r"rejected connection claiming rank 2: authentication failed", err):
    print("FAIL: the forged handshake was not reported as an authentication failure")
    ok = False
if len(re.findall(r"rejected connection: bad hello", err)) < 2:
    print("FAIL: garbage and a foreign job's hello were not both rejected")
    ok = False
if not ok:
    print(err[-3000:])
    sys.exit(1)
print("PASS tcp_auth: forged key, garbage and foreign job rejected; the job completed")
