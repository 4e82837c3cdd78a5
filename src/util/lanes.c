/* The lane plan: lanes per subchannel, classes per lane, marks per lane. */
#include "lanes.h"
#include "log.h"
#include "param.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

px_lane_plan_t px_lane_plan = {.n = 1, .count = {1, 1, 1, 1}, .tos = {-1}, .prio = {-1}};

static const char *const px_lane_class_names[PX_LANE_NCLASS] = {"small", "coll", "medium", "bulk"};

/* Default marks of the classes: expedited-like for control and small
 * messages, the low-latency data class for collectives, a plain assured
 * class for medium messages and the lower-effort class for bulk (RFC 4594),
 * with the Linux priorities that put them in pfifo_fast's bands 0, 1, 1, 2. */
static const int px_lane_class_dscp[PX_LANE_NCLASS] = {40 /* CS5 */, 34 /* AF41 */, 18 /* AF21 */,
                                                       8 /* CS1 */};
static const int px_lane_class_prio[PX_LANE_NCLASS] = {6, 4, 0, 2};

static char px_lane_err[256];

/* A bad value, kept for px_lane_plan_error: MPI_Init or the rail layer says it. */
__attribute__((format(printf, 1, 2))) static void px_lane_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(px_lane_err, sizeof(px_lane_err), fmt, ap);
    va_end(ap);
}

const char *px_lane_plan_error(void) { return px_lane_err; }

const char *px_lane_class_name(int c)
{
    return c >= 0 && c < PX_LANE_NCLASS ? px_lane_class_names[c] : "?";
}

static int px_lane_class_find(const char *s, size_t len)
{
    for (int c = 0; c < PX_LANE_NCLASS; c++)
        if (strlen(px_lane_class_names[c]) == len && !strncasecmp(s, px_lane_class_names[c], len))
            return c;
    return -1;
}

int px_lane_dscp_parse(const char *s, size_t len)
{
    char b[8];
    if (!len || len >= sizeof(b))
        return -1;
    memcpy(b, s, len);
    b[len] = 0;
    if (isdigit((unsigned char)b[0])) {
        char *end;
        long v = strtol(b, &end, 10);
        return *end || v > 63 ? -1 : (int)v;
    }
    if (!strcasecmp(b, "EF"))
        return 46;
    if (len == 3 && !strncasecmp(b, "CS", 2) && b[2] >= '0' && b[2] <= '7')
        return (b[2] - '0') << 3;
    if (len == 4 && !strncasecmp(b, "AF", 2) && b[2] >= '1' && b[2] <= '4' && b[3] >= '1' &&
        b[3] <= '3')
        return ((b[2] - '0') << 3) | ((b[3] - '0') << 1);
    return -1;
}

/* Which lanes carry each class: in order of urgency, one lane each while
 * there are enough, bulk taking the lanes beyond four; with fewer lanes
 * neighbouring classes share one. */
static void px_lane_classes(px_lane_plan_t *p)
{
    static const int share[4][PX_LANE_NCLASS] = {
        {0, 0, 0, 0}, /* one lane */
        {0, 0, 1, 1}, /* small and coll; medium and bulk */
        {0, 1, 1, 2}, /* small; coll and medium; bulk */
        {0, 1, 2, 3},
    };
    int row = p->n < 4 ? p->n - 1 : 3;
    for (int c = 0; c < PX_LANE_NCLASS; c++) {
        p->first[c] = share[row][c];
        p->count[c] = 1;
    }
    if (p->n > 4)
        p->count[PX_LANE_BULK] = p->n - 3;
}

/* The most urgent class lane i carries (class policy). */
static int px_lane_top_class(const px_lane_plan_t *p, int lane)
{
    for (int c = 0; c < PX_LANE_NCLASS; c++)
        if (lane >= p->first[c] && lane < p->first[c] + p->count[c])
            return c;
    return PX_LANE_BULK;
}

/* PX_LANE_DSCP: class=value pairs into dscp[], or one value per lane into
 * tos[] (as DSCP values). Returns 0, or -1 with the reason logged. */
static int px_lane_dscp_list(px_lane_plan_t *p, int *dscp)
{
    const char *s = px_params.lane_dscp;
    int nval = 0, npair = 0;
    while (*s) {
        const char *e = s + strcspn(s, ",");
        const char *eq = memchr(s, '=', (size_t)(e - s));
        int c = -1, v;
        if (eq) {
            c = px_lane_class_find(s, (size_t)(eq - s));
            v = px_lane_dscp_parse(eq + 1, (size_t)(e - eq - 1));
            npair++;
        } else {
            v = px_lane_dscp_parse(s, (size_t)(e - s));
            if (nval < PX_LANE_MAX)
                p->tos[nval] = v;
            nval++;
        }
        if (eq && c < 0) {
            px_lane_fail("PX_LANE_DSCP=%s: '%.*s' is not a class (small, medium, bulk, coll)",
                         px_params.lane_dscp, (int)(eq - s), s);
            return -1;
        }
        if (v < 0) {
            px_lane_fail("PX_LANE_DSCP=%s: '%.*s' is not a DSCP value (CS0-CS7, AF11-AF43, EF, "
                         "0-63)",
                         px_params.lane_dscp, (int)(e - (eq ? eq + 1 : s)), eq ? eq + 1 : s);
            return -1;
        }
        if (eq)
            dscp[c] = v;
        s = *e ? e + 1 : e;
    }
    if (nval && npair) {
        px_lane_fail("PX_LANE_DSCP=%s: give one value per lane or class=value pairs, not both",
                     px_params.lane_dscp);
        return -1;
    }
    if (nval && nval != p->n) {
        px_lane_fail("PX_LANE_DSCP=%s: %d values for %d lanes (PX_LANES=%d)", px_params.lane_dscp,
                     nval, p->n, p->n);
        return -1;
    }
    if (npair && p->distribute) {
        px_lane_fail("PX_LANE_DSCP=%s: values per class need PX_LANE_POLICY=class; with distribute "
                     "give one value per lane",
                     px_params.lane_dscp);
        return -1;
    }
    return nval;
}

static px_status_t px_lane_plan_build(px_lane_plan_t *p)
{
    int dscp[PX_LANE_NCLASS];
    memcpy(dscp, px_lane_class_dscp, sizeof(dscp));
    p->n = (int)px_params.lanes;
    p->distribute = !strcmp(px_params.lane_policy, "distribute");
    px_lane_classes(p);
    int nval = px_lane_dscp_list(p, dscp);
    if (nval < 0)
        return PX_ERR_INVALID_PARAM;
    int marked = p->n > 1 || px_params.lane_dscp[0];
    for (int i = 0; i < p->n; i++) {
        int top = px_lane_top_class(p, i);
        int d = nval ? p->tos[i] : p->distribute ? 10 + 8 * (i % 4) : dscp[top];
        p->tos[i] = marked ? d << 2 : -1;
        p->prio[i] = marked ? (p->distribute ? 0 : px_lane_class_prio[top]) : -1;
    }
    const char *j = px_params.lane_job_class;
    if (*j) {
        int c = px_lane_class_find(j, strlen(j));
        int d = c >= 0 ? dscp[c] : px_lane_dscp_parse(j, strlen(j));
        if (d < 0) {
            px_lane_fail("PX_LANE_JOB_CLASS=%s: expected a class (small, medium, bulk, coll) or a "
                         "DSCP value (CS0-CS7, AF11-AF43, EF, 0-63)",
                         j);
            return PX_ERR_INVALID_PARAM;
        }
        if (px_params.lane_dscp[0])
            px_warn("rail", "PX_LANE_JOB_CLASS=%s overrides PX_LANE_DSCP=%s", j,
                    px_params.lane_dscp);
        for (int i = 0; i < p->n; i++) {
            p->tos[i] = d << 2;
            p->prio[i] = c >= 0 ? px_lane_class_prio[c] : 0;
        }
    }
    return PX_OK;
}

px_status_t px_lane_plan_init(void)
{
    static int done;
    static px_status_t result;
    if (!done) {
        px_lane_plan_t p;
        memset(&p, 0, sizeof(p));
        result = px_lane_plan_build(&p);
        if (result == PX_OK)
            px_lane_plan = p;
        done = 1;
    }
    return result;
}

void px_lane_describe(int lane, char *buf, size_t len)
{
    const px_lane_plan_t *p = &px_lane_plan;
    size_t o = (size_t)snprintf(buf, len, "lane %d", lane);
    if (!p->distribute && p->n > 1) {
        const char *sep = " (";
        for (int c = 0; c < PX_LANE_NCLASS && o < len; c++)
            if (lane >= p->first[c] && lane < p->first[c] + p->count[c]) {
                o += (size_t)snprintf(buf + o, len - o, "%s%s", sep, px_lane_class_names[c]);
                sep = ", ";
            }
        if (o < len)
            o += (size_t)snprintf(buf + o, len - o, ")");
    }
    if (o < len && lane < PX_LANE_MAX && p->tos[lane] >= 0)
        snprintf(buf + o, len - o, " dscp %d prio %d", p->tos[lane] >> 2, p->prio[lane]);
}
