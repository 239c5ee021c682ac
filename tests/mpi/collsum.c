/*
 * collsum: the results of the program's blocking collectives, byte for
 * byte (tests/mpi/collsum.sh). Every rank reduces its own doubles, spread
 * over 40 binary orders of magnitude so that the order of the additions
 * shows in the last bits, with MPI_SUM through MPI_Allreduce, MPI_Reduce,
 * MPI_Reduce_scatter_block, MPI_Scan and MPI_Exscan, at 13 counts from 1
 * to 4096, and prints one FNV-1a hash of each result's bytes per line.
 * Under tdshim these must be the MPI library's own collectives: its
 * nonblocking forms (which xulau and bcjrd polled until 2026-11-29) add in
 * another order, and Open MPI 4.1's MPI_Iallreduce differed from its
 * MPI_Allreduce at 3 and 5 ranks.
 *
 * usage: collsum (any number of ranks; rank r writes its lines to stdout,
 * each prefixed "rank r")
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t fnv(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    enum { N = 4096 };
    double *x = malloc((size_t)N * (size_t)size * sizeof *x), *y = malloc((size_t)N * (size_t)size * sizeof *y);
    if (!x || !y)
        MPI_Abort(MPI_COMM_WORLD, 2);
    uint64_t s = 0x9E3779B97F4A7C15ull * (uint64_t)(rank + 1);
    for (int i = 0; i < N * size; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        double u = (double)(s >> 11) / 9007199254740992.0 - 0.5;
        x[i] = u * (double)(1ull << (s % 40));
    }
    for (int cnt = 1; cnt <= N; cnt *= 2) {
        MPI_Allreduce(x, y, cnt, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        printf("rank %d allreduce %d %016llx\n", rank, cnt, (unsigned long long)fnv(y, (size_t)cnt * sizeof *y));
        MPI_Reduce(x, y, cnt, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0)
            printf("rank %d reduce %d %016llx\n", rank, cnt, (unsigned long long)fnv(y, (size_t)cnt * sizeof *y));
        MPI_Reduce_scatter_block(x, y, cnt, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        printf("rank %d reduce_scatter_block %d %016llx\n", rank, cnt,
               (unsigned long long)fnv(y, (size_t)cnt * sizeof *y));
        MPI_Scan(x, y, cnt, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        printf("rank %d scan %d %016llx\n", rank, cnt, (unsigned long long)fnv(y, (size_t)cnt * sizeof *y));
        MPI_Exscan(x, y, cnt, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (rank > 0)
            printf("rank %d exscan %d %016llx\n", rank, cnt, (unsigned long long)fnv(y, (size_t)cnt * sizeof *y));
    }
    free(x);
    free(y);
    MPI_Finalize();
    return 0;
}
