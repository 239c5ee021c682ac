/*
 * bigmsg: one message of more than 2 GiB (issue 12: "messages beyond 2 GiB
 * of elements where memory allows"), received natively or under tdshim.
 *
 *   bigmsg [ELEMENTS]   (default 2^27 elements of a 24-byte contiguous type:
 *                        3 GiB; the count stays an int, the bytes do not)
 *
 * Rank 0 sends a pattern, rank 1 receives it into a buffer with 64 guard
 * bytes after it and prints one line: return code, MPI_Get_elements_x in
 * bytes, MPI_Get_count in elements, source, tag and the number of wrong
 * bytes (payload and guards). Needs 2 x the message in memory.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char pattern(size_t i)
{
    return (unsigned char)(i * 131 + (i >> 20));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Datatype t;
    MPI_Type_contiguous(24, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    int n = argc > 1 ? atoi(argv[1]) : 1 << 27;
    size_t bytes = (size_t)n * 24;
    unsigned char *b = malloc(bytes + 64);
    if (!b) {
        fprintf(stderr, "bigmsg: cannot allocate %zu bytes\n", bytes + 64);
        MPI_Abort(MPI_COMM_WORLD, 77);
    }
    if (rank == 0) {
        for (size_t i = 0; i < bytes; i++)
            b[i] = pattern(i);
        MPI_Send(b, n, t, 1, 5, MPI_COMM_WORLD);
    } else if (rank == 1) {
        memset(b, 0xee, bytes + 64);
        MPI_Status st;
        MPI_Count c = -1;
        int cnt = -1;
        int rc = MPI_Recv(b, n, t, 0, 5, MPI_COMM_WORLD, &st);
        MPI_Get_elements_x(&st, MPI_BYTE, &c);
        MPI_Get_count(&st, t, &cnt);
        size_t bad = 0;
        for (size_t i = 0; i < bytes; i++)
            bad += b[i] != pattern(i);
        for (size_t i = bytes; i < bytes + 64; i++)
            bad += b[i] != 0xee;
        printf("rc=%d bytes=%lld count=%d src=%d tag=%d bad=%zu\n", rc, (long long)c, cnt, st.MPI_SOURCE, st.MPI_TAG,
               bad);
    }
    free(b);
    MPI_Type_free(&t);
    MPI_Finalize();
    return 0;
}
