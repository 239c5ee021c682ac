/*
 * A halo exchange on a ring with MPI-4.0 partitioned communication, then
 * asynchronous work: the shape of a stencil code whose halos go out
 * partition by partition as they are computed, with a task phase after
 * each sweep that ends when nobody has work left. Each of --phases phases:
 *   1. --rounds rounds of the halo exchange: every rank sends its two
 *      edges (to its right and to its left neighbour) as --parts
 *      partitions of 32 doubles, each partition computed (--work-us) then
 *      readied (MPI_Pready one by one, MPI_Pready_range or MPI_Pready_list,
 *      by round), and receives its two halos in half as many partitions of
 *      twice the size (other partition counts than the sender's, the same
 *      bytes), polled with MPI_Parrived and completed by MPI_Waitall, one
 *      MPI_Wait each, MPI_Test loops, an MPI_Request_get_status loop,
 *      MPI_Waitany or an MPI_Testsome loop, by round (not MPI_Testall:
 *      MPICH 4.0.2's fails on partitioned requests, natively too). The four requests are initialized once. On 2 ranks
 *      both neighbours are one rank: two partitioned sends and two
 *      receives with the same (peer, tag, communicator), which MPI pairs
 *      in the order of their initialization (MPI-4.0 §4.2.1).
 *   2. tasks: every rank starts --tokens tokens, each relayed --hops times
 *      between random ranks (MPI_Send, MPI_Iprobe polling), then the phase
 *      ends at the done message (TDSHIM_NOTIFY=tag:N) or, with
 *      --native-stop, after the messages the seed predicts.
 * Phases are separated by MPI_Barrier. Every halo value is checked; rank 0
 * prints "part_halo: halos ..." (the values received, the same line in
 * every correct run of the same arguments) and the RESULT line, whose
 * early= counts the phases where some rank was notified before the last
 * rank ran out of work (examples/README.md).
 *
 * Built against an MPI before 4.0 it prints "no MPI-4" and exits 0
 * (tests/mpi/partitioned.sh then skips).
 */
#include <mpi.h>
#include <stdio.h>

#if MPI_VERSION < 4
int main(void)
{
    puts("no MPI-4");
    return 0;
}
#else
#include "ex_common.h"

#include <stdlib.h>

#define PER 32
#define TAG_HALO 5
#define TAG_RELAY 1

typedef struct ph {
    ex_ctx x;
    int parts, rounds, nphases, tokens, hops;
    double t_idle, t_notify;
} ph;

/* the value of element i of the edge rank `from` sends in direction dir
 * (0: to its right, 1: to its left) in round k (over all phases) */
static double edge(int from, int dir, int k, int i)
{
    return from * 1e7 + dir * 5e6 + k * 1e3 + i;
}

static int relay_dest(const ph *t, int64_t msg, int64_t hop)
{
    return (int)(ex_hash(t->x.o.seed, (uint64_t)msg, (uint64_t)hop) % (uint64_t)t->x.size);
}

/* one round of the halo exchange: r[0], r[1] the sends to right and left,
 * r[2], r[3] the receives from left and right */
static int halo_round(ph *t, MPI_Request r[4], double *out[2], double *in[2], int k, double *sum)
{
    ex_ctx *x = &t->x;
    const int n = t->parts * PER, me = x->rank;
    const int nb[2] = {(me + x->size - 1) % x->size, (me + 1) % x->size}; /* received from */
    int bad = 0;
    MPI_Startall(4, r);
    for (int p = 0; p < t->parts; p++) {
        ex_work(x);
        for (int d = 0; d < 2; d++) {
            for (int i = p * PER; i < (p + 1) * PER; i++)
                out[d][i] = edge(me, d, k, i);
            if (k % 3 == 0)
                MPI_Pready(p, r[d]);
        }
    }
    for (int d = 0; d < 2 && k % 3; d++) {
        if (k % 3 == 1) {
            MPI_Pready_range(0, t->parts / 2 - 1, r[d]);
            MPI_Pready_range(t->parts / 2, t->parts - 1, r[d]);
        } else {
            int list[16];
            for (int p = 0; p < t->parts; p++)
                list[p] = t->parts - 1 - p;
            MPI_Pready_list(t->parts, list, r[d]);
        }
    }
    /* the received partitions as they arrive (half as many as sent) */
    for (int d = 0; d < 2; d++)
        for (int p = 0; p < t->parts / 2; p++) {
            int flag = 0;
            while (!flag)
                MPI_Parrived(r[2 + d], p, &flag);
        }
    MPI_Status st[4], one;
    int flag = 0, idx, nd, ids[4];
    switch (k % 6) {
    case 4:
        for (int i = 0; i < 4; i++) {
            MPI_Waitany(4, r, &idx, &one);
            st[idx] = one;
        }
        break;
    case 5:
        for (int done = 0; done < 4; done += nd) {
            MPI_Status some[4];
            MPI_Testsome(4, r, &nd, ids, some);
            for (int i = 0; i < nd; i++)
                st[ids[i]] = some[i];
        }
        break;
    case 0:
        MPI_Waitall(4, r, st);
        break;
    case 1:
        for (int i = 3; i >= 0; i--)
            MPI_Wait(&r[i], &st[i]);
        break;
    case 2:
        for (int i = 0; i < 4; i++)
            for (flag = 0; !flag;)
                MPI_Test(&r[i], &flag, &st[i]);
        break;
    default:
        /* whatever MPI_Request_get_status leaves in the status (MPICH
         * 4.0.2: source, tag and count of a partitioned receive untouched,
         * count 0), MPI_Waitall then gives the whole of it */
        for (int i = 2; i < 4; i++)
            for (flag = 0, st[i].MPI_SOURCE = 9999, st[i].MPI_TAG = -9; !flag;)
                MPI_Request_get_status(r[i], &flag, &st[i]);
        MPI_Waitall(4, r, st);
    }
    for (int d = 0; d < 2; d++) {
        int count = -1;
        MPI_Get_count(&st[2 + d], MPI_DOUBLE, &count);
        bad += count != n || st[2 + d].MPI_SOURCE != nb[d] || st[2 + d].MPI_TAG != TAG_HALO;
        for (int i = 0; i < n; i++) {
            bad += in[d][i] != edge(nb[d], d, k, i);
            *sum += in[d][i];
        }
    }
    if (bad)
        fprintf(stderr, "part_halo: rank %d: %d wrong values or statuses in round %d\n", me, bad, k);
    return bad;
}

static int relay(ph *t, const int64_t *m, int n)
{
    if (n != 2 || relay_dest(t, m[0], m[1] - 1) != t->x.rank)
        return -1;
    ex_work(&t->x);
    t->x.tasks++;
    int rc = 0;
    if (m[1] < t->hops) {
        int64_t f[2] = {m[0], m[1] + 1};
        rc = ex_send(&t->x, f, 2, relay_dest(t, m[0], m[1]), TAG_RELAY);
    }
    t->t_idle = ex_now(&t->x);
    return rc;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ph t = {.parts = 8, .rounds = 6, .nphases = 2, .tokens = 4, .hops = 6};
    const ex_opt opts[] = {
        {"parts", EX_INT, &t.parts, 4, 16, "partitions of each halo sent, even (default 8)"},
        {"rounds", EX_INT, &t.rounds, 1, 1 << 16, "halo exchanges per phase (default 6)"},
        {"phases", EX_INT, &t.nphases, 1, 1 << 16, "phases (default 2)"},
        {"tokens", EX_INT, &t.tokens, 0, 1 << 16, "tokens each rank starts per phase (default 4)"},
        {"hops", EX_INT, &t.hops, 1, 1 << 16, "times each token is relayed (default 6)"},
    };
    int rc = ex_init(&t.x, "part_halo", "Partitioned halo exchange (MPI-4.0), then relayed tasks; per phase.", argc,
                     argv, opts, sizeof opts / sizeof opts[0], 0, 50);
    if (rc != 0) {
        MPI_Finalize();
        return rc > 0 ? 0 : 2;
    }
    ex_ctx *x = &t.x;
    const int P = x->size, me = x->rank, n = t.parts * PER;
    if (t.parts % 2) {
        if (me == 0)
            fprintf(stderr, "part_halo: --parts must be even\n");
        MPI_Finalize();
        return 2;
    }
    ex_clock_sync(x);
    double *out[2], *in[2];
    for (int d = 0; d < 2; d++) {
        out[d] = malloc(sizeof(double) * (size_t)n);
        in[d] = malloc(sizeof(double) * (size_t)n);
    }
    MPI_Request r[4];
    const int right = (me + 1) % P, left = (me + P - 1) % P;
    MPI_Psend_init(out[0], t.parts, PER, MPI_DOUBLE, right, TAG_HALO, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
    MPI_Psend_init(out[1], t.parts, PER, MPI_DOUBLE, left, TAG_HALO, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
    MPI_Precv_init(in[0], t.parts / 2, 2 * PER, MPI_DOUBLE, left, TAG_HALO, MPI_COMM_WORLD, MPI_INFO_NULL, &r[2]);
    MPI_Precv_init(in[1], t.parts / 2, 2 * PER, MPI_DOUBLE, right, TAG_HALO, MPI_COMM_WORLD, MPI_INFO_NULL, &r[3]);
    int ok = 1, bad = 0;
    double sum = 0;
    uint64_t expected = 0;
    for (int ph_i = 0; ph_i < t.nphases; ph_i++) {
        /* the relay messages this rank receives and the tasks it runs */
        uint64_t my_recv = 0;
        for (int o = 0; o < P; o++)
            for (int j = 0; j < t.tokens; j++)
                for (int64_t h = 0; h < t.hops; h++)
                    my_recv += relay_dest(&t, (int64_t)ph_i << 40 | (int64_t)o << 20 | j, h) == me;
        expected += (uint64_t)P * t.tokens * t.hops;
        ex_phase_begin(x, my_recv);
        for (int k = 0; k < t.rounds; k++)
            bad += halo_round(&t, r, out, in, ph_i * t.rounds + k, &sum);
        t.t_idle = ex_now(x);
        t.t_notify = -1;
        for (int j = 0; ok && j < t.tokens; j++) {
            int64_t m[2] = {(int64_t)ph_i << 40 | (int64_t)me << 20 | j, 1};
            ok = ex_send(x, m, 2, relay_dest(&t, m[0], 0), TAG_RELAY) == 0;
        }
        MPI_Status st;
        int e;
        while (ok && (e = ex_next(x, &st)) == EX_WORK) {
            int64_t m[EX_MSG_WORDS];
            int nw;
            ok = st.MPI_TAG == TAG_RELAY && ex_recv(x, &st, m, &nw) == 0 && relay(&t, m, nw) == 0;
        }
        if (ok && e == EX_DONE)
            t.t_notify = ex_now(x);
        ok &= ex_phase_check(x, my_recv, my_recv);
        ok &= ex_timeline_check(x, t.t_idle, t.t_notify);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    for (int i = 0; i < 4; i++)
        MPI_Request_free(&r[i]);
    int allbad = 0;
    double allsum = 0;
    MPI_Reduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&sum, &allsum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0)
        printf("part_halo: halos %d ranks x %d phases x %d rounds x 2 of %d partitions (received as %d): sum %.0f, "
               "%d wrong\n",
               P, t.nphases, t.rounds, t.parts, t.parts / 2, allsum, allbad);
    char extra[64];
    snprintf(extra, sizeof extra, "halo_wrong=%d early=%d latency_max=%.6f", allbad, x->early, x->lat_max);
    rc = ex_result(x, ok && !bad, expected, extra);
    for (int d = 0; d < 2; d++) {
        free(out[d]);
        free(in[d]);
    }
    ex_fini(x);
    MPI_Finalize();
    return rc;
}
#endif
