/*
 * finlate: ranks that enter MPI_Finalize while the others work on (issue
 * 41, the fourcounter stall at MPI_Finalize; tests/mpi/finlate.sh).
 *
 *   finlate PHASES NOTIFY_TAG DEADLINE SEED
 *
 * Phase p: work tokens {p, hops} hop between the ranks still taking part
 * (a rank r takes part in phases 1..L_r); each hop is a primary message,
 * and its receiver answers the sender with an empty receipt on TAG_ACK
 * (not primary under TDSHIM_IGNORE_EMPTY=1). A rank waits for work in an
 * MPI_Iprobe loop and ends the phase on the notification (TDSHIM_NOTIFY=
 * tag:NOTIFY_TAG). L_r: PHASES for ranks 0 and 1, 1 for the last rank (it
 * is in MPI_Finalize when every later phase is announced), from SEED for
 * the others. After its last phase a rank lingers 20 ms dropping whatever
 * arrives (as a work queue drops what arrives after its "done"), counting
 * the primaries it dropped, then goes straight to MPI_Finalize; before
 * that, rank 1 sends rank 0 its result (a primary after the last
 * notification: activity a next episode must announce, at the latest in
 * MPI_Finalize). No collective anywhere: it would need the ranks that left.
 * A notification that arrives while a rank lingers is counted too.
 *
 * Output, one line per rank (unordered): "rank R: phases L notified N
 * injected I tokens T dropped D" (I: hops of the tokens it started, T:
 * tokens it handled; the sums of I and T agree when no work was lost). Exit 1 if a notification did not come within
 * DEADLINE seconds ("timeout").
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define TAG_WORK 1
#define TAG_ACK 2
#define TAG_RESULT 3

static int rank, size, nphases, notify_tag, got_result;
static unsigned long long rng;

static unsigned rnd(unsigned n)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)(rng >> 33) % n;
}

static int last_phase(int r, unsigned long long seed)
{
    if (r <= 1)
        return nphases;
    if (r == size - 1)
        return 1;
    unsigned long long h = (seed + 1) * 0x9e3779b97f4a7c15ULL ^ (unsigned long long)r * 0xbf58476d1ce4e5b9ULL;
    return 1 + (int)((h >> 29) % (unsigned long long)nphases);
}

/* a random rank that takes part in phase p */
static int member(int p, unsigned long long seed)
{
    for (;;) {
        int r = (int)rnd((unsigned)size);
        if (last_phase(r, seed) >= p)
            return r;
    }
}

/* handle one message (already probed); 1 if it was the notification */
static int handle(const MPI_Status *st, unsigned long long seed, long *tokens, long *dropped, int drop)
{
    int msg[2] = {0, 0};
    MPI_Recv(msg, 2, MPI_INT, st->MPI_SOURCE, st->MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (st->MPI_TAG == notify_tag)
        return 1;
    /* rank 1's result may come before rank 0's own last notification (xulau
     * announces on every rank alone, in any order): kept, not a receipt */
    got_result |= st->MPI_TAG == TAG_RESULT;
    if (st->MPI_TAG != TAG_WORK)
        return 0; /* a receipt */
    if (drop) {
        (*dropped)++;
        return 0;
    }
    (*tokens)++;
    if (st->MPI_SOURCE != rank)
        MPI_Send(NULL, 0, MPI_BYTE, st->MPI_SOURCE, TAG_ACK, MPI_COMM_WORLD);
    if (msg[1] > 0) {
        int m[2] = {msg[0], msg[1] - 1};
        MPI_Send(m, 2, MPI_INT, member(msg[0], seed), TAG_WORK, MPI_COMM_WORLD);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: finlate PHASES NOTIFY_TAG DEADLINE SEED\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    nphases = atoi(argv[1]);
    notify_tag = atoi(argv[2]);
    double deadline = atof(argv[3]);
    unsigned long long seed = strtoull(argv[4], NULL, 10);
    rng = seed * 1000003ULL + (unsigned long long)rank;
    int mine = last_phase(rank, seed), notified = 0, timeout = 0;
    long tokens = 0, dropped = 0, injected = 0;
    MPI_Status st;
    for (int p = 1; p <= mine && !timeout; p++) {
        /* phase p's tokens start at one of its members, after 0.2 s of work
         * for p > 1: the ranks that left are in MPI_Finalize by then */
        if (rank == (p - 1) % 2 && p > 1)
            for (double t0 = MPI_Wtime(); MPI_Wtime() - t0 < 0.2;)
                ;
        if (rank == (p - 1) % 2)
            for (int k = 0; k < 1 + p % 3; k++) {
                int m[2] = {p, 20 + (int)rnd(20)};
                injected += m[1] + 1;
                MPI_Send(m, 2, MPI_INT, member(p, seed), TAG_WORK, MPI_COMM_WORLD);
            }
        double t0 = MPI_Wtime();
        for (;;) {
            int flag = 0;
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
            if (flag && handle(&st, seed, &tokens, &dropped, 0)) {
                notified++;
                break;
            }
            if (!flag && MPI_Wtime() - t0 > deadline) {
                timeout = 1;
                break;
            }
        }
    }
    /* the notification made the rank active: this send keeps the contract */
    int result = (int)tokens;
    if (rank == 1 && !timeout)
        MPI_Send(&result, 1, MPI_INT, 0, TAG_RESULT, MPI_COMM_WORLD);
    if (rank == 0 && !timeout && !got_result)
        MPI_Recv(&result, 1, MPI_INT, 1, TAG_RESULT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (double t0 = MPI_Wtime(); MPI_Wtime() - t0 < 0.02;) {
        int flag = 0;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        if (flag && handle(&st, seed, &tokens, &dropped, 1))
            notified++;
    }
    printf("rank %d: phases %d notified %d injected %ld tokens %ld dropped %ld%s\n", rank, mine, notified, injected,
           tokens, dropped, timeout ? " timeout" : "");
    fflush(stdout);
    MPI_Finalize();
    return timeout;
}
