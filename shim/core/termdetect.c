/*
 * McLendon's asynchronous termination detection module, "termdetect"
 * (papers/sandia-termdetect-guide.txt §2 and Algorithm 2), after Baker et al.
 *
 * Every rank is UP, DOWN or (after the announcement) TERMINATE. Counts
 * travel up the tree as {nSend, nRecv, nWork}; the root asks for a new tree
 * sum by sending a request down.
 *   leaf:     UP -> send counts, DOWN. DOWN + request -> send counts again.
 *   internal: UP + all children -> send subtree sums, DOWN.
 *             DOWN + request -> forward the request, UP.
 *   root:     UP + all children -> TERMINATE if the sends and receives
 *             match and no work was performed since the previous iteration
 *             (§2: "checks ... that the number of sends and receives match
 *             and that no additional work was performed"); otherwise
 *             request again.
 * TERMINATE is the engine's terminate broadcast (td_quiescent).
 *
 * nWork of a rank = its idle->active transitions (c->stats.idle_to_busy)
 * plus the work units its program declared (td_termdetect_add_work, the
 * termdetect API's termdetect_update_workcount). Both only grow, and a rank
 * only sends or receives while active, so equal work sums in two consecutive
 * iterations mean no rank left idleness between its two reports: at the
 * root's request between them every rank was idle and nSend == nRecv.
 * Algorithm 2 read literally compares only the work counts; that misses a
 * message in transit during both iterations: the test-only variant
 * termdetect-workonly.
 *
 * All protocol work happens in on_passive (the guide's termdetect_process()
 * is called when the rank "has nothing left to do"). Iteration numbers
 * (seq) are never reused, across episodes too.
 */
#include "td_algo.h"

#include <stdio.h>

enum { TDT_UP = 0, TDT_REQUEST, TDT_NTYPES };
static const char *const tdt_types[TDT_NTYPES] = {"up", "request"};

/* the guide's state_type values (include/termdetect.h mirrors them) */
enum { TDT_S_UP = 0, TDT_S_DOWN = 1, TDT_S_TERMINATE = 2 };

typedef struct termdetect {
    int state;              /* TDT_S_UP / TDT_S_DOWN */
    uint64_t iter;          /* iteration this rank is in (or last reported) */
    uint8_t request;        /* request for `iter` received, not yet served */
    uint8_t dirty;          /* OR of the children's TD_MF_DIRTY */
    int children;           /* UP messages received for `iter` */
    int64_t ns, nr, nw;     /* subtree sums of the children */
    int64_t user_work;      /* work units declared by the program */
    int64_t work_old;       /* root: work sum of the previous iteration */
    uint8_t has_old;        /* root: a previous iteration exists in this episode */
    uint8_t terminated;     /* an announcement was learned */
    uint8_t work_only;      /* test-only variant: Algorithm 2 literally */
} termdetect;

int td_termdetect_add_work(td_ctx *c, int64_t n);
int td_termdetect_state(const td_ctx *c);

static void up(termdetect *s, uint64_t iter)
{
    s->state = TDT_S_UP;
    s->iter = iter;
    s->dirty = 0;
    s->children = 0;
    s->ns = s->nr = s->nw = 0;
}

static int tdt_init(td_ctx *c, void *st)
{
    (void)c;
    up(st, 1);
    return TD_OK;
}

static int64_t my_work(const td_ctx *c, const termdetect *s)
{
    return (int64_t)c->stats.idle_to_busy + s->user_work;
}

static int tdt_on_control(td_ctx *c, void *st, int src, const td_msg *m)
{
    termdetect *s = st;
    if (m->type == TDT_REQUEST) {
        if (src != c->tree.parent || s->state != TDT_S_DOWN || s->request || m->seq <= s->iter)
            return td_fail(c, "termdetect: request %llu from rank %d (parent %d, iteration %llu, state %s)",
                           (unsigned long long)m->seq, src, c->tree.parent, (unsigned long long)s->iter,
                           s->state == TDT_S_UP ? "up" : "down");
        s->iter = m->seq;
        s->request = 1;
        return TD_OK;
    }
    if (s->state != TDT_S_UP || m->seq != s->iter || s->children >= c->tree.nchildren ||
        !td_child(c, src) || !td_count_ok(m->a) || !td_count_ok(m->b) || !td_count_ok(m->c))
        return td_fail(c, "termdetect: up %llu from rank %d in iteration %llu (state %s, %d of %d children)",
                       (unsigned long long)m->seq, src, (unsigned long long)s->iter,
                       s->state == TDT_S_UP ? "up" : "down", s->children, c->tree.nchildren);
    s->children++;
    s->ns += m->a;
    s->nr += m->b;
    s->nw += m->c;
    s->dirty |= m->flags & TD_MF_DIRTY;
    return TD_OK;
}

static void send_request(td_ctx *c, termdetect *s)
{
    for (int i = 0; i < c->tree.nchildren; i++) {
        td_msg m = {.type = TDT_REQUEST, .seq = s->iter};
        td_send(c, c->tree.first_child + i, &m);
    }
}

/* Algorithm 2, case root, with all children's sums in. */
static void root_decide(td_ctx *c, termdetect *s, int64_t ns, int64_t nr, int64_t nw, int dirty)
{
    int same_work = s->has_old && s->work_old == nw;
    int done = s->work_only ? same_work : same_work && ns == nr;
    /* a previous iteration only counts if its own sends and receives matched */
    s->has_old = ns == nr || s->work_only;
    s->work_old = nw;
    s->state = TDT_S_DOWN; /* "asks" again at the next on_passive unless done */
    if (done)
        td_quiescent(c, dirty);
}

static void tdt_on_passive(td_ctx *c, void *st)
{
    termdetect *s = st;
    /* a root without children (P = 1) completes its iterations here: two
     * per call, or counts that differ (a message to itself not received
     * yet) would loop for ever (found by tests/fuzz) */
    for (int iters = 0; iters < 2; iters++) {
        if (c->tree.parent < 0 && s->state == TDT_S_DOWN) {
            up(s, s->iter + 1); /* "send message down to children to do tree sum again" */
            send_request(c, s);
            c->stats.waves++;
        }
        if (s->request) {
            s->request = 0;
            c->stats.waves++;
            if (c->tree.nchildren) { /* internal: forward the request, UP */
                up(s, s->iter);
                send_request(c, s);
            } else { /* leaf: answer with fresh counts (stays DOWN) */
                up(s, s->iter);
            }
        }
        if (s->state != TDT_S_UP || s->children < c->tree.nchildren)
            return;
        int64_t ns = s->ns + (int64_t)c->sent, nr = s->nr + (int64_t)c->recvd, nw = s->nw + my_work(c, s);
        int dirty = s->dirty || c->dirty;
        if (c->tree.parent >= 0) {
            td_msg m = {.type = TDT_UP, .seq = s->iter, .a = ns, .b = nr, .c = nw,
                        .flags = (uint8_t)(dirty ? TD_MF_DIRTY : 0)};
            td_send(c, c->tree.parent, &m);
            s->state = TDT_S_DOWN;
            return;
        }
        uint32_t ep = c->episode;
        root_decide(c, s, ns, nr, nw, dirty);
        if (c->episode != ep || c->dormant || c->error)
            return;
    }
}

static void tdt_new_episode(td_ctx *c, void *st)
{
    termdetect *s = st;
    (void)c;
    /* every rank is DOWN in the announced iteration; the next episode starts
     * UP everywhere without a request, numbered alike */
    up(s, s->iter + 1);
    s->request = 0;
    s->has_old = 0;
    s->terminated = 1;
}

int td_termdetect_add_work(td_ctx *c, int64_t n)
{
    if (!c || !c->algo || c->algo->id != 4 || n < 0)
        return TD_EINVAL;
    c->gen++; /* an input of the passive turn (td_engine.c, "Quiet turns") */
    ((termdetect *)c->st)->user_work += n;
    return TD_OK;
}

int td_termdetect_state(const td_ctx *c)
{
    if (!c || !c->algo || c->algo->id != 4)
        return TD_EINVAL;
    const termdetect *s = c->st;
    return s->terminated ? TDT_S_TERMINATE : s->state;
}

/* what this rank's part of the iterations waits for (td_describe) */
static void tdt_describe(const td_ctx *c, const void *st, char *buf, size_t len)
{
    const termdetect *s = st;
    char ch[48];
    td_children_str(c, ch, sizeof ch);
    if (s->state == TDT_S_UP)
        snprintf(buf, len, "termdetect: iteration %llu up, %d of %d reports in (%s), work %lld",
                 (unsigned long long)s->iter, s->children, c->tree.nchildren, ch, (long long)s->user_work);
    else
        snprintf(buf, len, "termdetect: iteration %llu reported, waiting for the next request%s, work %lld",
                 (unsigned long long)s->iter, s->request ? " (received)" : "", (long long)s->user_work);
}

const td_algo td_algo_termdetect = {
    .name = "termdetect",
    .id = 4,
    .flags = TD_ALGO_FIXPOINT,
    .ntypes = TDT_NTYPES,
    .type_names = tdt_types,
    .pb_size = 0,
    .state_size = sizeof(termdetect),
    .init = tdt_init,
    .new_episode = tdt_new_episode,
    .on_passive = tdt_on_passive,
    .on_control = tdt_on_control,
    .describe = tdt_describe,
};

#ifdef TD_TEST_BROKEN
/* Deliberately broken for tests: Algorithm 2 taken literally, the root
 * compares only the work counts of two iterations, so a primary message in
 * transit through both (no rank became active) goes unnoticed. */
static int tdt_work_only_init(td_ctx *c, void *st)
{
    termdetect *s = st;
    (void)c;
    up(s, 1);
    s->work_only = 1;
    return TD_OK;
}
const td_algo td_algo_termdetect_workonly = {
    .name = "termdetect-workonly",
    .id = 4,
    .flags = TD_ALGO_BROKEN | TD_ALGO_FIXPOINT,
    .ntypes = TDT_NTYPES,
    .type_names = tdt_types,
    .pb_size = 0,
    .state_size = sizeof(termdetect),
    .init = tdt_work_only_init,
    .new_episode = tdt_new_episode,
    .on_passive = tdt_on_passive,
    .on_control = tdt_on_control,
    .describe = tdt_describe,
};
#endif
