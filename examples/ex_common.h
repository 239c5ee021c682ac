/*
 * Shared plumbing of the example programs: option parsing, a counter-based
 * random generator (so every rank can recompute the whole workload from the
 * seed), the polling loop, sends, and the final RESULT line.
 *
 * Every example is an ordinary asynchronous MPI program with no termination
 * detection of its own (DESIGN.md §1): it polls with
 * MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD), executes each
 * work message completely before polling again (so it never sends while
 * "passive" in tdshim's sense), and ends a phase when a message with its
 * done tag arrives. With --native-stop it instead computes from the seed how
 * many messages it will receive and stops after the last one, which is the
 * "static" program of BCJ §6 used as the native baseline.
 */
#ifndef EX_COMMON_H
#define EX_COMMON_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#define EX_DEFAULT_DONE_TAG 999
#define EX_MAX_WORK_TAG 99 /* work tags are 1..EX_MAX_WORK_TAG */
#define EX_MSG_WORDS 6     /* int64 words in the largest work message */

/* ---- options ---------------------------------------------------------- */

enum ex_opt_type { EX_INT, EX_U64, EX_DOUBLE, EX_FLAG, EX_STR };

typedef struct ex_opt {
    const char *name; /* without the leading "--" */
    enum ex_opt_type type;
    void *ptr;        /* int*, uint64_t*, double*, int* (flag), const char ** (a word) */
    double min, max;  /* accepted range (not for EX_FLAG / EX_U64 / EX_STR) */
    const char *help;
} ex_opt;

/* Options every example accepts. */
typedef struct ex_common_opts {
    int done_tag;
    uint64_t seed;
    int native_stop;
    int nonblocking;   /* Isend + Irecv/Test instead of Send/Recv */
    double work_us;    /* busy time per task */
    int linger_ms;     /* keep polling this long after each phase ends */
    int expect_notify; /* -2: default (phases, or 0 with --native-stop); -1: don't check */
    int verbose;       /* each rank reports its phase ends on stderr */
    int coll_reps;     /* time this many MPI_Allreduce and MPI_Ibarrier at the end (bench/run) */
} ex_common_opts;

/* ---- run-time state --------------------------------------------------- */

typedef struct ex_out {
    int64_t *buf; /* EX_MSG_WORDS words, owned by MPI until the send completes */
} ex_out;

typedef struct ex_ctx {
    const char *name;
    int rank, size;
    ex_common_opts o;
    /* per phase */
    uint64_t expect_recv; /* --native-stop: work messages this rank will receive */
    uint64_t phase_recv;
    uint64_t tasks0, recvd0; /* tasks and recvd when the phase began */
    /* whole run */
    uint64_t recvd, sent, tasks;
    int notifications;     /* done messages received */
    int stray;             /* messages found while lingering after a phase */
    int phases;
    double t0;             /* after the start barrier: RESULT's time= */
    double clock_off, clock_err; /* ex_clock_sync */
    int early;             /* phases in which some rank was notified early */
    double lat_max;        /* largest last-idle -> first-notification gap (s) */
    double lat_all_max;    /* largest last-idle -> last-notification gap (s): every rank told */
    double lat_all_sum;    /* the same gaps summed over the phases (s): what stopping cost the run */
    /* outstanding nonblocking sends (buffers must outlive MPI_Isend) */
    ex_out *out;
    MPI_Request *reqs;
    size_t nout, capout;
} ex_ctx;

enum { EX_WORK = 1, EX_DONE = 2, EX_STOP = 3 };

/* Parses argv (same on every rank). Returns 0 to run, 1 if --help was
 * printed, -1 on a bad option (rank 0 printed why). */
int ex_init(ex_ctx *x, const char *name, const char *what, int argc, char **argv,
            const ex_opt *extra, size_t nextra, int default_nb, double default_work_us);
void ex_fini(ex_ctx *x);

/* ---- deterministic randomness (splitmix64 over a counter) ------------- */
uint64_t ex_hash(uint64_t seed, uint64_t a, uint64_t b);
double ex_unif(uint64_t seed, uint64_t a, uint64_t b); /* [0,1) */

/* ---- phases and messages ---------------------------------------------- */

/* Starts a phase; with --native-stop, expect_recv work messages end it. */
void ex_phase_begin(ex_ctx *x, uint64_t expect_recv);
/* Polls until a work message (EX_WORK, *st describes it), the done
 * notification (EX_DONE, consumed) or, with --native-stop, the last
 * expected message was handled (EX_STOP). */
int ex_next(ex_ctx *x, MPI_Status *st);
/* Receives the work message *st describes into buf (EX_MSG_WORDS int64). */
int ex_recv(ex_ctx *x, const MPI_Status *st, int64_t *buf, int *nwords);
int ex_send(ex_ctx *x, const int64_t *buf, int nwords, int dest, int tag);
/* Ends a phase: completes the sends, lingers (counting strays). Every rank
 * must call it; it does not synchronize. */
int ex_phase_end(ex_ctx *x);
/* ex_phase_end, then checks this phase's own counts against the ground
 * truth (tasks executed, work messages received since ex_phase_begin);
 * prints what differs. Returns 1 if all is well, 0 otherwise. */
int ex_phase_check(ex_ctx *x, uint64_t my_tasks, uint64_t my_recv);
void ex_work(const ex_ctx *x); /* ex_spin_us(--work-us) */
/* Busy-waits `us` microseconds of this thread's CPU time (one task). */
void ex_spin_us(double us);

/* A common clock for the "never notified early" check: MPI_Wtime minus
 * this rank's offset from rank 0's clock (0 when MPI_WTIME_IS_GLOBAL;
 * otherwise measured by ping-pong with rank 0, best of 5 round trips).
 * Collective; call once after ex_init. Sets x->clock_off, x->clock_err. */
void ex_clock_sync(ex_ctx *x);
static inline double ex_now(const ex_ctx *x) { return MPI_Wtime() - x->clock_off; }
/* Collective, once per phase: t_idle is when this rank last ran out of
 * work, t_notify when it saw the phase's notification (< 0: none). Fails
 * (rank 0 says so) if some rank was notified before the last rank ran out
 * of work, beyond the clock error. Returns 1 if all is well. */
int ex_timeline_check(ex_ctx *x, double t_idle, double t_notify);

/* Collective, once per phase of a program whose ranks share one workload
 * (work_steal, work_queue): the ranks' `mine` (tasks of this phase) add up
 * to `expect` (rank 0 says otherwise, calling the tasks `what`), and, unless
 * --native-stop or --expect-notify, every rank has seen one done message
 * per phase so far. Returns 1 if all is well. */
int ex_phase_total(ex_ctx *x, uint64_t mine, uint64_t expect, const char *what);

/* ---- a random tree, a pure function of its seed (work_steal, work_queue) */
typedef struct ex_node {
    uint64_t id;
    int64_t depth;
} ex_node;
typedef struct ex_tree {
    uint64_t seed;
    int root_children, max_depth, branch;
    double q; /* probability that a non-root node above max_depth has `branch` children */
} ex_tree;
/* A growable stack of nodes (a rank's local work). */
typedef struct ex_stack {
    ex_node *v;
    size_t n, cap;
} ex_stack;
int ex_stack_push(ex_stack *s, ex_node v); /* -1: out of memory */
/* Sends the `give` nodes at the bottom of s (the oldest: the biggest
 * subtrees) to dest on tag as 2 int64 each (MPI_Send) and removes them. */
int ex_stack_give(ex_stack *s, size_t give, int dest, int tag);
/* Pushes the nodes of such a message (`words` int64). */
int ex_stack_take(ex_stack *s, const int64_t *buf, int words);
ex_node ex_tree_root(const ex_tree *t);
int ex_tree_nchildren(const ex_tree *t, const ex_node *v);
ex_node ex_tree_child(const ex_tree *t, const ex_node *v, int i);
/* Pops the top node of s into *v and pushes its children (-1: out of memory). */
int ex_tree_expand(const ex_tree *t, ex_stack *s, ex_node *v);
/* The ground truth: the whole tree, counted alone (0: out of memory). */
uint64_t ex_tree_size(const ex_tree *t);
/* Begins phase p of a tree search (ex_phase_begin): tree p has seed
 * hash(--seed, p, salt) and its size in *expect; the stack is emptied and
 * holds the root on rank p % size. -1: out of memory. */
int ex_tree_phase(ex_ctx *x, ex_tree *t, ex_stack *s, int p, uint64_t salt, uint64_t *expect);
/* Sends the int `value` on `tag` to every other rank (MPI_Send; -1 on error):
 * work_steal's and work_queue's "finished" (-1 on the request tag). */
int ex_tell_others(const ex_ctx *x, int value, int tag);
/* The k-th random choice of a steal victim: any rank but this one (size > 1). */
int ex_victim(const ex_ctx *x, uint64_t k);

/* ---- Safra's termination detection (Dijkstra, EWD 998), for --native-stop */
typedef struct ex_safra {
    int64_t count; /* work messages sent - received by this rank */
    int black;     /* received work since it last passed the token */
    int have_token, token_out;
    int64_t token[2]; /* {count, black}; the caller receives it and sets have_token */
} ex_safra;
/* Called by an idle rank: passes the token on the ring (tag_token) with
 * this rank's count added, blackened if the rank received work since it
 * last passed it; rank 0 declares termination when a white token returns
 * with a zero total to a white rank 0, and sends a zero-byte tag_stop
 * message to every other rank. Returns 1 on rank 0 when the phase ends,
 * 0 otherwise, -1 on an MPI error. Zero the struct at each phase start. */
int ex_safra_pass(const ex_ctx *x, ex_safra *s, int tag_token, int tag_stop);

/* Combines the per-rank verdicts and counters, prints the RESULT line on
 * rank 0 and returns the process exit status (0 ok, 1 FAIL). `extra` is
 * appended to the RESULT line (rank 0's string). */
int ex_result(ex_ctx *x, int local_ok, uint64_t tasks_expected, const char *extra);

#endif
