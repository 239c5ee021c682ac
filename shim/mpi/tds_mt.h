/*
 * MPI_THREAD_MULTIPLE (tds_mt.c, README "Threads"): the lock of the state
 * and the rule "the rank is passive when every thread using MPI is".
 */
#ifndef TDS_MT_H
#define TDS_MT_H

#include "tds_state.h"

/* ---- MPI_THREAD_MULTIPLE (tds_mt.c, README "Threads") ----
 * One lock serializes tdshim's state; the wrappers take it only when the
 * program was granted MPI_THREAD_MULTIPLE (tds.mt, fixed at init), so a
 * single-threaded program pays one predictable branch. A call that waits
 * (every blocking call is a test loop then) lets the others in on every
 * turn (tds_mt_pause), and never blocks inside MPI holding the lock. */
extern int tds_mt;
void tds_mt_init(void);   /* MPI granted MPI_THREAD_MULTIPLE: before tds.on */
void tds_mt_lock_slow(void);
void tds_mt_unlock_slow(void);
void tds_mt_pause(int long_wait);
static inline void tds_lock(void)
{
    if (__builtin_expect(tds_mt, 0))
        tds_mt_lock_slow();
}
/* the same for collectives: a thread that only calls collectives (the
 * main thread between MPI_Init, a barrier and joining its workers) is not
 * counted by the passivity rule, or it would keep its rank busy for ever */
void tds_mt_lock_coll(void);
static inline void tds_lock_coll(void)
{
    if (__builtin_expect(tds_mt, 0))
        tds_mt_lock_coll();
}
static inline void tds_unlock(void)
{
    if (__builtin_expect(tds_mt, 0))
        tds_mt_unlock_slow();
}
/* waits are test loops under MPI_THREAD_MULTIPLE (the lock let go) */
#define TDS_LOOP_WAITS() (__builtin_expect(tds_mt, 0))
/* go_passive under MPI_THREAD_MULTIPLE: 1 if every other thread using MPI
 * is idle too (this thread now is) */
int tds_mt_all_idle(void);
int tds_mt_others_idle(void); /* cand_poll: no side effect */
void tds_mt_describe(char *buf, size_t len); /* "; threads: N using MPI, M busy" */

#endif
