/*
 * phalo: a halo exchange on a ring with MPI-4.0 partitioned communication
 * (tests/mpi/partitioned.sh). Each rank sends its right halo to the right
 * neighbour and receives its left one, in PARTS partitions of 32 doubles,
 * for ROUNDS rounds of MPI_Start, partitions readied one by one
 * (MPI_Pready), by ranges (MPI_Pready_range) or by lists (MPI_Pready_list),
 * received partitions polled with MPI_Parrived, and MPI_Waitall. Every
 * received value is checked. Rank 0 prints one line: "phalo ok ..." when
 * every rank received what its neighbour sent in every round.
 *
 * usage: phalo PARTS ROUNDS          (any number of ranks)
 * Built against an MPI before 4.0 it prints "no MPI-4" and exits 0.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#if MPI_VERSION < 4
int main(void)
{
    puts("no MPI-4");
    return 0;
}
#else
#define PER 32

int main(int argc, char **argv)
{
    int rank, size, parts = argc > 1 ? atoi(argv[1]) : 8, rounds = argc > 2 ? atoi(argv[2]) : 10;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size, bad = 0;
    double *out = malloc(sizeof(double) * PER * (size_t)parts), *in = malloc(sizeof(double) * PER * (size_t)parts);
    int *list = malloc(sizeof(int) * (size_t)parts), *got = calloc((size_t)parts, sizeof(int));
    MPI_Request r[2];
    MPI_Psend_init(out, parts, PER, MPI_DOUBLE, right, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
    MPI_Precv_init(in, parts, PER, MPI_DOUBLE, left, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
    for (int it = 0; it < rounds; it++) {
        MPI_Startall(2, r);
        for (int p = 0; p < parts; p++) {
            for (int i = 0; i < PER; i++)
                out[p * PER + i] = rank * 1e6 + it * 1e3 + p * PER + i;
            if (it % 3 == 0)
                MPI_Pready(p, r[0]);
        }
        if (it % 3 == 1) {
            MPI_Pready_range(0, parts / 2 - 1, r[0]);
            MPI_Pready_range(parts / 2, parts - 1, r[0]);
        } else if (it % 3 == 2) {
            for (int p = 0; p < parts; p++)
                list[p] = parts - 1 - p;
            MPI_Pready_list(parts, list, r[0]);
        }
        /* the received partitions as they arrive */
        for (int p = 0, seen = 0; seen < parts; p = (p + 1) % parts) {
            int flag = 0;
            if (got[p] == it + 1)
                continue;
            MPI_Parrived(r[1], p, &flag);
            if (flag) {
                got[p] = it + 1;
                seen++;
            }
        }
        MPI_Status st[2];
        MPI_Waitall(2, r, st);
        for (int p = 0; p < parts; p++)
            for (int i = 0; i < PER; i++)
                bad += in[p * PER + i] != left * 1e6 + it * 1e3 + p * PER + i;
    }
    MPI_Request_free(&r[0]);
    MPI_Request_free(&r[1]);
    int allbad = 0;
    MPI_Reduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("phalo %s: %d ranks, %d rounds of %d partitions, %d wrong values\n", allbad ? "FAILED" : "ok", size,
               rounds, parts, allbad);
    free(out);
    free(in);
    free(list);
    free(got);
    MPI_Finalize();
    return allbad != 0;
}
#endif
