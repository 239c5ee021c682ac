/*
 * stalign: statuses aligned to 4 bytes only (tests/mpi/stalign.sh).
 *
 * Open MPI's Fortran bindings (mpif.h, use mpi) hand the program's INTEGER
 * status array to the C function as its MPI_Status, aligned to 4 bytes,
 * where Open MPI's MPI_Status (a size_t inside) needs 8. tdshim's copies of
 * a status were struct assignments, which UBSan reported under MUMPS
 * (tests/mpi/mumps.sh); this program makes the same calls from C, every
 * status and status array at an address 4 bytes past an 8-byte boundary.
 * It reads the statuses with memcpy into aligned ones, so it is itself
 * correct C.
 *
 *   stalign PREFIX
 *       Rank 0 sends rank 1 M messages (message i: i % 7 + 1 ints, tag
 *       100 + i, ints i * 1000 + j), waiting for them with MPI_Waitall into
 *       a misaligned array of statuses; rank 1 takes them in order, each
 *       with the next of the ways below, then both ranks exchange one
 *       message with MPI_Sendrecv and MPI_Sendrecv_replace, and rank 1
 *       cancels a receive nothing matches and receives a message too long
 *       for its buffer (MPI_ERRORS_RETURN: MPI_ERR_TRUNCATE). Every status
 *       is printed (way, source, tag, count, error field where the call
 *       sets it, cancelled flag, checksum of the data) to PREFIX.RANK, and
 *       each rank's totals ("rank R: ... sent S received N", the messages
 *       it sent and received) last. Output is native's byte for byte.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define M 48 /* messages rank 0 sends rank 1 */
#define NWAYS 16
#define MAXN 8

static FILE *out;
static int sent, received;

/* a status area 4 bytes past an 8-byte boundary: n statuses */
static MPI_Status *misaligned(unsigned char *raw, int n)
{
    (void)n;
    uintptr_t a = ((uintptr_t)raw + 7) & ~(uintptr_t)7;
    return (MPI_Status *)(void *)(a + 4);
}
static void fill(int *b, int i)
{
    for (int j = 0; j < i % 7 + 1; j++)
        b[j] = i * 1000 + j;
}
static long sum(const int *b, int n)
{
    long s = 0;
    for (int j = 0; j < n; j++)
        s = s * 31 + b[j];
    return s;
}
/* print status number k of the misaligned area st (read by memcpy) */
static void show(const char *way, const MPI_Status *st, int k, const int *buf, int with_error)
{
    MPI_Status a;
    memcpy(&a, (const unsigned char *)st + (size_t)k * sizeof a, sizeof a);
    int count = -1, cancelled = -1;
    MPI_Get_count(&a, MPI_INT, &count);
    MPI_Test_cancelled(&a, &cancelled);
    fprintf(out, "%s source %d tag %d count %d", way, a.MPI_SOURCE, a.MPI_TAG, count);
    if (with_error)
        fprintf(out, " error %d", a.MPI_ERROR);
    fprintf(out, " cancelled %d", cancelled);
    if (buf && count > 0)
        fprintf(out, " sum %ld", sum(buf, count));
    fprintf(out, "\n");
}
/* a status area whose every byte is known: the fields a call must not
 * write show as they were (MPI_ERROR in the single-completion calls) */
static void seed(MPI_Status *st, int n)
{
    memset(st, 0x5a, (size_t)n * sizeof *st);
}

static void receiver(void)
{
    unsigned char raw[(MAXN + 1) * sizeof(MPI_Status) + 8];
    MPI_Status *st = misaligned(raw, MAXN);
    int b[MAXN][8];
    MPI_Request r[MAXN];
    int i = 0;
    for (int w = 0; i < M; w = (w + 1) % NWAYS) {
        int flag = 0, idx = -1, outc = 0, ix[MAXN];
        MPI_Message msg;
        seed(st, MAXN);
        switch (w) {
        case 0:
            MPI_Recv(b[0], 8, MPI_INT, 0, 100 + i, MPI_COMM_WORLD, st);
            show("recv", st, 0, b[0], 1), i++;
            break;
        case 1:
            MPI_Recv(b[0], 8, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, st);
            show("recv-any", st, 0, b[0], 1), i++;
            break;
        case 2:
            while (!flag)
                MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, st);
            show("iprobe", st, 0, NULL, 1);
            {
                MPI_Status p;
                memcpy(&p, st, sizeof p);
                seed(st, 1);
                MPI_Recv(b[0], 8, MPI_INT, p.MPI_SOURCE, p.MPI_TAG, MPI_COMM_WORLD, st);
            }
            show("iprobe-recv", st, 0, b[0], 1), i++;
            break;
        case 3:
            MPI_Probe(0, 100 + i, MPI_COMM_WORLD, st);
            show("probe", st, 0, NULL, 1);
            seed(st, 1);
            MPI_Recv(b[0], 8, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, st);
            show("probe-recv", st, 0, b[0], 1), i++;
            break;
        case 4:
            MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, st);
            show("mprobe", st, 0, NULL, 1);
            seed(st, 1);
            MPI_Mrecv(b[0], 8, MPI_INT, &msg, st);
            show("mrecv", st, 0, b[0], 1), i++;
            break;
        case 5:
            while (!flag)
                MPI_Improbe(0, 100 + i, MPI_COMM_WORLD, &flag, &msg, st);
            show("improbe", st, 0, NULL, 1);
            seed(st, 1);
            MPI_Imrecv(b[0], 8, MPI_INT, &msg, &r[0]);
            MPI_Wait(&r[0], st);
            show("imrecv-wait", st, 0, b[0], 1), i++;
            break;
        case 6:
            MPI_Irecv(b[0], 8, MPI_INT, 0, 100 + i, MPI_COMM_WORLD, &r[0]);
            MPI_Wait(&r[0], st);
            show("irecv-wait", st, 0, b[0], 1), i++;
            break;
        case 7:
            MPI_Irecv(b[0], 8, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r[0]);
            while (!flag)
                MPI_Test(&r[0], &flag, st);
            show("irecv-test", st, 0, b[0], 1), i++;
            break;
        case 8:
            MPI_Irecv(b[0], 8, MPI_INT, 0, 100 + i, MPI_COMM_WORLD, &r[0]);
            while (!flag)
                MPI_Request_get_status(r[0], &flag, st);
            show("get-status", st, 0, b[0], 1);
            seed(st, 1);
            MPI_Wait(&r[0], st);
            show("get-status-wait", st, 0, b[0], 1), i++;
            break;
        case 9:
            MPI_Recv_init(b[0], 8, MPI_INT, 0, 100 + i, MPI_COMM_WORLD, &r[0]);
            MPI_Start(&r[0]);
            MPI_Wait(&r[0], st);
            MPI_Request_free(&r[0]);
            show("persistent-wait", st, 0, b[0], 1), i++;
            break;
        case 10: /* the rest take up to 3 messages */
        case 11:
        case 12:
        case 13:
        case 14:
        case 15: {
            int n = M - i < 3 ? M - i : 3;
            for (int k = 0; k < n; k++)
                MPI_Irecv(b[k], 8, MPI_INT, 0, 100 + i + k, MPI_COMM_WORLD, &r[k]);
            if (w == 10) {
                for (int k = 0; k < n; k++) {
                    MPI_Waitany(n, r, &idx, st);
                    fprintf(out, "waitany index %d: ", idx);
                    show("waitany", st, 0, b[idx], 1);
                    seed(st, 1);
                }
            } else if (w == 11) {
                for (int k = 0; k < n; k++) {
                    flag = 0;
                    while (!flag)
                        MPI_Testany(n, r, &idx, &flag, st);
                    fprintf(out, "testany index %d: ", idx);
                    show("testany", st, 0, b[idx], 1);
                    seed(st, 1);
                }
            } else if (w == 12) {
                MPI_Waitall(n, r, st);
                for (int k = 0; k < n; k++)
                    show("waitall", st, k, b[k], 0);
            } else if (w == 13) {
                while (!flag)
                    MPI_Testall(n, r, &flag, st);
                for (int k = 0; k < n; k++)
                    show("testall", st, k, b[k], 0);
            } else {
                int left = n;
                while (left > 0) {
                    if (w == 14)
                        MPI_Waitsome(n, r, &outc, ix, st);
                    else
                        MPI_Testsome(n, r, &outc, ix, st);
                    if (outc == MPI_UNDEFINED)
                        break;
                    for (int k = 0; k < outc; k++) {
                        fprintf(out, "%s index %d: ", w == 14 ? "waitsome" : "testsome", ix[k]);
                        show(w == 14 ? "waitsome" : "testsome", st, k, b[ix[k]], 0);
                    }
                    left -= outc;
                    seed(st, MAXN);
                }
            }
            i += n;
            break;
        }
        }
    }
    received += M;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 2 || size != 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np 2 stalign PREFIX\n");
        MPI_Finalize();
        return 2;
    }
    char name[4096];
    snprintf(name, sizeof name, "%s.%d", argv[1], rank);
    out = fopen(name, "w");
    if (!out) {
        perror(name);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    unsigned char raw[(M + 1) * sizeof(MPI_Status) + 8];
    MPI_Status *st = misaligned(raw, M);
    if (rank == 0) {
        static int b[M][8];
        MPI_Request r[M];
        for (int i = 0; i < M; i++) {
            fill(b[i], i);
            MPI_Isend(b[i], i % 7 + 1, MPI_INT, 1, 100 + i, MPI_COMM_WORLD, &r[i]);
        }
        seed(st, M);
        MPI_Waitall(M, r, st);
        sent += M;
        fprintf(out, "rank 0: sends done\n");
    } else {
        receiver();
    }
    /* both ways at once */
    int x[4] = {rank, rank + 1, rank + 2, rank + 3}, y[4] = {0};
    seed(st, 1);
    MPI_Sendrecv(x, 4, MPI_INT, 1 - rank, 7, y, 4, MPI_INT, 1 - rank, 7, MPI_COMM_WORLD, st);
    show("sendrecv", st, 0, y, 1);
    seed(st, 1);
    MPI_Sendrecv_replace(x, 4, MPI_INT, 1 - rank, 8, 1 - rank, 8, MPI_COMM_WORLD, st);
    show("sendrecv-replace", st, 0, x, 1);
    sent += 2, received += 2;
    if (rank == 1) {
        /* a receive nothing matches, cancelled */
        MPI_Request r;
        int b[8];
        MPI_Irecv(b, 8, MPI_INT, 0, 9999, MPI_COMM_WORLD, &r);
        MPI_Cancel(&r);
        seed(st, 1);
        MPI_Wait(&r, st);
        /* only the flag: MPI leaves the other fields undefined (MPICH 4.0's
         * are those of a request it used before, Open MPI's source -1) */
        MPI_Status a;
        int cancelled = -1;
        memcpy(&a, st, sizeof a);
        MPI_Test_cancelled(&a, &cancelled);
        fprintf(out, "cancelled: flag %d\n", cancelled);
    }
    /* a message longer than its receive buffer: truncated */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (rank == 0) {
        int b[6] = {1, 2, 3, 4, 5, 6};
        MPI_Send(b, 6, MPI_INT, 1, 11, MPI_COMM_WORLD);
        sent++;
    } else {
        int b[8];
        seed(st, 1);
        int rc = MPI_Recv(b, 2, MPI_INT, 0, 11, MPI_COMM_WORLD, st);
        int cls = -1;
        MPI_Error_class(rc, &cls);
        fprintf(out, "truncated: class %s ", cls == MPI_ERR_TRUNCATE ? "MPI_ERR_TRUNCATE" : "other");
        show("truncated", st, 0, NULL, 0);
        received++;
    }
    fprintf(out, "rank %d: statuses aligned to 4 bytes, sent %d received %d\n", rank, sent, received);
    fclose(out);
    MPI_Finalize();
    return 0;
}
