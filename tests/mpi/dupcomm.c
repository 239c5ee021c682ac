/*
 * Messages on a copy of MPI_COMM_WORLD, then on a communicator that may get
 * its handle back in another rank order (tests/mpi/dupcomm.sh).
 *
 *   dupcomm ROUNDS NOTIFY_TAG
 *
 * tdshim's flat entries take a duplicate of MPI_COMM_WORLD (same group,
 * same order) as MPI_COMM_WORLD itself (tds.fcomm): its ranks are world
 * ranks. When the program frees it, the handle may come back for a new
 * communicator whose ranks are not (MPI_Comm_split with the order
 * reversed, made right after the free): tdshim must not take it for the
 * copy, or it counts the messages against the wrong ranks (the report's
 * unreceived messages) and an algorithm sees wrong counts.
 *
 * Then messages on communicators that are not copies, whose ranks tdshim's
 * flat entries translate (tds.xcomm, the last one seen): the reversed one
 * and one of the ranks of one parity in turn, round by round; then the
 * reversed one freed and one in a rotated order made at once, which may
 * get its handle back (its ranks must not be translated through the
 * freed communicator's).
 *
 * Each communicator carries ROUNDS rounds of a ring exchange
 * in each of: MPI_Isend/MPI_Irecv/MPI_Waitall (16 messages a round), and
 * MPI_Send/MPI_Recv (1 + m messages a round from rank m of the
 * communicator). Every payload, source, tag and count is checked.
 * NOTIFY_TAG > 0: on the copy and on the reversed communicator, every
 * rank also sends itself an empty message on that tag (the notification's
 * tag, but not its communicator: a primary message), and at the end each
 * rank polls MPI_COMM_WORLD for one notification on that tag.
 *
 * Output: "rank R: bad B reused U notified N sent S received V" per rank
 * (U: 1 if the reversed communicator got the copy's handle back, + 2 if
 * the rotated one got the reversed one's, which makes the test sharp; S,
 * V: the primary messages it sent and received).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define W 16
static int rank, size, bad, nsent, nrecv;

static void ring(MPI_Comm c, int rounds, int tag0)
{
    int me, n;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &n);
    int right = (me + 1) % n, left = (me + n - 1) % n;
    int s[W][4], r[W][4];
    MPI_Request q[2 * W];
    MPI_Status st[2 * W];
    for (int k = 0; k < rounds; k++) {
        int tag = tag0 + k % 7;
        for (int i = 0; i < W; i++)
            for (int j = 0; j < 4; j++)
                s[i][j] = me * 100000 + k * 100 + i * 4 + j, r[i][j] = -1;
        for (int i = 0; i < W; i++)
            MPI_Irecv(r[i], 4, MPI_INT, left, tag, c, &q[i]);
        for (int i = 0; i < W; i++)
            MPI_Isend(s[i], 4, MPI_INT, right, tag, c, &q[W + i]);
        MPI_Waitall(2 * W, q, st);
        for (int i = 0; i < W; i++) {
            int cnt = -1;
            MPI_Get_count(&st[i], MPI_INT, &cnt);
            bad += st[i].MPI_SOURCE != left || st[i].MPI_TAG != tag || cnt != 4;
            for (int j = 0; j < 4; j++)
                bad += r[i][j] != left * 100000 + k * 100 + i * 4 + j;
        }
        nsent += W, nrecv += W;
        /* blocking: rank m of c sends 1 + m messages a round (counts that
         * differ by rank, so that counting them against the wrong ranks
         * shows at finalize); even ranks of c send first; not in a
         * communicator of one rank (a blocking send to itself first may
         * wait for ever: MPICH's does) */
        for (int o = 0; o < 2 && n > 1; o++) {
            if ((o == 0) == (me % 2 == 0))
                for (int i = 0; i <= me; i++) {
                    int x = me * 1000 + k;
                    MPI_Send(&x, 1, MPI_INT, right, tag, c);
                    nsent++;
                }
            else
                for (int i = 0; i <= left; i++) {
                    MPI_Status one;
                    int y = -1, cnt = -1;
                    MPI_Recv(&y, 1, MPI_INT, left, tag, c, &one);
                    MPI_Get_count(&one, MPI_INT, &cnt);
                    bad += y != left * 1000 + k || one.MPI_SOURCE != left || cnt != 1;
                    nrecv++;
                }
        }
    }
}

/* an empty message to itself on the notification's tag, on c */
static void self_note(MPI_Comm c, int ntag)
{
    MPI_Request q;
    MPI_Status st;
    int cnt = -1, me;
    MPI_Comm_rank(c, &me);
    MPI_Irecv(NULL, 0, MPI_INT, me, ntag, c, &q);
    MPI_Send(NULL, 0, MPI_INT, me, ntag, c);
    MPI_Wait(&q, &st);
    MPI_Get_count(&st, MPI_INT, &cnt);
    bad += st.MPI_SOURCE != me || st.MPI_TAG != ntag || cnt != 0;
    nsent++, nrecv++;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 3 || atoi(argv[1]) < 1 || atoi(argv[2]) < 0) {
        if (rank == 0)
            fprintf(stderr, "usage: dupcomm ROUNDS NOTIFY_TAG\n");
        MPI_Finalize();
        return 2;
    }
    int rounds = atoi(argv[1]), ntag = atoi(argv[2]), notified = 0;
    MPI_Comm dup, rev;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    ring(dup, rounds, 10);
    if (ntag > 0) /* the notification's tag on another communicator: a primary message */
        self_note(dup, ntag);
    MPI_Comm old = dup;
    MPI_Comm_free(&dup);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
    int reused = rev == old;
    ring(rev, rounds, 20);
    if (ntag > 0) /* the notification's tag on rev: a primary message too */
        self_note(rev, ntag);
    /* rev and half (the ranks of one parity, in the reverse order) in
     * turn: tdshim's flat entries translate the ranks of the last such
     * communicator seen (tds.xcomm), which changes every round */
    MPI_Comm half, rot;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half);
    for (int k = 0; k < rounds; k++) {
        ring(k % 2 ? half : rev, 1, 30 + k % 2);
        ring(k % 2 ? rev : half, 1, 32 + k % 2);
    }
    /* rev freed, and a communicator in yet another order made at once:
     * it may get rev's handle back, whose ranks tdshim must not translate
     * through rev's (freed) map */
    old = rev;
    MPI_Comm_free(&rev);
    MPI_Comm_split(MPI_COMM_WORLD, 0, (rank + 1) % size, &rot);
    reused += 2 * (rot == old);
    ring(rot, rounds, 40);
    MPI_Comm_free(&rot);
    MPI_Comm_free(&half);
    if (ntag > 0) { /* the job is quiescent: one notification */
        int flag = 0, x;
        MPI_Status st;
        while (!flag)
            MPI_Iprobe(MPI_ANY_SOURCE, ntag, MPI_COMM_WORLD, &flag, &st);
        MPI_Recv(&x, 1, MPI_INT, st.MPI_SOURCE, ntag, MPI_COMM_WORLD, &st);
        notified++;
    }
    printf("rank %d: bad %d reused %d notified %d sent %d received %d\n", rank, bad, reused, notified, nsent, nrecv);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
