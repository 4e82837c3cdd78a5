#include "px_status.h"

const char *px_status_string(px_status_t status)
{
    switch (status) {
#define PX_STATUS_CASE(name, value, str)                                                           \
    case name:                                                                                     \
        return str;
        PX_STATUS_LIST(PX_STATUS_CASE)
#undef PX_STATUS_CASE
    }
    return "unknown status";
}

const char *px_status_name(px_status_t status)
{
    switch (status) {
#define PX_STATUS_CASE(name, value, str)                                                           \
    case name:                                                                                     \
        return #name;
        PX_STATUS_LIST(PX_STATUS_CASE)
#undef PX_STATUS_CASE
    }
    return "PX_ERR_UNKNOWN";
}
