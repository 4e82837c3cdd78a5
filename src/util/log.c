#include "log.h"
#include "clock.h"
#include "param.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int px_log_level_cur = PX_LOG_WARN;
static char px_log_prefix[64] = "plexus";
static char px_log_subsys[256];

static const char *const px_log_names[] = {"error", "warn", "info", "debug", "trace"};

/* Takes PX_LOG_LEVEL and PX_LOG_SUBSYS from the parameter table, which
 * calls this once they are read; until then WARN and every subsystem. */
void px_log_init(void)
{
    const char *lvl = px_params.log_level;
    const char *sub = px_params.log_subsys;
    (void)px_time_sec(); /* log times count from here (start-up), not from the first message */
    for (int i = 0; lvl && i < 5; i++)
        if (!strcmp(lvl, px_log_names[i]))
            px_log_level_cur = i;
    snprintf(px_log_subsys, sizeof(px_log_subsys), "%s%s%s", sub && *sub ? "," : "", sub ? sub : "",
             sub && *sub ? "," : "");
}

void px_log_set_prefix(const char *prefix)
{
    snprintf(px_log_prefix, sizeof(px_log_prefix), "%s", prefix);
}

int px_log_subsys_enabled(const char *subsys)
{
    char key[40];
    if (!px_log_subsys[0] || !strcmp(px_log_subsys, ",,"))
        return 1;
    snprintf(key, sizeof(key), ",%s,", subsys);
    return strstr(px_log_subsys, key) != NULL;
}

void px_log(px_log_level_t level, const char *subsys, const char *fmt, ...)
{
    char buf[1024];
    int n;
    va_list ap;

    if ((int)level > px_log_level_cur)
        return;
    if (level > PX_LOG_ERROR && !px_log_subsys_enabled(subsys))
        return;
    n = snprintf(buf, sizeof(buf), "[%s %s %s %.6f] ", px_log_prefix, px_log_names[level], subsys,
                 px_time_sec());
    va_start(ap, fmt);
    if (n >= 0 && n < (int)sizeof(buf))
        n += vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof(buf) - 1)
        n = (int)sizeof(buf) - 2;
    buf[n++] = '\n';
    /* one write keeps lines from several ranks whole */
    fwrite(buf, 1, (size_t)n, stderr);
    fflush(stderr);
}
