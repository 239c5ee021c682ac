/*
 * A thread that calls MPI only after its rank looks passive
 * (tests/mpi/threads.sh; README "Threads").
 *
 *   thread-late LATE_MS FIRST
 *
 * Every rank runs two threads under MPI_THREAD_MULTIPLE. The poller polls
 * with MPI_Iprobe (tag 1) until it has received one message. The worker
 * waits until the poller's first poll has returned, then sleeps LATE_MS
 * milliseconds outside MPI (computing, or not yet
 * scheduled), then makes its first MPI call and sends one int to its own
 * rank's poller on tag 1 (to itself, so that no poller can receive before
 * its rank's worker has called MPI). FIRST chooses that first call: "send"
 * (MPI_Send), or "irecv" (an MPI_Irecv from the previous rank on tag 2,
 * then the send, then one int to the next rank on tag 2 and the wait for
 * the receive: the worker's first call is no send).
 *
 * Until the worker's first call tdshim has seen one thread, which polls
 * and finds nothing: without TDSHIM_THREADS=2 it judges the rank passive,
 * and the worker's message would be sent by a passive rank. That is
 * tdshim's blind spot, not a contract violation of the program: the report
 * counts a late thread (thread_level.late_threads) and advises
 * TDSHIM_THREADS, and counts no violation.
 *
 * Output on every rank: "rank R: got G from S" (G the int received, S its
 * source).
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int rank, size, late_ms, first_irecv, got = -1, from = -1;
static int polled; /* the poller's first MPI_Iprobe has returned (atomic) */

static void *poller(void *arg)
{
    (void)arg;
    int flag = 0;
    MPI_Status st;
    while (!flag) {
        MPI_Iprobe(MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &flag, &st);
        __atomic_store_n(&polled, 1, __ATOMIC_RELEASE);
    }
    MPI_Recv(&got, 1, MPI_INT, st.MPI_SOURCE, 1, MPI_COMM_WORLD, &st);
    from = st.MPI_SOURCE;
    return NULL;
}

static void *worker(void *arg)
{
    (void)arg;
    int x = rank, reply = -1, next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Request rq;
    /* the poller has called MPI first, however slowly a loaded node
     * schedules the two threads; then the worker works LATE_MS unseen */
    while (!__atomic_load_n(&polled, __ATOMIC_ACQUIRE))
        nanosleep(&(struct timespec){0, 1000000L}, NULL);
    nanosleep(&(struct timespec){late_ms / 1000, (late_ms % 1000) * 1000000L}, NULL);
    if (first_irecv)
        MPI_Irecv(&reply, 1, MPI_INT, prev, 2, MPI_COMM_WORLD, &rq);
    MPI_Send(&x, 1, MPI_INT, rank, 1, MPI_COMM_WORLD);
    if (first_irecv) {
        MPI_Send(&x, 1, MPI_INT, next, 2, MPI_COMM_WORLD);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        if (reply != prev)
            fprintf(stderr, "rank %d: wrong reply %d\n", rank, reply);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 3 || (strcmp(argv[2], "send") != 0 && strcmp(argv[2], "irecv") != 0) || atoi(argv[1]) < 0) {
        if (rank == 0)
            fprintf(stderr, "usage: thread-late LATE_MS send|irecv\n");
        MPI_Finalize();
        return 2;
    }
    if (provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            printf("provided %d\n", provided);
        MPI_Finalize();
        return 77;
    }
    late_ms = atoi(argv[1]);
    first_irecv = strcmp(argv[2], "irecv") == 0;
    pthread_t p, w;
    pthread_create(&p, NULL, poller, NULL);
    pthread_create(&w, NULL, worker, NULL);
    pthread_join(p, NULL);
    pthread_join(w, NULL);
    printf("rank %d: got %d from %d\n", rank, got, from);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
