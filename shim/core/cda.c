/*
 * CDA: the integer-credit distribution algorithm for HPC
 * (papers/cda-credit-hpc.txt §IV), controlling agent = rank 0.
 *
 * Every rank starts with C_init integer credits (no message needed, §IV
 * "Initial credit is computationally generated"). Every primary message
 * carries at least one credit (piggyback, 5 bytes: the sender's episode
 * as a one-byte stamp, read as BCJ's sweep stamp is, td_bcj_stamp, and a
 * u32 credit; a 4-byte episode made the program's 4-byte message a
 * 13-byte one, which Open MPI's shared memory streams 12-26 % slower than
 * 10 bytes natively: issue 43), an
 * active rank always keeps at least one, and a rank that becomes passive
 * FLUSHes all it holds to rank 0 (but see "clean hold" below). Rank 0 counts the credit outside itself
 * (`out`: the initial grants plus every BORROW it answered, minus what came
 * back); credit is conserved, so out == 0 while rank 0 is passive means no
 * rank is active and no primary is in transit, and rank 0 calls
 * td_quiescent() with the OR of the dirty bits the flushes carried.
 *
 * Split (§IV, the formula for w_i): a message gets floor(C_cur / S) credits,
 * at most W_con when C_cur <= C_con. The driver does not announce a batch of
 * simultaneous emissions ahead, so the uniform division is applied online:
 * the k-th emission since the rank last became active uses S = k + 1 (this
 * message + the rank itself + the k - 1 already sent, whose shares left with
 * them). After N emissions the sender keeps C_0 / (N + 1), the share the
 * paper's uniform split leaves it, instead of C_0 / 2^N with halving.
 *
 * Borrowing (§IV): below C_borrow, from its second emission of a step on,
 * the rank prefetches C_init more with a BORROW flagged REFILL (rank 0
 * GRANTs it to the borrower). A rank that holds credit never flushes while a
 * REFILL is outstanding.
 *
 * No send ever waits for credit (the progress rule, DESIGN.md §2: tdshim
 * never waits for another rank except inside a call that waits natively for
 * that same rank, and then keeps answering control messages). A send whose
 * rank cannot pay it (fewer than 2 credits: one for the message, one to stay
 * accountable; or none at all: a contract violation, or a rank made active
 * again by a collective after it flushed) goes out at once PREPAID: it
 * carries 0 credits, and a BORROW naming its receiver goes to rank 0, which
 * GRANTs C_init to the receiver instead of the sender (plus a REFILL grant
 * to the sender, from its second emission of the step on, if it has none
 * outstanding, so its next sends can pay: a chain that sends one message
 * per step gets no credit it would only flush back).
 * The receiver pairs prepaid primaries with prepaid grants by count,
 * whichever comes first: a grant with no primary yet is `reserved` (kept
 * apart, never flushed: it stands for the primary still in transit), a
 * primary with no grant yet is `awaiting` (the grant, counted in rank 0's
 * `out`, is on its way). Why no schedule can lose a prepaid primary: the
 * BORROW travels on the FIFO control channel sender -> rank 0 (§III-A; MPI
 * on one communicator and tag) ahead of every FLUSH the sender sends later,
 * so the credit that covered the sender when it sent (its own >= 1 credit,
 * a grant it is awaiting, or the fresh credit of the next episode, below)
 * is still counted in `out` when rank 0 counts the grant for the primary;
 * from then on the grant is counted until its receiver flushes it, which it
 * does only once the primary arrived (reserved) or after it (awaiting). So
 * `out` == 0 (and no grant reserved at rank 0 for a primary addressed to
 * it) still means no rank is active and no primary in transit for every
 * program that keeps the contract, and no send is ever held: there is
 * nothing any rank, whatever MPI call it is in, must answer before the
 * program may go on. A prepaid send costs the 2 control messages a
 * borrow always cost (3 with the REFILL), and no wait. Those messages must
 * be read, though, by ranks whose calls may never wait: a prepaid send
 * while the REFILL is outstanding, and a prepaid primary that arrives
 * before its BORROW or grant, ask the driver to drain the control channel
 * after the call (td_want_poll; without it a stream of 10^6 messages to
 * rank 0 prepaid 871,917 of them, issue 43). Only the cost depends on
 * it, never the safety argument above.
 * Overflow (§IV): a non-root rank holds at most CDA_CMAX (the piggyback's
 * u32); above it, it returns at once all but CDA_CMAX / 2 in a FLUSH
 * flagged "overflow" (absorb).
 *
 * The terminal-emission optimisation of §IV (send the whole credit with the
 * last message before going idle) needs to know a send is the last one,
 * which neither the MPI shim nor the simulator can tell; a rank therefore
 * keeps its share and flushes it when it becomes passive (one FLUSH per
 * active-to-idle transition that holds credit). bench/RESULTS.md shows the
 * cost on the token ring of Theorem 1.
 *
 * Episodes. After announcement k every rank starts episode k+1 with C_init
 * again, and rank 0 sets out = (P-1) * C_init at once (it announces first, so
 * it accounts for credit the others create only when TERM reaches them).
 *   - Clean hold: a passive rank flushes only when it is dirty (it showed
 *     activity since the announcement it learned: c->dirty) or rank 0 asked
 *     (COLLECT). Until then it keeps its fresh C_init, so a rank made active
 *     after the announcement without a message (the barrier of the next
 *     phase, a collective: td_activity, or td_notified) holds credit and
 *     rank 0 waits for its FLUSH: it is covered exactly like a rank that
 *     received a primary. Flushing fresh credit at once instead would leave
 *     a rank that polls between the notification and the barrier with no
 *     credit, invisible to rank 0 when the barrier makes it active.
 *     It also makes an idle job after an announcement send nothing at all.
 *   - Episode 1 starts dirty everywhere (the program's start is activity),
 *     so every rank flushes by itself. In a later episode rank 0, once it is
 *     passive and knows of activity (a dirty FLUSH or its own c->dirty),
 *     sends COLLECT down the spanning tree (P-1 messages, once per episode),
 *     and clean holders flush. So out == 0 is only ever reached with the
 *     dirty bit set: rank 0 calls td_quiescent(c, 1) and never needs the
 *     engine's dormancy (SLEEP/WAKE); with no activity nothing is announced.
 *   - A primary may carry episode k+1 credit to a rank that has not learned
 *     announcement k yet (TERM travels the tree, primaries go directly). That
 *     credit is rank 0's episode k+1 credit: the receiver keeps it apart
 *     (`future`) and adds it to its fresh C_init when it learns the
 *     announcement; flushing it stamped with episode k would be rejected by
 *     rank 0. It can be at most one episode ahead: announcement k+1 needs the
 *     receiver's own fresh credit of k+1 back first.
 *   - A primary stamped with an older episode cannot exist (its credit would
 *     have kept rank 0 from announcing) and is a protocol error.
 *   - What no credit algorithm can see: a rank that flushed (dirty, or on
 *     COLLECT) and is then made active again without a message in the same
 *     episode (a second collective). Like a BCJ rank that already reported,
 *     that activity only feeds the dirty bit. If it sends, the message is
 *     prepaid. Should rank 0 have announced meanwhile (the announcement was
 *     then premature: that rank was active), the BORROW or the primary
 *     reaches its receiver in the next episode and the episode is marked
 *     unsafe (detection.unsafe): loud, not silent.
 *   - A rank that received a primary of episode k+1 before TERM k (`ahead`)
 *     works for episode k+1, announced already: rank 0 counted this rank's
 *     fresh C_init of k+1 in `out` at the announcement, and that credit
 *     cannot leave before this rank learns TERM, so it covers the rank until
 *     then. Its sends are stamped k+1 and paid from `future` (all of it may
 *     go: the fresh credit is the rank's accountability) or prepaid with a
 *     BORROW stamped k+1 (rank 0 is in episode k+1; the grant waits at the
 *     receiver's engine until it is in k+1 too). A BORROW stamped k would
 *     reach rank 0 after announcement k and mark a correct announcement
 *     unsafe (found by tests/model, cda.pml with two phases, when such a
 *     send still waited for TERM instead).
 */
#include "td_algo.h"

#include <stdio.h>

#include <string.h>

enum { CDA_FLUSH = 0, CDA_BORROW, CDA_GRANT, CDA_COLLECT, CDA_NTYPES };
static const char *const cda_types[CDA_NTYPES] = {"flush", "borrow", "grant", "collect"};

#define CDA_CMAX UINT32_MAX        /* local credit bound of a non-root rank: the piggyback field */
#define CDA_KEEP (CDA_CMAX / 2)    /* what a rank keeps when it returns an overflow (absorb) */
#define CDA_F_OVERFLOW TD_MF_ALGO1 /* FLUSH: overflow return of an active rank */
#define CDA_F_REFILL TD_MF_ALGO1   /* BORROW: grant the borrower too (seq: borrow_seq) */
#define CDA_F_PREPAID TD_MF_ALGO2  /* GRANT: the credit of a prepaid primary to its receiver */
#define CDA_OUT_MAX ((uint64_t)1 << 62)

enum { CDA_OK = 0, CDA_BROKEN_ACTIVEFLUSH, CDA_BROKEN_DROPOVERFLOW };

typedef struct cda {
    uint64_t cur;        /* credit held (root: unbounded, it creates credit) */
    uint64_t future;     /* credit of the next episode, received before TERM */
    uint64_t out;        /* root: credit outside rank 0 */
    uint64_t borrow_seq; /* REFILL BORROWs sent (seq of the outstanding one) */
    uint64_t reserved;   /* prepaid grants whose primary has not arrived (C_init each; root: counted) */
    uint64_t awaiting;   /* prepaid primaries whose grant has not arrived */
    uint64_t awaiting_next; /* prepaid primaries of the next episode, received before TERM */
    uint32_t emitted;    /* emissions since the rank last became active */
    uint8_t borrowing;   /* a REFILL is outstanding */
    uint8_t ahead;       /* a primary of the next episode came: this one is announced */
    uint8_t dirty_or;    /* root: OR of TD_MF_DIRTY of the flushes */
    uint8_t collect;     /* rank 0 asked for the credit of this episode */
    uint8_t collected;   /* root: COLLECT sent in this episode */
    uint8_t broken;
} cda;

static int cda_init(td_ctx *c, void *st)
{
    cda *s = st;
    const td_cfg *g = &c->cfg;
    if (g->cda_init < 2 || (uint64_t)g->cda_init > CDA_CMAX || g->cda_wcon < 1 || g->cda_con < 0 ||
        g->cda_borrow < 0)
        return TD_EINVAL; /* a rank must be able to send with its initial credit */
    if ((uint64_t)(c->size - 1) > CDA_OUT_MAX / (uint64_t)g->cda_init)
        return TD_EINVAL;
    s->cur = (uint64_t)g->cda_init;
    if (td_is_root(c))
        s->out = (uint64_t)(c->size - 1) * (uint64_t)g->cda_init;
    return TD_OK;
}

/* COLLECT travels down the spanning tree like the engine's TERM, so on FIFO
 * channels (§III-A) it always precedes the TERM of its episode: it is never
 * delivered after the announcement it asked for. */
static void collect_children(td_ctx *c)
{
    for (int i = 0; i < c->tree.nchildren; i++) {
        td_msg m = {.type = CDA_COLLECT};
        td_send(c, c->tree.first_child + i, &m);
    }
}

static void flush_credit(td_ctx *c, cda *s, uint64_t w, uint8_t flags)
{
    td_msg m = {.type = CDA_FLUSH, .a = (int64_t)w, .flags = (uint8_t)(flags | td_dirty_flag(c))};
    td_send(c, 0, &m);
    c->stats.flushes++;
    (void)s;
}

/* Credit enters a non-root rank: keep at most CDA_CMAX, return the rest at
 * once (§IV "all remaining credit is immediately returned"). Above the
 * bound the rank returns down to half of it (CDA_KEEP): a rank that keeps
 * receiving near the bound (a busy receiver of a rank that holds C_init
 * and more: issue 43's burst, 99,995 flushes for 10^5 messages) flushes
 * once per CDA_CMAX / 2 credits instead of at every message. It stays
 * active with CDA_KEEP >= 1, so this is an active rank's overflow return
 * as before, only larger. */
static void absorb(td_ctx *c, cda *s, uint64_t w)
{
    s->cur += w;
    if (s->cur > CDA_CMAX) {
        uint64_t excess = s->cur - CDA_KEEP;
        s->cur = CDA_KEEP;
        if (s->broken != CDA_BROKEN_DROPOVERFLOW)
            flush_credit(c, s, excess, CDA_F_OVERFLOW);
    }
}

/* a BORROW for a prepaid primary to dest (-1: none), with a REFILL when
 * `refill`, stamped with episode ep (td_credit_borrow) */
static void borrow(td_ctx *c, cda *s, int dest, int refill, uint32_t ep)
{
    td_credit_borrow(c, CDA_BORROW, dest, refill, CDA_F_REFILL, &s->borrow_seq, &s->borrowing, ep);
}


/* §IV: w = floor(C_cur / S), capped at W_con in the conservation regime. */
static uint64_t share(const td_ctx *c, const cda *s)
{
    uint64_t S = (uint64_t)s->emitted + 2;
    uint64_t w = s->cur / S;
    if (s->cur <= (uint64_t)c->cfg.cda_con && w > (uint64_t)c->cfg.cda_wcon)
        w = (uint64_t)c->cfg.cda_wcon;
    if (w < 1)
        w = 1; /* the minimum a message may safely carry (§IV) */
    if (w > CDA_CMAX)
        w = CDA_CMAX;
    return w;
}

/* the piggyback: episode ep's stamp, credit w */
static void put_pb(uint8_t *pb, uint32_t ep, uint64_t w)
{
    pb[0] = (uint8_t)ep;
    td_put32(pb + 1, (uint32_t)w);
}

static void cda_on_send(td_ctx *c, void *st, int dest, uint8_t *pb)
{
    cda *s = st;
    if (td_is_root(c)) {
        /* the controlling agent creates what it lacks: no message needed */
        if (s->cur < (uint64_t)c->cfg.cda_borrow || s->cur < 2)
            s->cur += (uint64_t)c->cfg.cda_init;
        uint64_t w = share(c, s);
        if (s->out > CDA_OUT_MAX - w) {
            td_fail(c, "cda: credit outside rank 0 would exceed 2^62");
            return;
        }
        s->cur -= w;
        s->out += w;
        s->emitted++;
        put_pb(pb, c->episode, w);
        return;
    }
    if (s->ahead) {
        /* working for the next episode before TERM came: see the header */
        if (s->future) {
            uint64_t w = s->future > 1 ? s->future / 2 : 1;
            s->future -= w;
            put_pb(pb, c->episode + 1, w);
        } else {
            borrow(c, s, dest, 0, c->episode + 1);
            put_pb(pb, c->episode + 1, 0);
        }
        return;
    }
    if (s->cur < 2) {
        /* cannot pay: prepaid, never held (see the header); a REFILL too
         * once the rank shows it emits several messages in this step */
        borrow(c, s, dest, !s->borrowing && s->emitted >= 1, c->episode);
        s->emitted++;
        put_pb(pb, c->episode, 0);
        return;
    }
    uint64_t w = share(c, s);
    if (s->broken == CDA_BROKEN_ACTIVEFLUSH) {
        /* broken: hand everything over and stay active with nothing */
        w = s->cur;
    } else if (w > s->cur - 1) {
        w = s->cur - 1;
    }
    s->cur -= w;
    s->emitted++;
    put_pb(pb, c->episode, w);
    /* Prefetch (§IV): replenish before running dry, once the rank shows it
     * emits several messages in this step. A rank that sends one message and
     * goes idle (a token, a chain) would only flush the prefetched credit
     * back: without the paper's terminal emission that costs 2 messages per
     * hop once the chain's credit fell below C_borrow (bench/RESULTS.md). */
    if (s->emitted >= 2 && s->cur < (uint64_t)c->cfg.cda_borrow && !s->borrowing && s->cur >= 1)
        borrow(c, s, -1, 1, c->episode);
}

static void cda_on_recv(td_ctx *c, void *st, int src, const uint8_t *pb)
{
    cda *s = st;
    /* the stamp names an episode in [episode - 254, episode + 1]: a
     * primary 255 episodes late would read as the next one's (bcj.c) */
    uint32_t ep = td_bcj_stamp(c->episode, pb[0]);
    uint64_t w = td_get32(pb + 1);
    if (w == 0 && ep == c->episode) {
        /* prepaid: its credit is the grant rank 0 sends here */
        if (td_prepaid_primary(c, &s->awaiting, &s->reserved) && !td_is_root(c))
            absorb(c, s, (uint64_t)c->cfg.cda_init);
        return;
    }
    if (ep == c->episode + 1 && !td_is_root(c)) {
        s->ahead = 1;
        if (w == 0)
            s->awaiting_next++;
        else
            s->future += w; /* rank 0's credit of the next episode: see the header */
        if (s->future > CDA_OUT_MAX || s->awaiting_next > CDA_OUT_MAX)
            td_fail(c, "cda: more than 2^62 credits of the next episode");
        return;
    }
    if (ep == c->episode) {
        if (td_is_root(c)) {
            if (w > s->out) {
                td_fail(c, "cda: primary from rank %d brings %llu credits, only %llu outside rank 0", src,
                        (unsigned long long)w, (unsigned long long)s->out);
                return;
            }
            s->out -= w;
            s->cur += w;
        } else {
            absorb(c, s, w);
        }
    } else if (ep < c->episode) {
        /* sent in an episode already announced: the announcement was
         * premature (a contract violation). Its credit belonged to that
         * episode's sum, which is closed: dropped, and the episode marked
         * unsafe (td_late_primary) instead of stopping detection */
        td_late_primary(c, src, ep);
    } else {
        td_fail(c, "cda: primary from rank %d stamped episode %u at episode %u", src, ep, c->episode);
    }
}

static void cda_on_passive(td_ctx *c, void *st)
{
    cda *s = st;
    s->emitted = 0;
    if (!td_is_root(c)) {
        if (s->cur && !s->borrowing && (c->dirty || s->collect)) {
            flush_credit(c, s, s->cur, 0);
            s->cur = 0;
        }
        return;
    }
    int dirty = s->dirty_or || c->dirty;
    if (!dirty)
        return; /* nothing happened since the announcement: nothing to announce */
    if (s->out == 0 && s->reserved == 0) {
        td_quiescent(c, 1);
        return;
    }
    if (c->episode > 0 && !s->collected) {
        s->collected = 1;
        c->stats.waves++;
        collect_children(c);
    }
}

static int cda_on_control(td_ctx *c, void *st, int src, const td_msg *m)
{
    cda *s = st;
    uint64_t g = (uint64_t)c->cfg.cda_init;
    switch (m->type) {
    case CDA_FLUSH:
        if (!td_is_root(c) || src == 0 || m->a < 1 || (uint64_t)m->a > s->out || m->b || m->c ||
            (m->flags & ~(TD_MF_DIRTY | CDA_F_OVERFLOW)))
            return td_fail(c, "cda: flush of %lld credits from rank %d at rank %d (%llu outside rank 0)",
                           (long long)m->a, src, c->rank, (unsigned long long)s->out);
        s->out -= (uint64_t)m->a;
        s->dirty_or |= m->flags & TD_MF_DIRTY;
        return TD_OK;
    case CDA_BORROW: {
        int refill = (m->flags & CDA_F_REFILL) != 0;
        if (!td_is_root(c) || src == 0 || m->a < -1 || m->a >= c->size || (m->a < 0 && !refill) ||
            (!refill && m->seq) || m->b || m->c || (m->flags & ~CDA_F_REFILL))
            return td_fail(c, "cda: borrow from rank %d at rank %d", src, c->rank);
        /* answered even while rank 0 is active: its activity must not stall
         * the others' sends, and a grant only moves credit (§IV) */
        if (m->a == 0) {
            /* a prepaid primary to rank 0 itself: nothing to send, but rank 0
             * stays accountable for it until it arrives (reserved) */
            td_prepaid_half(&s->reserved, &s->awaiting);
        } else if (m->a > 0) {
            if (s->out > CDA_OUT_MAX - g)
                return td_fail(c, "cda: credit outside rank 0 would exceed 2^62");
            td_msg r = {.type = CDA_GRANT, .a = (int64_t)g, .flags = CDA_F_PREPAID};
            td_send(c, (int)m->a, &r);
            s->out += g;
        }
        if (refill) {
            if (s->out > CDA_OUT_MAX - g)
                return td_fail(c, "cda: credit outside rank 0 would exceed 2^62");
            td_msg r = {.type = CDA_GRANT, .seq = m->seq, .a = (int64_t)g};
            td_send(c, src, &r);
            s->out += g;
        }
        return TD_OK;
    }
    case CDA_GRANT:
        if (td_is_root(c) || src != 0 || (uint64_t)m->a != g || m->b || m->c ||
            (m->flags & ~CDA_F_PREPAID) || ((m->flags & CDA_F_PREPAID) && m->seq))
            return td_fail(c, "cda: grant of %lld from rank %d at rank %d", (long long)m->a, src, c->rank);
        if (m->flags & CDA_F_PREPAID) {
            if (td_prepaid_half(&s->reserved, &s->awaiting))
                absorb(c, s, g);
            return TD_OK;
        }
        if (!s->borrowing || m->seq != s->borrow_seq)
            return td_fail(c, "cda: grant %llu from rank 0 but %s", (unsigned long long)m->seq,
                           s->borrowing ? "another borrow is outstanding" : "no borrow is outstanding");
        s->borrowing = 0;
        absorb(c, s, g);
        return TD_OK;
    case CDA_COLLECT:
        if (td_is_root(c) || src != c->tree.parent || m->a || m->b || m->c || m->flags || s->collect)
            return td_fail(c, "cda: collect from rank %d at rank %d", src, c->rank);
        s->collect = 1; /* flushed at the next on_passive */
        collect_children(c); /* at once, even while active: it must stay ahead of TERM */
        return TD_OK;
    }
    return td_fail(c, "cda: message type %u", m->type);
}

static void cda_new_episode(td_ctx *c, void *st)
{
    cda *s = st;
    uint64_t g = (uint64_t)c->cfg.cda_init;
    s->emitted = 0;
    s->dirty_or = 0;
    s->collect = s->collected = 0;
    s->borrowing = 0; /* none can be outstanding: the borrower's credit would still be out */
    s->reserved = 0;  /* none: a reserved grant is counted in out */
    s->awaiting = s->awaiting_next; /* their grants come in this episode */
    s->awaiting_next = 0;
    s->ahead = 0;
    if (td_is_root(c)) {
        s->cur = g;
        s->out = (uint64_t)(c->size - 1) * g;
        return;
    }
    uint64_t f = s->future;
    s->future = 0;
    s->cur = 0;
    absorb(c, s, g);
    if (f)
        absorb(c, s, f);
}

/* where the credit is (td_describe) */
static void cda_describe(const td_ctx *c, const void *st, char *buf, size_t len)
{
    const cda *s = st;
    if (td_is_root(c))
        snprintf(buf, len, "cda: credit outside rank 0 %llu%s%s", (unsigned long long)s->out,
                 s->reserved ? ", a prepaid primary to rank 0 is in transit" : "", s->collected ? ", collect sent" : "");
    else
        snprintf(buf, len, "cda: credit held %llu%s%s%s", (unsigned long long)s->cur,
                 s->borrowing ? ", a borrow is unanswered (rank 0)" : "",
                 s->reserved ? ", a grant waits for its prepaid primary" : "", s->collect ? ", asked to flush" : "");
}

#define CDA_TABLE(NAME, FLAGS, INIT)                                                                   \
    {                                                                                                  \
        .name = NAME, .id = 6, .flags = (FLAGS) | TD_ALGO_CREDIT | TD_ALGO_EPISODE | TD_ALGO_FIXPOINT, .ntypes = CDA_NTYPES, .type_names = cda_types,          \
        .pb_size = 5, .state_size = sizeof(cda), .init = INIT, .new_episode = cda_new_episode,         \
        .on_send = cda_on_send, .on_recv = cda_on_recv, .on_passive = cda_on_passive,                  \
        .on_control = cda_on_control, .describe = cda_describe,                                        \
    }

const td_algo td_algo_cda = CDA_TABLE("cda", 0, cda_init);

#ifdef TD_TEST_BROKEN
/* Broken: an active rank gives its whole credit to a message and keeps
 * running with none, so rank 0 can collect everything while it is active
 * (or while its next message, prepaid or not, is in transit). */
static int cda_activeflush_init(td_ctx *c, void *st)
{
    ((cda *)st)->broken = CDA_BROKEN_ACTIVEFLUSH;
    return cda_init(c, st);
}
const td_algo td_algo_cda_activeflush = CDA_TABLE("cda-activeflush", TD_ALGO_BROKEN, cda_activeflush_init);

/* Broken: overflow above CDA_CMAX is dropped instead of returned, so rank 0
 * never gets all credit back (liveness). */
static int cda_dropoverflow_init(td_ctx *c, void *st)
{
    ((cda *)st)->broken = CDA_BROKEN_DROPOVERFLOW;
    return cda_init(c, st);
}
const td_algo td_algo_cda_dropoverflow = CDA_TABLE("cda-dropoverflow", TD_ALGO_BROKEN, cda_dropoverflow_init);
#endif
