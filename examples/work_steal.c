/*
 * Random-tree search with work stealing, written the way such codes are
 * (UTS-style): each rank expands tree nodes from a local stack; a standing
 * MPI_Irecv for steal requests is tested with MPI_Test every --poll-every
 * nodes while busy and in an MPI_Testany loop while idle; an idle rank
 * sends a steal request (TAG_REQ) to a random victim, which answers on the
 * work tag (TAG_WORK) with a chunk of up to --chunk nodes from the bottom
 * of its stack, or with a zero-byte "no work" message on the same tag.
 * Between failed steals the thief backs off (50 us doubling to 2 ms).
 * A phase ends without a collective (see drain()).
 *
 * For tdshim this is the hard pattern (issue 11): polls while busy
 * (TDSHIM_IDLE=spin), steal requests sent by idle ranks
 * (TDSHIM_IGNORE_TAGS=1) and "no work" replies that share the work tag
 * (TDSHIM_IGNORE_EMPTY=1; without it every such reply is a contract
 * violation).
 *
 * --phases N searches N trees (tree p has seed hash(seed, p), root on rank
 * p % P), one after the other; each phase ends on the done message (or,
 * with --native-stop, on the program's own Dijkstra-Safra token detection)
 * and the phases are separated by an MPI_Allreduce. Ground truth: every
 * rank expands every tree alone to count its nodes; the ranks' node counts
 * of each phase must add up to it. Every rank also records when it last ran
 * out of work and when it was notified: no rank may be notified before the
 * last rank ran out of work (ex_timeline_check).
 */
#include "ex_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG_REQ 1   /* steal request: one int, the thief's rank */
#define TAG_WORK 2  /* steal reply: 2 int64 per node, or zero bytes: no work */
#define TAG_TOKEN 3 /* --native-stop: Safra's token {count, black} */
#define TAG_STOP 4  /* --native-stop: rank 0 ends the phase */

typedef ex_node node;

typedef struct ws {
    ex_ctx x;
    int chunk, poll_every, nphases;
    ex_tree t; /* this phase's tree */
    ex_stack st; /* the local stack */
    /* standing requests: 0 steal request, 1 steal reply, 2 done/stop, 3 token */
    MPI_Request rq[4];
    int req_from;
    int64_t *reply; /* 2 * chunk words */
    int64_t token_in[2];
    int steal_pending, victim, finished_from;
    double backoff, next_steal;
    uint64_t steals, steals_failed, nowork_sent, chunks_sent;
    ex_safra safra; /* --native-stop: counts work chunks */
    double t_idle, t_notify;
} ws;

static int expand_one(ws *w)
{
    node v;
    ex_work(&w->x);
    w->x.tasks++;
    return ex_tree_expand(&w->t, &w->st, &v);
}

static int post_req(ws *w)
{
    return MPI_Irecv(&w->req_from, 1, MPI_INT, MPI_ANY_SOURCE, TAG_REQ, MPI_COMM_WORLD, &w->rq[0]);
}

/* Answers the steal request just received: a chunk from the bottom of the
 * stack (the oldest nodes, the biggest subtrees) if there are at least two
 * nodes, else a zero-byte "no work" message on the work tag. */
static int serve(ws *w)
{
    int thief = w->req_from, rc;
    if (thief < 0) { /* "finished": that rank sends no more requests */
        w->finished_from++;
        return post_req(w);
    }
    size_t give = w->st.n >= 2 ? w->st.n / 2 : 0;
    if (give > (size_t)w->chunk)
        give = (size_t)w->chunk;
    if (give == 0) {
        rc = MPI_Send(NULL, 0, MPI_BYTE, thief, TAG_WORK, MPI_COMM_WORLD);
        w->nowork_sent++;
    } else {
        rc = ex_stack_give(&w->st, give, thief, TAG_WORK) == 0 ? MPI_SUCCESS : MPI_ERR_OTHER;
        w->chunks_sent++;
        w->safra.count++;
        w->x.sent++;
    }
    if (rc != MPI_SUCCESS)
        return -1;
    return post_req(w);
}

static int steal(ws *w)
{
    w->victim = ex_victim(&w->x, w->steals);
    w->steals++;
    w->steal_pending = 1;
    if (MPI_Send(&w->x.rank, 1, MPI_INT, w->victim, TAG_REQ, MPI_COMM_WORLD) != MPI_SUCCESS)
        return -1;
    return MPI_Irecv(w->reply, 2 * w->chunk, MPI_INT64_T, w->victim, TAG_WORK, MPI_COMM_WORLD,
                     &w->rq[1]) == MPI_SUCCESS
               ? 0
               : -1;
}

static int got_reply(ws *w, const MPI_Status *st)
{
    int words = 0;
    MPI_Get_count(st, MPI_INT64_T, &words);
    w->steal_pending = 0;
    if (words == 0) {
        w->steals_failed++;
        w->next_steal = MPI_Wtime() + w->backoff;
        w->backoff = w->backoff * 2 > 2e-3 ? 2e-3 : w->backoff * 2;
        return 0;
    }
    w->backoff = 50e-6;
    w->next_steal = 0;
    w->x.recvd++;
    w->safra.count--;
    w->safra.black = 1;
    return ex_stack_take(&w->st, w->reply, words);
}

/* One phase: returns 0 when the done (or stop) message arrived. */
static int search(ws *w)
{
    ex_ctx *x = &w->x;
    int P = x->size, native = x->o.native_stop, since_poll = 0, was_busy = 1;
    for (;;) {
        if (w->st.n > 0) {
            if (expand_one(w) != 0)
                return -1;
            was_busy = 1;
            if (++since_poll >= w->poll_every && P > 1) {
                int flag = 0;
                since_poll = 0;
                MPI_Status st;
                if (MPI_Test(&w->rq[0], &flag, &st) != MPI_SUCCESS || (flag && serve(w) != 0))
                    return -1;
            }
            continue;
        }
        if (was_busy) {
            w->t_idle = ex_now(x);
            was_busy = 0;
        }
        if (native && P == 1)
            return 0;
        /* Safra's algorithm (ex_safra_pass): the token on tag 3, rank 0's stop on tag 4 */
        if (native && ex_safra_pass(x, &w->safra, TAG_TOKEN, TAG_STOP) == 1) {
            w->t_notify = ex_now(x);
            return 0;
        }
        if (!w->steal_pending && P > 1 && MPI_Wtime() >= w->next_steal && steal(w) != 0)
            return -1;
        int idx = MPI_UNDEFINED, flag = 0;
        MPI_Status st;
        if (MPI_Testany(native ? 4 : 3, w->rq, &idx, &flag, &st) != MPI_SUCCESS)
            return -1;
        if (!flag || idx == MPI_UNDEFINED)
            continue;
        switch (idx) {
        case 0:
            if (serve(w) != 0)
                return -1;
            break;
        case 1:
            if (got_reply(w, &st) != 0)
                return -1;
            break;
        case 2:
            w->t_notify = ex_now(x);
            if (!native)
                x->notifications++;
            return 0;
        case 3:
            w->safra.have_token = 1;
            w->safra.token[0] = w->token_in[0];
            w->safra.token[1] = w->token_in[1];
            if (MPI_Irecv(w->token_in, 2, MPI_INT64_T, (x->rank + P - 1) % P, TAG_TOKEN,
                          MPI_COMM_WORLD, &w->rq[3]) != MPI_SUCCESS)
                return -1;
            break;
        }
    }
}

/* After the notification: finish our own steal (its reply may still bring
 * work, which is then expanded: nothing is lost even if a detector was
 * wrong), then tell every rank "finished" on the request tag (-1) and keep
 * answering "no work" until every other rank said so too. MPI keeps the
 * order of one sender's messages on one tag, so after a rank's "finished"
 * no request of its can arrive and the standing receive can be cancelled.
 * No collective here: a collective after the notification is new activity
 * for the detector (DESIGN.md §1), ignored messages are not. */
static int drain(ws *w)
{
    int P = w->x.size, sent_finished = 0;
    for (;;) {
        if (w->st.n > 0) {
            if (expand_one(w) != 0)
                return -1;
            if (w->st.n == 0)
                w->t_idle = ex_now(&w->x);
            continue;
        }
        if (!w->steal_pending && !sent_finished) {
            if (ex_tell_others(&w->x, -1, TAG_REQ) != 0)
                return -1;
            sent_finished = 1;
        }
        if (sent_finished && w->finished_from == P - 1)
            break;
        int idx = MPI_UNDEFINED, flag = 0;
        MPI_Status st;
        if (MPI_Testany(2, w->rq, &idx, &flag, &st) != MPI_SUCCESS)
            return -1;
        if (!flag || idx == MPI_UNDEFINED)
            continue;
        if (idx == 0 && serve(w) != 0)
            return -1;
        if (idx == 1 && got_reply(w, &st) != 0)
            return -1;
    }
    if (w->rq[0] != MPI_REQUEST_NULL) {
        MPI_Cancel(&w->rq[0]);
        MPI_Wait(&w->rq[0], MPI_STATUS_IGNORE);
    }
    return 0;
}

static int run_phase(ws *w, int p, uint64_t *expect)
{
    ex_ctx *x = &w->x;
    int P = x->size, ok = 1;
    if (ex_tree_phase(x, &w->t, &w->st, p, 0x7eee, expect) != 0)
        return 0;
    w->steal_pending = 0;
    w->finished_from = 0;
    w->backoff = 50e-6;
    w->next_steal = 0;
    w->safra = (ex_safra){0};
    w->t_idle = ex_now(x);
    w->t_notify = -1;
    for (int i = 0; i < 4; i++)
        w->rq[i] = MPI_REQUEST_NULL;
    if (P > 1 && post_req(w) != MPI_SUCCESS)
        return 0;
    if (x->o.native_stop) {
        if (P > 1 && (MPI_Irecv(NULL, 0, MPI_BYTE, 0, TAG_STOP, MPI_COMM_WORLD, &w->rq[2]) != MPI_SUCCESS ||
                      MPI_Irecv(w->token_in, 2, MPI_INT64_T, (x->rank + P - 1) % P, TAG_TOKEN, MPI_COMM_WORLD,
                                &w->rq[3]) != MPI_SUCCESS))
            return 0;
    } else if (MPI_Irecv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, x->o.done_tag, MPI_COMM_WORLD, &w->rq[2]) !=
               MPI_SUCCESS) {
        return 0;
    }
    uint64_t tasks0 = x->tasks;
    if (search(w) != 0 || drain(w) != 0) {
        fprintf(stderr, "work_steal: rank %d: MPI error in phase %d\n", x->rank, x->phases);
        return 0;
    }
    /* rank 0's stop receive is never matched; a token cannot be in flight */
    for (int i = 2; i < 4; i++)
        if (w->rq[i] != MPI_REQUEST_NULL) {
            MPI_Cancel(&w->rq[i]);
            MPI_Wait(&w->rq[i], MPI_STATUS_IGNORE);
        }
    ok &= ex_phase_end(x) == 0;
    ok &= ex_timeline_check(x, w->t_idle, w->t_notify);
    ok &= ex_phase_total(x, x->tasks - tasks0, *expect, "nodes expanded");
    return ok;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ws w = {.t = {.root_children = 40, .max_depth = 40, .q = 0.22, .branch = 4}, .chunk = 8, .poll_every = 4, .nphases = 1};
    const ex_opt opts[] = {
        {"phases", EX_INT, &w.nphases, 1, 100000, "trees searched one after the other, one phase each (default 1)"},
        {"root-children", EX_INT, &w.t.root_children, 0, 1 << 20, "children of each tree's root (default 40)"},
        {"q", EX_DOUBLE, &w.t.q, 0, 0.2499, "probability that a node has --branch children (default 0.22)"},
        {"branch", EX_INT, &w.t.branch, 1, 4, "children of an inner node (default 4; q*branch < 1)"},
        {"max-depth", EX_INT, &w.t.max_depth, 1, 1000, "nodes at this depth have no children (default 40)"},
        {"chunk", EX_INT, &w.chunk, 1, 1 << 16, "most nodes a victim gives away per steal (default 8)"},
        {"poll-every", EX_INT, &w.poll_every, 1, 1 << 20, "nodes expanded between two steal-request polls (default 4)"},
    };
    int rc = ex_init(&w.x, "work_steal",
                     "Random-tree search with work stealing; 'no work' replies are empty messages on the work tag.",
                     argc, argv, opts, sizeof opts / sizeof opts[0], 0, 10);
    if (rc != 0) {
        MPI_Finalize();
        return rc > 0 ? 0 : 2;
    }
    ex_ctx *x = &w.x;
    w.reply = malloc(2 * (size_t)w.chunk * sizeof *w.reply);
    if (!w.reply)
        MPI_Abort(MPI_COMM_WORLD, 2);
    ex_clock_sync(x);
    int ok = 1;
    uint64_t expected = 0;
    for (int p = 0; p < w.nphases; p++) {
        uint64_t e = 0;
        ok &= run_phase(&w, p, &e);
        expected += e;
    }
    uint64_t loc[3] = {w.steals, w.steals_failed, w.nowork_sent}, tot[3];
    MPI_Allreduce(loc, tot, 3, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    char extra[200];
    snprintf(extra, sizeof extra, "steals=%llu failed=%llu nowork=%llu early=%d latency_max=%.6f",
             (unsigned long long)tot[0], (unsigned long long)tot[1], (unsigned long long)tot[2], x->early,
             x->lat_max);
    rc = ex_result(x, ok, expected, extra);
    free(w.st.v);
    free(w.reply);
    ex_fini(x);
    MPI_Finalize();
    return rc;
}
