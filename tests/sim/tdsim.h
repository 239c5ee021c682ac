/*
 * tdsim: a deterministic discrete-event simulator that drives the sans-I/O
 * core exactly like the MPI shim does (DESIGN.md §2): one td_ctx per
 * simulated rank, control messages travel as wire bytes through td_io.send
 * and come back through td_control. An oracle that sees the true global
 * state checks every announcement (safety) and its latency (liveness).
 *
 * Everything is deterministic from the schedule seed: one PRNG (xoshiro256**
 * seeded by splitmix64), no rand(), no clocks, no iteration over pointers.
 */
#ifndef TDSIM_H
#define TDSIM_H

#include "td_algo.h"

#include <stdint.h>
#include <stdio.h>

/* ---------------------------------------------------------------- PRNG */

typedef struct sim_rng { uint64_t s[4]; } sim_rng;

static inline uint64_t sim_splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static inline void sim_rng_seed(sim_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = sim_splitmix(&seed);
}
static inline uint64_t sim_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
static inline uint64_t sim_next(sim_rng *r)
{
    uint64_t *s = r->s, res = sim_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t; s[3] = sim_rotl(s[3], 45);
    return res;
}
/* uniform in [0,1) with 53 bits */
static inline double sim_unif(sim_rng *r) { return (double)(sim_next(r) >> 11) * 0x1.0p-53; }
/* uniform integer in [0,n) (n > 0); Lemire's multiply, bias < 2^-32 for small n */
static inline uint64_t sim_below(sim_rng *r, uint64_t n) { return (uint64_t)(((unsigned __int128)sim_next(r) * n) >> 64); }
/* stateless hash used by workloads whose shape must be countable up front */
static inline uint64_t sim_hash(uint64_t a, uint64_t b)
{
    uint64_t x = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull);
    return sim_splitmix(&x);
}

/* ---------------------------------------------------------------- distributions */

enum { DIST_CONST, DIST_UNIFORM, DIST_EXP, DIST_PARETO };
typedef struct sim_dist { int kind; double a, b; } sim_dist;
int sim_dist_parse(const char *s, sim_dist *d);
double sim_dist_draw(const sim_dist *d, sim_rng *r);
void sim_dist_format(const sim_dist *d, char *buf, size_t len);

/* ---------------------------------------------------------------- options */

enum { MODEL_DES, MODEL_INSTANT, MODEL_LOCAL, MODEL_LOAD };
enum { WL_RING, WL_TREE, WL_SKRA, WL_SKRB, WL_SKRC, WL_SKRD, WL_BCJ5, WL_SPAWN, WL_N };
extern const char *const sim_workload_names[WL_N];

typedef struct sim_opts {
    const struct td_algo *algo;
    int workload;
    int pmin, pmax;             /* ranks: fixed, or drawn per schedule from [pmin,pmax] */
    uint64_t seed, schedules;
    int adversarial, nonfifo, send_at_start, model;
    int exit_on_notify;         /* single phase: the program stops at the notification */
    int barrier_passive;        /* a rank blocked in the phase barrier is passive for the core */
    int leave_activity;         /* leaving the phase barrier is td_activity (default td_collective) */
    int sendwait;               /* 0 off; 1 exact, 2 received: a task that sent waits for its own sends */
    int busy_again;             /* times per rank an idle rank sees long gaps (td_unsure, td_busy) and stops polling for a while */
    int misjudge;               /* 1 in misjudge working steps, the core is told passive while the rank works (0: never) */
    int finalized;              /* the last `finalized` ranks are in MPI_Finalize from the start (td_finalize) */
    sim_dist pdelay, cdelay, service;
    td_cfg cfg;                 /* algorithm parameters (rank/size filled per rank) */
    /* workload parameters */
    double p, lambda;
    int lmin, lmax, mapping_random;
    uint64_t tree_seed;         /* 0: drawn from the schedule seed */
    int depth, phases, local_tasks, length, iters, gens;
    uint64_t max_events;
    int per_run, json, verbose, time_it;
} sim_opts;

/* ---------------------------------------------------------------- tasks, workloads */

typedef struct sim_task { int32_t kind, a; int64_t b; } sim_task;

struct sim;
typedef struct sim_workload {
    int nphases;
    uint64_t expected;   /* tasks the workload will execute, computed independently */
    int depth_hint;      /* longest chain of tasks, for diagnostics */
    /* private state */
    sim_rng rng;
    int64_t n;           /* tree: nodes */
    int32_t *owner;      /* tree/D&C: rank of each node */
    uint8_t *cnt;        /* D&C: results received per node */
    int32_t *child;      /* tree: first child (BFS label) or -1 */
    int32_t *level;
    int64_t cap;
    int pdepth[16];      /* skrB: D&C depth per phase, 0 = the local phase */
    uint64_t hseed;      /* spawn: hash seed of the task shapes */
} sim_workload;

int wl_init(struct sim *s);
void wl_phase(struct sim *s, int phase);               /* seed the phase's tasks */
void wl_exec(struct sim *s, int rank, const sim_task *t); /* run one task: spawn/send */
void wl_free(sim_workload *w);
/* tree generator of papers/cda-credit-hpc.txt §V-B, exported for --tree-info */
int64_t wl_tree_generate(sim_workload *w, double lambda, int lmin, int lmax, uint64_t seed);

/* Workloads call these while a task runs. */
void sim_send(struct sim *s, int src, int dst, sim_task t);  /* primary message */
void sim_spawn(struct sim *s, int rank, sim_task t);         /* local task, no message */

/* ---------------------------------------------------------------- results */

typedef struct sim_result {
    int P;
    uint64_t tasks, primaries, events, episodes, waves;
    double end_time;
    double delay_max, delay_sum; /* detection delay (simulated time) over episodes */
    uint64_t hops_max, hops_sum;
    uint64_t ctl[2][TD_MAX_TYPES];
    uint64_t ctl_total;
    uint64_t misjudged, false_ann; /* --misjudge: working steps told passive, announcements not at a quiescent point */
    uint64_t evidence;           /* the ranks' late-primary, send-after and send-before evidence (td_engine.c): none unless --misjudge */
    int violation;               /* 0 ok, else see sim.c */
    char why[320];
} sim_result;

/* ---------------------------------------------------------------- the simulator */

typedef struct sim_msg {
    int32_t src, dst, next; /* next: inbox / held list / free list */
    uint8_t ctl;            /* control (wire bytes) or primary (task + piggyback) */
    uint32_t hops;          /* control: chain length since true quiescence */
    double sent;
    union {
        uint8_t wire[TD_WIRE_SIZE];
        struct { sim_task task; uint8_t pb[TD_PB_MAX]; uint8_t hdr; } p; /* hdr: the shim's header byte (episode stamp) */
    } u;
} sim_msg;

typedef struct sim_tnode { sim_task t; int32_t dst, next; } sim_tnode;
typedef struct sim_ev { double t; uint64_t key; int32_t kind, arg; } sim_ev;

typedef struct sim_rank {
    int32_t qhead, qtail; /* tasks ready to run (sim_tnode list) */
    int32_t ihead, itail; /* arrived, not yet handled (sim_msg list) */
    int32_t ohead, otail; /* primaries the running task still has to send */
    uint8_t state, pending_notify, after_flush;
    uint8_t flick;        /* --busy-again: idle, but seen with long gaps (td_unsure, td_busy) and not polling */
    uint8_t misj;         /* --misjudge: working, but the core was told passive (td_passive) */
    int32_t flicks;       /* --busy-again episodes left */
    uint32_t sent_task;   /* primaries the running task sent (--sendwait) */
    uint32_t learned;     /* episodes this rank learned of */
    uint32_t hops;        /* longest control chain received since quiescence */
} sim_rank;

typedef struct sim {
    const sim_opts *o;
    sim_result *res;
    FILE *trace;
    int P, gate, detects, nphases, rand_tie, depth_bound, barrier_passive, leave_activity, sendwait;
    int Pw;                 /* ranks 0..Pw-1 run the program; the others are in MPI_Finalize (--finalized) */
    sim_dist pdelay, cdelay, service;
    double now;
    sim_rng rng;            /* the schedule: delays, ties, adversary */
    td_ctx *ctx;
    sim_rank *rk;
    void *refs;             /* td_io.user of each rank: (sim, rank) */
    sim_ev *heap;
    size_t nheap, capheap;
    sim_msg *msg;
    int32_t mfree, nmsg, capmsg;
    sim_tnode *tn;
    int32_t tfree, ntn, captn;
    uint64_t *chkey;        /* FIFO control channels: (src,dst) -> last arrival */
    double *chlast;
    size_t chcap, chn;
    uint64_t seq, events, post_final, ctl_sends, window_events;
    /* oracle */
    int64_t nbusy, transit;
    int phases_started, qpoints, learned_final, barrier_n;
    uint32_t announced;
    double tq, dmax_ctl;
    double flick_end;       /* --busy-again: the last one ended (or ends) here */
    uint32_t covered;       /* --misjudge: quiescent points a true announcement followed */
    uint32_t final_ep;      /* --misjudge: the true announcement after every phase started (0: none yet) */
    int final_learned;      /* --misjudge: ranks that learned final_ep */
    uint64_t created, executed;
    /* adversary */
    int hold_mode, victim;
    int64_t hold_index;     /* which primary send (0-based) to hold back */
    int32_t held, victim_held; /* held message / list of held messages to the victim */
    uint64_t hold_waves, psends;
    int failed;
    uint8_t *snap;          /* algorithm state before a poll (fixpoint test) */
    sim_workload wl;
} sim;

/* Returns 0 (res->violation tells the outcome) or -1 if the run could not be
 * set up (bad workload parameters, out of memory: a message is printed). */
int sim_run(const sim_opts *o, uint64_t seed, sim_result *res, FILE *trace);
enum { V_OK, V_SAFETY, V_LIVENESS, V_PROTOCOL, V_GROUNDTRUTH, V_RESOURCE };
const char *sim_violation_name(int v);
int sim_detects(const struct td_algo *a);

#endif
