#!/usr/bin/env python3
"""Fails when a file of one layer of src/ includes, directly or through other
headers, a header of a layer it may not see.

    check_layers.py SRC_DIR

Each layer sees itself and the layers listed for it below; the protocols
reach the network only through the channel layer, so neither proto nor mpi
sees net or rail. The fabric model (topo) stands beside the transports: it
sees util and boot, and mpi sees it."""
import os
import re
import sys

SEES = {
    "util": {"util"},
    "boot": {"util", "boot"},
    "topo": {"util", "boot", "topo"},
    "net": {"util", "boot", "net"},
    "rail": {"util", "boot", "net", "rail"},
    "chan": {"util", "boot", "net", "rail", "chan"},
    "proto": {"util", "boot", "chan", "proto"},
    "mpi": {"util", "boot", "topo", "proto", "mpi"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path, src):
    rel = os.path.relpath(path, src).split(os.sep)
    return rel[0] if len(rel) > 1 and rel[0] in SEES else None


def includes(path, cache):
    if path not in cache:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            text = ""
        here = os.path.dirname(path)
        cache[path] = [os.path.normpath(os.path.join(here, name)) for name in INCLUDE.findall(text)]
    return cache[path]


def main():
    src = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "src")
    cache, bad = {}, []
    for root, _, files in os.walk(src):
        for name in sorted(files):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(root, name)
            layer = layer_of(path, src)
            if layer is None:
                continue
            # every header reached from this file, with the chain that reaches it
            seen, todo = {path: [path]}, [path]
            while todo:
                cur = todo.pop()
                for inc in includes(cur, cache):
                    if inc in seen or not os.path.exists(inc):
                        continue
                    seen[inc] = seen[cur] + [inc]
                    other = layer_of(inc, src)
                    if other is not None and other not in SEES[layer]:
                        chain = " -> ".join(os.path.relpath(p, src) for p in seen[inc])
                        bad.append(f"src/{chain}: layer '{layer}' may not include '{other}'")
                        continue
                    todo.append(inc)
    for line in bad:
        print("layer check: " + line, file=sys.stderr)
    if bad:
        print(f"layer check: {len(bad)} include(s) across the layering "
              "(util < boot < net < rail < chan < proto < mpi; topo beside net, seen by mpi; "
              "proto and mpi see neither net nor rail)",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
