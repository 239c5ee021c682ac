/*
 * HCDA: Huang/Mattern credit distribution with Mattern's 2^-Y encoding
 * (papers/cda-credit-hpc.txt §III-D), controlling agent = rank 0.
 *
 * Credit on a primary is only ever a power of two 2^-Y and travels as the
 * exponent Y (piggyback: sender's episode u32, Y u8). As in §III-D every
 * rank starts with 2^-q, 2^(q-1) < P <= 2^q, so C_total = P 2^-q. Every
 * credit is a multiple of 2^-Ymax, Ymax = q + L with L = floor(log2
 * C_init), and every sum of credit is kept exactly as an integer number of
 * those units in 128 bits (Ymax <= 93): fixed point, no rounding, no
 * floating point (the underflow §III-D warns about cannot happen).
 *
 * Summing at every rank (issue 43). §III-D has an active rank return the
 * credit of each primary it receives to rank 0 at once "to keep its own
 * summing simple", and a rank halve its single piece at every send. That
 * cost one RETURN per primary a busy rank received, log2(C_init) sends per
 * piece of credit and, once a rank had none left, a BORROW, a GRANT and a
 * RETURN through rank 0 for every further send (66,017 messages of a rank
 * to itself made 198,000 control messages). With exact fixed-point sums a
 * rank's summing is an integer addition, so every rank now keeps a sum
 * (`held`, units), as Huang's and Mattern's originals do (§III-D, first
 * paragraph: "it adds the message-carried credit to its own credit
 * stash"), and only the pieces on the wire keep Mattern's encoding:
 *   - a send carries the largest power of two <= held / (k + 1), k the
 *     sends since the rank last became passive plus one (cda.c's online
 *     uniform split of §IV, rounded down to a power of two; at least one
 *     unit, and the rank keeps at least one unit: held >= 2 to pay);
 *   - a received piece is added to `held`; a rank returns all of it in ONE
 *     RETURN (the 128-bit sum as a = high, b = low 64 bits) when it becomes
 *     passive (dirty or asked: the clean hold of cda.c);
 *   - prefetch as cda.c's: from the second send of a step on, below
 *     C_borrow units (TDSHIM_CDA_BORROW) with no borrow outstanding, a
 *     BORROW flagged REFILL brings a fresh 2^-q (2^L units, about C_init
 *     more sends) that the borrower keeps, before the rank runs dry;
 *   - a message to itself carries no credit (y = HC_SELF): it can only be
 *     in transit to its own sender, which counts it (`self_pending`) and
 *     keeps its whole credit (at least one unit: it holds some when it
 *     sends such a message, and pays no piece below one unit) until all
 *     of them are received, passive or not. So a rank that keeps sending
 *     to itself (MPI_COMM_SELF: the shim reports destinations and sources
 *     as world ranks) sends no control message at all;
 *   - rank 0, the controlling agent, draws its own sends from a pool it
 *     refills with a fresh 2^-q (no message) below C_borrow units, split
 *     the same way, and adds what leaves to `out`.
 * Invariant (what rank 0 counts): `out`, the credit outside rank 0, is the
 * sum of the credit held by non-root ranks, carried by primaries in transit
 * and granted by rank 0 but not yet taken (GRANTs in transit, or reserved
 * at a receiver for a prepaid primary), plus next-episode credit kept
 * apart (`future`). A non-root rank that is active, has a message to itself
 * in transit or a REFILL outstanding holds at least one unit (it keeps one
 * at every send and returns only when passive, with no message to itself
 * in transit and no REFILL outstanding); every primary between two ranks
 * carries a piece or is prepaid (below). So out == 0 (with no prepaid
 * primary to rank 0 reserved) at a passive rank 0 means every rank is
 * passive and no primary is in transit, for every program that keeps the
 * contract: Mattern's credit recovery argument, with the sums exact.
 *
 * A rank that cannot pay (held < 2) sends at once PREPAID (y = HC_PREPAID,
 * no credit) and a BORROW naming the receiver goes to rank 0, which GRANTs
 * a fresh 2^-q (created credit, added to out) to the receiver, paired there
 * with the primary by count as in cda.c (read its header: the argument why
 * no schedule can lose a prepaid primary, and why no send is ever held, is
 * the same), and, flagged REFILL when the rank sends its second message of
 * the step or more and has none outstanding, a fresh 2^-q to the sender
 * too. A borrower keeps its credit until the REFILL arrives.
 *
 * Episodes work exactly as in cda.c (read its header): fresh 2^-q per rank
 * at every announcement (rank 0 sets out = (P-1) 2^-q); a passive rank
 * returns its credit only when dirty or asked by a COLLECT (sent down the
 * tree by rank 0, passive and aware of activity, once per episode after the
 * first), so a rank made active by a collective after the announcement still
 * holds 2^-q and an idle job sends nothing; next-episode credit received
 * before TERM is kept apart (`future`, in units) and returned when the
 * announcement is learned; a rank that received a primary of the next
 * episode (`ahead`) pays its sends with that credit or prepays them with a
 * BORROW stamped with the next episode.
 */
#include "td_algo.h"

#include <stdio.h>

#include <string.h>

enum { HC_RETURN = 0, HC_BORROW, HC_GRANT, HC_COLLECT, HC_NTYPES };
static const char *const hcda_types[HC_NTYPES] = {"return", "borrow", "grant", "collect"};
#define HC_PREPAID 0xffu           /* piggyback y of a prepaid primary: no credit */
#define HC_SELF 0xfeu              /* piggyback y of a message to itself: no credit (self_pending) */
#define HC_F_REFILL TD_MF_ALGO1    /* BORROW: grant the borrower too */
#define HC_F_PREPAID TD_MF_ALGO2   /* GRANT: the credit of a prepaid primary to its receiver */

typedef unsigned __int128 hc_units; /* multiples of 2^-Ymax */
#define HC_OUT_MAX ((hc_units)1 << 126) /* rank 0's sum stays far from overflow; every other sum is below it */

enum { HC_OK = 0, HC_BROKEN_FLOAT, HC_BROKEN_EAGER, HC_BROKEN_SELF };

typedef struct hcda {
    int q, ymax;
    hc_units held;     /* non-root: credit held; root: the pool its own sends draw on */
    hc_units future;   /* credit of the next episode, received before TERM */
    hc_units out;      /* root: credit outside rank 0 */
    float out_f;       /* broken variant: lossy float summation of out */
    uint64_t borrow_seq;
    uint64_t reserved, awaiting, awaiting_next; /* prepaid primaries: see cda.c */
    uint64_t self_pending; /* messages to itself sent and not yet received */
    uint32_t emitted;  /* sends since the rank last became passive */
    uint8_t borrowing, dirty_or, collect, collected, broken, ahead;
} hcda;

static hc_units units(const hcda *s, int y) { return (hc_units)1 << (s->ymax - y); }

static int hcda_init(td_ctx *c, void *st)
{
    hcda *s = st;
    if (c->cfg.cda_init < 2)
        return TD_EINVAL;
    int L = 0;
    while (L < 62 && ((int64_t)1 << (L + 1)) <= c->cfg.cda_init)
        L++;
    int q = 0;
    while ((1LL << q) < c->size)
        q++;
    s->q = q;
    s->ymax = q + L; /* <= 31 + 62 */
    s->held = units(s, q);
    if (td_is_root(c)) {
        s->out = (hc_units)(c->size - 1) * units(s, q);
        s->out_f = (float)(c->size - 1) * (float)(1.0 / (double)(1LL << q));
    }
    return TD_OK;
}

/* ---------------------------------------------------------------- root accounting */

static float as_float(const hcda *s, hc_units u) { return (float)((double)u / (double)units(s, 0)); }

static void out_add(td_ctx *c, hcda *s, hc_units u)
{
    if (s->out > HC_OUT_MAX - u) {
        td_fail(c, "hcda: credit outside rank 0 would exceed 2^%d", 126 - s->ymax);
        return;
    }
    s->out += u;
    s->out_f += as_float(s, u);
}

static int out_sub(td_ctx *c, hcda *s, hc_units u, int src)
{
    if (s->broken == HC_BROKEN_FLOAT) {
        /* broken: the lossy summation §III-D warns about */
        s->out_f -= as_float(s, u);
        if (s->out_f <= 0)
            s->out = 0;
        else if (s->out >= u)
            s->out -= u;
        return TD_OK;
    }
    if (u > s->out)
        return td_fail(c, "hcda: rank %d returns %.9g but less is outside rank 0", src,
                       (double)u / (double)units(s, 0));
    s->out -= u;
    return TD_OK;
}

static int root_done(const hcda *s)
{
    return s->out == 0;
}

/* ---------------------------------------------------------------- returning */

/* Return the credit `u` (units) in one RETURN: the exact 128-bit sum,
 * a = high, b = low 64 bits. */
static void return_units(td_ctx *c, hcda *s, hc_units u)
{
    (void)s;
    if (!u)
        return;
    td_msg m = {.type = HC_RETURN, .a = (int64_t)(uint64_t)(u >> 64), .b = (int64_t)(uint64_t)u,
                .flags = td_dirty_flag(c)};
    td_send(c, 0, &m);
    c->stats.flushes++;
}

/* a BORROW for a prepaid primary to dest (-1: none), with a REFILL when
 * `refill`, stamped with episode ep (td_credit_borrow) */
static void borrow(td_ctx *c, hcda *s, int dest, int refill, uint32_t ep)
{
    td_credit_borrow(c, HC_BORROW, dest, refill, HC_F_REFILL, &s->borrow_seq, &s->borrowing, ep);
}

/* credit reaches a non-root rank: summed (the header) */
static void take(hcda *s, hc_units u) { s->held += u; }

/* ---------------------------------------------------------------- primary traffic */

static void put_pb(const td_ctx *c, uint8_t *pb, int y)
{
    td_put32(pb, c->episode);
    pb[4] = (uint8_t)y;
}

static int ulog2(hc_units u) /* u > 0 */
{
    uint64_t hi = (uint64_t)(u >> 64);
    return hi ? 127 - __builtin_clzll(hi) : 63 - __builtin_clzll((uint64_t)u);
}

/* The piece a send carries from h >= 2 units: a power of two <= h / S, S =
 * emitted + 2 (the header; no division: 2^(floor(log2 h) - ceil(log2 S)),
 * at least one unit, at most 2^0), so at least h / 2 stays. Its exponent. */
static int piece(const hcda *s, hc_units h)
{
    uint64_t S = (uint64_t)s->emitted + 2;
    int bit = ulog2(h) - (64 - __builtin_clzll(S - 1));
    if (bit < 0)
        bit = 0;
    if (bit > s->ymax)
        bit = s->ymax;
    return s->ymax - bit;
}

/* pay a send from h (held, or rank 0's pool): the piggyback's exponent */
static int pay(hcda *s, hc_units *h)
{
    int y = piece(s, *h);
    *h -= units(s, y);
    s->emitted++;
    return y;
}

static void hcda_on_send(td_ctx *c, void *st, int dest, uint8_t *pb)
{
    hcda *s = st;
    if (td_is_root(c)) {
        /* the controlling agent creates what it lacks: no message needed */
        if (s->held < (hc_units)c->cfg.cda_borrow || s->held < 2)
            s->held += units(s, s->q);
        int y = pay(s, &s->held);
        out_add(c, s, units(s, y));
        put_pb(c, pb, y);
        return;
    }
    if (s->ahead) {
        /* working for the next episode before TERM came (cda.c): pay with
         * the smallest piece of next-episode credit, halved if it can be */
        if (s->future) {
            int bit = 0;
            while (!((s->future >> bit) & 1))
                bit++;
            int y = bit > s->ymax ? 0 : s->ymax - bit;
            if (y < s->ymax)
                y++;
            s->future -= units(s, y);
            put_pb(c, pb, y);
        } else {
            borrow(c, s, dest, 0, c->episode + 1);
            put_pb(c, pb, HC_PREPAID);
        }
        td_put32(pb, c->episode + 1);
        return;
    }
    if (dest == c->rank && s->held) {
        /* to itself: no credit, the rank keeps all it holds until it
         * received the message (the header) */
        s->self_pending++;
        put_pb(c, pb, HC_SELF);
        return;
    }
    if (s->held >= 2) {
        put_pb(c, pb, pay(s, &s->held));
        if (s->broken == HC_BROKEN_EAGER) {
            /* broken: gives back what it keeps while still active */
            return_units(c, s, s->held);
            s->held = 0;
        }
        /* prefetch (cda.c): a REFILL before the rank runs dry, once it
         * shows it sends several messages in this step */
        if (s->emitted >= 2 && s->held < (hc_units)c->cfg.cda_borrow && !s->borrowing)
            borrow(c, s, -1, 1, c->episode);
        return;
    }
    /* cannot pay: prepaid, never held (cda.c); a REFILL from the second
     * emission of the step on */
    borrow(c, s, dest, !s->borrowing && s->emitted >= 1, c->episode);
    s->emitted++;
    put_pb(c, pb, HC_PREPAID);
}

static void hcda_on_recv(td_ctx *c, void *st, int src, const uint8_t *pb)
{
    hcda *s = st;
    uint32_t ep = td_get32(pb);
    int y = pb[4];
    if (y == HC_SELF) {
        if (ep < c->episode) {
            td_late_primary(c, src, ep); /* its sender's credit kept that announcement back: premature */
            return;
        }
        if (src != c->rank || ep != c->episode || !s->self_pending) {
            td_fail(c, "hcda: a message to itself from rank %d at rank %d, episode %u (%llu outstanding)", src,
                    c->rank, ep, (unsigned long long)s->self_pending);
            return;
        }
        s->self_pending--;
        return;
    }
    if (y > s->ymax && y != HC_PREPAID) {
        td_fail(c, "hcda: primary from rank %d carries 2^-%d, finest is 2^-%d", src, y, s->ymax);
        return;
    }
    if (ep == c->episode + 1 && !td_is_root(c)) {
        s->ahead = 1; /* see cda.c: next-episode credit */
        if (y == HC_PREPAID)
            s->awaiting_next++;
        else
            s->future += units(s, y);
        return;
    }
    if (y == HC_PREPAID && ep == c->episode) {
        if (td_prepaid_primary(c, &s->awaiting, &s->reserved) && !td_is_root(c))
            take(s, units(s, s->q));
        return;
    }
    if (ep < c->episode) {
        td_late_primary(c, src, ep); /* premature announcement: see cda.c */
        return;
    }
    if (ep != c->episode) {
        td_fail(c, "hcda: primary from rank %d stamped episode %u at episode %u", src, ep, c->episode);
        return;
    }
    if (td_is_root(c))
        out_sub(c, s, units(s, y), src);
    else
        take(s, units(s, y));
}

/* ---------------------------------------------------------------- control */

/* down the tree, ahead of TERM on FIFO channels: see cda.c */
static void collect_children(td_ctx *c)
{
    for (int i = 0; i < c->tree.nchildren; i++) {
        td_msg m = {.type = HC_COLLECT};
        td_send(c, c->tree.first_child + i, &m);
    }
}

static void hcda_on_passive(td_ctx *c, void *st)
{
    hcda *s = st;
    s->emitted = 0;
    if (!td_is_root(c)) {
        if (s->borrowing || !(c->dirty || s->collect))
            return; /* keep the credit until the grant; clean hold (cda.c) */
        if (s->self_pending && s->broken != HC_BROKEN_SELF)
            return; /* a message to itself is in transit: its credit stays (the header) */
        hc_units u = s->held;
        s->held = 0;
        return_units(c, s, u);
        return;
    }
    if (!(s->dirty_or || c->dirty))
        return; /* nothing happened since the announcement */
    if (root_done(s) && s->reserved == 0) {
        td_quiescent(c, 1);
        return;
    }
    if (c->episode > 0 && !s->collected) {
        s->collected = 1;
        c->stats.waves++;
        collect_children(c);
    }
}

static int hcda_on_control(td_ctx *c, void *st, int src, const td_msg *m)
{
    hcda *s = st;
    switch (m->type) {
    case HC_RETURN: {
        hc_units u = (hc_units)(uint64_t)m->a << 64 | (uint64_t)m->b;
        if (!td_is_root(c) || src == 0 || m->a < 0 || !u || m->c || (m->flags & ~TD_MF_DIRTY))
            return td_fail(c, "hcda: return (%lld, %lld, %lld) from rank %d at rank %d", (long long)m->a,
                           (long long)m->b, (long long)m->c, src, c->rank);
        if (out_sub(c, s, u, src) != TD_OK)
            return TD_EPROTO;
        s->dirty_or |= m->flags & TD_MF_DIRTY;
        return TD_OK;
    }
    case HC_BORROW: {
        int refill = (m->flags & HC_F_REFILL) != 0;
        if (!td_is_root(c) || src == 0 || m->a < -1 || m->a >= c->size || (m->a < 0 && !refill) ||
            (!refill && m->seq) || m->b || m->c || (m->flags & ~HC_F_REFILL))
            return td_fail(c, "hcda: borrow from rank %d at rank %d", src, c->rank);
        /* answered even while rank 0 is active, see cda.c */
        if (m->a == 0) {
            td_prepaid_half(&s->reserved, &s->awaiting); /* a prepaid primary to rank 0 itself */
        } else if (m->a > 0) {
            td_msg r = {.type = HC_GRANT, .a = s->q, .flags = HC_F_PREPAID};
            td_send(c, (int)m->a, &r);
            out_add(c, s, units(s, s->q));
        }
        if (refill) {
            td_msg r = {.type = HC_GRANT, .seq = m->seq, .a = s->q};
            td_send(c, src, &r);
            out_add(c, s, units(s, s->q));
        }
        return c->error ? TD_EPROTO : TD_OK;
    }
    case HC_GRANT:
        if (td_is_root(c) || src != 0 || m->a != s->q || m->b || m->c || (m->flags & ~HC_F_PREPAID) ||
            ((m->flags & HC_F_PREPAID) && m->seq))
            return td_fail(c, "hcda: grant of 2^-%lld from rank %d at rank %d", (long long)m->a, src, c->rank);
        if (m->flags & HC_F_PREPAID) {
            if (td_prepaid_half(&s->reserved, &s->awaiting))
                take(s, units(s, s->q));
            return TD_OK;
        }
        if (!s->borrowing || m->seq != s->borrow_seq)
            return td_fail(c, "hcda: grant %llu from rank 0 but %s", (unsigned long long)m->seq,
                           s->borrowing ? "another borrow is outstanding" : "no borrow is outstanding");
        s->borrowing = 0;
        take(s, units(s, s->q)); /* the refill: the borrower keeps it */
        return TD_OK;
    case HC_COLLECT:
        if (td_is_root(c) || src != c->tree.parent || m->a || m->b || m->c || m->flags || s->collect)
            return td_fail(c, "hcda: collect from rank %d at rank %d", src, c->rank);
        s->collect = 1;
        collect_children(c); /* at once, even while active: ahead of TERM */
        return TD_OK;
    }
    return td_fail(c, "hcda: message type %u", m->type);
}

static void hcda_new_episode(td_ctx *c, void *st)
{
    hcda *s = st;
    s->dirty_or = 0;
    s->collect = s->collected = 0;
    s->borrowing = 0;
    s->reserved = 0; /* see cda.c */
    s->awaiting = s->awaiting_next;
    s->awaiting_next = 0;
    s->ahead = 0;
    s->emitted = 0;
    s->self_pending = 0; /* none: its sender's credit would still be out (a late one: td_late_primary) */
    s->held = units(s, s->q);
    if (td_is_root(c)) {
        s->out = (hc_units)(c->size - 1) * units(s, s->q);
        s->out_f = (float)(c->size - 1) * (float)(1.0 / (double)(1LL << s->q));
        return;
    }
    hc_units f = s->future;
    s->future = 0;
    return_units(c, s, f); /* next-episode credit from before TERM: give it back now */
}

/* where the credit is (td_describe) */
static void hcda_describe(const td_ctx *c, const void *st, char *buf, size_t len)
{
    const hcda *s = st;
    if (td_is_root(c))
        snprintf(buf, len, "hcda: credit outside rank 0 %.9g of 1%s%s", (double)s->out / (double)units(s, 0),
                 s->reserved ? ", a prepaid primary to rank 0 is in transit" : "",
                 s->collected ? ", collect sent" : "");
    else
        snprintf(buf, len, "hcda: credit held %.9g%s%s%s", (double)s->held / (double)units(s, 0),
                 s->borrowing ? ", a borrow is unanswered (rank 0)" : "",
                 s->self_pending ? ", a message to itself is in transit" : "", s->collect ? ", asked to flush" : "");
}

#define HCDA_TABLE(NAME, FLAGS, INIT)                                                                  \
    {                                                                                                  \
        .name = NAME, .id = 5, .flags = (FLAGS) | TD_ALGO_CREDIT | TD_ALGO_EPISODE | TD_ALGO_FIXPOINT, .ntypes = HC_NTYPES, .type_names = hcda_types,          \
        .pb_size = 5, .state_size = sizeof(hcda), .init = INIT, .new_episode = hcda_new_episode,       \
        .on_send = hcda_on_send, .on_recv = hcda_on_recv, .on_passive = hcda_on_passive,               \
        .on_control = hcda_on_control, .describe = hcda_describe,                                      \
    }

const td_algo td_algo_hcda = HCDA_TABLE("hcda", 0, hcda_init);

#ifdef TD_TEST_BROKEN
/* Broken: rank 0 sums credit in single-precision floating point; a 2^-Ymax
 * piece next to a 2^-q one is rounded away and rank 0 announces while it is
 * still out (the underflow §III-D describes). */
static int hcda_float_init(td_ctx *c, void *st)
{
    ((hcda *)st)->broken = HC_BROKEN_FLOAT;
    return hcda_init(c, st);
}
const td_algo td_algo_hcda_float = HCDA_TABLE("hcda-float", TD_ALGO_BROKEN, hcda_float_init);

/* Broken: a rank returns what it keeps at every send while it stays
 * active, so rank 0 can hold all credit while that rank still works. */
static int hcda_eager_init(td_ctx *c, void *st)
{
    ((hcda *)st)->broken = HC_BROKEN_EAGER;
    return hcda_init(c, st);
}
const td_algo td_algo_hcda_eager = HCDA_TABLE("hcda-eager", TD_ALGO_BROKEN, hcda_eager_init);

/* Broken: a passive rank returns its credit while a message to itself is
 * in transit, so that message is covered by nothing and rank 0 can
 * announce before it is received. */
static int hcda_self_init(td_ctx *c, void *st)
{
    ((hcda *)st)->broken = HC_BROKEN_SELF;
    return hcda_init(c, st);
}
const td_algo td_algo_hcda_self = HCDA_TABLE("hcda-self", TD_ALGO_BROKEN, hcda_self_init);
#endif
