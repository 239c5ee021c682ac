/*
 * standing: a rank that takes its messages through a few standing
 * receives polled by MPI_Testany or MPI_Testsome, reposting each one done
 * in its place (tests/mpi/standing.sh; issue 38: tdshim's flat
 * MPI_Testany and MPI_Testsome, shim/mpi/tds_flat.c).
 *
 *   standing any|some K N [NOTIFY_TAG]
 *       Every rank but 0 sends rank 0 N + 1 messages of 4 to 48 bytes on
 *       tags 10 to 13; rank 1 sends its last one of 100 bytes on tag 14
 *       instead, which rank 0's receives (64 bytes) truncate. Only one
 *       truncated message: Open MPI 4.1's MPI_Testany, returning one
 *       request's error, frees every request of the array that completed
 *       in error too, without reporting it (ompi_errhandler_request_invoke),
 *       so two truncated receives done before one call lose the second, and
 *       rank 0 waits for ever (natively too; it hung here 1 run in about 40
 *       under load, tdshim's receiver being the slower, 2026-12-01).
 *       Rank 0 keeps K receives (MPI_ANY_SOURCE,
 *       MPI_ANY_TAG) in an array with an MPI_Isend of its own to rank 1 and
 *       an MPI_REQUEST_NULL, and polls the array with MPI_Testany or
 *       MPI_Testsome until every message has come, passing
 *       MPI_STATUS_IGNORE / MPI_STATUSES_IGNORE at one call in three (the
 *       payload then tells the message). Then it cancels the K receives
 *       left and completes them with the same call. A message on
 *       NOTIFY_TAG (tdshim's TDSHIM_NOTIFY=tag:N) is tdshim's notification:
 *       not the program's, left out of the transcript.
 *
 * Rank 0 prints what it received per sender and tag (messages, bytes, a
 * checksum of the payload and its position in the sender's stream), the
 * messages truncated (told by their payload: MPICH 4.0 writes nothing of
 * one that came before its receive, so a receive is marked before it is
 * posted), the receives cancelled or notified, and whether every payload,
 * status and error code was right: the same lines natively and under
 * tdshim. MPI_ERRORS_RETURN: the truncation is an error code, not an abort.
 * Under "any", rank 0 first polls a receive that never completes (from the
 * last rank, tag 99) and calls MPI_Testany on an array of MPI_REQUEST_NULL
 * only: flag 1, MPI_UNDEFINED.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { KMAX = 16, MAXB = 64, NTAG = 4, TAG0 = 10, TAG_TRUNC = 14, PMAX = 16 };

/* message s of rank r: its tag, its length (4 to 48 bytes) and its bytes;
 * bytes 1 to 3 are a stamp, the sender and s, which tell the message when
 * its status is ignored */
static int msg_tag(int s) { return TAG0 + s % NTAG; }
static int msg_len(int r, int s) { return 4 + (s * 7 + r) % 45; }
static unsigned char msg_byte(int r, int s, int i) { return (unsigned char)(r * 31 + s * 17 + i * 5 + 1); }

struct tally {
    long n, bytes, sum, wrong;
};
static struct tally tl[PMAX][NTAG];
static long cancelled, notified, bad_err, ntrunc;
static int notify_tag = -1;

/* a receive into b done, with status st (NULL: ignored): tallied. 1 if it
 * was the truncated message (its payload says so: every byte 0xEE but the
 * stamp, which no other message has), else 0 */
static int took(const unsigned char *b, const MPI_Status *st)
{
    int len = -1;
    if (st) {
        int cc = 0;
        MPI_Test_cancelled(st, &cc);
        if (cc) {
            cancelled++;
            return 0;
        }
        if (st->MPI_TAG == notify_tag) {
            notified++;
            return 0;
        }
        MPI_Get_count(st, MPI_BYTE, &len);
    }
    int r = b[1], s = b[2] | b[3] << 8, trunc = b[0] == 0xEE && b[4] == 0xEE && b[5] == 0xEE;
    if (trunc) { /* its sender is in the status only where MPI wrote part of it */
        ntrunc++;
        if (st && st->MPI_TAG != TAG_TRUNC)
            tl[0][0].wrong++;
        return 1;
    }
    int tag = msg_tag(s);
    if (r < 1 || r >= PMAX || (st && (st->MPI_SOURCE != r || st->MPI_TAG != tag))) {
        tl[0][0].wrong++;
        return 0;
    }
    struct tally *t = &tl[r][tag - TAG0];
    t->n++;
    if (len >= 0 && len != msg_len(r, s))
        t->wrong++;
    len = msg_len(r, s);
    t->bytes += len;
    t->sum += s;
    for (int i = 4; i < len; i++)
        t->wrong += b[i] != msg_byte(r, s, i);
    return 0;
}

/* a receive (re)posted into b: its first bytes marked as the truncated
 * message's, so that one MPI writes nothing of (MPICH 4.0) reads as
 * truncated too (its sender unknown then) */
static void post(unsigned char *b, MPI_Request *r)
{
    memset(b, 0xEE, 6);
    MPI_Irecv(b, MAXB, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, r);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int k = argc >= 4 ? atoi(argv[2]) : 0, n = argc >= 4 ? atoi(argv[3]) : 0;
    int some = argc >= 4 && strcmp(argv[1], "some") == 0;
    if (argc < 4 || (!some && strcmp(argv[1], "any") != 0) || k < 1 || k > KMAX || n < 1 || size < 2 ||
        size > PMAX) {
        if (rank == 0)
            fprintf(stderr, "usage: standing any|some K N [NOTIFY_TAG] (1 <= K <= %d, 2 to %d ranks)\n", KMAX, PMAX);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (argc > 4)
        notify_tag = atoi(argv[4]);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (rank != 0) {
        unsigned char b[100];
        for (int s = 0; s < n + (rank != 1); s++) {
            int len = msg_len(rank, s);
            for (int i = 0; i < len; i++)
                b[i] = msg_byte(rank, s, i);
            /* a stamp in the first bytes (those of 3 bytes or more): the
             * sender and the message, for a receive whose status is ignored */
            if (len >= 4) {
                b[1] = (unsigned char)rank;
                b[2] = (unsigned char)s;
                b[3] = (unsigned char)(s >> 8);
            }
            MPI_Send(b, len, MPI_BYTE, 0, msg_tag(s), MPI_COMM_WORLD);
        }
        if (rank == 1) {
            memset(b, 0xEE, sizeof b);
            b[1] = (unsigned char)rank;
            b[2] = (unsigned char)n;
            b[3] = (unsigned char)(n >> 8);
            MPI_Send(b, 100, MPI_BYTE, 0, TAG_TRUNC, MPI_COMM_WORLD);
            int x = 0;
            MPI_Recv(&x, 1, MPI_INT, 0, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (x != 4242)
                printf("rank 1: wrong reply %d\n", x);
        }
    } else {
        static unsigned char buf[KMAX][MAXB];
        MPI_Request rq[KMAX + 2];
        MPI_Status st[KMAX + 2];
        int idx[KMAX + 2], reply = 4242;
        if (!some) {
            /* first, an array of inactive requests only, on a rank that
             * polled a receive that never completes (passive under
             * TDSHIM_IDLE=test, the others still sending): flag 1 and
             * MPI_UNDEFINED, which tdshim's control receive, tested in a
             * passive rank's MPI_Testany (tds_flat.c testany_ctl), must not
             * hide. Tag 99 (tests/mpi/standing.sh's TDSHIM_NOTIFY=tag:99:
             * in scope) from the last rank, which never sends on it (the
             * notification comes from rank 0 itself) */
            MPI_Request never, none[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
            int x = 0, fl = 0, ix = 0;
            MPI_Irecv(&x, 1, MPI_INT, size - 1, 99, MPI_COMM_WORLD, &never);
            for (int j = 0; j < 100; j++)
                MPI_Testany(1, &never, &ix, &fl, MPI_STATUS_IGNORE);
            fl = 0;
            ix = 0;
            MPI_Testany(2, none, &ix, &fl, MPI_STATUS_IGNORE);
            printf("inactive only: flag=%d index %s\n", fl, ix == MPI_UNDEFINED ? "MPI_UNDEFINED" : "defined");
            MPI_Cancel(&never);
            MPI_Wait(&never, MPI_STATUS_IGNORE);
        }
        for (int i = 0; i < k; i++)
            post(buf[i], &rq[i]);
        MPI_Isend(&reply, 1, MPI_INT, 1, 20, MPI_COMM_WORLD, &rq[k]);
        rq[k + 1] = MPI_REQUEST_NULL;
        int total = (size - 1) * (n + 1), cnt = k + 2;
        long got = 0, calls = 0, sends = 0;
        while (got < total) {
            int ign = calls++ % 3 == 2, done = 0;
            if (some) {
                int rc = MPI_Testsome(cnt, rq, &done, idx, ign ? MPI_STATUSES_IGNORE : st), nt = 0;
                if (done == MPI_UNDEFINED)
                    done = 0;
                for (int j = 0; j < done; j++) {
                    int i = idx[j];
                    if (i == k) {
                        sends++;
                        continue;
                    }
                    int tr = took(buf[i], ign ? NULL : &st[j]);
                    nt += tr;
                    /* with statuses, each error where it belongs */
                    if (!ign && rc == MPI_ERR_IN_STATUS) {
                        int cls = MPI_SUCCESS;
                        if (st[j].MPI_ERROR != MPI_SUCCESS)
                            MPI_Error_class(st[j].MPI_ERROR, &cls);
                        bad_err += (cls == MPI_ERR_TRUNCATE) != tr;
                    }
                    got++;
                    post(buf[i], &rq[i]);
                }
                bad_err += (rc == MPI_ERR_IN_STATUS) != (nt > 0) || (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS);
            } else {
                int flag = 0, i = -1;
                int rc = MPI_Testany(cnt, rq, &i, &flag, ign ? MPI_STATUS_IGNORE : &st[0]);
                if (flag && i != MPI_UNDEFINED) {
                    if (i == k) {
                        sends++;
                        continue;
                    }
                    int tr = took(buf[i], ign ? NULL : &st[0]);
                    int cls = MPI_SUCCESS;
                    if (rc != MPI_SUCCESS)
                        MPI_Error_class(rc, &cls);
                    bad_err += (cls == MPI_ERR_TRUNCATE) != tr;
                    got++;
                    post(buf[i], &rq[i]);
                } else {
                    bad_err += rc != MPI_SUCCESS;
                }
            }
        }
        /* the receives left (and the send, if MPI has not reported it yet) */
        for (int i = 0; i < k; i++)
            MPI_Cancel(&rq[i]);
        for (int left = k + (sends == 0); left > 0;) {
            if (some) {
                int done = 0;
                MPI_Testsome(cnt, rq, &done, idx, st);
                for (int j = 0; done != MPI_UNDEFINED && j < done; j++, left--)
                    if (idx[j] != k)
                        (void)took(buf[idx[j]], &st[j]);
            } else {
                int flag = 0, i = -1;
                MPI_Testany(cnt, rq, &i, &flag, &st[0]);
                if (flag && i != MPI_UNDEFINED) {
                    left--;
                    if (i != k)
                        (void)took(buf[i], &st[0]);
                }
            }
        }
        long wrong = tl[0][0].wrong;
        for (int r = 1; r < size; r++)
            for (int t = 0; t < NTAG; t++) {
                struct tally *x = &tl[r][t];
                wrong += x->wrong;
                printf("from %d tag %d: messages=%ld bytes=%ld sum=%ld\n", r, TAG0 + t, x->n, x->bytes, x->sum);
            }
        printf("standing %s k=%d: messages=%ld, truncated=%ld, cancelled or notified=%ld, wrong=%ld, error codes "
               "wrong=%ld\n",
               some ? "some" : "any", k, got, ntrunc, cancelled + notified, wrong, bad_err);
    }
    MPI_Finalize();
    return 0;
}
