/*
 * A three-phase program (Problem B of skr-counting-quiescence.txt §3, and
 * the multi-phase case of DESIGN.md §1): each phase runs until its done
 * message arrives, then every rank enters MPI_Barrier and the next phase
 * starts. A correct detector notifies exactly once per phase:
 *   1. relay:  every rank sends --fanout messages, each relayed --hops
 *              times between random ranks;
 *   2. local:  rank 0 alone executes --local-tasks tasks and sends nothing
 *              (quiescence must still be announced: the barrier counts as
 *              new activity);
 *   3. ring:   a token makes --laps laps of the ring while every rank sends
 *              one message to every other rank.
 * Uses MPI_Isend and MPI_Irecv+MPI_Test by default (--blocking to switch).
 *
 * Ground truth: all three phases are pure functions of the seed; each rank
 * checks the messages and tasks of every phase against them.
 */
#include "ex_common.h"

#include <stdio.h>

#define TAG_RELAY 1
#define TAG_RING 2
#define TAG_ALL 3

typedef struct tp {
    ex_ctx x;
    int fanout, hops, local_tasks, laps;
    double bar_us[3]; /* --native-stop --coll-reps: each phase's end barrier, last entry to last exit */
} tp;

static int relay_dest(const tp *t, int64_t msg, int64_t hop)
{
    return (int)(ex_hash(t->x.o.seed, (uint64_t)msg, (uint64_t)hop) % (uint64_t)t->x.size);
}

/* Runs one phase's event loop; handle() executes one work message. */
static int run_loop(tp *t, int (*handle)(tp *, int tag, const int64_t *m, int n))
{
    MPI_Status st;
    int ok = 1;
    while (ok && ex_next(&t->x, &st) == EX_WORK) {
        int64_t m[EX_MSG_WORDS];
        int n;
        ok = ex_recv(&t->x, &st, m, &n) == 0 && handle(t, st.MPI_TAG, m, n) == 0;
        if (!ok)
            fprintf(stderr, "three_phase: rank %d: bad message (tag %d) in phase %d\n", t->x.rank,
                    st.MPI_TAG, t->x.phases);
    }
    return ok;
}

static int relay(tp *t, int tag, const int64_t *m, int n)
{
    if (tag != TAG_RELAY || n != 2 || relay_dest(t, m[0], m[1] - 1) != t->x.rank)
        return -1;
    ex_work(&t->x);
    t->x.tasks++;
    if (m[1] >= t->hops)
        return 0;
    int64_t f[2] = {m[0], m[1] + 1};
    return ex_send(&t->x, f, 2, relay_dest(t, m[0], m[1]), TAG_RELAY);
}

static int ring(tp *t, int tag, const int64_t *m, int n)
{
    ex_work(&t->x);
    t->x.tasks++;
    if (tag == TAG_ALL && n == 1)
        return 0;
    if (tag != TAG_RING || n != 1 || m[0] % t->x.size != t->x.rank)
        return -1;
    if (m[0] >= (int64_t)t->laps * t->x.size)
        return 0;
    int64_t f = m[0] + 1;
    return ex_send(&t->x, &f, 1, (t->x.rank + 1) % t->x.size, TAG_RING);
}

static int none(tp *t, int tag, const int64_t *m, int n) { return -1; }

/* Ends a phase (done message or --native-stop count) and checks its counts. */
static int end_phase(tp *t, uint64_t my_tasks, uint64_t my_recv)
{
    ex_ctx *x = &t->x;
    int ok = ex_phase_check(x, my_tasks, my_recv);
    if (x->notifications != (x->o.native_stop ? 0 : x->phases) && x->o.expect_notify == -2) {
        fprintf(stderr, "three_phase: rank %d: %d done message(s) by the end of phase %d\n", x->rank,
                x->notifications, x->phases);
        ok = 0;
    }
    /* the reference for the detection latency (bench/ab-latency.py): the
     * phase's end barrier entered when the last rank ran out of work, caches
     * and all as detection finds them, instead of collectives in a loop
     * (ex_result's allreduce_us); timed natively only (--native-stop),
     * where nothing else ends the phase */
    int timed = x->o.native_stop && x->o.coll_reps > 0 && x->phases >= 1 && x->phases <= 3;
    double t_in = timed ? ex_now(x) : 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (timed) {
        double in[2] = {t_in, ex_now(x)}, out[2];
        MPI_Allreduce(in, out, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        t->bar_us[x->phases - 1] = (out[1] - out[0]) * 1e6;
    }
    return ok;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tp t = {.fanout = 8, .hops = 4, .local_tasks = 200, .laps = 3};
    const ex_opt opts[] = {
        {"fanout", EX_INT, &t.fanout, 0, 1 << 16, "phase 1: messages each rank starts (default 8)"},
        {"hops", EX_INT, &t.hops, 1, 1 << 16, "phase 1: times each message is relayed (default 4)"},
        {"local-tasks", EX_INT, &t.local_tasks, 0, 1 << 24, "phase 2: tasks rank 0 runs alone (default 200)"},
        {"laps", EX_INT, &t.laps, 0, 1 << 16, "phase 3: laps of the ring token (default 3)"},
    };
    int rc = ex_init(&t.x, "three_phase", "Three phases separated by MPI_Barrier; one notification each.\n"
                 "With --native-stop and --coll-reps the RESULT line also gives end_barrier_us: each phase's\n"
                 "end barrier, from the last rank's entry to the last rank's exit (detection's native reference).",
                     argc, argv, opts, sizeof opts / sizeof opts[0], 1, 0);
    if (rc != 0) {
        MPI_Finalize();
        return rc > 0 ? 0 : 2;
    }
    ex_ctx *x = &t.x;
    const int P = x->size, me = x->rank;
    int ok = 1;
    if (x->o.native_stop && x->o.coll_reps > 0)
        ex_clock_sync(x); /* the end barriers' times on one clock */

    /* phase 1: relay */
    uint64_t p1_recv = 0;
    for (int r = 0; r < P; r++)
        for (int j = 0; j < t.fanout; j++)
            for (int64_t h = 0; h < t.hops; h++)
                p1_recv += relay_dest(&t, (int64_t)r << 20 | j, h) == me;
    ex_phase_begin(x, p1_recv);
    for (int j = 0; ok && j < t.fanout; j++) {
        int64_t m[2] = {(int64_t)me << 20 | j, 1};
        ok = ex_send(x, m, 2, relay_dest(&t, m[0], 0), TAG_RELAY) == 0;
    }
    ok &= run_loop(&t, relay);
    ok &= end_phase(&t, p1_recv, p1_recv);

    /* phase 2: rank 0 alone, no messages */
    ex_phase_begin(x, 0);
    if (me == 0)
        for (int i = 0; i < t.local_tasks; i++) {
            ex_work(x);
            x->tasks++;
        }
    ok &= run_loop(&t, none);
    ok &= end_phase(&t, me == 0 ? (uint64_t)t.local_tasks : 0, 0);

    /* phase 3: ring token + all-to-all */
    uint64_t ring_hops = (uint64_t)t.laps * (uint64_t)P, p3_recv = (uint64_t)P - 1;
    for (uint64_t k = 1; k <= ring_hops; k++)
        p3_recv += k % (uint64_t)P == (uint64_t)me;
    ex_phase_begin(x, p3_recv);
    if (me == 0 && ring_hops > 0) {
        int64_t k = 1;
        ok &= ex_send(x, &k, 1, 1 % P, TAG_RING) == 0;
    }
    for (int s = 1; ok && s < P; s++) {
        int64_t v = me;
        ok = ex_send(x, &v, 1, (me + s) % P, TAG_ALL) == 0;
    }
    ok &= run_loop(&t, ring);
    ok &= end_phase(&t, p3_recv, p3_recv);

    uint64_t expected = (uint64_t)P * t.fanout * t.hops + (uint64_t)t.local_tasks + ring_hops +
                        (uint64_t)P * (P - 1);
    char bar[96] = "";
    if (x->o.native_stop && x->o.coll_reps > 0)
        snprintf(bar, sizeof bar, "end_barrier_us=%.2f,%.2f,%.2f", t.bar_us[0], t.bar_us[1], t.bar_us[2]);
    rc = ex_result(x, ok, expected, bar);
    ex_fini(x);
    MPI_Finalize();
    return rc;
}
