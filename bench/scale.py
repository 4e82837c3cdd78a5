#!/usr/bin/env python3
"""Memory and connections per process as a job grows: connections (tcp)
against datagrams (udp) and hybrid (udp+tcp).

Runs bench/scale/alltoall_mem (built with build/bin/mpicc into
bench/.cache/scale) at each rank count with each PX_NET on this machine
(PX_NET forces the network path between local ranks), and prints per
process: resident set, heap in use after MPI_Init (heap0) and at the end
(less the benchmark's buffers), socket descriptors, kernel socket memory (socket
slab objects created by the job, from /proc/slabinfo, plus the buffers
/proc/net/sockstat counts at the end), and the time per alltoall. A
benchmark: prints figures, asserts nothing.

usage: bench/scale.py [--ranks 8,16,32,64] [--nets tcp,udp,udp+tcp] [--bytes 1024]
                      [--iters 50] [--repeat 1]

udp+tcp is the hybrid mode (PX_NET=udp,tcp: datagrams to every peer,
connections to the busy ones). The modes take turns within each repeat, so
that a slow spell of the machine falls on all of them; after each rank
count, hybrid's time is given over connections only's and over the better
single mode's."""
import argparse
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("PX_BUILD_DIR", os.path.join(ROOT, "build"))
OUT = os.path.join(ROOT, "bench", ".cache", "scale")
PROG = os.path.join(OUT, "alltoall_mem")


def slab_kb():
    kb = 0
    with open("/proc/slabinfo") as f:
        for line in f:
            p = line.split()
            if p and p[0] in ("TCP", "UDP", "sock_inode_cache"):
                kb += int(p[1]) * int(p[3]) // 1024
    return kb


def build():
    os.makedirs(OUT, exist_ok=True)
    src = os.path.join(ROOT, "bench", "scale", "alltoall_mem.c")
    if not os.path.exists(PROG) or os.path.getmtime(PROG) < os.path.getmtime(src):
        subprocess.run([os.path.join(BUILD, "bin", "mpicc"), "-O2", "-o", PROG, src], check=True)


def run(n, net, a):
    base = slab_kb()
    cmd = [os.path.join(BUILD, "bin", "pxrun"), "-n", str(n), "--timeout", "600",
           "--env", f"PX_NET={net.replace('+', ',')}", PROG, str(a.bytes), str(a.iters)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    m = re.search(r"ranks \d+ .*", p.stdout)
    if p.returncode != 0 or not m:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stdout}{p.stderr[-2000:]}")
    f = dict(re.findall(r"(\w+) ([\d.]+|WRONG|ok)", m.group(0)))
    if "WRONG" in m.group(0):
        sys.exit(f"wrong alltoall result: {m.group(0)}")
    kern = (int(f["host_sock_slab_kb"]) - base) / n + float(f["kernel_tcp_kb"]) + \
        float(f["kernel_udp_kb"])
    return {"rss": float(f["rss_kb"]), "rss_max": float(f["rss_max_kb"]),
            "heap0": float(f["heap_init_kb"]), "heap": float(f["heap_kb"]),
            "sockets": float(f["sockets"]), "kernel": kern, "us": float(f["alltoall_us"])}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--ranks", default="8,16,32,64")
    ap.add_argument("--nets", default="tcp,udp,udp+tcp")
    ap.add_argument("--bytes", type=int, default=1024)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=1, help="runs per point (medians)")
    a = ap.parse_args()
    build()
    print(f"alltoall of {a.bytes} B per pair, {a.iters} iterations; per process "
          f"(median of {a.repeat})")
    print(f"{'ranks':>5} {'PX_NET':>8} {'RSS KB':>8} {'max KB':>8} {'heap0 KB':>8} {'heap KB':>8} "
          f"{'sockets':>8} {'kernel KB':>9} {'alltoall us':>12}")
    nets = a.nets.split(",")
    for n in [int(x) for x in a.ranks.split(",")]:
        # Round-robin over the modes, so that a slow spell of the machine
        # falls on all of them rather than on one mode's runs.
        rs = {net: [] for net in nets}
        for _ in range(a.repeat):
            for net in nets:
                rs[net].append(run(n, net, a))
        med = {net: {k: statistics.median(r[k] for r in rs[net]) for k in rs[net][0]}
               for net in nets}
        for net in nets:
            m = med[net]
            print(f"{n:>5} {net:>8} {m['rss']:>8.0f} {m['rss_max']:>8.0f} "
                  f"{m['heap0']:>8.0f} {m['heap']:>8.0f} "
                  f"{m['sockets']:>8.1f} {m['kernel']:>9.1f} {m['us']:>12.1f}", flush=True)
        single = [med[x]["us"] for x in nets if "+" not in x]
        for net in (x for x in nets if "+" in x):
            ratios = []
            if "tcp" in med:
                ratios.append(f"/ connections only {med[net]['us'] / med['tcp']['us']:.2f}")
            if single:
                ratios.append(f"/ better single mode {med[net]['us'] / min(single):.2f}")
            if ratios:
                print(f"{n:>5} {net:>8} alltoall time " + ", ".join(ratios), flush=True)


if __name__ == "__main__":
    main()
