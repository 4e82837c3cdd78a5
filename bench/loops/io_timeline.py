#!/usr/bin/env python3
"""Summarizes one rank's file from io_timeline.so: per collective call
(MPI_Bcast, MPI_Gather, MPI_Reduce, MPI_Allreduce or MPI_Alltoall), when the first control message (a
read of less than 100 bytes) arrived, when the last large write (over
1,000 bytes) ended, the time spent inside large writes and when the call
returned, in us from entering it; medians and
10th/90th percentiles over the calls after --skip. --show N prints call
N's events. --both N prints call N of every rank (PREFIX.0, PREFIX.1, ...)
on one time line from rank 0's entry to its next call, with the barrier
between them: which rank waited for whom, and which message was late.
  python3 bench/loops/io_timeline.py PREFIX.0 [--skip 60] [--show 400] [--both 400]"""
import argparse
import os
import statistics


def calls(lines):
    cur = None
    for f in lines:
        if f[2] in ("coll>", "bcast>"):
            cur = [f]
        elif cur is not None:
            cur.append(f)
            if f[2] in ("coll<", "bcast<"):
                yield cur
                cur = None


def both(path, lines0, n):
    """Call n of all ranks on rank 0's clock (one machine: one clock)."""
    starts = [float(f[0]) for f in lines0 if f[2] in ("coll>", "bcast>")]
    t0 = starts[n]
    t1 = starts[n + 1] if n + 1 < len(starts) else float("inf")
    prefix = path.rsplit(".", 1)[0]
    ev = []
    r = 0
    while os.path.exists(f"{prefix}.{r}"):
        for f in (lines0 if r == 0 else (l.split() for l in open(f"{prefix}.{r}"))):
            if t0 - 50 <= float(f[0]) < t1 + 50:
                ev.append((float(f[0]), r, f))
        r += 1
    for t, rank, f in sorted(ev, key=lambda e: (e[0], e[1])):
        fd = f" fd {f[5]}" if len(f) > 5 and f[5] != "-1" else ""
        print(f"{t - t0:8.1f} {float(f[1]) - t0:8.1f} {'    ' * rank}r{rank} {f[2]} {f[3]} {f[4]}{fd}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--skip", type=int, default=60)
    ap.add_argument("--show", type=int)
    ap.add_argument("--both", type=int)
    a = ap.parse_args()
    lines = [l.split() for l in open(a.file)]
    if a.both is not None:
        both(a.file, lines, a.both)
        return
    cs = list(calls(lines))
    if a.show is not None:
        c = cs[a.show]
        t0 = float(c[0][1])
        for f in c:
            print(f"{float(f[0]) - t0:8.1f} {float(f[1]) - t0:8.1f} {f[2]} {f[3]} {f[4]}")
        return
    rows = {"control read": [], "last large write ends": [], "inside large writes": [],
            "return": []}
    for c in cs[a.skip:]:
        t0 = float(c[0][1])
        ctl = end = None
        inside = 0.0
        for f in c[1:]:
            if f[2] in ("recv", "readv") and int(f[3]) < 100 and ctl is None:
                ctl = float(f[1]) - t0
            if f[2] in ("sendmsg", "writev") and int(f[3]) > 1000:
                end = float(f[1]) - t0
                inside += float(f[1]) - float(f[0])
        if ctl is not None:
            rows["control read"].append(ctl)
        if end is not None:
            rows["last large write ends"].append(end)
            rows["inside large writes"].append(inside)
        rows["return"].append(float(c[-1][1]) - t0)
    print(f"{len(cs) - a.skip} calls of {a.file}; us from entering the collective")
    for k, v in rows.items():
        if not v:
            continue
        v.sort()
        print(f"{k:24s} median {statistics.median(v):7.1f}  mean {statistics.mean(v):7.1f}"
              f"  p10 {v[len(v) // 10]:7.1f}  p90 {v[9 * len(v) // 10]:7.1f}")


if __name__ == "__main__":
    main()
