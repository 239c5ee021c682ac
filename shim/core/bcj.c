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
        .name = NAME, .id = 1, .flags = FLAGS, .ntypes = BCJ_NTYPES, .type_names = bcj_types,          \
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
