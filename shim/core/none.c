/*
 * "none": counts primary messages and reports, never detects. The overhead
 * baseline: what the shim costs with no algorithm on top (DESIGN.md §3).
 */
#include "td_algo.h"

static const char *const none_types[1] = {"unused"};

static int none_on_control(td_ctx *c, void *st, int src, const td_msg *m)
{
    (void)st;
    return td_fail(c, "none: unexpected control message type %u from rank %d", m->type, src);
}

const td_algo td_algo_none = {
    .name = "none",
    .id = 9,
    .ntypes = 1,
    .type_names = none_types,
    .pb_size = 0,
    .flags = TD_ALGO_NODETECT,
    .state_size = 0,
    .on_control = none_on_control,
};
