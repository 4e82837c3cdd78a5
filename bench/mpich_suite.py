#!/usr/bin/env python3
"""Build and run MPICH's MPI test suite (test/mpi) against Plexus (or, for
comparison in the same conditions, against Debian's MPICH or Open MPI:
--mpi mpich|openmpi).

A conformance measurement, not a CI test: CI cannot fetch MPICH, so the user
points --mpich-src at an MPICH source tree (or just its test/mpi part), e.g.

    git --git-dir=MIRROR archive HEAD test/mpi | tar -x -C /tmp/mpich-src
    bench/mpich_suite.py --mpich-src /tmp/mpich-src --dirs attr,coll --np-max 4

Nothing from MPICH is copied into this repository: sources are compiled in
place and every artifact goes to --work (git-ignored under bench/results/).

MPICH's harness normally needs autotools; instead we write the few config
headers it includes (mpitestconf.h, mtest_mpix.h, dtpoolsconf.h) ourselves and
compile util/ and dtpools/ directly with Plexus's mpicc. Programs converted to
MPICH's multi-test style define run() and get main() from util/run_mpitests.c.
The Fortran directories (f77, f90, f08) are built with the MPI's mpifort and
the harness of their language (util/mtest_f77.f ...); the headers configure
would write from f77's *.h.in get 8-byte integer kinds, and the programs
MPICH's build generates (f77/io's from testmerge, most of f90 from f77) are
reported as not built.
Pass/fail follows MPICH's runtests: output (stdout+stderr) must contain a
"No Errors" line, no other output, and exit code 0 (see resultTest= variants).
"""
import argparse, collections, concurrent.futures as cf, datetime, json, os, re, shlex
import signal, subprocess, sys, threading, time
from dataclasses import dataclass, field, asdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# C-only directories that need neither spawn, RMA, MPI-IO, threads nor Fortran/C++
# (those are taken with --dirs: rma, io, spawn, threads, ..., f77, f90, f08).
DEFAULT_DIRS = "attr basic coll comm datatype errhan group info init pt2pt topo".split()

# Values a configure run would find for a plain Linux C library.  USE_STRICT_MPI
# makes the tests avoid MPICH-only extensions (MPIX_*, MPICH's optional
# op/type pairs); mtest_mpix.h stays empty, as MPICH's autogen does outside MPICH.
CONF_DEFINES = """HAVE_STDLIB_H HAVE_STRING_H HAVE_UNISTD_H HAVE_STDARG_H HAVE_SYS_TIME_H
    HAVE_SYS_RESOURCE_H HAVE_GETRUSAGE HAVE_LONG_DOUBLE HAVE_LONG_LONG HAVE_LONG_LONG_INT
    HAVE__BOOL HAVE_ATOMIC HAVE_MPI_WIN_CREATE HAVE_MPI_INIT_THREAD
    HAVE_MPI_TYPE_CREATE_STRUCT HAVE_MPI2_COMBINERS USE_STRICT_MPI""".split()
MPITESTCONF = "".join(f"#define {d} 1\n" for d in CONF_DEFINES) + (
    "#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX\n#define POINTERINT_t long\n"
    "#define F77_NAME_LOWER_USCORE 1\n")  # gfortran's linker names, for the C parts
# dtpools_internal.h includes "../dtpoolsconf.h": it is found as
# <work>/dtpools/include/../dtpoolsconf.h through -I<work>/dtpools/include.
DTPOOLSCONF = "#define HAVE_STDLIB_H 1\n#define HAVE_STRING_H 1\n#define HAVE_STRDUP 1\n"

HARNESS = ["util/mtest.c", "util/mtest_common.c", "util/mtest_single.c", "util/dtypes.c"]
# The Fortran directories (f77: mpif.h, f90: use mpi, f08: use mpi_f08): each
# links its own harness, built with the MPI's Fortran wrapper.
FORTRAN = {"f77": ("util/mtest_f77.f", ".f"), "f90": ("util/mtest_f90.f90", ".f90"),
           "f08": ("util/mtest_f08.f90", ".f90")}
FORTRAN_HARNESS = {}  # language -> built library
SOURCE_EXTS = (".c", ".f", ".f90", ".F90")
# Directories a configure run would choose in the testlists, and the Fortran
# integer kinds it would write into the f77 headers (*.h.in).
TESTLIST_DIRS = {"@rmadir@": "rma", "@iodir@": "io", "@spawndir@": "spawn",
                 "@f77profile@": "profile", "@f90profile@": "profile"}
F77_SUBST = {"@F77_MPI_ADDRESS@": "integer*8", "@F77_MPI_OFFSET@": "integer*8"}
# the threads/ programs link the harness's thread functions (POSIX threads) instead
HARNESS_THREAD = [s.replace("mtest_single", "mtest_thread") for s in HARNESS]
MTEST_THREAD = []  # the threaded harness library, once built


@dataclass
class Test:
    dir: str                       # relative to test/mpi, e.g. "coll"
    prog: str
    np: int
    line: str                      # testlist line, identifies the entry
    args: list = field(default_factory=list)
    env: dict = field(default_factory=dict)
    result_test: str = "TestNormal"
    timeout: int = 60
    status: str = "pending"        # passed failed timeout not_built skipped
    reason: str = ""
    seconds: float = 0.0
    output_tail: str = ""


def parse_makefile_am(path):
    """Per-program SOURCES and -D flags: a few programs are built from another
    program's source with different macros (e.g. irecv_any from recv_any.c)."""
    info = {}
    if not path.exists():
        return info
    text = path.read_text(errors="replace").replace("\\\n", " ")
    for m in re.finditer(r"^(\w+?)_(SOURCES|CPPFLAGS)\s*=(.*)$", text, re.M):
        prog, kind, val = m.group(1), m.group(2), m.group(3).split()
        prog = prog.removeprefix("nodist_")     # generated by MPICH's build: not found
        entry = info.setdefault(prog, {"sources": None, "defines": []})
        if kind == "SOURCES":
            entry["sources"] = [v for v in val if v.endswith(SOURCE_EXTS)]
        else:
            entry["defines"] = [v for v in val if v.startswith("-D")]
    return info


def dtp_testlists(root, types):
    """The testlist.dtp entries MPICH's configure writes (maint/gentests_dtp.sh)
    from maint/dtp-test-config.txt: each program of DTPools' generated
    datatypes once per basic type and count, with the same seeds and sizes,
    keyed by directory."""
    cfg = root / "maint/dtp-test-config.txt"
    out = collections.defaultdict(list)
    if not cfg.exists():
        return out
    seed = 1
    for line in cfg.read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        f = (line.split(":") + [""] * 8)[:8]
        path, args, counts, passthru, procs, mintest, maxtest, _gacc = f
        maxtest = int(maxtest or mintest)
        mintest = int(mintest)
        d, _, name = path.rpartition("/")
        extra = "".join(f" arg={a}" for a in args.split())
        for typ in types:
            testsize = count = 0
            for sendcount in map(int, counts.split()):
                if testsize == 0:
                    testsize, count = maxtest, sendcount
                else:  # shell arithmetic: count stays the first count
                    testsize = min(max(testsize * count // sendcount, mintest), maxtest)
                if d in ("pt2pt", "part"):
                    for recvcount in (sendcount, 2 * sendcount):
                        out[d].append(f"{name} {procs} arg=-type={typ} arg=-sendcnt={sendcount}"
                                      f" arg=-recvcnt={recvcount} arg=-seed={seed}"
                                      f" arg=-testsize={testsize}{extra} {passthru}")
                        seed += 1
                else:
                    out[d].append(f"{name} {procs} arg=-type={typ} arg=-count={sendcount}"
                                  f" arg=-seed={seed} arg=-testsize={testsize}{extra} {passthru}")
                    seed += 1
    return out


def load_testlist(root, d, opts, mpi_version, mem_gb, out):
    """Parse <d>/testlist[.in] like runtests' LoadTests, recursing into subdirs;
    with --dtp, then the directory's testlist.dtp entries."""
    lst = next((root / d / n for n in ("testlist", "testlist.in")
                if (root / d / n).exists()), None)
    if lst is None:
        print(f"note: {d} has no testlist, skipped", file=sys.stderr)
        return
    lines = lst.read_text(errors="replace").splitlines()
    if opts.dtp:
        lines += opts.dtp_lists.get(d, [])
    for raw in lines:
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith("!"):
            continue
        words = line.split()
        words[0] = TESTLIST_DIRS.get(words[0], words[0])
        if re.search(r"@\w+@", words[0]):      # configure-chosen subdirectory
            continue
        if (root / d / words[0]).is_dir():
            load_testlist(root, f"{d}/{words[0]}", opts, mpi_version, mem_gb, out)
            continue
        if len(words) == 1 and d in FORTRAN and not (root / d / f"{words[0]}.f90").exists():
            continue                            # a directory MPICH's build makes from f77
        sub, _, prog = words[0].rpartition("/")
        t = Test(dir=f"{d}/{sub}" if sub else d, prog=prog, line=line,
                 np=int(words[1]) if len(words) > 1 and words[1].isdigit() else 1,
                 timeout=opts.timeout)
        keys = {}
        for kv in words[2:]:
            k, _, v = kv.partition("=")
            if k == "arg":
                t.args.append(v)
            elif k == "env":
                name, _, val = v.partition("=")
                t.env[name] = val
            else:
                keys[k] = v
        if "timeLimit" in keys and keys["timeLimit"].isdigit():
            t.timeout = int(keys["timeLimit"])
        t.result_test = keys.get("resultTest", "TestNormal")
        # Same skip rules as runtests (strict mode, since USE_STRICT_MPI is set).
        skip = None
        if "@" in line:
            skip = "unsubstituted @VAR@ in testlist line"
        elif t.np > opts.np_max:
            skip = f"np {t.np} > --np-max {opts.np_max}"
        elif keys.get("strict", "").lower() == "false" and not opts.non_strict:
            skip = "strict=false (uses MPICH extensions)"
        elif keys.get("xfail") and not opts.run_xfail:
            skip = f"xfail in MPICH: {keys['xfail']}"
        elif "hasgpu" in keys:
            skip = "needs a GPU"
        elif "mpiexecarg" in keys:
            skip = "needs MPICH mpiexec arguments"
        elif "mpiversion" in keys and float(keys["mpiversion"]) > mpi_version:
            skip = f"needs MPI {keys['mpiversion']}, library is {mpi_version}"
        elif float(keys.get("mem", 0) or 0) > mem_gb:
            skip = f"needs {keys['mem']} GB memory"
        if skip:
            t.status, t.reason = "skipped", skip
        out.append(t)


def sh(cmd, cwd=None):
    p = subprocess.run(cmd, cwd=cwd, text=True, errors="replace",
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return p.returncode, p.stdout


def mpi_version(mpicc):
    rc, out = sh(["sh", "-c", f"echo '#include <mpi.h>' | {shlex.quote(str(mpicc))} -E -dM -x c -"])
    v = dict(re.findall(r"#define (MPI_(?:SUB)?VERSION) (\d+)", out))
    return float(f"{v.get('MPI_VERSION', 3)}.{v.get('MPI_SUBVERSION', 0)}")


def compiles(mpicc, body):
    """configure's AC_COMPILE_IFELSE: does a program with body in main build?"""
    src = f"#include <mpi.h>\nint main(void) {{ {body} return 0; }}\n"
    rc, _ = sh(["sh", "-c", f"{shlex.quote(str(mpicc))} -x c -c - -o /dev/null"
                f" <<'EOF'\n{src}EOF"])
    return rc == 0


def build_support(opts, root, work):
    """Config headers, libmtest.a and (if it compiles) libdtpools.a."""
    for d in ("include", "dtpools/include"):
        (work / d).mkdir(parents=True, exist_ok=True)
    conf = MPITESTCONF
    # the probe MPICH's configure runs (MPI_INTEGER16 may be missing in C)
    if compiles(opts.mpicc, "MPI_Datatype t = MPI_INTEGER16; (void)t;"):
        conf += "#define HAVE_MPI_INTEGER16 1\n"
    (work / "include/mpitestconf.h").write_text(conf)
    (work / "include/mtest_mpix.h").write_text("/* empty: not MPICH */\n")
    (work / "dtpools/dtpoolsconf.h").write_text(DTPOOLSCONF)
    cflags = [f"-I{work}/include", f"-I{root}/include",
              f"-I{work}/dtpools/include", f"-I{root}/dtpools/include", "-O1", "-g"]

    def archive(name, sources, objdir):
        objdir.mkdir(exist_ok=True)
        objs = []
        for src in sources:
            obj = objdir / (Path(src).stem + ".o")
            rc, log = sh([str(opts.mpicc), "-c", *cflags, str(root / src), "-o", str(obj)])
            if rc:
                return None, f"{src}: " + first_errors(log)
            objs.append(str(obj))
        lib = work / name
        lib.unlink(missing_ok=True)
        sh(["ar", "rcs", str(lib), *objs])
        return lib, ""

    mtest, err = archive("libmtest.a", HARNESS, work / "obj-util")
    if mtest is None:
        sys.exit(f"cannot build MPICH's test harness: {err}")
    mtest_thread, err = archive("libmtest_thread.a", HARNESS_THREAD, work / "obj-util-thread")
    if mtest_thread is None:
        print(f"warning: the threaded harness was not built ({err}); threads/ tests will not link")
    else:
        MTEST_THREAD.append(str(mtest_thread))
    main_obj = work / "obj-util/run_mpitests.o"
    rc, log = sh([str(opts.mpicc), "-c", *cflags, str(root / "util/run_mpitests.c"),
                  "-o", str(main_obj)])
    if rc:
        sys.exit(f"cannot build util/run_mpitests.c: {first_errors(log)}")
    for lang, (src, _) in FORTRAN.items():
        if lang in opts.fortran_langs:
            obj = work / "obj-util" / (Path(src).stem + ".o")
            rc, log = sh([str(opts.mpifort), "-c", "-w", *opts.fflags(lang), str(root / src),
                          "-o", str(obj)], cwd=work / "obj-util")
            if rc:
                print(f"warning: {src} not built ({first_errors(log)}); {lang} tests will not link")
                continue
            lib = work / f"libmtest_{lang}.a"
            lib.unlink(missing_ok=True)
            sh(["ar", "rcs", str(lib), str(obj)])
            FORTRAN_HARNESS[lang] = str(lib)
    dtp_src = sorted(str(p.relative_to(root)) for p in (root / "dtpools/src").glob("*.c"))
    dtpools, dtp_err = (archive("libdtpools.a", dtp_src, work / "obj-dtpools") if dtp_src
                        else (None, "no dtpools/src in the MPICH tree"))
    if dtpools is None:
        print(f"warning: dtpools not built ({dtp_err}); tests using it will not build")
    return cflags, [str(main_obj), str(mtest)] + ([str(dtpools)] if dtpools else []), dtp_err


def first_errors(log, n=3):
    """The lines that explain a failed build: what is missing, or the first errors."""
    q, e = "[`'\u2018]", "['\u2019]"        # gcc/ld quote in ASCII or UTF-8 style
    undef = sorted(set(re.findall(rf"undefined reference to {q}(\w+){e}", log)))
    implicit = sorted(set(re.findall(rf"implicit declaration of function {q}(\w+){e}", log)))
    undecl = sorted(set(re.findall(rf"{q}(\w+){e} undeclared", log)))
    groups = [("not in mpi.h nor libmpi", [n for n in undef if n in implicit]),
              ("declared but not in libmpi", [n for n in undef if n not in implicit]),
              ("not in mpi.h", [n for n in implicit if n not in undef] + undecl)]
    parts = [f"{what}: " + " ".join(names[:8]) + (" ..." if len(names) > 8 else "")
             for what, names in groups if names]
    if not parts:
        errs = [l.strip() for l in log.splitlines() if "error" in l] or log.strip().splitlines()
        parts = [l[:160] for l in errs[:n]]
    return "; ".join(parts)


def build_program(opts, root, work, makeinfo, cflags, libs, dtp_err, t):
    """Compile one program once, however many testlist lines use it."""
    info = makeinfo.get(t.dir, {}).get(t.prog, {})
    lang = t.dir.split("/")[0] if t.dir.split("/")[0] in FORTRAN else None
    default = FORTRAN[lang][1] if lang else ".c"
    sources = [root / t.dir / s for s in (info.get("sources") or [t.prog + default])]
    exe = work / t.dir / t.prog
    exe.parent.mkdir(parents=True, exist_ok=True)
    if not all(s.exists() for s in sources):
        return False, "source not found: " + " ".join(s.name for s in sources if not s.exists())
    if lang:
        return build_fortran(opts, root, work, cflags, libs, t, lang, sources, exe)
    # Tests converted to MPICH's multi-test style define run() and take main()
    # from run_mpitests.o (libs[0]); most still have their own main().
    if MTEST_THREAD and (t.dir == "threads" or t.dir.startswith("threads/")):
        libs = [libs[0], MTEST_THREAD[0]] + libs[2:]
    if any(re.search(r"^\s*int\s+main\s*\(", s.read_text(errors="replace"), re.M)
           for s in sources):
        libs = libs[1:]
    cmd = [str(opts.mpicc), *cflags, *info.get("defines", []), *map(str, sources), *libs,
           "-lpthread", "-lm", "-o", str(exe)]
    rc, log = sh(cmd, cwd=exe.parent)
    (work / t.dir / f"{t.prog}.build.log").write_text(" ".join(cmd) + "\n" + log)
    if rc == 0:
        return True, ""
    reason = first_errors(log)
    if dtp_err and "DTP_" in log:
        reason = "needs dtpools (not built): " + reason
    exe.unlink(missing_ok=True)
    return False, reason


def build_fortran(opts, root, work, cflags, libs, t, lang, sources, exe):
    """A Fortran program (some with C parts), with its directory's headers
    that configure would write (*.h.in, Fortran integer kinds)."""
    if lang not in FORTRAN_HARNESS:
        return False, f"the {lang} harness was not built"
    inc = work / f"include-{lang}"  # every directory's headers: some include another's
    inc.mkdir(exist_ok=True)
    for hin in (root / lang).glob("*/*.h.in"):
        text = hin.read_text(errors="replace")
        for k, v in F77_SUBST.items():
            text = text.replace(k, v)
        (inc / hin.name[:-3]).write_text(text)
    cmd = [str(opts.mpifort), "-w", *opts.fflags(lang), f"-I{inc}", f"-I{root / t.dir}",
           *cflags, *map(str, sources), FORTRAN_HARNESS[lang], libs[1], "-lpthread", "-lm",
           "-o", str(exe)]
    rc, log = sh(cmd, cwd=exe.parent)
    (work / t.dir / f"{t.prog}.build.log").write_text(" ".join(cmd) + "\n" + log)
    if rc == 0:
        return True, ""
    exe.unlink(missing_ok=True)
    return False, first_errors(log)


class Slots:
    """Caps the ranks running at once: 2 per core keeps oversubscribed MPI jobs
    from starving each other into spurious timeouts."""
    def __init__(self, n):
        self.free, self.total, self.cv = n, n, threading.Condition()

    def take(self, n):
        n = min(n, self.total)
        with self.cv:
            self.cv.wait_for(lambda: self.free >= n)
            self.free -= n
        return n

    def give(self, n):
        with self.cv:
            self.free += n
            self.cv.notify_all()


def judge(t, rc, out):
    """runtests' TestNormal and its resultTest= variants; returns a failure
    reason, or "" for a pass."""
    found = skipped = 0
    stray, warn = [], []
    for l in out.splitlines():
        if re.fullmatch(r"\s*No [Ee]rrors\s*", l) and not found:
            found = 1
        elif re.fullmatch(r"\s*Test Skipped\s*", l):
            skipped = 1
        elif re.match(r"(MPICH: |WARNING: |(Abort.*)?application called MPI_Abort)", l):
            warn.append(l.strip())
        else:
            stray.append(l.strip())
    rt = t.result_test
    want_error_exit = rt in ("TestStatus", "TestErrFatal", "TestStatusNoErrors")
    if want_error_exit and rc == 0:
        return "exited 0 but an error exit was expected"
    if rt in ("TestStatus", "TestErrFatal"):
        return ""
    if not found and not (skipped and rt != "TestStatusNoErrors"):
        first = (stray or warn or ["(no output)"])[0]
        return f"no 'No Errors' (exit {rc}): {first[:150]}"
    bad = stray + (warn if rt == "TestNormal" else [])
    if bad:
        return f"unexpected output: {bad[0][:150]}"
    if rc and not want_error_exit:
        return f"exit code {rc} after 'No Errors'"
    return ""


def run_test(opts, work, slots, t):
    n = slots.take(t.np)
    try:
        env = dict(os.environ, **t.env)
        # Each launcher's own time limit (MPIEXEC_TIMEOUT for MPICH's, as
        # runtests sets it), so that TestErrFatal tests see it end the job.
        env["MPIEXEC_TIMEOUT"] = str(t.timeout)
        cmd = [*opts.launch, str(t.np), *opts.limit(t.timeout), f"./{t.prog}", *t.args]
        start = time.monotonic()
        # Own session so a hung launcher can be killed with all its ranks.
        p = subprocess.Popen(cmd, cwd=work / t.dir, env=env, text=True, errors="replace",
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             start_new_session=True)
        hung = False
        try:
            out, _ = p.communicate(timeout=t.timeout + 30)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, _ = p.communicate()
            rc, hung = 124, True
        t.seconds = round(time.monotonic() - start, 2)
        t.output_tail = "\n".join(out.splitlines()[-25:])
        # pxrun ends a job past --timeout with exit 124: a timeout, unless the
        # test is one that must be ended (resultTest=TestErrFatal, as
        # init/timeout with MPIEXEC_TIMEOUT under runtests).
        if hung or (rc == opts.timeout_rc and t.result_test != "TestErrFatal"):
            t.status, t.reason = "timeout", f"no result within {t.timeout}s"
        else:
            t.reason = judge(t, rc, out)
            t.status = "failed" if t.reason else "passed"
    finally:
        slots.give(n)
    mark = {"passed": ".", "failed": "F", "timeout": "T"}[t.status]
    print(f"  {mark} {t.dir}/{t.prog} np={t.np} {' '.join(t.args)} {t.seconds}s", flush=True)


COLS = ["entries", "skipped", "built", "passed", "failed", "timeout", "not_built"]


def summarize(tests):
    rows = {}
    for t in tests:
        r = rows.setdefault(t.dir, dict.fromkeys(COLS, 0))
        r["entries"] += 1
        r[t.status] += 1
        r["built"] += t.status in ("passed", "failed", "timeout")
    total = {c: sum(r[c] for r in rows.values()) for c in COLS}
    fmt = "{:<14}" + "{:>10}" * len(COLS)
    print("\n" + fmt.format("directory", *COLS))
    for d, r in rows.items():
        print(fmt.format(d, *(r[c] for c in COLS)))
    print(fmt.format("TOTAL", *(total[c] for c in COLS)))
    why = collections.Counter(re.sub(r"np \d+ > ", "np > ", t.reason) for t in tests
                              if t.status == "skipped")
    print("skipped: " + "; ".join(f"{n}x {r}" for r, n in why.most_common()))
    for status in ("failed", "timeout", "not_built"):
        bad = [t for t in tests if t.status == status]
        seen = set()
        if bad:
            progs = len({(t.dir, t.prog) for t in bad})
            print(f"\n{status} ({len(bad)} entries, {progs} programs):")
        for t in bad:
            key = (t.dir, t.prog) if status == "not_built" else id(t)
            if key not in seen:
                seen.add(key)
                what = f"{t.dir}/{t.prog}" if status == "not_built" else f"{t.dir}/{t.line}"
                print(f"  {what}: {t.reason}")
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--mpich-src", required=True, type=Path,
                    help="MPICH source tree (containing test/mpi) or test/mpi itself")
    ap.add_argument("--build-dir", type=Path, default=REPO / "build", help="Plexus build")
    ap.add_argument("--mpi", choices=["plexus", "mpich", "openmpi"], default="plexus",
                    help="the MPI to build and run the tests with")
    ap.add_argument("--work", type=Path, default=REPO / "bench/results/mpich-suite",
                    help="binaries, logs, results")
    ap.add_argument("--dirs", default=",".join(DEFAULT_DIRS), help="test/mpi subdirectories")
    ap.add_argument("--np-max", type=int, default=8, help="skip entries with more ranks")
    ap.add_argument("--timeout", type=int, default=60,
                    help="seconds per test unless its testlist sets timeLimit=")
    ap.add_argument("--jobs", type=int, default=2,
                    help="concurrent builds/tests (ranks are capped at 2 per core)")
    ap.add_argument("--json", type=Path, help="default: <work>/results-DATE.json")
    ap.add_argument("--only", help="comma-separated program names to keep")
    ap.add_argument("--run-xfail", action="store_true", help="also run xfail= entries")
    ap.add_argument("--non-strict", action="store_true", help="also run strict=false entries")
    ap.add_argument("--dtp", action="store_true",
                    help="also run the DTPools datatype entries (MPICH's testlist.dtp)")
    ap.add_argument("--dtp-types", default="MPI_INT,MPI_INT:4+MPI_DOUBLE:8",
                    help="their basic types (MPICH configure's --with-dtpools-datatypes)")
    opts = ap.parse_args()

    root = opts.mpich_src.resolve()
    root = root / "test/mpi" if (root / "test/mpi").is_dir() else root
    if not (root / "util/mtest.c").exists():
        sys.exit(f"{root}: not MPICH's test/mpi (no util/mtest.c)")
    build = opts.build_dir.resolve()
    # gfortran refuses the mpif.h style of one routine called with buffers of
    # different types unless told (MPICH's configure adds the same flag)
    opts.fflags = lambda lang: ["-fallow-argument-mismatch"] if lang != "f08" else []
    if opts.mpi == "plexus":
        opts.mpicc, pxrun = build / "bin/mpicc", build / "bin/pxrun"
        opts.mpifort = build / "bin/mpifort"
        opts.libmpi = build / "lib/libmpi.so"
        for f in (opts.mpicc, pxrun, opts.libmpi):
            if not f.exists():
                sys.exit(f"missing {f}: build Plexus first")
        opts.launch = [str(pxrun), "-n"]
        opts.limit, opts.timeout_rc = (lambda s: ["--timeout", str(s)]), 124
    else:
        opts.mpicc = Path(f"/usr/bin/mpicc.{opts.mpi}")
        opts.mpifort = Path(f"/usr/bin/mpifort.{opts.mpi}")
        opts.libmpi = None
        if opts.mpi == "mpich":  # MPIEXEC_TIMEOUT; hydra exits 255 when it ends a job
            opts.launch, opts.limit, opts.timeout_rc = ["mpiexec.mpich", "-n"], (lambda s: []), 255
        else:
            opts.launch = ["mpirun.openmpi", "--allow-run-as-root", "--oversubscribe", "-n"]
            opts.limit, opts.timeout_rc = (lambda s: ["--timeout", str(s)]), None
        if not opts.mpicc.exists():
            sys.exit(f"missing {opts.mpicc} (scripts/install-deps.sh installs it)")
        if opts.work == REPO / "bench/results/mpich-suite":
            opts.work = REPO / f"bench/results/mpich-suite-{opts.mpi}"
    work = opts.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    version = mpi_version(opts.mpicc)
    lib_mtime = opts.libmpi.stat().st_mtime if opts.libmpi else None
    mem_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30

    opts.dtp_lists = dtp_testlists(root, opts.dtp_types.split(",")) if opts.dtp else {}
    tests = []
    for d in opts.dirs.split(","):
        load_testlist(root, d.strip(), opts, version, mem_gb, tests)
    opts.fortran_langs = {t.dir.split("/")[0] for t in tests} & set(FORTRAN)
    if opts.only:
        keep = set(opts.only.split(","))
        tests = [t for t in tests if t.prog in keep]
    started = datetime.datetime.now()
    what = f"Plexus {build}" if opts.mpi == "plexus" else opts.mpi
    print(f"MPICH tests from {root}\n{what} (MPI {version}); work dir {work}")

    cflags, libs, dtp_err = build_support(opts, root, work)
    makeinfo = {d: parse_makefile_am(root / d / "Makefile.am") for d in {t.dir for t in tests}}
    to_build = {(t.dir, t.prog): t for t in tests if t.status != "skipped"}
    print(f"building {len(to_build)} programs ...", flush=True)
    with cf.ThreadPoolExecutor(max(1, opts.jobs)) as ex:
        built = dict(zip(to_build, ex.map(
            lambda t: build_program(opts, root, work, makeinfo, cflags, libs, dtp_err, t),
            to_build.values())))
    for t in tests:
        if t.status != "skipped" and not built[(t.dir, t.prog)][0]:
            t.status, t.reason = "not_built", built[(t.dir, t.prog)][1]
    runnable = [t for t in tests if t.status == "pending"]

    print(f"running {len(runnable)} tests ...", flush=True)
    slots = Slots(max(2, 2 * (os.cpu_count() or 1)))
    with cf.ThreadPoolExecutor(max(1, opts.jobs)) as ex:
        list(ex.map(lambda t: run_test(opts, work, slots, t), runnable))

    total = summarize(tests)
    # Developers rebuild while this runs; a relinked libmpi mixes two versions.
    lib_changed = bool(opts.libmpi) and (not opts.libmpi.exists()
                                         or opts.libmpi.stat().st_mtime != lib_mtime)
    if lib_changed:
        print(f"\nWARNING: {opts.libmpi} was rebuilt during the run; results are mixed")
    out = opts.json or work / f"results-{started:%Y%m%d-%H%M%S}.json"
    out.write_text(json.dumps({
        "started": started.isoformat(timespec="seconds"),
        "seconds": round((datetime.datetime.now() - started).total_seconds()),
        "mpich_test_dir": str(root), "mpi": opts.mpi,
        "build_dir": str(build), "mpi_version": version,
        "options": {k: str(v) for k, v in vars(opts).items()},
        "dtpools": "built" if not dtp_err else f"not built: {dtp_err}",
        "libmpi_rebuilt_during_run": lib_changed, "totals": total,
        "tests": [asdict(t) for t in tests]}, indent=1))
    print(f"\nresults: {out}")


if __name__ == "__main__":
    main()
