/* Loading the samples of this folder in the unit tests: `dir` is set from
 * the command line. */
#ifndef PX_TESTS_TOPO_SAMPLE_H
#define PX_TESTS_TOPO_SAMPLE_H

#include <stdio.h>

#include "topo/topo.h"

static const char *dir;

static px_topo_t *load(const char *name)
{
    char path[1024], err[512] = "";
    px_topo_t *t = NULL;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (px_topo_load(path, &t, err, sizeof(err)) != PX_OK)
        fprintf(stderr, "cannot load %s: %s\n", path, err);
    return t;
}

#endif
