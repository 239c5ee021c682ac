/*
 * MPI_THREAD_MULTIPLE under tdshim (issue 12, tests/mpi/threads.sh).
 *
 *   threads NTHREADS ROUNDS PHASES NOTIFY_TAG [LATE_MS]
 *
 * Every rank runs NTHREADS threads at once. In each of PHASES phases,
 * thread t of rank r exchanges ROUNDS messages with thread t of its ring
 * neighbours (to r+1, from r-1, tag t), every round with another kind of
 * operation, all kinds running concurrently in the rank's threads:
 * Send+Recv, Isend+Irecv+Waitall, Issend+Recv+Wait, Sendrecv,
 * Isend+Probe+Recv, Isend+Improbe+Mrecv, persistent Send_init/Recv_init +
 * Startall + Waitall, Irecv+Isend+Testall loop, Irecv+Isend+Waitany,
 * Irecv+Isend+Testsome loop, and a generalized request (completed by the
 * thread itself) mixed into a Waitall with the receive. Message sizes vary
 * from 1 to 1500 ints (both piggyback layouts) and every payload is
 * checked element by element.
 *
 * Then every thread polls for the phase's notification (NOTIFY_TAG, 0:
 * none) with MPI_Improbe + MPI_Mrecv, the matched probe that lets one
 * thread take the message; the one that does checks that every thread of
 * the rank had finished its exchanges (no early notification).
 *
 * LATE_MS > 0: in every phase after the first, a thread of rank 0 other
 * than the one that took the previous notification starts its exchanges LATE_MS milliseconds after the others, outside MPI
 * (the descheduled thread of a loaded node, made certain). Its last MPI
 * call was the previous phase's empty poll, and another thread of the rank
 * took the notification that released it: tdshim must not take that old
 * poll for the thread's idleness once the rank's other threads have moved
 * (no violation, no early notification).
 *
 * Output, one line per rank on rank 0:
 *   "rank R: provided P bad B early E notified N sent S"
 * then "time T s (...)": rank 0's time from starting its threads to
 * joining them (the cost of thread safety, bench/RESULTS.md).
 * where B counts wrong payloads/statuses, E notifications that came before
 * the rank's threads were done, N notifications, S messages sent.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXT 16
#define MAXN 1500

static int rank, size, nthreads, rounds, phases, notify_tag, late_ms;
static int bad, early, notified, sent;
static int done_work, got_note; /* per phase, under mu */
static int note_taker;          /* the thread that took the last notification */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t bar;

static int value(int src, int t, int ph, int r, int i)
{
    return src * 1000003 + t * 10007 + ph * 1009 + r * 101 + i;
}

static int count_of(int t, int r)
{
    static const int sizes[] = {1, 3, 17, 100, 511, 512, 513, 1000, 1500, 0};
    return sizes[(r * 7 + t * 3) % 10];
}

static void fill(int *b, int n, int t, int ph, int r)
{
    for (int i = 0; i < n; i++)
        b[i] = value(rank, t, ph, r, i);
}

static void bump(int *c)
{
    pthread_mutex_lock(&mu);
    (*c)++;
    pthread_mutex_unlock(&mu);
}

static void check(const int *b, int n, const MPI_Status *st, int t, int ph, int r)
{
    int src = (rank + size - 1) % size, cnt = -1, ok = 1;
    if (st) {
        MPI_Get_count(st, MPI_INT, &cnt);
        ok = st->MPI_SOURCE == src && st->MPI_TAG == t && cnt == n;
    }
    for (int i = 0; i < n && ok; i++)
        ok = b[i] == value(src, t, ph, r, i);
    if (!ok) {
        fprintf(stderr, "rank %d thread %d phase %d round %d: wrong message (count %d of %d, source %d, tag %d)\n",
                rank, t, ph, r, cnt, n, st ? st->MPI_SOURCE : -1, st ? st->MPI_TAG : -1);
        bump(&bad);
    }
}

/* generalized request: completed by its own thread before the wait */
static int gq(void *e, MPI_Status *s)
{
    (void)e;
    MPI_Status_set_elements(s, MPI_BYTE, 0);
    MPI_Status_set_cancelled(s, 0);
    s->MPI_SOURCE = MPI_UNDEFINED;
    s->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}
static int gf(void *e)
{
    (void)e;
    return MPI_SUCCESS;
}
static int gc(void *e, int c)
{
    (void)e;
    (void)c;
    return MPI_SUCCESS;
}

static void exchange(int t, int ph, int r)
{
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    int n = count_of(t, r);
    int *s = malloc(MAXN * sizeof *s), *b = malloc((MAXN + 1) * sizeof *b);
    MPI_Request q[3];
    MPI_Status st[3], one;
    int flag = 0, idx, outc, ind[2];
    fill(s, n, t, ph, r);
    memset(b, 0xab, (MAXN + 1) * sizeof *b);
    switch ((r + t) % 11) {
    case 0:
        if (rank % 2 == 0) {
            MPI_Send(s, n, MPI_INT, to, t, MPI_COMM_WORLD);
            MPI_Recv(b, MAXN, MPI_INT, from, t, MPI_COMM_WORLD, &one);
        } else {
            MPI_Recv(b, MAXN, MPI_INT, from, t, MPI_COMM_WORLD, &one);
            MPI_Send(s, n, MPI_INT, to, t, MPI_COMM_WORLD);
        }
        check(b, n, &one, t, ph, r);
        break;
    case 1:
        MPI_Isend(s, n, MPI_INT, to, t, MPI_COMM_WORLD, &q[0]);
        MPI_Irecv(b, MAXN, MPI_INT, from, t, MPI_COMM_WORLD, &q[1]);
        MPI_Waitall(2, q, st);
        check(b, n, &st[1], t, ph, r);
        break;
    case 2:
        MPI_Issend(s, n, MPI_INT, to, t, MPI_COMM_WORLD, &q[0]);
        MPI_Recv(b, MAXN, MPI_INT, from, t, MPI_COMM_WORLD, &one);
        MPI_Wait(&q[0], MPI_STATUS_IGNORE);
        check(b, n, &one, t, ph, r);
        break;
    case 3:
        MPI_Sendrecv(s, n, MPI_INT, to, t, b, MAXN, MPI_INT, from, t, MPI_COMM_WORLD, &one);
        check(b, n, &one, t, ph, r);
        break;
    case 4:
        MPI_Isend(s, n, MPI_INT, to, t, MPI_COMM_WORLD, &q[0]);
        MPI_Probe(from, t, MPI_COMM_WORLD, &one);
        MPI_Recv(b, MAXN, MPI_INT, one.MPI_SOURCE, one.MPI_TAG, MPI_COMM_WORLD, &one);
        MPI_Wait(&q[0], MPI_STATUS_IGNORE);
        check(b, n, &one, t, ph, r);
        break;
    case 5: {
        MPI_Message m;
        MPI_Isend(s, n, MPI_INT, to, t, MPI_COMM_WORLD, &q[0]);
        do
            MPI_Improbe(from, t, MPI_COMM_WORLD, &flag, &m, &one);
        while (!flag);
        int c = -1;
        MPI_Get_count(&one, MPI_INT, &c);
        if (c != n)
            bump(&bad);
        MPI_Mrecv(b, MAXN, MPI_INT, &m, &one);
        MPI_Wait(&q[0], MPI_STATUS_IGNORE);
        check(b, n, &one, t, ph, r);
        break;
    }
    case 6:
        MPI_Send_init(s, n, MPI_INT, to, t, MPI_COMM_WORLD, &q[0]);
        MPI_Recv_init(b, MAXN, MPI_INT, from, t, MPI_COMM_WORLD, &q[1]);
        MPI_Startall(2, q);
        MPI_Waitall(2, q, st);
        check(b, n, &st[1], t, ph, r);
        MPI_Request_free(&q[0]);
        MPI_Request_free(&q[1]);
        break;
    case 7:
        MPI_Irecv(b, MAXN, MPI_INT, from, t, MPI_COMM_WORLD, &q[1]);
        MPI_Isend(s, n, MPI_INT, to, t, MPI_COMM_WORLD, &q[0]);
        do
            MPI_Testall(2, q, &flag, st);
        while (!flag);
        check(b, n, &st[1], t, ph, r);
        break;
    case 8: {
        int got = 0;
        MPI_Irecv(b, MAXN, MPI_INT, from, t, MPI_COMM_WORLD, &q[1]);
        MPI_Isend(s, n, MPI_INT, to, t, MPI_COMM_WORLD, &q[0]);
        for (int k = 0; k < 2; k++) {
            MPI_Waitany(2, q, &idx, &one);
            if (idx == 1) {
                check(b, n, &one, t, ph, r);
                got = 1;
            }
        }
        if (!got)
            bump(&bad);
        break;
    }
    case 9: {
        int left = 2, got = 0;
        MPI_Irecv(b, MAXN, MPI_INT, from, t, MPI_COMM_WORLD, &q[1]);
        MPI_Isend(s, n, MPI_INT, to, t, MPI_COMM_WORLD, &q[0]);
        while (left > 0) {
            MPI_Testsome(2, q, &outc, ind, st);
            if (outc == MPI_UNDEFINED)
                break;
            for (int k = 0; k < outc; k++)
                if (ind[k] == 1) {
                    check(b, n, &st[k], t, ph, r);
                    got = 1;
                }
            left -= outc;
        }
        if (!got)
            bump(&bad);
        break;
    }
    default:
        MPI_Grequest_start(gq, gf, gc, NULL, &q[2]);
        MPI_Irecv(b, MAXN, MPI_INT, from, t, MPI_COMM_WORLD, &q[1]);
        MPI_Isend(s, n, MPI_INT, to, t, MPI_COMM_WORLD, &q[0]);
        MPI_Grequest_complete(q[2]);
        MPI_Waitall(3, q, st);
        check(b, n, &st[1], t, ph, r);
        break;
    }
    if (b[MAXN] != (int)0xabababab) /* nothing written past the receive buffer */
        bump(&bad);
    bump(&sent);
    free(s);
    free(b);
}

static void *thread_main(void *arg)
{
    int t = (int)(long)arg;
    for (int ph = 0; ph < phases; ph++) {
        if (late_ms > 0 && ph > 0 && rank == 0 && t == (note_taker + 1) % nthreads)
            nanosleep(&(struct timespec){late_ms / 1000, (late_ms % 1000) * 1000000L}, NULL);
        for (int r = 0; r < rounds; r++)
            exchange(t, ph, r);
        bump(&done_work);
        if (notify_tag > 0) {
            /* every thread polls; the matched probe gives the message to one */
            for (;;) {
                int flag = 0, stop;
                MPI_Message m;
                MPI_Status st;
                MPI_Improbe(MPI_ANY_SOURCE, notify_tag, MPI_COMM_WORLD, &flag, &m, &st);
                if (flag) {
                    int x;
                    MPI_Mrecv(&x, 1, MPI_INT, &m, MPI_STATUS_IGNORE);
                    pthread_mutex_lock(&mu);
                    if (done_work != nthreads)
                        early++;
                    notified++;
                    got_note = 1;
                    note_taker = t;
                    pthread_mutex_unlock(&mu);
                }
                pthread_mutex_lock(&mu);
                stop = got_note;
                pthread_mutex_unlock(&mu);
                if (stop)
                    break;
            }
        }
        /* the next phase starts when every thread of the rank is here */
        if (pthread_barrier_wait(&bar) == PTHREAD_BARRIER_SERIAL_THREAD) {
            pthread_mutex_lock(&mu);
            done_work = 0;
            got_note = 0;
            pthread_mutex_unlock(&mu);
        }
        pthread_barrier_wait(&bar);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 5 && argc != 6) {
        if (rank == 0)
            fprintf(stderr, "usage: threads NTHREADS ROUNDS PHASES NOTIFY_TAG [LATE_MS]\n");
        MPI_Finalize();
        return 2;
    }
    nthreads = atoi(argv[1]);
    rounds = atoi(argv[2]);
    phases = atoi(argv[3]);
    notify_tag = atoi(argv[4]);
    late_ms = argc == 6 ? atoi(argv[5]) : 0;
    if (late_ms < 0 || nthreads < 1 || nthreads > MAXT || rounds < 0 || phases < 1 || notify_tag < 0 ||
        (notify_tag > 0 && notify_tag < MAXT)) {
        if (rank == 0)
            fprintf(stderr, "threads: bad arguments\n");
        MPI_Finalize();
        return 2;
    }
    if (provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            printf("provided %d\n", provided);
        MPI_Finalize();
        return 77;
    }
    pthread_barrier_init(&bar, NULL, (unsigned)nthreads);
    pthread_t th[MAXT];
    /* the main thread calls a collective, then only joins: tdshim must not
     * count it as a thread that works (it would keep the rank busy) */
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int t = 0; t < nthreads; t++)
        pthread_create(&th[t], NULL, thread_main, (void *)(long)t);
    for (int t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
    double dt = MPI_Wtime() - t0;
    char line[128] = {0}, *all = rank == 0 ? calloc((size_t)size, sizeof line) : NULL;
    snprintf(line, sizeof line, "rank %d: provided multiple bad %d early %d notified %d sent %d\n", rank, bad, early,
             notified, sent);
    /* a collective: no primary message after the last notification */
    MPI_Gather(line, sizeof line, MPI_CHAR, all, sizeof line, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int i = 0; i < size; i++)
            fputs(all + i * sizeof line, stdout);
        printf("time %.6f s (rank 0, threads started to joined)\n", dt);
        fflush(stdout);
        free(all);
    }
    pthread_barrier_destroy(&bar);
    MPI_Finalize();
    return 0;
}
