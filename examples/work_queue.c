/*
 * A distributed work queue shaped like the libraries parallel file tools
 * use (libcircle's design; issue 41), driving a tree search. Every rank
 * keeps a local queue of items; its worker loop, before each item:
 *   1. probes for steal requests (MPI_Iprobe(ANY_SOURCE, TAG_REQ)) and
 *      answers each one: half its queue (from the bottom: the oldest items,
 *      the biggest subtrees) as one message on TAG_WORK, or, with fewer
 *      than two items, "no work": a SHORT NON-EMPTY message (4 bytes) on
 *      the same TAG_WORK;
 *   2. probes for receipts (TAG_RECEIPT): a thief that receives work sends
 *      one back to its victim;
 *   3. if it has a steal request outstanding, probes for the reply
 *      (MPI_Iprobe(victim, TAG_WORK)).
 * A busy rank thus makes two back-to-back, usually empty probes before
 * each item. A rank whose queue is empty sends a steal request to a random
 * rank (one outstanding at a time, no back-off) and, in that "no work"
 * branch of the loop, probes for the done tag (--done-tag N, tdshim's
 * TDSHIM_NOTIFY=tag:N); when it arrives the rank leaves the loop.
 *
 * After leaving, it behaves like such a library's cleanup: it waits for
 * the reply to its own outstanding request and DROPS any work in it (the
 * items are counted in dropped=), keeps answering "no work" and taking
 * receipts, tells every rank "finished" (-1 on TAG_REQ) and is done when
 * every other rank said so and every chunk it gave away was receipted.
 * MPI keeps the order of one sender's messages on one tag, so after a
 * rank's "finished" no request of its can arrive. No collective is called
 * between the notification and the end of --linger-ms (a collective would
 * be new activity for the detector, DESIGN.md §1). A premature
 * notification therefore loses work here instead of only losing
 * parallelism: a notified rank drops what its victim still sends it.
 *
 * Workloads (--workload): `long`, ~7,500 items of 26-84 us each, and
 * `short`, ~85,000 items of 1.3-5 us each. The tree and every item's
 * duration are pure functions of --seed: every rank counts the whole tree
 * alone (the ground truth, expected=). Items are spun on the thread's CPU
 * clock (ex_spin_us). --phases N searches N trees one after the other
 * (tree p rooted on rank p % P), separated like work_steal's: the cleanup
 * above, ex_phase_end's linger, then MPI_Allreduce.
 *
 * --native-stop: the program's own termination detection instead of the
 * done tag, a Dijkstra-Safra token ring (EWD 998) on TAG_TOKEN counting
 * work chunks, rank 0 ending the phase with TAG_STOP (the native
 * baseline). Every rank records on a common clock when it last ran out of
 * work and when it was notified (ex_timeline_check): early= counts phases
 * in which some rank was notified before the last rank ran out of work.
 */
#include "ex_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG_REQ 1     /* steal request: one int, the thief's rank; -1: "finished" */
#define TAG_WORK 2    /* reply: 2 int64 per item, or one int (4 bytes): no work */
#define TAG_RECEIPT 3 /* one int: items received (sent even for dropped items) */
#define TAG_TOKEN 4   /* --native-stop: Safra's token {count, black} */
#define TAG_STOP 5    /* --native-stop: rank 0 ends the phase */
#define NOWORK_BYTES 4

typedef ex_node item;

typedef struct wq {
    ex_ctx x;
    /* workload */
    ex_tree t; /* this phase's tree */
    int nphases;
    double lo_us, hi_us;
    /* the local queue: a stack, taken from the top, given from the bottom */
    ex_stack q;
    /* stealing */
    int steal_pending, victim, left;
    uint64_t steals, receipts_due;
    int fin_from; /* "finished" messages received this phase */
    uint64_t stolen, nowork_sent, dropped, phase_dropped;
    ex_safra safra; /* --native-stop: counts work chunks */
    double t_idle, t_notify;
} wq;

static double duration_us(const wq *w, const item *v)
{
    return w->lo_us + (w->hi_us - w->lo_us) * ex_unif(w->t.seed, v->id, 2);
}

static int process_one(wq *w)
{
    item v;
    int rc = ex_tree_expand(&w->t, &w->q, &v);
    ex_spin_us(duration_us(w, &v));
    w->x.tasks++;
    return rc;
}

/* Answers one steal request from `thief`: half the queue from the bottom,
 * or 4 bytes of "no work" on the same tag. */
static int answer(wq *w, int thief)
{
    size_t give = w->q.n >= 2 ? w->q.n / 2 : 0;
    if (give == 0) {
        int nowork = 0;
        w->nowork_sent++;
        return MPI_Send(&nowork, 1, MPI_INT, thief, TAG_WORK, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
    }
    int rc = ex_stack_give(&w->q, give, thief, TAG_WORK);
    w->stolen++;
    w->receipts_due++;
    w->safra.count++;
    w->x.sent++;
    return rc;
}

/* Step 1: every steal request (or "finished") that has arrived. */
static int check_requests(wq *w)
{
    for (;;) {
        int flag = 0, thief;
        MPI_Status st;
        if (MPI_Iprobe(MPI_ANY_SOURCE, TAG_REQ, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS)
            return -1;
        if (!flag)
            return 0;
        if (MPI_Recv(&thief, 1, MPI_INT, st.MPI_SOURCE, TAG_REQ, MPI_COMM_WORLD, MPI_STATUS_IGNORE) !=
            MPI_SUCCESS)
            return -1;
        if (thief < 0)
            w->fin_from++;
        else if (answer(w, thief) != 0)
            return -1;
    }
}

/* Step 2: receipts for the chunks this rank gave away. */
static int check_receipts(wq *w)
{
    for (;;) {
        int flag = 0, n;
        MPI_Status st;
        if (MPI_Iprobe(MPI_ANY_SOURCE, TAG_RECEIPT, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS)
            return -1;
        if (!flag)
            return 0;
        if (MPI_Recv(&n, 1, MPI_INT, st.MPI_SOURCE, TAG_RECEIPT, MPI_COMM_WORLD, MPI_STATUS_IGNORE) !=
            MPI_SUCCESS)
            return -1;
        w->receipts_due--;
    }
}

/* Step 3: the reply to the outstanding steal request, if it has come.
 * Work is queued, or dropped (and counted) once the rank has left its
 * loop; either way the victim gets its receipt. */
static int check_reply(wq *w)
{
    int flag = 0, bytes = 0;
    MPI_Status st;
    if (MPI_Iprobe(w->victim, TAG_WORK, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS)
        return -1;
    if (!flag)
        return 0;
    MPI_Get_count(&st, MPI_BYTE, &bytes);
    w->steal_pending = 0;
    if (bytes == NOWORK_BYTES) {
        int nowork;
        return MPI_Recv(&nowork, 1, MPI_INT, w->victim, TAG_WORK, MPI_COMM_WORLD, MPI_STATUS_IGNORE) ==
                       MPI_SUCCESS
                   ? 0
                   : -1;
    }
    int words = bytes / (int)sizeof(int64_t);
    int64_t *buf = malloc((size_t)(words > 0 ? words : 1) * sizeof *buf);
    if (!buf || MPI_Recv(buf, words, MPI_INT64_T, w->victim, TAG_WORK, MPI_COMM_WORLD, MPI_STATUS_IGNORE) !=
                    MPI_SUCCESS) {
        free(buf);
        return -1;
    }
    int items = words / 2, rc = 0;
    w->x.recvd++;
    if (w->left) {
        w->phase_dropped += (uint64_t)items;
    } else {
        w->safra.count--;
        w->safra.black = 1;
        rc = ex_stack_take(&w->q, buf, words);
    }
    free(buf);
    if (rc == 0 && MPI_Send(&items, 1, MPI_INT, w->victim, TAG_RECEIPT, MPI_COMM_WORLD) != MPI_SUCCESS)
        rc = -1;
    return rc;
}

static int request_work(wq *w)
{
    w->victim = ex_victim(&w->x, w->steals);
    w->steals++;
    w->steal_pending = 1;
    return MPI_Send(&w->x.rank, 1, MPI_INT, w->victim, TAG_REQ, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
}

/* --native-stop, in the "no work" branch: Safra's algorithm
 * (ex_safra_pass) with the token received by probe. Returns 1 when the
 * phase ends on this rank (rank 0 decided, or its stop arrived). */
static int safra(wq *w)
{
    ex_ctx *x = &w->x;
    int P = x->size, flag = 0;
    MPI_Status st;
    if (x->rank != 0) {
        if (MPI_Iprobe(0, TAG_STOP, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS)
            return -1;
        if (flag)
            return MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_STOP, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS
                       ? 1
                       : -1;
    }
    if (!w->safra.have_token) {
        if (MPI_Iprobe((x->rank + P - 1) % P, TAG_TOKEN, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS)
            return -1;
        if (flag) {
            if (MPI_Recv(w->safra.token, 2, MPI_INT64_T, st.MPI_SOURCE, TAG_TOKEN, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE) != MPI_SUCCESS)
                return -1;
            w->safra.have_token = 1;
        }
    }
    return ex_safra_pass(x, &w->safra, TAG_TOKEN, TAG_STOP);
}

/* The worker loop: returns 0 when the done (or stop) message arrived. */
static int worker(wq *w)
{
    ex_ctx *x = &w->x;
    int P = x->size, native = x->o.native_stop, was_busy = 1;
    for (;;) {
        if (P > 1) {
            if (check_requests(w) != 0 || check_receipts(w) != 0)
                return -1;
            if (w->steal_pending && check_reply(w) != 0)
                return -1;
        }
        if (w->q.n > 0) {
            if (process_one(w) != 0)
                return -1;
            was_busy = 1;
            continue;
        }
        /* the "no work" branch */
        if (was_busy) {
            w->t_idle = ex_now(x);
            was_busy = 0;
        }
        if (native) {
            int rc = P == 1 ? 1 : safra(w);
            if (rc < 0)
                return -1;
            if (rc == 1) {
                w->t_notify = ex_now(x);
                return 0;
            }
        }
        if (!w->steal_pending && P > 1 && request_work(w) != 0)
            return -1;
        if (!native) {
            int flag = 0;
            MPI_Status st;
            if (MPI_Iprobe(MPI_ANY_SOURCE, x->o.done_tag, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS)
                return -1;
            if (flag) {
                if (MPI_Recv(NULL, 0, MPI_BYTE, st.MPI_SOURCE, x->o.done_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE) !=
                    MPI_SUCCESS)
                    return -1;
                w->t_notify = ex_now(x);
                x->notifications++;
                return 0;
            }
        }
    }
}

/* The cleanup after the loop (see the top of the file). */
static int cleanup(wq *w)
{
    int P = w->x.size, sent_fin = 0;
    w->left = 1;
    if (P == 1)
        return 0;
    for (;;) {
        if (check_requests(w) != 0 || check_receipts(w) != 0)
            return -1;
        if (w->steal_pending && check_reply(w) != 0)
            return -1;
        if (!w->steal_pending && !sent_fin) {
            if (ex_tell_others(&w->x, -1, TAG_REQ) != 0)
                return -1;
            sent_fin = 1;
        }
        if (sent_fin && w->fin_from == P - 1 && w->receipts_due == 0)
            return 0;
    }
}

static int run_phase(wq *w, int p, uint64_t *expect)
{
    ex_ctx *x = &w->x;
    int ok = 1;
    if (ex_tree_phase(x, &w->t, &w->q, p, 0x9e11, expect) != 0)
        return 0;
    w->steal_pending = w->left = w->fin_from = 0;
    w->receipts_due = w->phase_dropped = 0;
    w->safra = (ex_safra){0};
    w->t_idle = ex_now(x);
    w->t_notify = -1;
    uint64_t tasks0 = x->tasks;
    if (worker(w) != 0 || cleanup(w) != 0) {
        fprintf(stderr, "work_queue: rank %d: MPI error in phase %d\n", x->rank, x->phases);
        return 0;
    }
    if (w->phase_dropped) {
        fprintf(stderr, "work_queue: rank %d: phase %d: dropped %llu items that arrived after it left its loop\n",
                x->rank, x->phases, (unsigned long long)w->phase_dropped);
        w->dropped += w->phase_dropped;
        ok = 0;
    }
    ok &= ex_phase_end(x) == 0;
    ok &= ex_timeline_check(x, w->t_idle, w->t_notify);
    ok &= ex_phase_total(x, x->tasks - tasks0, *expect, "items processed");
    return ok;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    wq w = {.t = {.max_depth = 60, .branch = 4, .q = 0.225}, .nphases = 1};
    int root_children = -1;
    const char *workload = "long";
    const ex_opt opts[] = {
        {"workload", EX_STR, &workload, 0, 0,
         "long: ~7,500 items of 26-84 us (default); short: ~85,000 items of 1.3-5 us"},
        {"phases", EX_INT, &w.nphases, 1, 100000, "trees searched one after the other, one phase each (default 1)"},
        {"root-children", EX_INT, &root_children, 0, 1 << 22,
         "children of each tree's root (default: 750 long, 8500 short)"},
        {"q", EX_DOUBLE, &w.t.q, 0, 0.2499, "probability that an item has 4 children (default 0.225: mean 0.9)"},
        {"max-depth", EX_INT, &w.t.max_depth, 1, 1000, "items at this depth have no children (default 60)"},
    };
    int rc = ex_init(&w.x, "work_queue",
                     "A distributed work queue (libcircle's design) searching a tree: workers probe for steal\n"
                     "requests and replies before each item; 'no work' replies are 4-byte messages on the work\n"
                     "tag; thieves send receipts; a rank leaves its loop on the done message and DROPS work\n"
                     "that arrives afterwards (dropped=). Items last what --workload says (--work-us is unused).",
                     argc, argv, opts, sizeof opts / sizeof opts[0], 0, 0);
    int shortw = rc == 0 && !strcmp(workload, "short");
    if (rc == 0 && !shortw && strcmp(workload, "long")) {
        if (w.x.rank == 0)
            fprintf(stderr, "work_queue: --workload %s: not long or short\n", workload);
        rc = -1;
    }
    if (rc != 0) {
        MPI_Finalize();
        return rc > 0 ? 0 : 2;
    }
    ex_ctx *x = &w.x;
    if (shortw) {
        w.lo_us = 1.3, w.hi_us = 5;
        w.t.root_children = 8500;
    } else {
        w.lo_us = 26, w.hi_us = 84;
        w.t.root_children = 750;
    }
    if (root_children >= 0)
        w.t.root_children = root_children;
    ex_clock_sync(x);
    int ok = 1;
    uint64_t expected = 0;
    for (int p = 0; p < w.nphases; p++) {
        uint64_t e = 0;
        ok &= run_phase(&w, p, &e);
        expected += e;
    }
    uint64_t loc[4] = {w.stolen, w.nowork_sent, w.dropped, w.steals}, tot[4];
    MPI_Allreduce(loc, tot, 4, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    uint64_t mn = 0, mx = 0;
    MPI_Allreduce(&x->tasks, &mn, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&x->tasks, &mx, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    uint64_t items = 0;
    MPI_Allreduce(&x->tasks, &items, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    char extra_out[256];
    snprintf(extra_out, sizeof extra_out,
             "workload=%s items=%llu dropped=%llu early=%d stolen=%llu requests=%llu nowork=%llu items_min=%llu "
             "items_max=%llu latency_max=%.6f",
             shortw ? "short" : "long", (unsigned long long)items, (unsigned long long)tot[2], x->early,
             (unsigned long long)tot[0], (unsigned long long)tot[3], (unsigned long long)tot[1],
             (unsigned long long)mn, (unsigned long long)mx, x->lat_max);
    rc = ex_result(x, ok, expected, extra_out);
    free(w.q.v);
    ex_fini(x);
    MPI_Finalize();
    return rc;
}
