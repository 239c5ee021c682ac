/*
 * Life cycle and detection machinery of the PMPI layer: MPI_Init /
 * MPI_Finalize, the control transport on the private communicator, the
 * passive/progress logic (DESIGN.md §1) and notification.
 *
 * Cost rule: nothing here runs on a busy rank's fast path. The private
 * communicator is only polled where the rank waits: empty polls, blocking
 * loops and finalize (Charm++ QD: control work costs a busy
 * processor nothing).
 */
#include "config.h"
#include "tds.h"
#include "tds_bodies.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

tds_state tds = {.ctl = MPI_COMM_NULL, .last_comm = MPI_COMM_NULL};
__thread int tds_inside __attribute__((tls_model("initial-exec")));

#define TDS_CTL_TAG 7 /* the only tag on the private communicator */

void tds_fatal(const char *fmt, ...)
{
    va_list ap;
    char msg[400];
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "tdshim: rank %d: %s\n", tds.rank, msg);
    fflush(stderr);
    PMPI_Abort(MPI_COMM_WORLD, 3);
    abort(); /* PMPI_Abort does not return; keeps noreturn honest */
}

/* gen_wrappers.py: a refused function (p2p.list "refuse", or one the MPI
 * library exports that the list lacks) at its first use */
void tds_refuse(const char *name, const char *why)
{
    int init = 0, fin = 0;
    PMPI_Initialized(&init);
    PMPI_Finalized(&fin);
    if (init && !fin)
        tds_fatal("%s: %s; stopping (no message may reach the wire without tdshim)", name, why);
    fprintf(stderr, "tdshim: %s: %s; stopping (no message may reach the wire without tdshim)\n", name, why);
    abort();
}

/* ---------------------------------------------------------------- ranks */

/* Attribute callback: the communicator is freed, drop its map (and the
 * one-entry cache, whose handle may be reused by a new communicator). A
 * receive still pending on it keeps the map (MPI lets a program free a
 * communicator with operations pending): the last tds_cmap_put frees it. */
static int map_delete(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    int *map = attr;
    if (tds.last_map == map) {
        tds.last_comm = MPI_COMM_NULL;
        tds.last_map = NULL;
    }
    if (comm == tds.fcomm) /* its handle may be reused by a communicator of another group */
        tds.fcomm = tds.fcomm_rx = MPI_COMM_WORLD;
    if (comm == tds.xcomm) { /* the same; and xmap is about to be freed */
        tds.xcomm = tds.xcomm_rx = MPI_COMM_WORLD;
        tds.xmap = NULL;
        tds.xn = 0;
    }
    if (map[TDS_MAP_REFS])
        map[TDS_MAP_DEAD] = 1;
    else
        free(map);
    return MPI_SUCCESS;
}

static int *cmap_of(MPI_Comm comm);

int *tds_cmap_get(MPI_Comm comm)
{
    int *map = cmap_of(comm);
    map[TDS_MAP_REFS]++;
    return map;
}

void tds_cmap_put(int *map)
{
    if (--map[TDS_MAP_REFS] == 0 && map[TDS_MAP_DEAD])
        free(map);
}

/* does group g hold a process outside MPI_COMM_WORLD (another job's)?
 * ranks: g's world ranks (MPI_UNDEFINED for such a process), or NULL */
static int group_foreign(MPI_Group g, MPI_Group world, int *ranks)
{
    int n, foreign = 0;
    PMPI_Group_size(g, &n);
    int *idx = malloc((size_t)n * sizeof *idx), *w = ranks ? ranks : malloc((size_t)n * sizeof *w);
    if (!idx || !w)
        tds_fatal("out of memory caching a communicator's ranks");
    for (int i = 0; i < n; i++)
        idx[i] = i;
    PMPI_Group_translate_ranks(g, n, idx, world, w);
    for (int i = 0; i < n; i++)
        foreign |= w[i] == MPI_UNDEFINED;
    free(idx);
    if (w != ranks)
        free(w);
    return foreign;
}

/* The map of a communicator, cached as its attribute: the world ranks of
 * its group (the remote group of an intercommunicator, where sources and
 * destinations live), and whether it holds a process of another job
 * (spawned, connected, joined) in either group. Such a communicator is
 * foreign (README "Other jobs"): its messages travel as the program wrote
 * them, uncounted, and its map holds MPI_UNDEFINED for every rank, so no
 * rank of it ever reaches an algorithm or a per-rank array. Both ends of
 * such a message see the same membership, so they decide alike. */
static int *cmap_of(MPI_Comm comm)
{
    if (comm == tds.last_comm)
        return tds.last_map;
    int *map, found = 0;
    PMPI_Comm_get_attr(comm, tds.comm_keyval, &map, &found);
    if (!found) {
        int inter = 0, n;
        MPI_Group g, world;
        PMPI_Comm_test_inter(comm, &inter);
        if (inter)
            PMPI_Comm_remote_group(comm, &g);
        else
            PMPI_Comm_group(comm, &g);
        PMPI_Group_size(g, &n);
        /* references from pending receives, freed flag, foreign, n, then the world ranks */
        map = malloc((size_t)(n + TDS_MAP_RANKS) * sizeof *map);
        if (!map)
            tds_fatal("out of memory caching a communicator's ranks");
        PMPI_Comm_group(MPI_COMM_WORLD, &world);
        int foreign = group_foreign(g, world, map + TDS_MAP_RANKS);
        if (inter && !foreign) { /* the local group too: a merged one may hold another job's processes */
            MPI_Group lg;
            PMPI_Comm_group(comm, &lg);
            foreign = group_foreign(lg, world, NULL);
            PMPI_Group_free(&lg);
        }
        for (int i = 0; foreign && i < n; i++)
            map[TDS_MAP_RANKS + i] = MPI_UNDEFINED;
        /* MPI_COMM_WORLD's group in its order, an intracommunicator: a copy
         * of it (1); another intracommunicator of this job's processes (2) */
        int world_copy = !inter && !foreign && n == tds.size;
        for (int i = 0; world_copy && i < n; i++)
            world_copy = map[TDS_MAP_RANKS + i] == i;
        if (!world_copy && !inter && !foreign)
            world_copy = 2;
        map[TDS_MAP_REFS] = map[TDS_MAP_DEAD] = 0;
        map[TDS_MAP_FOREIGN] = foreign;
        map[TDS_MAP_WORLD] = world_copy;
        map[TDS_MAP_N] = n;
        PMPI_Group_free(&g);
        PMPI_Group_free(&world);
        PMPI_Comm_set_attr(comm, tds.comm_keyval, map);
    }
    tds.last_comm = comm;
    tds.last_map = map;
    if (map[TDS_MAP_WORLD] == 1) { /* its messages may take the flat entries from now on */
        tds.fcomm = comm;
        tds.fcomm_rx = tds.nenv_tag < 0 ? comm : MPI_COMM_WORLD;
    } else if (map[TDS_MAP_WORLD] == 2) { /* the same, its ranks translated */
        tds.xcomm = comm;
        tds.xmap = map + TDS_MAP_RANKS;
        tds.xn = (unsigned)map[TDS_MAP_N];
        if (tds.nenv_tag < 0) {
            tds.xcomm_rx = comm;
            tds.x_seen = 1;
        }
    }
    return map;
}

/* world rank of `rank` in comm, total: MPI_UNDEFINED (negative) for a rank
 * outside the communicator (MPI's error to report) and for every rank of a
 * foreign communicator */
int tds_world_rank(MPI_Comm comm, int rank)
{
    if (comm == MPI_COMM_WORLD)
        return rank;
    int *map = cmap_of(comm);
    return (unsigned)rank < (unsigned)map[TDS_MAP_N] ? map[TDS_MAP_RANKS + rank] : MPI_UNDEFINED;
}

int tds_comm_foreign_slow(MPI_Comm comm)
{
    return cmap_of(comm)[TDS_MAP_FOREIGN];
}

/* "rank R of MPI_COMM_WORLD", or "rank r of communicator NAME (world rank
 * W)", for warnings: the program knows its communicators by name if it
 * named them (MPI_Comm_set_name), else by their rank within them */
void tds_describe_rank(char *buf, size_t len, MPI_Comm comm, int rank)
{
    if (comm == MPI_COMM_WORLD || comm == MPI_COMM_NULL) {
        /* MPI_COMM_NULL: the receive's communicator is freed by now, or a
         * flat receive's, which is not recorded (tds.x_seen) */
        snprintf(buf, len, "rank %d of %s", rank,
                 comm == MPI_COMM_NULL ? "the receive's communicator" : "MPI_COMM_WORLD");
        return;
    }
    char name[MPI_MAX_OBJECT_NAME] = "";
    int nl = 0, w = tds_world_rank(comm, rank);
    PMPI_Comm_get_name(comm, name, &nl);
    if (w >= 0)
        snprintf(buf, len, "rank %d of communicator %s%s%s (world rank %d)", rank, nl ? "'" : "",
                 nl ? name : "(unnamed)", nl ? "'" : "", w);
    else
        snprintf(buf, len, "rank %d of communicator %s%s%s (%s)", rank, nl ? "'" : "", nl ? name : "(unnamed)",
                 nl ? "'" : "", tds_comm_foreign(comm) ? "another job" : "no such rank");
}

int tds_tag_ignored(int tag)
{
    for (int i = 0; i < tds.cf.nignore; i++) {
        if (tag < tds.cf.ignore[i].lo)
            return 0;
        if (tag <= tds.cf.ignore[i].hi)
            return 1;
    }
    return 0;
}

/* ---------------------------------------------------------------- control transport */

static void reap_ctl_sends(void)
{
    for (int i = 0; i < tds.nslots; i++) {
        if (tds.slots[i]->req != MPI_REQUEST_NULL) {
            int done = 0;
            PMPI_Test(&tds.slots[i]->req, &done, MPI_STATUS_IGNORE);
        }
    }
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
        if (tds.slots[i]->req == MPI_REQUEST_NULL)
            return tds.slots[i];
    }
    tds_ctl_slot **v = realloc(tds.slots, (size_t)(tds.nslots + 1) * sizeof *v);
    tds_ctl_slot *s = malloc(sizeof *s);
    if (!v || !s)
        tds_fatal("out of memory for a control message");
    s->req = MPI_REQUEST_NULL;
    tds.slots = v;
    tds.slots[tds.nslots++] = s;
    return s;
}

/* td_io.send: never blocks the program */
static void ctl_send(void *user, int dest, const uint8_t *wire)
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

static void announce(void *user, uint32_t episode)
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

/* DESIGN.md §1, "No abort for a correct program": what the core finds
 * wrong at run time is warned once and reported, never an MPI_Abort.
 * - unsafe: evidence that an announcement was premature (a control or
 *   primary message of an announced episode arrived, or this rank sent a
 *   primary after learning it with no reason to work: td_engine.c,
 *   "Premature announcements"); the core goes on; the report marks the
 *   episode with the kinds of evidence and the first one in words
 *   (episodes[].unsafe_evidence, .unsafe_why).
 * - error: the core's state is inconsistent (sticky); this rank stops
 *   taking part in detection, so no later episode is announced; the report
 *   carries the message (detection.core_error). The program runs on. */
void tds_check_core(void)
{
    if (__builtin_expect(tds.core.stats.unsafe != tds.unsafe_seen, 0)) {
        tds.unsafe_seen = tds.core.stats.unsafe;
        unsigned kinds = 0;
        for (int k = 0; k < TD_EV_N; k++)
            if (tds.core.stats.unsafe_by[k] != tds.unsafe_by_seen[k]) {
                tds.unsafe_by_seen[k] = tds.core.stats.unsafe_by[k];
                kinds |= 1u << k;
            }
        tdr_episode_unsafe(&tds.m, tds.core.stats.unsafe_episode, kinds, tds.core.unsafe_msg);
        if (!tds.warned_unsafe++)
            fprintf(stderr,
                    "tdshim: rank %d: announcement %u was premature (%s): some rank was still active; it is "
                    "marked unsafe in the report (see TDSHIM_IDLE and the contract violations there); detection "
                    "goes on\n",
                    tds.rank, tds.core.stats.unsafe_episode, tds.core.unsafe_msg);
    }
    if (__builtin_expect(tds.core.error != 0, 0) && !tds.warned_error) {
        tds.warned_error = 1;
        fprintf(stderr,
                "tdshim: rank %d: termination detection stopped: %s. The program goes on; no further "
                "termination will be announced. Reported as detection.core_error.\n",
                tds.rank, tds.core.errmsg);
    }
}

static void exit_now(void);

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

/* Only polls that found control messages are timed: an empty poll of a
 * waiting rank is one MPI_Iprobe, and timing it would cost more. */
void tds_poll_control(void)
{
    int timed = 0;
    for (;;) {
        int flag = 0;
        MPI_Status st;
        uint8_t wire[TD_WIRE_SIZE];
        PMPI_Iprobe(MPI_ANY_SOURCE, TDS_CTL_TAG, tds.ctl, &flag, &st);
        if (!flag)
            break;
        if (!timed) {
            tds_enter(TDR_CAT_PROGRESS);
            timed = 1;
        }
        int n = 0;
        PMPI_Get_count(&st, MPI_BYTE, &n);
        if (n != TD_WIRE_SIZE)
            tds_fatal("control message of %d bytes from rank %d (expected %d)", n, st.MPI_SOURCE, TD_WIRE_SIZE);
        PMPI_Recv(wire, TD_WIRE_SIZE, MPI_BYTE, st.MPI_SOURCE, TDS_CTL_TAG, tds.ctl, MPI_STATUS_IGNORE);
        tds.m.ctl_bytes_recv += TD_WIRE_SIZE;
        tds.ctl_seen++;
        td_control(&tds.core, st.MPI_SOURCE, wire, TD_WIRE_SIZE);
        tds_check_core();
    }
    reap_ctl_sends();
    if (tds.npairs)
        tds_pairs_progress();
    if (tds.orphans)
        tds_reap_orphans();
    if (timed)
        tds_leave();
    if (__builtin_expect(tds.cf.verbose != 0, 0))
        progress_line();
    if (tds.pending_exit)
        exit_now();
}

/* ---------------------------------------------------------------- passive / progress */

static void go_passive(void)
{
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
        tds_reap_orphans();
    td_collective(&tds.core);
    /* a collective is activity: a spin run of empty polls starts over */
    tds_t.empty_polls_run = 0;
    tds_t.me.idle = 0;
    tds_t.spin_last = tdr_now();
    tds.poll_armed = 0; /* time in a collective is no work between polls */
    memset(tds.cand, 0, sizeof tds.cand);
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
 * poll) make the rank passive; a longer gap says the program worked
 * between two polls, so a rank the notion had judged passive is busy again
 * (td_busy: active, not dirty, counted as busy_again in the report). A
 * send or a receive restarts the run (count_send, the receive paths). A
 * message delivered makes the rank active as under every notion. */
static void spin_poll(void)
{
    if (tds_t.poll_t0 - tds_t.spin_last > tds.cf.spin_gap) {
        tds_t.empty_polls_run = 0;
        tds_t.me.idle = 0;
        if (!tds.core.active) {
            td_busy(&tds.core);
            tds.spin_mark = tds.m.prim_sent + tds.m.prim_recv + 1;
        }
    } else if (++tds_t.empty_polls_run >= tds.cf.idle_polls) {
        tds_set_passive();
    } else if (!tds.core.active) {
        tds_poll_control();
    }
    tds_t.spin_last = tdr_now();
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
 * a poll that finds a message; a comparison or two on an empty one. */
int tds_poll_scope(int tag, MPI_Comm comm)
{
    if (tag != MPI_ANY_TAG && tds.cf.nignore && tds_tag_ignored(tag))
        return 0;
    if (tds.cf.notify == TDS_NOTIFY_TAG && (comm != MPI_COMM_WORLD || (tag != MPI_ANY_TAG && tag != tds.cf.notify_tag)))
        return 0;
    return 1;
}

/* what an empty poll means under the configured notion; in_scope: the
 * poll could deliver a primary message (and the notification), see
 * tds_poll_scope. TDSHIM_IDLE=test counts empty probes as probe does,
 * and empty MPI_Test* on receives besides (README, TDSHIM_IDLE). */
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
 * at its start was not read); it cannot count anyway (two in a row). */
static void __attribute__((noinline)) busy_gap_check(int end)
{
    struct timespec ts;
    if (end) {
        tds.poll_armed = tds.poll_cpu_next; /* a poll to measure from */
        if (!tds.poll_cpu_next)
            return;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        tds.poll_cpu = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
        tds.poll_recv0 = tds.m.prim_recv;
        return;
    }
    double w = tdr_now(), iv = w - tds.poll_w;
    tds.poll_w = w;
    tds.poll_cpu_next = iv > tds.cf.spin_gap;
    if (!tds.poll_cpu_next) {
        tds.poll_gap = 0;
        return;
    }
    int gap = 0;
    if (tds.poll_armed && tds.m.prim_recv == tds.poll_recv0) {
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        double cpu = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
        gap = cpu - tds.poll_cpu > tds.cf.spin_gap;
        if (gap && tds.poll_gap) { /* two in a row: an isolated one is noise (interrupts, MPI's own work) */
            tds.m.busy_gaps++;
            tds.m.busy_gap_s += cpu - tds.poll_cpu;
        }
    }
    tds.poll_gap = (uint8_t)gap;
}

/* A run of empty polls ends at a primary message sent or received. The
 * general paths say so as they count one (tds_worked); the flat entries
 * of a single-threaded rank (tds_p2p.c) only count, and the run sees
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
static void work_tag(int tag)
{
    tdr_rank *m = &tds.m;
    int j = 0;
    while (j < m->nwork_tags && m->work_tags[j].tag != tag)
        j++;
    if (j == m->nwork_tags) {
        if (j == TDR_VIOL_TAGS)
            return;
        m->work_tags[m->nwork_tags++] = (struct tdr_worktag){.tag = tag};
    }
    m->work_tags[j].times++;
}

static void cand_poll(int kind, int in_scope)
{
    tds_sent_bytes_fold(); /* the flat sends' bytes (arithmetic) */
    uint64_t s = tds.m.prim_sent, r = tds.m.prim_recv;
    /* a message a poll found while the rank waited -- spin's judgement, the
     * strictest: test's would take a busy rank's poll for a wait, and the
     * steal request it then answers with work for a tag that carries work --
     * then primary bytes sent: its tag carries work, never one to ignore
     * (an empty reply to it, "no work", is no work) */
    if (tds.cand[TDR_CAND_SPIN] && r != tds.cand_r0[TDR_CAND_SPIN] && tds.m.prim_sent_bytes != tds.cand_b0 &&
        tds.found_tag >= 0)
        work_tag(tds.found_tag);
    tds.found_tag = -1;
    for (int c = 0; c < TDR_NCAND; c++) {
        if (!tds.cand[c])
            continue;
        if (r != tds.cand_r0[c]) {
            tds.cand[c] = 0;
        } else if (s != tds.cand_s0[c]) {
            tds.cand[c] = 0;
            tds.m.cand_breach[c]++;
        }
    }
    if (!in_scope)
        return;
    double w = tdr_now();
    int judge[TDR_NCAND];
    tds.cand_spin_run = w - tds.cand_spin_w > tds.cf.spin_gap ? 0 : tds.cand_spin_run + 1;
    tds.cand_spin_w = w;
    if (tds.cand_spin_run == 0)
        tds.cand[TDR_CAND_SPIN] = 0; /* spin sees the rank busy again (as td_busy) */
    judge[TDR_CAND_PROBE] = kind == 0;
    judge[TDR_CAND_TEST] = 1;
    judge[TDR_CAND_SPIN] = tds.cand_spin_run >= TDS_SPIN_POLLS_DEFAULT;
    if (__builtin_expect(tds_mt, 0) && !tds_mt_others_idle())
        return; /* another thread works: the rank is not idle under any notion */
    for (int c = 0; c < TDR_NCAND; c++) {
        if (judge[c] && !tds.cand[c]) {
            tds.cand[c] = 1;
            tds.cand_s0[c] = s;
            tds.cand_r0[c] = r;
            if (c == TDR_CAND_SPIN)
                tds.cand_b0 = tds.m.prim_sent_bytes;
            tds.m.cand_passive[c]++;
        }
    }
}

/* an empty poll (tds_idle_poll counted it) */
void tds_empty_poll(int kind, int recv)
{
    poll_run();
    tds.m.empty_polls++;
    tds.m.empty_tests += kind == 1 && recv;
    /* a Test* set is scanned for receives only where a notion asks (test_missed) */
    tds.m.unscoped_polls += !recv && (kind == 0 || tds.cf.idle == TDS_IDLE_TEST || tds.cf.idle == TDS_IDLE_SPIN ||
                                      tds.cf.notify == TDS_NOTIFY_NONE);
    if (__builtin_expect(tds.cf.notify == TDS_NOTIFY_NONE, 0)) {
        /* only polls in scope can be taken for idle ones: only their gaps
         * tell whether the program polls while busy */
        if (recv)
            busy_gap_check(0);
        cand_poll(kind, recv);
        idle_poll_notion(kind, recv);
        if (recv)
            busy_gap_check(1);
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
    /* the spin turns (iter < TDS_SPIN) are handled inline, tds.h */
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

/* A blocking collective of the program under a symmetric algorithm
 * (TD_ALGO_SYMMETRIC, gen_wrappers.py "collective"): a laggard rank may
 * wait for this announced rank's answer (xulau: td_tell_announced) while
 * this rank, notified, is in the next phase's collective. So the
 * collective runs as its nonblocking form, completed in a loop that keeps
 * answering control messages; it waits natively for every rank anyway. The
 * rank is active in it (tds_activity). */
int tds_collective_wait(MPI_Request *r)
{
    tds_wait w = tds_wait_begin(0);
    int done = 0, rc;
    while ((rc = PMPI_Test(r, &done, MPI_STATUS_IGNORE)) == MPI_SUCCESS && !done)
        tds_wait_step(&w);
    return rc;
}

int tds_body_Pcontrol(const int level)
{
    if (tds.cf.idle == TDS_IDLE_PCONTROL)
        tds_set_passive();
    return PMPI_Pcontrol(level);
}

/* ---------------------------------------------------------------- reports */

static tdr_meta report_meta(void)
{
    return (tdr_meta){.version = PACKAGE_VERSION,
                      .algo = tds.cf.algo->name,
                      .config = tds.cf.kv,
                      .nconfig = TDS_ENV_N,
                      .report_dir = tds.cf.report_dir,
                      .want_json = tds.cf.want_json,
                      .want_text = tds.cf.want_text,
                      .callsites_top = tds.cf.callsites,
                      .group_mode = tds.cf.report_group,
                      .stamped = !tds.nohdr};
}

/* A killed job (mpirun sends SIGTERM to every rank; Ctrl-C is SIGINT) gets
 * each rank's report so far, marked partial, with what detection was
 * waiting for (SCHEMA.md, "Partial reports"); then the signal does what
 * it would have done. Only a signal whose disposition was the default at
 * MPI_Init is caught: a program's own handler is left alone.
 *
 * The handler is async-signal-safe (DESIGN.md §7, issue 26): the rank may
 * be signalled inside malloc, stdio or MPI, holding their locks, so it
 * only formats into the room tdr_run_id reserved and calls open/write/
 * fsync/rename (tdr_write_partial). A forked child of the rank (fork,
 * system, popen) inherits the handler but is not the rank: it dies of the
 * signal at once, without a report or a word. */
static struct sigaction old_term, old_int;
static atomic_int killed; /* 1: a handler is writing the report, 2: done (lock-free: async-signal-safe) */

static void on_kill(int sig)
{
    int saved = errno;
    if (atomic_exchange(&killed, 1) != 0) {
        /* a second signal, taken by another thread while the first one's
         * handler writes (the launcher's SIGTERM after ours): dying now
         * would cut that report short, so wait for it, up to 0.8 s */
        struct timespec ts = {0, 10000000};
        for (int i = 0; i < 80 && atomic_load(&killed) != 2; i++)
            nanosleep(&ts, NULL);
    } else {
        if ((long)getpid() == tds.m.init_pid && tds.on) {
            tdr_meta meta = report_meta();
            tds_sent_bytes_fold(); /* arithmetic only */
            tdr_write_partial(&tds.m, &tds.core, &meta, sig == SIGTERM ? "SIGTERM" : "SIGINT");
        }
        atomic_store(&killed, 2);
    }
    sigaction(sig, sig == SIGTERM ? &old_term : &old_int, NULL);
    errno = saved;
    raise(sig); /* delivered when the handler returns (the signal is blocked in it) */
}

static void catch_kill(void)
{
    struct sigaction sa, cur;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_kill;
    sigemptyset(&sa.sa_mask);
    /* one report: SIGINT waits while SIGTERM's handler runs, and the reverse */
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaddset(&sa.sa_mask, SIGINT);
    if (sigaction(SIGTERM, NULL, &cur) == 0 && cur.sa_handler == SIG_DFL && !(cur.sa_flags & SA_SIGINFO))
        sigaction(SIGTERM, &sa, &old_term);
    if (sigaction(SIGINT, NULL, &cur) == 0 && cur.sa_handler == SIG_DFL && !(cur.sa_flags & SA_SIGINFO))
        sigaction(SIGINT, &sa, &old_int);
}

/* ---------------------------------------------------------------- init */

/* header-free (DESIGN.md §4; README "Header-free mode"): the algorithm
 * piggybacks nothing, so every flag of the header
 * can be derived from the envelope on the receiving side */
static int want_nohdr(const tds_config *cf)
{
    return cf->piggyback == TDS_PB_NONE ||
           (cf->piggyback == TDS_PB_AUTO && cf->algo->pb_size == 0);
}

/* What the receivers of a header-free job must agree on with the senders
 * (the predicates of tds_env_kind): a hash, 0 with a header. */
/* FNV-1a over the low `bytes` bytes of x */
static uint32_t fnv_mix(uint32_t h, uint64_t x, int bytes)
{
    for (int k = 0; k < bytes; k++)
        h = (h ^ (uint32_t)((x >> (8 * k)) & 0xffu)) * 16777619u;
    return h;
}

static int wire_key(const tds_config *cf)
{
    if (!want_nohdr(cf))
        return 0;
    uint32_t h = 2166136261u; /* FNV-1a over the values that decide a message's kind */
    int v[3] = {cf->ignore_empty, cf->notify == TDS_NOTIFY_TAG ? cf->notify_tag : -2, cf->nignore};
    for (int i = 0; i < 3 + 2 * cf->nignore; i++) {
        uint32_t x = (uint32_t)(i < 3 ? v[i] : i % 2 ? cf->ignore[(i - 3) / 2].lo : cf->ignore[(i - 3) / 2].hi);
        h = fnv_mix(h, x, 4);
    }
    return 1 + (int)(h & 0x3fffffffu);
}

/* What shapes the control protocol beyond the algorithm itself: the
 * spanning tree, a credit algorithm's constants (rank 0 sums everyone's
 * initial credit from its own), xulau's overlay. Ranks that disagree would
 * send control messages the others cannot place (core errors, a hang), so
 * every rank must set them alike. TDSHIM_CONFIRM may differ: it only
 * decides whether rank 0 confirms (xulau: how long a rank's own window is,
 * safe either way). */
static int shape_key(const tds_config *cf)
{
    const td_cfg *g = &cf->cfg;
    int64_t v[9] = {g->tree_arity};
    int n = 1;
    if (cf->algo->flags & TD_ALGO_CREDIT) {
        v[n++] = g->cda_init;
        v[n++] = g->cda_con;
        v[n++] = g->cda_wcon;
        v[n++] = g->cda_borrow;
    }
    if (cf->algo->flags & TD_ALGO_SYMMETRIC) {
        v[n++] = g->xulau_topo;
        for (int i = 0; i < 3; i++)
            v[n++] = g->xulau_dims[i];
    }
    uint32_t h = 2166136261u;
    for (int i = 0; i < n; i++)
        h = fnv_mix(h, (uint64_t)v[i], 8);
    return 1 + (int)(h & 0x3fffffffu);
}

/* Validate the configuration on every rank and agree: the lowest rank with
 * a bad value prints its one line (rank 0 when the environment is the same
 * everywhere) and every rank leaves with status 2 (DESIGN.md §5). The
 * agreement is a collective on MPI_COMM_WORLD, so the launch check comes
 * first (tds_preload.c): 0 when some rank is not under tdshim and this
 * one must step aside (TDSHIM_MIXED=native). Rank 0 first warns of
 * TDSHIM_* variables nobody reads (not fatal). */
static int configure_or_exit(void)
{
    int *tag_ub = NULL, flag = 0;
    char err[512] = "";
    /* a misspelt variable would silently leave its default: say so once,
     * before any bad value's line (the misspelling may explain it) */
    if (tds.rank == 0)
        tds_config_unknown(stderr);
    PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    int bad = tds_config_parse(&tds.cf, flag ? *tag_ub : 32767, err, sizeof err) != 0;
    if (!bad && tds.cf.callsites && tdr_sites_init(&tds.m, tds.cf.callsites) < 0) {
        snprintf(err, sizeof err,
                 "tdshim: %s='%d' is invalid: accepted values are 0 (this tdshim was built without libunwind)",
                 tds_env_docs[TDS_ENV_CALLSITES].name, tds.cf.callsites);
        bad = 1;
    }
    if (!tds_preload_check())
        return 0;
    int mine[2] = {bad ? tds.rank : tds.size, 0}, first[2];
    /* every rank must run the same algorithm: the header length and the
     * control protocol depend on it */
    int key = bad ? 0 : wire_key(&tds.cf), shape = bad ? 0 : shape_key(&tds.cf);
    int id[6] = {bad ? 0 : tds.cf.algo->id, bad ? 0 : -(int)tds.cf.algo->id, key, -key, shape, -shape}, ids[6];
    PMPI_Allreduce(mine, first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    PMPI_Allreduce(id, ids, 6, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (first[0] == tds.size && ids[0] != -ids[1]) {
        if (tds.rank == 0)
            fprintf(stderr, "tdshim: TDSHIM_ALGO differs between ranks: every rank must run the same algorithm\n");
        first[0] = -1;
    } else if (first[0] == tds.size && ids[2] != -ids[3]) {
        if (tds.rank == 0)
            fprintf(stderr, "tdshim: TDSHIM_PIGGYBACK, TDSHIM_IGNORE_TAGS, TDSHIM_IGNORE_EMPTY or TDSHIM_NOTIFY differ "
                            "between ranks: header-free messages (docs/internals.md, \"Header-free mode\") are classified by "
                            "the receiver, so every rank must set them alike\n");
        first[0] = -1;
    } else if (first[0] == tds.size && ids[4] != -ids[5]) {
        if (tds.rank == 0)
            fprintf(stderr, "tdshim: TDSHIM_TREE%s between ranks: the control protocol's %s must be the same on "
                            "every rank\n",
                    tds.cf.algo->flags & TD_ALGO_CREDIT      ? ", TDSHIM_CDA_INIT, _CON, _WCON or _BORROW differ"
                    : tds.cf.algo->flags & TD_ALGO_SYMMETRIC ? ", TDSHIM_XULAU_TOPO or TDSHIM_XULAU_DIMS differ"
                                                             : " differs",
                    tds.cf.algo->flags & TD_ALGO_CREDIT      ? "tree and credit"
                    : tds.cf.algo->flags & TD_ALGO_SYMMETRIC ? "tree and overlay"
                                                             : "spanning tree");
        first[0] = -1;
    } else if (first[0] < tds.size && tds.rank == first[0]) {
        fprintf(stderr, "%s\n", err);
    }
    if (first[0] != tds.size) {
        fflush(stderr);
        tds_preload_unpublish();
        PMPI_Finalize();
        exit(2);
    }
    return 1;
}

static void setup(int required, int provided)
{
    PMPI_Comm_rank(MPI_COMM_WORLD, &tds.rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &tds.size);
    tds.m.rank = tds.rank;
    tds.m.size = tds.size;
    tds.m.t_init = tdr_now();
    tds.m.thread_requested = required;
    tds.m.thread_provided = provided;
    if (!configure_or_exit()) { /* not every rank is under tdshim: every call passes through */
        tds_config_free(&tds.cf);
        return;
    }

    PMPI_Comm_dup(MPI_COMM_WORLD, &tds.ctl);
    PMPI_Comm_set_name(tds.ctl, "tdshim control");
    PMPI_Comm_dup(MPI_COMM_SELF, &tds.self);
    PMPI_Comm_set_errhandler(tds.self, MPI_ERRORS_RETURN);
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, map_delete, &tds.comm_keyval, NULL);
    tds.cf.cfg.rank = tds.rank;
    tds.cf.cfg.size = tds.size;
    tds.cf.cfg.gate_on_notify = tds.cf.notify == TDS_NOTIFY_TAG; /* see td_engine.c */
    td_io io = {.user = NULL, .send = ctl_send, .announce = announce};
    int rc = td_ctx_init(&tds.core, tds.cf.algo, &tds.cf.cfg, &io);
    if (rc != TD_OK)
        tds_fatal("cannot start algorithm %s: %s %s", tds.cf.algo->name, td_strerror(rc), tds.core.errmsg);
    td_stamp_base(&tds.core, TDS_HDR_MAGIC); /* the header byte of a primary: magic, stamp (td_engine.c) */
    /* header-free (DESIGN.md §4 "Header-free mode"): the algorithm
     * piggybacks nothing and cannot hold a send, so every flag of the
     * header can be derived from the envelope on the receiving side */
    tds.nohdr = want_nohdr(&tds.cf);
    tds.hdr_len = tds.nohdr ? 0 : TDS_HDR_FIXED + tds.cf.algo->pb_size;
    tds.nenv_tag = tds.nohdr && tds.cf.notify == TDS_NOTIFY_TAG ? tds.cf.notify_tag : -2;
    tds.fcomm = tds.fcomm_rx = MPI_COMM_WORLD; /* no copy of it seen yet (cmap_of) */
    tds.xcomm = tds.xcomm_rx = MPI_COMM_WORLD;
    tds.nh_slow = tds.cf.nignore || tds.cf.ignore_empty || tds.m.sites;
    tds.tc_type = MPI_BYTE; /* the type cache of tds_p2p.c starts valid */
    tds.tc_size = 1;
    tds.tc_cmax = TDS_CELL_DATA;
    tds.tc_prev = MPI_BYTE; /* the one before: a valid type too */
    tds.tc_prev_size = 1;
    tds.tc_prev_cmax = TDS_CELL_DATA;
    tds.tleft = 1; /* the first fast-path call is timed and arms the countdown */
    tds.copy_max = tds.cf.piggyback == TDS_PB_COPY       ? TDS_WIRE_MAX
                   : tds.cf.piggyback == TDS_PB_DATATYPE ? 0
                                                         : TDS_COPY_MAX_DEFAULT;
    /* send_fast (tds_p2p.c) serves copy-layout messages when nothing else
     * is asked of a send: no ignored tags to look up, no call sites */
    tds.fast_lim = tds.cf.nignore || tds.m.sites || tds.nohdr ? 0 : tds.copy_max + 1;
#ifndef OPEN_MPI
    if (tds.cf.piggyback == TDS_PB_DATATYPE && tds.rank == 0)
        fprintf(stderr, "tdshim: TDSHIM_PIGGYBACK=datatype outside Open MPI: MPICH 4.0 cannot receive some "
                        "messages into the struct datatype it uses (MPI_ERR_TRUNCATE where the program's own "
                        "receive fits; docs/internals.md, \"MPICH\"); auto avoids them\n");
    /* outside Open MPI no byte message above TDS_COPY_MAX_DEFAULT: it may
     * meet a struct receive it does not fit (send_copies, tds_p2p.c) */
    if (tds.fast_lim > TDS_COPY_MAX_DEFAULT + 1)
        tds.fast_lim = TDS_COPY_MAX_DEFAULT + 1;
#endif
    /* TDSHIM_IGNORE_EMPTY: zero-byte sends take the general path (not primary) */
    tds.fast_min = tds.cf.ignore_empty && tds.fast_lim ? 1 : 0;
    tds.fast_lim -= tds.fast_min;
    /* 'none' counts only: it never announces, so finalize must not wait */
    tds.detects = strcmp(tds.cf.algo->name, "none") != 0;
    /* a rank in a blocking collective keeps answering control messages
     * where another rank's detection may wait for it: a symmetric
     * algorithm's laggard that waits for this announced rank's answer
     * (xulau: td_tell_announced) while this rank, notified, has entered the
     * next phase's collective. No send waits for another rank's answer (no
     * algorithm holds one back: issue 26), so nothing else needs it. */
    tds.coll_progress = (tds.cf.algo->flags & TD_ALGO_SYMMETRIC) != 0;
    tds.sent_to = calloc((size_t)tds.size, sizeof *tds.sent_to);
    tds.ctl_sent_to = calloc((size_t)tds.size, sizeof *tds.ctl_sent_to);
    if (!tds.sent_to || !tds.ctl_sent_to)
        tds_fatal("out of memory");
    tds.found_tag = -1;
    tds.m.init_pid = (long)getpid(); /* the rank; a forked child is not (on_kill, MPI_Finalize) */
    /* one time base for every rank's detection times (report) */
    if (tdr_clock_sync(&tds.m, tds.ctl) != 0 && tds.cf.verbose)
        fprintf(stderr, "tdshim: rank %d: clock synchronisation failed; times are local\n", tds.rank);
    if (tds.cf.want_text || tds.cf.want_json) {
        tdr_run_id(&tds.m, tds.ctl);
        catch_kill();
    }
    tds.t_progress = tds.m.t_init;
    if (provided == MPI_THREAD_MULTIPLE)
        tds_mt_init();
    tds.on = 1;
    /* a PMPI tool preloaded after tdshim: every MPI_* call goes to it first
     * (the slow path), and tdshim does its work when that tool calls PMPI_* */
    tds.fast = !tds_mt && !tds_stacked;
    tds_fast_select();
    if (tds.cf.verbose && tds.rank == 0)
        fprintf(stderr, "tdshim %s: algorithm %s, %d ranks, header %d bytes%s\n", PACKAGE_VERSION,
                tds.cf.algo->name, tds.size, tds.hdr_len, tds.nohdr ? " (header-free)" : "");
    if (tds.cf.verbose && tds.rank == 0 && tds_stacked)
        fprintf(stderr, "tdshim: a PMPI tool is preloaded after tdshim (%s): its MPI_* wrappers see every call first, "
                "tdshim observes them at its PMPI_* entry points\n", tds_stacked_lib);
}

int tds_body_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) {
        int provided = MPI_THREAD_SINGLE;
        PMPI_Query_thread(&provided);
        setup(MPI_THREAD_SINGLE, provided);
    }
    return rc;
}

/* The program gets the thread level MPI grants: under
 * MPI_THREAD_MULTIPLE the wrappers serialize on one lock (tds_mt.c) */
int tds_body_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        setup(required, *provided);
    return rc;
}

/* ---------------------------------------------------------------- finalize */

/* wait for a request on the private communicator, keeping the protocol
 * going (other ranks may still need this rank's answers) */
static void wait_progressing(MPI_Request *r, double deadline)
{
    tds_wait w = tds_wait_begin(0);
    for (;;) {
        int done = 0;
        PMPI_Test(r, &done, MPI_STATUS_IGNORE);
        if (done || (deadline > 0 && tdr_now() > deadline))
            return;
        tds_wait_step(&w);
    }
}

/* Primaries still queued at this rank at MPI_Finalize (sent to it, never
 * received): found by probing MPI_COMM_WORLD once every rank is in
 * MPI_Finalize, received (discarded) to reach the next one, and counted
 * per tag for the report. Notifications the program did not consume and
 * messages on ignored tags are not primaries; messages on other
 * communicators, or matched by a receive the program never completed, are
 * only in the count (tdr_rank.unreceived). */
static void unreceived_tags(void)
{
    for (int k = 0; k < 1000000; k++) {
        int flag = 0, n = 0;
        MPI_Status st;
        PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        if (!flag)
            return;
        PMPI_Get_count(&st, MPI_BYTE, &n);
        uint8_t *b = tds_scratch((size_t)(n > 0 ? n : 1));
        PMPI_Recv(b, n, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int kind = tds.nohdr ? tds_env_kind(st.MPI_SOURCE, st.MPI_TAG, n < 0 ? 0 : (size_t)n, MPI_COMM_WORLD)
                             : tds_hdr_kind(b, (size_t)n, (size_t)tds.hdr_len);
        if (n < 0 || kind != TDS_HK_PRIMARY)
            continue;
        tdr_unreceived_add(&tds.m, st.MPI_TAG, (uint64_t)(n - tds.hdr_len));
    }
}

/* DESIGN.md §1 "Finalize": passive for good; finish the current episode
 * (bounded by TDSHIM_FINALIZE_TIMEOUT once every rank is here), count the
 * primaries sent to this rank that it never received, write the reports. */
/* Control messages still in flight to this rank at MPI_Finalize (sent
 * after its last turn of the protocol, which no one needs any more) are
 * received and dropped, so that none is left unmatched: MPICH over UCX
 * prints a warning on the program's stdout for each one. Every rank has
 * stopped sending them (the reduction that counted them is behind every
 * rank), so "to_me" is final; a deadline keeps a miscount from hanging. */
static void drain_control(uint64_t to_me)
{
    double deadline = tdr_now() + 2.0;
    while (tds.ctl_seen < to_me && tdr_now() < deadline) {
        int flag = 0;
        MPI_Status st;
        PMPI_Iprobe(MPI_ANY_SOURCE, TDS_CTL_TAG, tds.ctl, &flag, &st);
        if (flag) {
            uint8_t wire[TD_WIRE_SIZE];
            PMPI_Recv(wire, TD_WIRE_SIZE, MPI_BYTE, st.MPI_SOURCE, TDS_CTL_TAG, tds.ctl, MPI_STATUS_IGNORE);
            tds.ctl_seen++; /* dropped unread: not in the report's received counts */
        }
    }
}

static void finish(void)
{
    tds.m.t_end = tdr_now();
    tds_enter(TDR_CAT_FINALIZE);
    if (tds.orphans)
        tds_reap_orphans(); /* receives the program freed may have completed */
    /* entering MPI_Finalize is an active rank's last busy->idle transition:
     * an episode closed here has a LastPassive and a Latency (report) */
    if (tds.core.active)
        tds.m.t_last_passive = tdr_now();
    td_finalize(&tds.core);
    tds_check_core();
    if (tds.detects) {
        /* 1: every rank reaches finalize (ranks still running need our
         * answers meanwhile); the all-reduce of the primary counts is that
         * barrier. Once every rank is here nothing can be sent any more:
         * the counts are final. */
        uint64_t mine[2] = {tds.m.prim_sent, tds.m.prim_recv}, all[2] = {0, 0};
        MPI_Request all_here;
        PMPI_Iallreduce(mine, all, 2, MPI_UINT64_T, MPI_SUM, tds.ctl, &all_here);
        wait_progressing(&all_here, 0);
        /* 2: with every primary received, the job is quiescent and the
         * algorithm proves it within its bound: the episode ends with an
         * announcement, or was already announced with no activity since
         * (dirty is only cleared by an announcement). With primaries left
         * unreceived it can never be proven (they stay in transit): the
         * episode closes at once, and the report lists them. */
        if (all[0] == all[1]) {
            double deadline = tdr_now() + tds.cf.finalize_timeout;
            tds_wait w = tds_wait_begin(0);
            while (tds.core.dirty && tdr_now() < deadline)
                tds_wait_step(&w);
            if (tds.core.dirty && tds.rank == 0)
                fprintf(stderr, "tdshim: termination not proven within TDSHIM_FINALIZE_TIMEOUT=%gs at MPI_Finalize "
                                "although every primary message was received (see the report)\n",
                        tds.cf.finalize_timeout);
        }
        /* 3: every rank learns every announcement made: a TERM still in
         * flight when its rank finished step 2 is awaited here, so an
         * episode is in every rank's report or in none (the barrier that
         * closes finalize carries the greatest episode learned) */
        uint32_t ep = td_episode(&tds.core), maxep = 0;
        MPI_Request all_done;
        PMPI_Iallreduce(&ep, &maxep, 1, MPI_UINT32_T, MPI_MAX, tds.ctl, &all_done);
        wait_progressing(&all_done, 0);
        double deadline = tdr_now() + 2.0;
        tds_wait w = tds_wait_begin(0);
        while (td_episode(&tds.core) < maxep && !tds.core.error && tdr_now() < deadline)
            tds_wait_step(&w);
    }
    unreceived_tags();
    /* what every rank sent to this one: primary messages (those never
     * received are reported) and control messages */
    uint64_t *sent = malloc(2 * (size_t)tds.size * sizeof *sent), to_me[2] = {0, 0};
    if (!sent)
        tds_fatal("out of memory at MPI_Finalize");
    for (int i = 0; i < tds.size; i++) {
        sent[2 * i] = tds.sent_to[i];
        sent[2 * i + 1] = tds.ctl_sent_to[i];
    }
    PMPI_Reduce_scatter_block(sent, to_me, 2, MPI_UINT64_T, MPI_SUM, tds.ctl);
    free(sent);
    drain_control(to_me[1]);
    tds.m.unreceived = to_me[0] > tds.m.prim_recv ? to_me[0] - tds.m.prim_recv : 0;
    if (tds.m.unreceived && tds.cf.verbose)
        fprintf(stderr, "tdshim: rank %d: %llu primary messages sent to this rank were never received\n", tds.rank,
                (unsigned long long)tds.m.unreceived);
    for (int i = 0; i < tds.nslots; i++) {
        if (tds.slots[i]->req != MPI_REQUEST_NULL) {
            int done = 0;
            PMPI_Test(&tds.slots[i]->req, &done, MPI_STATUS_IGNORE);
            if (!done)
                PMPI_Request_free(&tds.slots[i]->req);
        }
        free(tds.slots[i]);
    }
    free(tds.slots);
    tds.slots = NULL;
    tds.nslots = 0;
    tds_leave();
    tds.on = tds.fast = 0; /* the report writer's MPI calls must not be counted */
    tds_fast_select();
    tds_sent_bytes_fold();
    /* every primary carries exactly one header: derived here, not summed
     * on the fast paths */
    tds.m.pb_bytes_sent = tds.m.prim_sent * (uint64_t)tds.hdr_len;
    tds.m.pb_bytes_recv = tds.m.prim_recv * (uint64_t)tds.hdr_len;
    if (tds.cf.want_text || tds.cf.want_json) {
        tdr_meta meta = report_meta();
        tdr_write_reports(&tds.m, &tds.core, &meta, tds.ctl);
    }
    tdr_rank_free(&tds.m);
    PMPI_Comm_free(&tds.ctl);
    PMPI_Comm_free(&tds.self);
    PMPI_Comm_free_keyval(&tds.comm_keyval);
    td_ctx_fini(&tds.core);
    tds_config_free(&tds.cf);
}

int tds_body_Finalize(void)
{
    /* a forked child of the rank (it has the rank's memory) is not the rank: no report */
    if (tds.on && (long)getpid() == tds.m.init_pid) {
        tds_inside = 1;
        tds_lock();
        finish();
        tds_unlock();
        tds_inside = 0;
    }
    tds_preload_unpublish();
    return PMPI_Finalize();
}

/* TDSHIM_NOTIFY=exit[:code]: the one place the library ends the program
 * (from tds_poll_control: inside a call, holding the lock) */
static void exit_now(void)
{
    tds.pending_exit = 0;
    tds_inside = 1;
    /* the program's blocking receive in progress (MPICH over UCX warns on
     * stdout of a receive left pending at MPI_Finalize) */
    if (tds_t.brq_wait && *tds_t.brq_wait != MPI_REQUEST_NULL) {
        PMPI_Cancel(tds_t.brq_wait);
        PMPI_Wait(tds_t.brq_wait, MPI_STATUS_IGNORE);
    }
    if (tds.on)
        finish();
    tds_unlock();
    tds_preload_unpublish();
    PMPI_Finalize();
    exit(tds.cf.exit_code);
}
