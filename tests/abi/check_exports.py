#!/usr/bin/env python3
"""Checks the symbols libmpi.so exports against the MPICH ABI's list.

Every function of tests/abi/mpich4-symbols.txt must be defined and exported as
MPI_<name> and PMPI_<name>, and every data object as MPI_<name>, except those
named in the --missing file (functions not implemented yet, each listed with
the reason). A name in that file that the library does export fails the check
too, so the file always says what is really missing.

  check_exports.py --lib build/lib/libmpi.so --list tests/abi/mpich4-symbols.txt \
      [--missing tests/abi/missing.txt] [--map src/libmpi.map]

With --map, the library's own functions (px_*) must be local but for those the
linker version script names one by one: an exported one is a call through the
procedure linkage table for every caller inside the library.

With --fortran the list names Fortran routines (tests/abi/mpich4-fortran-routines.txt),
each of which the library (libmpifort.so) must export under the eight names
MPICH's does: MPI_FOO, PMPI_FOO, mpi_foo, mpi_foo_, mpi_foo__, pmpi_foo,
pmpi_foo_ and pmpi_foo__.
"""
import argparse
import subprocess
import sys


def read_list(path):
    """name -> kind ('function' or 'data'), in file order."""
    out = {}
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if line:
                out[line[0]] = line[1] if len(line) > 1 else "function"
    return out


def exported(lib):
    """Defined dynamic symbols of lib: name -> nm type letter."""
    r = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True,
                       check=True)
    syms = {}
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) == 3:
            syms[f[2]] = f[1]
    return syms


def fortran_names(name):
    u = name.upper()
    return ["MPI_" + u, "PMPI_" + u] + [p + name + s for p in ("mpi_", "pmpi_")
                                        for s in ("", "_", "__")]


def check_fortran(lib, names_file):
    syms = exported(lib)
    names = list(read_list(names_file))
    errors = []
    for name in names:
        lacks = [n for n in fortran_names(name) if syms.get(n, "") not in ("T", "W")]
        if lacks:
            errors.append("not exported: " + ", ".join(lacks))
    print(f"{len(names) - len(errors)} of {len(names)} Fortran routines of the list exported "
          "under all eight names")
    for e in errors:
        print("FAIL: " + e)
    return 1 if errors or not names else 0


def map_exports(path):
    """The px_ names the version script's global section lists one by one."""
    names, glob = set(), False
    with open(path) as f:
        text = f.read()
    for tok in text.replace(";", " ; ").split():
        if tok == "global:":
            glob = True
        elif tok == "local:":
            glob = False
        elif glob and tok.startswith("px_") and "*" not in tok:
            names.add(tok)
    return names


def check_local(syms, map_path):
    allowed = map_exports(map_path)
    extra = sorted(n for n in syms if n.startswith("px_") and n not in allowed)
    if not allowed:
        return [f"{map_path}: no px_ name in its global section"]
    print(f"{sum(1 for n in syms if n.startswith('px_'))} px_ symbols exported, "
          f"{len(allowed)} allowed by {map_path}")
    return [f"internal symbol exported: {n}" for n in extra[:20]] + (
        [f"... and {len(extra) - 20} more"] if len(extra) > 20 else [])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", required=True)
    ap.add_argument("--list", required=True)
    ap.add_argument("--missing")
    ap.add_argument("--fortran", action="store_true")
    ap.add_argument("--map")
    a = ap.parse_args()
    if a.fortran:
        return check_fortran(a.lib, a.list)
    want = read_list(a.list)
    missing_ok = {n: k for n, k in (read_list(a.missing) if a.missing else {}).items()
                  if k != "constant"}  # constants: check_header.py's
    syms = exported(a.lib)
    errors = []
    for name in missing_ok:
        if name not in want:
            errors.append(f"{a.missing}: {name} is not in {a.list}")
    absent = []
    for name, kind in want.items():
        need = [name] if kind == "data" else [name, "P" + name]
        if kind == "function":
            lacks = [n for n in need if syms.get(n, "") not in ("T", "W")]
        else:
            lacks = [n for n in need if syms.get(n, "") not in ("B", "D", "V")]
        if lacks and name not in missing_ok:
            errors.append("not exported: " + ", ".join(lacks))
        elif not lacks and name in missing_ok:
            errors.append(f"{name} is exported now: remove it from {a.missing}")
        if lacks:
            absent.append(name)
    if a.map:
        errors += check_local(syms, a.map)
    nfun = sum(1 for k in want.values() if k == "function")
    print(f"{len(want) - len(absent)} of {len(want)} symbols of the list exported "
          f"({nfun} functions, each also as PMPI_); {len(absent)} declared missing")
    for e in errors:
        print("FAIL: " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
