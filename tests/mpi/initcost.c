/* What MPI_Init costs the program: each rank prints the seconds its
 * MPI_Init took ("init R S"). tests/mpi/initcost.sh */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    double t0 = now();
    MPI_Init(&argc, &argv);
    double t1 = now();
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("init %d %.4f\n", rank, t1 - t0);
    MPI_Finalize();
    return 0;
}
