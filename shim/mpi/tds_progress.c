/*
 * Progress and the idle notions of the PMPI layer (tds_progress.h): the
 * control transport on the private communicator, the passive/progress
 * logic (DESIGN.md §1), notification, and the program's polls and waits.
 *
 * Cost rule: nothing here runs on a busy rank's fast path. The private
 * communicator is only polled where the rank waits: empty polls, blocking
 * loops and finalize (Charm++ QD: control work costs a busy
 * processor nothing).
 *
 * Work held for later (pairs, receives the program freed) and the end of
 * the program under TDSHIM_NOTIFY=exit belong to the layers above: this
 * file runs them through the hooks tds_init.c sets (tds.held_work,
 * tds.exit_now), never by name.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RUSAGE_THREAD */
#endif
#include "tds_progress.h"
#include "tds_comm.h"
#include "tds_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* ---------------------------------------------------------------- control transport */

static void reap_ctl_sends(void)
{
    if (tds.ctl_busy == 0)
        return;
    int busy = 0;
    for (int i = 0; i < tds.nslots; i++) {
        if (tds.slots[i]->req != MPI_REQUEST_NULL) {
            int done = 0;
            PMPI_Test(&tds.slots[i]->req, &done, MPI_STATUS_IGNORE);
            busy += !done;
        }
    }
    tds.ctl_busy = busy;
}

/* a free control slot; slots are separate allocations so buffers of
 * sends in flight never move */
static tds_ctl_slot *free_slot(void)
{
    for (int i = 0; i < tds.nslots; i++) {
        if (tds.slots[i]->req != MPI_REQUEST_NULL) {
            int done = 0;
            PMPI_Test(&tds.slots[i]->req, &done, MPI_STATUS_IGNORE);
        }
        if (tds.slots[i]->req == MPI_REQUEST_NULL) {
            tds.ctl_busy++; /* its send is posted next */
            return tds.slots[i];
        }
    }
    tds_ctl_slot **v = realloc(tds.slots, (size_t)(tds.nslots + 1) * sizeof *v);
    tds_ctl_slot *s = malloc(sizeof *s);
    if (!v || !s)
        tds_fatal("out of memory for a control message");
    s->req = MPI_REQUEST_NULL;
    tds.slots = v;
    tds.slots[tds.nslots++] = s;
    tds.ctl_busy++;
    return s;
}

/* td_io.send: never blocks the program */
void tds_ctl_send(void *user, int dest, const uint8_t *wire)
{
    tds_enter(TDR_CAT_CONTROL);
    tds_ctl_slot *s = free_slot();
    memcpy(s->wire, wire, TD_WIRE_SIZE);
    int rc = PMPI_Isend(s->wire, TD_WIRE_SIZE, MPI_BYTE, dest, TDS_CTL_TAG, tds.ctl, &s->req);
    if (rc != MPI_SUCCESS)
        tds_fatal("cannot send a control message to rank %d (MPI error %d)", dest, rc);
    tds.m.ctl_bytes_sent += TD_WIRE_SIZE;
    tds.ctl_sent_to[dest]++;
    tds_leave();
}

/* Deliver the notification to the program: a message with no user bytes,
 * tag N, from self on MPI_COMM_WORLD, whose header carries the NOTIFY flag
 * (DESIGN.md §1). Sent nonblocking from a control slot. */
static void notify_program(void)
{
    tds_ctl_slot *s = free_slot();
    memset(s->wire, 0, sizeof s->wire);
    s->wire[0] = TDS_HDR_MAGIC | TDS_HF_NOTIFY;
    if (tds.nohdr) /* header-free: an empty message, known by its place among its envelope's */
        tds_nenv_push(1);
    int rc = PMPI_Isend(s->wire, tds.hdr_len, MPI_BYTE, tds.rank, tds.cf.notify_tag, MPI_COMM_WORLD, &s->req);
    if (rc != MPI_SUCCESS)
        tds_fatal("cannot deliver the notification (MPI error %d)", rc);
}

void tds_announce(void *user, uint32_t episode)
{
    double now = tdr_now();
    if (tdr_episode_add(&tds.m, episode, now))
        tds_fatal("out of memory recording episode %u", episode);
    if (tds.cf.verbose)
        fprintf(stderr, "tdshim: rank %d: termination detected (episode %u)\n", tds.rank, episode);
    if (tds.core.finalized)
        return; /* the program is gone: nothing to tell it */
    switch (tds.cf.notify) {
    case TDS_NOTIFY_TAG:
        notify_program();
        break;
    case TDS_NOTIFY_EXIT:
        tds.pending_exit = 1;
        break;
    }
}

/* TDSHIM_VERBOSE (README, "Diagnosing a hang"): while an episode is pending
 * (activity not yet announced, or a root still proving), rank 0 (every
 * rank with TDSHIM_VERBOSE=2) prints one line a second of what detection
 * waits for. Runs where the rank polls or waits, never on a busy rank's
 * fast path; without TDSHIM_VERBOSE it costs one test. */
static void __attribute__((noinline, cold)) progress_line(void)
{
    double now = tdr_now();
    if (now - tds.t_progress < 1.0 || (tds.rank != 0 && tds.cf.verbose < 2) ||
        !(tds.core.dirty || (tds.rank == 0 && !tds.core.dormant)))
        return;
    tds.t_progress = now;
    char state[400], thr[96] = "";
    td_describe(&tds.core, state, sizeof state);
    if (tds_mt)
        tds_mt_describe(thr, sizeof thr);
    fprintf(stderr, "tdshim: rank %d: [%.1f s] %s%s\n", tds.rank, now - tds.m.t_init, state, thr);
}

/* Taking a control message (tds_ctl_take). Under Open MPI they arrive in a
 * standing receive on the private communicator, tested at each poll: an
 * idle rank's empty poll then costs a PMPI_Test of a pending request
 * instead of a PMPI_Iprobe, for which ob1 builds a request every time
 * (issue 38; bench/RESULTS.md, "An idle rank's empty poll"). The buffer is
 * one byte longer than a control message, so that a longer one shows as a
 * count (still fatal), not as a truncation error. Not under MPICH: there a
 * standing MPI_ANY_SOURCE receive on the private communicator changed how
 * the program's truncated receives completed (tests/mpi/trunc.sh and
 * tests/diff in the sanmpich build: a truncated MPI_Imrecv's count 0 where
 * native gives 3; 5d04e3c, reverted in 77b3723), so MPICH keeps the probe.
 * The finalize drain takes from the same place (tds_init.c), and the
 * standing receive is cancelled before the private communicator is freed
 * (tds_ctl_cancel). */
/* a control message has exactly TD_WIRE_SIZE bytes (fatal otherwise) */
static void ctl_check(const MPI_Status *st)
{
    int n = 0;
    PMPI_Get_count(st, MPI_BYTE, &n);
    if (n != TD_WIRE_SIZE)
        tds_fatal("control message of %d bytes from rank %d (expected %d)", n, tds_st_source(st), TD_WIRE_SIZE);
}

#if defined(OPEN_MPI)
static MPI_Request ctl_rq = MPI_REQUEST_NULL;
static uint8_t ctl_buf[TD_WIRE_SIZE + 1];

static MPI_Status ctl_st; /* the control receive's, when it completed (under the lock with several threads) */
/* the program's MPI_Testany on a passive rank tested the control receive
 * too (tds_ctl_tested): 1, nothing came, and the next test, that poll's
 * (idle_poll_notion), is saved; 2, a message came, in ctl_st, and the next
 * test returns it */
static int ctl_fresh;

/* did a control message come? (the standing receive tested: an idle
 * rank's poll, where mostly none did) */
static inline int ctl_test(void)
{
    int flag = 0;
    if (__builtin_expect(ctl_fresh != 0, 0)) {
        flag = ctl_fresh == 2;
        ctl_fresh = 0;
        return flag;
    }
    if (ctl_rq == MPI_REQUEST_NULL)
        PMPI_Irecv(ctl_buf, TD_WIRE_SIZE + 1, MPI_BYTE, MPI_ANY_SOURCE, TDS_CTL_TAG, tds.ctl, &ctl_rq);
    PMPI_Test(&ctl_rq, &flag, &ctl_st);
    return flag;
}
/* the control message ctl_test found */
static inline void ctl_got(uint8_t *wire, int *src)
{
    ctl_check(&ctl_st);
    memcpy(wire, ctl_buf, TD_WIRE_SIZE);
    *src = ctl_st.MPI_SOURCE;
}
static inline int ctl_take(uint8_t *wire, int *src)
{
    if (!ctl_test())
        return 0;
    ctl_got(wire, src);
    return 1;
}

/* the standing control receive, posted if it was not (tds_flat.c,
 * testany_ctl: a passive rank's empty MPI_Testany tests it in the same
 * call into MPI, whose progress then runs once instead of twice), or
 * MPI_REQUEST_NULL while the last such test's answer waits */
MPI_Request tds_ctl_handle(void)
{
    if (ctl_fresh != 0) /* a test's answer not taken yet (a message in ctl_buf): none now */
        return MPI_REQUEST_NULL;
    if (ctl_rq == MPI_REQUEST_NULL)
        PMPI_Irecv(ctl_buf, TD_WIRE_SIZE + 1, MPI_BYTE, MPI_ANY_SOURCE, TDS_CTL_TAG, tds.ctl, &ctl_rq);
    return ctl_rq;
}

void tds_ctl_cancel(void)
{
    if (ctl_rq == MPI_REQUEST_NULL)
        return;
    PMPI_Cancel(&ctl_rq);
    PMPI_Wait(&ctl_rq, MPI_STATUS_IGNORE);
}
#else
static inline int ctl_take(uint8_t *wire, int *src)
{
    int flag = 0;
    MPI_Status st;
    PMPI_Iprobe(MPI_ANY_SOURCE, TDS_CTL_TAG, tds.ctl, &flag, &st);
    if (!flag)
        return 0;
    ctl_check(&st);
    /* the next layer's MPI_Recv without the redirection's forgetting of
     * a probed message (gen_wrappers.py, MATCHING): one on tds.ctl
     * matches none of the program's, whose MPI_Iprobe + MPI_Recv keeps
     * MPI's blocking receive across the control messages in between */
    (*tds_real_Recv)(wire, TD_WIRE_SIZE, MPI_BYTE, st.MPI_SOURCE, TDS_CTL_TAG, tds.ctl, MPI_STATUS_IGNORE);
    *src = st.MPI_SOURCE;
    return 1;
}

void tds_ctl_cancel(void) {}
#endif

int tds_ctl_take(uint8_t *wire, int *src) { return ctl_take(wire, src); }

/* Only polls that found control messages are timed: an empty poll of a
 * waiting rank is one test, and timing it would cost more. FOUND: a
 * control message ctl_test found already (Open MPI). */
static void __attribute__((noinline)) poll_control_rest(int found)
{
    int timed = 0, src = 0;
    uint8_t wire[TD_WIRE_SIZE];
#if defined(OPEN_MPI)
    if (found)
        ctl_got(wire, &src);
#endif
    while (found || ctl_take(wire, &src)) {
        found = 0;
        if (!timed) {
            tds_enter(TDR_CAT_PROGRESS);
            timed = 1;
        }
        tds.m.ctl_bytes_recv += TD_WIRE_SIZE;
        tds.ctl_seen++;
        td_control(&tds.core, src, wire, TD_WIRE_SIZE);
        tds_check_core();
    }
    reap_ctl_sends();
    if (tds.npairs || tds.orphans)
        tds.held_work();
    if (timed)
        tds_leave();
    if (__builtin_expect(tds.cf.verbose != 0, 0))
        progress_line();
    if (tds.pending_exit)
        tds.exit_now();
}
/* Under Open MPI the common case first, in a frame of its own: the
 * standing control receive tested, nothing came, nothing else to do (no
 * control send to reap, nothing held, no progress line, no exit due): one
 * call into MPI and a few loads (was 53 instructions of an idle rank's
 * empty poll in the general loop's frame; tests/perf/icount.sh idle) */
void tds_poll_control(void)
{
#if defined(OPEN_MPI)
    int found = ctl_test();
    if (__builtin_expect(!found && (tds.ctl_busy | tds.npairs | tds.cf.verbose | tds.pending_exit) == 0 && !tds.orphans,
                         1))
        return;
    poll_control_rest(found);
#else
    poll_control_rest(0);
#endif
}

#if defined(OPEN_MPI)
/* the program's MPI_Testany tested the control receive too (tds_flat.c,
 * testany_ctl): DONE, it completed (its status st, MPI's handle after the
 * call h: MPI_REQUEST_NULL), and the next test returns it (that poll's
 * passive turn takes it, as from its own test); else nothing came, and
 * that test is saved */
void tds_ctl_tested(int done, MPI_Request h, const MPI_Status *st)
{
    if (done) {
        ctl_rq = h;
        ctl_st = *st;
    }
    ctl_fresh = done ? 2 : 1;
}
#endif

void tds_want_poll_held(void *user)
{
    (void)user;
    tds.nheld++;
}
void tds_want_poll_run(void)
{
    if (!tds.core.want_poll)
        return;
    tds.core.want_poll = 0;
    tds.nheld--;
    tds_poll_control();
}

/* ---------------------------------------------------------------- passive / progress */

static void go_passive(void)
{
    /* a passive rank whose last turn changed nothing and that got nothing
     * since: its turn would change nothing again (td_engine.c, "Quiet
     * turns"); every idle poll of a waiting rank comes here */
    if (td_quiet(&tds.core))
        return;
    /* several threads: passive when every one using MPI is (tds_mt.c);
     * under pcontrol and api the program speaks for the whole rank */
    if (__builtin_expect(tds_mt, 0) && tds.cf.idle != TDS_IDLE_PCONTROL && tds.cf.idle != TDS_IDLE_API &&
        !tds_mt_all_idle())
        return;
    /* the report's last busy->idle transition; a spin rank that was only
     * seen busy again (td_busy) and sent or received nothing since keeps
     * its earlier one: a descheduled poll loop is not work */
    if (tds.core.active && tds.spin_mark != tds.m.prim_sent + tds.m.prim_recv + 1)
        tds.m.t_last_passive = tdr_now();
    tds.spin_mark = 0;
    td_passive(&tds.core);
    tds_check_core();
}

void tds_set_passive(void)
{
    go_passive();
    tds_poll_control();
}

void tds_activity(void)
{
    if (tds.orphans) /* what the program freed is in its buffers after a collective (a barrier) */
        tds.reap_orphans();
    td_collective(&tds.core);
    /* a collective is activity: a spin run of empty polls starts over */
    tds_t.empty_polls_run = 0;
    tds_t.me.idle = 0;
    tds_t.spin_last = tds_pnow();
    tds.poll_armed = 0; /* time in a collective is no work between polls */
    tds.cand = 0;
    tds.spin_arm = 0;
}

/* A program poll: an Iprobe/Improbe (kind 0) or a Test* (kind 1, recv =
 * the set held a receive) that found (found=1) or did not find anything.
 * DESIGN.md §1: by default an empty probe makes the rank passive; with
 * TDSHIM_IDLE=test an empty Test* on receives also does; probe:N needs N
 * empty probes in a row with no send between them. A rank that is already
 * passive keeps the protocol going on every empty poll, whatever the
 * notion. A successful poll costs two increments. */
/* TDSHIM_IDLE=spin (README, "Choosing TDSHIM_IDLE"): a rank is passive
 * while it spins on empty polls. Every empty poll, of any kind and on any
 * request mix, measures the program's time since the previous one: from
 * the moment tdshim returned from that poll to the moment this one entered
 * tdshim (tds_poll_enter). Time inside the polls is not the program's work:
 * neither MPI's progress (which yields the core to another rank when the
 * node is oversubscribed, mpi_yield_when_idle: a descheduled poll loop
 * spends its time there) nor tdshim's protocol turn. N polls in a row each
 * within TDSHIM_SPIN_GAP of the one before (a loop that does nothing but
 * poll) make the rank passive; longer gaps say the program worked
 * between its polls, so a rank the notion had judged passive is busy again
 * (td_busy: active, not dirty, counted as busy_again in the report). A
 * send or a receive restarts the run (count_send, the receive paths). A
 * message delivered makes the rank active as under every notion.
 * One long gap alone is not work: a poll loop the kernel or the
 * hypervisor interrupts loses 20-40 us now and then, in the program's time
 * as often as in the poll (a loop of clock reads alone on the 2-core VM:
 * ~1,200 gaps over 20 us a second, ~100 over 40 us). Taken for work, each
 * made the rank busy again, and with 3 ranks on 2 cores under MPICH, whose
 * confirmation waves wait for cores for milliseconds, every proof was
 * refuted: 1,154-2,535 busy_again per rank in 6 s and no notification in 3
 * to 6 runs of 10 (tests/mpi/busymemo.sh). So the first long gap makes a
 * passive rank unsure (td_unsure: it answers a confirmation wave busy, and
 * nothing else changes); N short polls in a row make it sure again (the
 * gap was noise); a second long gap before those makes it busy again
 * (td_busy): a program that works between its polls has a long gap before
 * each. */
static void spin_poll(void)
{
    if (tds_t.poll_t0 - tds_t.spin_last > tds.cf.spin_gap) {
        tds_t.empty_polls_run = 0;
        tds_t.me.idle = 0;
        if (!tds.core.active) {
            if (!tds.core.unsure) {
                td_unsure(&tds.core);
            } else {
                td_busy(&tds.core);
                tds.spin_mark = tds.m.prim_sent + tds.m.prim_recv + 1;
            }
        }
    } else if (++tds_t.empty_polls_run >= tds.cf.idle_polls) {
        tds_set_passive();
    } else if (!tds.core.active) {
        tds_poll_control();
    }
    tds_t.spin_last = tds_pnow();
}

/* The scope of a poll (DESIGN.md §1, "Soundness of passivity"; docs/
 * internals.md, "Which polls are idle polls"). An idle rank waits for
 * work, and under TDSHIM_NOTIFY=tag:N for the notification too, so the
 * poll it makes when it has nothing left to do must be able to deliver a
 * primary message, and (tag:N) the notification: a zero-byte message with
 * tag N on MPI_COMM_WORLD. A poll that cannot -- an MPI_Iprobe or a
 * receive on a tag of TDSHIM_IGNORE_TAGS (a standing receive for steal
 * requests), or, under tag:N, on another tag or another communicator --
 * is a poll a busy rank makes between work items: it never makes the rank
 * passive, under any notion, at any grain of work (the gaps between such
 * polls are not measured either: TDSHIM_IDLE=spin sees only polls in
 * scope). A program that listens for the notification only in the loop it
 * runs when it has no work is judged passive only there. Cost: nothing on
 * a poll that finds a message; a comparison or two on an empty one
 * (tds_poll_scope is inline, tds_progress.h). */
/* what an empty poll means under the configured notion; in_scope: the
 * poll could deliver a primary message (and the notification), see
 * tds_poll_scope. TDSHIM_IDLE=test counts empty probes as probe does,
 * and empty MPI_Test* on receives besides (README, TDSHIM_IDLE). */
/* An active rank probes for control messages at one poll out of scope in
 * TDS_UNSCOPED_CTL (issue 37: work_steal at --work-us 0 tests its standing
 * steal-request receive every 4 nodes, and the private communicator's
 * MPI_Iprobe -- a second ob1 iprobe and opal_progress, ~600 instructions --
 * at each of those tests made the whole run 1.3-1.5x slower than native
 * with the detection itself in the background). Delaying an active rank's
 * control messages is safe (every algorithm takes arbitrary delays on the
 * private communicator) and costs detection no latency: an active rank
 * holds a wave or answers that it is active, and the poll that makes it
 * passive is in scope and probes at once. A passive rank probes at every
 * poll. Liveness: every TDS_UNSCOPED_CTL-th poll still probes. The
 * common case of the first branch below is inline (tds_unscoped_quick). */

/* runs of polls only grow between a message and the next: 64 bits, which
 * no loop polling 10^7 times a second fills (an int wrapped within the
 * hour, and negative judged the rank passive no more) */
_Static_assert(sizeof tds_t.empty_polls_run == 8 && sizeof tds.cand_spin_run == 8, "a run of polls wraps");
static inline void idle_poll_notion(int kind, int in_scope)
{
    if (!in_scope) {
        /* a busy rank's poll, or one of a rank that waits for something
         * else than work (work_steal's drain of "finished" messages after
         * its notification): judge nothing, but keep the protocol going,
         * active or not: under xulau an announced rank must answer a laggard
         * (td_tell_announced), and a rank whose only polls are out of scope
         * would never answer (the laggard never notified, the drain waiting
         * for its "finished": a hang, seen in test-examples-async) */
        if (tds.core.active && ++tds_t.unscoped_run < TDS_UNSCOPED_CTL) {
            if (tds.npairs || tds.orphans)
                tds.held_work();
            return;
        }
        tds_t.unscoped_run = 0;
        tds_poll_control();
        return;
    }
    if (tds.cf.idle == TDS_IDLE_SPIN) {
        spin_poll();
        return;
    }
    int passive = 0;
    if (kind == 0 && (tds.cf.idle == TDS_IDLE_PROBE || tds.cf.idle == TDS_IDLE_TEST))
        passive = ++tds_t.empty_polls_run >= tds.cf.idle_polls;
    else if (kind == 1 && tds.cf.idle == TDS_IDLE_TEST)
        passive = 1;
    if (passive)
        tds_set_passive();
    else if (!tds.core.active)
        tds_poll_control();
}

/* the calling thread's CPU time, s (a system call; a function of its own,
 * which tests/perf/icount.sh counts the calls of) */
static double __attribute__((noinline)) thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Did the calling thread block (sleep, wait: a voluntary context switch)
 * since it was last asked? A system call (getrusage(RUSAGE_THREAD)'s
 * count; its CPU times are tick-sampled, useless over microseconds). Over
 * the interval since the last question, a superset of the gap asked
 * about: a switch before the gap can make a busy gap look blocked (one
 * busy gap missed after each block), never an idle gap look busy. */
static int thread_blocked(void)
{
#ifdef RUSAGE_THREAD
    struct rusage u;
    if (getrusage(RUSAGE_THREAD, &u) != 0)
        return 0;
    uint64_t nv = (uint64_t)u.ru_nvcsw;
    int b = nv != tds_t.nvcsw;
    tds_t.nvcsw = nv; /* per thread: another thread's count says nothing of this one */
    return b;
#else
    return 0;
#endif
}

/* Measure mode (TDSHIM_NOTIFY=none) only, for the report's advice: did the
 * program work between two empty polls without receiving anything, i.e.
 * does it poll while busy? Work is CPU time of this thread (a rank
 * descheduled on an oversubscribed node is not working) over
 * TDSHIM_SPIN_GAP, from the end of tdshim's work in one empty poll (end =
 * 1) to the start of the next (end = 0), twice in a row (one such gap in
 * a thousand polls is seen in idle poll loops too); a collective or a
 * blocking wait in between resets the measurement (tds_activity,
 * tds_wait_slow). The CPU clock is a system call (two per empty poll made
 * an idle loop's polls 0.4 us slower here, and so its program's message
 * latency: bench/pingpong --test-loop), so the wall clock's interval from
 * the start of one empty poll to the start of the next comes first: one
 * no longer than TDSHIM_SPIN_GAP holds no gap of CPU time that long (the
 * CPU time between the polls is less than the wall time), and the CPU
 * clock is read only at both ends of an interval after such a long one.
 * The first long interval after short ones is not measured (the CPU time
 * at its start was not read); it cannot count anyway (two in a row).
 * A gap in which the thread blocked (a voluntary context switch: the
 * program slept or waited between its polls) is no work: an idle loop that
 * sleeps between polls is not busy, though the sleep itself costs CPU time
 * (16-26 us a nanosleep on the 2-core VM, timer exits, more than
 * TDSHIM_SPIN_GAP: without this such a loop was judged to poll while busy
 * at every poll, and the advice named no notion; tests/mpi/idlesleep.sh).
 * Asked only of a gap that looks busy by its CPU time and took less of
 * it than TDS_GAP_BUSY_SHARE of the wall time from poll to poll (a sleep
 * leaves most of it: 16-26 us of CPU time in 60-900 us of wall time); a
 * gap that took more worked, and asking would cost a program that polls
 * while busy one more system call per poll (thread_blocked).
 * Sampled once the evidence stands: a program that polls while busy has
 * a long interval before nearly every poll, and two CPU-clock reads (system
 * calls) at each (tests/perf/icount.sh busywork: 2,182 reads per 1,000
 * polls unsampled, 275 sampled; bench/RESULTS.md). After TDS_GAP_EXACT busy gaps counted one by one, only the first two of
 * every TDS_GAP_SAMPLE long intervals are measured (4 reads instead of 2 *
 * TDS_GAP_SAMPLE, and one getrusage to start the pair's question afresh),
 * and a busy gap of the pair's second counts for TDS_GAP_SAMPLE gaps, its
 * CPU time as many times: polls.busy_gaps and busy_gap_s become estimates
 * past TDS_GAP_EXACT (SCHEMA.md), the advice's tests (>= 3 gaps, >= 1 % of
 * the wall time) decided on the exact ones or on a steady pattern. A rank
 * that stops polling while busy stops adding: its sampled pairs measure
 * idle gaps, which count nothing. */
#define TDS_GAP_BUSY_SHARE 0.9
#define TDS_GAP_EXACT 64
#define TDS_GAP_SAMPLE 16 /* a power of 2 */
/* busy_gap_end's measured case: the interval that starts here is measured
 * (or sampled) from this thread's CPU time now */
static void __attribute__((noinline)) busy_gap_arm(void)
{
    int arm = 1;
    if (tds.m.busy_gaps >= TDS_GAP_EXACT) {
        uint32_t k = tds.poll_tick++ & (TDS_GAP_SAMPLE - 1);
        arm = k < 2;
        if (k == 0)
            (void)thread_blocked(); /* the pair's question starts here, not at the last pair */
    }
    tds.poll_armed = (uint8_t)arm;
    if (!arm)
        return;
    tds.poll_cpu = thread_cpu();
    tds.poll_recv0 = tds.m.prim_recv;
}
/* the end of tdshim's work in an empty poll in scope: the start of the
 * next interval; measured only after a long one (busy_gap_start) */
static inline __attribute__((always_inline)) void busy_gap_end(void)
{
    if (tds.poll_cpu_next)
        busy_gap_arm();
    else
        tds.poll_armed = 0;
}
/* busy_gap_start's long interval of iv s, ending at w: a busy gap? */
static void __attribute__((noinline)) busy_gap_long(double iv)
{
    int gap = 0;
    if (tds.poll_armed && tds.m.prim_recv == tds.poll_recv0) {
        double cpu = thread_cpu();
        double g = cpu - tds.poll_cpu;
        gap = g > tds.cf.spin_gap && (g >= TDS_GAP_BUSY_SHARE * iv || !thread_blocked());
        if (gap && tds.poll_gap) { /* two in a row: an isolated one is noise (interrupts, MPI's own work) */
            uint64_t k = tds.m.busy_gaps >= TDS_GAP_EXACT ? TDS_GAP_SAMPLE : 1; /* sampled: counts for all */
            tds.m.busy_gaps += k;
            tds.m.busy_gap_s += (double)k * (cpu - tds.poll_cpu);
        }
    }
    tds.poll_gap = (uint8_t)gap;
}
/* the start of an empty poll in scope: the poll clock read (tds_pnow; tds.poll_w,
 * which cand_judge takes too), and the interval since the last one's start
 * judged if it was longer than TDSHIM_SPIN_GAP. The quick cases inline, the
 * rest out of line (a call each way cost an empty poll 20-odd instructions) */
static inline __attribute__((always_inline)) void busy_gap_start(void)
{
    double w = tds_pnow(), iv = w - tds.poll_w;
    tds.poll_w = w;
    tds.poll_cpu_next = iv > tds.cf.spin_gap;
    if (!tds.poll_cpu_next)
        tds.poll_gap = 0;
    else
        busy_gap_long(iv);
}

/* A run of empty polls ends at a primary message sent or received. The
 * general paths say so as they count one (tds_worked); the flat entries
 * of a single-threaded rank (tds_flat.c) only count, and the run sees
 * their messages here, by the counts, which costs them nothing. */
static inline void poll_run(void)
{
    uint64_t w = tds.m.prim_sent + tds.m.prim_recv;
    if (__builtin_expect(w != tds_t.run_work, 0)) {
        tds_t.run_work = w;
        tds_t.empty_polls_run = 0;
    }
}

/* Measure mode: the idle notions side by side (issue 37; README, "Measure
 * mode and the advice"; docs/internals.md, "Which polls are idle polls").
 * At every empty poll each candidate notion judges the rank as it would
 * if it were TDSHIM_IDLE -- probe: an empty probe in scope; test: that, or
 * an empty MPI_Test* on receives in scope; spin: TDS_SPIN_POLLS_DEFAULT
 * polls in scope in a row, each begun within TDSHIM_SPIN_GAP of the one
 * before -- and remembers the primaries sent and received by then. At the
 * next poll, a rank a candidate judged passive that has sent a primary
 * since without receiving one was not passive: that is a breach of the
 * candidate, the evidence that it would call a rank passive while it
 * still had work (a send and a receive between the same two polls are
 * taken as receive-then-send: the order is not seen, so a breach can be
 * missed there, never invented). A collective resets them (tds_activity).
 * The advice recommends only a candidate without breaches. Arithmetic on
 * counters the poll has already read; only under TDSHIM_NOTIFY=none. */
/* the entry of tag in polls.work_tags, made if there is room; -1: none */
static int work_slot(int tag)
{
    tdr_rank *m = &tds.m;
    int j = 0;
    while (j < m->nwork_tags && m->work_tags[j].tag != tag)
        j++;
    if (j == m->nwork_tags) {
        if (j == TDR_VIOL_TAGS)
            return -1;
        m->work_tags[m->nwork_tags++] = (struct tdr_worktag){.tag = tag};
    }
    return j;
}

static void work_tag(int tag, int k, int sent)
{
    int j = work_slot(tag);
    if (j < 0) { /* the advice then suggests ignoring no tag (tdr_advice.c) */
        tds.m.work_tags_other += (uint64_t)k;
        return;
    }
    tds.m.work_tags[j].found += (uint64_t)k;
    tds.m.work_tags[j].times += (uint64_t)(k * sent);
}

/* Did more than TDSHIM_SPIN_GAP of this thread's CPU time go by since the
 * last empty poll of a rank spin judged passive (cand_judge's "it
 * worked")? Not if no more wall time went by since tds.spin_w, taken in
 * that poll (CPU time is less than wall time). Otherwise the CPU time
 * since tds.spin_cpu, read at that poll or at most TDSHIM_SPIN_GAP / 2 of
 * wall time before it (cand_poll): an upper bound, too high by at most
 * TDSHIM_SPIN_GAP / 2. So a message can be taken for work that was none,
 * never the reverse (the advice then ignores its tag less often, never
 * more), and one whose work took less than TDSHIM_SPIN_GAP / 2 of CPU time
 * ("no work" replies, the next steal request) never is. On a node with
 * no more ranks than CPUs the baseline is read at the find instead
 * (tds.spin_find, tds_spin_found). */
static int spin_worked(void)
{
    if (tds_pnow() - tds.spin_w <= tds.cf.spin_gap)
        return 0;
    return thread_cpu() - tds.spin_cpu > tds.cf.spin_gap;
}

/* A poll of a rank spin judges passive found a message (measure mode, a
 * single thread, tds.spin_find: no more ranks on the node than CPUs). The
 * baseline of spin_worked, the CPU time at the last empty poll (tds.spin_w),
 * is taken now as the CPU time less the wall time since that poll: CPU
 * time then plus the time the rank was descheduled since, too high by that
 * (the only direction spin_worked may err in). A find more than
 * TDSHIM_SPIN_GAP / 2 after the poll is not judged: the rank was likely
 * descheduled in between, and a message that arrives while its receiver
 * waits for a core is found at its first poll after, so such finds are
 * common on a loaded node (tests/mpi/worktag.sh's reply sent after a 1 ms
 * sleep, by hand beside a CI rehearsal: taken for work at 4-21 of 50-92
 * finds when they were judged, the test failing twice; 40c22de: 2-6 of
 * 95-99; skipped: 1-7 of 95-97). The judged finds keep the bound of the
 * other mode, TDSHIM_SPIN_GAP / 2; which finds are skipped depends on the
 * rank's scheduling, not on what the message brings, so the share of
 * judged finds followed by work is still the tag's. A tag found but never
 * judged keeps an entry with found 0, which the advice takes for unknown
 * (tdr_advice.c: never suggested). Only the first find
 * after an empty poll reads it (tds.spin_arm; a burst of finds is one).
 * Ray polls all the time: the reads every TDSHIM_SPIN_GAP / 2 of its
 * polling were 1.1 million a rank in 28 s (6 % of its time in the kernel),
 * and there are about 480,000 such finds. So after the first TDS_FIND_EXACT
 * finds of a tag, one in TDS_FIND_SAMPLE of its finds is judged and counts
 * for TDS_FIND_SAMPLE (polls.work_tags' found and times become estimates
 * there; the advice needs only their ratio). Per tag: a tag seen only
 * later, or rarely, is judged at each of its first finds, never left out
 * by another's count (a tag without an entry is one the advice could
 * suggest ignoring). A find not judged reads nothing and leaves
 * tds.spin_based 0 (cand_judge then skips it); one on a tag that has no
 * entry, the table full, reads nothing either: it is counted here
 * (polls.work_tags_other, which keeps the advice from suggesting any tag).
 * Either way the next find of the same burst decides again (tds.spin_arm
 * stays): the find judged is the last one before the next empty poll, as
 * in the other mode, its baseline read at the burst's first judged find. */
#define TDS_FIND_EXACT 256
#define TDS_FIND_SAMPLE 16 /* a power of 2 */
void tds_spin_found(int tag)
{
    int j = work_slot(tag);
    if (j < 0) {
        tds.m.work_tags_other++;
        return;
    }
    double w = tds_pnow();
    if (w - tds.spin_w > 0.5 * tds.cf.spin_gap)
        return; /* descheduled since the poll, likely: not judged (a tag never judged is never advised) */
    uint64_t n = ++tds.m.work_tags[j].finds;
    if (n > TDS_FIND_EXACT && (n & (TDS_FIND_SAMPLE - 1)))
        return;
    tds.spin_arm = 0;
    tds.spin_based = 1;
    tds.spin_tag = tag;
    tds.spin_k = n > TDS_FIND_EXACT ? TDS_FIND_SAMPLE : 1;
    tds.spin_cpu = thread_cpu() - (w - tds.spin_w);
    tds.spin_cpu_w = tds.spin_w;
}

static void cand_judge(int kind, int in_scope)
{
    tds_sent_bytes_fold(); /* the flat sends' bytes (arithmetic) */
    uint64_t s = tds.m.prim_sent, r = tds.m.prim_recv;
    /* a message a poll found while the rank waited -- spin's judgement, the
     * strictest: test's would take a busy rank's poll for a wait, and the
     * steal request it then answers with work for a tag that carries work --
     * counted, and whether it brought work: the rank then sent primary
     * bytes, and worked (more than TDSHIM_SPIN_GAP of its CPU time went
     * by since the empty poll before the find, read there: cand_poll; not
     * at the find, where a call would cost the found probe 9 instructions;
     * CPU time, not wall: 4 ranks on 2 cores are descheduled between any
     * two polls). If often, its tag carries work, never one to ignore. An
     * empty reply, "no work", is no work; nor is a message the rank's idle
     * loop sends in the same turn anyway (work_steal's next steal request,
     * Safra's token): those take no time, and what is left (the shim's own
     * work there, a page fault) the share in tdr_advice.c absorbs */
    unsigned m = tds.cand;
    if ((m & TDS_CAND_BIT(TDR_CAND_SPIN)) && r != tds.cand_r0 && tds.found_tag >= 0 &&
        (tds.spin_based || !tds_spin_at_find()))
        work_tag(tds.found_tag, tds_spin_at_find() && tds.found_tag == tds.spin_tag ? tds.spin_k : 1,
                 tds.m.prim_sent_bytes != tds.cand_b0 && spin_worked());
    tds.found_tag = -1;
    tds.spin_based = 0;
    /* the candidates that stand share one baseline (tds.cand_s0, cand_r0):
     * any primary sent or received since clears them all, and one set later
     * is set at a poll where the counts still equal it */
    if (m && r != tds.cand_r0) {
        m = 0;
    } else if (m && s != tds.cand_s0) {
        for (int c = 0; c < TDR_NCAND; c++)
            tds.m.cand_breach[c] += (m >> c) & 1;
        m = 0;
    }
    if (!in_scope) {
        tds.cand = (uint8_t)m;
        return;
    }
    double w = tds.poll_w; /* busy_gap_start read the clock at this poll's start (in scope) */
    tds.cand_spin_run = w - tds.cand_spin_w > tds.cf.spin_gap ? 0 : tds.cand_spin_run + 1;
    tds.cand_spin_w = w;
    if (tds.cand_spin_run == 0)
        m &= ~TDS_CAND_BIT(TDR_CAND_SPIN); /* spin sees the rank busy again (as td_busy) */
    if (__builtin_expect(tds_mt, 0) && !tds_mt_others_idle()) {
        tds.cand = (uint8_t)m;
        return; /* another thread works: the rank is not idle under any notion */
    }
    unsigned judge = TDS_CAND_BIT(TDR_CAND_TEST) | (kind == 0 ? TDS_CAND_BIT(TDR_CAND_PROBE) : 0) |
                     (tds.cand_spin_run >= TDS_SPIN_POLLS_DEFAULT ? TDS_CAND_BIT(TDR_CAND_SPIN) : 0);
    unsigned set = judge & ~m;
    if (set) {
        for (int c = 0; c < TDR_NCAND; c++)
            tds.m.cand_passive[c] += (set >> c) & 1;
        if (set & TDS_CAND_BIT(TDR_CAND_SPIN))
            tds.cand_b0 = tds.m.prim_sent_bytes;
        tds.cand_s0 = s; /* those that stand already have it */
        tds.cand_r0 = r;
    }
    tds.cand = (uint8_t)(m | judge);
}

/* the idle notions' judgements at an empty poll (measure mode), then, on a
 * rank spin judges passive, when (the poll clock, tds_pnow) and its CPU time: the
 * baselines of cand_judge's "it worked" (spin_worked). The CPU clock is a
 * system call, so it is read only where the last reading is older than
 * TDSHIM_SPIN_GAP / 2 of wall time: once every ~10 us of an idle loop's
 * polls instead of at each (one per empty probe of an MPI_Iprobe receiver
 * cost it 8 % of its message rate: bench/RESULTS.md); busy ranks pay none.
 * A thread's CPU clock is its own: several threads read it every time.
 * Not read here where it is read at the find (tds_spin_found). */
static void cand_poll(int kind, int in_scope)
{
    cand_judge(kind, in_scope);
    tds.spin_arm = 0;
    if (tds.cand & TDS_CAND_BIT(TDR_CAND_SPIN)) {
        double w = in_scope ? tds.cand_spin_w : tds_pnow(); /* cand_judge read it in scope */
        tds.spin_w = w;
        if (tds_spin_at_find()) {
            tds.spin_arm = 1;
            return;
        }
        if (__builtin_expect(tds_mt, 0) || w - tds.spin_cpu_w > 0.5 * tds.cf.spin_gap) {
            tds.spin_cpu = thread_cpu();
            tds.spin_cpu_w = w;
        }
    }
}

/* an empty poll (tds_idle_poll counted it) */
void tds_empty_poll(int kind, int recv)
{
    /* a poll out of scope outside measure mode, first: a busy rank's (issue
     * 37's work_steal makes one every 4 nodes). It judges nothing, so the
     * run of empty polls is left to the next poll in scope (poll_run there
     * sees the same counts). In measure mode such a poll where no candidate
     * stands mostly took tds_unscoped_quick's way already */
    if (!recv && __builtin_expect(tds.cf.notify != TDS_NOTIFY_NONE, 1)) {
        tds_count_unscoped(kind);
        idle_poll_notion(kind, 0);
        return;
    }
    poll_run();
    tds.m.empty_polls++;
    tds.m.empty_tests += kind == 1 && recv;
    /* a Test* set is scanned for receives only where a notion asks (test_missed) */
    tds.m.unscoped_polls += !recv && (kind == 0 || tds.cf.idle == TDS_IDLE_TEST || tds.cf.idle == TDS_IDLE_SPIN ||
                                      tds.cf.notify == TDS_NOTIFY_NONE);
    if (__builtin_expect(tds.cf.notify == TDS_NOTIFY_NONE, 0)) {
        /* only polls in scope can be taken for idle ones: only their gaps
         * tell whether the program polls while busy. busy_gap_start
         * reads the clock of a poll in scope, once: cand_judge takes it
         * from tds.poll_w (two reads an empty poll, 30 ns each on the
         * 2-core VM, against native MPI_Testany's 60-odd: hpcc's
         * MPIRandomAccess polls once per update) */
        if (recv)
            busy_gap_start();
        cand_poll(kind, recv);
        idle_poll_notion(kind, recv);
        if (recv)
            busy_gap_end();
        return;
    }
    idle_poll_notion(kind, recv);
}

int tds_empty_poll_rc(int kind, int recv, int rc)
{
    tds_empty_poll(kind, recv);
    return rc;
}



/* One turn of a blocking call that is still waiting (Recv, Probe, Wait*,
 * finalize): a blocking call must keep the protocol progressing, so
 * it is a polling loop. Waiting for a receive makes the rank passive under
 * every notion but pcontrol and api, where only the program decides.
 * The first TDS_SPIN turns (~10 us) only retry the MPI call: in a ping-pong the
 * answer is typically there within a microsecond, and declaring the rank
 * passive (and starting protocol work) for such a wait would slow a busy
 * rank for nothing; detection is delayed by at most those few turns. */
void tds_wait_slow(int recv, uint64_t recv0)
{
    /* the spin turns (iter < TDS_SPIN) are handled inline, tds_progress.h */
    tds.poll_armed = 0; /* waiting in a blocking call is no work between polls (advice) */
    int notion = tds.cf.idle != TDS_IDLE_PCONTROL && tds.cf.idle != TDS_IDLE_API;
    if (notion && tds_wait_passive(recv, recv0))
        go_passive();
    else if (!tds.core.active)
        go_passive(); /* give the algorithm its on_passive turn */
    tds_poll_control();
    /* no sched_yield here: Open MPI's progress already yields when the node
     * is oversubscribed (mpi_yield_when_idle), and yielding on a loaded but
     * not oversubscribed node would cost a time slice per wait */
}

/* The program is about to block in a collective of the MPI library's own,
 * in which tdshim takes no control message: the algorithm's last word
 * (td_blocking: xulau tells its neighbours). No rank's detection may then
 * wait for this rank's answer (td_algo.h, TD_ALGO_SYMMETRIC;
 * tests/core/test-barrier). */
void tds_blocking(void)
{
    td_blocking(&tds.core);
    if (tds.core.error)
        tds_core_failed();
}

int tds_body_Pcontrol(const int level)
{
    if (tds.cf.idle == TDS_IDLE_PCONTROL)
        tds_set_passive();
    return PMPI_Pcontrol(level);
}

void tds_poll_enter_slow(void)
{
    if (tds.nheld != 0)
        tds.held_work();
    if (tds.cf.idle == TDS_IDLE_SPIN)
        tds_t.poll_t0 = tds_pnow();
}
