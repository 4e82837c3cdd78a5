/* Plexus status codes: one list, names and strings generated from it.
 * PX_OK = 0, PX_INPROGRESS > 0, errors < 0. Link errors (-100..-199) are
 * absorbed by the rail layer; peer errors (-200..-299) reach MPI handlers. */
#ifndef PX_STATUS_H
#define PX_STATUS_H

#define PX_STATUS_LIST(X)                                                                          \
    X(PX_OK, 0, "success")                                                                         \
    X(PX_INPROGRESS, 1, "operation in progress")                                                   \
    X(PX_ERR_NO_MEMORY, -1, "out of memory")                                                       \
    X(PX_ERR_INVALID_PARAM, -2, "invalid parameter")                                               \
    X(PX_ERR_IO, -3, "input/output error")                                                         \
    X(PX_ERR_UNSUPPORTED, -4, "operation not supported")                                           \
    X(PX_ERR_NOT_FOUND, -5, "not found")                                                           \
    X(PX_ERR_TIMEOUT, -6, "timed out")                                                             \
    X(PX_ERR_BUSY, -7, "resource busy")                                                            \
    X(PX_ERR_TRUNCATED, -8, "message truncated")                                                   \
    X(PX_ERR_AUTH, -9, "authentication failed")                                                    \
    X(PX_ERR_PROTOCOL, -10, "protocol violation")                                                  \
    X(PX_ERR_EXISTS, -11, "already exists")                                                        \
    X(PX_ERR_CANCELED, -12, "canceled")                                                            \
    X(PX_ERR_LINK_DOWN, -100, "link down")                                                         \
    X(PX_ERR_LINK_RESET, -101, "connection reset by peer")                                         \
    X(PX_ERR_LINK_UNREACHABLE, -102, "network unreachable")                                        \
    X(PX_ERR_PEER_UNREACHABLE, -200, "peer unreachable")                                           \
    X(PX_ERR_PEER_DEAD, -201, "peer process failed")                                               \
    X(PX_ERR_JOB_ABORTED, -202, "job aborted")

typedef enum px_status {
#define PX_STATUS_ENUM(name, value, str) name = value,
    PX_STATUS_LIST(PX_STATUS_ENUM)
#undef PX_STATUS_ENUM
} px_status_t;

const char *px_status_string(px_status_t status);
const char *px_status_name(px_status_t status);

static inline int px_status_is_link_error(px_status_t s) { return s <= -100 && s > -200; }

#endif
