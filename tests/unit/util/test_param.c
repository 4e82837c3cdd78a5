/* Unit tests of the parameter table and status codes. */
#include "px_unit.h"
#include "util/param.h"
#include "util/px_status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


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

    /* environment overrides, invalid values keep the default */
    setenv("PX_TCP_EAGER_LIMIT", "32k", 1);
    setenv("PX_SHM_CMA", "no", 1);
    setenv("PX_SPIN_COUNT", "not-a-number", 1);
    setenv("PX_NET", "tcp", 1);
    px_param_init();
    CHECK(px_params.tcp_eager_limit == 32768);
    CHECK(px_params.shm_cma == 0);
    CHECK(px_params.spin_count == 2000);
    CHECK(!strcmp(px_params.net, "tcp"));
    CHECK(px_params.shm_ring_slots == 64);

    CHECK(px_param_is_launcher_var("PX_RANK"));
    CHECK(!px_param_is_launcher_var("PX_NET"));

    CHECK(!strcmp(px_status_name(PX_ERR_TRUNCATED), "PX_ERR_TRUNCATED"));
    CHECK(strlen(px_status_string(PX_ERR_LINK_DOWN)) > 0);
    CHECK(px_status_is_link_error(PX_ERR_LINK_RESET));
    CHECK(!px_status_is_link_error(PX_ERR_PEER_DEAD));

    /* the printed reference mentions every variable */
    char buf[65536];
    FILE *f = fmemopen(buf, sizeof(buf), "w");
    px_param_print(f, "markdown");
    fclose(f);
    CHECK(strstr(buf, "`PX_NET`") != NULL);
    CHECK(strstr(buf, "`PX_SHM_EAGER_LIMIT`") != NULL);

    return px_unit_report();
}
