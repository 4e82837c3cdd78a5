#!/usr/bin/env python3
"""The topology profile (PX_PROFILE=topo) of MPI jobs whose traffic is
known (topo_prof.c), on hosts named through pxrun --hosts (the launcher
starts every rank here, as mpi_ranks.sh does):

- with PX_TOPO (tests/topo/pxfab-fattree.json: node0 and node1 under leaf0,
  node2 and node3 under leaf1, two spines): every pair's messages and
  bytes exactly as sent, each pair's hops, the classes' totals, and every
  link's load (against the routes of the Python model, and the invariant
  that a pair's bytes cross hops + 1 links);
- flat: intra-node and inter-node classes, no fabric;
- sections marked by a signal (PX_PROFILE_SIGNAL=usr2): only what was sent
  between the two signals, a broadcast's messages included;
- the topology-aware scatter and gather in such a section: one message per
  route group into the far leaf (its hosts are reached over both spines),
  one out of it (both its routes to the root take one spine);
- the default file name; PX_PROFILE=yes writes no profile;
- `pxtopo report` on these profiles, and on the flat one read against the
  fabric (--fabric), which must classify as the job with PX_TOPO did.

The reports are left in OUTDIR for report_chromium.py.
    profile_test.py PXRUN TOPO_PROF SAMPLE_DIR OUTDIR
"""
import glob
import html.parser
import json
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.join(root, "python"))
from plexus.topo import load  # noqa: E402
from plexus.topo.report import reclassify  # noqa: E402

FABRIC = os.path.join(here, "pxfab-fattree.json")
pxrun = prog = outdir = None  # from the command line
LEAF = {"node0": "leaf0", "node1": "leaf0", "node2": "leaf1", "node3": "leaf1"}
RING_MSGS, BIG, BCAST, COLL_BLK = 3, (1 << 20) + 7, 256, 100
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


def hosts_of(spec):
    """'node0:2,node1:1' -> ['node0', 'node0', 'node1'] (rank order)."""
    out = []
    for part in spec.split(","):
        name, n = part.split(":")
        out += [name] * int(n)
    return out


def run(spec, mode, env, cwd=None):
    n = len(hosts_of(spec))
    e = {k: v for k, v in os.environ.items() if not k.startswith("PX_")}
    e.update(env)
    cmd = [pxrun, "--launcher", "env PXTEST_HOST={host}", "-n", str(n), "--hosts", spec,
           prog, mode]
    r = subprocess.run(cmd, env=e, cwd=cwd or outdir, capture_output=True, text=True, timeout=120)
    ok = check(r.returncode == 0 and f"PASS topo_prof np={n} {mode}" in r.stdout,
               f"{' '.join(cmd)} exited {r.returncode}:\n{r.stdout}{r.stderr}")
    return r if ok else None


def expected_p2p(n, counted_ring=True):
    """{(src, dst): [msgs, bytes]} of the ring and the big message."""
    exp = {}
    if n < 2:
        return exp
    for r in range(n):
        k = (r, (r + 1) % n)
        exp.setdefault(k, [0, 0])
        exp[k][0] += RING_MSGS
        exp[k][1] += RING_MSGS * (1000 + r)
    k = (0, n - 1)
    exp.setdefault(k, [0, 0])
    exp[k][0] += 1
    exp[k][1] += BIG
    return exp


def hops_expected(ha, hb):
    if ha == hb:
        return 0
    return 1 if LEAF[ha] == LEAF[hb] else 3


def class_of(hops):
    return f"{hops} hop{'' if hops == 1 else 's'}"


def pairs_of(prof):
    return {(p["src"], p["dst"]): p for p in prof["pairs"]}


def check_totals(prof, what):
    sums = {}
    for p in prof["pairs"]:
        s = sums.setdefault(p["class"], [0, 0])
        s[0] += p["msgs"]
        s[1] += p["bytes"]
    got = {c["name"]: [c["msgs"], c["bytes"]] for c in prof["classes"] if c["msgs"]}
    check(got == sums, f"{what}: class totals {got} != the pairs' {sums}")


def check_links(prof, fab, what):
    """Link loads: as the Python model routes the pairs, and each pair's
    bytes on hops + 1 links."""
    py = reclassify(prof, fab)
    c_links = [(lk["a"], lk["b"], lk["msgs"], lk["bytes"]) for lk in prof["topology"]["links"]]
    p_links = [(lk["a"], lk["b"], lk["msgs"], lk["bytes"]) for lk in py["topology"]["links"]]
    check(c_links == p_links, f"{what}: link loads differ from the Python model's routes:\n"
          f"  C      {c_links}\n  Python {p_links}")
    on_links = sum(sum(lk["bytes"]) for lk in prof["topology"]["links"])
    want = sum(p["bytes"] * (p["hops"] + 1) for p in prof["pairs"] if p["hops"])
    check(on_links == want, f"{what}: {on_links} bytes on the links, {want} expected")
    check([(p["src"], p["dst"], p["class"], p["hops"]) for p in py["pairs"]] ==
          [(p["src"], p["dst"], p["class"], p["hops"]) for p in prof["pairs"]],
          f"{what}: the Python model classifies the pairs differently")
    return py


def read(path):
    with open(path) as f:
        return json.load(f)


def main():
    global pxrun, prog, outdir
    pxrun, prog, _, outdir = (os.path.abspath(a) for a in sys.argv[1:5])
    os.makedirs(outdir, exist_ok=True)
    for f in glob.glob(os.path.join(outdir, "*.json")) + glob.glob(os.path.join(outdir, "*.html")):
        os.unlink(f)
    fab = load(FABRIC)

    # 1. whole run, on the fabric
    spec = "node0:2,node1:1,node2:2,node3:1"
    hosts = hosts_of(spec)
    n = len(hosts)
    out = os.path.join(outdir, "topo.json")
    if run(spec, "run", {"PX_TOPO": FABRIC, "PX_PROFILE": "topo", "PX_PROFILE_FILE": out}):
        prof = read(out)
        check(prof["ranks"] == n and prof["section"] == "run", "topo: header")
        check([i["host"] for i in prof["rank_info"]] == hosts, "topo: the ranks' hosts")
        check([i["fabric_host"] for i in prof["rank_info"]] ==
              [fab.host_find(h) for h in hosts], "topo: the ranks' fabric hosts")
        got = {k: [p["msgs"], p["bytes"]] for k, p in pairs_of(prof).items()}
        exp = expected_p2p(n)
        check(got == exp, f"topo: pairs {got}\n  expected {exp}")
        for (s, d), p in pairs_of(prof).items():
            h = hops_expected(hosts[s], hosts[d])
            check(p["hops"] == h and p["class"] == class_of(h),
                  f"topo: {s}->{d} ({hosts[s]}->{hosts[d]}) class {p['class']}, expected "
                  f"{class_of(h)}")
        check_totals(prof, "topo")
        check(prof["topology"]["hosts"] == fab.host_names() and
              len(prof["topology"]["links"]) == len(fab.links), "topo: the fabric")
        check_links(prof, fab, "topo")
        # the big message, node0 -> node3, crosses node0-leaf0, leaf0-spine1,
        # leaf1-spine1 (down) and node3-leaf1 (down): the only megabyte
        big = {(lk["a"], lk["b"]): [w for w in (0, 1) if lk["bytes"][w] >= BIG]
               for lk in prof["topology"]["links"] if max(lk["bytes"]) >= BIG}
        want = {("node0", "leaf0"): [0], ("leaf0", "spine1"): [0], ("leaf1", "spine1"): [1],
                ("node3", "leaf1"): [1]}
        check(big == want, f"topo: the big message's links {big}, expected {want}")

    # 2. flat
    spec_f = "node0:2,node1:2"
    hosts_f = hosts_of(spec_f)
    out_f = os.path.join(outdir, "flat.json")
    if run(spec_f, "run", {"PX_PROFILE": "topo", "PX_PROFILE_FILE": out_f}):
        prof = read(out_f)
        check(prof["topology"] is None, "flat: a fabric in a flat profile")
        got = {k: [p["msgs"], p["bytes"]] for k, p in pairs_of(prof).items()}
        check(got == expected_p2p(4), f"flat: pairs {got}")
        for (s, d), p in pairs_of(prof).items():
            want = "intra-node" if hosts_f[s] == hosts_f[d] else "inter-node"
            check(p["class"] == want and p["hops"] is None, f"flat: {s}->{d} class {p['class']}")
        check_totals(prof, "flat")
        check({c["name"] for c in prof["classes"]} == {"self", "intra-node", "inter-node"},
              f"flat: classes {prof['classes']}")
        # read against the fabric, the flat profile classifies as with PX_TOPO
        py = reclassify(prof, fab)
        for p in py["pairs"]:
            h = hops_expected(hosts_f[p["src"]], hosts_f[p["dst"]])
            check(p["hops"] == h, f"flat --fabric: {p['src']}->{p['dst']} hops {p['hops']}")

    # 3. sections marked by a signal, with a broadcast in them
    spec_s = "node0:1,node2:2,node1:1,node3:1"
    hosts_s = hosts_of(spec_s)
    out_s = os.path.join(outdir, "signal.json")
    if run(spec_s, "signal", {"PX_TOPO": FABRIC, "PX_PROFILE": "topo", "PX_PROFILE_FILE": out_s,
                              "PX_PROFILE_SIGNAL": "usr2", "PX_BCAST_ALGORITHM": "binomial"}):
        prof = read(out_s)
        ns = len(hosts_s)
        check(prof["section"] == "signal" and
              [i["sections"] for i in prof["rank_info"]] == [1] * ns, "signal: one section each")
        left = {k: [p["msgs"], p["bytes"]] for k, p in pairs_of(prof).items()}
        for k, (m, b) in expected_p2p(ns).items():
            if check(k in left and left[k][0] >= m and left[k][1] >= b,
                     f"signal: {k} lacks the point-to-point traffic"):
                left[k] = [left[k][0] - m, left[k][1] - b]
        left = {k: v for k, v in left.items() if v != [0, 0]}
        # what remains is the broadcast: one message of BCAST bytes into
        # each rank but the root, from a rank that had it already
        into = sorted(d for (s, d) in left)
        check(into == list(range(1, ns)) and all(v == [1, BCAST] for v in left.values()),
              f"signal: beyond the point-to-point traffic {left}")
        check_totals(prof, "signal")
        check_links(prof, fab, "signal")

    # 3b. the topology-aware scatter and gather from rank 0 (node0), in a
    # section: the root's leaf gets its blocks directly; the far leaf by
    # route group. From node0, node2 is reached over spine0 and node3 over
    # spine1: one message to each host's first rank, which hands the other
    # its block. Into node0, both routes take spine0: one group, one
    # message of the leaf's four blocks from its lowest rank.
    spec_c = "node0:2,node1:1,node2:2,node3:2"
    out_c = os.path.join(outdir, "coll.json")
    if run(spec_c, "coll", {"PX_TOPO": FABRIC, "PX_PROFILE": "topo", "PX_PROFILE_FILE": out_c,
                            "PX_PROFILE_SIGNAL": "usr2", "PX_SCATTER_ALGORITHM": "topo",
                            "PX_GATHER_ALGORITHM": "topo"}):
        prof = read(out_c)
        got = {k: [p["msgs"], p["bytes"]] for k, p in pairs_of(prof).items()}
        b = COLL_BLK
        want = {(0, 1): [1, b], (0, 2): [1, b], (0, 3): [1, 2 * b], (3, 4): [1, b],
                (0, 5): [1, 2 * b], (5, 6): [1, b],
                (1, 0): [1, b], (2, 0): [1, b], (4, 3): [1, b], (5, 3): [1, b],
                (6, 3): [1, b], (3, 0): [1, 4 * b]}
        check(got == want, f"coll: pairs {got}\n  expected {want}")
        check_links(prof, fab, "coll")

    # 4. the default name; PX_PROFILE=yes prints counters, writes no profile
    cwd = os.path.join(outdir, "default")
    os.makedirs(cwd, exist_ok=True)
    for f in glob.glob(os.path.join(cwd, "*")):
        os.unlink(f)
    r = run("node0:1,node1:1", "run", {"PX_PROFILE": "all"}, cwd)
    names = os.listdir(cwd)
    if check(r and len(names) == 1 and names[0].startswith("plexus-profile-") and
             names[0].endswith(".json"), f"default name: {names}"):
        prof = read(os.path.join(cwd, names[0]))
        check(names[0] == f"plexus-profile-{prof['job_id']}.json", "default name: job id")
        check("[plexus profile] rank 0" in r.stderr and "written to " + names[0] in r.stderr,
              "PX_PROFILE=all: counters and the profile")
        os.unlink(os.path.join(cwd, names[0]))
    r = run("node0:1,node1:1", "run", {"PX_PROFILE": "yes"}, cwd)
    check(r and os.listdir(cwd) == [] and "[plexus profile] rank 0" in r.stderr,
          f"PX_PROFILE=yes: {os.listdir(cwd)}")

    # 5. the reports
    pxtopo = os.path.join(root, "tools", "pxtopo")
    for name, extra in (("topo", []), ("flat", []), ("signal", []),
                        ("flat-on-fabric", ["--fabric", FABRIC])):
        src = os.path.join(outdir, ("flat" if name == "flat-on-fabric" else name) + ".json")
        if not os.path.exists(src):
            continue
        page = os.path.join(outdir, name + ".html")
        r = subprocess.run([pxtopo, "report", src, "-o", page] + extra, capture_output=True,
                           text=True, timeout=60)
        if check(r.returncode == 0, f"pxtopo report {name}: {r.stderr}"):
            check_page(page, read(src), name, fabric=name != "flat")
    if failures:
        print(f"{len(failures)} checks failed")
        return 1
    print("PASS profile_test: topo, flat, signal, coll, default name, reports")
    return 0


class Elements(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.found = []
        self.text = []

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def check_page(path, prof, name, fabric):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    check("http://" not in text.replace("http://www.w3.org/2000/svg", "") and
          "https://" not in text and " src=" not in text and "<link" not in text,
          f"report {name}: refers to something outside the page")
    p = Elements()
    p.feed(text)
    ids = {a.get("id") for t, a in p.found}
    check({"histogram", "heatmap", "classes"} <= ids, f"report {name}: figures {ids}")
    check(("fabric" in ids) == fabric, f"report {name}: fabric drawing {fabric}")
    n = prof["ranks"]
    cells = [a for t, a in p.found if t == "rect" and a.get("class") == "cell"]
    check(len(cells) == n * n, f"report {name}: {len(cells)} cells, {n * n} expected")
    want = {(q["src"], q["dst"]): q["bytes"] for q in prof["pairs"]}
    got = {(int(a["data-src"]), int(a["data-dst"])): int(a["data-bytes"]) for a in cells
           if a["data-bytes"] != "0"}
    check(got == want, f"report {name}: the matrix {got}")
    bars = [a for t, a in p.found if t == "rect" and a.get("class") == "bar"]
    per_rank = {}
    for a in bars:
        per_rank[int(a["data-rank"])] = per_rank.get(int(a["data-rank"]), 0) + int(a["data-bytes"])
    sent = {}
    for q in prof["pairs"]:
        sent[q["src"]] = sent.get(q["src"], 0) + q["bytes"]
    check(per_rank == sent, f"report {name}: bars {per_rank}, sent {sent}")
    if fabric:
        links = [a for t, a in p.found if t == "line" and a.get("class") == "link"]
        check(len(links) == 8, f"report {name}: {len(links)} links drawn")
        check(sum(1 for t, a in p.found if t == "g" and a.get("class") == "switch") == 4,
              f"report {name}: switches drawn")


if __name__ == "__main__":
    sys.exit(main())
