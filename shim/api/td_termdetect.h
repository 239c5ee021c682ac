/* Services of the termdetect algorithm (shim/core/termdetect.c) for the
 * termdetect API driver: declared work units and the guide's node state. */
#ifndef TD_TERMDETECT_H
#define TD_TERMDETECT_H
#include "td_core.h"

/* add n >= 0 declared work units to this rank's nWork; TD_EINVAL if the
 * context does not run the termdetect algorithm */
int td_termdetect_add_work(td_ctx *c, int64_t n);
/* 0 UP, 1 DOWN, 2 TERMINATE (state_type of include/termdetect.h), or TD_EINVAL */
int td_termdetect_state(const td_ctx *c);
#endif
