#!/usr/bin/env python3
"""Generate the Fortran (mpif.h / `use mpi`) bindings of Plexus from include/mpi.h.

Two outputs, both produced at build time:

  consts   C program that prints mpif.h. Every integer constant of mpi.h is
           printed by the C compiler's own evaluation of the macro, so the
           Fortran values cannot drift from the C header.
  wrappers C file with one Fortran-callable wrapper per C routine of mpi.h
           whose PMPI_ symbol the built libmpi exports (read with nm), so a
           routine that is declared but not yet implemented gets no wrapper
           and the link never breaks.

Wrappers follow MPICH's Fortran ABI: handles are the C int values, every
argument is passed by reference, the error code comes back in a trailing
INTEGER, strings carry hidden lengths (size_t, appended by gfortran), and
the symbol is pmpi_foo_ with weak aliases MPI_FOO PMPI_FOO mpi_foo mpi_foo_
mpi_foo__ pmpi_foo pmpi_foo__.

How an argument is translated is decided by its C type (translate());
routines needing more than that are in SPECIAL; SKIP lists routines with no
Fortran binding here; routines with argument types translate() does not
know are left out too. File handles are the integers of MPI_File_c2f.
`list` writes which routines got a binding and why the others did not.
"""
import argparse
import re
import subprocess
import sys

# Routines with no Fortran wrapper (reason in the comment).
SKIP = {
    # large-count conversion callbacks: mpi_f08 only
    "MPI_Register_datarep_c",
    # pointer-returning helpers with no Fortran meaning
    "MPI_Comm_c2f", "MPI_Comm_f2c",
}

# Output strings: C name of the char* argument -> Fortran gets it blank padded.
OUT_STRING_ARGS = {"name", "string", "version", "value", "key", "port_name",
                   "processor_name", "comm_name", "type_name", "win_name", "datarep"}

# Routines with a hand-written body: name -> (Fortran parameters, body,
# C routines it needs from libmpi).
SPECIAL = {}


def special(name, params, body, needs=None):
    SPECIAL[name] = (params, body, needs or [name])


special("MPI_Init", "MPI_Fint *ierr",
        "    *ierr = MPI_Init(NULL, NULL);")
special("MPI_Init_thread", "MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr",
        "    *ierr = MPI_Init_thread(NULL, NULL, *required, provided);")
special("MPI_Pcontrol", "MPI_Fint *level, MPI_Fint *ierr",
        "    *ierr = MPI_Pcontrol(*level);")
special("MPI_Info_create_env", "MPI_Fint *info, MPI_Fint *ierr",
        "    *ierr = MPI_Info_create_env(0, NULL, info);")
# In/out string lengths: C's count the terminating NUL (px_fortran.c).
special("MPI_Info_get_string",
        "MPI_Fint *info, char *key, MPI_Fint *buflen, char *value, MPI_Fint *flag, MPI_Fint *ierr,"
        " size_t l_key, size_t l_value",
        "    *ierr = px_f_info_get_string(*info, key, l_key, buflen, value, l_value, flag);")
special("MPI_Session_get_nth_pset",
        "MPI_Fint *session, MPI_Fint *info, MPI_Fint *n, MPI_Fint *pset_len, char *pset_name,"
        " MPI_Fint *ierr, size_t l_pset_name",
        "    *ierr = px_f_session_get_nth_pset(*session, *info, *n, pset_len, pset_name,"
        " l_pset_name);")
# Arrays of blank-padded strings; MPI_ARGV_NULL, MPI_ARGVS_NULL and
# MPI_ERRCODES_IGNORE are the common blocks' objects.
special("MPI_Comm_spawn",
        "char *command, char *argv, MPI_Fint *maxprocs, MPI_Fint *info, MPI_Fint *root,"
        " MPI_Fint *comm, MPI_Fint *intercomm, MPI_Fint *errcodes, MPI_Fint *ierr,"
        " size_t l_command, size_t l_argv",
        "    *ierr = px_f_comm_spawn(command, l_command, argv == mpiprivc_.argv_null ? NULL : argv,\n"
        "                            l_argv, *maxprocs, *info, *root, *comm, intercomm,\n"
        "                            errcodes == mpipriv2_.errcodes_ignore ? NULL : errcodes);")
special("MPI_Comm_spawn_multiple",
        "MPI_Fint *count, char *commands, char *argvs, MPI_Fint *maxprocs, MPI_Fint *infos,"
        " MPI_Fint *root, MPI_Fint *comm, MPI_Fint *intercomm, MPI_Fint *errcodes, MPI_Fint *ierr,"
        " size_t l_commands, size_t l_argvs",
        "    *ierr = px_f_comm_spawn_multiple(\n"
        "        *count, commands, l_commands, argvs == &mpiprivc_.argvs_null[0][0] ? NULL : argvs,\n"
        "        l_argvs, maxprocs, infos, *root, *comm, intercomm,\n"
        "        errcodes == mpipriv2_.errcodes_ignore ? NULL : errcodes);")
# Generalized requests: trampolines with the Fortran callbacks (px_fortran.c).
special("MPI_Grequest_start",
        "px_f_greq_query_fn *query, px_f_greq_free_fn *free_fn, px_f_greq_cancel_fn *cancel,"
        " MPI_Aint *extra, MPI_Fint *request, MPI_Fint *ierr",
        "    *ierr = px_f_grequest_start(query, free_fn, cancel, extra, request);")
special("MPI_Register_datarep",
        "char *datarep, px_f_conv_fn *read_fn, px_f_conv_fn *write_fn, px_f_extent_fn *extent_fn,"
        " MPI_Aint *extra, MPI_Fint *ierr, size_t l_datarep",
        "    *ierr = px_f_register_datarep(datarep, l_datarep, read_fn, write_fn, extent_fn,"
        " *extra);")
# Fortran indices are 1-based.
special("MPI_Waitany",
        "MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *index, MPI_Fint *status, MPI_Fint *ierr",
        "    *ierr = MPI_Waitany(*count, reqs, index, px_f_status(status));\n"
        "    if (*ierr == MPI_SUCCESS && *index != MPI_UNDEFINED)\n"
        "        (*index)++;")
special("MPI_Testany",
        "MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *index, MPI_Fint *flag, MPI_Fint *status,"
        " MPI_Fint *ierr",
        "    *ierr = MPI_Testany(*count, reqs, index, flag, px_f_status(status));\n"
        "    if (*ierr == MPI_SUCCESS && *index != MPI_UNDEFINED)\n"
        "        (*index)++;")
for _n in ("Waitsome", "Testsome"):
    special("MPI_" + _n,
            "MPI_Fint *incount, MPI_Fint *reqs, MPI_Fint *outcount, MPI_Fint *indices,"
            " MPI_Fint *statuses, MPI_Fint *ierr",
            "    *ierr = MPI_%s(*incount, reqs, outcount, indices, px_f_status(statuses));\n"
            "    if (*ierr == MPI_SUCCESS && *outcount != MPI_UNDEFINED)\n"
            "        for (int i = 0; i < *outcount; i++)\n"
            "            indices[i]++;" % _n)
# The C routine stores the buffer address through its argument.
special("MPI_Buffer_detach", "void *buffer_addr, MPI_Fint *size, MPI_Fint *ierr",
        "    void *p = NULL;\n"
        "    (void)buffer_addr;\n"
        "    *ierr = MPI_Buffer_detach(&p, size);")
# Attribute values are INTEGER(KIND=MPI_ADDRESS_KIND) values in Fortran; the
# predefined ones are stored by the library as pointers to their value.
for _obj, _ty in (("Comm", "comm"), ("Type", "type"), ("Win", "win")):
    special("MPI_%s_get_attr" % _obj,
            "MPI_Fint *obj, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag, MPI_Fint *ierr",
            "    void *v = NULL;\n"
            "    int f = 0;\n"
            "    int kv = px_f_keyval(*keyval);\n"
            "    px_mpi_attr_fortran();\n"
            "    *ierr = MPI_%s_get_attr(*obj, kv, &v, &f);\n"
            "    if (*ierr != MPI_SUCCESS)\n"
            "        return;\n"
            "    *flag = f;\n"
            "    if (f)\n"
            "        *val = px_f_attr_value_%s(kv, v);" % (_obj, _ty))
    special("MPI_%s_set_attr" % _obj,
            "MPI_Fint *obj, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *ierr",
            "    px_mpi_attr_fortran();\n"
            "    *ierr = MPI_%s_set_attr(*obj, *keyval, (void *)(intptr_t)*val);" % _obj)
# MPI-1 routines whose addresses are default INTEGERs in Fortran.
special("MPI_Address", "void *location, MPI_Fint *address, MPI_Fint *ierr",
        "    MPI_Aint a = 0;\n"
        "    *ierr = MPI_Address(px_f_buf(location), &a);\n"
        "    *address = (MPI_Fint)a;")
for _n in ("extent", "lb", "ub"):
    special("MPI_Type_" + _n, "MPI_Fint *type, MPI_Fint *out, MPI_Fint *ierr",
            "    MPI_Aint a = 0;\n"
            "    *ierr = MPI_Type_%s(*type, &a);\n"
            "    *out = (MPI_Fint)a;" % _n)
special("MPI_Type_hvector",
        "MPI_Fint *count, MPI_Fint *blocklen, MPI_Fint *stride, MPI_Fint *oldtype,"
        " MPI_Fint *newtype, MPI_Fint *ierr",
        "    *ierr = MPI_Type_hvector(*count, *blocklen, (MPI_Aint)*stride, *oldtype, newtype);")
special("MPI_Type_hindexed",
        "MPI_Fint *count, MPI_Fint *blocklens, MPI_Fint *displs, MPI_Fint *oldtype,"
        " MPI_Fint *newtype, MPI_Fint *ierr",
        "    MPI_Aint *d = px_f_aints(displs, *count);\n"
        "    *ierr = MPI_Type_hindexed(*count, blocklens, d, *oldtype, newtype);\n"
        "    free(d);")
special("MPI_Type_struct",
        "MPI_Fint *count, MPI_Fint *blocklens, MPI_Fint *displs, MPI_Fint *types,"
        " MPI_Fint *newtype, MPI_Fint *ierr",
        "    MPI_Aint *d = px_f_aints(displs, *count);\n"
        "    *ierr = MPI_Type_struct(*count, blocklens, d, types, newtype);\n"
        "    free(d);")

# Fortran callbacks run through trampolines (px_fortran.c).
for _obj in ("Comm", "Type", "Win"):
    special("MPI_%s_create_keyval" % _obj,
            "px_f_copy_fn *copy, px_f_delete_fn *del, MPI_Fint *keyval, MPI_Aint *extra,"
            " MPI_Fint *ierr",
            "    px_f_keyval_t *k = px_f_keyval_new(copy, del, *extra);\n"
            "    *ierr = MPI_%s_create_keyval(px_f_copy_tramp, px_f_delete_tramp, keyval, k);\n"
            "    if (*ierr != MPI_SUCCESS)\n"
            "        free(k);" % _obj)
special("MPI_Keyval_create",
        "px_f1_copy_fn *copy, px_f1_delete_fn *del, MPI_Fint *keyval, MPI_Fint *extra,"
        " MPI_Fint *ierr",
        "    px_f1_keyval_t *k = px_f1_keyval_new(copy, del, *extra);\n"
        "    *ierr = MPI_Keyval_create(px_f1_copy_tramp, px_f1_delete_tramp, keyval, k);\n"
        "    if (*ierr != MPI_SUCCESS)\n"
        "        free(k);")
special("MPI_Attr_get",
        "MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *val, MPI_Fint *flag, MPI_Fint *ierr",
        "    void *v = NULL;\n"
        "    int f = 0;\n"
        "    int kv = px_f_keyval(*keyval);\n"
        "    px_mpi_attr_fortran();\n"
        "    *ierr = MPI_Attr_get(*comm, kv, &v, &f);\n"
        "    if (*ierr != MPI_SUCCESS)\n"
        "        return;\n"
        "    *flag = f;\n"
        "    if (f)\n"
        "        *val = (MPI_Fint)px_f_attr_value_comm(kv, v);")
special("MPI_Attr_put", "MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *val, MPI_Fint *ierr",
        "    px_mpi_attr_fortran();\n"
        "    *ierr = MPI_Attr_put(*comm, *keyval, (void *)(intptr_t)*val);")

INT_HANDLES = {"int", "MPI_Comm", "MPI_Group", "MPI_Datatype", "MPI_Request", "MPI_Op",
               "MPI_Errhandler", "MPI_Info", "MPI_Win", "MPI_Message", "MPI_Session",
               "MPI_Fint"}
WIDE = {"MPI_Aint", "MPI_Offset", "MPI_Count"}
FUNC_PTRS = {"MPI_User_function", "MPI_Comm_errhandler_function", "MPI_Win_errhandler_function",
             "MPI_Session_errhandler_function", "MPI_Handler_function",
             "MPI_Comm_errhandler_fn", "MPI_Win_errhandler_fn", "MPI_Session_errhandler_fn",
             "MPI_File_errhandler_function", "MPI_File_errhandler_fn"}
# void* arguments the C routine writes an address into: passed through.
ADDRESS_OUT = {"baseptr", "base"}
WEIGHTS = {"weights", "sourceweights", "destweights"}


class Unsupported(Exception):
    pass


def parse_prototypes(header_text):
    """Return {name: (return_type, [(ctype, argname, fixed_dims)])} for MPI_ routines;
    ctype has const and blanks removed and one '*' per pointer or [] level."""
    text = re.sub(r"/\*.*?\*/", " ", header_text, flags=re.S)
    protos = {}
    for m in re.finditer(r"^(int|double|MPI_Aint)\s+(MPI_\w+)\s*\(([^;]*?)\)\s*PLEXUS_API\s*;",
                         text, flags=re.M | re.S):
        ret, name, args = m.group(1), m.group(2), " ".join(m.group(3).split())
        params = []
        if args not in ("", "void"):
            for a in args.split(","):
                a = a.strip()
                if a == "...":
                    params.append(("...", "", []))
                    continue
                is_array = a.endswith("]")
                extra = re.findall(r"\[([0-9]+)\]", a)
                a = re.sub(r"\[[^\]]*\]", "", a).strip()
                am = re.match(r"(.*?)(\w+)$", a)
                ctype = am.group(1).replace("const", "").replace(" ", "")
                if is_array:
                    ctype += "*"
                params.append((ctype, am.group(2), extra))
        protos[name] = (ret, params)
    return protos


def translate(name, params):
    """Build (fortran_params, call_args, pre_lines, post_lines) for a generic routine."""
    fparams, call, pre, post, lens = [], [], [], [], []
    for ctype, an, extra in params:
        base = ctype.rstrip("*")
        stars = len(ctype) - len(base)
        v = "a_" + an
        if ctype == "...":
            raise Unsupported("varargs")
        if base == "void" and stars == 1:
            fparams.append("void *" + v)
            if an in ADDRESS_OUT:
                call.append(v)
            else:
                call.append("px_f_buf(%s)" % v)
        elif base in INT_HANDLES and stars == 0:
            fparams.append("MPI_Fint *" + v)
            call.append("*" + v)
        elif base in WIDE and stars == 0:
            fparams.append("%s *%s" % (base, v))
            call.append("*" + v)
        elif base in INT_HANDLES and stars == 1:
            fparams.append("MPI_Fint *" + v)
            if extra:  # int ranges[][3]: same memory as Fortran ranges(3, n)
                call.append("(%s (*)%s)%s" % (base, "".join("[%s]" % d for d in extra), v))
            else:
                call.append("px_f_weights(%s)" % v if an in WEIGHTS else v)
        elif base in WIDE and stars == 1:
            fparams.append("%s *%s" % (base, v))
            call.append(v)
        elif base == "MPI_File" and stars == 0:
            # a C file handle is a pointer; Fortran holds MPI_File_c2f's integer
            fparams.append("MPI_Fint *" + v)
            call.append("MPI_File_f2c(*%s)" % v)
        elif base == "MPI_File" and stars == 1:
            fparams.append("MPI_Fint *" + v)
            pre.append("    MPI_File f_%s = MPI_File_f2c(*%s);" % (an, v))
            call.append("&f_" + an)
            post.append("    *%s = MPI_File_c2f(f_%s);" % (v, an))
        elif base == "MPI_Status" and stars == 1:
            fparams.append("MPI_Fint *" + v)
            call.append("px_f_status(%s)" % v)
        elif base in FUNC_PTRS and stars == 1:
            fparams.append("%s *%s" % (base, v))
            call.append(v)
        elif base == "char" and stars == 1:
            fparams.append("char *" + v)
            lens.append("size_t l_" + an)
            if "const" in _orig_type(name, an):
                pre.append("    char *s_%s = px_f_str_in(%s, l_%s);" % (an, v, an))
                call.append("s_" + an)
                post.append("    free(s_%s);" % an)
            elif an in OUT_STRING_ARGS:
                pre.append("    char *s_%s = px_f_str_tmp(l_%s);" % (an, an))
                call.append("s_" + an)
                # written only when the call gave it (MPI_Info_get: a flag)
                ok = "*ierr == MPI_SUCCESS" + (" && *a_flag" if any(
                    p[1] == "flag" for p in params) else "")
                post.append("    px_f_str_result(%s, s_%s, %s, l_%s);" % (ok, an, v, an))
            else:
                raise Unsupported("char* argument " + an)
        else:
            raise Unsupported("argument type " + ctype)
    return fparams, call, pre, post, lens


_ORIG = {}


def _orig_type(name, argname):
    return _ORIG.get((name, argname), "")


def record_orig(header_text):
    text = re.sub(r"/\*.*?\*/", " ", header_text, flags=re.S)
    for m in re.finditer(r"^int\s+(MPI_\w+)\s*\(([^;]*?)\)\s*PLEXUS_API\s*;", text,
                         flags=re.M | re.S):
        for a in " ".join(m.group(2).split()).split(","):
            am = re.match(r"(.*?)(\w+)\s*(\[[^\]]*\])?$", a.strip())
            if am:
                _ORIG[(m.group(1), am.group(2))] = am.group(1)


def aliases(name, strong):
    low = name.lower()
    up = name.upper()
    pup = "P" + up
    names = [up, pup, low, low + "_", low + "__", "p" + low, "p" + low + "__"]
    out = []
    for n in names:
        if n == strong:
            continue
        out.append("#undef %s\nextern __typeof__(%s) %s __attribute__((weak, alias(\"%s\")));"
                   % (n, strong, n, strong))
    return "\n".join(out)


def exported_symbols(nm, lib):
    out = subprocess.run([nm, "-D", "--defined-only", lib], check=True, capture_output=True,
                         text=True).stdout
    return {line.split()[-1] for line in out.splitlines() if len(line.split()) >= 3}


def gen_wrappers(header_text, syms):
    protos = parse_prototypes(header_text)
    record_orig(header_text)
    out = ["/* Fortran bindings of the MPI routines (produced by gen_fortran.py). */",
           "#include \"px_fortran.h\"", ""]
    done, skipped = [], []
    for name in sorted(protos):
        ret, params = protos[name]
        strong = "p" + name.lower() + "_"
        if name in SKIP:
            skipped.append((name, "no Fortran binding"))
            continue
        if name.startswith("MPI_T_"):
            skipped.append((name, "the tool interface has C bindings only"))
            continue
        if name in SPECIAL:
            fparams, body, needs = SPECIAL[name]
            if any("P" + n not in syms for n in needs):
                skipped.append((name, "not in libmpi"))
                continue
            out.append("void %s(%s);" % (strong, fparams))
            out.append("void %s(%s)\n{\n%s\n}" % (strong, fparams, body))
            out.append(aliases(name, strong))
            out.append("")
            done.append(name)
            continue
        if "P" + name not in syms:
            skipped.append((name, "not in libmpi"))
            continue
        try:
            fparams, call, pre, post, lens = translate(name, params)
        except Unsupported as e:
            skipped.append((name, str(e)))
            continue
        if ret == "int":
            sig = fparams + ["MPI_Fint *ierr"] + lens
            body = pre + ["    *ierr = %s(%s);" % (name, ", ".join(call))] + post
            rtype = "void"
        else:
            sig = fparams + lens
            rtype = ret
            body = pre + ["    %s r = %s(%s);" % (ret, name, ", ".join(call))] + post + \
                ["    return r;"]
        sigs = ", ".join(sig) if sig else "void"
        out.append("%s %s(%s);" % (rtype, strong, sigs))
        out.append("%s %s(%s)\n{\n%s\n}" % (rtype, strong, sigs, "\n".join(body)))
        out.append(aliases(name, strong))
        out.append("")
        done.append(name)
    return "\n".join(out) + "\n", done, skipped


# ---------------------------------------------------------------------------
# mpif.h
# ---------------------------------------------------------------------------

# Fortran string lengths exclude C's terminating NUL (as in MPICH).
STRING_LIMITS = re.compile(r"MPI_MAX_(\w*STRING\w*|\w*NAME\w*|INFO_KEY|INFO_VAL|DATAREP_STRING)$")
# Predefined attribute keyvals: Fortran values are the C value + 1 (MPICH's
# convention, so binaries built with MPICH's mpif.h work); the wrappers map
# them back.
FORTRAN_KEYVALS = {"MPI_TAG_UB", "MPI_HOST", "MPI_IO", "MPI_WTIME_IS_GLOBAL",
                   "MPI_UNIVERSE_SIZE", "MPI_LASTUSEDCODE", "MPI_APPNUM", "MPI_WIN_BASE",
                   "MPI_WIN_SIZE", "MPI_WIN_DISP_UNIT", "MPI_WIN_CREATE_FLAVOR",
                   "MPI_WIN_MODEL"}
NOT_CONSTANTS = {"MPI_STATUS_SIZE", "MPI_SOURCE", "MPI_TAG", "MPI_ERROR",
                 "MPI_DISPLACEMENT_CURRENT"}

HEAD = """!     Plexus MPI: Fortran include file (also the body of module mpi).
!     Valid as fixed and free source form. Values equal those of mpi.h.
       INTEGER MPI_SOURCE, MPI_TAG, MPI_ERROR
       PARAMETER (MPI_SOURCE=3,MPI_TAG=4,MPI_ERROR=5)
       INTEGER MPI_STATUS_SIZE
       PARAMETER (MPI_STATUS_SIZE=5)
       INTEGER MPI_ADDRESS_KIND
       PARAMETER (MPI_ADDRESS_KIND=8)
       INTEGER MPI_OFFSET_KIND
       PARAMETER (MPI_OFFSET_KIND=8)
       INTEGER MPI_COUNT_KIND
       PARAMETER (MPI_COUNT_KIND=8)
       INTEGER MPI_INTEGER_KIND
       PARAMETER (MPI_INTEGER_KIND=4)
       LOGICAL MPI_SUBARRAYS_SUPPORTED
       PARAMETER (MPI_SUBARRAYS_SUPPORTED=.FALSE.)
       LOGICAL MPI_ASYNC_PROTECTS_NONBLOCKING
       PARAMETER (MPI_ASYNC_PROTECTS_NONBLOCKING=.FALSE.)
       INTEGER MPI_FILE_NULL
       PARAMETER (MPI_FILE_NULL=0)
       INTEGER*8 MPI_DISPLACEMENT_CURRENT
       PARAMETER (MPI_DISPLACEMENT_CURRENT=-54278278)
"""

# Module mpi_f08: the same values; handles are typed (F08_HANDLES) and the
# special addresses are objects of libmpi (mpi_f08.f90).
F08_HANDLES = {"MPI_Comm", "MPI_Datatype", "MPI_Group", "MPI_Request", "MPI_Op", "MPI_Info",
               "MPI_Errhandler", "MPI_Win", "MPI_Message", "MPI_Session"}
F08_HEAD = """! Plexus MPI: constants of module mpi_f08 (from mpi.h by gen_fortran.py).
  INTEGER, PARAMETER :: MPI_SOURCE = 3, MPI_TAG = 4, MPI_ERROR = 5
  INTEGER, PARAMETER :: MPI_STATUS_SIZE = 5
  INTEGER, PARAMETER :: MPI_ADDRESS_KIND = 8, MPI_OFFSET_KIND = 8, MPI_COUNT_KIND = 8
  INTEGER, PARAMETER :: MPI_INTEGER_KIND = 4
  LOGICAL, PARAMETER :: MPI_SUBARRAYS_SUPPORTED = .FALSE.
  LOGICAL, PARAMETER :: MPI_ASYNC_PROTECTS_NONBLOCKING = .FALSE.
  TYPE(MPI_File), PARAMETER :: MPI_FILE_NULL = MPI_File(0)
  INTEGER(KIND=MPI_OFFSET_KIND), PARAMETER :: MPI_DISPLACEMENT_CURRENT = -54278278
"""

TAIL = """!     Special addresses: the library recognises these common blocks
!     (same names and layout as MPICH's).
       INTEGER MPI_STATUS_IGNORE(MPI_STATUS_SIZE)
       INTEGER MPI_STATUSES_IGNORE(MPI_STATUS_SIZE,1)
       INTEGER MPI_ERRCODES_IGNORE(1)
       CHARACTER*1 MPI_ARGVS_NULL(1,1)
       CHARACTER*1 MPI_ARGV_NULL(1)
       INTEGER MPI_BOTTOM, MPI_IN_PLACE, MPI_UNWEIGHTED
       INTEGER MPI_WEIGHTS_EMPTY
       COMMON /MPIFCMB5/ MPI_UNWEIGHTED
       COMMON /MPIFCMB9/ MPI_WEIGHTS_EMPTY
       SAVE /MPIFCMB5/
       SAVE /MPIFCMB9/
       COMMON /MPIPRIV1/ MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE
       COMMON /MPIPRIV2/ MPI_STATUSES_IGNORE, MPI_ERRCODES_IGNORE
       SAVE /MPIPRIV1/,/MPIPRIV2/
       COMMON /MPIPRIVC/ MPI_ARGVS_NULL, MPI_ARGV_NULL
       SAVE   /MPIPRIVC/
       EXTERNAL MPI_WTIME, MPI_WTICK
       EXTERNAL PMPI_WTIME, PMPI_WTICK
       DOUBLE PRECISION MPI_WTIME, MPI_WTICK
       DOUBLE PRECISION PMPI_WTIME, PMPI_WTICK
       EXTERNAL MPI_DUP_FN, MPI_NULL_DELETE_FN, MPI_NULL_COPY_FN
       EXTERNAL MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN
       EXTERNAL MPI_COMM_NULL_COPY_FN
       EXTERNAL MPI_WIN_DUP_FN, MPI_WIN_NULL_DELETE_FN
       EXTERNAL MPI_WIN_NULL_COPY_FN
       EXTERNAL MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN
       EXTERNAL MPI_TYPE_NULL_COPY_FN
       EXTERNAL MPI_CONVERSION_FN_NULL
       EXTERNAL MPI_AINT_ADD, MPI_AINT_DIFF
       INTEGER(KIND=MPI_ADDRESS_KIND) MPI_AINT_ADD, MPI_AINT_DIFF
"""


def constant_names(header_text):
    text = re.sub(r"/\*.*?\*/", " ", header_text, flags=re.S)
    names = []
    for m in re.finditer(r"^#define\s+(MPI_[A-Z0-9_]+)\s+\S", text, flags=re.M):
        names.append(m.group(1))
    for m in re.finditer(r"enum\s*\{([^}]*)\}", text):
        for item in m.group(1).split(","):
            im = re.match(r"\s*(MPI_[A-Z0-9_]+)", item)
            if im:
                names.append(im.group(1))
    seen, out = set(), []
    for n in names:
        if n not in seen and n not in NOT_CONSTANTS:
            seen.add(n)
            out.append(n)
    return out


def gen_consts_program(header_text):
    lines = ["/* Prints mpif.h; the C compiler evaluates every constant (gen_fortran.py). */",
             "#include <stdio.h>", "#include <mpi.h>", "",
             "/* f: mpif.h; f8: the constants of module mpi_f08, where a handle is",
             " * a constant of its handle type (htype) */",
             "static void emit(FILE *f, FILE *f8, const char *name, int is_int, long long v, int adjust,",
             "                 const char *htype)",
             "{",
             "    if (!is_int)",
             "        return;",
             "    if (v > 0xffffffffLL || v < -2147483648LL)",
             "        return;",
             "    int i = (int)(unsigned)v;",
             "    i += adjust;",
             "    char val[32];",
             "    if (i == -2147483647 - 1)",
             "        snprintf(val, sizeof(val), \"(-2147483647-1)\");",
             "    else",
             "        snprintf(val, sizeof(val), \"%d\", i);",
             "    fprintf(f, \"       INTEGER %s\\n\", name);",
             "    fprintf(f, \"       PARAMETER (%s=%s)\\n\", name, val);",
             "    if (!f8)",
             "        return;",
             "    if (htype)",
             "        fprintf(f8, \"  TYPE(%s), PARAMETER :: %s = %s(%s)\\n\", htype, name, htype, val);",
             "    else",
             "        fprintf(f8, \"  INTEGER, PARAMETER :: %s = %s\\n\", name, val);",
             "}", "",
             "#define PX_IS_INT(x) _Generic((x), int: 1, unsigned: 1, long: 1, "
             "unsigned long: 1, long long: 1, default: 0)",
             "#define PX_VAL(x) _Generic((x), int: (x), unsigned: (x), long: (x), "
             "unsigned long: (x), long long: (x), default: 0)",
             "#define C(x, s, h) emit(f, f8, #x, PX_IS_INT(x), (long long)PX_VAL(x), s, h)", "",
             "int main(int argc, char **argv)",
             "{",
             "    FILE *f = argc > 1 ? fopen(argv[1], \"w\") : stdout;",
             "    FILE *f8 = argc > 2 ? fopen(argv[2], \"w\") : NULL;",
             "    if (!f || (argc > 2 && !f8))",
             "        return 1;",
             "    fputs(%s, f);" % c_string(HEAD),
             "    if (f8)",
             "        fputs(%s, f8);" % c_string(F08_HEAD)]
    htypes = handle_types(header_text)
    for n in constant_names(header_text):
        adjust = -1 if STRING_LIMITS.match(n) else 1 if n in FORTRAN_KEYVALS else 0
        h = htypes.get(n)
        lines.append("    C(%s, %d, %s);" % (n, adjust, '"%s"' % h if h else "NULL"))
    lines += ["    fputs(%s, f);" % c_string(TAIL),
              "    if (f8 && fclose(f8) != 0)",
              "        return 1;",
              "    return fclose(f) == 0 ? 0 : 1;", "}", ""]
    return "\n".join(lines)


def handle_types(header_text):
    """Handle type of each constant that is a handle: #define X ((MPI_Comm)...),
    or #define X Y for such a Y."""
    text = re.sub(r"/\*.*?\*/", " ", header_text, flags=re.S)
    types = {}
    for m in re.finditer(r"^#define\s+(MPI_[A-Z0-9_]+)\s+(.*)$", text, flags=re.M):
        name, value = m.group(1), m.group(2).strip()
        cast = re.match(r"\(\((MPI_[A-Za-z]+)\)", value)
        if cast and cast.group(1) in F08_HANDLES:
            types[name] = cast.group(1)
        elif value in types:
            types[name] = types[value]
    return types


def c_string(s):
    return "\n        ".join('"%s\\n"' % l.replace("\\", "\\\\").replace('"', '\\"')
                             for l in s.rstrip("\n").split("\n"))


def binding_list(done, skipped):
    """Text of the `list` mode: routines bound, and why the others are not."""
    return "".join("bound   %s\n" % n for n in done) + \
        "".join("skipped %s (%s)\n" % s for s in skipped)


def write_file(path, text):
    with open(path, "w") as fh:
        fh.write(text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["consts", "wrappers", "list"])
    ap.add_argument("--header", required=True)
    ap.add_argument("--lib")
    ap.add_argument("--nm", default="nm")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    with open(args.header) as fh:
        header = fh.read()
    if args.mode == "consts":
        text = gen_consts_program(header)
    else:
        syms = exported_symbols(args.nm, args.lib)
        text, done, skipped = gen_wrappers(header, syms)
        if args.mode == "list":
            text = binding_list(done, skipped)
    write_file(args.out, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
