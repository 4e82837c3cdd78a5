#!/usr/bin/env python3
"""`pxinfo --params` and the MPI_T control variables list the same
parameters: the same names in the same order, the same count, each in the
category of its group, with the type its row has, the row's default as its
value (in a clean environment) and the row's description. With DOC, every
performance variable but the per-algorithm ones (coll_<collective>_<algorithm>_*)
is described there, with its class.

    mpit_params.py PXINFO MPIT_CVARS [DOC]
"""
import os
import re
import subprocess
import sys

TYPES = {"bool": "MPI_INT", "int": "MPI_INT", "size": "MPI_UNSIGNED_LONG_LONG",
         "double": "MPI_DOUBLE", "duration": "MPI_DOUBLE", "enum": "MPI_INT+enum",
         "string": "MPI_CHAR"}
AUTO = str(2**64 - 1)
UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0}


def clean_env():
    return {k: v for k, v in os.environ.items() if not k.startswith("PX_")}


def pxinfo_rows(pxinfo):
    out = subprocess.run([pxinfo, "--params"], env=clean_env(), check=True,
                         capture_output=True, text=True).stdout
    rows, group, last = [], None, None
    for line in out.splitlines():
        m = re.match(r"^\[(.+)\]$", line)
        if m:
            group = m.group(1)
            continue
        m = re.match(r"^  (PX_\w+)\s+(\w+)\s+default=(.*)$", line)
        if m:
            default = m.group(3)
            last = {"name": m.group(1), "type": m.group(2), "group": group,
                    "default": "" if default == '""' else default, "doc": None}
            rows.append(last)
        elif line.startswith("      ") and last is not None and not line.startswith("      accepts "):
            last["doc"] = line.strip()
    return rows


def mpit_rows(prog):
    p = subprocess.run([prog], env=clean_env(), capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        sys.exit(f"{prog} failed ({p.returncode}):\n{p.stderr}")
    rows = []
    for line in p.stdout.splitlines():
        name, cat, dtype, value, desc = line.split("\t")
        rows.append({"name": name, "category": cat, "type": dtype, "value": value, "desc": desc})
    return rows


def size_of(text):
    if text.lower() == "auto":
        return AUTO
    m = re.match(r"^(\d+)([kmg]?)b?$", text.lower())
    return str(int(m.group(1), 0) << {"": 0, "k": 10, "m": 20, "g": 30}[m.group(2)])


def default_matches(row, cvar):
    d, v = row["default"], cvar["value"]
    kind = row["type"]
    if kind == "bool":
        return v == ("1" if d.lower() in ("1", "yes", "true", "on") else "0")
    if kind == "int":
        return int(d, 0) == int(v)
    if kind == "size":
        return size_of(d) == v
    if kind in ("double", "duration"):
        m = re.match(r"^([-+0-9.eE]+)\s*([a-z]*)$", d)
        want = float(m.group(1)) * (UNITS[m.group(2)] if m.group(2) else 1.0)
        return abs(want - float(v)) <= 1e-12 * max(1.0, abs(want))
    if kind == "enum":
        return d.lower() == v.lower()
    return d == v


def doc_errors(prog, doc):
    """Performance variables docs/tools.md does not describe (or with another class)."""
    p = subprocess.run([prog, "--pvars"], env=clean_env(), capture_output=True, text=True,
                       timeout=60)
    if p.returncode != 0:
        return [f"{prog} --pvars failed ({p.returncode}): {p.stderr}"]
    with open(doc, encoding="utf-8") as f:
        text = f.read()
    errors, n = [], 0
    for line in p.stdout.splitlines():
        name, cls = line.split("\t")[:2]
        if name.startswith("coll_"):
            continue
        n += 1
        if not re.search(r"^\| `%s` \| %s" % (re.escape(name), cls), text, re.M):
            errors.append(f"{doc}: no row for performance variable {name} ({cls})")
    if not n:
        errors.append("no performance variables")
    return errors


def main():
    pxinfo, prog = sys.argv[1], sys.argv[2]
    rows, cvars = pxinfo_rows(pxinfo), mpit_rows(prog)
    errors = []
    if len(rows) != len(cvars) or not rows:
        errors.append(f"pxinfo --params lists {len(rows)} parameters, MPI_T {len(cvars)}")
    names_p, names_t = [r["name"] for r in rows], [c["name"] for c in cvars]
    if names_p != names_t:
        errors.append("names differ: only in pxinfo: %s; only in MPI_T: %s; or the order" %
                      (sorted(set(names_p) - set(names_t)), sorted(set(names_t) - set(names_p))))
    for row, cvar in zip(rows, cvars):
        if row["name"] != cvar["name"]:
            continue
        n = row["name"]
        if cvar["category"] != row["group"]:
            errors.append(f"{n}: category {cvar['category']!r}, group {row['group']!r}")
        if cvar["type"] != TYPES[row["type"]]:
            errors.append(f"{n}: {row['type']} shown as {cvar['type']}")
        elif not default_matches(row, cvar):
            errors.append(f"{n}: default {row['default']!r}, MPI_T reads {cvar['value']!r}")
        if not row["doc"] or not cvar["desc"].startswith(row["doc"]):
            errors.append(f"{n}: description differs from the row's")
    if len(sys.argv) > 3:
        errors += doc_errors(prog, sys.argv[3])
    for e in errors:
        print("FAIL", e)
    if errors:
        sys.exit(1)
    print(f"pxinfo --params and MPI_T agree on {len(rows)} parameters")


if __name__ == "__main__":
    main()
