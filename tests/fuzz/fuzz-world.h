/*
 * fz_: the world the fuzzers drive the core with (issue 15). The fuzzer's
 * input is read as a program: its first bytes choose the algorithm, the
 * number of ranks and the configuration, every later byte group is one
 * event (deliver a control message, possibly mutated or forged, send or
 * receive a primary, poll, notify, ...). Messages the core sends wait in
 * a bounded queue (the oldest is dropped when it is full: the fuzzers look
 * for crashes and memory errors, not for liveness) and are delivered in
 * whatever order the input asks.
 *
 * What is checked beyond what the sanitizers see: every error the core
 * reports comes with a message (td_ctx.errmsg), td_describe's line is a
 * string, and a rank never learns an episode twice or out of order.
 */
#ifndef TESTS_FUZZ_WORLD_H
#define TESTS_FUZZ_WORLD_H

#include "td_algo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FZ_MAXP 9
#define FZ_MAXQ 128

typedef struct {
    const uint8_t *d;
    size_t n;
} fz_in;

static inline unsigned fz_u8(fz_in *in)
{
    if (!in->n)
        return 0;
    in->n--;
    return *in->d++;
}
static inline uint64_t fz_u64(fz_in *in, unsigned nbytes)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < nbytes; i++)
        v |= (uint64_t)fz_u8(in) << (8 * i);
    return v;
}

typedef struct {
    int src, dst;
    uint8_t w[TD_WIRE_SIZE];
} fz_ctl;
typedef struct {
    int src, dst;
    uint8_t pb[TD_PB_MAX];
} fz_prim;

typedef struct fz_world fz_world;
typedef struct {
    fz_world *w;
    int r;
} fz_id;

struct fz_world {
    int n;
    const td_algo *a;
    td_ctx c[FZ_MAXP];
    fz_id id[FZ_MAXP];
    int fin[FZ_MAXP]; /* td_finalize called: the program is gone, control messages still arrive */
    uint32_t announced[FZ_MAXP];
    fz_ctl q[FZ_MAXQ];
    size_t nq;
    fz_prim p[FZ_MAXQ];
    size_t np;
};

static void fz_bug(const char *what, const fz_world *w, int r)
{
    fprintf(stderr, "fuzz: %s (algo %s, %d ranks, rank %d: %s)\n", what, w->a->name, w->n, r, w->c[r].errmsg);
    abort();
}

static void fz_io_send(void *u, int dest, const uint8_t *wire)
{
    fz_id *id = u;
    fz_world *w = id->w;
    if (dest < 0 || dest >= w->n)
        fz_bug("control message to a rank outside the job", w, id->r);
    if (w->nq == FZ_MAXQ) { /* drop the oldest */
        memmove(w->q, w->q + 1, (FZ_MAXQ - 1) * sizeof *w->q);
        w->nq--;
    }
    fz_ctl *m = &w->q[w->nq++];
    m->src = id->r;
    m->dst = dest;
    memcpy(m->w, wire, TD_WIRE_SIZE);
}

static void fz_io_announce(void *u, uint32_t ep)
{
    fz_id *id = u;
    fz_world *w = id->w;
    if (ep != w->announced[id->r] + 1)
        fz_bug("episode learned out of order", w, id->r);
    w->announced[id->r] = ep;
}

/* the algorithm (any of td_algo_list, "none" included), 1..8 ranks and a
 * configuration, all from the input; 0 if the core refused it (fine) */
static int fz_init(fz_world *w, fz_in *in)
{
    const td_algo *const *list = td_algo_list();
    size_t nalgo = 0;
    while (list[nalgo])
        nalgo++;
    memset(w, 0, sizeof *w);
    w->a = list[fz_u8(in) % nalgo];
    w->n = 1 + (int)(fz_u8(in) % (FZ_MAXP - 1));
    unsigned opt = fz_u8(in);
    td_cfg cfg;
    td_cfg_default(&cfg, 0, w->n);
    cfg.tree_arity = 2 + (int)(opt & 3);
    cfg.gate_on_notify = (opt >> 2) & 1;
    cfg.confirm = (opt >> 3) & 1;
    cfg.xulau_topo = (int)((opt >> 4) & 3);
    if (opt & 0x40) { /* small credits: borrowing and flushing early */
        cfg.cda_init = 2 + (int64_t)fz_u8(in);
        cfg.cda_con = 1 + (int64_t)(fz_u8(in) & 15);
        cfg.cda_wcon = 1 + (int64_t)(fz_u8(in) & 15);
        cfg.cda_borrow = 1 + (int64_t)fz_u8(in);
    }
    for (int r = 0; r < w->n; r++) {
        w->id[r] = (fz_id){w, r};
        td_cfg rc = cfg;
        rc.rank = r;
        td_io io = {&w->id[r], fz_io_send, fz_io_announce};
        if (td_ctx_init(&w->c[r], w->a, &rc, &io) != TD_OK) {
            for (int k = 0; k <= r; k++)
                td_ctx_fini(&w->c[k]);
            return 0;
        }
    }
    return 1;
}

/* a world from the input's first bytes; NULL if the core refused it */
static fz_world *fz_new(fz_in *in)
{
    fz_world *w = calloc(1, sizeof *w);
    if (w && !fz_init(w, in)) {
        free(w);
        return NULL;
    }
    return w;
}

/* td_describe on every rank, then the ranks and the world freed */
static void fz_fini(fz_world *w)
{
    char line[512];
    for (int r = 0; r < w->n; r++) {
        td_describe(&w->c[r], line, sizeof line);
        if (!memchr(line, 0, sizeof line))
            fz_bug("td_describe: no terminating NUL", w, r);
        td_ctx_fini(&w->c[r]);
    }
    free(w);
}

/* a core call returned rc on rank r: an error must say why */
static void fz_check(fz_world *w, int r, int rc)
{
    if ((rc < 0 || w->c[r].error) && !w->c[r].errmsg[0])
        fz_bug("an error without a message", w, r);
}

static void fz_deliver_ctl(fz_world *w, size_t i, fz_in *in, int mutate)
{
    fz_ctl m = w->q[i];
    memmove(w->q + i, w->q + i + 1, (w->nq - i - 1) * sizeof *w->q);
    w->nq--;
    if (mutate) { /* overwrite 1..8 bytes of a genuine message */
        unsigned at = fz_u8(in) % TD_WIRE_SIZE, len = 1 + fz_u8(in) % 8;
        for (unsigned k = 0; k < len && at + k < TD_WIRE_SIZE; k++)
            m.w[at + k] = (uint8_t)fz_u8(in);
    }
    fz_check(w, m.dst, td_control(&w->c[m.dst], m.src, m.w, TD_WIRE_SIZE));
}

/* a well-formed message of this algorithm (or the engine) that no rank
 * sent: every type, any field values */
static void fz_forge(fz_world *w, fz_in *in)
{
    int dst = (int)(fz_u8(in) % (unsigned)w->n);
    int src = (int)(fz_u8(in) % (unsigned)(w->n + 2)) - 1; /* -1 and n: out of range */
    unsigned sel = fz_u8(in);
    td_msg m = {0};
    m.algo = (sel & 1) ? 0 : w->a->id;
    m.type = (uint8_t)((sel >> 1) % (m.algo ? (w->a->ntypes ? w->a->ntypes : 1) : TD_EM_NTYPES));
    m.flags = (uint8_t)(fz_u8(in) & TD_MF_ALL);
    m.episode = (sel & 0x80) ? (uint32_t)fz_u64(in, 4) : w->c[dst].episode + (fz_u8(in) % 3);
    m.seq = (sel & 0x40) ? fz_u64(in, 8) : fz_u64(in, 1);
    m.a = (int64_t)((sel & 0x20) ? fz_u64(in, 8) : fz_u64(in, 1));
    m.b = (int64_t)((sel & 0x20) ? fz_u64(in, 8) : fz_u64(in, 1));
    m.c = (int64_t)fz_u64(in, 1);
    uint8_t wire[TD_WIRE_SIZE];
    td_wire_encode(&m, wire);
    fz_check(w, dst, td_control(&w->c[dst], src, wire, TD_WIRE_SIZE));
}

static void fz_send(fz_world *w, int s, int d)
{
    uint8_t pb[TD_PB_MAX] = {0};
    if (w->fin[s])
        return;
    td_primary_send(&w->c[s], d, pb);
    fz_check(w, s, w->c[s].error);
    if (w->np < FZ_MAXQ) {
        fz_prim *p = &w->p[w->np++];
        p->src = s;
        p->dst = d;
        memcpy(p->pb, pb, sizeof pb);
    }
}

static void fz_recv(fz_world *w, size_t i)
{
    fz_prim p = w->p[i];
    memmove(w->p + i, w->p + i + 1, (w->np - i - 1) * sizeof *w->p);
    w->np--;
    if (w->fin[p.dst])
        return; /* never received: MPI_Finalize counts it unreceived */
    td_primary_recv(&w->c[p.dst], p.src, p.pb);
    fz_check(w, p.dst, 0);
}

/* the events both fuzzers share: primaries and the program's states */
static int fz_program_event(fz_world *w, unsigned op, fz_in *in)
{
    int r = (int)(fz_u8(in) % (unsigned)w->n);
    if (w->fin[r])
        return op <= 6;
    switch (op) {
    case 0:
        fz_send(w, r, (int)(fz_u8(in) % (unsigned)w->n));
        return 1;
    case 1:
        if (w->np)
            fz_recv(w, fz_u8(in) % w->np);
        return 1;
    case 2: td_passive(&w->c[r]); break;
    case 3: td_activity(&w->c[r]); break;
    case 4: td_notified(&w->c[r]); break;
    case 5: td_busy(&w->c[r]); break;
    case 6: td_finalize(&w->c[r]); w->fin[r] = 1; break;
    default: return 0;
    }
    fz_check(w, r, 0);
    return 1;
}

#endif
