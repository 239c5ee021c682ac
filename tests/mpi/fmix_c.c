/*
 * fmix: a mixed C/Fortran transparency program (tests/mpi/fortran.sh).
 * Ranks form a ring; in each round every rank sends to its successor and
 * receives from its predecessor, one side in C and the other in Fortran
 * (tests/mpi/fmix_f.F90), in every combination: Fortran MPI_Send or
 * MPI_Isend+MPI_Wait to a C MPI_Recv / MPI_Irecv+MPI_Wait / MPI_Iprobe+
 * MPI_Recv, and C MPI_Send / MPI_Isend to a Fortran MPI_Irecv+MPI_Wait or
 * MPI_Iprobe+MPI_Recv, with 0 to 3000 integers (both piggyback layouts).
 * Every receive buffer is larger than the message and pre-filled: bytes
 * past the message must stay untouched.
 *
 * Output: one transcript line per receive, gathered on rank 0 in rank
 * order; it must be byte for byte the same with and without tdshim.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fmix_fsend(int fcomm, int dest, int tag, int n, int k, int nb);
void fmix_frecv(int fcomm, int src, int tag, int cap, int probe, int out[5]);

#define LINE 160
static const int sizes[] = {0, 1, 2, 17, 255, 256, 1000, 3000};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    int fcomm = (int)MPI_Comm_c2f(comm);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int rounds = NSIZES * 5;
    char *lines = calloc((size_t)rounds, LINE);
    int *buf = malloc((3000 + 8) * sizeof *buf);
    for (int r = 0; r < rounds; r++) {
        int n = sizes[r % NSIZES], way = r / NSIZES, k = rank * 100 + r, tag = 10 + r;
        int src_k = prev * 100 + r, out[5] = {0};
        char *l = lines + (size_t)r * LINE;
        if (way <= 2) {
            /* Fortran sends, C receives */
            MPI_Request rq;
            MPI_Status st;
            for (int i = 0; i < 3000 + 8; i++)
                buf[i] = -7;
            if (way == 0) {
                MPI_Irecv(buf, 3000 + 4, MPI_INT, prev, tag, comm, &rq);
                fmix_fsend(fcomm, next, tag, n, k, r % 2);
                MPI_Wait(&rq, &st);
            } else {
                /* blocking on both sides: even ranks send first, odd ranks
                 * receive first (no cycle of senders in the ring) */
                if (rank % 2 == 0)
                    fmix_fsend(fcomm, next, tag, n, k, r % 2);
                if (way == 1) {
                    MPI_Recv(buf, 3000 + 4, MPI_INT, MPI_ANY_SOURCE, tag, comm, &st);
                } else {
                    int flag = 0;
                    while (!flag)
                        MPI_Iprobe(prev, MPI_ANY_TAG, comm, &flag, &st);
                    MPI_Recv(buf, 3000 + 4, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, comm, &st);
                }
                if (rank % 2 == 1)
                    fmix_fsend(fcomm, next, tag, n, k, r % 2);
            }
            int cnt = -1, good = 1;
            MPI_Get_count(&st, MPI_INT, &cnt);
            for (int i = 0; i < 3000 + 8; i++)
                good &= i < cnt ? buf[i] == src_k * 1000 + i + 1 : buf[i] == -7;
            snprintf(l, LINE, "rank %d round %d F->C way %d: src=%d tag=%d count=%d data %s\n", rank, r, way,
                     st.MPI_SOURCE, st.MPI_TAG, cnt, good ? "ok" : "BAD");
        } else {
            /* C sends, Fortran receives */
            for (int i = 0; i < n; i++)
                buf[i] = k * 1000 + i + 1;
            MPI_Request rq;
            MPI_Isend(buf, n, MPI_INT, next, tag, comm, &rq);
            fmix_frecv(fcomm, way == 3 ? prev : MPI_ANY_SOURCE, tag, 3000 + 4, way == 4, out);
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
            long want = 0;
            for (int i = 0; i < out[2]; i++)
                want += (long)(src_k * 1000 + i + 1) * (i + 1);
            snprintf(l, LINE, "rank %d round %d C->F way %d: src=%d tag=%d count=%d ierr=%d data %s\n", rank, r, way,
                     out[0], out[1], out[2], out[4], out[3] != -1 && (int)want == out[3] ? "ok" : "BAD");
        }
    }
    char *all = rank == 0 ? malloc((size_t)size * rounds * LINE) : NULL;
    MPI_Gather(lines, rounds * LINE, MPI_CHAR, all, rounds * LINE, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int i = 0; i < size * rounds; i++)
            fputs(all + (size_t)i * LINE, stdout);
        free(all);
    }
    free(buf);
    free(lines);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return 0;
}
