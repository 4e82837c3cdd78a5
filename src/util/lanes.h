/* QoS lanes (docs/lanes.md): how many lanes each subchannel has, which
 * traffic class goes on which lane, and how each lane is marked. Read once
 * from PX_LANES, PX_LANE_POLICY, PX_LANE_DSCP and PX_LANE_JOB_CLASS, and
 * shared by the transports (which mark their sockets) and the rail layer
 * (which chooses a frame's lane), so both agree without talking. */
#ifndef PX_LANES_H
#define PX_LANES_H

#include "px_status.h"

#include <stddef.h>

#define PX_LANE_MAX 8

/* Traffic classes, most urgent first. */
enum { PX_LANE_SMALL, PX_LANE_COLL, PX_LANE_MEDIUM, PX_LANE_BULK, PX_LANE_NCLASS };

typedef struct px_lane_plan {
    int n;          /* lanes per subchannel */
    int distribute; /* PX_LANE_POLICY=distribute, else class */
    /* class policy: the lanes of each class are first .. first + count - 1 */
    int first[PX_LANE_NCLASS], count[PX_LANE_NCLASS];
    int tos[PX_LANE_MAX];  /* IP_TOS byte of each lane (DSCP << 2), -1: left as it is */
    int prio[PX_LANE_MAX]; /* SO_PRIORITY of each lane, -1: left as it is */
} px_lane_plan_t;

/* One lane, unmarked, until px_lane_plan_init. */
extern px_lane_plan_t px_lane_plan;

/* Builds the plan from the parameters (px_param_init first); a bad value
 * is logged naming the variable and what it accepts, and the result is
 * PX_ERR_INVALID_PARAM. Later calls return the first one's result. */
px_status_t px_lane_plan_init(void);
/* Why it failed, naming the variable ("" when it did not). */
const char *px_lane_plan_error(void);

/* A DSCP value from its name (CS0-CS7, AF11-AF43, EF, case ignored) or
 * number 0-63; -1 when it is neither. */
int px_lane_dscp_parse(const char *s, size_t len);

const char *px_lane_class_name(int c);

/* "lane 1 (medium, coll) dscp AF41 prio 4" for lane i, into buf. */
void px_lane_describe(int lane, char *buf, size_t len);

#endif
