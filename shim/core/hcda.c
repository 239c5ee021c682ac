/*
 * HCDA: Huang/Mattern credit distribution with Mattern's 2^-Y encoding
 * (papers/cda-credit-hpc.txt §III-D), controlling agent = rank 0.
 *
 * Credit is only ever a power of two 2^-Y and travels as the exponent Y
 * (piggyback: sender's episode u32, Y u8). As in §III-D:
 *   - every rank starts with 2^-q, 2^(q-1) < P <= 2^q, so C_total = P 2^-q;
 *   - sending splits the rank's 2^-Y into two halves 2^-(Y+1) (Y+1);
 *   - an active rank that already holds credit RETURNs the credit a primary
 *     brings to rank 0 at once instead of adding it (no summing anywhere but
 *     at the controlling agent); a passive rank adopts it;
 *   - a rank that becomes passive RETURNs its credit.
 * Rank 0 sums exactly: every credit is a multiple of 2^-Ymax, Ymax = q + L
 * with L = floor(log2 C_init) halvings per initial credit, so it counts
 * `out` (credit outside rank 0) as an integer number of 2^-Ymax units in 128
 * bits (Ymax <= 93): fixed point with no rounding, no floating point.
 *
 * Borrowing forced by the encoding: a rank holding 2^-Ymax (or nothing)
 * cannot split. Its send goes out at once PREPAID (y = HC_PREPAID, no
 * credit) and a BORROW naming the receiver goes to rank 0, which GRANTs a
 * fresh 2^-q (created credit, added to out) to the receiver, paired there
 * with the primary by count as in cda.c (read its header: the argument why
 * no schedule can lose a prepaid primary, and why no send is ever held, is
 * the same), and, flagged REFILL when the rank sends its second message
 * of the step or more and has none outstanding, a fresh 2^-q to the sender
 * too, so a rank that sends many messages gets log2(C_init) more halvings
 * before its next borrow (a chain such as the token ring, one message per
 * step, costs the 2 messages per borrow of Theorem 1). The sender's old 2^-Ymax
 * then stays beside the refill as a spare piece, returned with it in one
 * RETURN. A borrower keeps its credit until the REFILL arrives.
 * Rank 0 as a worker draws on the credit it controls: its messages carry a
 * fresh 2^-q (added to out).
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
 * RETURN carries up to three exponents (a, b, c; -1 = none) so a rank hands
 * back its credit and a spare piece in one message.
 */
#include "td_algo.h"

#include <stdio.h>

#include <string.h>

enum { HC_RETURN = 0, HC_BORROW, HC_GRANT, HC_COLLECT, HC_NTYPES };
static const char *const hcda_types[HC_NTYPES] = {"return", "borrow", "grant", "collect"};
#define HC_NONE (-1)
#define HC_PREPAID 0xffu           /* piggyback y of a prepaid primary: no credit */
#define HC_F_REFILL TD_MF_ALGO1    /* BORROW: grant the borrower too */
#define HC_F_PREPAID TD_MF_ALGO2   /* GRANT: the credit of a prepaid primary to its receiver */

typedef unsigned __int128 hc_units; /* multiples of 2^-Ymax */

enum { HC_OK = 0, HC_BROKEN_FLOAT, HC_BROKEN_EAGER };

typedef struct hcda {
    int q, ymax;
    int y;             /* held credit 2^-y, HC_NONE = none */
    int spare;         /* after a borrow: the old unsplittable piece, returned with y */
    hc_units future;   /* credit of the next episode, received before TERM */
    hc_units out;      /* root: credit outside rank 0 */
    float out_f;       /* broken variant: lossy float summation of out */
    uint64_t borrow_seq;
    uint64_t reserved, awaiting, awaiting_next; /* prepaid primaries: see cda.c */
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
    s->y = q;
    s->spare = HC_NONE;
    if (td_is_root(c)) {
        s->out = (hc_units)(c->size - 1) * units(s, q);
        s->out_f = (float)(c->size - 1) * (float)(1.0 / (double)(1LL << q));
    }
    return TD_OK;
}

/* ---------------------------------------------------------------- root accounting */

static void out_add(hcda *s, int y)
{
    s->out += units(s, y);
    s->out_f += (float)(1.0 / (double)units(s, 0)) * (float)units(s, y);
}

static int out_sub(td_ctx *c, hcda *s, int y, int src)
{
    if (s->broken == HC_BROKEN_FLOAT) {
        /* broken: the lossy summation §III-D warns about */
        s->out_f -= (float)(1.0 / (double)units(s, 0)) * (float)units(s, y);
        if (s->out_f <= 0)
            s->out = 0;
        else if (s->out >= units(s, y))
            s->out -= units(s, y);
        return TD_OK;
    }
    if (units(s, y) > s->out)
        return td_fail(c, "hcda: rank %d returns 2^-%d but less is outside rank 0", src, y);
    s->out -= units(s, y);
    return TD_OK;
}

static int root_done(const hcda *s)
{
    return s->out == 0;
}

/* ---------------------------------------------------------------- returning */

/* Return the credit `u` (units) as powers of two, three per message. The
 * largest piece an exponent can say is 2^0: credit of 2 or more (next-
 * episode credit gathered from several of rank 0's messages, each a fresh
 * 2^-q, before TERM came: `future`) goes back in pieces of 2^0. */
static void return_units(td_ctx *c, hcda *s, hc_units u)
{
    const hc_units one = units(s, 0);
    while (u) {
        int64_t e[3] = {HC_NONE, HC_NONE, HC_NONE};
        for (int i = 0; i < 3 && u; i++) {
            if (u >= one) {
                u -= one;
                e[i] = 0;
                continue;
            }
            int bit = 0;
            while (!((u >> bit) & 1))
                bit++;
            u &= ~((hc_units)1 << bit);
            e[i] = s->ymax - bit;
        }
        td_msg m = {.type = HC_RETURN, .a = e[0], .b = e[1], .c = e[2], .flags = td_dirty_flag(c)};
        td_send(c, 0, &m);
        c->stats.flushes++;
    }
}

static void return_one(td_ctx *c, hcda *s, int y)
{
    return_units(c, s, units(s, y));
}

/* a BORROW for a prepaid primary to dest (-1: none), with a REFILL when
 * `refill`, stamped with episode ep (td_credit_borrow) */
static void borrow(td_ctx *c, hcda *s, int dest, int refill, uint32_t ep)
{
    td_credit_borrow(c, HC_BORROW, dest, refill, HC_F_REFILL, &s->borrow_seq, &s->borrowing, ep);
}


/* credit 2^-y reaches a non-root rank: §III-D, a holder returns it, a rank
 * with none adopts it */
static void take(td_ctx *c, hcda *s, int y)
{
    if (s->y == HC_NONE)
        s->y = y;
    else
        return_one(c, s, y);
}

/* ---------------------------------------------------------------- primary traffic */

static void put_pb(const td_ctx *c, uint8_t *pb, int y)
{
    td_put32(pb, c->episode);
    pb[4] = (uint8_t)y;
}

static void hcda_on_send(td_ctx *c, void *st, int dest, uint8_t *pb)
{
    hcda *s = st;
    if (td_is_root(c)) {
        out_add(s, s->q);
        put_pb(c, pb, s->q);
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
    if (s->y != HC_NONE && s->y < s->ymax) {
        s->emitted++;
        s->y++; /* 2^-y = 2^-(y+1) kept + 2^-(y+1) sent */
        put_pb(c, pb, s->y);
        if (s->broken == HC_BROKEN_EAGER) {
            /* broken: gives back its own half while still active */
            return_one(c, s, s->y);
            s->y = HC_NONE;
        }
        return;
    }
    /* cannot split: prepaid, never held (cda.c); a REFILL from the second
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
        if (td_prepaid_half(&s->awaiting, &s->reserved) && !td_is_root(c))
            take(c, s, s->q);
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
        out_sub(c, s, y, src);
    else
        take(c, s, y);
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
        hc_units u = 0;
        if (s->y != HC_NONE)
            u += units(s, s->y);
        if (s->spare != HC_NONE)
            u += units(s, s->spare);
        s->y = s->spare = HC_NONE;
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

static int valid_y(const hcda *s, int64_t y) { return y >= 0 && y <= s->ymax; }

static int hcda_on_control(td_ctx *c, void *st, int src, const td_msg *m)
{
    hcda *s = st;
    switch (m->type) {
    case HC_RETURN: {
        int64_t e[3] = {m->a, m->b, m->c};
        int ok = td_is_root(c) && src != 0 && valid_y(s, m->a) && !(m->flags & ~TD_MF_DIRTY);
        for (int i = 1; i < 3; i++)
            ok = ok && (e[i] == HC_NONE || valid_y(s, e[i]));
        if (!ok)
            return td_fail(c, "hcda: return (%lld, %lld, %lld) from rank %d at rank %d", (long long)m->a,
                           (long long)m->b, (long long)m->c, src, c->rank);
        for (int i = 0; i < 3; i++)
            if (e[i] != HC_NONE && out_sub(c, s, (int)e[i], src) != TD_OK)
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
            out_add(s, s->q);
        }
        if (refill) {
            td_msg r = {.type = HC_GRANT, .seq = m->seq, .a = s->q};
            td_send(c, src, &r);
            out_add(s, s->q);
        }
        return TD_OK;
    }
    case HC_GRANT:
        if (td_is_root(c) || src != 0 || m->a != s->q || m->b || m->c || (m->flags & ~HC_F_PREPAID) ||
            ((m->flags & HC_F_PREPAID) && m->seq))
            return td_fail(c, "hcda: grant of 2^-%lld from rank %d at rank %d", (long long)m->a, src, c->rank);
        if (m->flags & HC_F_PREPAID) {
            if (td_prepaid_half(&s->reserved, &s->awaiting))
                take(c, s, s->q);
            return TD_OK;
        }
        if (!s->borrowing || m->seq != s->borrow_seq)
            return td_fail(c, "hcda: grant %llu from rank 0 but %s", (unsigned long long)m->seq,
                           s->borrowing ? "another borrow is outstanding" : "no borrow is outstanding");
        s->borrowing = 0;
        if (s->spare != HC_NONE)
            return_one(c, s, s->spare); /* Mattern keeps one piece: the older spare goes home */
        s->spare = s->y;                /* HC_NONE if the rank borrowed with nothing */
        s->y = s->q;
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
    s->spare = HC_NONE;
    s->y = s->q;
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
    else if (s->y == HC_NONE)
        snprintf(buf, len, "hcda: no credit held%s", s->borrowing ? ", a borrow is unanswered (rank 0)" : "");
    else
        snprintf(buf, len, "hcda: credit held 2^-%d%s%s", s->y, s->borrowing ? ", a borrow is unanswered (rank 0)" : "",
                 s->collect ? ", asked to flush" : "");
}

#define HCDA_TABLE(NAME, FLAGS, INIT)                                                                  \
    {                                                                                                  \
        .name = NAME, .id = 5, .flags = (FLAGS) | TD_ALGO_CREDIT | TD_ALGO_EPISODE, .ntypes = HC_NTYPES, .type_names = hcda_types,          \
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

/* Broken: a rank returns the half it keeps at every send while it stays
 * active, so rank 0 can hold all credit while that rank still works. */
static int hcda_eager_init(td_ctx *c, void *st)
{
    ((hcda *)st)->broken = HC_BROKEN_EAGER;
    return hcda_init(c, st);
}
const td_algo td_algo_hcda_eager = HCDA_TABLE("hcda-eager", TD_ALGO_BROKEN, hcda_eager_init);
#endif
