/*
 * EDOD: Mahapatra-Dutt's efficient delay-optimal distributed termination
 * detection, as described in papers/cda-credit-hpc.txt §III-C.
 *
 * Every primary message is acknowledged by a control message, and a rank may
 * not report idle (STOP to its parent in the control tree) while it has
 * unacknowledged sends or a child that has not reported STOP. The root, once
 * passive with every child stopped and nothing unacknowledged, has proven
 * quiescence.
 *
 * A primary received by a rank that already reported STOP would leave stale
 * STOPs on its ancestors, so that rank sends RESUME(s,r) up the tree; each
 * stopped ancestor forgets the child's STOP and forwards it, and the first
 * ancestor that is not stopped (or the root) answers with ACK(s,r) back down
 * the inverse path; r then acknowledges the primary to its sender s. The
 * sender's unacknowledged count keeps its own branch from stopping until
 * the ancestors of r have forgotten r's STOP (§III-C, last paragraph).
 *
 * Deviations, each for the asynchronous, episodic setting of tdshim:
 *   - the paper's ACK(s,r) is split in two types: "ack-down" travels the
 *     inverse path of the RESUME, "ack" is the final acknowledgement to the
 *     primary's sender (it carries a count: acks to one sender aggregate);
 *   - STOP and RESUME carry the child's RESUME count and STOP the child's
 *     STOP count, so a STOP counts only once every RESUME and STOP sent
 *     before it has arrived: control channels need not be FIFO (the paper
 *     assumes FIFO, §III-A; MPI gives it on one tag anyway), and no message
 *     of an announced episode is still in transit at the announcement;
 *   - every primary carries the sender's episode (4 bytes), so a receiver
 *     that has not yet learned of the announcement the sender saw acknowledges
 *     it in the next episode, where the sender waits for it;
 *   - dirty bits (TD_MF_DIRTY) ride on STOP; after a clean quiescence the
 *     engine makes the root dormant, and when it is woken (some rank became
 *     dirty, maybe with no message at all) the root re-collects fresh STOPs
 *     with a POLL down the tree instead of trusting the stale ones;
 *   - all protocol work is done in on_passive (td_algo.h): acknowledgements
 *     to an active rank wait until it polls, which only delays its sender;
 *   - a rank that revoked its STOP does not acknowledge anything (direct
 *     ack or ack-down) before its own RESUME is answered. The paper's
 *     "active parent acks at once" is unsafe with arbitrary delays: if the
 *     parent's own RESUME is still in transit and the protecting sender lies
 *     in the parent's own subtree, the root holds a stale STOP of that
 *     subtree and can announce while the parent's primaries are in transit
 *     (found by test-edod's random executions). Waiting restores the
 *     invariant: a *confirmed* rank (not stopped, no RESUME outstanding) is
 *     known as not stopped by all its ancestors, which are confirmed too, so
 *     the root cannot count its branch as stopped. An unconfirmed rank was un-stopped
 *     by a message whose sender still waits for its ack; that sender is
 *     confirmed or was itself un-stopped earlier by another waiting sender.
 *     Following senders back in time ends at a confirmed rank, so while any
 *     primary is unacknowledged (in transit, or received by a rank that may
 *     still be active) the root cannot see all its children stopped.
 */
#include "td_algo.h"

#include <stdio.h>

#include <stdlib.h>

enum { EDOD_ACK = 0, EDOD_RESUME, EDOD_STOP, EDOD_ACKDOWN, EDOD_POLL, EDOD_NTYPES };
static const char *const edod_types[EDOD_NTYPES] = {"ack", "resume", "stop", "ack-down", "poll"};

typedef struct { int s, r; } edod_pair;

typedef struct edod_child {
    uint64_t resumes;   /* RESUMEs received from this child (any order) */
    uint64_t stop_seq;  /* greatest RESUME count carried by its STOPs */
    uint64_t stop_poll; /* poll round of that STOP */
    uint64_t stops;     /* STOPs received */
    uint64_t stops_sent;/* STOPs the child had sent, by its latest STOP */
    uint8_t stop_seen, dirty;
} edod_child;

/* Acknowledgements owed to primary senders, aggregated per sender. A short
 * list (flushed at every poll), not an array of P counters per rank. */
typedef struct edod_ack { int src; uint32_t n; } edod_ack;
typedef struct edod_acks {
    edod_ack *v;
    int n, cap;
} edod_acks;

typedef struct edod {
    uint64_t unacked;     /* primaries sent, not yet acknowledged */
    uint64_t resumes;     /* RESUMEs sent to the parent */
    uint64_t stops;       /* STOPs sent to the parent */
    uint64_t poll;        /* poll round this rank takes part in */
    uint8_t stopped;      /* STOP sent and not revoked by a RESUME */
    uint8_t resume_due;   /* a RESUME waits in resume_sr */
    uint8_t awaiting;     /* our RESUME is not yet answered by an ack-down */
    uint32_t stale_down;  /* RESUMEs of earlier episodes whose ack-down may still come */
    uint8_t poll_due;     /* a POLL must go to the children */
    uint8_t declared;     /* root: declared a clean quiescence; woken, it polls */
    uint8_t broken_unacked; /* test-only variant: stop with unacked sends */
    edod_pair resume_sr;
    edod_child *ch;       /* [tree.nchildren] */
    edod_pair *down;      /* ack-downs to send */
    size_t ndown, capdown;
    edod_acks acks;       /* to send in this episode */
    edod_acks later;      /* for primaries stamped with the next episode */
} edod;

static int acks_add(td_ctx *c, edod_acks *a, int src, uint32_t n)
{
    for (int i = 0; i < a->n; i++)
        if (a->v[i].src == src) {
            a->v[i].n += n;
            return TD_OK;
        }
    if (a->n == a->cap) {
        int cap = a->cap ? 2 * a->cap : 8;
        edod_ack *v = realloc(a->v, (size_t)cap * sizeof *v);
        if (!v)
            return td_fail(c, "edod: out of memory queueing an ack");
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = (edod_ack){src, n};
    return TD_OK;
}

static int edod_init(td_ctx *c, void *st)
{
    edod *s = st;
    if (c->tree.nchildren && !(s->ch = calloc((size_t)c->tree.nchildren, sizeof *s->ch)))
        return TD_ENOMEM;
    return TD_OK;
}

static void edod_fini(td_ctx *c, void *st)
{
    edod *s = st;
    (void)c;
    free(s->ch);
    free(s->down);
    free(s->acks.v);
    free(s->later.v);
}

static void edod_on_send(td_ctx *c, void *st, int dest, uint8_t *pb)
{
    edod *s = st;
    (void)dest;
    s->unacked++;
    td_put32(pb, c->episode);
}

static void edod_on_recv(td_ctx *c, void *st, int src, const uint8_t *pb)
{
    edod *s = st;
    uint32_t ep = td_get32(pb);
    if (ep > c->episode) {
        /* the sender already learned of an announcement we have not: its
         * primary belongs to the next episode, acknowledge it there */
        acks_add(c, &s->later, src, 1);
        return;
    }
    if (s->stopped && ep == c->episode) {
        /* §III-C: an idle receiver becomes active and sends RESUME(s,r) up;
         * the sender is acknowledged when the ack comes back down */
        s->stopped = 0;
        s->resume_due = 1;
        s->resume_sr = (edod_pair){src, c->rank};
        return;
    }
    acks_add(c, &s->acks, src, 1); /* active receiver: direct ACK(s,r) */
}

static int child_index(const td_ctx *c, int src)
{
    int i = src - c->tree.first_child;
    return src >= 0 && i >= 0 && i < c->tree.nchildren ? i : -1;
}

/* Stopped: its latest STOP is of this poll round, every RESUME sent before
 * it has arrived, and no older STOP is still in transit (which would
 * otherwise reach us after the announcement on a non-FIFO network). */
static int child_stopped(const edod *s, const edod_child *k)
{
    return k->stop_seen && k->stop_seq == k->resumes && k->stop_poll == s->poll && k->stops == k->stops_sent;
}

/* The child of this rank whose subtree holds rank r, or -1. */
static int child_towards(const td_ctx *c, int r)
{
    int k = c->tree.arity;
    while (r > c->rank) {
        int p = (r - 1) / k;
        if (p == c->rank)
            return r;
        r = p;
    }
    return -1;
}

static int push_down(td_ctx *c, edod *s, int src, int r)
{
    if (s->ndown == s->capdown) {
        size_t cap = s->capdown ? 2 * s->capdown : 8;
        edod_pair *d = realloc(s->down, cap * sizeof *d);
        if (!d)
            return td_fail(c, "edod: out of memory queueing an ack");
        s->down = d;
        s->capdown = cap;
    }
    s->down[s->ndown++] = (edod_pair){src, r};
    return TD_OK;
}

static int on_resume(td_ctx *c, edod *s, int src, const td_msg *m)
{
    int i = child_index(c, src);
    /* r, which sends RESUME up its own path to the root, lies in the
     * subtree of the child it comes from (a forged r elsewhere would send
     * an ACKDOWN to no child: found by tests/fuzz) */
    if (i < 0 || m->seq == 0 || m->a < 0 || m->a >= c->size || m->b < 0 || m->b >= c->size ||
        child_towards(c, (int)m->b) != src)
        return td_fail(c, "edod: resume #%llu (s=%lld, r=%lld) from rank %d, not a child or r not in its subtree",
                       (unsigned long long)m->seq, (long long)m->a, (long long)m->b, src);
    s->ch[i].resumes++; /* forget the child's STOP */
    if (m->episode < c->episode) /* late (TD_ALGO_LATE): its STOP is gone anyway, answer at once */
        return m->b == c->rank ? acks_add(c, &s->acks, (int)m->a, 1) : push_down(c, s, (int)m->a, (int)m->b);
    if (s->stopped && c->tree.parent >= 0) {
        s->stopped = 0;
        s->resume_due = 1;
        s->resume_sr = (edod_pair){(int)m->a, (int)m->b};
        return TD_OK;
    }
    return push_down(c, s, (int)m->a, (int)m->b); /* active: ACK(s,r) down the inverse path */
}

static int edod_on_control(td_ctx *c, void *st, int src, const td_msg *m)
{
    edod *s = st;
    switch (m->type) {
    case EDOD_ACK:
        if (m->a <= 0 || (uint64_t)m->a > s->unacked)
            return td_fail(c, "edod: ack for %lld primaries from rank %d, %llu unacknowledged", (long long)m->a,
                           src, (unsigned long long)s->unacked);
        s->unacked -= (uint64_t)m->a;
        return TD_OK;
    case EDOD_RESUME:
        return on_resume(c, s, src, m);
    case EDOD_STOP: {
        int i = child_index(c, src);
        if (i < 0 || m->b < 0 || (uint64_t)m->b > s->poll || m->c <= 0)
            return td_fail(c, "edod: stop #%llu (poll %lld) from rank %d, not a child in poll %llu",
                           (unsigned long long)m->seq, (long long)m->b, src, (unsigned long long)s->poll);
        edod_child *k = &s->ch[i];
        k->stops++;
        if ((uint64_t)m->c > k->stops_sent)
            k->stops_sent = (uint64_t)m->c;
        if (m->episode < c->episode)
            return TD_OK; /* late: counted (child_stopped), not a STOP of this episode */
        k->dirty |= m->flags & TD_MF_DIRTY;
        /* a STOP older than the child's last RESUME or poll is moot; one
         * that overtook its RESUMEs counts once they have all arrived */
        if ((uint64_t)m->b == s->poll && (!k->stop_seen || k->stop_poll != s->poll || m->seq > k->stop_seq)) {
            k->stop_seen = 1;
            k->stop_seq = m->seq;
            k->stop_poll = (uint64_t)m->b;
        }
        return TD_OK;
    }
    case EDOD_ACKDOWN:
        /* the parent answers our single outstanding RESUME: every ancestor
         * up to one not stopped has forgotten our STOP */
        if (src != c->tree.parent || !(s->awaiting || s->stale_down) || m->a < 0 || m->a >= c->size)
            return td_fail(c, "edod: ack-down (s=%lld, r=%lld) from rank %d (parent %d, resume %s)", (long long)m->a,
                           (long long)m->b, src, c->tree.parent, s->awaiting ? "outstanding" : "answered");
        /* An episode can be announced while a RESUME is on its way up: a
         * rank misjudged passive (TDSHIM_IDLE=spin) sent after its STOP,
         * the root proved quiescence from stale STOPs and the confirmation
         * waves held because the message had already been received. The
         * answer then comes in the next episode; the parent answers in
         * order (FIFO channel, FIFO down list), so the oldest RESUME is
         * answered first (issue 11; test-edod). The same holds for an
         * ack-down of the episode before arriving late (TD_ALGO_LATE). */
        if (s->stale_down)
            s->stale_down--;
        else
            s->awaiting = 0;
        if (m->b == c->rank) {
            /* §III-C: "then r sends ACK(s,r) to s directly" */
            return acks_add(c, &s->acks, (int)m->a, 1);
        }
        if (m->b < 0 || m->b >= c->size || child_towards(c, (int)m->b) < 0)
            return td_fail(c, "edod: ack-down for rank %lld, outside the subtree of rank %d", (long long)m->b,
                           c->rank);
        return push_down(c, s, (int)m->a, (int)m->b);
    case EDOD_POLL:
        if (m->episode < c->episode)
            return TD_OK; /* late: the round it opened is over */
        if (src != c->tree.parent || m->seq <= s->poll)
            return td_fail(c, "edod: poll %llu from rank %d (parent %d, poll %llu)", (unsigned long long)m->seq,
                           src, c->tree.parent, (unsigned long long)s->poll);
        /* the root distrusts every STOP: report again with fresh dirty bits */
        s->poll = m->seq;
        s->stopped = 0;
        s->poll_due = 1;
        return TD_OK;
    }
    return td_fail(c, "edod: message type %u", m->type);
}

static void flush_acks(td_ctx *c, edod *s)
{
    for (int j = 0; j < s->acks.n; j++) {
        int src = s->acks.v[j].src;
        uint32_t n = s->acks.v[j].n;
        if (src == c->rank) {
            s->unacked -= n; /* a primary to itself: no wire needed */
            continue;
        }
        td_msg m = {.type = EDOD_ACK, .a = n};
        td_send(c, src, &m);
    }
    s->acks.n = 0;
}

static int subtree_stopped(const td_ctx *c, const edod *s, int *dirty)
{
    *dirty = c->dirty;
    for (int i = 0; i < c->tree.nchildren; i++) {
        if (!child_stopped(s, &s->ch[i]))
            return 0;
        *dirty |= s->ch[i].dirty;
    }
    return 1;
}

static void edod_on_passive(td_ctx *c, void *st)
{
    edod *s = st;
    if (td_is_root(c) && s->declared) {
        /* woken after a clean quiescence: the STOPs we hold may be stale
         * (a rank may have become dirty with no message), collect fresh ones */
        s->declared = 0;
        s->poll++;
        s->poll_due = 1;
        c->stats.waves++;
    }
    if (s->poll_due) {
        for (int i = 0; i < c->tree.nchildren; i++) {
            td_msg m = {.type = EDOD_POLL, .seq = s->poll};
            td_send(c, c->tree.first_child + i, &m);
        }
        s->poll_due = 0;
    }
    if (s->resume_due) {
        td_msg m = {.type = EDOD_RESUME, .seq = ++s->resumes, .a = s->resume_sr.s, .b = s->resume_sr.r};
        td_send(c, c->tree.parent, &m);
        s->resume_due = 0;
        s->awaiting = 1;
    }
    if (s->awaiting)
        return; /* acknowledge nothing, stop nothing until our RESUME is answered */
    for (size_t j = 0; j < s->ndown; j++) {
        td_msg m = {.type = EDOD_ACKDOWN, .a = s->down[j].s, .b = s->down[j].r};
        td_send(c, child_towards(c, s->down[j].r), &m);
    }
    s->ndown = 0;
    flush_acks(c, s);

    int dirty;
    if (s->stopped || (s->unacked && !s->broken_unacked) || !subtree_stopped(c, s, &dirty))
        return;
    if (td_is_root(c)) {
        s->declared = 1;
        c->stats.waves++;
        td_quiescent(c, dirty); /* may announce: new_episode has run on return */
        return;
    }
    td_msg m = {.type = EDOD_STOP, .seq = s->resumes, .b = (int64_t)s->poll, .c = (int64_t)++s->stops,
                .flags = (uint8_t)(dirty ? TD_MF_DIRTY : 0)};
    td_send(c, c->tree.parent, &m);
    s->stopped = 1;
}

static void edod_new_episode(td_ctx *c, void *st)
{
    edod *s = st;
    /* quiescence: nothing is owed, every rank reports afresh. Sequence
     * numbers stay monotonic so a parent can still order a child's STOPs. */
    for (int i = 0; i < c->tree.nchildren; i++) {
        s->ch[i].stop_seen = 0;
        s->ch[i].dirty = 0;
    }
    s->stale_down += s->awaiting; /* its answer may still come: see EDOD_ACKDOWN */
    if (s->resume_due) {
        /* a RESUME not sent yet (the rank was active when it learned the
         * announcement, which was then premature: a contract violation):
         * no longer stopped, this rank answers it itself, as a rank that is
         * not stopped does (on_resume), or acknowledges its own primary */
        if (s->resume_sr.r == c->rank)
            (void)acks_add(c, &s->acks, s->resume_sr.s, 1);
        else
            (void)push_down(c, s, s->resume_sr.s, s->resume_sr.r);
    }
    s->stopped = s->declared = s->poll_due = s->resume_due = s->awaiting = 0;
    for (int j = 0; j < s->later.n; j++)
        acks_add(c, &s->acks, s->later.v[j].src, s->later.v[j].n);
    s->later.n = 0;
}

/* what this rank waits for (td_describe): acknowledgements of its own
 * sends, and the STOPs of its children in the current poll round */
static void edod_describe(const td_ctx *c, const void *st, char *buf, size_t len)
{
    const edod *s = st;
    int n = snprintf(buf, len, "edod: %llu sends unacknowledged, poll round %llu, %s%s; children stopped:",
                     (unsigned long long)s->unacked, (unsigned long long)s->poll,
                     s->stopped ? "stopped" : "not stopped", s->awaiting ? ", resume unanswered" : "");
    for (int i = 0; i < c->tree.nchildren && n >= 0 && (size_t)n < len; i++)
        n += snprintf(buf + n, len - (size_t)n, " %d%s", c->tree.first_child + i,
                      child_stopped(s, &s->ch[i]) ? "" : " (no)");
    if (c->tree.nchildren == 0 && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, " none (leaf)");
}

const td_algo td_algo_edod = {
    .name = "edod",
    .id = 7,
    .flags = TD_ALGO_LATE,
    .ntypes = EDOD_NTYPES,
    .type_names = edod_types,
    .pb_size = 4,
    .state_size = sizeof(edod),
    .init = edod_init,
    .fini = edod_fini,
    .new_episode = edod_new_episode,
    .on_send = edod_on_send,
    .on_recv = edod_on_recv,
    .on_passive = edod_on_passive,
    .on_control = edod_on_control,
    .describe = edod_describe,
};

#ifdef TD_TEST_BROKEN
/* Deliberately broken for tests: a rank reports STOP while its primaries
 * are unacknowledged, so a message in transit to a stopped subtree no
 * longer holds the sender's branch back and the root announces early. */
static int edod_unacked_init(td_ctx *c, void *st)
{
    ((edod *)st)->broken_unacked = 1;
    return edod_init(c, st);
}
const td_algo td_algo_edod_unacked = {
    .name = "edod-unacked",
    .id = 7,
    .flags = TD_ALGO_BROKEN | TD_ALGO_LATE,
    .ntypes = EDOD_NTYPES,
    .type_names = edod_types,
    .pb_size = 4,
    .state_size = sizeof(edod),
    .init = edod_unacked_init,
    .fini = edod_fini,
    .new_episode = edod_new_episode,
    .on_send = edod_on_send,
    .on_recv = edod_on_recv,
    .on_passive = edod_on_passive,
    .on_control = edod_on_control,
    .describe = edod_describe,
};
#endif
