/*
 * Baker-Crivelli-Jessup sweep termination detection
 * (papers/bcj-sweep-termination.txt, Figure 1 and §4).
 *
 * One phase, two control messages (down, up) on the spanning tree, plus the
 * engine's terminate broadcast. Every primary message carries the sender's
 * local sweep_# (the last sweep it completed; one byte, see td_bcj_stamp()). A
 * rank that received
 * a primary stamped with a sweep newer than the one it last completed
 * (last_msg_sweep_# > sweep_#) got work from a rank already counted by the
 * current sweep, so it reports INFINITY (§4, proof in §5) and the sweep fails.
 *
 * The root starts a sweep whenever it is passive and none is running, so a
 * new sweep follows a failed one at once (Figure 1: "go back to Downward
 * traversal"). Sweep numbers are never reused, across episodes too.
 */
#include "td_algo.h"

#include <stdio.h>
#include <string.h>

enum { BCJ_DOWN = 0, BCJ_UP, BCJ_NTYPES };
static const char *const bcj_types[BCJ_NTYPES] = {"down", "up"};

typedef struct bcj {
    uint32_t sweep;          /* local sweep_#: last sweep this rank completed */
    uint32_t last_msg_sweep; /* greatest sweep_# seen on a received primary */
    uint32_t cur;            /* sweep in progress here, 0 = none */
    uint32_t next;           /* root: last sweep number assigned */
    int children;            /* up messages received for cur */
    int64_t accum;           /* accum_count over the children's subtrees */
    uint8_t down_sent, inf, dirty;
    uint8_t broken_noinf;    /* test-only variant: ignore the INFINITY rule */
} bcj;

static int bcj_init(td_ctx *c, void *st)
{
    (void)c;
    (void)st; /* calloc'd: sweep_# = last_msg_sweep_# = 0 (§4) */
    return TD_OK;
}

/*
 * The piggyback is the sweep number modulo 256, one byte, so that an 8-byte
 * message plus tdshim's header stays under the transports' small-message
 * thresholds. The receiver recovers the full number from its own sweep_# r:
 *
 *   - a sender is at most one sweep ahead: it can have completed sweep s
 *     only once the root started s, and the root starts s only after every
 *     rank completed s-1, so s <= r + 1 when the message arrives;
 *   - a message may be arbitrarily old (s << r).
 *
 * Decoding as the number congruent to the byte in [r-254, r+1] is exact
 * for every s in that window, and for an older s it yields a larger value
 * than the true one. Overestimating last_msg_sweep_# can only make a rank
 * report INFINITY needlessly (a failed sweep, never a false announcement);
 * it can never hide a newer stamp. So the encoding is safe, and it costs
 * liveness nothing once old messages have drained (quiescence: none left).
 * The decoding is td_bcj_stamp() (td_algo.h, inline). There is no on_send:
 * the stamp lives in c->pb_out, updated when sweep_# changes, and the
 * engine's fast path copies it into every send.
 */
static void bcj_on_recv(td_ctx *c, void *st, int src, const uint8_t *pb)
{
    bcj *s = st;
    (void)c;
    (void)src;
    uint32_t v = td_bcj_stamp(s->sweep, pb[0]);
    if (v > s->last_msg_sweep)
        s->last_msg_sweep = v;
}

/* a primary whose stamp was lost: the newest it can be, sweep_# + 1 (see
 * above), so the sweep running fails (INFINITY) rather than miss it */
static void bcj_on_recv_lost(td_ctx *c, void *st, int src)
{
    bcj *s = st;
    (void)c;
    (void)src;
    if (s->sweep + 1 > s->last_msg_sweep)
        s->last_msg_sweep = s->sweep + 1;
}

static void begin(bcj *s, uint32_t sweep)
{
    s->cur = sweep;
    s->children = 0;
    s->accum = 0;
    s->down_sent = s->inf = s->dirty = 0;
}

static int bcj_on_control(td_ctx *c, void *st, int src, const td_msg *m)
{
    bcj *s = st;
    if (m->type == BCJ_DOWN) {
        if (src != c->tree.parent || s->cur || m->seq <= s->sweep || m->seq > UINT32_MAX)
            return td_fail(c, "bcj: down %llu from rank %d (parent %d, sweep %u, running %u)",
                           (unsigned long long)m->seq, src, c->tree.parent, s->sweep, s->cur);
        begin(s, (uint32_t)m->seq);
        return TD_OK;
    }
    /* BCJ_UP */
    if (!s->cur || !s->down_sent || m->seq != s->cur || s->children >= c->tree.nchildren || !td_child(c, src) ||
        m->a < -TD_COUNT_MAX || m->a > TD_COUNT_MAX /* accum_count: sent - received, either sign */)
        return td_fail(c, "bcj: up %llu from rank %d while running sweep %u",
                       (unsigned long long)m->seq, src, s->cur);
    s->children++;
    if (m->flags & TD_MF_INF)
        s->inf = 1; /* INFINITY + x = INFINITY */
    else
        s->accum += m->a;
    s->dirty |= m->flags & TD_MF_DIRTY;
    return TD_OK;
}

static void send_down(td_ctx *c, bcj *s)
{
    for (int i = 0; i < c->tree.nchildren; i++) {
        td_msg m = {.type = BCJ_DOWN, .seq = s->cur};
        td_send(c, c->tree.first_child + i, &m);
    }
    s->down_sent = 1;
    c->stats.waves++;
}

/* Figure 1, "Upward traversal", once all children reported and we are passive. */
static void complete(td_ctx *c, bcj *s)
{
    int mine_inf = !s->broken_noinf && s->last_msg_sweep > s->sweep;
    int inf = s->inf || mine_inf;
    int64_t accum = s->accum + (int64_t)(c->sent - c->recvd);
    int dirty = s->dirty || c->dirty;
    s->sweep = s->cur; /* "set local sweep_# = sweep_# in up message just sent" */
    c->pb_out[0] = (uint8_t)s->sweep;
    s->cur = 0;
    if (c->tree.parent >= 0) {
        td_msg m = {.type = BCJ_UP, .seq = s->sweep, .a = inf ? 0 : accum,
                    .flags = (uint8_t)((inf ? TD_MF_INF : 0) | (dirty ? TD_MF_DIRTY : 0))};
        td_send(c, c->tree.parent, &m);
    } else if (!inf && accum == 0) {
        td_quiescent(c, dirty);
    } else {
        /* root, the sweep failed: the next one down at once (Figure 1, "go
         * back to Downward traversal"), while the root is still passive,
         * as its next on_passive would start it. The root is often active
         * again before that next turn (the program's next poll finds work),
         * and then the sweep would wait for the root's next passive turn:
         * its last one, at the end of a phase, would start a sweep and wait
         * for down and up before the terminate (3 control hops instead of
         * 1; issue 38, bench/RESULTS.md). Same condition as on_passive's
         * start (complete runs only there: passive, ready, not dormant), so
         * it adds no execution that a second on_passive turn in a row (two
         * control messages in one poll) could not give already. */
        begin(s, ++s->next);
        send_down(c, s);
    }
}

static void bcj_on_passive(td_ctx *c, void *st)
{
    bcj *s = st;
    if (c->tree.parent < 0 && !s->cur)
        begin(s, ++s->next); /* root: a new sweep each time it is passive and idle */
    if (s->cur && !s->down_sent)
        send_down(c, s);
    if (s->cur && s->children == c->tree.nchildren)
        complete(c, s);
}

/*
 * A collective at the root (td_collective; docs/internals.md, "A collective
 * between a wave's reports and its end"): the sweep in progress fails
 * (INFINITY), as if a primary stamped newer had come. Its reports may have
 * been sent by ranks passive before the collective, which then work on
 * without a primary message (a phase that starts after an MPI_Allreduce):
 * no stamp or count tells the sweep. The next sweep starts at the root's
 * next passive turn, after its collective returned; a rank answers it only
 * when passive, and a blocking collective answers no control message under
 * bcj, so a rank that was in the same collective (an MPI_Allreduce or
 * MPI_Barrier cannot complete at the root before every rank entered it)
 * reports its state after the collective. That one sweep replaces the two
 * count waves the engine otherwise confirms the next proof with (4 control
 * hops per phase, issue 37: work_steal --work-us 0 spends 20 us a phase).
 * A rooted collective whose root returns before others enter it (an
 * MPI_Bcast), or one without rank 0, is covered by neither: TDSHIM_CONFIRM
 * and the premature-announcement evidence are there for those.
 */
static void bcj_on_collective(td_ctx *c, void *st)
{
    bcj *s = st;
    (void)c;
    if (s->cur)
        s->inf = 1;
}

static void bcj_new_episode(td_ctx *c, void *st)
{
    (void)c;
    begin(st, 0);
}

/* what this rank's part of the sweeps waits for (td_describe) */
static void bcj_describe(const td_ctx *c, const void *st, char *buf, size_t len)
{
    const bcj *s = st;
    char ch[48];
    td_children_str(c, ch, sizeof ch);
    if (!s->cur)
        snprintf(buf, len, "bcj: no sweep here (last sweep %u)", s->sweep);
    else if (!s->down_sent)
        snprintf(buf, len, "bcj: sweep %u, to be sent down when this rank is passive", s->cur);
    else
        snprintf(buf, len, "bcj: sweep %u, %d of %d answered (%s)%s", s->cur, s->children, c->tree.nchildren, ch,
                 s->children == c->tree.nchildren ? ", goes up when this rank is passive" : "");
}

/* on_recv_many of an on_recv: the same for n stamps (bcj's on_recv takes
 * the maximum of the decoded stamps and ignores src, so its calls commute;
 * the one inlined here, the sweep unchanged across the batch) */
#define BCJ_MANY(ON_RECV)                                                                              \
    static void ON_RECV##_many(td_ctx *c, void *st, const uint8_t *pb, size_t stride, unsigned n)      \
    {                                                                                                  \
        for (unsigned i = 0; i < n; i++)                                                               \
            ON_RECV(c, st, -1, pb + (size_t)i * stride);                                               \
    }

/* the table of bcj and of its variants (one place for all) */
#define BCJ_TABLE(NAME, FLAGS, INIT, ON_RECV)                                                          \
    {                                                                                                  \
        .name = NAME, .id = 1, .flags = (FLAGS) | TD_ALGO_FIXPOINT, .ntypes = BCJ_NTYPES, .type_names = bcj_types,          \
        .pb_size = 1, .state_size = sizeof(bcj), .init = INIT, .new_episode = bcj_new_episode,         \
        .on_recv = ON_RECV, .on_recv_many = ON_RECV##_many, .on_recv_lost = bcj_on_recv_lost,          \
        .on_passive = bcj_on_passive,                                                                  \
        .on_control = bcj_on_control, .describe = bcj_describe, .on_collective = bcj_on_collective,    \
    }

/* bcj_on_recv for n stamps: td_bcj_stamp decodes a byte to hi - back,
 * back = (hi - byte) modulo 256 (0 when back > hi), which falls as back
 * grows, so the greatest stamp is the one of the least back: one decode
 * per window */
static void bcj_on_recv_many(td_ctx *c, void *st, const uint8_t *pb, size_t stride, unsigned n)
{
    bcj *s = st;
    (void)c;
    uint32_t hi = s->sweep + 1;
    uint8_t least = 255;
    for (const uint8_t *p = pb, *e = pb + (size_t)n * stride; p != e; p += stride) {
        uint8_t back = (uint8_t)((uint8_t)hi - *p);
        least = back < least ? back : least;
    }
    uint32_t v = n ? td_bcj_stamp(s->sweep, (uint8_t)((uint8_t)hi - least)) : 0;
    if (v > s->last_msg_sweep)
        s->last_msg_sweep = v;
}
const td_algo td_algo_bcj = BCJ_TABLE("bcj", 0, bcj_init, bcj_on_recv);

/*
 * bcjrd: the same sweeps, run as a recursive-doubling allreduce instead of
 * down and up a tree (issue 38: detection in about one allreduce; issue
 * 37: one control hop a phase at P = 2 instead of bcj's three: down, up,
 * terminate).
 *
 * A rank's part in sweep k is its *visit*, made while it is passive: it
 * sets sweep_# = k (so every primary it sends from then on is stamped k,
 * §4), and fixes its contribution: sent - received so far, INFINITY if it
 * received a primary stamped k (last_msg_sweep_# > k - 1: sent by a rank
 * that had already visited k), and whether it was dirty. The
 * contributions are then summed by recursive doubling over the largest
 * power of two p2 <= P: in round r a rank exchanges its partial sum with
 * rank ^ 2^r; a rank p2 + i first folds its contribution into rank i and
 * gets the verdict back from it. Every rank of the power of two ends with
 * the same sum, so every rank reaches the same verdict, at the same sweep,
 * and announces itself (TD_ALGO_SYMMETRIC: no terminate broadcast).
 *
 * Why a verdict "no INFINITY, sum 0" is correct (the argument of §5, with
 * the visits in place of the tree's upward traversal): a primary received
 * before its receiver's visit was sent before its sender's visit (else it
 * is stamped k and the receiver reports INFINITY), so the primaries
 * counted received are among those counted sent, and equal sums make the
 * two sets equal: no primary counted sent is still in transit. Let T be
 * the last visit. If some rank became active after its visit, take the
 * first such receipt: its primary was sent either before the sender's
 * visit (then counted sent, so counted received: before the visit, a
 * contradiction) or after it, by a rank active after its visit earlier
 * still (a contradiction with "first"). So at T every rank is passive and
 * nothing is in transit. Nothing needs the ranks passive *at T*: each
 * rank's state is taken at its own visit, which is what lets a rank that
 * visited work on while the others report (its later sends carry k).
 *
 * Stamps stay one byte (td_bcj_stamp): a rank visits k + 1 only after it
 * learned the verdict of k, which needs every rank's visit of k, so a
 * sender is at most one sweep ahead of the receiver, as in bcj. For the
 * same reason a partner's message of sweep k + 1 can arrive while this
 * rank still runs k (the partner finished k with this rank's message of an
 * earlier round): messages are kept by sweep parity and round.
 *
 * Collectives (issue 37, bcj_on_collective): each rank's dirtiness is
 * taken at its visit, so reports made before a collective cannot combine
 * with a rank's activity after it; a rank that a collective makes active
 * is dirty from then on and starts a sweep at its next passive poll.
 *
 * After a verdict of quiescence, dirty or clean, every rank is dormant: it
 * starts no sweep until it is dirty (it worked) or a partner's message of
 * the next sweep arrives, so idle ranks exchange nothing. A rank p2 + i is
 * told by rank i (RD_CALL) when a sweep starts without it.
 */
enum { RD_ROUND = 0, RD_FOLD, RD_RESULT, RD_CALL, RD_NTYPES };
static const char *const rd_types[RD_NTYPES] = {"round", "fold", "result", "call"};
enum { RD_OTHER = 31 };      /* slot of the fold (rank i) or of the verdict (rank p2 + i) */
enum { RD_STEP_OTHER = -1 }; /* waiting for the fold or the verdict */
/* Confirmation (TDSHIM_CONFIRM; on with TDSHIM_IDLE=spin, where a rank can
 * be misjudged passive): the flag of a part whose rank was active since
 * its part in the last sweep it finished. With cfg.confirm quiescence is
 * proven by three sweeps in a row found quiescent in which no rank moved:
 * every rank stayed passive from its part in one sweep to its part three
 * sweeps later, the window of the engine's two count waves after a proof
 * (td_engine.c), whose tree traversals take longer than these exchanges.
 * A misjudged rank that works in that window is active at its next poll,
 * so its next part says so. tdsim's misjudged ranks (--misjudge 4, 8
 * workloads x 200 schedules, seed 1) gave false announcements in 259 runs
 * with one such sweep, 184 with two, 123 with three (bcj: 131). */
#define RD_MF_MOVED TD_MF_ALGO1

typedef struct rd_slot {
    uint32_t seq;
    uint8_t have, used, flags; /* used: taken for sweep seq (a later version is moot) */
    int64_t a;
} rd_slot;

typedef struct bcjrd {
    bcj b; /* first: bcj's on_recv reads sweep_# and last_msg_sweep_# */
    int p2, nrounds;
    int other;           /* rank p2 + i: its rank i; rank i < P - p2: rank p2 + i; else -1 */
    int step;            /* RD_STEP_OTHER, or the round in progress (nrounds: done) */
    uint8_t step_sent, dormant, deciding;
    uint8_t calm;        /* TDSHIM_CONFIRM: sweeps in a row found quiescent with no rank moved */
    uint8_t accf;        /* TD_MF_INF | TD_MF_DIRTY so far */
    int64_t acc;         /* sent - received so far */
    uint32_t call;       /* rank p2 + i: a sweep rank i started, 0 = none */
    uint32_t gen;        /* c->passive_gen at this rank's (last) visit */
    uint32_t gen_last;   /* gen at the last sweep this rank finished (TDSHIM_CONFIRM) */
    rd_slot slot[2][RD_OTHER + 1];
} bcjrd;

static int rd_init(td_ctx *c, void *st)
{
    bcjrd *s = st;
    s->p2 = 1;
    while (s->p2 <= c->size / 2)
        s->p2 *= 2;
    for (int v = s->p2; v > 1; v /= 2)
        s->nrounds++;
    s->other = c->rank >= s->p2 ? c->rank - s->p2 : c->rank + s->p2 < c->size ? c->rank + s->p2 : -1;
    return TD_OK;
}

static int rd_extra(const td_ctx *c, const bcjrd *s) { return c->rank >= s->p2; }

/* the step at which this rank's own contribution is still its own: the
 * fold (rank i takes it, rank p2 + i sends it) or round 0 */
static int rd_first(const bcjrd *s) { return s->other >= 0 ? RD_STEP_OTHER : 0; }

static void rd_send(td_ctx *c, bcjrd *s, int dest, int type, int64_t b)
{
    td_msg m = {.type = (uint8_t)type, .seq = s->b.cur, .a = s->accf & TD_MF_INF ? 0 : s->acc,
                .b = b, .flags = s->accf};
    td_send(c, dest, &m);
}

/* this rank's state now, as its part in sweep cur: the visit, or a later
 * version of it (rd_on_passive) */
static void rd_snapshot(td_ctx *c, bcjrd *s)
{
    int inf = !s->b.broken_noinf && s->b.last_msg_sweep > s->b.cur - 1;
    s->acc = (int64_t)(c->sent - c->recvd);
    s->gen = c->passive_gen;
    /* an unsure rank (td_unsure: TDSHIM_IDLE=spin saw one long gap) may be
     * working: moved, as it answers the engine's confirmation waves busy */
    s->accf = (uint8_t)((inf ? TD_MF_INF : 0) | td_dirty_flag(c) |
                        (s->gen != s->gen_last || c->unsure ? RD_MF_MOVED : 0));
}

/* the visit of sweep sweep_# + 1 (above), on a passive rank */
static void rd_visit(td_ctx *c, bcjrd *s)
{
    uint32_t k = s->b.sweep + 1;
    s->b.sweep = s->b.cur = k;
    c->pb_out[0] = (uint8_t)k;
    rd_snapshot(c, s);
    s->dormant = 0;
    s->step_sent = 0;
    s->step = rd_first(s);
    c->stats.waves++;
    if (rd_extra(c, s)) {
        s->call = 0;
        rd_send(c, s, s->other, RD_FOLD, 0);
    } else if (s->other >= 0 && !s->slot[k & 1][RD_OTHER].have) {
        rd_send(c, s, s->other, RD_CALL, 0); /* it may be dormant */
    }
}

/* A rank that visited, then was active (it received a primary, or a
 * collective returned) and is passive again, before its contribution was
 * taken by the rank that takes it (its round-0 partner, or rank i for
 * rank p2 + i; rank i takes its own at the fold): its part is stale, and a
 * sweep summed with it fails (the argument above: a rank active after its
 * visit makes every verdict over that visit fail, except through a
 * collective, where a fresh part is what is needed). So it visits again
 * within the same sweep: a newer version of its part, sent again where it
 * was sent. sweep_# stays k, so the INFINITY rule keeps its base k - 1
 * (rd_snapshot): a primary stamped k that it received since the first
 * visit was sent after its sender's visit, perhaps its last one. The rank
 * that takes the part takes the newest version it holds and ignores the
 * later ones (rd_slot.used). Every sum is then still one version per rank,
 * so every verdict is a correct one or a failure; ranks that summed
 * different versions may disagree, one announcing while another starts
 * the next sweep: that one learns the announcement from its round-0
 * partner, told when it announced (rd_new_episode), and
 * adopts it. Without this, the last rank to turn passive found its
 * partner's part stale (the partner had received work from it) and
 * detection took a second sweep: two exchanges at P = 2. */
static void rd_revisit(td_ctx *c, bcjrd *s)
{
    rd_snapshot(c, s);
    c->stats.waves++;
    if (rd_extra(c, s))
        rd_send(c, s, s->other, RD_FOLD, 0);
    else if (s->step == 0 && s->step_sent)
        rd_send(c, s, c->rank ^ 1, RD_ROUND, 0);
}

static void rd_take(bcjrd *s, rd_slot *x)
{
    if (x->flags & TD_MF_INF)
        s->accf |= TD_MF_INF;
    else
        s->acc += x->a;
    s->accf |= x->flags & (TD_MF_DIRTY | RD_MF_MOVED);
    x->have = 0;
    x->used = 1;
}

/* every rank that summed the same versions reaches this with the same sum */
static void rd_verdict(td_ctx *c, bcjrd *s)
{
    uint32_t k = s->b.cur;
    s->b.cur = 0;
    s->gen_last = s->gen;
    if ((s->accf & TD_MF_INF) || s->acc != 0 || (c->cfg.confirm && (s->accf & RD_MF_MOVED))) {
        s->calm = 0;
        return; /* a new sweep at the next passive turn */
    }
    if (c->cfg.confirm && ++s->calm < 3)
        return; /* RD_MF_MOVED: one sweep more */
    s->dormant = 1;
    if (s->accf & TD_MF_DIRTY) {
        c->ann_seq = k; /* the sweep a laggard adopts (td_tell_announced) */
        s->deciding = 1;
        td_announce_local(c); /* rd_new_episode keeps it dormant */
        s->deciding = 0;
    }
}

static void rd_on_passive(td_ctx *c, void *st)
{
    bcjrd *s = st;
    if (!s->b.cur) {
        uint32_t k = s->b.sweep + 1;
        int asked = s->call == k;
        for (int r = 0; r <= RD_OTHER && !asked; r++)
            asked = s->slot[k & 1][r].have && s->slot[k & 1][r].seq == k;
        if (s->dormant && !c->dirty && !asked)
            return;
        rd_visit(c, s);
    } else if (s->step == rd_first(s) && s->gen != c->passive_gen) {
        rd_revisit(c, s);
    }
    rd_slot *sl = s->slot[s->b.cur & 1];
    for (;;) {
        if (s->step == RD_STEP_OTHER) {
            rd_slot *x = &sl[RD_OTHER];
            if (!x->have || x->seq != s->b.cur)
                return;
            if (rd_extra(c, s)) { /* the whole sum, as rank i has it (this rank's part in it) */
                s->acc = x->a;
                s->accf = x->flags;
                x->have = 0;
                x->used = 1;
                rd_verdict(c, s);
                return;
            }
            rd_take(s, x);
            s->step = 0;
        }
        if (s->step == s->nrounds) {
            if (s->other >= 0)
                rd_send(c, s, s->other, RD_RESULT, 0);
            rd_verdict(c, s);
            return;
        }
        if (!s->step_sent) {
            rd_send(c, s, c->rank ^ (1 << s->step), RD_ROUND, s->step);
            s->step_sent = 1;
        }
        rd_slot *x = &sl[s->step];
        if (!x->have || x->seq != s->b.cur)
            return;
        rd_take(s, x);
        s->step++;
        s->step_sent = 0;
    }
}

static int rd_on_control(td_ctx *c, void *st, int src, const td_msg *m)
{
    bcjrd *s = st;
    uint32_t k = s->b.cur ? s->b.cur : s->b.sweep + 1;
    int round = m->type == RD_ROUND && m->b >= 0 && m->b < s->nrounds;
    if (m->type == RD_ROUND ? !round : m->b != 0)
        return td_fail(c, "bcjrd: %s with round %lld from rank %d (%d rounds)", rd_types[m->type], (long long)m->b,
                       src, s->nrounds);
    int slot = round ? (int)m->b : RD_OTHER;
    int from = round ? c->rank ^ (1 << m->b) : s->other;
    int ok = src == from && (m->seq == k || (s->b.cur && m->seq == (uint64_t)k + 1)) &&
             m->a >= -TD_COUNT_MAX && m->a <= TD_COUNT_MAX;
    switch (m->type) {
    case RD_ROUND:
        ok = ok && !rd_extra(c, s);
        break;
    case RD_FOLD:
        ok = ok && !rd_extra(c, s) && s->other >= 0;
        break;
    default: /* RD_RESULT, RD_CALL: from rank i to rank p2 + i */
        ok = ok && rd_extra(c, s);
        break;
    }
    /* a later version (rd_revisit) of a part already taken -- of this
     * sweep, or of the last one: its sender was still at round 0 there
     * when this rank, its part taken, finished -- or a call for a sweep
     * this rank visited already (its fold crossed the call) */
    int versioned = m->type == RD_FOLD || (m->type == RD_ROUND && m->b == 0);
    int late = src == from && (m->type == RD_CALL || versioned) && m->seq <= s->b.sweep &&
               (m->seq + 1 == s->b.sweep || m->type == RD_CALL ||
                (s->slot[m->seq & 1][slot].seq == m->seq && s->slot[m->seq & 1][slot].used));
    if (late)
        return TD_OK;
    rd_slot *x = ok ? &s->slot[m->seq & 1][slot] : NULL;
    /* the slot holds nothing, or an older version of this part (FIFO) */
    if (!x || (x->have && (x->seq != m->seq || !versioned)))
        return td_fail(c, "bcjrd: %s %llu (round %lld) from rank %d at sweep %u%s", rd_types[m->type],
                       (unsigned long long)m->seq, (long long)m->b, src, s->b.sweep, s->b.cur ? " (running)" : "");
    if (m->type == RD_CALL)
        s->call = (uint32_t)m->seq;
    else
        *x = (rd_slot){.seq = (uint32_t)m->seq, .have = 1, .flags = m->flags, .a = m->a};
    return TD_OK;
}

static void rd_new_episode(td_ctx *c, void *st)
{
    bcjrd *s = st;
    /* Every rank that announces tells its round-0 partner (td_algo.h,
     * TD_ALGO_SYMMETRIC). Versions differ only in round 0 (rd_revisit: a rank
     * resends only its round-0 part, and rank i takes rank p2 + i's fold
     * alone), and from round 1 on a rank sums the partials of ranks of its own
     * parity, each made from that parity's side of a round-0 exchange. So the
     * even ranks all reach one verdict and the odd ranks another (ranks p2 + i
     * rank i's): when one class announces and the other fails the sweep, or
     * finds it quiescent but clean, or (TDSHIM_CONFIRM) not yet calm enough,
     * every rank of the other class is the round-0 partner of one that
     * announced, and is told here. The rank that announced need never answer
     * later: once notified the program may enter a blocking collective (or
     * MPI_Finalize's) in which the shim takes no control message (the MPI
     * library's own; polled, as they were until 2026-11-29, a 2-rank
     * MPI_Allreduce took 1.27 us against 0.53). Telling only a rank that sent
     * its part twice is not enough: under TDSHIM_IDLE=spin a rank misjudged
     * passive sends a part that proves quiescence for its partner, then works
     * and fails its own sum on the newer part (tests/core/test-bcjrd.c 4: 56
     * of 20,000 runs never ended). One control message a rank an episode, sent
     * before the program's own notification: a laggard waits for it
     * (three_phase's ring phase at 2 ranks, 2026-11-29, 16 runs: told after
     * the notification, the last rank learned it in 6.0 us, median, against
     * 3.8); a partner that announced too drops it (an older episode's TERM). */
    if (s->deciding && !rd_extra(c, s) && s->nrounds > 0)
        td_tell_announced(c, c->rank ^ 1);
    /* a partner's message of the next sweep: it summed other versions,
     * failed, and started that sweep in the episode this rank just closed
     * (rd_revisit). The engine answers its later messages with TERM; this
     * one came before the announcement, so tell it here */
    for (int p = 0; p < 2 && s->deciding; p++)
        for (int r = 0; r <= RD_OTHER; r++)
            if (s->slot[p][r].have)
                td_tell_announced(c, r == RD_OTHER ? s->other : c->rank ^ (1 << r));
    if (!s->deciding) {
        /* adopted: a rank of this sweep announced (engine TERM, see
         * rd_revisit). Sweep numbers must agree again: back to the one
         * announced (a primary this rank stamped newer meanwhile only
         * fails one sweep: INFINITY). Every partner may be waiting for a
         * message of this rank's that will not come: tell each. */
        s->b.sweep = (uint32_t)c->ann_seq;
        c->pb_out[0] = (uint8_t)s->b.sweep;
        for (int r = 0; r < s->nrounds && !rd_extra(c, s); r++)
            td_tell_announced(c, c->rank ^ (1 << r));
        if (s->other >= 0)
            td_tell_announced(c, s->other);
    }
    s->b.cur = 0;
    s->dormant = 1;
    s->call = 0;
    s->calm = 0;
    memset(s->slot, 0, sizeof s->slot);
}

static void rd_describe(const td_ctx *c, const void *st, char *buf, size_t len)
{
    const bcjrd *s = st;
    if (!s->b.cur)
        snprintf(buf, len, "bcjrd: no sweep here (last sweep %u%s)", s->b.sweep, s->dormant ? ", dormant" : "");
    else if (s->step == RD_STEP_OTHER)
        snprintf(buf, len, "bcjrd: sweep %u, waiting for rank %d's %s", s->b.cur, s->other,
                 rd_extra(c, s) ? "verdict" : "fold");
    else
        snprintf(buf, len, "bcjrd: sweep %u, round %d of %d, waiting for rank %d", s->b.cur, s->step + 1,
                 s->nrounds, c->rank ^ (1 << s->step));
}

#define BCJRD_TABLE(NAME, FLAGS, INIT)                                                                 \
    {                                                                                                  \
        .name = NAME, .id = 10, .flags = TD_ALGO_SYMMETRIC | TD_ALGO_FIXPOINT | (FLAGS), .ntypes = RD_NTYPES, \
        .type_names = rd_types, .pb_size = 1, .state_size = sizeof(bcjrd), .init = INIT,              \
        .new_episode = rd_new_episode, .on_recv = bcj_on_recv, .on_recv_many = bcj_on_recv_many,       \
        .on_recv_lost = bcj_on_recv_lost, .on_passive = rd_on_passive, .on_control = rd_on_control,    \
        .describe = rd_describe,                                                                       \
    }
const td_algo td_algo_bcjrd = BCJRD_TABLE("bcjrd", 0, rd_init);

#ifdef TD_TEST_BROKEN
/* Deliberately broken for tests: without the INFINITY rule of §4 a primary
 * sent by a rank already counted to a rank not yet counted balances a
 * message still in transit, and the root announces falsely. */
static int bcj_noinf_init(td_ctx *c, void *st)
{
    (void)c;
    ((bcj *)st)->broken_noinf = 1;
    return TD_OK;
}
const td_algo td_algo_bcj_noinf = BCJ_TABLE("bcj-noinf", TD_ALGO_BROKEN, bcj_noinf_init, bcj_on_recv);

/* Deliberately broken for tests: bcjrd without the INFINITY rule; a
 * primary sent after its sender's visit to a rank that has not visited yet
 * balances one still in transit */
static int bcjrd_noinf_init(td_ctx *c, void *st)
{
    ((bcj *)st)->broken_noinf = 1;
    return rd_init(c, st);
}
const td_algo td_algo_bcjrd_noinf = BCJRD_TABLE("bcjrd-noinf", TD_ALGO_BROKEN, bcjrd_noinf_init);

/* Deliberately broken for tests: the stamp decoded in [r - 255, r], as if
 * a sender could not be one sweep ahead of the receiver. A message from a
 * rank the sweep in progress already counted then looks old, the receiver
 * does not report it, and the root announces falsely (the model's
 * BROKEN_STAMP, tests/model/bcj.pml; its trail replays through this). */
static void bcj_stampoff_on_recv(td_ctx *c, void *st, int src, const uint8_t *pb)
{
    bcj *s = st;
    (void)c;
    (void)src;
    uint8_t back = (uint8_t)((uint8_t)s->sweep - pb[0]);
    uint32_t v = back > s->sweep ? 0 : s->sweep - back;
    if (v > s->last_msg_sweep)
        s->last_msg_sweep = v;
}
BCJ_MANY(bcj_stampoff_on_recv)
const td_algo td_algo_bcj_stampoff = BCJ_TABLE("bcj-stampoff", TD_ALGO_BROKEN, bcj_init, bcj_stampoff_on_recv);

/* Not broken, but for the model only: the stamp read modulo 4, as
 * tests/model/bcj.pml does by default so that its bounded sweeps reach the
 * wrap-around. A message in transit over 3 sweeps or more then aliases to
 * a newer sweep (INFINITY: one sweep more, never an early announcement);
 * the model's random executions replay through this variant step for
 * step, where bcj itself (modulo 256) may announce one sweep earlier. */
static void bcj_mod4_on_recv(td_ctx *c, void *st, int src, const uint8_t *pb)
{
    bcj *s = st;
    (void)c;
    (void)src;
    uint32_t back = (s->sweep + 1 + 4 * 8 - (uint32_t)(pb[0] % 4)) % 4;
    uint32_t v = back > s->sweep + 1 ? 0 : s->sweep + 1 - back;
    if (v > s->last_msg_sweep)
        s->last_msg_sweep = v;
}
BCJ_MANY(bcj_mod4_on_recv)
const td_algo td_algo_bcj_mod4 = BCJ_TABLE("bcj-mod4", TD_ALGO_MODEL, bcj_init, bcj_mod4_on_recv);
#endif
