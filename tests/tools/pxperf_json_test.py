"""pxperf --quick runs every benchmark over one transport with 2 ranks; its
JSON must hold every field, with finite values (times and bandwidths
positive), every value of every varied property, and the transport it was
asked for. Usage: pxperf_json_test.py PXRUN PXPERF PX_NET CHANNEL [MODE]"""
import json
import math
import os
import subprocess
import sys
import tempfile

pxrun, pxperf, net, channel = sys.argv[1:5]
mode = sys.argv[5] if len(sys.argv) > 5 else None
errors = []


def check(cond, what):
    if not cond:
        errors.append(what)


def finite(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "pxperf.json")
    cmd = [pxrun, "-n", "2", "--timeout", "150", "--env", "PX_NET=" + net]
    if mode:
        cmd += ["--env", "PX_PROGRESS_MODE=" + mode]
    cmd += [pxperf, "--quick", "--json", out]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=200)
    if p.returncode != 0 or not os.path.exists(out):
        sys.exit(f"FAIL pxperf exited {p.returncode}\n{p.stdout}\n{p.stderr}")
    check("property" in p.stdout and "base" in p.stdout, "no table on standard output")
    with open(out) as f:
        j = json.load(f)

for k in ["program", "ranks", "quick", "transport", "net", "progress_mode", "setup", "base",
          "reliability", "varied"]:
    check(k in j, f"no top-level key {k}")
check(j.get("transport") == channel, f"transport {j.get('transport')!r}, wanted {channel!r}")
check(j.get("ranks") == 2 and j.get("quick") is True, "ranks or quick")
check(j.get("progress_mode") == (mode or "auto"), f"progress_mode {j.get('progress_mode')!r}")

setup = j.get("setup", {})
for k in ["init_us", "finalize_us", "connect_us", "barrier_us", "endpoint_us", "register_4k_us",
          "deregister_4k_us", "register_1m_us", "deregister_1m_us"]:
    check(finite(setup.get(k)) and setup[k] > 0, f"setup.{k} = {setup.get(k)!r}")

base = j.get("base", {})
for k in ["latency_us", "bandwidth_mbs", "idle_wake_us", "idle_wait_s", "latency_size",
          "bandwidth_size", "window", "max_data"]:
    check(finite(base.get(k)) and base[k] > 0, f"base.{k} = {base.get(k)!r}")
for k in ["cpu_latency", "cpu_bandwidth", "idle_cpu"]:
    check(finite(base.get(k)) and base[k] >= 0, f"base.{k} = {base.get(k)!r}")
if mode == "sleep":
    check(base.get("idle_cpu", 1) < 0.2, f"sleeping waiter used {base.get('idle_cpu')} of a core")

rel = j.get("reliability", {})
check(rel.get("level") and rel.get("varied_by_interface") is False, f"reliability {rel!r}")

maxd = str(int(base.get("max_data", 0)))
want = {
    "buffer_reuse": {("0", "bandwidth_mbs"), ("50", "bandwidth_mbs"), ("100", "bandwidth_mbs")},
    "segments": {(str(k), "latency_us") for k in range(1, 9)},
    "completion": {(h, "latency_us") for h in ("counter", "callback", "flag")},
    "endpoints": {("1", "latency_us"), ("2", "latency_us")},
    "handler_reply": {("main", "latency_us"), ("handler", "latency_us")},
    "one_sided": {(o, m) for o in ("put", "get") for m in ("latency_us", "bandwidth_mbs")},
    "transfer_size": {(s, m) for s in ("1", "4", maxd) for m in ("latency_us", "bandwidth_mbs")},
    "frame_size": {("1024", "bandwidth_mbs"), (maxd, "bandwidth_mbs")},
    "pipeline": {(str(w), "bandwidth_mbs") for w in (1, 2, 4, 8, 16, 32, 64)},
}
varied = j.get("varied", {})
for group, rows_wanted in want.items():
    rows = varied.get(group, [])
    have = {(r.get("value"), r.get("metric")) for r in rows}
    check(rows_wanted <= have, f"varied.{group} lacks {sorted(rows_wanted - have)}")
    for r in rows:
        for k in ["result", "base"]:
            check(finite(r.get(k)) and r[k] > 0, f"varied.{group} {r}: {k}")
        for k in ["diff", "diff_pct"]:
            check(finite(r.get(k)), f"varied.{group} {r}: {k}")
        if all(finite(r.get(k)) for k in ["result", "base", "diff"]):
            # printed with 6 significant digits (%.6g): the rounding scales
            # with the larger of the two values
            scale = max(1.0, abs(r["base"]), abs(r["result"]))
            check(abs(r["diff"] - (r["result"] - r["base"])) <= 1e-3 * scale,
                  f"varied.{group} {r}: diff is not result - base")
            check(r["base"] == base.get(r["metric"]), f"varied.{group} {r}: base is not the base")

if errors:
    print("FAIL pxperf JSON over PX_NET=%s:\n  %s" % (net, "\n  ".join(errors)))
    sys.exit(1)
print(f"PASS pxperf JSON over PX_NET={net} ({channel}, {mode or 'auto'}): "
      f"{sum(len(v) for v in varied.values())} varied rows, latency {base['latency_us']:.2f} us")
