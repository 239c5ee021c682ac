/*
 * A driver of MUMPS (Debian's libmumps-dev, built against Open MPI), the
 * parallel sparse direct solver, for tests/mpi/mumps.sh: the MPI traffic is
 * MUMPS's own (a Fortran library: its factorization is asynchronous, each
 * rank polling MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG) and receiving
 * MPI_PACKED messages while it works, sending from its own buffer with
 * MPI_Isend and MPI_Test), this program only states a problem and checks
 * the answer.
 *
 * mumpslap N SYM: a 7-point operator on an N x N x N grid (N^3 unknowns)
 * assembled on rank 0, diagonally dominant; SYM 0 an unsymmetric matrix
 * (LU), 2 a symmetric one given by its upper triangle (LDL^T). The right
 * side is A times a vector of ones; rank 0 prints one line of facts that
 * native runs at the same rank count agree on exactly (the solution's
 * largest error as a class, the analysis' and factorization's statistics:
 * the numbers of entries in the factors, the flops), then the error
 * itself (which varies in its last digits with the order MUMPS's ranks
 * take their messages in).
 */
#include <mpi.h>
#include <dmumps_c.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define ICNTL(I) icntl[(I) - 1]
#define INFOG(I) infog[(I) - 1]
#define RINFOG(I) rinfog[(I) - 1]

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int n1 = argc > 1 ? atoi(argv[1]) : 0, sym = argc > 2 ? atoi(argv[2]) : 0;
    if (n1 < 2 || n1 > 64 || (sym != 0 && sym != 2)) {
        if (rank == 0)
            fprintf(stderr, "usage: mumpslap N(2-64) SYM(0 or 2)\n");
        MPI_Finalize();
        return 2;
    }
    DMUMPS_STRUC_C id = {0};
    id.comm_fortran = (MUMPS_INT)MPI_Comm_c2f(MPI_COMM_WORLD);
    id.par = 1; /* the host works too */
    id.sym = sym;
    id.job = -1;
    dmumps_c(&id);
    int n = n1 * n1 * n1;
    MUMPS_INT *irn = NULL, *jcn = NULL;
    double *a = NULL, *rhs = NULL;
    if (rank == 0) {
        irn = malloc(7 * (size_t)n * sizeof *irn);
        jcn = malloc(7 * (size_t)n * sizeof *jcn);
        a = malloc(7 * (size_t)n * sizeof *a);
        rhs = calloc((size_t)n, sizeof *rhs);
        if (!irn || !jcn || !a || !rhs) {
            fprintf(stderr, "mumpslap: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        MUMPS_INT8 nz = 0;
        for (int i = 0; i < n1; i++)
            for (int j = 0; j < n1; j++)
                for (int k = 0; k < n1; k++) {
                    int r = (i * n1 + j) * n1 + k;
                    int nb[6][3] = {{i - 1, j, k}, {i + 1, j, k}, {i, j - 1, k},
                                    {i, j + 1, k}, {i, j, k - 1}, {i, j, k + 1}};
                    double d = 6.0 + 0.01 * (r % 7);
                    irn[nz] = r + 1, jcn[nz] = r + 1, a[nz++] = d;
                    rhs[r] += d;
                    for (int q = 0; q < 6; q++) {
                        int x = nb[q][0], y = nb[q][1], z = nb[q][2];
                        if (x < 0 || y < 0 || z < 0 || x >= n1 || y >= n1 || z >= n1)
                            continue;
                        int c = (x * n1 + y) * n1 + z;
                        /* symmetric: one value per pair, given once (c > r) */
                        double v = sym ? -1.0 - 0.001 * ((r + c) % 5) : -1.0 - 0.001 * q;
                        rhs[r] += v;
                        if (!sym || c > r)
                            irn[nz] = r + 1, jcn[nz] = c + 1, a[nz++] = v;
                    }
                }
        id.n = n;
        id.nnz = nz;
        id.irn = irn;
        id.jcn = jcn;
        id.a = a;
        id.rhs = rhs;
    }
    id.ICNTL(1) = -1, id.ICNTL(2) = -1, id.ICNTL(3) = -1, id.ICNTL(4) = 0; /* quiet */
    id.job = 6; /* analysis, factorization, solve */
    dmumps_c(&id);
    if (id.INFOG(1) < 0) {
        fprintf(stderr, "mumpslap: rank %d: MUMPS failed, INFOG(1)=%d INFOG(2)=%d\n", rank, (int)id.INFOG(1),
                (int)id.INFOG(2));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 0) {
        double err = 0;
        for (int r = 0; r < n; r++)
            err = fmax(err, fabs(rhs[r] - 1.0));
        printf("n=%d sym=%d error %s 1e-12, factor entries %d (estimated %d, %d), flops %.6e (estimated %.6e)\n", n,
               sym, err < 1e-12 ? "below" : "ABOVE", (int)id.INFOG(29), (int)id.INFOG(3), (int)id.INFOG(9),
               id.RINFOG(3), id.RINFOG(1));
        printf("largest error %.3e\n", err);
    }
    id.job = -2;
    dmumps_c(&id);
    free(irn), free(jcn), free(a), free(rhs);
    MPI_Finalize();
    return 0;
}
