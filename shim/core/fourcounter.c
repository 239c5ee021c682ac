/*
 * The four-counter wave algorithm, 4C (papers/cda-credit-hpc.txt §III-B).
 *
 * Each rank counts primaries sent (s_p = c->sent) and received
 * (r_p = c->recvd) and is in state UP or DOWN (UP initially, and at the
 * start of every episode). A rank that is idle in UP and has a STOP from
 * every child enters DOWN and sends STOP(sigma_s, sigma_r of its subtree) to
 * its parent. When the root enters DOWN it compares the four counters
 * sigma_s^i, sigma_r^i, sigma_s^(i-1), sigma_r^(i-1): all equal -> terminate
 * (the engine's broadcast); otherwise REPEAT goes down the tree, every rank
 * returns to UP and a new wave i+1 starts.
 *
 * Why two waves: an orphan message (sent after the sender's report, received
 * before the receiver's) cancels an in-transit one in sigma_r^i - sigma_s^i.
 * If sigma_s is unchanged over two consecutive waves no rank sent anything
 * between its two reports, so the earlier wave had no orphan (§III-B).
 *
 * REPEAT is forwarded in on_passive (a busy rank pays nothing); wave numbers
 * (seq) are never reused, across episodes too.
 */
#include "td_algo.h"

#include <stdio.h>

enum { FC_STOP = 0, FC_REPEAT, FC_NTYPES };
static const char *const fc_types[FC_NTYPES] = {"stop", "repeat"};

enum { FC_UP = 0, FC_DOWN };

typedef struct fourcounter {
    uint64_t wave;        /* wave this rank is in (or last reported) */
    int state;            /* FC_UP / FC_DOWN */
    uint8_t repeat;       /* REPEAT for `wave` received, not yet forwarded */
    uint8_t dirty;        /* OR of the children's TD_MF_DIRTY */
    int children;         /* STOPs received in this wave */
    int64_t ss, sr;       /* sigma_s, sigma_r of the children's subtrees */
    int64_t prev_s, prev_r; /* root: totals of the previous wave */
    uint8_t has_prev;     /* root: a previous wave exists in this episode */
    uint8_t one_wave;     /* test-only variant: a single wave with S = R */
} fourcounter;

static void up(fourcounter *s, uint64_t wave)
{
    s->wave = wave;
    s->state = FC_UP;
    s->dirty = 0;
    s->children = 0;
    s->ss = s->sr = 0;
}

static int fc_init(td_ctx *c, void *st)
{
    (void)c;
    up(st, 1);
    return TD_OK;
}

static int fc_on_control(td_ctx *c, void *st, int src, const td_msg *m)
{
    fourcounter *s = st;
    if (m->type == FC_REPEAT) {
        if (src != c->tree.parent || s->state != FC_DOWN || s->repeat || m->seq <= s->wave)
            return td_fail(c, "fourcounter: repeat %llu from rank %d (parent %d, wave %llu, state %s)",
                           (unsigned long long)m->seq, src, c->tree.parent, (unsigned long long)s->wave,
                           s->state == FC_UP ? "up" : "down");
        up(s, m->seq);
        s->repeat = 1; /* forwarded to the children at the next on_passive */
        return TD_OK;
    }
    /* FC_STOP from a child: the parent cannot be DOWN before all its children */
    if (s->state != FC_UP || m->seq != s->wave || s->children >= c->tree.nchildren ||
        !td_child(c, src) || !td_count_ok(m->a) || !td_count_ok(m->b))
        return td_fail(c, "fourcounter: stop %llu from rank %d in wave %llu (state %s, %d of %d stops)",
                       (unsigned long long)m->seq, src, (unsigned long long)s->wave,
                       s->state == FC_UP ? "up" : "down", s->children, c->tree.nchildren);
    s->children++;
    s->ss += m->a;
    s->sr += m->b;
    s->dirty |= m->flags & TD_MF_DIRTY;
    return TD_OK;
}

static void send_repeat(td_ctx *c, fourcounter *s)
{
    for (int i = 0; i < c->tree.nchildren; i++) {
        td_msg m = {.type = FC_REPEAT, .seq = s->wave};
        td_send(c, c->tree.first_child + i, &m);
    }
    s->repeat = 0;
}

/* The root entered DOWN with the totals of wave `wave`. */
static void decide(td_ctx *c, fourcounter *s, int64_t ts, int64_t tr, int dirty)
{
    int done = ts == tr && (s->one_wave || (s->has_prev && s->prev_s == ts && s->prev_r == tr));
    s->prev_s = ts;
    s->prev_r = tr;
    s->has_prev = 1;
    if (done)
        td_quiescent(c, dirty); /* announce (new episode) or go dormant; a dormant root repeats when woken */
}

static void fc_on_passive(td_ctx *c, void *st)
{
    fourcounter *s = st;
    /* A root whose waves complete at once (no children: P = 1) runs two
     * waves here, enough for the double count, and leaves the next ones to
     * the next poll: counts that differ (a message to itself not received
     * yet) would otherwise loop here for ever (found by tests/fuzz). */
    for (int waves = 0; waves < 2; waves++) {
        if (c->tree.parent < 0 && s->state == FC_DOWN) {
            up(s, s->wave + 1); /* the root starts the next wave */
            s->repeat = 1;
        }
        if (s->repeat)
            send_repeat(c, s);
        if (s->state != FC_UP || s->children < c->tree.nchildren)
            return;
        int64_t ts = s->ss + (int64_t)c->sent, tr = s->sr + (int64_t)c->recvd;
        int dirty = s->dirty || c->dirty;
        s->state = FC_DOWN;
        c->stats.waves++;
        if (c->tree.parent >= 0) {
            td_msg m = {.type = FC_STOP, .seq = s->wave, .a = ts, .b = tr,
                        .flags = (uint8_t)(dirty ? TD_MF_DIRTY : 0)};
            td_send(c, c->tree.parent, &m);
            return;
        }
        uint32_t ep = c->episode;
        decide(c, s, ts, tr, dirty);
        if (c->episode != ep || c->dormant || c->error)
            return;
    }
}

static void fc_new_episode(td_ctx *c, void *st)
{
    fourcounter *s = st;
    (void)c;
    /* every rank is DOWN in the announced wave: the next wave starts UP
     * without a REPEAT, numbered alike everywhere */
    up(s, s->wave + 1);
    s->repeat = 0;
    s->has_prev = 0;
}

/* what this rank's part of the waves waits for (td_describe) */
static void fc_describe(const td_ctx *c, const void *st, char *buf, size_t len)
{
    const fourcounter *s = st;
    char ch[48];
    td_children_str(c, ch, sizeof ch);
    if (s->state == FC_UP)
        snprintf(buf, len, "fourcounter: wave %llu up, %d of %d STOPs in (%s), sent %lld received %lld below",
                 (unsigned long long)s->wave, s->children, c->tree.nchildren, ch, (long long)s->ss,
                 (long long)s->sr);
    else
        snprintf(buf, len, "fourcounter: wave %llu reported, waiting for the next REPEAT%s",
                 (unsigned long long)s->wave, s->repeat ? " (received, to be forwarded)" : "");
}

const td_algo td_algo_fourcounter = {
    .name = "fourcounter",
    .id = 3,
    .flags = TD_ALGO_FIXPOINT,
    .ntypes = FC_NTYPES,
    .type_names = fc_types,
    .pb_size = 0,
    .state_size = sizeof(fourcounter),
    .init = fc_init,
    .new_episode = fc_new_episode,
    .on_passive = fc_on_passive,
    .on_control = fc_on_control,
    .describe = fc_describe,
};

#ifdef TD_TEST_BROKEN
/* Deliberately broken for tests: one wave with sigma_s = sigma_r is taken as
 * termination, so an orphan message hides one in transit (§III-B). */
static int fc_one_wave_init(td_ctx *c, void *st)
{
    fourcounter *s = st;
    (void)c;
    up(s, 1);
    s->one_wave = 1;
    return TD_OK;
}
const td_algo td_algo_fourcounter_onewave = {
    .name = "fourcounter-onewave",
    .id = 3,
    .flags = TD_ALGO_BROKEN | TD_ALGO_FIXPOINT,
    .ntypes = FC_NTYPES,
    .type_names = fc_types,
    .pb_size = 0,
    .state_size = sizeof(fourcounter),
    .init = fc_one_wave_init,
    .new_episode = fc_new_episode,
    .on_passive = fc_on_passive,
    .on_control = fc_on_control,
    .describe = fc_describe,
};
#endif
