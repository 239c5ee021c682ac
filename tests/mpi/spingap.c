/* TDSHIM_IDLE=spin's long gaps (tests/mpi/spingap.sh; tds_progress.c,
 * spin_poll): a rank that spins on empty probes, then works WORK_US of CPU
 * time between GAPS of its probes in a row, then spins again, ROUNDS
 * times. One gap is what a machine's own hiccup makes as well: the rank is
 * unsure (detection.spin_unsure); two in a row are work (busy_again).
 *
 * Usage: spingap GAPS ROUNDS WORK_US
 * Prints: spingap gaps=G rounds=R probes=N found=0 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include "tclock.h"

static long probes, found;

static void probe(void)
{
    int flag = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    probes++;
    found += flag;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc != 4) {
        fprintf(stderr, "usage: spingap GAPS ROUNDS WORK_US\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int gaps = atoi(argv[1]), rounds = atoi(argv[2]);
    double work = 1e-6 * atof(argv[3]);
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < 200; k++)
            probe();
        for (int g = 0; g < gaps; g++) {
            use_cpu(work);
            probe();
        }
    }
    for (int k = 0; k < 200; k++)
        probe();
    printf("spingap gaps=%d rounds=%d probes=%ld found=%ld\n", gaps, rounds, probes, found);
    MPI_Finalize();
    return 0;
}
