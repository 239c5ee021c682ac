/*
 * tw_: the synchronous "world" the core unit tests drive the engine with.
 * N td_ctx ranks in one process; every message, control (queued by
 * td_io.send) or primary (queued by tw_send), waits in one queue until the
 * test delivers it, so a test picks the order: FIFO, one channel at a
 * time, primaries held in transit, or random (tw_random_step). The world
 * keeps the ground truth the algorithms must not contradict (which ranks
 * work, how many primaries are in transit) and checks every first
 * announcement of an episode against it.
 */
#ifndef TESTS_CORE_WORLD_H
#define TESTS_CORE_WORLD_H

#include "td_algo.h"

#include <stddef.h>
#include <stdint.h>

#define TW_MAXTASK 64 /* primaries a received task may still have to send */
#define TW_MAXEP 8    /* episodes whose announcing iteration is recorded */

typedef struct {
    int src, dst;
    int primary; /* 1: a primary (pb), 0: a control message (w) */
    int ttl;     /* primary: how many more generations its task spawns */
    uint8_t w[TD_WIRE_SIZE];
    uint8_t pb[TD_PB_MAX];
    uint8_t hdr; /* primary: the header byte the shim would send (td_ctx.hdr_out: the episode's stamp) */
} tw_pkt;

typedef struct tw_world tw_world;
typedef struct {
    tw_world *w;
    int r;
} tw_rank; /* td_io.user of rank r */

struct tw_world {
    int n;
    td_ctx *c;
    tw_rank *id;
    /* the driver's truth: the program works (a task, a collective) */
    uint8_t *active;
    uint32_t *announced;  /* last episode announced to each rank */
    int *nann;            /* announcements each rank received */
    uint8_t *notify_due;  /* learned an episode, program not yet notified */
    int *budget;          /* tw_random_step: primaries a rank may still send */
    int *nsend;           /* tw_task_run: primaries the running task still sends */
    int (*sdst)[TW_MAXTASK], (*sttl)[TW_MAXTASK];
    tw_pkt *q;            /* messages in transit, oldest first */
    size_t nq, capq;
    int inflight;         /* primaries in transit */
    /* the oracle */
    int unsafe;           /* first announcements of an episode made while work remained */
    uint32_t maxep;       /* greatest episode announced so far */
    uint64_t at_first;    /* algorithm messages sent when episode 1 was first announced */
    uint64_t iter_at[TW_MAXEP + 1]; /* stats.waves of the first rank announcing episode e */
    int asym;             /* announcements made at another iteration than the first */
    uint64_t evidence[TD_EV_N]; /* the ranks' own evidence of premature announcements (td_stats.unsafe_by), at tw_fini */
    unsigned long long rng;
    int trace;            /* print every event (replay of one random execution) */
    int fifo;             /* tw_random_step: control messages FIFO per (src, dst), as MPI gives */
    int misjudge;         /* tw_random_step: 1 in misjudge active steps, the core is told passive (0: never) */
    uint8_t *misjudged;   /* the core takes this working rank for passive (TDSHIM_IDLE=spin's error) */
    int barrier;          /* tw_random_step: the collective a notified rank starts its next phase with
                           * blocks (a program's MPI_Barrier, or the one before MPI_Finalize; td_blocking
                           * as the shim calls it) until every rank learned that episode, and the rank
                           * takes no message in it, control or primary (the shim's blocking
                           * collectives are the MPI library's own) */
    uint32_t *bar_ep;     /* the episode whose notification took the rank into its collective */
};

/* n ranks running algorithm a (aborts if NULL); base gives the
 * configuration (rank and size overwritten), NULL for td_cfg_default. Every
 * rank starts active; w->trace is kept. tw_fini frees the ranks and the queue and keeps the
 * counters (announcements, oracle) for the caller to read. */
void tw_init(tw_world *w, int n, const td_algo *a, const td_cfg *base);
void tw_fini(tw_world *w);
void tw_seed(tw_world *w, unsigned long long seed);
unsigned tw_rand(tw_world *w, unsigned n); /* uniform in 0..n-1 */
/* ranks with a (sticky) protocol error; the first one is a TAP diagnostic */
int tw_errors(tw_world *w);

/* Rank s sends a primary to d, kept in transit (it always leaves: no
 * algorithm holds a send back). ttl: see tw_task_run. */
void tw_send(tw_world *w, int s, int d, int ttl);
/* deliver the oldest primary in transit from s to d (aborts if none) */
void tw_recv(tw_world *w, int d, int s);
/* tw_send with ttl 0, delivered at once (the receiver becomes active) */
void tw_primary(tw_world *w, int s, int d);
/* deliver queue entry i; the others keep their order */
void tw_deliver(tw_world *w, size_t i);
/* deliver the oldest control message; 0 if none is queued */
int tw_step(tw_world *w);
/* deliver control messages oldest first until none is left, at most
 * 20000 (while a primary is in transit waves may go on for ever);
 * returns how many */
int tw_drain(tw_world *w);
/* deliver everything, primaries included, oldest first */
void tw_drain_all(tw_world *w);
/* deliver control messages until rank 0 learned episode ep */
void tw_until_announced(tw_world *w, uint32_t ep);

void tw_passive(tw_world *w, int r);  /* truth: idle; td_passive */
void tw_all_passive(tw_world *w);     /* ranks n-1 down to 0 */
void tw_activity(tw_world *w, int r); /* truth: busy; td_activity */
/* every rank learned episode ep, and each episode exactly once */
int tw_all_announced(const tw_world *w, uint32_t ep);
/* algorithm control messages of type t sent by all ranks */
uint64_t tw_sent(const tw_world *w, int t);
/* all control messages sent by all ranks, engine and algorithm */
uint64_t tw_ctl_total(const tw_world *w);
uint64_t tw_ctl_rank(const tw_world *w, int r); /* control messages rank r sent */

/* One random event of a program whose ranks work, send (within their
 * budget), go passive, poll, and handle notifications (a notified rank
 * starts the next phase with a collective; with w->barrier the collective
 * blocks it until every rank learned the episode); primaries are delivered
 * with long delays and control messages in any order (no FIFO). */
void tw_random_step(tw_world *w);
/* `phases` phases of tw_random_step with notification gating and a budget
 * of per_rank sends per phase; returns 1 if every rank learned every phase
 * without a protocol error, *unsafe = oracle rejections. Calls tw_fini. */
int tw_random_run(tw_world *w, const td_algo *a, const td_cfg *base, int n, int phases, int per_rank,
                  unsigned long long seed, int *unsafe);
/* `runs` tw_random_runs (seeds 1.., 2..9 ranks, 3 phases, 6 sends a rank
 * a phase, control messages FIFO) of algorithm a with w->barrier = mode (1);
 * spin: TDSHIM_CONFIRM on and 1 active step in 4 misjudged passive.
 * Returns how many never ended (the first two as TAP diagnostics);
 * *unsafe = those that announced while work remained. */
int tw_barrier_runs(tw_world *w, const td_algo *a, int runs, int mode, int spin, int *unsafe);
/* Rank 0 starts a task tree: a primary carrying ttl > 0 makes its receiver
 * send up to two more with ttl - 1. `phases` phases separated by a
 * collective on every rank once all learned the last announcement; control
 * messages FIFO per channel, primaries in any order. Returns the episode
 * rank 0 learned, or -1 on a protocol error. The caller calls tw_fini. */
int tw_task_run(tw_world *w, const td_algo *a, const td_cfg *base, int n, int phases, int ttl,
                unsigned long long seed, int gate);

#endif
