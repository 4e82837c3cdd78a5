#!/usr/bin/env python3
"""Generate the Fortran 2008 bindings (`use mpi_f08`) of Plexus from include/mpi.h.

A sibling of gen_fortran.py (same prototype parser, same list of routines:
those whose PMPI_ symbol the built libmpi exports). Two outputs:

  wrappers    C file with one routine PMPI_Foo_f08 (weak alias MPI_Foo_f08)
              per C routine MPI_Foo, the linker names MPI-4.0 gives the
              mpi_f08 routines.
  interfaces  Fortran text included by mpi_f08.f90: the operators == and /=
              on handles, the interfaces of the procedures a program passes
              to MPI, the functions (MPI_Wtime, MPI_Aint_add, ...), and for
              each routine a generic interface MPI_Foo whose specific
              procedure MPI_Foo_f08 is an external Fortran procedure (below),
              and the same for PMPI_Foo (profiling interface) whose specific
              is BIND(C) to the wrapper above (NOT_BIND_C: those taking a
              procedure, which the C wrapper serves under gfortran's name);
              the large-count MPI_Foo_c joins the generic when Fortran can
              tell the two apart (else it is MPI_Foo_c on its own).
  specifics   Fortran source of those external procedures MPI_Foo_f08(ts),
              each calling the C wrapper: a tool written in Fortran defines
              one of them to intercept the routine (MPI-4.0 19.1.5).

The interfaces use TS 29113 (Fortran 2018) interoperability: every argument
is passed by reference, handles are BIND(C) derived types holding the C int,
`INTEGER, OPTIONAL :: ierror` arrives as NULL when absent, and choice buffers
(TYPE(*), DIMENSION(..)) and CHARACTER(LEN=*) strings arrive as
CFI_cdesc_t descriptors (ISO_Fortran_binding.h).

Choice buffers that are non-contiguous array sections are handled in
px_f08.c: a blocking routine works on a contiguous copy; a nonblocking,
persistent, one-sided or split-collective routine gets a derived datatype
built from the section's strides in place of its (count, datatype) (or,
where counts are per process, a datatype whose extent is the stride of a 1-d
section), and fails with MPI_ERR_BUFFER where no datatype can
describe the section (classify_buffers: a datatype per process, a byte
count, partitions, the reduction of a collective).

`list` writes which routines got an mpi_f08 binding and why the others did not.
"""
import argparse
import re
import sys

import gen_fortran as gf

# Routines of `use mpi` that mpi_f08 does not have (reason in the comment).
SKIP = {
    # deleted in MPI-3.0 or deprecated without an mpi_f08 binding
    "MPI_Address", "MPI_Type_extent", "MPI_Type_lb", "MPI_Type_ub", "MPI_Type_hvector",
    "MPI_Type_hindexed", "MPI_Type_struct", "MPI_Attr_get", "MPI_Attr_put",
    "MPI_Attr_delete", "MPI_Keyval_create", "MPI_Keyval_free", "MPI_Errhandler_create",
    "MPI_Errhandler_set", "MPI_Errhandler_get",
    # C-only conversions (TYPE(MPI_Status) and the C struct share one layout)
    "MPI_Status_f082c", "MPI_Status_c2f08", "MPI_Status_c2f", "MPI_Status_f2c",
}
# Routines with a hand-written C body: name -> (C parameters, body), and the
# Fortran arguments of those whose C prototype does not give them: name ->
# [(declaration, dummy name)].
SPECIAL = {}
INTERFACE_OVERRIDE = {}


def special(name, cparams, body, dummies=None):
    SPECIAL[name] = (cparams, body)
    if dummies is not None:
        INTERFACE_OVERRIDE[name] = dummies


# No argc/argv, no varargs from Fortran.
special("MPI_Init", "MPI_Fint *ierror", "    px_f08_err(ierror, MPI_Init(NULL, NULL));", [])
special("MPI_Init_thread", "MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierror",
        "    px_f08_err(ierror, MPI_Init_thread(NULL, NULL, *required, provided));",
        [("INTEGER, INTENT(IN)", "required"), ("INTEGER, INTENT(OUT)", "provided")])
special("MPI_Pcontrol", "MPI_Fint *level, MPI_Fint *ierror",
        "    px_f08_err(ierror, MPI_Pcontrol(*level));", [("INTEGER, INTENT(IN)", "level")])
special("MPI_Info_create_env", "MPI_Fint *info, MPI_Fint *ierror",
        "    px_f08_err(ierror, MPI_Info_create_env(0, NULL, info));",
        [("TYPE(MPI_Info), INTENT(OUT)", "info")])
# In/out string lengths: C's count the terminating NUL (px_f08.c).
special("MPI_Info_get_string",
        "MPI_Fint *info, CFI_cdesc_t *key, MPI_Fint *buflen, CFI_cdesc_t *value, MPI_Fint *flag,"
        " MPI_Fint *ierror",
        "    px_f08_err(ierror, px_f_info_get_string(*info, key->base_addr, key->elem_len, buflen,\n"
        "                                            value->base_addr, value->elem_len, flag));",
        [("TYPE(MPI_Info), INTENT(IN)", "info"), ("CHARACTER(LEN=*), INTENT(IN)", "key"),
         ("INTEGER, INTENT(INOUT)", "buflen"), ("CHARACTER(LEN=*), INTENT(OUT)", "value"),
         ("LOGICAL, INTENT(OUT)", "flag")])
special("MPI_Session_get_nth_pset",
        "MPI_Fint *session, MPI_Fint *info, MPI_Fint *n, MPI_Fint *pset_len,"
        " CFI_cdesc_t *pset_name, MPI_Fint *ierror",
        "    px_f08_err(ierror, px_f_session_get_nth_pset(*session, *info, *n, pset_len,\n"
        "                                                 pset_name->base_addr,"
        " pset_name->elem_len));",
        [("TYPE(MPI_Session), INTENT(IN)", "session"), ("TYPE(MPI_Info), INTENT(IN)", "info"),
         ("INTEGER, INTENT(IN)", "n"), ("INTEGER, INTENT(INOUT)", "pset_len"),
         ("CHARACTER(LEN=*), INTENT(OUT)", "pset_name")])
# Arrays of blank-padded strings (px_fortran.c); MPI_ARGV_NULL,
# MPI_ARGVS_NULL and MPI_ERRCODES_IGNORE are objects of libmpifort
# (px_f08.c) the module binds to.
special("MPI_Comm_spawn",
        "CFI_cdesc_t *command, CFI_cdesc_t *argv, MPI_Fint *maxprocs, MPI_Fint *info,"
        " MPI_Fint *root, MPI_Fint *comm, MPI_Fint *intercomm, MPI_Fint *errcodes,"
        " MPI_Fint *ierror",
        "    const char *v = argv->base_addr == px_f08_argv_null ? NULL : argv->base_addr;\n"
        "    px_f08_err(ierror,\n"
        "               px_f_comm_spawn(command->base_addr, command->elem_len, v, argv->elem_len,\n"
        "                               *maxprocs, *info, *root, *comm, intercomm,\n"
        "                               errcodes == px_f08_errcodes_ignore ? NULL : errcodes));",
        [("CHARACTER(LEN=*), INTENT(IN)", "command"),
         ("CHARACTER(LEN=*), DIMENSION(*), INTENT(IN)", "argv"),
         ("INTEGER, INTENT(IN)", "maxprocs"), ("TYPE(MPI_Info), INTENT(IN)", "info"),
         ("INTEGER, INTENT(IN)", "root"), ("TYPE(MPI_Comm), INTENT(IN)", "comm"),
         ("TYPE(MPI_Comm), INTENT(OUT)", "intercomm"),
         ("INTEGER, DIMENSION(*)", "array_of_errcodes")])
special("MPI_Comm_spawn_multiple",
        "MPI_Fint *count, CFI_cdesc_t *commands, CFI_cdesc_t *argvs, MPI_Fint *maxprocs,"
        " MPI_Fint *infos, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *intercomm,"
        " MPI_Fint *errcodes, MPI_Fint *ierror",
        "    const char *v = argvs->base_addr == px_f08_argvs_null ? NULL : argvs->base_addr;\n"
        "    px_f08_err(ierror, px_f_comm_spawn_multiple(\n"
        "                           *count, commands->base_addr, commands->elem_len, v,\n"
        "                           argvs->elem_len, maxprocs, infos, *root, *comm, intercomm,\n"
        "                           errcodes == px_f08_errcodes_ignore ? NULL : errcodes));",
        [("INTEGER, INTENT(IN)", "count"),
         ("CHARACTER(LEN=*), DIMENSION(*), INTENT(IN)", "array_of_commands"),
         ("CHARACTER(LEN=*), DIMENSION(COUNT,*), INTENT(IN)", "array_of_argv"),
         ("INTEGER, DIMENSION(*), INTENT(IN)", "array_of_maxprocs"),
         ("TYPE(MPI_Info), DIMENSION(*), INTENT(IN)", "array_of_info"),
         ("INTEGER, INTENT(IN)", "root"), ("TYPE(MPI_Comm), INTENT(IN)", "comm"),
         ("TYPE(MPI_Comm), INTENT(OUT)", "intercomm"),
         ("INTEGER, DIMENSION(*)", "array_of_errcodes")])
# Attribute values are INTEGER(KIND=MPI_ADDRESS_KIND); keyvals as in mpif.h.
for _obj, _ty in (("Comm", "comm"), ("Type", "type"), ("Win", "win")):
    _handle = ("TYPE(MPI_%s), INTENT(IN)" % {"Type": "Datatype"}.get(_obj, _obj), _ty)
    special("MPI_%s_get_attr" % _obj,
            "MPI_Fint *obj, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag, MPI_Fint *ierror",
            "    void *v = NULL;\n"
            "    int f = 0;\n"
            "    int kv = px_f_keyval(*keyval);\n"
            "    px_mpi_attr_fortran();\n"
            "    int err = MPI_%s_get_attr(*obj, kv, &v, &f);\n"
            "    if (err == MPI_SUCCESS) {\n"
            "        *flag = f != 0;\n"
            "        if (f)\n"
            "            *val = px_f_attr_value_%s(kv, v);\n"
            "    }\n"
            "    px_f08_err(ierror, err);" % (_obj, _ty),
            [_handle, ("INTEGER, INTENT(IN)", "%s_keyval" % _ty),
             ("INTEGER(KIND=MPI_ADDRESS_KIND), INTENT(OUT)", "attribute_val"),
             ("LOGICAL, INTENT(OUT)", "flag")])
    special("MPI_%s_set_attr" % _obj,
            "MPI_Fint *obj, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *ierror",
            "    px_mpi_attr_fortran();\n"
            "    px_f08_err(ierror, MPI_%s_set_attr(*obj, *keyval, (void *)(intptr_t)*val));" % _obj,
            [_handle, ("INTEGER, INTENT(IN)", "%s_keyval" % _ty),
             ("INTEGER(KIND=MPI_ADDRESS_KIND), INTENT(IN)", "attribute_val")])

# Routines taking a user procedure: a BIND(C) interface cannot take an
# ordinary Fortran procedure, so their interfaces are not BIND(C) and the C
# routine is also named as gfortran names such an external procedure
# (lower case, trailing underscore). Every argument is by reference there
# too, and an absent OPTIONAL ierror is NULL.
NOT_BIND_C = set()


def callback_routine(name, dummies, cparams, body):
    special(name, cparams, body, dummies)
    NOT_BIND_C.add(name)


# MPI_User_function(invec, inoutvec, len, datatype) with TYPE(C_PTR), VALUE
# buffers is C's MPI_User_function (and _c with an MPI_COUNT_KIND len).
for _c in ("", "_c"):
    callback_routine("MPI_Op_create" + _c,
                     [("PROCEDURE(MPI_User_function%s)" % _c, "user_fn"),
                      ("LOGICAL, INTENT(IN)", "commute"), ("TYPE(MPI_Op), INTENT(OUT)", "op")],
                     "MPI_User_function%s *fn, MPI_Fint *commute, MPI_Fint *op, MPI_Fint *ierror"
                     % _c,
                     "    px_f08_err(ierror, MPI_Op_create%s(fn, *commute, op));" % _c)
# An error handler gets the handle and the code by reference, as in C (a C
# MPI_File is 0x90000000 | index, so its first four bytes are the Fortran
# handle, MPI_File_c2f's integer: docs/io.md).
for _obj in ("Comm", "Win", "File", "Session"):
    callback_routine("MPI_%s_create_errhandler" % _obj,
                     [("PROCEDURE(MPI_%s_errhandler_function)" % _obj,
                       "%s_errhandler_fn" % _obj.lower()),
                      ("TYPE(MPI_Errhandler), INTENT(OUT)", "errhandler")],
                     "MPI_%s_errhandler_function *fn, MPI_Fint *errhandler, MPI_Fint *ierror"
                     % _obj,
                     "    px_f08_err(ierror, MPI_%s_create_errhandler(fn, errhandler));" % _obj)
# Generalized requests: trampolines with the Fortran callbacks (px_f08.c).
callback_routine("MPI_Grequest_start",
                 [("PROCEDURE(MPI_Grequest_query_function)", "query_fn"),
                  ("PROCEDURE(MPI_Grequest_free_function)", "free_fn"),
                  ("PROCEDURE(MPI_Grequest_cancel_function)", "cancel_fn"),
                  ("INTEGER(KIND=MPI_ADDRESS_KIND), INTENT(IN)", "extra_state"),
                  ("TYPE(MPI_Request), INTENT(OUT)", "request")],
                 "px_f_greq_query_fn *query, px_f_greq_free_fn *free_fn,"
                 " px_f_greq_cancel_fn *cancel, MPI_Aint *extra, MPI_Fint *request,"
                 " MPI_Fint *ierror",
                 "    px_f08_err(ierror, px_f_grequest_start(query, free_fn, cancel, extra, request));")
# Data representations: the conversion and extent procedures through the
# trampolines of `use mpi` (px_fortran.c); a character argument of a
# routine that is not BIND(C) comes with its length at the end.
for _c in ("", "_c"):
    callback_routine("MPI_Register_datarep" + _c,
                     [("CHARACTER(LEN=*), INTENT(IN)", "datarep"),
                      ("PROCEDURE(MPI_Datarep_conversion_function%s)" % _c, "read_conversion_fn"),
                      ("PROCEDURE(MPI_Datarep_conversion_function%s)" % _c,
                       "write_conversion_fn"),
                      ("PROCEDURE(MPI_Datarep_extent_function)", "dtype_file_extent_fn"),
                      ("INTEGER(KIND=MPI_ADDRESS_KIND), INTENT(IN)", "extra_state")],
                     "char *datarep, px_f_conv%s_fn *read_fn, px_f_conv%s_fn *write_fn,"
                     " px_f_extent_fn *extent_fn, MPI_Aint *extra, MPI_Fint *ierror,"
                     " size_t l_datarep" % (_c, _c),
                     "    px_f08_err(ierror, px_f_register_datarep%s(datarep, l_datarep, read_fn,"
                     " write_fn,\n"
                     "                                                extent_fn, *extra));" % _c)
# Attribute callbacks run through the trampolines of `use mpi` (px_fortran.c):
# the same arguments, with a LOGICAL flag.
for _obj, _ty in (("Comm", "comm"), ("Type", "type"), ("Win", "win")):
    callback_routine("MPI_%s_create_keyval" % _obj,
                     [("PROCEDURE(MPI_%s_copy_attr_function)" % _obj, "%s_copy_attr_fn" % _ty),
                      ("PROCEDURE(MPI_%s_delete_attr_function)" % _obj,
                       "%s_delete_attr_fn" % _ty),
                      ("INTEGER, INTENT(OUT)", "%s_keyval" % _ty),
                      ("INTEGER(KIND=MPI_ADDRESS_KIND), INTENT(IN)", "extra_state")],
                     "px_f_copy_fn *copy, px_f_delete_fn *del, MPI_Fint *keyval, MPI_Aint *extra,"
                     " MPI_Fint *ierror",
                     "    px_f_keyval_t *k = px_f_keyval_new(copy, del, *extra);\n"
                     "    int err = MPI_%s_create_keyval(px_f_copy_tramp, px_f_delete_tramp, "
                     "keyval, k);\n"
                     "    if (err != MPI_SUCCESS)\n"
                     "        free(k);\n"
                     "    px_f08_err(ierror, err);" % _obj)

# Fortran indices are 1-based.
POST_INDEX = {
    "MPI_Waitany": "    if (err == MPI_SUCCESS && *a_index != MPI_UNDEFINED)\n"
                   "        (*a_index)++;",
    "MPI_Waitsome": "    if (err == MPI_SUCCESS && *a_outcount != MPI_UNDEFINED)\n"
                    "        for (int i = 0; i < *a_outcount; i++)\n"
                    "            a_array_of_indices[i]++;",
}
POST_INDEX["MPI_Testany"] = POST_INDEX["MPI_Waitany"]
POST_INDEX["MPI_Testsome"] = POST_INDEX["MPI_Waitsome"]

# int arguments that are LOGICAL in Fortran.
LOGICAL_ARGS = {"flag", "reorder", "periods", "remain_dims", "high", "commute", "weighted"}
# Output LOGICAL arrays and their length (the C library writes any non-zero).
LOGICAL_ARRAY_LEN = {("MPI_Cart_get", "periods"): "*a_maxdims"}
# void* arguments through which the C routine stores an address: TYPE(C_PTR).
C_PTR_OUT = {"baseptr", "buffer_addr"}
# void* arguments used for their address only (no data is accessed through
# them by this call; the _end of a split collective checks it is the buffer
# of its _begin).
ADDRESS_ONLY = {("MPI_Get_address", "location"), ("MPI_Free_mem", "base"),
                ("MPI_Win_detach", "base")}


def address_only(name, arg):
    return (name, arg) in ADDRESS_ONLY or re.match(r"MPI_File_\w+_end$", name)
HANDLE_TYPES = {"MPI_Comm", "MPI_Group", "MPI_Datatype", "MPI_Request", "MPI_Op",
                "MPI_Errhandler", "MPI_Info", "MPI_Win", "MPI_Message", "MPI_Session",
                "MPI_File"}
KINDS = {"MPI_Aint": "MPI_ADDRESS_KIND", "MPI_Offset": "MPI_OFFSET_KIND",
         "MPI_Count": "MPI_COUNT_KIND"}
# Routines whose buffer stays in use after they return (besides those
# returning a request): the buffer of a non-contiguous section cannot be a
# temporary copy.
DEFERRED = re.compile(r"MPI_(Put|Get|Accumulate|Get_accumulate|Fetch_and_op|Compare_and_swap|"
                      r"Buffer_attach|Win_create|Win_attach|File_\w+_begin)(_c)?$")


def parse(header_text):
    """{name: (return type, [(ctype, name, fixed dims, is_array, is_const)])}."""
    protos = gf.parse_prototypes(header_text)
    text = re.sub(r"/\*.*?\*/", " ", header_text, flags=re.S)
    out = {}
    for m in re.finditer(r"^(int|double|MPI_Aint)\s+(MPI_\w+)\s*\(([^;]*?)\)\s*PLEXUS_API\s*;",
                         text, flags=re.M | re.S):
        name = m.group(2)
        raw = [a.strip() for a in " ".join(m.group(3).split()).split(",")]
        ret, params = protos[name]
        if len(raw) != len(params) and params:
            continue
        full = []
        for (ctype, an, extra), r in zip(params, raw if params else []):
            is_array = r.endswith("]") or an.startswith("array_of_")
            full.append((ctype, an, extra, is_array, r.startswith("const")))
        out[name] = (ret, full)
    return out


class Unsupported(Exception):
    pass


def classify_buffers(name, params):
    """For each choice buffer: ("pair", count arg, datatype arg) when it has a
    count and datatype of its own, ("count1", None, datatype) when it is one
    element of datatype, ("shared", count arg or None, datatype) when that
    pair also describes another buffer, ("vector", None, datatype) when
    arrays of counts and displacements in units of datatype describe it, else
    ("other", None, None)."""
    bufs = [i for i, p in enumerate(params) if p[0] == "void*" and p[1] not in C_PTR_OUT]
    info = {}
    for k, i in enumerate(bufs):
        end = bufs[k + 1] if k + 1 < len(bufs) else len(params)
        kind = ("next", None, None) if i + 1 == end and k + 1 < len(bufs) else \
            ("other", None, None)
        per_process = False
        for m in range(i + 1, end):
            ctype, an, is_array = params[m][0], params[m][1], params[m][3]
            if ctype == "MPI_Datatype*" and is_array:
                break  # a datatype per process (alltoallw)
            if ctype == "MPI_Datatype":
                prev = params[m - 1]
                if per_process:
                    kind = ("vector", None, an)
                elif prev[0] == "void*":
                    kind = ("count1", None, an)
                elif prev[0] in ("int", "MPI_Count", "MPI_Aint") and m - 1 > i:
                    kind = ("pair", prev[1], an)
                break
            per_process = per_process or is_array
        info[params[i][1]] = kind
    # The count of a gather's receive buffer, a scatter's send buffer and
    # both buffers of an alltoall is per process: like counts and
    # displacements, it takes a datatype whose extent is the stride.
    for b, (kind, cnt, dt) in list(info.items()):
        if kind == "pair" and (re.search(r"alltoall", name)
                               or re.search(r"gather", name) and b.startswith("recv")
                               or re.search(r"scatter", name) and b.startswith("send")):
            info[b] = ("vector", None, dt)
    # a buffer right before another buffer shares that one's description
    names = [params[i][1] for i in bufs]
    for k in range(len(names) - 1, -1, -1):
        if info[names[k]][0] == "next":
            info[names[k]] = info[names[k + 1]]
    owners = {}
    for b, (kind, cnt, dt) in info.items():
        owners.setdefault(dt, []).append(b)
    for b, (kind, cnt, dt) in list(info.items()):
        if kind in ("pair", "count1") and len(owners[dt]) > 1:
            info[b] = ("shared", cnt, dt)
        elif kind == "vector" and len(owners[dt]) > 1:
            info[b] = ("other", None, None)
    # Partitions multiply the count. A reduction of a collective applies a
    # predefined operation to the basic elements of the section's datatype,
    # but a user function would get that datatype in place of its own: the
    # wrapper checks the operation at run time (reduction_op). In a
    # reduce_scatter one datatype describes buffers of different lengths,
    # which a section's datatype cannot. One-sided accumulates apply the
    # operation to the basic elements.
    if any(p[1] == "partitions" for p in params) or (
            reduction_op(name, params) and re.search(r"reduce_scatter", name)):
        info = {b: ("other", None, None) for b in info}
    return info


def reduction_op(name, params):
    """The operation argument of a collective reduction (not of a one-sided
    accumulate), or None."""
    if any(p[0] == "MPI_Win" for p in params):
        return None
    ops = [p[1] for p in params if p[0] == "MPI_Op"]
    return ops[0] if ops else None


def fortran_decl(name, ctype, an, extra, is_array, is_const, deferred):
    """Fortran declaration (without the name) of one dummy argument."""
    base = ctype.rstrip("*")
    stars = len(ctype) - len(base)
    intent_in = ", INTENT(IN)"
    if base == "void" and stars == 1:
        if an in C_PTR_OUT:
            return "TYPE(C_PTR), INTENT(OUT)", ""
        decl = "TYPE(*), DIMENSION(..)"
        if is_const:
            decl += intent_in
        if deferred or address_only(name, an):
            decl += ", ASYNCHRONOUS"
        return decl, ""
    if base == "char" and stars == 1:
        return "CHARACTER(LEN=*)" + (intent_in if is_const else ""), ""
    if base == "MPI_Status" and stars == 1:
        return "TYPE(MPI_Status)", "(*)" if is_array else ""
    if base == "MPI_F08_status" and stars == 1:
        return "TYPE(MPI_Status)" + (intent_in if is_const else ""), ""
    if base == "MPI_Fint" and an == "f_status":
        return "INTEGER" + (intent_in if is_const else ""), "(MPI_STATUS_SIZE)"
    if base == "int" or base == "MPI_Fint":
        ftype = "LOGICAL" if an in LOGICAL_ARGS else "INTEGER"
    elif base in KINDS:
        ftype = "INTEGER(KIND=%s)" % KINDS[base]
    elif base in HANDLE_TYPES:
        ftype = "TYPE(%s)" % base
    else:
        raise Unsupported("argument type " + ctype)
    if stars == 0:
        return ftype + intent_in, ""
    if stars != 1:
        raise Unsupported("argument type " + ctype)
    if extra:
        return ftype + (intent_in if is_const else ""), "(%s,*)" % ",".join(extra)
    if is_array:
        return ftype + (intent_in if is_const else ""), "(*)"
    return ftype + (intent_in if is_const else ""), ""


class Routine:
    """The mpi_f08 binding of one C routine."""

    def __init__(self, name, ret, params):
        self.name, self.ret, self.params = name, ret, params
        self.deferred = bool(DEFERRED.match(name)) or any(
            p[0] == "MPI_Request*" and not p[3] and p[1] == "request" for p in params)
        # Fortran dummies: (declaration, dims, name)
        if name in INTERFACE_OVERRIDE:
            self.dummies = [(d, "", n) for d, n in INTERFACE_OVERRIDE[name]]
        else:
            self.dummies = []
            for ctype, an, extra, is_array, is_const in params:
                if ctype == "...":
                    raise Unsupported("varargs")
                decl, dims = fortran_decl(name, ctype, an, extra, is_array, is_const,
                                          self.deferred)
                self.dummies.append((decl, dims, an))

    @property
    def suffix(self):
        """The specific procedure's suffix (MPI-4.0 19.1.5): _f08ts for a
        routine with choice buffers declared TYPE(*), DIMENSION(..), else _f08."""
        return "_f08ts" if any(d.startswith("TYPE(*), DIMENSION(..)")
                               for d, _, _ in self.dummies) else "_f08"

    # ---- C ------------------------------------------------------------
    def c_function(self):
        strong = "P%s_f08" % self.name
        if self.name in SPECIAL:
            cparams, body = SPECIAL[self.name]
        else:
            cparams, body = self.c_generic()
        names = [self.name + "_f08"]
        if self.suffix != "_f08":  # the standard's names, and the earlier ones
            names += [self.name + self.suffix, "P" + self.name + self.suffix]
        if self.name in NOT_BIND_C:
            names += [self.name.lower() + "_f08_", "p" + self.name.lower() + "_f08_"]
        return "void %s(%s);\nvoid %s(%s)\n{\n%s\n}\n%s\n" % (
            strong, cparams, strong, cparams, body, "\n".join(
                "extern __typeof__(%s) %s __attribute__((weak, alias(\"%s\")));"
                % (strong, n, strong) for n in names))

    def c_generic(self):
        name, params = self.name, self.params
        bufs = classify_buffers(name, params)
        fparams, call, decls, pre, post, cleanup = [], [], [], [], [], []
        subst = {}  # C argument -> expression that replaces it in the call
        for ctype, an, extra, is_array, is_const in params:
            base = ctype.rstrip("*")
            stars = len(ctype) - len(base)
            v = "a_" + an
            if base == "void" and stars == 1 and an in C_PTR_OUT:
                fparams.append("void *" + v)
                call.append((an, v))
            elif base == "void" and stars == 1:
                fparams.append("CFI_cdesc_t *" + v)
                kind, cnt, dt = bufs[an]
                if address_only(name, an):
                    call.append((an, "px_f08_addr(%s)" % v))
                elif not self.deferred:
                    # blocking: a non-contiguous section goes through a copy
                    decls.append("    px_f08_tmp_t t_%s;" % an)
                    decls.append("    void *p_%s = px_f08_tmp_begin(&t_%s, %s, %d);"
                               % (an, an, v, 0 if is_const else 1))
                    call.append((an, "p_" + an))
                    cleanup.append("    px_f08_tmp_end(&t_%s);" % an)
                elif kind in ("pair", "count1", "shared", "vector"):
                    # nonblocking: a datatype that follows the section's
                    # strides, made once for the buffers it describes
                    if dt not in subst:
                        group = [b for b in bufs if bufs[b][2] == dt]
                        count = "(MPI_Count)*a_" + cnt if cnt else "1"
                        decls.append("    px_f08_sect_t s_%s = {0};" % dt)
                        decls.append("    const CFI_cdesc_t *g_%s[] = {%s};"
                                     % (dt, ", ".join("a_" + b for b in group)))
                        op = reduction_op(name, params)
                        pre.append("    err = px_f08_sect_begin(&s_%s, g_%s, %d, %s, *a_%s, "
                                   "%d, %s, \"%s\");" % (dt, dt, len(group),
                                                          "-1" if kind == "vector" else count,
                                                          dt, kind == "shared",
                                                          "*a_" + op if op else "MPI_OP_NULL",
                                                          name))
                        pre.append("    if (err != MPI_SUCCESS)\n        goto bad_buffer;")
                        if cnt:
                            subst[cnt] = "s_%s.count" % dt
                        subst[dt] = "s_%s.type" % dt
                        cleanup.append("    px_f08_sect_end(&s_%s);" % dt)
                    call.append((an, "px_f08_addr(%s)" % v))
                else:
                    decls.append("    void *p_%s = NULL;" % an)
                    pre.append("    err = px_f08_contig(%s, &p_%s, \"%s\");" % (v, an, name))
                    pre.append("    if (err != MPI_SUCCESS)\n        goto bad_buffer;")
                    call.append((an, "p_" + an))
            elif base == "char" and stars == 1:
                fparams.append("CFI_cdesc_t *" + v)
                if is_const:
                    decls.append("    char *s_%s = px_f_str_in(%s->base_addr, %s->elem_len);"
                               % (an, v, v))
                    cleanup.append("    free(s_%s);" % an)
                elif an in gf.OUT_STRING_ARGS:
                    decls.append("    char *s_%s = px_f_str_tmp(%s->elem_len);" % (an, v))
                    # written only when the call gave it (MPI_Info_get: a flag)
                    ok = "err == MPI_SUCCESS" + (" && *a_flag" if any(
                        p[1] == "flag" for p in params) else "")
                    cleanup.append("    px_f_str_result(%s, s_%s, %s->base_addr, %s->elem_len);"
                                   % (ok, an, v, v))
                else:
                    raise Unsupported("char* argument " + an)
                call.append((an, "s_" + an))
            elif base == "MPI_File" and stars == 0:
                # a C file handle is a pointer; Fortran holds MPI_File_c2f's integer
                fparams.append("MPI_Fint *" + v)
                call.append((an, "MPI_File_f2c(*%s)" % v))
            elif base == "MPI_File" and stars == 1:
                fparams.append("MPI_Fint *" + v)
                decls.append("    MPI_File f_%s = MPI_File_f2c(*%s);" % (an, v))
                call.append((an, "&f_" + an))
                post.append("    *%s = MPI_File_c2f(f_%s);" % (v, an))
            elif base == "MPI_Status" and stars == 1:
                fparams.append("MPI_Status *" + v)
                call.append((an, "px_f08_status(%s)" % v))
            elif base == "MPI_F08_status" and stars == 1:
                fparams.append("MPI_F08_status *" + v)
                call.append((an, v))
            elif base in gf.INT_HANDLES or base in KINDS:
                ftype = "MPI_Fint" if base in gf.INT_HANDLES else base
                fparams.append("%s *%s" % (ftype, v))
                if stars == 0:
                    call.append((an, "*" + v))
                elif extra:  # int ranges[][3]: same memory as Fortran ranges(3, n)
                    call.append((an, "(%s (*)%s)%s"
                                 % (base, "".join("[%s]" % d for d in extra), v)))
                elif an in gf.WEIGHTS:
                    call.append((an, "px_f_weights(%s)" % v))
                else:
                    call.append((an, v))
                if stars == 1 and an in LOGICAL_ARGS and not is_const:
                    post += self.logical_out(an, is_array)
            else:
                raise Unsupported("argument type " + ctype)
        args = ", ".join(subst.get(an, expr) for an, expr in call)
        body = ["    int err;"] + decls + pre + ["    err = %s(%s);" % (name, args)]
        if post:
            body += ["    if (err == MPI_SUCCESS) {"]
            body += ["    " + line for line in "\n".join(post).split("\n")]
            body += ["    }"]
        if name in POST_INDEX:
            body.append(POST_INDEX[name])
        if any("goto bad_buffer" in p for p in pre):
            body += ["    goto done;", "bad_buffer:", "    %s;" % self.error_handler(),
                     "done:"]
        body += cleanup
        body.append("    px_f08_err(ierror, err);")
        return ", ".join(fparams + ["MPI_Fint *ierror"]), "\n".join(body)

    def logical_out(self, an, is_array):
        """C stores any non-zero int for true; Fortran wants .TRUE. (1)."""
        v = "a_" + an
        n = LOGICAL_ARRAY_LEN.get((self.name, an))
        if n:
            return ["    for (int i = 0; i < %s; i++)\n        %s[i] = %s[i] != 0;" % (n, v, v)]
        if is_array:
            raise Unsupported("output LOGICAL array " + an)
        return ["    *%s = *%s != 0;" % (v, v)]

    def error_handler(self):
        """Error handler call for a buffer this binding cannot pass."""
        for ctype, an, _, is_array, _ in self.params:
            if ctype == "MPI_Comm":
                return "MPI_Comm_call_errhandler(*a_%s, err)" % an
            if ctype == "MPI_Win":
                return "MPI_Win_call_errhandler(*a_%s, err)" % an
            if ctype == "MPI_File":
                return "MPI_File_call_errhandler(MPI_File_f2c(*a_%s), err)" % an
        return "MPI_Comm_call_errhandler(MPI_COMM_SELF, err)"

    # ---- Fortran --------------------------------------------------------
    def specific(self, fname, prefix="", bind_c=None):
        """Interface body of the specific procedure fname; prefix "P": of the
        profiling interface's. The MPI_ specifics are external Fortran
        procedures (gen_specifics), the PMPI_ ones BIND(C) to the wrapper,
        unless bind_c says otherwise."""
        names = [n for _, _, n in self.dummies] + ["ierror"]
        if bind_c is None:
            bind_c = prefix == "P" or self.name in TYPES_ROUTINES
        if self.name in NOT_BIND_C or not bind_c:
            lines = ["    SUBROUTINE %s(%s)" % (fname, wrap(names, 8)), "      IMPORT"]
        else:
            lines = ["    SUBROUTINE %s(%s) &" % (fname, wrap(names, 8)),
                     "        BIND(C, NAME=\"%s\")" % (prefix + self.name + self.suffix),
                     "      IMPORT"]
        uses_c_ptr = any("C_PTR" in d for d, _, _ in self.dummies)
        if uses_c_ptr:
            lines.insert(lines.index("      IMPORT"),
                         "      USE, INTRINSIC :: ISO_C_BINDING, ONLY : C_PTR")
        lines.append("      IMPLICIT NONE")
        for decl, dims, n in self.dummies:
            lines.append("      %s :: %s%s" % (decl, n, dims))
        lines.append("      INTEGER, OPTIONAL, INTENT(OUT) :: ierror")
        lines.append("    END SUBROUTINE %s" % fname)
        return "\n".join(lines)

    def external(self):
        """The MPI_ specific as an external Fortran procedure, so that a tool
        written as a plain Fortran subroutine of that name (MPI-4.0 19.1.5,
        linker name mpi_foo_f08ts_) takes its place; it calls the C wrapper
        (MPI_Foo_f08ts, a weak alias of PMPI_Foo_f08ts), which a BIND(C) tool
        may take the place of in turn."""
        fname = self.name + self.suffix
        names = [n for _, _, n in self.dummies] + ["ierror"]
        body = "\n".join("    " + l for l in self.specific("px_c", bind_c=True).split("\n"))
        lines = ["SUBROUTINE %s(%s)" % (fname, wrap(names, 4)),
                 "    USE mpi_f08_types"]
        if any("C_PTR" in d for d, _, _ in self.dummies):
            lines.append("    USE, INTRINSIC :: ISO_C_BINDING, ONLY : C_PTR")
        lines += ["    IMPLICIT NONE", "    INTERFACE", body, "    END INTERFACE"]
        for decl, dims, n in self.dummies:
            lines.append("    %s :: %s%s" % (decl, n, dims))
        lines.append("    INTEGER, OPTIONAL, INTENT(OUT) :: ierror")
        lines.append("    CALL px_c(%s)" % wrap(names, 14))
        lines.append("END SUBROUTINE %s" % fname)
        return "\n".join(lines)

    def tkr(self):
        """Type, kind and rank of each dummy, as generic resolution sees them."""
        out = []
        for decl, dims, n in self.dummies:
            t = decl.split(",")[0]
            t = re.sub(r"KIND=MPI_(ADDRESS|OFFSET|COUNT)_KIND", "8", t)
            # dummy procedures do not tell specifics of a generic apart
            t = re.sub(r"PROCEDURE\(.*\)", "PROCEDURE", t)
            if "DIMENSION(..)" in decl:
                rank = ".."
            else:
                rank = dims.count(",") + 1 if dims else 0
            out.append((n, t, rank))
        return out


def wrap(names, indent):
    """Argument list split over continuation lines."""
    lines, cur = [], ""
    for n in names:
        piece = n if not cur else cur + ", " + n
        if len(piece) > 70:
            lines.append(cur + ",")
            cur = n
        else:
            cur = piece
    lines.append(cur)
    return (" &\n" + " " * indent).join(lines)


def distinguishable(a, b):
    """Whether Fortran can tell the two specifics of one generic apart."""
    ta, tb = a.tkr(), b.tkr()
    if len(ta) != len(tb):
        return True
    return any(x[0] == y[0] and x[1:] != y[1:] and "TYPE(*)" not in (x[1], y[1])
               for x, y in zip(ta, tb))


def bind(header_text, syms):
    """Return (routines by name, skipped [(name, reason)])."""
    protos = parse(header_text)
    done, skipped = {}, []
    for name in sorted(protos):
        ret, params = protos[name]
        if name not in SPECIAL and (name in SKIP or name in gf.SKIP):
            skipped.append((name, "no mpi_f08 binding"))
            continue
        if name.startswith("MPI_T_"):
            skipped.append((name, "the tool interface has C bindings only"))
            continue
        if re.search(r"_(c2f|f2c)$", name):
            skipped.append((name, "C handle conversion"))
            continue
        if "P" + name not in syms:
            skipped.append((name, "not in libmpi"))
            continue
        if ret != "int":
            skipped.append((name, "function, bound to libmpi's (gen_functions)"))
            continue
        try:
            r = Routine(name, ret, params)
            r.c_function()
        except Unsupported as e:
            skipped.append((name, str(e)))
            continue
        done[name] = r
    return done, skipped


def gen_wrappers(routines):
    out = ["/* mpi_f08 bindings of the MPI routines (produced by gen_f08.py). */",
           "#include \"px_f08.h\"", ""]
    for name in sorted(routines):
        out.append(routines[name].c_function())
    return "\n".join(out)


# Handle types of mpi_f08.f90, for the operators on them.
F08_HANDLES = ["Comm", "Datatype", "Group", "Request", "Op", "Info", "Errhandler", "Win", "File",
               "Message", "Session"]


def gen_operators():
    """== (.EQ.) and /= (.NE.) on each handle type: px_f08_<type>_eq/ne in px_f08.c."""
    out = []
    for op, c in (("==", "eq"), ("/=", "ne")):
        out.append("  INTERFACE OPERATOR(%s)" % op)
        for t in F08_HANDLES:
            f = "px_f08_%s_%s" % (t.lower(), c)
            out += ["    LOGICAL FUNCTION %s(a, b) BIND(C, NAME=\"%s\")" % (f, f),
                    "      IMPORT :: MPI_%s" % t,
                    "      TYPE(MPI_%s), INTENT(IN) :: a, b" % t,
                    "    END FUNCTION %s" % f]
        out += ["  END INTERFACE OPERATOR(%s)" % op, ""]
    return out


def abstract_interface(name, args, dummies):
    """args: the dummy arguments in order; dummies: [(declaration, names)]."""
    out = ["    SUBROUTINE %s(%s)" % (name, wrap(args.split(), 8)),
           "      USE, INTRINSIC :: ISO_C_BINDING, ONLY : C_PTR",
           "      IMPORT"]
    out += ["      %s :: %s" % (d, ", ".join(names)) for d, names in dummies]
    out.append("    END SUBROUTINE %s" % name)
    return out


def gen_callback_interfaces():
    """Procedures a program passes to MPI (MPI-4.0 19.1.4), and the
    predefined attribute callbacks (px_fortran.c, shared with `use mpi`)."""
    out = ["  ABSTRACT INTERFACE"]
    for c, kind in (("", "INTEGER"), ("_c", "INTEGER(KIND=MPI_COUNT_KIND)")):
        out += abstract_interface("MPI_User_function" + c, "invec inoutvec len datatype",
                                  [("TYPE(C_PTR), VALUE", ["invec", "inoutvec"]),
                                   (kind, ["len"]), ("TYPE(MPI_Datatype)", ["datatype"])])
    for obj in ("Comm", "Win", "File", "Session"):
        out += abstract_interface("MPI_%s_errhandler_function" % obj,
                                  obj.lower() + " error_code",
                                  [("TYPE(MPI_%s)" % obj, [obj.lower()]),
                                   ("INTEGER", ["error_code"])])
    for obj, ty, v in (("Comm", "Comm", "comm"), ("Type", "Datatype", "type"),
                       ("Win", "Win", "win")):
        out += abstract_interface(
            "MPI_%s_copy_attr_function" % obj,
            "old%s %s_keyval extra_state attribute_val_in attribute_val_out flag ierror" % (v, v),
            [("TYPE(MPI_%s)" % ty, ["old" + v]), ("INTEGER", [v + "_keyval", "ierror"]),
             ("INTEGER(KIND=MPI_ADDRESS_KIND)",
              ["extra_state", "attribute_val_in", "attribute_val_out"]),
             ("LOGICAL", ["flag"])])
        out += abstract_interface(
            "MPI_%s_delete_attr_function" % obj,
            "%s %s_keyval attribute_val extra_state ierror" % (v, v),
            [("TYPE(MPI_%s)" % ty, [v]), ("INTEGER", [v + "_keyval", "ierror"]),
             ("INTEGER(KIND=MPI_ADDRESS_KIND)", ["attribute_val", "extra_state"])])
    out += abstract_interface("MPI_Grequest_query_function", "extra_state status ierror",
                              [("INTEGER(KIND=MPI_ADDRESS_KIND)", ["extra_state"]),
                               ("TYPE(MPI_Status)", ["status"]), ("INTEGER", ["ierror"])])
    out += abstract_interface("MPI_Grequest_free_function", "extra_state ierror",
                              [("INTEGER(KIND=MPI_ADDRESS_KIND)", ["extra_state"]),
                               ("INTEGER", ["ierror"])])
    out += abstract_interface("MPI_Grequest_cancel_function", "extra_state complete ierror",
                              [("INTEGER(KIND=MPI_ADDRESS_KIND)", ["extra_state"]),
                               ("LOGICAL", ["complete"]), ("INTEGER", ["ierror"])])
    for c, kind in (("", "INTEGER"), ("_c", "INTEGER(KIND=MPI_COUNT_KIND)")):
        out += abstract_interface(
            "MPI_Datarep_conversion_function" + c,
            "userbuf datatype count filebuf position extra_state ierror",
            [("TYPE(C_PTR), VALUE", ["userbuf", "filebuf"]), ("TYPE(MPI_Datatype)", ["datatype"]),
             (kind, ["count"]), ("INTEGER(KIND=MPI_OFFSET_KIND)", ["position"]),
             ("INTEGER(KIND=MPI_ADDRESS_KIND)", ["extra_state"]), ("INTEGER", ["ierror"])])
    out += abstract_interface("MPI_Datarep_extent_function", "datatype extent extra_state ierror",
                              [("TYPE(MPI_Datatype)", ["datatype"]),
                               ("INTEGER(KIND=MPI_ADDRESS_KIND)", ["extent", "extra_state"]),
                               ("INTEGER", ["ierror"])])
    out += ["  END INTERFACE", ""]
    out.append("  PROCEDURE(MPI_Datarep_conversion_function) :: MPI_CONVERSION_FN_NULL")
    out.append("  PROCEDURE(MPI_Datarep_conversion_function_c) :: MPI_CONVERSION_FN_NULL_C")
    for obj in ("Comm", "Type", "Win"):
        u = obj.upper()
        out.append("  PROCEDURE(MPI_%s_copy_attr_function) :: MPI_%s_NULL_COPY_FN, MPI_%s_DUP_FN"
                   % (obj, u, u))
        out.append("  PROCEDURE(MPI_%s_delete_attr_function) :: MPI_%s_NULL_DELETE_FN" % (obj, u))
    return out + [""]


def gen_functions():
    """The functions, bound to libmpi's C functions themselves (by value)."""
    out = ["  INTERFACE"]
    for prefix in ("", "P"):
        for f in ("Wtime", "Wtick"):
            name = "%sMPI_%s" % (prefix, f)
            out += ["    DOUBLE PRECISION FUNCTION %s() BIND(C, NAME=\"%s\")" % (name, name),
                    "    END FUNCTION %s" % name]
        for f, args in (("Aint_add", "base, disp"), ("Aint_diff", "addr1, addr2")):
            name = "%sMPI_%s" % (prefix, f)
            out += ["    INTEGER(KIND=MPI_ADDRESS_KIND) FUNCTION %s(%s) &" % (name, args),
                    "        BIND(C, NAME=\"%s\")" % name,
                    "      IMPORT :: MPI_ADDRESS_KIND",
                    "      INTEGER(KIND=MPI_ADDRESS_KIND), VALUE, INTENT(IN) :: %s" % args,
                    "    END FUNCTION %s" % name]
    return out + ["  END INTERFACE", ""]


# Routines whose interfaces are in module mpi_f08_types, which both mpi_f08
# and mpi use: the status conversions module mpi has too (MPI-4.0 19.3.5).
TYPES_ROUTINES = ("MPI_Status_f082f", "MPI_Status_f2f08")


def gen_interfaces(routines, types_module=False):
    if types_module:
        out = ["! mpi_f08_types interfaces (produced by gen_f08.py from mpi.h).", ""]
    else:
        out = ["! mpi_f08 interfaces (produced by gen_f08.py from mpi.h).", ""]
        out += gen_operators() + gen_callback_interfaces() + gen_functions()
    for name, prefix in sorted((n, p) for n in routines for p in ("", "P")):
        if name.endswith("_c") and name[:-2] in routines:
            continue
        if (name in TYPES_ROUTINES) != types_module:
            continue
        r = routines[name]
        big = routines.get(name + "_c")
        gname = prefix + name
        specs = [r.specific(gname + r.suffix, prefix)]
        alone = None
        if big is not None:
            if distinguishable(r, big):
                specs.append(big.specific(gname + "_c" + big.suffix, prefix))
            else:
                alone = big
        out.append("  INTERFACE %s" % gname)
        out += specs
        out.append("  END INTERFACE %s" % gname)
        if alone is not None:
            out.append("  INTERFACE %s_c" % gname)
            out.append(alone.specific(gname + "_c" + alone.suffix, prefix))
            out.append("  END INTERFACE %s_c" % gname)
        out.append("")
    return "\n".join(out)


def gen_specifics(routines):
    """Bodies of the MPI_ specifics of module mpi_f08 (Routine.external)."""
    out = ["! mpi_f08's specific procedures (produced by gen_f08.py from mpi.h).", ""]
    for name in sorted(routines):
        r = routines[name]
        if name in NOT_BIND_C or name in TYPES_ROUTINES:
            continue
        out += [r.external(), ""]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["wrappers", "interfaces", "types-interfaces", "specifics",
                                     "list"])
    ap.add_argument("--header", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--nm", default="nm")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    with open(args.header) as fh:
        header = fh.read()
    routines, skipped = bind(header, gf.exported_symbols(args.nm, args.lib))
    if args.mode == "wrappers":
        text = gen_wrappers(routines)
    elif args.mode == "interfaces":
        text = gen_interfaces(routines)
    elif args.mode == "types-interfaces":
        text = gen_interfaces(routines, types_module=True)
    elif args.mode == "specifics":
        text = gen_specifics(routines)
    else:
        text = gf.binding_list(sorted(routines), skipped)
    gf.write_file(args.out, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
