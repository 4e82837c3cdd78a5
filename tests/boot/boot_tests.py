#!/usr/bin/env python3
"""Job tests of pxrun and the bootstrap layer, driven through the built pxrun
with boot_prog (a bootstrap-only program). One case per invocation:

    boot_tests.py --pxrun build/bin/pxrun --prog build/tests/boot/boot_prog CASE
"""
import argparse
import hashlib
import hmac
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import uuid

PXRUN = PROG = None
FAKE_HOSTS = ["--launcher", "env BOOTTEST_HOST={host}", "--bootstrap-iface", "127.0.0.1"]


class Fail(Exception):
    pass


def check(cond, what, *context):
    if not cond:
        msg = "FAILED: " + what
        for c in context:
            msg += "\n---\n" + str(c)
        raise Fail(msg)


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PX_")}
    env.update(extra)
    return env


class Result:
    def __init__(self, rc, out, err, elapsed):
        self.rc, self.out, self.err, self.elapsed = rc, out, err, elapsed

    def __str__(self):
        return "rc=%s elapsed=%.2fs\nstdout:\n%s\nstderr:\n%s" % (
            self.rc, self.elapsed, self.out[-4000:], self.err[-4000:])


def run(args, env=None, stdin=subprocess.DEVNULL, input=None, timeout=20, launcher=None):
    t0 = time.monotonic()
    p = subprocess.run([launcher or PXRUN] + args, env=env or clean_env(),
                       stdin=None if input else stdin,
                       input=input, capture_output=True, timeout=timeout)
    return Result(p.returncode, p.stdout.decode(errors="replace"),
                  p.stderr.decode(errors="replace"), time.monotonic() - t0)


class Job:
    """A pxrun running in the background; stdout lines are timestamped."""

    def __init__(self, args, env=None):
        self.lines = []
        self.cond = threading.Condition()
        self.p = subprocess.Popen([PXRUN] + args, env=env or clean_env(),
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        self.err = ""
        self.t_out = threading.Thread(target=self._read_out, daemon=True)
        self.t_err = threading.Thread(target=self._read_err, daemon=True)
        self.t_out.start()
        self.t_err.start()

    def _read_out(self):
        for raw in self.p.stdout:
            with self.cond:
                self.lines.append((time.monotonic(), raw.decode(errors="replace").rstrip("\n")))
                self.cond.notify_all()

    def _read_err(self):
        self.err = self.p.stderr.read().decode(errors="replace")

    def wait_lines(self, pattern, count, timeout=10):
        """Waits until `count` stdout lines match; returns the time of the last."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                hits = [t for t, l in self.lines if re.search(pattern, l)]
                if len(hits) >= count:
                    return hits[count - 1]
                left = deadline - time.monotonic()
                if left <= 0 or self.p.poll() is not None and not self.t_out.is_alive():
                    raise Fail("waited for %d line(s) matching %r; got:\n%s\nstderr:\n%s" % (
                        count, pattern, "\n".join(l for _, l in self.lines), self.err))
                self.cond.wait(min(left, 0.1))

    def wait(self, timeout):
        try:
            rc = self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            raise Fail("pxrun did not end within %.1f s" % timeout)
        t = time.monotonic()
        self.t_out.join(5)
        self.t_err.join(5)
        return rc, t

    def out(self):
        return "\n".join(l for _, l in self.lines)


def marker():
    return "boottest-" + uuid.uuid4().hex


def leftovers(mark):
    p = subprocess.run(["pgrep", "-a", "-f", mark], capture_output=True, text=True)
    return p.stdout.strip()


def check_no_leftovers(mark, wait=0.0):
    deadline = time.monotonic() + wait
    while True:
        left = leftovers(mark)
        if not left or time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    check(not left, "processes of the job are left over", left)


# ------------------------------------------------------------------ cases

def case_kv(n):
    r = run(["-n", str(n), PROG, "kv", "20"])
    check(r.rc == 0, "kv job with %d ranks succeeds" % n, r)
    for rank in range(n):
        check(r.out.count("kv ok rank %d size %d\n" % (rank, n)) == 1,
              "rank %d reports its kv exchange" % rank, r)


def parse_nodemap(out):
    ranks = {}
    for line in out.splitlines():
        if line.startswith("nodemap "):
            d = dict(kv.split("=", 1) for kv in line.split()[1:])
            ranks[int(d["rank"])] = d
    return ranks


def expect_nodemap(args, n, nodes, names, universe, hosts=None):
    r = run(args + [PROG, "nodemap"])
    check(r.rc == 0, "nodemap job %s succeeds" % args, r)
    m = parse_nodemap(r.out)
    check(sorted(m) == list(range(n)), "every rank reports its node map", r)
    nnodes = len(set(nodes))
    for rank in range(n):
        d = m[rank]
        node = nodes[rank]
        local = [q for q in range(n) if nodes[q] == node]
        want = {"size": str(n), "node": str(node), "nnodes": str(nnodes),
                "lrank": str(local.index(rank)), "lsize": str(len(local)),
                "universe": str(universe), "name": names[rank],
                "map": ",".join(str(x) for x in nodes)}
        if hosts is not None:
            want["host"] = hosts[rank]
        got = {k: d.get(k) for k in want}
        check(got == want, "rank %d of %s: got %s, want %s" % (rank, args, got, want), r)


def case_nodemap():
    expect_nodemap(["-n", "4", "--hosts", "a:2,b:2"] + FAKE_HOSTS, 4, [0, 0, 1, 1],
                   ["a", "a", "b", "b"], 4, hosts=["a", "a", "b", "b"])


def case_placement():
    # wrap around: a(1) b(2) a(1) b(2)
    expect_nodemap(["-n", "6", "--hosts", "a,b:2"] + FAKE_HOSTS, 6, [0, 1, 1, 0, 1, 1],
                   list("abbabb"), 6, hosts=list("abbabb"))
    # --ppn overrides slots
    expect_nodemap(["-n", "4", "--hosts", "a:2,b:2", "--ppn", "1"] + FAKE_HOSTS, 4,
                   [0, 1, 0, 1], list("abab"), 4)
    # no -n: all slots
    expect_nodemap(["--hosts", "a:2,b:1"] + FAKE_HOSTS, 3, [0, 0, 1], list("aab"), 3)
    # fewer ranks than slots: unused hosts are not nodes
    expect_nodemap(["-n", "2", "--hosts", "a:2,b:2"] + FAKE_HOSTS, 2, [0, 0], list("aa"), 4)
    # this machine alone: the universe has its cores (at least the job)
    cores = os.cpu_count()
    expect_nodemap(["-n", "1"], 1, [0], [socket.gethostname()], max(1, cores))
    expect_nodemap(["-n", str(cores + 1)], cores + 1, [0] * (cores + 1),
                   [socket.gethostname()] * (cores + 1), cores + 1)
    # this machine, forked without a launcher
    expect_nodemap(["-n", "3", "--hosts", "localhost:2,127.0.0.1"], 3, [0, 0, 1],
                   ["localhost", "localhost", "127.0.0.1"], 3, hosts=["-", "-", "-"])


def case_hostfile():
    with tempfile.NamedTemporaryFile("w", suffix=".hosts", delete=False) as f:
        f.write("# test hosts\na slots=2   # two\n\nb:1\n   c\n")
        good = f.name
    with tempfile.NamedTemporaryFile("w", suffix=".hosts", delete=False) as f:
        f.write("a\nb slots=x\n")
        bad = f.name
    try:
        expect_nodemap(["-n", "5", "--hostfile", good] + FAKE_HOSTS, 5, [0, 0, 1, 2, 0],
                       list("aabca"), 5)
        r = run(["--hostfile", bad] + FAKE_HOSTS + [PROG, "nodemap"])
        check(r.rc == 2 and ":2:" in r.err, "malformed hostfile line is reported with its number", r)
        r = run(["--hostfile", "/nonexistent/hosts", PROG, "nodemap"])
        check(r.rc == 2 and "cannot read hostfile" in r.err, "missing hostfile is reported", r)
    finally:
        os.unlink(good)
        os.unlink(bad)


def failing_job(n, mode_args, fail_pattern, want_rc, msg_pattern, limit=2.0):
    mark = marker()
    job = Job(["-n", str(n), PROG] + mode_args + [mark])
    job.wait_lines(r"^ready rank", n)
    t_fail = job.wait_lines(fail_pattern, 1)
    rc, t_end = job.wait(10)
    res = "rc=%s\nstdout:\n%s\nstderr:\n%s" % (rc, job.out(), job.err)
    check(rc == want_rc, "pxrun exits with %d" % want_rc, res)
    check(re.search(msg_pattern, job.err), "message matches %r" % msg_pattern, res)
    check(t_end - t_fail < limit, "job ended %.2f s after the failure (limit %.1f s)" % (
        t_end - t_fail, limit), res)
    check_no_leftovers(mark)
    return job


def case_exit_code():
    failing_job(4, ["exit", "1", "3"], r"rank 1 failing now", 3,
                r"pxrun: rank 1 \(host \S+\) exited with code 3\n")


def case_exit_zero():
    failing_job(3, ["exit", "2", "0"], r"rank 2 failing now", 1,
                r"rank 2 \(host \S+\) exited with code 0 without finalizing")


def case_mpi_abort():
    failing_job(4, ["abort", "2", "5"], r"rank 2 failing now", 5,
                r"rank 2 \(host \S+\) called MPI_Abort with code 5: boot_prog abort test")


def case_sigkill():
    failing_job(3, ["kill", "1"], r"rank 1 failing now", 128 + 9,
                r"rank 1 \(host \S+\) killed by signal 9 \(Killed\)")


def case_lost_connection():
    mark = marker()
    job = Job(["-n", "3", PROG, "shutkv", "1", mark])
    job.wait_lines(r"^ready rank", 3)
    rc, _ = job.wait(10)
    res = "rc=%s\n%s\n%s" % (rc, job.out(), job.err)
    check(rc == 1, "a rank that loses its bootstrap connection fails the job", res)
    check(re.search(r"rank 1 \(host \S+\) lost its connection to pxrun", job.err),
          "the message names the rank", res)
    check_no_leftovers(mark)


def read_frame(s):
    hdr = b""
    while len(hdr) < 8:
        chunk = s.recv(8 - len(hdr))
        if not chunk:
            return None, None
        hdr += chunk
    length, ftype, _ = struct.unpack(">IHH", hdr)
    body = b""
    while len(body) < length:
        chunk = s.recv(length - len(body))
        if not chunk:
            return None, None
        body += chunk
    return ftype, body


def read_until_closed(s):
    try:
        while s.recv(4096):
            pass
    except ConnectionResetError:
        pass


def auth_attempt(addr, rank, role, secret=None, mac=None):
    """Handshake as a client; returns (type, body) of the server's answer."""
    s = socket.create_connection(addr, timeout=5)
    try:
        ftype, hello = read_frame(s)
        check(ftype == 1 and len(hello) == 40, "server greets with HELLO")
        magic, version = struct.unpack(">II", hello[:8])
        check(magic == 0x50584231 and version == 1, "HELLO carries the protocol magic")
        nonce = hello[8:]
        if mac is None:
            mac = hmac.new(secret, nonce + struct.pack(">II", rank, role), hashlib.sha256).digest()
        s.sendall(struct.pack(">IHH", 40, 2, 0) + struct.pack(">II", rank, role) + mac)
        ans = read_frame(s)
        if ans[0] == 4:
            read_until_closed(s)  # a rejected connection is closed by the server
        return ans
    finally:
        s.close()


def case_auth_client():
    mark = marker()
    flag = os.path.join(tempfile.gettempdir(), mark)
    job = Job(["-v", "-n", "2", PROG, "authwait", flag, mark])
    try:
        job.wait_lines(r"^authwait addr=", 1)
        line = [l for _, l in job.lines if l.startswith("authwait addr=")][0]
        m = re.match(r"authwait addr=(\S+):(\d+) secret=([0-9a-f]{64})", line)
        check(m, "rank 0 prints the bootstrap address", line)
        addr = (m.group(1), int(m.group(2)))
        secret = bytes.fromhex(m.group(3))

        # a client without the secret
        t, body = auth_attempt(addr, 1, 1, mac=os.urandom(32))
        check(t == 4 and b"authentication failed" in body, "wrong code is rejected", (t, body))
        wrong = bytearray(secret)
        wrong[5] ^= 1
        t, body = auth_attempt(addr, 1, 2, secret=bytes(wrong))
        check(t == 4 and b"authentication failed" in body, "wrong secret is rejected", (t, body))
        # the right secret (computed independently here) passes the code check...
        t, body = auth_attempt(addr, 0, 1, secret=secret)
        check(t == 4 and b"already connected" in body, "a second rank 0 is refused", (t, body))
        t, body = auth_attempt(addr, 99, 1, secret=secret)
        check(t == 4 and b"out of range" in body, "rank 99 is refused", (t, body))
        # garbage: an absurd length must not be trusted
        s = socket.create_connection(addr, timeout=5)
        read_frame(s)
        s.sendall(struct.pack(">IHH", 0x7FFFFFFF, 2, 0) + b"x" * 64)
        t, body = read_frame(s)
        check(t == 4 and b"oversized" in body, "oversized handshake is rejected", (t, body))
        read_until_closed(s)
        s.close()
        # a connection that says nothing and leaves
        socket.create_connection(addr, timeout=5).close()
        # an unexpected message type before authentication
        s = socket.create_connection(addr, timeout=5)
        read_frame(s)
        s.sendall(struct.pack(">IHH", 0, 5, 0))
        t, body = read_frame(s)
        check(t == 4, "a fence before authentication is rejected", (t, body))
        read_until_closed(s)
        s.close()
    finally:
        open(flag, "w").close()
    rc, _ = job.wait(15)
    os.unlink(flag)
    res = "rc=%s\n%s\n%s" % (rc, job.out(), job.err)
    check(rc == 0, "the job continues and succeeds despite rejected connections", res)
    check(job.out().count("authwait ok rank") == 2, "both ranks complete the exchange", res)
    check(len(re.findall(r"rejected bootstrap connection from", job.err)) >= 7,
          "every rejected connection is logged with -v", res)


def case_bad_secret():
    r = run(["-n", "2", PROG, "badsecret"])
    check(r.rc == 3, "a rank with a wrong PX_JOB_SECRET fails to initialize", r)
    check("init failed: PX_ERR_AUTH" in r.out, "init returns PX_ERR_AUTH", r)
    check(re.search(r"rejected rank \d: authentication failed \(wrong job secret\)", r.err),
          "the error says the secret is wrong", r)


def case_stdin():
    data = "".join("input line %d\n" % i for i in range(100000)).encode()
    r = run(["-n", "3", PROG, "stdin"], input=data)
    check(r.rc == 0, "stdin job succeeds", r)
    check("stdin rank 0 lines=100000 bytes=%d\n" % len(data) in r.out,
          "rank 0 receives all of pxrun's stdin", r)
    for rank in (1, 2):
        check("stdin rank %d empty\n" % rank in r.out, "rank %d gets an empty stdin" % rank, r)
    r = run(["-n", "2", PROG, "stdin"])
    check(r.rc == 0 and "stdin rank 0 lines=0 bytes=0" in r.out, "empty stdin reaches rank 0", r)


def env_values(out):
    vals = {}
    for line in out.splitlines():
        m = re.match(r"env rank (\d+) (\w+)(?:=(.*)| unset)$", line)
        if m:
            vals[(int(m.group(1)), m.group(2))] = m.group(3)
    return vals


def case_env():
    env = clean_env(BT_A="alpha", BT_D="delta")
    r = run(["-n", "2", "-x", "BT_A", "-x", "BT_B=two words", "--env", "BT_C=x=y",
             PROG, "env", "BT_A", "BT_B", "BT_C", "BT_D", "PX_RANK", "PX_SIZE",
             "PX_LOCAL_RANK", "PX_NODE_NAME", "PX_JOB_ID", "PX_BOOT_ADDR"], env=env)
    check(r.rc == 0, "env job succeeds", r)
    v = env_values(r.out)
    for rank in (0, 1):
        check(v.get((rank, "BT_A")) == "alpha", "-x VAR exports its value", r)
        check(v.get((rank, "BT_B")) == "two words", "-x VAR=VAL sets the value", r)
        check(v.get((rank, "BT_C")) == "x=y", "--env VAR=VAL sets the value", r)
        check(v.get((rank, "BT_D")) == "delta", "local ranks inherit pxrun's environment", r)
        check(v.get((rank, "PX_RANK")) == str(rank) and v.get((rank, "PX_SIZE")) == "2",
              "PX_RANK/PX_SIZE are set", r)
        check(v.get((rank, "PX_LOCAL_RANK")) == str(rank), "PX_LOCAL_RANK is set", r)
        check(re.match(r"^[0-9a-f]{16}$", v.get((rank, "PX_JOB_ID")) or ""), "PX_JOB_ID is hex", r)
        check(re.match(r"^127\.0\.0\.1:\d+$", v.get((rank, "PX_BOOT_ADDR")) or ""),
              "local jobs bootstrap over loopback", r)
    check(v[(0, "PX_JOB_ID")] == v[(1, "PX_JOB_ID")], "ranks share the job id", r)


def case_env_launcher():
    # `env -i` empties the environment: only what pxrun passes explicitly arrives
    env = clean_env(BT_A="alpha", BT_D="delta", PX_NET="tcp")
    r = run(["-n", "2", "--hosts", "a,b", "--launcher", "env -i BOOTTEST_HOST={host}",
             "--bootstrap-iface", "127.0.0.1", "-x", "BT_A", "--env", "BT_C=three",
             PROG, "env", "BT_A", "BT_C", "BT_D", "PX_NET", "PATH", "BOOTTEST_HOST",
             "PX_NODE_NAME", "PX_NODE_ID"], env=env)
    check(r.rc == 0, "env job through a launcher succeeds", r)
    v = env_values(r.out)
    for rank, host in ((0, "a"), (1, "b")):
        check(v.get((rank, "BT_A")) == "alpha" and v.get((rank, "BT_C")) == "three",
              "-x/--env variables are passed on the launcher command line", r)
        check(v.get((rank, "BT_D")) is None and v.get((rank, "PATH")) is None,
              "variables not exported do not arrive", r)
        check(v.get((rank, "PX_NET")) == "tcp", "PX_* tunables of pxrun are passed on", r)
        check(v.get((rank, "BOOTTEST_HOST")) == host, "{host} is substituted", r)
        check(v.get((rank, "PX_NODE_NAME")) == host and v.get((rank, "PX_NODE_ID")) == str(rank),
              "node name and id", r)


def case_mpiexec_names():
    # pxrun as mpiexec and mpirun, with MPICH's and Open MPI's option names
    # and the standard's -host and -wdir; "_CWD" is the rank's directory
    bindir = os.path.dirname(PXRUN)
    mpiexec, mpirun = os.path.join(bindir, "mpiexec"), os.path.join(bindir, "mpirun")
    for alias in (mpiexec, mpirun):
        check(os.path.realpath(alias) == os.path.realpath(PXRUN), "%s is pxrun" % alias)
    wdir = tempfile.mkdtemp(prefix="pxrun-wdir-")
    try:
        os.symlink(PROG, os.path.join(wdir, "prog"))
        env = clean_env(BT_A="alpha", BT_B="beta")
        r = run(["-np", "2", "-host", "localhost:2", "-genv", "BT_G", "two words", "-env",
                 "BT_E=x=y", "-genvlist", "BT_A,BT_B", "-wdir", wdir,
                 PROG, "env", "BT_G", "BT_E", "BT_A", "BT_B", "_CWD"], env=env, launcher=mpiexec)
        check(r.rc == 0, "mpiexec with MPICH's options succeeds", r)
        v = env_values(r.out)
        for rank in (0, 1):
            check(v.get((rank, "BT_G")) == "two words" and v.get((rank, "BT_E")) == "x=y",
                  "-genv VAR VAL and -env VAR=VAL set the values", r)
            check(v.get((rank, "BT_A")) == "alpha" and v.get((rank, "BT_B")) == "beta",
                  "-genvlist exports each variable", r)
            check(v.get((rank, "_CWD")) == os.path.realpath(wdir), "-wdir sets the directory", r)
        # Open MPI's names; a relative program path is taken from the directory
        r = run(["--allow-run-as-root", "--oversubscribe", "-N", "2", "-np", "2", "-x", "BT_A",
                 "-wd", wdir, "./prog", "env", "BT_A", "_CWD"], env=env, launcher=mpirun)
        check(r.rc == 0, "mpirun with Open MPI's options and ./prog in -wd succeeds", r)
        v = env_values(r.out)
        check(all(v.get((k, "_CWD")) == os.path.realpath(wdir) for k in (0, 1)),
              "-wd sets the directory", r)
        # through a launcher: `env -C DIR`
        r = run(["-n", "2", "--hosts", "a,b", "--launcher", "env -i BOOTTEST_HOST={host}",
                 "--bootstrap-iface", "127.0.0.1", "-wdir", wdir, PROG, "env", "_CWD"],
                launcher=mpiexec)
        check(r.rc == 0, "-wdir through a launcher succeeds", r)
        v = env_values(r.out)
        check(all(v.get((k, "_CWD")) == os.path.realpath(wdir) for k in (0, 1)),
              "remote ranks start in -wdir", r)
        # what cannot work fails at once, saying why
        r = run(["-n", "1", "-wdir", os.path.join(wdir, "none"), PROG, "env"], launcher=mpiexec)
        check(r.rc == 127 and "working directory" in r.err and r.elapsed < 5,
              "a missing -wdir is refused", r)
        r = run(["-n", "1", "-genv", "BT_G"], launcher=mpiexec)
        check(r.rc == 2 and "needs a variable and a value" in r.err, "-genv without a value", r)
        r = run(["-n", "1", "-genvlist", "BT_A,,BT_B", PROG, "env"], launcher=mpiexec)
        check(r.rc == 2 and "-genvlist" in r.err, "-genvlist with an empty name", r)
    finally:
        shutil.rmtree(wdir, ignore_errors=True)


FAKE_SSH = """#!/bin/sh
# stands in for ssh: skips options, takes the host, and hands the rest to a
# shell as one string, as sshd does with a remote command
while [ $# -gt 0 ]; do
    case "$1" in -o) shift 2 ;; -*) shift ;; *) break ;; esac
done
BOOTTEST_HOST=$1; export BOOTTEST_HOST; shift
exec sh -c "$*"
"""


def case_ssh_quoting():
    tmp = tempfile.mkdtemp()
    ssh = os.path.join(tmp, "ssh")
    with open(ssh, "w") as f:
        f.write(FAKE_SSH)
    os.chmod(ssh, 0o755)
    nasty = "it's a \"test\" $HOME `id`; echo pwned"
    env = clean_env(PATH=tmp + ":" + os.environ.get("PATH", ""), BT_Q=nasty, PX_NET="tcp")
    try:
        # hosts that are not this machine and no --launcher: ssh is the default
        r = run(["-n", "2", "--hosts", "h1,h2", "--bootstrap-iface", "lo", "-x", "BT_Q",
                 PROG, "env", "BT_Q", "BOOTTEST_HOST", "PX_NET", "PX_BOOT_ADDR"], env=env)
        check(r.rc == 0, "job through (fake) ssh succeeds", r)
        check("pwned" not in r.out.replace(nasty, ""), "the remote shell does not interpret values", r)
        v = env_values(r.out)
        for rank, host in ((0, "h1"), (1, "h2")):
            check(v.get((rank, "BT_Q")) == nasty, "value arrives verbatim through a shell", r)
            check(v.get((rank, "BOOTTEST_HOST")) == host, "ssh gets the host", r)
            check(v.get((rank, "PX_NET")) == "tcp", "tunables are passed on", r)
            check((v.get((rank, "PX_BOOT_ADDR")) or "").startswith("127.0.0.1:"),
                  "--bootstrap-iface lo resolves to the interface address", r)
    finally:
        os.unlink(ssh)
        os.rmdir(tmp)


def check_lines(out, n, ranks, tagged):
    pat = re.compile(r"^\[(\d+)\] line (\d+) (\d+) x{300}$" if tagged
                     else r"^line (\d+) (\d+) x{300}$")
    seen = {r: [] for r in range(ranks)}
    for line in out.splitlines():
        m = pat.match(line)
        check(m, "output line is whole: %r" % line[:120])
        if tagged:
            check(m.group(1) == m.group(2), "tag matches the rank: %r" % line[:60])
            rank, i = int(m.group(2)), int(m.group(3))
        else:
            rank, i = int(m.group(1)), int(m.group(2))
        seen[rank].append(i)
    for r in range(ranks):
        check(seen[r] == list(range(n)), "rank %d: all %d lines, in order" % (r, n))


def case_tag_output():
    r = run(["-n", "3", "-l", PROG, "lines", "300"])
    check(r.rc == 0, "tagged job succeeds", r)
    check_lines(r.out, 300, 3, True)
    for rank in range(3):
        check("[%d] partial line without newline from rank %d\n" % (rank, rank) in r.err,
              "a last line without newline is tagged and ended", r)


def case_lines():
    r = run(["-n", "4", PROG, "lines", "3000"])
    check(r.rc == 0, "output job succeeds", r)
    check_lines(r.out, 3000, 4, False)
    for rank in range(4):
        check("partial line without newline from rank %d" % rank in r.err,
              "a last line without newline is forwarded", r)


def signal_job(sig, want_rc):
    mark = marker()
    job = Job(["-n", "3", PROG, "sleep", mark])
    job.wait_lines(r"^ready rank", 3)
    t0 = time.monotonic()
    job.p.send_signal(sig)
    rc, t_end = job.wait(10)
    res = "rc=%s\n%s\n%s" % (rc, job.out(), job.err)
    check(rc == want_rc, "pxrun exits with %d after signal %d" % (want_rc, sig), res)
    check(t_end - t0 < 2.0, "job ended within 2 s of the signal (%.2f s)" % (t_end - t0), res)
    check("received signal %d" % sig in job.err, "pxrun says why it ended", res)
    check_no_leftovers(mark)


def case_sigterm():
    signal_job(signal.SIGTERM, 128 + signal.SIGTERM)


def case_sigint():
    signal_job(signal.SIGINT, 128 + signal.SIGINT)


def case_pxrun_killed():
    mark = marker()
    job = Job(["-n", "3", PROG, "sleep", mark])
    job.wait_lines(r"^ready rank", 3)
    check(leftovers(mark), "ranks are running")
    job.p.kill()
    job.wait(5)
    # PR_SET_PDEATHSIG and the bootstrap watcher end the ranks without pxrun
    check_no_leftovers(mark, wait=2.0)


def case_timeout():
    mark = marker()
    r = run(["--timeout", "1", "-n", "2", PROG, "sleep", mark])
    check(r.rc == 124, "--timeout ends the job with 124", r)
    check("timed out after 1 s" in r.err, "the message says so", r)
    check(r.elapsed < 4, "within a bounded time", r)
    check_no_leftovers(mark)


def case_mpiexec_timeout():
    """MPIEXEC_TIMEOUT, which test harnesses set for any launcher, ends the
    job as --timeout does; --timeout wins over it; a bad value is refused."""
    mark = marker()
    r = run(["-n", "2", PROG, "sleep", mark], env=clean_env(MPIEXEC_TIMEOUT="1"))
    check(r.rc == 124, "MPIEXEC_TIMEOUT ends the job with 124", r)
    check("timed out after 1 s (MPIEXEC_TIMEOUT)" in r.err, "the message names it", r)
    check(r.elapsed < 4, "within a bounded time", r)
    check_no_leftovers(mark)
    r = run(["--timeout", "2", "-n", "1", PROG, "sleep", mark], env=clean_env(MPIEXEC_TIMEOUT="1"))
    check(r.rc == 124 and "timed out after 2 s (--timeout)" in r.err, "--timeout wins", r)
    check_no_leftovers(mark)
    r = run(["-n", "1", PROG, "sleep", mark], env=clean_env(MPIEXEC_TIMEOUT="soon"))
    check(r.rc == 2 and "invalid value 'soon' for MPIEXEC_TIMEOUT" in r.err,
          "a bad value is a clear error", r)


def case_connect_timeout():
    mark = marker()
    r = run(["--connect-timeout", "1", "-n", "3", PROG, "hang-noinit", "1", mark])
    check(r.rc == 1, "a rank that never connects fails the job", r)
    check(re.search(r"rank 1 \(host \S+\) did not connect to pxrun within 1 s", r.err),
          "the message names the rank", r)
    check(r.elapsed < 5, "within a bounded time", r)
    check_no_leftovers(mark)


def case_bad_options():
    cases = [
        (["--bogus", PROG], 2, r"unknown option '--bogus'"),
        (["-n", "0", PROG], 2, r"invalid value '0' for -n"),
        (["-n", "abc", PROG], 2, r"invalid value 'abc' for -n"),
        (["-n", "2"], 2, r"no program given"),
        ([], 2, r"no program given"),
        (["-n"], 2, r"option '-n' needs a value"),
        (["--hosts", "", PROG], 2, r"--hosts needs at least one host"),
        (["--hosts", "a:0", PROG], 2, r"invalid value '0'"),
        (["--timeout", "-1", PROG], 2, r"invalid value '-1' for --timeout"),
        (["--env", "NOEQUALS", PROG], 2, r"--env needs VAR=VAL"),
        (["-x", "1BAD", PROG], 2, r"invalid variable name"),
        (["--bootstrap-iface", "nosuchif0", PROG, "kv"], 2, r"--bootstrap-iface 'nosuchif0'"),
        (["--hosts", "a", "--launcher", "sh -c 'unbalanced", PROG], 2, r"unbalanced quote"),
    ]
    for args, want_rc, pattern in cases:
        r = run(args)
        check(r.rc == want_rc and re.search(pattern, r.err), "pxrun %s -> %d, %r" % (
            args, want_rc, pattern), r)
        check(r.elapsed < 5, "bad options fail fast", r)
    r = run(["--help"])
    check(r.rc == 0 and "usage: pxrun" in r.out, "--help", r)
    r = run(["--version"])
    check(r.rc == 0 and re.match(r"pxrun \(Plexus\) \d+\.\d+", r.out), "--version", r)


def case_missing_program():
    r = run(["-n", "2", "no-such-program-xyz"])
    check(r.rc == 127 and "program 'no-such-program-xyz' not found" in r.err,
          "missing program in PATH", r)
    r = run(["-n", "2", "/nonexistent/dir/prog"])
    check(r.rc == 127 and "not found" in r.err, "missing program by path", r)
    with tempfile.NamedTemporaryFile("w", delete=False) as f:
        f.write("#!/bin/sh\n")
        path = f.name
    os.chmod(path, 0o644)
    try:
        r = run(["-n", "1", path])
        check(r.rc == 126 and "is not executable" in r.err, "program without execute permission", r)
    finally:
        os.unlink(path)


def case_launcher_fails():
    # a launcher that fails like ssh to an unreachable host (exit 255)
    r = run(["--hosts", "a,b", "--launcher", "sh -c 'exit 255'", PROG, "kv"])
    check(r.rc == 255, "launcher failure code is reported", r)
    check(re.search(r"rank \d \(host [ab]\) exited with code 255 before connecting to pxrun "
                    r"\(launcher 'sh -c exit 255' failed\?\)", r.err), "the message blames the launcher", r)
    check(r.elapsed < 5, "within a bounded time", r)
    r = run(["--hosts", "a", "--launcher", "no-such-launcher-xyz {host}", PROG, "kv"])
    check(r.rc == 127 and "launcher command 'no-such-launcher-xyz' not found" in r.err,
          "missing launcher command", r)
    # one node's launcher fails while the other's ranks already wait in a fence
    mark = marker()
    r = run(["-n", "2", "--hosts", "localhost,b", "--launcher", "sh -c 'test {host} = localhost "
             "&& exec \"$0\" \"$@\"; exit 255'", "--bootstrap-iface", "127.0.0.1", PROG, "kv",
             "8", mark])
    check(r.rc == 255 and re.search(r"rank 1 \(host b\) exited with code 255", r.err),
          "failing launcher of one node ends the job", r)
    check(r.elapsed < 5, "within a bounded time", r)
    check_no_leftovers(mark)


def case_nonmpi():
    r = run(["-n", "3", "echo", "hello"])
    check(r.rc == 0 and r.out == "hello\n" * 3, "non-MPI programs run without connecting", r)
    r = run(["-n", "2", PROG, "noinit", "4"])
    check(r.rc == 4 and re.search(r"rank \d \(host \S+\) exited with code 4", r.err),
          "exit code of a non-MPI program", r)


def case_singleton():
    p = subprocess.run([PROG, "singleton"], env=clean_env(), capture_output=True, text=True,
                       timeout=10)
    check(p.returncode == 0 and "singleton ok rank 0 size 1" in p.stdout,
          "a program started without pxrun is a job of one", p.stdout + p.stderr)
    p = subprocess.run([PROG, "kv"], env=clean_env(PX_BOOT_ADDR="127.0.0.1:1"),
                       capture_output=True, text=True, timeout=10)
    check(p.returncode != 0 and "PX_RANK/PX_SIZE are missing" in p.stderr,
          "an incomplete launcher environment is a clear error", p.stdout + p.stderr)


CASES = {
    "kv.1": lambda: case_kv(1), "kv.2": lambda: case_kv(2),
    "kv.4": lambda: case_kv(4), "kv.8": lambda: case_kv(8),
    "nodemap": case_nodemap, "placement": case_placement, "hostfile": case_hostfile,
    "exit_code": case_exit_code, "exit_zero": case_exit_zero, "mpi_abort": case_mpi_abort,
    "sigkill": case_sigkill, "lost_connection": case_lost_connection,
    "auth_client": case_auth_client, "bad_secret": case_bad_secret, "stdin": case_stdin,
    "env": case_env, "env_launcher": case_env_launcher, "tag_output": case_tag_output,
    "lines": case_lines, "sigterm": case_sigterm, "sigint": case_sigint,
    "pxrun_killed": case_pxrun_killed, "timeout": case_timeout,
    "mpiexec_timeout": case_mpiexec_timeout, "mpiexec_names": case_mpiexec_names,
    "connect_timeout": case_connect_timeout, "bad_options": case_bad_options,
    "missing_program": case_missing_program, "launcher_fails": case_launcher_fails,
    "nonmpi": case_nonmpi, "singleton": case_singleton, "ssh_quoting": case_ssh_quoting,
}


def main():
    global PXRUN, PROG
    ap = argparse.ArgumentParser()
    ap.add_argument("--pxrun", required=True)
    ap.add_argument("--prog", required=True)
    ap.add_argument("case", nargs="+", choices=sorted(CASES) + ["all"])
    a = ap.parse_args()
    PXRUN, PROG = os.path.abspath(a.pxrun), os.path.abspath(a.prog)
    names = sorted(CASES) if "all" in a.case else a.case
    failed = 0
    for name in names:
        t0 = time.monotonic()
        try:
            CASES[name]()
            print("ok   %s (%.2f s)" % (name, time.monotonic() - t0))
        except Fail as e:
            failed += 1
            print("FAIL %s\n%s" % (name, e))
        except subprocess.TimeoutExpired as e:
            failed += 1
            print("FAIL %s: hung: %s" % (name, e))
        sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
