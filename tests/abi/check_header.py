#!/usr/bin/env python3
"""Checks Plexus's mpi.h against MPICH's: the same constants with the same
values, and the same prototypes.

Constants: every object-like MPI_ macro of MPICH's mpi.h is printed, as an
integer, by one small program built twice, once with each header; the two
outputs must be equal. Left out are the constants whose value is an address
(predefined callback functions, the objects of MPI_F_STATUS_IGNORE and
MPI_UNWEIGHTED kinds, which the ABI fixes by symbol name, checked by
abi.exports), and MPICH's own format strings. Prototypes: every declaration
of MPICH's mpi_proto.h is declared again after Plexus's mpi.h; a parameter or
return type that differs is a compile error ("conflicting types"). A function
Plexus does not declare at all is reported too.

Exits 77 (skipped) when MPICH's header is not installed (libmpich-dev).

Names in the --missing file (tests/abi/missing.txt: functions not implemented
yet, constants marked 'constant' whose value still differs, each with the
reason) are not reported; a constant named there whose value agrees fails
the check, so the file always says what really differs.

  check_header.py --plexus-include include [--mpich-include DIR] [--missing FILE] [--cc cc]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

MPICH_DIRS = ["/usr/include/x86_64-linux-gnu/mpich", "/usr/include/aarch64-linux-gnu/mpich",
              "/usr/include/mpich"]

# MPICH's printf formats for MPI_Aint and MPI_Count: compile-time helpers of
# its own, not part of the ABI
IGNORE = re.compile(r"^MPI_(AINT|COUNT|OFFSET)_FMT_")
# values that are addresses, different in every build
ADDRESS = re.compile(r"_FN$|_FN_NULL(_C)?$|^MPI_F(08)?_STATUS(ES)?_IGNORE$|"
                     r"^MPI_UNWEIGHTED$|^MPI_WEIGHTS_EMPTY$|^MPI_T_PVAR_ALL_HANDLES$")


def constants(header):
    names = []
    with open(header) as f:
        for line in f:
            m = re.match(r"\s*#\s*define\s+(MPI_[A-Za-z0-9_]+)(\(?)\s*(.*)", line)
            if not m or m.group(2) == "(" or not m.group(3).strip():
                continue  # function-like, or a flag with no value
            name = m.group(1)
            if IGNORE.match(name) or ADDRESS.search(name) or name in names:
                continue
            names.append(name)
    return names


def prototypes(proto_h):
    text = open(proto_h).read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    out = []
    for m in re.finditer(r"\b((?:int|double|MPI_\w+)\s+\*?\s*(P?MPI_\w+)\s*\([^;{]*\))[^;{]*;", text):
        decl, name = m.group(1), m.group(2)
        out.append((name, " ".join(decl.split())))
    return out


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plexus-include", required=True)
    ap.add_argument("--mpich-include")
    ap.add_argument("--missing")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    a = ap.parse_args()
    mdir = a.mpich_include or next(
        (d for d in MPICH_DIRS if os.path.exists(os.path.join(d, "mpi.h"))), None)
    if not mdir or not os.path.exists(os.path.join(mdir, "mpi.h")):
        print("SKIP: MPICH's mpi.h not found (install libmpich-dev)")
        return 77
    names = constants(os.path.join(mdir, "mpi.h"))
    protos = prototypes(os.path.join(mdir, "mpi_proto.h"))
    known = {}
    if a.missing:
        with open(a.missing) as f:
            for line in f:
                w = line.split("#", 1)[0].split()
                if w:
                    known[w[0]] = w[1] if len(w) > 1 else "function"
    errors = []

    def differs(name, what):
        base = name[1:] if name.startswith("PMPI_") else name
        if base not in known:
            errors.append(what)

    def agrees(name):
        if name in known:
            errors.append(f"{name} agrees with MPICH now: remove it from {a.missing}")

    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "consts.c")
        with open(src, "w") as f:
            f.write("#include <mpi.h>\n#include <stdio.h>\n#include <stdint.h>\nint main(void)\n{\n")
            for n in names:
                f.write(f"#ifdef {n}\n    printf(\"{n} %lld\\n\", "
                        f"(long long)(intptr_t)({n}));\n#else\n"
                        f"    printf(\"{n} not defined\\n\");\n#endif\n")
            f.write("    return 0;\n}\n")
        outs = {}
        for who, inc in (("mpich", mdir), ("plexus", a.plexus_include)):
            exe = os.path.join(tmp, "consts_" + who)
            r = run([a.cc, "-w", "-I", inc, src, "-o", exe])
            if r.returncode:
                print(r.stderr[-3000:])
                print(f"FAIL: the constants program does not build with {who}'s mpi.h")
                return 1
            outs[who] = dict(line.split(" ", 1) for line in run([exe]).stdout.splitlines())
        for n in names:
            if outs["mpich"][n] != outs["plexus"][n]:
                differs(n, f"{n}: MPICH {outs['mpich'][n]}, Plexus {outs['plexus'][n]}")
            else:
                agrees(n)
        # prototypes: all of MPICH's, declared again after Plexus's header
        psrc = os.path.join(tmp, "protos.c")
        with open(psrc, "w") as f:
            f.write("#include <mpi.h>\n")
            for _, decl in protos:
                decl = re.sub(r"MPICH_\w+\s*(\([^()]*\))?", "", decl)
                f.write(decl + ";\n")
        r = run([a.cc, "-fsyntax-only", "-I", a.plexus_include, psrc])
        for line in r.stderr.splitlines():
            if "error:" in line:
                errors.append("prototype: " + line.split("error:", 1)[1].strip())
        # functions MPICH declares that Plexus's header does not
        hdr = open(os.path.join(a.plexus_include, "mpi.h")).read()
        for name, _ in protos:
            if not re.search(r"\b%s\s*\(|#\s*define\s+%s\b" % (name, name), hdr):
                differs(name, f"{name}: not declared in Plexus's mpi.h")
    print(f"{len(names)} constants and {len(protos)} prototypes of MPICH's mpi.h compared")
    for e in errors:
        print("FAIL: " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
