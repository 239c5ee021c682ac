/*
 * What the measurement itself costs (bench/RESULTS.md "## Reports"):
 *   - one tdr_now() (every timed section pays two),
 *   - one tdr_site_record() on an already-known site (TDSHIM_CALLSITES),
 *   - one tdr_write_reports() at MPI_Finalize (JSON + summary + gathers),
 *     max over ranks, repeated R times into PARENT.
 * Not a test: built with `make check`, run by hand:
 *   mpirun -np N tests/report/bench-report PARENT [R]
 */
#include <mpi.h>

#include "td_algo.h"
#include "tdr_mpi.h"

#include <stdio.h>
#include <stdlib.h>

static void no_send(void *user, int dest, const uint8_t *wire) {}

/* keeps the site record's caller a real, separate frame */
__attribute__((noinline)) static void record_poll(tdr_rank *r) { tdr_site_record(r, TDR_SITE_POLL, 1e-7); }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: bench-report PARENT [R]\n");
        MPI_Finalize();
        return 2;
    }
    int reps = argc > 2 ? atoi(argv[2]) : 10;

    enum { N = 2000000 };
    double t0 = tdr_now(), sink = 0;
    for (int i = 0; i < N; i++)
        sink += tdr_now();
    double ns_now = 1e9 * (tdr_now() - t0) / N;

    tdr_rank r = {.rank = rank, .size = size};
    double ns_site = -1;
    if (tdr_sites_init(&r, 10) == 0) {
        enum { M = 200000 };
        record_poll(&r); /* first sight resolves the symbol: not the steady cost */
        t0 = tdr_now();
        for (int i = 0; i < M; i++)
            record_poll(&r);
        ns_site = 1e9 * (tdr_now() - t0) / M;
    }

    r.t_init = tdr_now();
    tdr_clock_sync(&r, comm);
    r.prim_sent = r.prim_recv = 1000;
    r.t_last_passive = tdr_now();
    tdr_episode_add(&r, 1, tdr_now());
    td_ctx core;
    td_cfg cfg;
    td_cfg_default(&cfg, rank, size);
    td_io io = {.send = no_send};
    if (td_ctx_init(&core, td_algo_find("bcj"), &cfg, &io) != TD_OK)
        MPI_Abort(MPI_COMM_WORLD, 1);
    static const tdr_kv kv[] = {{"TDSHIM_ALGO", "bcj"}};
    tdr_meta meta = {.version = "bench", .algo = "bcj", .config = kv, .nconfig = 1, .report_dir = argv[1],
                     .want_json = 1, .want_text = 1, .callsites_top = 10};
    double best = 1e30, sum = 0;
    for (int k = 0; k < reps; k++) {
        MPI_Barrier(comm);
        double a = tdr_now();
        r.t_end = a;
        tdr_write_reports(&r, &core, &meta, comm);
        double mine = tdr_now() - a, worst;
        MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, comm);
        best = worst < best ? worst : best;
        sum += worst;
    }
    if (rank == 0)
        printf("bench-report: %d ranks: tdr_now %.1f ns; tdr_site_record %.1f ns; tdr_write_reports "
               "mean %.3f ms, best %.3f ms over %d runs (max over ranks)%s\n",
               size, ns_now, ns_site, 1e3 * sum / reps, 1e3 * best, reps, sink < 0 ? "!" : "");
    td_ctx_fini(&core);
    tdr_rank_free(&r);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return 0;
}
