/* Unit tests of the lane plan: DSCP names, and the classes and marks of
 * six lanes under policy class with one class's mark replaced (the MPI
 * tests check two to four lanes through the sockets' marks). */
#include "px_unit.h"
#include "util/lanes.h"
#include "util/param.h"

#include <stdlib.h>
#include <string.h>

static int dscp(const char *s) { return px_lane_dscp_parse(s, strlen(s)); }

int main(void)
{
    CHECK(dscp("EF") == 46 && dscp("ef") == 46);
    CHECK(dscp("CS0") == 0 && dscp("CS5") == 40 && dscp("cs7") == 56);
    CHECK(dscp("AF11") == 10 && dscp("AF21") == 18 && dscp("AF41") == 34 && dscp("AF43") == 38);
    CHECK(dscp("0") == 0 && dscp("63") == 63);
    CHECK(dscp("64") == -1 && dscp("AF51") == -1 && dscp("AF14") == -1 && dscp("CS8") == -1);
    CHECK(dscp("") == -1 && dscp("gold") == -1 && dscp("1x") == -1);

    setenv("PX_LANES", "6", 1);
    setenv("PX_LANE_DSCP", "small=EF", 1);
    CHECK(px_param_init() == PX_OK);
    CHECK(px_lane_plan_init() == PX_OK);
    const px_lane_plan_t *p = &px_lane_plan;
    CHECK(p->n == 6 && !p->distribute);
    CHECK(p->first[PX_LANE_SMALL] == 0 && p->count[PX_LANE_SMALL] == 1);
    CHECK(p->first[PX_LANE_COLL] == 1 && p->count[PX_LANE_COLL] == 1);
    CHECK(p->first[PX_LANE_MEDIUM] == 2 && p->count[PX_LANE_MEDIUM] == 1);
    CHECK(p->first[PX_LANE_BULK] == 3 && p->count[PX_LANE_BULK] == 3);
    static const int tos[6] = {46 << 2, 34 << 2, 18 << 2, 8 << 2, 8 << 2, 8 << 2};
    static const int prio[6] = {6, 4, 0, 2, 2, 2};
    for (int i = 0; i < 6; i++)
        CHECK(p->tos[i] == tos[i] && p->prio[i] == prio[i]);
    char d[64];
    px_lane_describe(4, d, sizeof(d));
    CHECK(!strcmp(d, "lane 4 (bulk) dscp 8 prio 2"));
    px_lane_describe(0, d, sizeof(d));
    CHECK(!strcmp(d, "lane 0 (small) dscp 46 prio 6"));
    return px_unit_report();
}
