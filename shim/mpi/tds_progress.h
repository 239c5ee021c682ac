/*
 * Progress and the idle notions (tds_progress.c): the control transport,
 * the program's polls and waits, passivity. Work that waits for later
 * (pairs, freed receives) runs through hooks set at init (tds.held_work).
 */
#ifndef TDS_PROGRESS_H
#define TDS_PROGRESS_H

#include "tds_mt.h"
#include "tds_comm.h"
#include "tds_state.h"

/* Entry of a program poll (Iprobe, Improbe, Test*, Request_get_status):
 * under TDSHIM_IDLE=spin the gap between polls is the program's time from
 * the end of one poll to the start of the next, not the time spent inside
 * MPI and tdshim (tds_progress.c, spin_poll). One load and a branch otherwise. */
void tds_poll_enter_slow(void);
static inline int tds_poll_enter_needed(void)
{
    return tds.nheld != 0 || tds.cf.idle == TDS_IDLE_SPIN;
}
static inline void tds_poll_enter(void)
{
    if (__builtin_expect(tds_poll_enter_needed(), 0))
        tds_poll_enter_slow(); /* out of line: no frame for the clock read in the callers */
}


/* ---- control transport, progress, notification ---- */
#define TDS_CTL_TAG 7 /* the only tag on the private communicator */
/* the core's transport (td_io): a control message to dest, an announcement */
void tds_ctl_send(void *user, int dest, const uint8_t *wire);
void tds_announce(void *user, uint32_t episode);
void tds_poll_control(void);          /* drain control messages, reap sends */
int tds_ctl_take(uint8_t *wire, int *src); /* a control message, if one came: 1, or 0 */
void tds_ctl_cancel(void);           /* the standing control receive cancelled (finalize; Open MPI) */
#if defined(OPEN_MPI)
MPI_Request tds_ctl_handle(void);    /* the standing control receive (posted if it was not) */
void tds_ctl_tested(int done, MPI_Request h, const MPI_Status *st); /* ...tested in the program's call */
#endif
/* The core asked for the control channel to be drained (td_ctx.want_poll:
 * a prepaid primary's BORROW or grant, or a REFILL's grant, is waiting,
 * and the rank may make no call that would look). The request counts in
 * tds.nheld (tds_want_poll_held), so the completion calls and waiting
 * loops that already look at it drain the channel (tds_held_progress);
 * the calls that look at nothing else (a send with an on_send, a flat
 * blocking receive with a header, MPI_Start, MPI_Wait*) call
 * tds_after_body: the same at the end of the call. */
void tds_want_poll_held(void *user);
void tds_want_poll_run(void);
static inline __attribute__((always_inline)) void tds_after_body(void)
{
    if (__builtin_expect(tds.core.want_poll, 0))
        tds_want_poll_run();
}
void tds_set_passive(void);           /* the rank is passive by the idle notion */
/* A program poll: kind 0 probe, 1 test; recv: in scope (tds_poll_scope);
 * found: it found a primary message or the notification. A found poll is
 * two stores, inline (the empty poll's work, measure mode's included, has
 * a frame of its own: tds_empty_poll); tds_idle_poll_rc returns rc, so
 * that a completion call's last call stays a tail call. */
void tds_empty_poll(int kind, int recv);
int tds_empty_poll_rc(int kind, int recv, int rc);
/* An active rank probes for control messages at one poll out of scope in
 * TDS_UNSCOPED_CTL (tds_progress.c, idle_poll_notion, where the argument is) */
enum { TDS_UNSCOPED_CTL = 16 };
/* tds_empty_poll's first case inline: an empty poll out of scope (!recv)
 * on an active rank that is not due to probe for control messages, with
 * nothing held (tds.nheld: no pair or orphan to finish, no control channel
 * to drain), outside measure mode or where no candidate stands in it
 * (tds_cand_none). What tds_empty_poll would count; 1 if
 * it did. A busy rank's test of its standing receive for steal requests
 * (issue 37's work_steal, every 4 nodes: icount busy) no longer calls it:
 * tds_idle_poll's callers (the Test* calls) only. */
/* the report's count of an empty poll out of scope (tds_empty_poll's, and tds_unscoped_quick's) */
static inline __attribute__((always_inline)) void tds_count_unscoped(int kind)
{
    tds.m.empty_polls++;
    tds.m.unscoped_polls += kind == 0 || tds.cf.idle == TDS_IDLE_TEST || tds.cf.idle == TDS_IDLE_SPIN ||
                            tds.cf.notify == TDS_NOTIFY_NONE;
}
/* Measure mode: does an idle notion judge the rank passive now (tds.cand;
 * never outside measure mode, where only cand_judge sets one)?
 * While none does, a poll out of scope has nothing to judge: the
 * candidates' breaches are looked for only where one stands (cand_judge),
 * and the tag a poll found is taken for work only where spin's stands
 * (a candidate is set only by cand_judge, after it has looked at that tag:
 * the tag left behind is never read), so such a poll is only counted, as
 * outside measure mode (issue 37: work_steal's busy polls, every 4 nodes,
 * with its steal-request tag ignored) */
static inline __attribute__((always_inline)) int tds_cand_none(void)
{
    return tds.cand == 0;
}
static inline __attribute__((always_inline)) int tds_unscoped_quick(int kind, int recv)
{
    if (recv || __builtin_expect(!tds.core.active || tds_t.unscoped_run >= TDS_UNSCOPED_CTL - 1 || tds.nheld != 0 ||
                                     !tds_cand_none(),
                                 0))
        return 0;
    tds_t.unscoped_run++;
    tds_count_unscoped(kind);
    return 1;
}
static inline void tds_idle_poll(int kind, int recv, int found)
{
    tds.m.polls++;
    if (found)
        tds_t.empty_polls_run = 0;
    else if (!tds_unscoped_quick(kind, recv))
        tds_empty_poll(kind, recv);
}
static inline int tds_idle_poll_rc(int kind, int recv, int found, int rc)
{
    tds.m.polls++;
    if (!found) /* out of line (tds_unscoped_quick here cost the probe path's found case 10 instructions) */
        return tds_empty_poll_rc(kind, recv, rc);
    tds_t.empty_polls_run = 0;
    return rc;
}
/* measure mode, one thread, a node no more ranks than CPUs (tds.spin_find):
 * spin_worked's CPU-clock baseline is read at a find (tds_spin_found) */
void tds_spin_found(int tag);
static inline int tds_spin_at_find(void)
{
    return tds.spin_find && !tds_mt;
}
/* measure mode: the tag of a message a poll found (tds_progress.c cand_poll:
 * the tags that carry work), and the baseline of its judgement if read here */
static inline void tds_found_tag_set(int tag)
{
    tds.found_tag = tag;
    if (__builtin_expect(tds.spin_arm, 0))
        tds_spin_found(tag);
}
static inline void tds_found_tag(const MPI_Status *st)
{
    if (__builtin_expect(tds.cf.notify == TDS_NOTIFY_NONE, 0))
        tds_found_tag_set(tds_st_tag(st));
}
/* can an empty poll of (tag, comm) be an idle poll: could it deliver work (and the notification)? */
/* (the argument is in tds_progress.c, above idle_poll_notion) */
static inline int tds_poll_scope(int tag, MPI_Comm comm)
{
    if (tag != MPI_ANY_TAG && tds.cf.nignore && tds_tag_ignored(tag))
        return 0;
    if (tds.cf.notify == TDS_NOTIFY_TAG && (comm != MPI_COMM_WORLD || (tag != MPI_ANY_TAG && tag != tds.cf.notify_tag)))
        return 0;
    return 1;
}
static inline int tds_scoped(void) { return tds.cf.nignore != 0 || tds.cf.notify == TDS_NOTIFY_TAG; }
/* an MPI_Iprobe/MPI_Improbe on tag of comm: found (measure mode keeps its
 * tag: tds_progress.c cand_poll), or an empty poll in its scope (tds_poll_scope);
 * inline, so that the common case stays a tail call into tds_idle_poll_rc */
static inline int tds_probe_poll_rc(int tag, MPI_Comm comm, const MPI_Status *st, int found, int rc)
{
    if (found) {
        if (__builtin_expect(tds.cf.notify == TDS_NOTIFY_NONE, 0) && st != MPI_STATUS_IGNORE)
            tds_found_tag_set(tds_st_tag(st));
        return tds_idle_poll_rc(0, 1, 1, rc);
    }
    return tds_idle_poll_rc(0, !tds_scoped() || tds_poll_scope(tag, comm), 0, rc);
}
/* what a poll "finds" (DESIGN.md §1): primary messages and notifications;
 * a completion call found something if this moved during it */
static inline uint64_t tds_found_mark(void)
{
    return tds.m.prim_recv + tds.m.notifications;
}
/* A blocking loop of the shim (Recv, Probe, Wait*, finalize): one tds_wait per call, begun before the loop and
 * stepped once per turn that found nothing.
 *
 * THE passivity rule of every completion path (DESIGN.md §1, README "The
 * model"): a waiting rank is passive only while the call is blocked waiting
 * for a primary message (recv: the caller still waits for a receive) AND no
 * primary message was received since the call began (recv0: tds.m.prim_recv
 * then). A receive completed inside the call makes the rank active for the
 * rest of it, whatever else the call still waits for; a call that waits
 * only for the rank's own sends never makes it passive. tds_wait_slow
 * (tds_progress.c) applies it; the callers only say whether they still wait
 * for a receive.
 *
 * The first TDS_SPIN turns only retry the MPI call: checked inline, so the
 * spin turns of a ping-pong cost no call and the poll period stays that of
 * the MPI call alone. */
#define TDS_SPIN 256
typedef struct tds_wait {
    unsigned iter;
    int recv;                  /* the call still waits for a receive */
    uint64_t recv0;            /* tds.m.prim_recv when the call began */
} tds_wait;
/* what moves when a primary message is received: the rank's count, or
 * under MPI_THREAD_MULTIPLE this thread's own (tds_mt.c) */
static inline uint64_t tds_wait_mark(void)
{
    return __builtin_expect(tds_mt, 0) ? tds_t.me.work : tds.m.prim_recv;
}
static inline tds_wait tds_wait_begin(int recv)
{
    tds_wait w = {0, recv, tds_wait_mark()};
    return w;
}
/* by value, so a loop's tds_wait stays in registers */
void tds_wait_slow(int recv, uint64_t recv0);
static inline void tds_wait_step(tds_wait *w)
{
    if (__builtin_expect(tds.nheld != 0, 0))
        tds.held_work();
    if (__builtin_expect(tds_mt, 0))
        tds_mt_pause(w->iter >= TDS_SPIN);
    if (__builtin_expect(w->iter++ >= TDS_SPIN, 0))
        tds_wait_slow(w->recv, w->recv0);
}
/* the rule itself: may this waiting call make the rank passive? */
static inline int tds_wait_passive(int recv, uint64_t recv0)
{
    return recv && tds_wait_mark() == recv0;
}
void tds_activity(void);

#endif
