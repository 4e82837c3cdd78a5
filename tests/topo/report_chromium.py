#!/usr/bin/env python3
"""The pages `pxtopo report` wrote (profile_test.py, in OUTDIR) loaded in a
real headless Chromium: after the load, the DOM must hold the fabric's
drawing (a line per link, a box per switch and host), the histogram's bars
and the matrix's cells, each figure laid out by the browser at a size it
gives (the page's script records its size and place once loaded), and a
screenshot of the page must show the figures: not blank, and at the place
the browser gave each matrix cell, histogram segment and the busiest
link, that shape's colour.

Chromium is Debian's `chromium` (scripts/install-deps.sh installs it). When
it is missing the test is skipped (exit 77), saying so, unless
PX_TEST_REQUIRE_CHROMIUM=1.
    report_chromium.py OUTDIR
"""
import html.parser
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profile_test import check, failures  # noqa: E402

outdir = os.path.abspath(sys.argv[1])


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def browse(exe, page, *args):
    with tempfile.TemporaryDirectory() as profile:
        cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               "--no-first-run", "--disable-extensions", f"--user-data-dir={profile}",
               *args, "file://" + page]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                              cwd=outdir)


def png_pixels(path):
    """(width, height, rows of (r, g, b)) of an 8-bit RGB or RGBA PNG."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            if depth != 8 or ctype not in (2, 6):
                raise ValueError(f"PNG depth {depth} colour type {ctype}")
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(h):
        ft, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if ft == 1:
                line[x] = (line[x] + a) & 255
            elif ft == 2:
                line[x] = (line[x] + b) & 255
            elif ft == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif ft == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, bpp)])
        prev = line
    return w, h, rows


def elements(dom, tag, cls):
    return re.findall(rf'<{tag}\b[^>]*\bclass="{cls}"[^>]*>', dom)


class Figures(html.parser.HTMLParser):
    """The figures of a DOM and the shapes in each: [(svg attrs, [(tag, attrs)])]."""

    def __init__(self):
        super().__init__()
        self.figs = []
        self.depth = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg" and "figure" in a.get("class", ""):
            self.figs.append((a, []))
        elif self.figs and tag in ("rect", "line"):
            self.figs[-1][1].append((tag, a))


LINK_SLACK = 12  # pixels around a link's point searched for its colour


def hex_rgb(h):
    return tuple(int(h[i:i + 2], 16) for i in (1, 3, 5))


def samples(dom):
    """Points of the page and the colour each must have: inside every
    matrix cell with traffic, every histogram segment at least 6 pixels
    tall, and along the busiest link (away from its label and from the
    middle, where links cross): (what, x, y, (r, g, b))."""
    p = Figures()
    p.feed(dom)
    out = []
    for svg, shapes in p.figs:
        at = svg.get("data-at")
        if not at:
            continue
        left, top = (int(v) for v in at.split(","))
        fig = svg.get("id")
        links = []
        for tag, a in shapes:
            cls = a.get("class")
            if cls == "cell" and a.get("data-bytes", "0") != "0":
                out.append((f"{fig} cell {a['data-src']}->{a['data-dst']} ({a['data-bytes']} bytes)",
                            left + float(a["x"]) + 3, top + float(a["y"]) + 3, hex_rgb(a["fill"])))
            elif cls == "bar" and float(a["height"]) >= 6:
                out.append((f"{fig} bar {a.get('data-rank')} {a['data-class']}",
                            left + float(a["x"]) + float(a["width"]) / 2,
                            top + float(a["y"]) + float(a["height"]) / 2, hex_rgb(a["fill"])))
            elif cls == "link":
                links.append(a)
        if links:
            a = max(links, key=lambda a: max(int(v) for v in a["data-bytes"].split()))
            x1, y1, x2, y2 = (float(a[k]) for k in ("x1", "y1", "x2", "y2"))
            t = 0.62 if y1 > y2 else 0.38
            out.append((f"{fig} busiest link {a['data-a']}-{a['data-b']}",
                        left + x1 + (x2 - x1) * t, top + y1 + (y2 - y1) * t,
                        hex_rgb(a["stroke"])))
    return out


def main():
    exe = chromium()
    if not exe:
        if os.environ.get("PX_TEST_REQUIRE_CHROMIUM") == "1":
            print("FAIL: no chromium (PX_TEST_REQUIRE_CHROMIUM=1)")
            return 1
        print("SKIP: chromium is not installed (scripts/install-deps.sh installs Debian's "
              "chromium); the reports were not checked in a browser")
        return 77
    looked = 0
    pages = {"topo": True, "signal": True, "flat": False, "flat-on-fabric": True}
    for name, fabric in pages.items():
        page = os.path.join(outdir, name + ".html")
        if not check(os.path.exists(page), f"{page}: not written (profile_test.py ran first?)"):
            continue
        r = browse(exe, page, "--dump-dom", "--virtual-time-budget=2000")
        dom = r.stdout
        if not check(r.returncode == 0 and "<svg" in dom,
                     f"{name}: chromium --dump-dom exited {r.returncode}: {r.stderr[-2000:]}"):
            continue
        # the page's script ran after the load, and the browser laid out
        # each figure
        m = re.search(r'<body[^>]*data-figures="(\d+)"', dom)
        check(m and int(m.group(1)) == (3 if fabric else 2),
              f"{name}: figures counted after load: {m and m.group(1)}")
        for fig in ("fabric", "histogram", "heatmap") if fabric else ("histogram", "heatmap"):
            m = re.search(rf'<svg\b[^>]*\bid="{fig}"[^>]*>', dom)
            size = m and re.search(r'data-rendered="(\d+)x(\d+)"', m.group(0))
            check(size and int(size.group(1)) > 100 and int(size.group(2)) > 100,
                  f"{name}: svg#{fig} not laid out ({m and m.group(0)[:200]})")
        cells = elements(dom, "rect", "cell")
        ranks = int(re.search(r"<td>ranks</td><td>(\d+)</td>", dom).group(1))
        check(len(cells) == ranks * ranks, f"{name}: {len(cells)} cells for {ranks} ranks")
        check(len(elements(dom, "rect", "bar")) > 0, f"{name}: no bars")
        if fabric:
            check(len(elements(dom, "line", "link")) == 8, f"{name}: links drawn")
            check(len(elements(dom, "g", "switch")) == 4 and len(elements(dom, "g", "host")) == 4,
                  f"{name}: switches and hosts drawn")
            check(len(elements(dom, "text", "link-label")) > 0, f"{name}: link labels")
        else:
            check('id="fabric-none"' in dom, f"{name}: the note that there is no fabric")

        png = os.path.join(outdir, name + ".png")
        if os.path.exists(png):
            os.unlink(png)
        r = browse(exe, page, f"--screenshot={png}", "--window-size=1000,2600",
                   "--force-device-scale-factor=1")
        if not check(r.returncode == 0 and os.path.exists(png),
                     f"{name}: chromium --screenshot exited {r.returncode}: {r.stderr[-2000:]}"):
            continue
        w, h, rows = png_pixels(png)
        colours = {}
        for row in rows[::2]:
            for px in row[::2]:
                colours[px] = colours.get(px, 0) + 1
        white = colours.get((255, 255, 255), 0)
        total = sum(colours.values())
        check(len(colours) > 50 and white < 0.97 * total,
              f"{name}: screenshot {w}x{h} looks blank ({len(colours)} colours, "
              f"{100 * white / total:.1f}% white)")
        # each shape where the browser said it put it, in its colour
        points = samples(dom)
        check(len(points) >= (3 if fabric else 2), f"{name}: {len(points)} points to look at")
        kinds = {p[0].split()[0] for p in points}
        check(kinds >= ({"fabric", "histogram", "heatmap"} if fabric else
                        {"histogram", "heatmap"}), f"{name}: points in {kinds}")
        seen = {}
        looked += len(points)
        for what, x, y, want in points:
            xi, yi = int(round(x)), int(round(y))
            got = rows[yi][xi] if 0 <= yi < h and 0 <= xi < w else None
            if got and "busiest link" in what:
                # a slanted line a few pixels wide: the browser's rounding
                # of its ends may put it some pixels off the exact point;
                # the nearest pixel in its colour within LINK_SLACK
                near = [(abs(dx) + abs(dy), rows[yi + dy][xi + dx])
                        for dy in range(-LINK_SLACK, LINK_SLACK + 1)
                        for dx in range(-LINK_SLACK, LINK_SLACK + 1)
                        if 0 <= yi + dy < h and 0 <= xi + dx < w and
                        all(abs(a - b) <= 8 for a, b in zip(rows[yi + dy][xi + dx], want))]
                got = min(near)[1] if near else got
            seen[what] = got
            check(got and all(abs(a - b) <= 8 for a, b in zip(got, want)),
                  f"{name}: {what} at ({xi}, {yi}) is {got} on the screenshot, not {want}")
        # what the colours say: the busiest link in the top colour of the
        # load scale (dark red), and a matrix cell darker the more it carried
        busiest = [g for w, g in seen.items() if "busiest link" in w]
        check(not fabric or (busiest and busiest[0] and
                             all(abs(a - b) <= 8 for a, b in zip(busiest[0], (183, 28, 28)))),
              f"{name}: the busiest link is drawn in {busiest}, not the scale's top colour")
        cells = sorted((int(re.search(r"\((\d+) bytes\)", w).group(1)), sum(g))
                       for w, g in seen.items() if " cell " in w and g)
        check(all(a[1] >= b[1] for a, b in zip(cells, cells[1:]) if a[0] < b[0]) and
              (len(cells) < 2 or cells[0][1] > cells[-1][1]),
              f"{name}: matrix cells not darker with more bytes: {cells}")
    if failures:
        print(f"{len(failures)} checks failed")
        return 1
    print(f"PASS report_chromium: {', '.join(pages)} loaded in {exe}, {looked} shapes found "
          "in their colours on the screenshots")
    return 0


if __name__ == "__main__":
    sys.exit(main())
