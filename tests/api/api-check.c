/*
 * The termdetect API beyond the guide's example (run at 4 ranks by
 * tests/api/test-api.sh; prints TAP on rank 0):
 *   - participation: ranks passing active_flag = 0 are left out of the tree
 *     (nActiveProc, ActiveRank, pType) and are "terminated" at once, while
 *     the others detect the end of their own message exchange;
 *   - getstate() moves UP/DOWN -> TERMINATE, counts are mirrored;
 *   - a foreign message on the termination tag puts the caller in ERROR with
 *     a reason, instead of corrupting the protocol.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "termdetect.h"

#define TAG_A 501
#define TAG_B 502
#define WORK 77

static int all(int v)
{
    int r = 0;
    MPI_Allreduce(&v, &r, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return r;
}

static int n_ok;
static void ok(int rank, int cond, const char *what)
{
    n_ok++;
    if (rank == 0)
        printf("%sok %d - %s\n", cond ? "" : "not ", n_ok, what);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0)
        printf("1..7\n");

    /* even ranks take part and pass a token among themselves 20 times */
    int active = rank % 2 == 0, nact = (size + 1) / 2;
    struct termdetect_type zz;
    termdetect_init(&zz, active, TAG_A, MPI_COMM_WORLD);
    int shape = active ? zz.nActiveProc == nact && zz.ActiveRank == rank / 2 &&
                             zz.pType == (rank == 0 ? TD_PROC_ROOT : rank / 2 >= 1 && 2 * (rank / 2) + 1 < nact ? TD_PROC_INTERNAL : TD_PROC_LEAF)
                       : zz.nActiveProc == nact && zz.ActiveRank == -1 && termdetect_isterminated(&zz);
    ok(rank, all(shape), "active_flag = 0 leaves a rank out of the tree, and it is terminated at once");
    ok(rank, all(!active || termdetect_getstate(&zz) == UP), "participating nodes start UP");
    int hops = 0, seen = 0;
    if (active) {
        if (rank == 0) { /* the token starts at rank 0 */
            int h = 20;
            MPI_Send(&h, 1, MPI_INT, nact > 1 ? 2 : 0, WORK, MPI_COMM_WORLD);
            termdetect_update_sendcount(&zz, 1);
        }
        do {
            int flag;
            MPI_Status st;
            MPI_Iprobe(MPI_ANY_SOURCE, WORK, MPI_COMM_WORLD, &flag, &st);
            while (flag) {
                int h;
                MPI_Recv(&h, 1, MPI_INT, st.MPI_SOURCE, WORK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                termdetect_update_rcvcount(&zz, 1);
                termdetect_update_workcount(&zz, 1);
                seen++;
                if (h > 0) {
                    int next = (rank + 2) % (2 * nact);
                    h--;
                    MPI_Send(&h, 1, MPI_INT, next, WORK, MPI_COMM_WORLD);
                    termdetect_update_sendcount(&zz, 1);
                }
                hops += 1;
                MPI_Iprobe(MPI_ANY_SOURCE, WORK, MPI_COMM_WORLD, &flag, &st);
            }
            termdetect_process(&zz);
        } while (!termdetect_isterminated(&zz) && termdetect_getstate(&zz) != ERROR);
    }
    int total = 0;
    MPI_Allreduce(&seen, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int left = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, WORK, MPI_COMM_WORLD, &left, MPI_STATUS_IGNORE);
    ok(rank, all(!active || termdetect_getstate(&zz) == TERMINATE), "every participating node ends in TERMINATE");
    ok(rank, total == 21 && all(!left), "termination only after all 21 token messages were received");
    ok(rank, all(!active || (zz.localMsgRecvCount == seen && zz.localWorkCount == seen)),
       "received and work counts are mirrored in the struct");
    /* termdetect_printinfo after termination: the control traffic it
     * reports adds up over the ranks (every control message sent was
     * received) and is not zero (two or more ranks had to talk) */
    long long ctl[2] = {0, 0}, ctl_all[2];
    if (active) {
        char line[512] = "";
        fflush(stdout);
        int saved = dup(1);
        FILE *tf = tmpfile();
        if (saved >= 0 && tf && dup2(fileno(tf), 1) >= 0) {
            termdetect_printinfo(&zz);
            dup2(saved, 1);
            rewind(tf);
            while (fgets(line, sizeof line, tf)) {
                const char *c = strstr(line, "control sent ");
                if (c)
                    sscanf(c, "control sent %lld received %lld", &ctl[0], &ctl[1]);
            }
        }
        if (tf)
            fclose(tf);
        if (saved >= 0)
            close(saved);
    }
    MPI_Allreduce(ctl, ctl_all, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    ok(rank, nact < 2 || (ctl_all[0] > 0 && ctl_all[0] == ctl_all[1]),
       "termdetect_printinfo: control messages sent = received over the ranks, and not zero");
    if (rank == 0)
        printf("# printinfo: control sent %lld, received %lld over the ranks\n", ctl_all[0], ctl_all[1]);
    termdetect_free(&zz);
    MPI_Barrier(MPI_COMM_WORLD);

    /* a message of the program on the termination tag */
    struct termdetect_type bad;
    termdetect_init(&bad, 1, TAG_B, MPI_COMM_WORLD);
    if (size > 1 && rank == 1) {
        int junk = 42;
        MPI_Send(&junk, 1, MPI_INT, 0, TAG_B, MPI_COMM_WORLD);
    }
    int err = 1;
    if (rank == 0 && size > 1) {
        double t0 = MPI_Wtime();
        while (termdetect_getstate(&bad) != ERROR && MPI_Wtime() - t0 < 20)
            termdetect_process(&bad);
        err = termdetect_getstate(&bad) == ERROR && strstr(termdetect_error(&bad), "wrong size") != NULL;
        if (!err)
            printf("# state %d, error '%s'\n", (int)termdetect_getstate(&bad), termdetect_error(&bad));
    }
    ok(rank, all(err), "a foreign message on the termination tag is an ERROR with a reason");
    termdetect_free(&bad);
    MPI_Finalize();
    return 0;
}
