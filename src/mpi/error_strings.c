/* Text of the predefined MPI error classes (numbers as in include/mpi.h). */
#include "error_strings.h"

#include <stddef.h>

#include <mpi.h>

static const char *const px_mpi_error_text[] = {
    [MPI_SUCCESS] = "Success",
    [MPI_ERR_BUFFER] = "Invalid buffer pointer",
    [MPI_ERR_COUNT] = "Invalid count argument",
    [MPI_ERR_TYPE] = "Invalid datatype argument",
    [MPI_ERR_TAG] = "Invalid tag argument",
    [MPI_ERR_COMM] = "Invalid communicator",
    [MPI_ERR_RANK] = "Invalid rank",
    [MPI_ERR_ROOT] = "Invalid root",
    [MPI_ERR_GROUP] = "Invalid group",
    [MPI_ERR_OP] = "Invalid reduction operation",
    [MPI_ERR_TOPOLOGY] = "Invalid topology",
    [MPI_ERR_DIMS] = "Invalid dimension argument",
    [MPI_ERR_ARG] = "Invalid argument",
    [MPI_ERR_UNKNOWN] = "Unknown error",
    [MPI_ERR_TRUNCATE] = "Message truncated: receive buffer too small",
    [MPI_ERR_OTHER] = "Other error",
    [MPI_ERR_INTERN] = "Internal error in the MPI library",
    [MPI_ERR_IN_STATUS] = "Error code is in the status",
    [MPI_ERR_PENDING] = "Request pending",
    [MPI_ERR_REQUEST] = "Invalid request",
    [MPI_ERR_ACCESS] = "Permission denied",
    [MPI_ERR_AMODE] = "Invalid file access mode",
    [MPI_ERR_BAD_FILE] = "Invalid file name",
    [MPI_ERR_CONVERSION] = "Data conversion failed",
    [MPI_ERR_DUP_DATAREP] = "Data representation already registered",
    [MPI_ERR_FILE_EXISTS] = "File already exists",
    [MPI_ERR_FILE_IN_USE] = "File in use by another process",
    [MPI_ERR_FILE] = "Invalid file handle",
    [MPI_ERR_INFO] = "Invalid info object",
    [MPI_ERR_INFO_KEY] = "Info key too long",
    [MPI_ERR_INFO_VALUE] = "Info value too long",
    [MPI_ERR_INFO_NOKEY] = "Info key not defined",
    [MPI_ERR_IO] = "Input/output error",
    [MPI_ERR_NAME] = "Service name not published",
    [MPI_ERR_NO_MEM] = "Out of memory",
    [MPI_ERR_NOT_SAME] = "Collective argument not identical on all processes",
    [MPI_ERR_NO_SPACE] = "Not enough space",
    [MPI_ERR_NO_SUCH_FILE] = "File does not exist",
    [MPI_ERR_PORT] = "Invalid port name",
    [MPI_ERR_QUOTA] = "Quota exceeded",
    [MPI_ERR_READ_ONLY] = "Read-only file or file system",
    [MPI_ERR_SERVICE] = "Invalid service name",
    [MPI_ERR_SPAWN] = "Could not spawn processes",
    [MPI_ERR_UNSUPPORTED_DATAREP] = "Unsupported data representation",
    [MPI_ERR_UNSUPPORTED_OPERATION] = "Unsupported operation",
    [MPI_ERR_WIN] = "Invalid window",
    [MPI_ERR_BASE] = "Invalid base address",
    [MPI_ERR_LOCKTYPE] = "Invalid lock type",
    [MPI_ERR_KEYVAL] = "Invalid attribute key",
    [MPI_ERR_RMA_CONFLICT] = "Conflicting accesses to a window",
    [MPI_ERR_RMA_SYNC] = "Wrong synchronization of one-sided calls",
    [MPI_ERR_SIZE] = "Invalid size argument",
    [MPI_ERR_DISP] = "Invalid displacement argument",
    [MPI_ERR_ASSERT] = "Invalid assert argument",
    [MPI_ERR_RMA_RANGE] = "Target memory outside the window",
    [MPI_ERR_RMA_ATTACH] = "Memory cannot be attached to the window",
    [MPI_ERR_RMA_SHARED] = "Memory cannot be shared",
    [MPI_ERR_RMA_FLAVOR] = "Wrong window flavor for this call",
    [MPI_T_ERR_MEMORY] = "Tool interface: out of memory",
    [MPI_T_ERR_NOT_INITIALIZED] = "Tool interface not initialized",
    [MPI_T_ERR_CANNOT_INIT] = "Tool interface cannot be initialized now",
    [MPI_T_ERR_INVALID_INDEX] = "Tool interface: invalid or deleted index",
    [MPI_T_ERR_INVALID_ITEM] = "Tool interface: item index out of range",
    [MPI_T_ERR_INVALID_HANDLE] = "Tool interface: invalid handle",
    [MPI_T_ERR_OUT_OF_HANDLES] = "Tool interface: no more handles available",
    [MPI_T_ERR_OUT_OF_SESSIONS] = "Tool interface: no more sessions available",
    [MPI_T_ERR_INVALID_SESSION] = "Tool interface: invalid session",
    [MPI_T_ERR_CVAR_SET_NOT_NOW] = "Tool interface: control variable cannot be set now",
    [MPI_T_ERR_CVAR_SET_NEVER] = "Tool interface: control variable cannot be set",
    [MPI_T_ERR_PVAR_NO_STARTSTOP] =
        "Tool interface: performance variable cannot be started or stopped",
    [MPI_T_ERR_PVAR_NO_WRITE] = "Tool interface: performance variable cannot be written or reset",
    [MPI_T_ERR_PVAR_NO_ATOMIC] =
        "Tool interface: performance variable cannot be read and written atomically",
    [MPI_T_ERR_INVALID_NAME] = "Tool interface: no variable or category of this name",
    [MPI_T_ERR_INVALID] = "Tool interface: invalid use",
    [MPI_ERR_SESSION] = "Invalid session",
    [MPI_ERR_PROC_ABORTED] = "Peer process aborted",
    [MPI_ERR_VALUE_TOO_LARGE] = "Value too large to store",
    [MPI_T_ERR_NOT_SUPPORTED] = "Tool interface: functionality not supported",
};

const char *px_mpi_error_string(int errorcode)
{
    const int n = (int)(sizeof(px_mpi_error_text) / sizeof(px_mpi_error_text[0]));

    /* class 54 is unassigned and left NULL by the table */
    if (errorcode < 0 || errorcode >= n || px_mpi_error_text[errorcode] == NULL)
        return "Unknown error class";
    return px_mpi_error_text[errorcode];
}
