"""pxtopo report: a topology profile (PX_PROFILE=topo) as one HTML page.

The page is self-contained (inline SVG and CSS, a few lines of inline
script, nothing fetched) and holds three figures:

- ``svg#fabric``: the fabric, switches in rows by level above the hosts,
  each link coloured and widened by the bytes it carried (the busier
  direction), labelled with the bytes each way;
- ``svg#histogram``: the bytes each rank (or node) sent, stacked by hop
  class (self, same host, 1 hop, 3 hops, ...; flat: intra-/inter-node);
- ``svg#heatmap``: the communication matrix, bytes from each rank (row)
  to each rank (column), on a logarithmic colour scale.

Classes and link loads come from the profile, or, with a fabric
description (``--fabric``), are computed again here from the profile's
pairs and the ranks' host names: a profile taken without PX_TOPO can so
be read against a fabric.
"""

import html
import json
import math

from .model import TopoError, natural_key

CLASS_COLOURS = {
    "self": "#9e9e9e",
    "intra-node": "#2e7d32",
    "0 hops": "#2e7d32",
    "inter-node": "#ef6c00",
    "unknown": "#37474f",
}
HOP_COLOURS = ["#1565c0", "#ef6c00", "#c62828", "#6a1b9a", "#00838f", "#ad1457"]


def load_profile(path):
    try:
        with open(path, encoding="utf-8") as f:
            prof = json.load(f)
    except OSError as e:
        raise TopoError(f"cannot open {path}: {e.strerror}") from None
    except ValueError as e:
        raise TopoError(f"{path}: not JSON: {e}") from None
    if not isinstance(prof, dict) or prof.get("format") != "plexus-profile":
        raise TopoError(f"{path}: not a Plexus topology profile (PX_PROFILE=topo)")
    for key in ("ranks", "rank_info", "pairs", "classes"):
        if key not in prof:
            raise TopoError(f"{path}: no '{key}' in the profile")
    return prof


def class_name(hops):
    return f"{hops} hop{'' if hops == 1 else 's'}"


def class_colour(name):
    if name in CLASS_COLOURS:
        return CLASS_COLOURS[name]
    try:
        hops = int(name.split()[0])
    except ValueError:
        return "#5d4037"
    return HOP_COLOURS[(hops - 1) // 2 % len(HOP_COLOURS)] if hops > 0 else "#2e7d32"


def class_label(name):
    """A class's name with what it means, for legends."""
    return {"0 hops": "0 hops (same host)", "1 hop": "1 hop (one switch)"}.get(name, name)


def human(n):
    """Bytes, to 3 significant digits: 999 B, 1.02 KiB, 3.00 MiB."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            if unit == "B":
                return f"{int(n)} B"
            return f"{n:.3g} {unit}"
        n /= 1024
    return f"{n} B"


def reclassify(prof, fab, fab_file=None):
    """Classes, pairs and link loads of a profile computed on fabric `fab`
    (plexus.topo.Fabric) from the ranks' host names; what the C library
    writes with PX_TOPO set to the same description."""
    hosts = []
    for info in prof["rank_info"]:
        try:
            hosts.append(fab.host_find(info["host"]))
        except (TopoError, KeyError):
            hosts.append(None)
    hosts = [None if h is None or h < 0 else h for h in hosts]
    links = [{"a": fab.v[lk.v[0]].name, "b": fab.v[lk.v[1]].name, "rate_bps": lk.rate,
              "msgs": [0, 0], "bytes": [0, 0]} for lk in fab.links]
    totals = {"self": [0, 0], "unknown": [0, 0], "0 hops": [0, 0]}
    pairs = []
    for p in prof["pairs"]:
        s, d = p["src"], p["dst"]
        hs, hd = hosts[s], hosts[d]
        hops = None
        if s == d:
            name = "self"
        elif hs is None or hd is None:
            name = "unknown"
        else:
            r = fab.walk(hs, hd)
            if r is None:
                name = "unknown"
            else:
                hops = len(r[0])
                name = class_name(hops)
                cur = fab.hosts[hs]
                for li in r[1]:
                    lk = fab.links[li]
                    way = 0 if lk.v[0] == cur else 1
                    links[li]["msgs"][way] += p["msgs"]
                    links[li]["bytes"][way] += p["bytes"]
                    cur = lk.v[1 - way]
        q = dict(p, **{"class": name, "hops": hops})
        pairs.append(q)
        t = totals.setdefault(name, [0, 0])
        t[0] += p["msgs"]
        t[1] += p["bytes"]
    classes = []
    for name, (m, b) in totals.items():
        hops = int(name.split()[0]) if name.endswith(("hop", "hops")) else None
        classes.append({"name": name, "hops": hops, "msgs": m, "bytes": b})
    classes.sort(key=class_order)
    fab._prepare()
    topology = {"file": fab_file, "format": fab.format,
                "hosts": fab.host_names(),
                "switches": [fab.switch_name(s) for s in range(len(fab.switches))],
                "levels": {fab.switch_name(s): fab.v[sv].level
                           for s, sv in enumerate(fab.switches)},
                "links": links}
    rank_info = [dict(info, fabric_host=h) for info, h in zip(prof["rank_info"], hosts)]
    return dict(prof, pairs=pairs, classes=classes, topology=topology, rank_info=rank_info)


def class_order(c):
    name = c["name"]
    fixed = {"self": -3, "intra-node": -2, "inter-node": -1}
    if name in fixed:
        return (fixed[name], 0)
    if c.get("hops") is not None:
        return (0, c["hops"])
    return (1, 0)


def switch_levels(topo):
    """Level of each switch: as given (a fabric read here), else 0 for the
    switches with hosts and one more per switch hop from them."""
    if topo.get("levels"):
        return dict(topo["levels"])
    hosts = set(topo["hosts"])
    adj = {}
    for lk in topo["links"]:
        adj.setdefault(lk["a"], []).append(lk["b"])
        adj.setdefault(lk["b"], []).append(lk["a"])
    level = {}
    queue = [s for s in topo["switches"] if any(o in hosts for o in adj.get(s, []))]
    for s in queue:
        level[s] = 0
    i = 0
    while i < len(queue):
        s = queue[i]
        i += 1
        for o in adj.get(s, []):
            if o not in hosts and o not in level:
                level[o] = level[s] + 1
                queue.append(o)
    for s in topo["switches"]:
        level.setdefault(s, 0)
    return level


# ---- the figures -------------------------------------------------------

def esc(s):
    return html.escape(str(s), quote=True)


def load_colour(x):
    """0..1 -> light grey, yellow, orange, red."""
    if x <= 0:
        return "#d0d0d0"
    stops = [(0.0, (255, 224, 130)), (0.5, (251, 140, 0)), (1.0, (183, 28, 28))]
    for (x0, c0), (x1, c1) in zip(stops, stops[1:]):
        if x <= x1:
            t = (x - x0) / (x1 - x0)
            return "#%02x%02x%02x" % tuple(round(a + (b - a) * t) for a, b in zip(c0, c1))
    return "#b71c1c"


def fabric_svg(prof):
    topo = prof.get("topology")
    if not topo:
        return ('<p class="note" id="fabric-none">No fabric in this profile (taken without '
                'PX_TOPO): give one with <code>pxtopo report --fabric FILE</code> to draw it.</p>')
    level = switch_levels(topo)
    ranks_on = {}
    for i, info in enumerate(prof["rank_info"]):
        fh = info.get("fabric_host")
        if fh is not None and 0 <= fh < len(topo["hosts"]):
            ranks_on.setdefault(topo["hosts"][fh], []).append(i)
    hosts = set(topo["hosts"])
    leaf_of = {}
    for lk in topo["links"]:
        for h, o in ((lk["a"], lk["b"]), (lk["b"], lk["a"])):
            if h in hosts and o not in hosts:
                leaf_of.setdefault(h, o)
    maxlevel = max(level.values(), default=0)
    rows = [[] for _ in range(maxlevel + 2)]  # row 0 the top
    for s in sorted(topo["switches"], key=natural_key):
        rows[maxlevel - level[s]].append(s)
    leaves = rows[maxlevel]
    host_row = sorted(topo["hosts"], key=lambda h: (
        leaves.index(leaf_of[h]) if leaf_of.get(h) in leaves else len(leaves),
        topo["hosts"].index(h)))
    rows[maxlevel + 1] = host_row
    width = max(640, 110 * max(len(r) for r in rows) + 60)
    row_h = 130
    height = row_h * (len(rows) - 1) + 70
    pos = {}
    for ri, row in enumerate(rows):
        for i, name in enumerate(row):
            pos[name] = ((i + 0.5) * width / len(row), 40 + ri * row_h)
    peak = max((max(lk["bytes"]) for lk in topo["links"]), default=0)
    out = [f'<svg id="fabric" class="figure" xmlns="http://www.w3.org/2000/svg" '
           f'width="{width}" height="{height + 40}" viewBox="0 0 {width} {height + 40}">',
           '<title>Fabric: links coloured by load</title>']
    for li, lk in enumerate(topo["links"]):
        a, b = lk["a"], lk["b"]
        if a not in pos or b not in pos:
            continue
        (x1, y1), (x2, y2) = pos[a], pos[b]
        busy = max(lk["bytes"])
        frac = busy / peak if peak else 0
        wdt = 1.5 + 8 * frac
        rate = f", {lk['rate_bps'] / 1e9:g} Gbit/s" if lk.get("rate_bps") else ""
        tip = (f"{a} → {b}: {lk['bytes'][0]} bytes in {lk['msgs'][0]} messages; "
               f"{b} → {a}: {lk['bytes'][1]} bytes in {lk['msgs'][1]} messages{rate}")
        out.append(f'<line class="link" id="link-{li}" data-a="{esc(a)}" data-b="{esc(b)}" '
                   f'data-bytes="{lk["bytes"][0]} {lk["bytes"][1]}" x1="{x1:.1f}" y1="{y1:.1f}" '
                   f'x2="{x2:.1f}" y2="{y2:.1f}" stroke="{load_colour(frac)}" '
                   f'stroke-width="{wdt:.1f}"><title>{esc(tip)}</title></line>')
        if busy:
            # from the lower end's point of view: up (toward a higher
            # row) and down
            lower_is_a = y1 > y2
            up, down = (lk["bytes"][0], lk["bytes"][1]) if lower_is_a else \
                (lk["bytes"][1], lk["bytes"][0])
            # a third of the way up from the lower end, where links
            # fanning out from one switch are apart
            (lx, ly), (ux, uy) = ((x1, y1), (x2, y2)) if lower_is_a else ((x2, y2), (x1, y1))
            mx, my = lx + (ux - lx) * 0.3, ly + (uy - ly) * 0.3
            out.append(f'<text class="link-label" data-link="{li}" x="{mx:.1f}" y="{my - 3:.1f}">'
                       f'↑{esc(human(up))}</text><text class="link-label" x="{mx:.1f}" '
                       f'y="{my + 9:.1f}">↓{esc(human(down))}</text>')
    for name, (x, y) in pos.items():
        is_host = name in hosts
        kind = "host" if is_host else "switch"
        ranks = ranks_on.get(name, [])
        label = esc(name)
        sub = ""
        if is_host:
            sub = (f"ranks {compact_ranks(ranks)}" if ranks else "no ranks")
        else:
            sub = f"level {level[name]}"
        out.append(f'<g class="{kind}" data-name="{esc(name)}">'
                   f'<rect x="{x - 48:.1f}" y="{y - 17:.1f}" width="96" height="34" rx="5"/>'
                   f'<text x="{x:.1f}" y="{y - 2:.1f}">{label}</text>'
                   f'<text class="sub" x="{x:.1f}" y="{y + 11:.1f}">{esc(sub)}</text></g>')
    # the colour scale
    ly = height + 10
    out.append(f'<g class="legend"><text x="10" y="{ly + 12}" class="left">link load '
               f'(busier direction):</text>')
    for i in range(11):
        out.append(f'<rect x="{200 + 22 * i}" y="{ly}" width="22" height="14" '
                   f'fill="{load_colour(i / 10)}"/>')
    out.append(f'<text x="200" y="{ly + 28}" class="left">0</text>'
               f'<text x="442" y="{ly + 28}" class="right">{esc(human(peak))}</text></g>')
    out.append("</svg>")
    return "\n".join(out)


def compact_ranks(ranks):
    """[0, 1, 2, 5] -> '0-2,5'."""
    out, i = [], 0
    while i < len(ranks):
        j = i
        while j + 1 < len(ranks) and ranks[j + 1] == ranks[j] + 1:
            j += 1
        out.append(str(ranks[i]) if i == j else f"{ranks[i]}-{ranks[j]}")
        i = j + 1
    return ",".join(out)


def histogram_svg(prof, by):
    classes = [c["name"] for c in prof["classes"]]
    n = prof["ranks"]
    if by == "node":
        names = []
        group = []
        for info in prof["rank_info"]:
            if info["host"] not in names:
                names.append(info["host"])
            group.append(names.index(info["host"]))
    else:
        names = [str(r) for r in range(n)]
        group = list(range(n))
    sums = [{c: 0 for c in classes} for _ in names]
    for p in prof["pairs"]:
        sums[group[p["src"]]][p["class"]] = sums[group[p["src"]]].get(p["class"], 0) + p["bytes"]
    totals = [sum(s.values()) for s in sums]
    peak = max(totals, default=0) or 1
    # a round top for the axis
    mag = 1024 ** max(0, int(math.log(peak, 1024))) if peak >= 1024 else 1
    step = nice_step(peak / mag / 4) * mag
    top = step * math.ceil(peak / step)
    bar_w = max(8, min(48, 900 // max(1, len(names))))
    gap = max(2, bar_w // 4)
    left, plot_h = 90, 300
    width = left + len(names) * (bar_w + gap) + 40
    width = max(width, 560)
    height = plot_h + 130
    y0 = 30 + plot_h
    out = [f'<svg id="histogram" class="figure" xmlns="http://www.w3.org/2000/svg" '
           f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">',
           f'<title>Bytes sent per {by} by hop class</title>']
    t = 0
    while t <= top + 1e-9:
        y = y0 - plot_h * t / top
        out.append(f'<line class="grid" x1="{left}" x2="{width - 20}" y1="{y:.1f}" y2="{y:.1f}"/>'
                   f'<text class="right tick" x="{left - 6}" y="{y + 4:.1f}">{esc(human(t))}</text>')
        t += step
    for i, name in enumerate(names):
        x = left + gap + i * (bar_w + gap)
        y = y0
        for c in classes:
            v = sums[i].get(c, 0)
            if not v:
                continue
            h = plot_h * v / top
            y -= h
            out.append(f'<rect class="bar" data-{by}="{esc(name)}" data-class="{esc(c)}" '
                       f'data-bytes="{v}" x="{x}" y="{y:.1f}" width="{bar_w}" '
                       f'height="{max(h, 0.5):.1f}" fill="{class_colour(c)}">'
                       f'<title>{by} {esc(name)}, {esc(c)}: {v} bytes</title></rect>')
        out.append(f'<text class="bar-total" x="{x + bar_w / 2:.1f}" y="{y - 4:.1f}">'
                   f'{esc(human(totals[i]))}</text>'
                   f'<text class="tick" x="{x + bar_w / 2:.1f}" y="{y0 + 16}">{esc(name)}</text>')
    out.append(f'<line class="axis" x1="{left}" x2="{width - 20}" y1="{y0}" y2="{y0}"/>'
               f'<text x="{left + (width - left) / 2:.1f}" y="{y0 + 36}">'
               f'{"rank" if by == "rank" else "node"} (sender)</text>'
               f'<text class="left" transform="rotate(-90)" x="{-y0}" y="16">bytes sent</text>')
    lx = left
    for c in classes:
        out.append(f'<g class="legend-item" data-class="{esc(c)}"><rect x="{lx}" y="{y0 + 52}" '
                   f'width="14" height="14" fill="{class_colour(c)}"/>'
                   f'<text class="left" x="{lx + 18}" y="{y0 + 64}">{esc(class_label(c))}</text></g>')
        lx += 30 + 7 * len(class_label(c))
    out.append("</svg>")
    return "\n".join(out)


def nice_step(x):
    if x <= 0:
        return 1
    e = 10 ** math.floor(math.log10(x))
    for m in (1, 2, 2.5, 5, 10):
        if m * e >= x:
            return m * e
    return 10 * e


def heat_colour(v, peak):
    if not v:
        return "#f5f5f5"
    x = math.log1p(v) / math.log1p(peak) if peak > 0 else 0
    c0, c1 = (222, 235, 247), (8, 48, 107)
    return "#%02x%02x%02x" % tuple(round(a + (b - a) * x) for a, b in zip(c0, c1))


def heatmap_svg(prof):
    n = prof["ranks"]
    m = {}
    for p in prof["pairs"]:
        m[(p["src"], p["dst"])] = p
    peak = max((p["bytes"] for p in prof["pairs"]), default=0)
    cell = max(6, min(56, 720 // max(1, n)))
    labelled = cell >= 40
    left, topm = 60, 50
    width = left + n * cell + 40
    height = topm + n * cell + 80
    out = [f'<svg id="heatmap" class="figure" xmlns="http://www.w3.org/2000/svg" '
           f'width="{max(width, 360)}" height="{height}" viewBox="0 0 {max(width, 360)} {height}">',
           '<title>Communication matrix: bytes from each rank to each rank</title>',
           f'<text x="{left + n * cell / 2:.1f}" y="16">to rank</text>',
           f'<text class="left" transform="rotate(-90)" x="{-(topm + n * cell / 2 + 30):.1f}" '
           f'y="16">from rank</text>']
    every = max(1, math.ceil(14 / cell))
    for r in range(n):
        if r % every == 0:
            out.append(f'<text class="tick" x="{left + (r + 0.5) * cell:.1f}" y="{topm - 6}">'
                       f'{r}</text><text class="right tick" x="{left - 6}" '
                       f'y="{topm + (r + 0.5) * cell + 4:.1f}">{r}</text>')
    for s in range(n):
        for d in range(n):
            p = m.get((s, d))
            v = p["bytes"] if p else 0
            msgs = p["msgs"] if p else 0
            x, y = left + d * cell, topm + s * cell
            out.append(f'<rect class="cell" data-src="{s}" data-dst="{d}" data-bytes="{v}" '
                       f'data-msgs="{msgs}" x="{x}" y="{y}" width="{cell}" height="{cell}" '
                       f'fill="{heat_colour(v, peak)}"><title>{s} → {d}: {v} bytes in {msgs} '
                       f'messages{" (" + esc(p["class"]) + ")" if p else ""}</title></rect>')
            if labelled and v:
                dark = math.log1p(v) / math.log1p(peak) > 0.55 if peak else False
                out.append(f'<text class="cell-label{" dark" if dark else ""}" '
                           f'x="{x + cell / 2:.1f}" y="{y + cell / 2 + 4:.1f}">'
                           f'{esc(human(v))}</text>')
    ly = topm + n * cell + 20
    out.append(f'<g class="legend"><text class="left" x="{left}" y="{ly + 12}">bytes (log):</text>')
    for i in range(11):
        v = math.expm1(math.log1p(peak) * i / 10) if peak else 0
        out.append(f'<rect x="{left + 90 + 20 * i}" y="{ly}" width="20" height="14" '
                   f'fill="{heat_colour(v, peak)}"/>')
    out.append(f'<text class="left" x="{left + 90}" y="{ly + 30}">0</text>'
               f'<text class="right" x="{left + 310}" y="{ly + 30}">{esc(human(peak))}</text></g>')
    out.append("</svg>")
    return "\n".join(out)


def classes_table(prof):
    total_b = sum(c["bytes"] for c in prof["classes"]) or 1
    total_m = sum(c["msgs"] for c in prof["classes"]) or 1
    rows = []
    for c in prof["classes"]:
        rows.append(f'<tr data-class="{esc(c["name"])}"><td><span class="swatch" '
                    f'style="background:{class_colour(c["name"])}"></span>{esc(class_label(c["name"]))}</td>'
                    f'<td>{c["msgs"]}</td><td>{100 * c["msgs"] / total_m:.1f}%</td>'
                    f'<td>{c["bytes"]}</td><td>{esc(human(c["bytes"]))}</td>'
                    f'<td>{100 * c["bytes"] / total_b:.1f}%</td></tr>')
    return ('<table id="classes"><tr><th>hop class</th><th>messages</th><th></th>'
            '<th>bytes</th><th></th><th></th></tr>' + "".join(rows) + "</table>")


STYLE = """
body { font-family: sans-serif; margin: 20px; color: #212121; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 28px; }
.meta td { padding: 1px 10px 1px 0; font-size: 13px; }
svg text { font-size: 11px; text-anchor: middle; fill: #212121; }
svg text.left { text-anchor: start; } svg text.right { text-anchor: end; }
svg .host rect { fill: #e3f2fd; stroke: #1565c0; }
svg .switch rect { fill: #eceff1; stroke: #455a64; }
svg .host text, svg .switch text { font-weight: bold; }
svg text.sub { font-weight: normal; font-size: 10px; fill: #455a64; }
svg .link-label { font-size: 10px; fill: #4e342e; paint-order: stroke; stroke: #fff;
  stroke-width: 3px; }
svg .grid { stroke: #e0e0e0; } svg .axis { stroke: #616161; }
svg .tick { font-size: 10px; fill: #616161; }
svg .cell { stroke: #fff; stroke-width: 1; }
svg .cell-label { font-size: 9px; } svg .cell-label.dark { fill: #fff; }
svg .bar-total { font-size: 10px; }
table#classes { border-collapse: collapse; font-size: 13px; }
table#classes td, table#classes th { border-bottom: 1px solid #e0e0e0; padding: 3px 10px;
  text-align: right; }
table#classes td:first-child { text-align: left; }
.swatch { display: inline-block; width: 11px; height: 11px; margin-right: 6px; }
.note { color: #616161; font-size: 13px; }
"""

# Once laid out, each figure records the size of what the browser drew in
# it and where on the page it put it: a check that the page was rendered,
# for tests in a headless browser.
SCRIPT = """
window.addEventListener('load', function () {
  var figs = document.querySelectorAll('svg.figure');
  for (var i = 0; i < figs.length; i++) {
    var b = figs[i].getBBox(), r = figs[i].getBoundingClientRect();
    figs[i].setAttribute('data-rendered', Math.round(b.width) + 'x' + Math.round(b.height));
    figs[i].setAttribute('data-at', Math.round(r.left + window.scrollX) + ',' +
                         Math.round(r.top + window.scrollY));
  }
  document.body.setAttribute('data-figures', String(figs.length));
});
"""


def render(prof, by=None):
    prof = dict(prof, classes=sorted(prof["classes"], key=class_order))
    n = prof["ranks"]
    if by is None:
        by = "rank" if n <= 64 else "node"
    topo = prof.get("topology")
    meta = [("job", prof.get("job_id", "")), ("ranks", n), ("nodes", prof.get("nodes", "")),
            ("counted", "whole run (MPI_Init to MPI_Finalize)" if prof.get("section") == "run"
             else "sections marked by a signal"),
            ("fabric", f'{topo.get("file") or ""} ({topo.get("format")})' if topo
             else "none (flat: intra-node and inter-node)"),
            ("messages", sum(p["msgs"] for p in prof["pairs"])),
            ("bytes", f'{sum(p["bytes"] for p in prof["pairs"])}')]
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>Plexus topology profile {esc(prof.get('job_id', ''))}</title>",
             f"<style>{STYLE}</style><script>{SCRIPT}</script></head><body>",
             "<h1>Plexus topology profile</h1>", '<table class="meta">']
    parts += [f"<tr><td>{esc(k)}</td><td>{esc(v)}</td></tr>" for k, v in meta]
    parts.append("</table>")
    parts.append(f'<p class="note">{esc(prof.get("counted", ""))}</p>')
    parts.append("<h2>Traffic by hop class</h2>")
    parts.append(classes_table(prof))
    parts.append("<h2>The fabric, links coloured by the bytes they carried</h2>")
    parts.append(fabric_svg(prof))
    parts.append(f"<h2>Bytes sent per {by}, by hop class</h2>")
    parts.append(histogram_svg(prof, by))
    parts.append("<h2>Communication matrix (bytes)</h2>")
    parts.append(heatmap_svg(prof))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def report(profile_path, out_path, fabric_path=None, by=None):
    prof = load_profile(profile_path)
    if fabric_path:
        from .formats import load
        prof = reclassify(prof, load(fabric_path), fabric_path)
    else:
        topo = prof.get("topology")
        if topo and topo.get("file"):
            # the levels as the description gives them, when it is readable
            try:
                from .formats import load
                fab = load(topo["file"])
                fab._prepare()
                topo["levels"] = {fab.switch_name(s): fab.v[sv].level
                                  for s, sv in enumerate(fab.switches)}
                if set(topo["levels"]) != set(topo["switches"]):
                    del topo["levels"]
            except TopoError:
                pass
    page = render(prof, by)
    with open(out_path, "w", encoding="utf-8") as f:
        f.write(page)
    return prof
