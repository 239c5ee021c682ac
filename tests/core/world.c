/*
 * The synchronous test world of world.h: one queue for every message in
 * transit, the ground truth, and the oracle every announcement is checked
 * against.
 */
#include "world.h"

#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tw_seed(tw_world *w, unsigned long long seed) { w->rng = seed * 2654435761ULL + 1; }

unsigned tw_rand(tw_world *w, unsigned n)
{
    /* Knuth's MMIX LCG: the same sequences as the drivers this replaces,
     * so a seed named in bench/RESULTS.md or a diagnostic still replays */
    w->rng = w->rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)((w->rng >> 33) % n);
}

static tw_pkt *push(tw_world *w, int src, int dst, int primary)
{
    if (w->nq == w->capq) {
        w->capq = w->capq ? 2 * w->capq : 256;
        w->q = realloc(w->q, w->capq * sizeof *w->q);
        if (!w->q)
            abort();
    }
    tw_pkt *p = &w->q[w->nq++];
    memset(p, 0, sizeof *p);
    p->src = src;
    p->dst = dst;
    p->primary = primary;
    return p;
}

static void io_send(void *u, int dest, const uint8_t *wire)
{
    tw_rank *id = u;
    memcpy(push(id->w, id->r, dest, 0)->w, wire, TD_WIRE_SIZE);
}

static int quiet(const tw_world *w)
{
    if (w->inflight)
        return 0;
    for (int i = 0; i < w->n; i++)
        if (w->active[i] || w->nsend[i])
            return 0;
    return 1;
}

static void io_announce(void *u, uint32_t ep)
{
    tw_rank *id = u;
    tw_world *w = id->w;
    int r = id->r;
    if (w->trace)
        printf("  ANNOUNCE %u at %d\n", ep, r);
    /* the first rank to learn episode ep must see the ground truth
     * quiescent; later ranks learn it while others already work on */
    if (ep > w->maxep) {
        w->unsafe += !quiet(w);
        w->maxep = ep;
        if (ep == 1)
            for (int t = 0; t < TD_MAX_TYPES; t++)
                w->at_first += tw_sent(w, t);
    }
    w->announced[r] = ep;
    w->nann[r]++;
    w->notify_due[r] = 1;
    /* symmetric algorithms announce in the same iteration everywhere */
    if (ep <= TW_MAXEP) {
        if (!w->iter_at[ep])
            w->iter_at[ep] = w->c[r].stats.waves;
        else if (w->iter_at[ep] != w->c[r].stats.waves)
            w->asym++;
    }
}

void tw_init(tw_world *w, int n, const td_algo *a, const td_cfg *base)
{
    if (!a || n < 1)
        abort();
    int trace = w->trace, misjudge = w->misjudge, fifo = w->fifo, barrier = w->barrier; /* the caller's, for a run */
    memset(w, 0, sizeof *w);
    w->trace = trace;
    w->barrier = barrier;
    w->misjudge = misjudge;
    w->fifo = fifo;
    w->n = n;
    tw_seed(w, 0);
    size_t un = (size_t)n;
    w->c = calloc(un, sizeof *w->c);
    w->id = calloc(un, sizeof *w->id);
    w->active = calloc(un, 1);
    w->announced = calloc(un, sizeof *w->announced);
    w->nann = calloc(un, sizeof *w->nann);
    w->notify_due = calloc(un, 1);
    w->budget = calloc(un, sizeof *w->budget);
    w->nsend = calloc(un, sizeof *w->nsend);
    w->sdst = calloc(un, sizeof *w->sdst);
    w->sttl = calloc(un, sizeof *w->sttl);
    w->misjudged = calloc(un, 1);
    w->bar_ep = calloc(un, sizeof *w->bar_ep);
    if (!w->c || !w->id || !w->active || !w->announced || !w->nann || !w->notify_due || !w->budget || !w->nsend ||
        !w->sdst || !w->sttl || !w->misjudged || !w->bar_ep)
        abort();
    for (int r = 0; r < n; r++) {
        td_cfg cfg;
        if (base)
            cfg = *base;
        else
            td_cfg_default(&cfg, r, n);
        cfg.rank = r;
        cfg.size = n;
        cfg.quiet_check = 1; /* every turn td_passive would skip is run and must change nothing */
        w->id[r] = (tw_rank){.w = w, .r = r};
        w->active[r] = 1;
        td_io io = {.user = &w->id[r], .send = io_send, .announce = io_announce};
        if (td_ctx_init(&w->c[r], a, &cfg, &io) != TD_OK)
            abort();
    }
}

void tw_fini(tw_world *w)
{
    for (int r = 0; r < w->n; r++)
        for (int k = 0; k < TD_EV_N; k++)
            w->evidence[k] += w->c[r].stats.unsafe_by[k];
    for (int r = 0; r < w->n; r++)
        td_ctx_fini(&w->c[r]);
    free(w->c);
    free(w->id);
    free(w->active);
    free(w->announced);
    free(w->nann);
    free(w->notify_due);
    free(w->budget);
    free(w->nsend);
    free(w->sdst);
    free(w->sttl);
    free(w->misjudged);
    free(w->bar_ep);
    free(w->q);
    w->misjudged = NULL;
    w->bar_ep = NULL;
    w->c = NULL;
    w->id = NULL;
    w->active = w->notify_due = NULL;
    w->announced = NULL;
    w->nann = w->budget = w->nsend = NULL;
    w->sdst = w->sttl = NULL;
    w->q = NULL;
    w->nq = w->capq = 0;
    w->n = 0;
}

int tw_errors(tw_world *w)
{
    int e = 0;
    for (int r = 0; r < w->n; r++)
        if (w->c[r].error) {
            if (!e)
                tap_diag("rank %d: %s", r, w->c[r].errmsg);
            e++;
        }
    return e;
}

void tw_send(tw_world *w, int s, int d, int ttl)
{
    uint8_t pb[TD_PB_MAX] = {0};
    td_primary_send(&w->c[s], d, pb);
    tw_pkt *p = push(w, s, d, 1);
    p->ttl = ttl;
    p->hdr = w->c[s].hdr_out;
    memcpy(p->pb, pb, TD_PB_MAX);
    w->inflight++;
}

void tw_deliver(tw_world *w, size_t i)
{
    tw_pkt p = w->q[i];
    if (w->trace) {
        td_msg m;
        if (p.primary)
            printf("  deliver primary %d->%d\n", p.src, p.dst);
        else if (td_wire_decode(p.w, TD_WIRE_SIZE, &m, NULL, 0) == TD_OK)
            printf("  deliver %s %d->%d seq %llu a %lld b %lld fl %u ep %u\n",
                   td_type_name(&w->c[p.dst], m.algo == 0, m.type), p.src, p.dst, (unsigned long long)m.seq,
                   (long long)m.a, (long long)m.b, m.flags, m.episode);
    }
    memmove(&w->q[i], &w->q[i + 1], (w->nq - i - 1) * sizeof p);
    w->nq--;
    if (!p.primary) {
        td_control(&w->c[p.dst], p.src, p.w, TD_WIRE_SIZE);
        return;
    }
    w->inflight--;
    w->active[p.dst] = 1;
    if (p.hdr != w->c[p.dst].hdr_in) /* as the shim's receive does (tds_recv_finish) */
        td_stamp_seen(&w->c[p.dst], p.src, 0, p.hdr);
    td_primary_recv(&w->c[p.dst], p.src, p.pb);
    /* the task the message carries: up to two more messages while ttl lasts */
    int d = p.dst;
    if (p.ttl > 0)
        for (int k = (int)tw_rand(w, 3); k > 0 && w->nsend[d] < TW_MAXTASK; k--) {
            w->sdst[d][w->nsend[d]] = (int)tw_rand(w, (unsigned)w->n);
            w->sttl[d][w->nsend[d]++] = p.ttl - 1;
        }
}

void tw_recv(tw_world *w, int d, int s)
{
    for (size_t i = 0; i < w->nq; i++)
        if (w->q[i].primary && w->q[i].src == s && w->q[i].dst == d) {
            tw_deliver(w, i);
            return;
        }
    abort();
}

void tw_primary(tw_world *w, int s, int d)
{
    tw_send(w, s, d, 0);
    tw_deliver(w, w->nq - 1);
}

int tw_step(tw_world *w)
{
    for (size_t i = 0; i < w->nq; i++)
        if (!w->q[i].primary) {
            tw_deliver(w, i);
            return 1;
        }
    return 0;
}

int tw_drain(tw_world *w)
{
    int k = 0;
    while (k < 20000 && tw_step(w))
        k++;
    return k;
}

void tw_drain_all(tw_world *w)
{
    while (w->nq)
        tw_deliver(w, 0);
}

void tw_until_announced(tw_world *w, uint32_t ep)
{
    while (w->nann[0] < (int)ep && tw_step(w))
        ;
}

void tw_passive(tw_world *w, int r)
{
    w->active[r] = 0;
    if (w->trace)
        printf("  passive %d\n", r);
    td_passive(&w->c[r]);
}

void tw_all_passive(tw_world *w)
{
    for (int r = w->n - 1; r >= 0; r--)
        tw_passive(w, r);
}

void tw_activity(tw_world *w, int r)
{
    w->active[r] = 1;
    td_activity(&w->c[r]);
}

int tw_all_announced(const tw_world *w, uint32_t ep)
{
    for (int r = 0; r < w->n; r++)
        if (w->announced[r] != ep || w->nann[r] != (int)ep)
            return 0;
    return 1;
}

uint64_t tw_sent(const tw_world *w, int t)
{
    uint64_t k = 0;
    for (int r = 0; r < w->n; r++)
        k += w->c[r].stats.ctl_sent[1][t];
    return k;
}

uint64_t tw_ctl_total(const tw_world *w)
{
    uint64_t k = 0;
    for (int r = 0; r < w->n; r++)
        k += tw_ctl_rank(w, r);
    return k;
}

uint64_t tw_ctl_rank(const tw_world *w, int r)
{
    uint64_t k = 0;
    for (int e = 0; e < 2; e++)
        for (int t = 0; t < TD_MAX_TYPES; t++)
            k += w->c[r].stats.ctl_sent[e][t];
    return k;
}

/* w->barrier: rank r is inside the blocking collective it entered when
 * notified of episode bar_ep[r], which returns once every rank learned it */
static int in_barrier(const tw_world *w, int r)
{
    if (!w->barrier || !w->bar_ep[r])
        return 0;
    for (int t = 0; t < w->n; t++)
        if (w->announced[t] < w->bar_ep[r])
            return 1;
    return 0;
}

void tw_random_step(tw_world *w)
{
    int r = (int)tw_rand(w, (unsigned)w->n);
    if (in_barrier(w, r))
        return; /* blocked in its collective: it neither works nor polls */
    if (w->notify_due[r] && tw_rand(w, 2)) {
        /* the program handles "done": next phase starts here */
        w->notify_due[r] = 0;
        w->active[r] = 1;
        w->bar_ep[r] = w->announced[r];
        td_notified(&w->c[r]);
        td_activity(&w->c[r]); /* the next phase starts with a collective */
        if (w->barrier)
            td_blocking(&w->c[r]); /* a blocking one (tds_blocking) */
        return;
    }
    if (w->active[r] && tw_rand(w, 3)) {
        if (w->misjudge && !w->misjudged[r] && w->c[r].active && tw_rand(w, (unsigned)w->misjudge) == 0) {
            /* TDSHIM_IDLE=spin takes the working rank for passive (its
             * work between polls is shorter than the gap): its sends are
             * contract violations until a long gap shows it busy again */
            if (w->trace)
                printf("  misjudged %d: passive for the core while it works\n", r);
            w->misjudged[r] = 1;
            td_passive(&w->c[r]);
            return;
        }
        if (w->budget[r] > 0 && tw_rand(w, 2)) {
            w->budget[r]--;
            int d = (int)tw_rand(w, (unsigned)w->n);
            if (w->trace)
                printf("  send primary %d->%d\n", r, d);
            tw_send(w, r, d, 0);
        } else {
            if (w->misjudged[r]) {
                w->misjudged[r] = 0;
                td_busy(&w->c[r]); /* the gap before this poll was long */
            }
            tw_passive(w, r);
        }
        return;
    }
    if (!w->active[r] && tw_rand(w, 4) == 0) {
        td_passive(&w->c[r]); /* polls again */
        return;
    }
    if (w->nq) {
        size_t i = tw_rand(w, (unsigned)w->nq);
        if (w->q[i].primary && tw_rand(w, 8))
            return; /* long delays for primaries */
        if (w->fifo && !w->q[i].primary)
            for (size_t j = 0; j < i; j++)
                if (!w->q[j].primary && w->q[j].src == w->q[i].src && w->q[j].dst == w->q[i].dst) {
                    i = j; /* the oldest of its channel */
                    break;
                }
        if (in_barrier(w, w->q[i].dst))
            return; /* its receiver takes nothing until its collective returns */
        tw_deliver(w, i); /* control messages in any order unless w->fifo */
    }
}

int tw_random_run(tw_world *w, const td_algo *a, const td_cfg *base, int n, int phases, int per_rank,
                  unsigned long long seed, int *unsafe)
{
    td_cfg cfg;
    if (base)
        cfg = *base;
    else
        td_cfg_default(&cfg, 0, n);
    cfg.gate_on_notify = 1;
    tw_init(w, n, a, &cfg);
    tw_seed(w, seed);
    for (int r = 0; r < n; r++)
        w->budget[r] = per_rank;
    int ok = 1;
    for (long it = 0; it < 2000000; it++) {
        int done = 1;
        for (int r = 0; r < n; r++)
            done &= w->announced[r] >= (uint32_t)phases;
        if (done || tw_errors(w))
            break;
        /* a new phase starts when a rank is notified: refill its budget */
        for (int r = 0; r < n; r++)
            if (w->notify_due[r] && w->announced[r] < (uint32_t)phases)
                w->budget[r] = per_rank;
        tw_random_step(w);
    }
    for (int r = 0; r < n; r++)
        ok &= w->announced[r] >= (uint32_t)phases;
    ok &= !tw_errors(w);
    if (!ok)
        for (int r = 0; r < n; r++)
            tap_diag("rank %d learned %u active %d/%d ready %d dormant %d budget %d notify %d nq %zu inflight %d", r,
                     w->announced[r], w->active[r], w->c[r].active, w->c[r].ready, w->c[r].dormant, w->budget[r],
                     w->notify_due[r], w->nq, w->inflight);
    *unsafe = w->unsafe;
    tw_fini(w);
    return ok;
}

int tw_barrier_runs(tw_world *w, const td_algo *a, int runs, int mode, int spin, int *unsafe)
{
    int bad = 0;
    *unsafe = 0;
    for (int s = 1; s <= runs; s++) {
        int u = 0, n = 2 + s % 8;
        td_cfg cfg;
        td_cfg_default(&cfg, 0, n);
        cfg.confirm = spin;
        w->fifo = 1;
        w->barrier = mode;
        w->misjudge = spin ? 4 : 0;
        int ok = tw_random_run(w, a, &cfg, n, 3, 6, (unsigned long long)s, &u);
        if (!ok && bad < 2)
            tap_diag("%s: seed %d, %d ranks: a rank never learned an announcement", a->name, s, n);
        bad += !ok;
        *unsafe += u;
    }
    w->fifo = w->barrier = w->misjudge = 0;
    return bad;
}

int tw_task_run(tw_world *w, const td_algo *a, const td_cfg *base, int n, int phases, int ttl,
                unsigned long long seed, int gate)
{
    td_cfg cfg;
    if (base)
        cfg = *base;
    else
        td_cfg_default(&cfg, 0, n);
    cfg.gate_on_notify = gate;
    tw_init(w, n, a, &cfg);
    tw_seed(w, seed);
    int phase = 0;
    for (int r = 1; r < n; r++)
        w->active[r] = (uint8_t)tw_rand(w, 2); /* some ranks start busy without work */
    w->nsend[0] = 1;
    w->sdst[0][0] = (int)tw_rand(w, (unsigned)n);
    w->sttl[0][0] = ttl;
    for (long step = 0; step < 2000000; step++) {
        if (tw_errors(w))
            return -1;
        int busy = 0;
        for (int r = 0; r < n; r++)
            busy |= w->active[r] || w->nsend[r];
        int done = 1;
        for (int r = 0; r < n; r++)
            done &= w->announced[r] == (uint32_t)(phase + 1);
        if (done && !busy && !w->nq) {
            if (++phase == phases)
                break;
            for (int r = 0; r < n; r++) {
                if (gate)
                    td_notified(&w->c[r]);
                tw_activity(w, r); /* the collective between phases */
            }
            int s = (int)tw_rand(w, (unsigned)n);
            w->nsend[s] = 1;
            w->sdst[s][0] = (int)tw_rand(w, (unsigned)n);
            w->sttl[s][0] = ttl;
            continue;
        }
        unsigned pick = tw_rand(w, 4);
        if (pick < 2 && w->nq) {
            size_t i = tw_rand(w, (unsigned)w->nq);
            /* FIFO per control channel: deliver the oldest of i's channel */
            if (!w->q[i].primary)
                for (size_t j = 0; j < i; j++)
                    if (!w->q[j].primary && w->q[j].src == w->q[i].src && w->q[j].dst == w->q[i].dst) {
                        i = j;
                        break;
                    }
            tw_deliver(w, i);
            continue;
        }
        int r = (int)tw_rand(w, (unsigned)n);
        if (w->nsend[r]) {
            int k = w->nsend[r] - 1;
            tw_send(w, r, w->sdst[r][k], w->sttl[r][k]);
            w->nsend[r]--;
        } else if (w->active[r] || pick == 3) {
            tw_passive(w, r);
        }
    }
    return tw_errors(w) ? -1 : (int)w->announced[0];
}
