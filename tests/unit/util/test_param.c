/* Unit tests of the parameter table and status codes. */
#include "px_unit.h"
#include "util/param.h"
#include "util/px_status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int near(double a, double b)
{
    double diff = a > b ? a - b : b - a, scale = b > 1 ? b : b < -1 ? -b : 1;
    return diff <= 1e-12 * scale;
}

/* px_param_set fails for `value` of `var`, naming the variable with the
 * value and mentioning `accepted` */
static int refused(const char *var, const char *value, const char *accepted)
{
    char err[512] = "", want[256];
    if (px_param_set(var, value, err, sizeof(err)) == PX_OK)
        return 0;
    snprintf(want, sizeof(want), "%s=%s:", var, value);
    if (strncmp(err, want, strlen(want)) || !strstr(err, accepted)) {
        fprintf(stderr, "  message: %s\n", err);
        return 0;
    }
    return 1;
}

static int set_ok(const char *var, const char *value)
{
    char err[512] = "";
    px_status_t st = px_param_set(var, value, err, sizeof(err));
    if (st != PX_OK)
        fprintf(stderr, "  %s=%s refused: %s\n", var, value, err);
    return st == PX_OK;
}

int main(void)
{
    size_t v;
    CHECK(px_param_parse_size("64k", &v) == PX_OK && v == 65536);
    CHECK(px_param_parse_size("2M", &v) == PX_OK && v == 2u << 20);
    CHECK(px_param_parse_size("1g", &v) == PX_OK && v == 1u << 30);
    CHECK(px_param_parse_size("123", &v) == PX_OK && v == 123);
    CHECK(px_param_parse_size("12kb", &v) == PX_OK && v == 12288);
    CHECK(px_param_parse_size("-5", &v) != PX_OK);
    CHECK(px_param_parse_size("abc", &v) != PX_OK);
    CHECK(px_param_parse_size("10x", &v) != PX_OK);
    CHECK(px_param_parse_size("99999999999999g", &v) != PX_OK); /* would wrap */

    /* durations: a unit, or a plain number in the row's unit */
    double d = -1;
    CHECK(px_param_parse_duration("500ms", "s", &d) == PX_OK && near(d, 0.5));
    CHECK(px_param_parse_duration("0.5s", "s", &d) == PX_OK && near(d, 0.5));
    CHECK(px_param_parse_duration("2us", "s", &d) == PX_OK && near(d, 2e-6));
    CHECK(px_param_parse_duration("250ns", "us", &d) == PX_OK && near(d, 0.25));
    CHECK(px_param_parse_duration("2min", "s", &d) == PX_OK && near(d, 120));
    CHECK(px_param_parse_duration("1.5 ms", "ms", &d) == PX_OK && near(d, 1.5));
    CHECK(px_param_parse_duration("30", "s", &d) == PX_OK && near(d, 30));
    CHECK(px_param_parse_duration("30", "ms", &d) == PX_OK && near(d, 30));
    CHECK(px_param_parse_duration("1e-3", "s", &d) == PX_OK && near(d, 1e-3));
    CHECK(px_param_parse_duration("5parsecs", "s", &d) != PX_OK);
    CHECK(px_param_parse_duration("ms", "s", &d) != PX_OK);
    CHECK(px_param_parse_duration("10m", "s", &d) != PX_OK); /* minutes or milli: neither */
    CHECK(px_param_parse_duration("", "s", &d) != PX_OK);
    CHECK(px_param_parse_duration("inf", "s", &d) != PX_OK);
    CHECK(px_param_parse_duration("1", "fortnights", &d) != PX_OK);

    /* environment overrides; a bad value keeps the default and fails the
     * whole read, naming every bad variable and what it accepts */
    setenv("PX_TCP_EAGER_LIMIT", "32k", 1);
    setenv("PX_SHM_CMA", "no", 1);
    setenv("PX_SPIN_COUNT", "not-a-number", 1);
    setenv("PX_NET", "tcp", 1);
    setenv("PX_RAIL_POLICY", "fastest", 1);
    setenv("PX_BCAST_ALGORITHM", "KNOMIAL", 1);
    setenv("PX_RAIL_DETECT", "250ms", 1);
    setenv("PX_PARTITION_TIMEOUT", "-1", 1);
    setenv("PX_PROGRESS_MODE", "", 1); /* empty: the default */
    CHECK(px_param_init() == PX_ERR_INVALID_PARAM);
    CHECK(px_param_init() == PX_ERR_INVALID_PARAM); /* once, then the same answer */
    const char *err = px_param_error();
    CHECK(strstr(err, "PX_SPIN_COUNT=not-a-number: ") && strstr(err, "an integer >= 0"));
    CHECK(strstr(err, "PX_RAIL_POLICY=fastest: ") &&
          strstr(err, "one of bind, rr, wrr, window, even, weighted, adaptive, bss or epc"));
    CHECK(strstr(err, "PX_PARTITION_TIMEOUT=-1: ") && strstr(err, "a duration >= 0"));
    /* exactly those three (no row refuses its own default) */
    int nbad = 1;
    for (const char *p = err; (p = strstr(p, "; ")); p++)
        nbad++;
    CHECK(nbad == 3);
    CHECK(px_params.tcp_eager_limit == 32768);
    CHECK(px_params.shm_cma == 0);
    CHECK(px_params.spin_count == 2000);
    CHECK(!strcmp(px_params.net, "tcp"));
    CHECK(px_params.shm_ring_slots == 64);
    CHECK(!strcmp(px_params.rail_policy, "adaptive"));
    CHECK(!strcmp(px_params.bcast_algorithm, "knomial")); /* as spelled in the row */
    CHECK(near(px_params.rail_detect, 0.25));
    CHECK(near(px_params.partition_timeout, 30));
    CHECK(!strcmp(px_params.progress_mode, "auto"));

    /* ENUM: any case, aliases, the row's spelling; a refused value changes nothing */
    CHECK(set_ok("PX_RAIL_POLICY", "BSS") && !strcmp(px_params.rail_policy, "bss"));
    CHECK(set_ok("PX_RAIL_POLICY", "epc") && !strcmp(px_params.rail_policy, "epc"));
    CHECK(refused("PX_RAIL_POLICY", "fastest", "expected one of bind, rr,"));
    CHECK(refused("PX_RAIL_POLICY", "bs", "bss or epc"));
    CHECK(refused("PX_RAIL_POLICY", "bss,rr", "bss or epc"));
    CHECK(!strcmp(px_params.rail_policy, "epc"));
    CHECK(set_ok("PX_LOG_LEVEL", "3") && !strcmp(px_params.log_level, "debug"));
    CHECK(set_ok("PX_LOG_LEVEL", "Info") && !strcmp(px_params.log_level, "info"));
    CHECK(refused("PX_LOG_LEVEL", "5", "trace (or 4)"));
    CHECK(refused("PX_LOG_LEVEL", "=0", "error (or 0)"));
    /* several aliases: PX_PROFILE keeps every spelling of its old BOOL */
    CHECK(set_ok("PX_PROFILE", "ON") && !strcmp(px_params.profile, "yes"));
    CHECK(set_ok("PX_PROFILE", "false") && !strcmp(px_params.profile, "no"));
    CHECK(set_ok("PX_PROFILE", "1") && !strcmp(px_params.profile, "yes"));
    CHECK(set_ok("PX_PROFILE", "topo") && !strcmp(px_params.profile, "topo"));
    CHECK(refused("PX_PROFILE", "of",
                  "no (or 0, off or false), yes (or 1, on or true), topo or all"));
    CHECK(refused("PX_PROFILE", "=", "topo or all"));
    CHECK(set_ok("PX_ALLTOALL_ALGORITHM", "staggered") &&
          !strcmp(px_params.alltoall_algorithm, "staggered"));
    CHECK(refused("PX_ALLTOALL_ALGORITHM", "ring", "auto, pairwise, bruck"));
    CHECK(set_ok("PX_BIND", "") && !strcmp(px_params.bind, "spread"));
    char e[512];
    CHECK(px_param_check("PX_BIND", "core", e, sizeof(e)) == PX_OK &&
          !strcmp(px_params.bind, "spread")); /* checked, not stored */
    CHECK(px_param_check("PX_BIND", "nowhere", e, sizeof(e)) != PX_OK);

    /* DURATION: plain numbers keep their old meaning (seconds here) */
    CHECK(set_ok("PX_RAIL_DETECT", "2") && near(px_params.rail_detect, 2));
    CHECK(set_ok("PX_RAIL_DETECT", "500ms") && near(px_params.rail_detect, 0.5));
    CHECK(set_ok("PX_RAIL_RTO_MIN", "2ms") && near(px_params.rail_rto_min, 0.002));
    CHECK(set_ok("PX_TCP_CONNECT_TIMEOUT", "1min") && near(px_params.tcp_connect_timeout, 60));
    CHECK(refused("PX_RAIL_DETECT", "0", "a duration > 0"));
    CHECK(refused("PX_RAIL_DETECT", "0ms", "or a plain number of seconds"));
    CHECK(refused("PX_RAIL_PROBE_MAX", "soon", "a number with a unit ns, us, ms, s or min"));
    CHECK(near(px_params.rail_detect, 0.5));

    /* limits of numbers and sizes */
    CHECK(set_ok("PX_RAIL_ALPHA", "1") && near(px_params.rail_alpha, 1));
    CHECK(refused("PX_RAIL_ALPHA", "1.5", "a number >= 0 and <= 1"));
    CHECK(set_ok("PX_RAIL_MIN_SHARE", "0.49"));
    CHECK(refused("PX_RAIL_MIN_SHARE", "0.5", ">= 0 and < 0.5"));
    CHECK(refused("PX_RAIL_WINDOW", "0", "an integer >= 1"));
    CHECK(set_ok("PX_SHM_RING_SLOTS", "0x10") && px_params.shm_ring_slots == 16);
    CHECK(refused("PX_SHM_RING_SLOTS", "48", "a power of two"));
    CHECK(refused("PX_SHM_RING_SLOTS", "2", ">= 4"));
    CHECK(set_ok("PX_SHM_CELL_SIZE", "8k") && px_params.shm_cell_size == 8192);
    CHECK(refused("PX_SHM_CELL_SIZE", "5000", "a multiple of 64"));
    CHECK(refused("PX_SHM_CELL_SIZE", "1k", ">= 4096"));
    CHECK(refused("PX_TCP_POLL_DIRECT", "9", "<= 8"));
    CHECK(refused("PX_BCAST_KNOMIAL_RADIX", "1", ">= 2 and <= 64"));
    CHECK(set_ok("PX_SHM_EAGER_LIMIT", "auto") && px_params.shm_eager_limit == PX_PARAM_SIZE_AUTO);
    CHECK(refused("PX_TCP_EAGER_LIMIT", "auto", "a size in bytes (k, m, g suffixes)"));
    CHECK(refused("PX_COLL_HIER", "maybe", "yes, no"));
    CHECK(set_ok("PX_CHANNELS", "") && !strcmp(px_params.channels, "")); /* strings keep "" */
    CHECK(px_param_set("PX_NO_SUCH_THING", "1", e, sizeof(e)) != PX_OK &&
          strstr(e, "PX_NO_SUCH_THING") && strstr(e, "unknown"));

    CHECK(px_param_is_launcher_var("PX_RANK"));
    CHECK(px_param_is_launcher_var("PX_NODE_NAME"));
    CHECK(!px_param_is_launcher_var("PX_NET"));

    CHECK(!strcmp(px_status_name(PX_ERR_TRUNCATED), "PX_ERR_TRUNCATED"));
    CHECK(strlen(px_status_string(PX_ERR_LINK_DOWN)) > 0);
    CHECK(px_status_is_link_error(PX_ERR_LINK_RESET));
    CHECK(!px_status_is_link_error(PX_ERR_PEER_DEAD));

    /* the printed reference mentions every variable, its type and what it accepts */
    static char buf[1 << 18];
    FILE *f = fmemopen(buf, sizeof(buf), "w");
    px_param_print(f, "markdown");
    fclose(f);
    CHECK(strstr(buf, "`PX_NET`") != NULL);
    CHECK(strstr(buf, "`PX_SHM_EAGER_LIMIT`") != NULL);
    CHECK(strstr(buf, "| `PX_RAIL_POLICY` | enum | `adaptive` | one of `bind`, `rr`,") != NULL);
    CHECK(strstr(buf, "| `PX_RAIL_DETECT` | duration | `0.5` | a duration > 0 (") != NULL);
    CHECK(strstr(buf, "`PX_JOB_SECRET`") != NULL);

    return px_unit_report();
}
