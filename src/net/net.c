#include "net.h"

#include <string.h>

static const px_net_ops_t *const px_net_registry[] = {
    &px_net_self_ops,
    &px_net_shm_ops,
    &px_net_tcp_ops,
    &px_net_udp_ops,
#ifdef PX_HAVE_OFI
    &px_net_ofi_ops,
#endif
    NULL,
};

const px_net_ops_t *const *px_net_all(void) { return px_net_registry; }

const px_net_ops_t *px_net_find(const char *name)
{
    for (int i = 0; px_net_registry[i]; i++)
        if (!strcmp(px_net_registry[i]->name, name))
            return px_net_registry[i];
    return NULL;
}
