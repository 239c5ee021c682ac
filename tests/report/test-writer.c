/*
 * Drives the report writer (shim/report) without the shim: every rank
 * fills a tdr_rank and a core context with values that are a known
 * function of its rank, then calls tdr_write_reports exactly as the shim
 * does at MPI_Finalize. tests/report/check_writer.py checks the files
 * against those same formulas (keep the two in step).
 *
 * Run: mpirun -np N test-writer DIR [EPISODES]   (DIR "" = the default
 * directory; EPISODES: that many episodes instead of 2, below)
 * Exit status: 0, or 1 when the clock alignment or the writer failed.
 */
#include <mpi.h>

#include "td_algo.h"
#include "tdr_mpi.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static void no_send(void *user, int dest, const uint8_t *wire) {}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, fail = 0;
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);

    tdr_rank r = {.rank = rank, .size = size};
    r.t_init = tdr_now();
    if (tdr_clock_sync(&r, comm) != 0 || !isfinite(r.t_offset) || r.t_offset_err < 0) {
        fprintf(stderr, "rank %d: clock sync failed\n", rank);
        fail = 1;
    }
    /* one host, one CLOCK_MONOTONIC: the estimate must be within its own bound (+1 ms slack) */
    if (fabs(r.t_offset) > r.t_offset_err + 1e-3) {
        fprintf(stderr, "rank %d: clock offset %.9f exceeds its error bound %.9f\n", rank, r.t_offset, r.t_offset_err);
        fail = 1;
    }

    /* the formulas check_writer.py expects */
    r.prim_sent = 10 + rank;
    r.prim_sent_bytes = 1000 * (uint64_t)(rank + 1);
    r.prim_recv = 20 + rank;
    r.prim_recv_bytes = 2000 * (uint64_t)(rank + 1);
    r.pb_bytes_sent = 4 * r.prim_sent;
    r.pb_bytes_recv = 4 * r.prim_recv;
    r.ctl_bytes_sent = 48 * (uint64_t)(3 + rank);
    r.ctl_bytes_recv = 48 * (uint64_t)(5 + rank);
    r.polls = 100 + rank;
    r.empty_polls = 50 + rank;
    r.empty_tests = 20 + rank;
    r.busy_gaps = 3 + rank;
    r.busy_gap_s = 0.25;
    r.unscoped_polls = 4 + rank;
    for (int c = 0; c < TDR_NCAND; c++) {
        r.cand_passive[c] = (uint64_t)(10 * c + rank);
        r.cand_breach[c] = (uint64_t)(c + rank);
    }
    r.work_tags[0] = (struct tdr_worktag){.tag = 7, .times = 2 + (uint64_t)rank, .found = 9};
    r.nwork_tags = 1;
    r.work_tags_other = 5 + (uint64_t)rank;
    r.eager_detached = 11 + (uint64_t)rank;
    r.unreceived = rank == 1 ? 2 : 0;
    r.notifications = 2;
    r.thread_requested = MPI_THREAD_MULTIPLE;
    r.thread_provided = MPI_THREAD_SERIALIZED;
    r.threads_max = 2 + (uint32_t)rank;
    r.threads_late = rank == 1 ? 3 : 0;
    r.node_ranks = rank == 2 ? 4 : 1; /* rank 2 on an oversubscribed node: the stderr line says so */
    r.node_cpus = rank == 2 ? 2 : 4;
    for (int c = 0; c < TDR_NCAT; c++) {
        r.t_cat[c] = 0.001 * (c + 1) * (rank + 1);
        r.n_cat[c] = (uint64_t)(c + rank);
    }
    r.t_cat[TDR_CAT_WAIT] = 0.002 * (rank + 1); /* in the wall time, not in tdshim's */
    const tdr_episode *table = NULL;
    for (uint32_t ep = 1; ep <= 2; ep++) {
        r.t_last_passive = r.t_init + 0.4 * ep + 0.02 * rank;
        if (tdr_episode_add(&r, ep, r.t_init + 0.5 * ep + 0.01 * rank) != 0)
            fail = 1;
        if (ep == 1)
            table = r.episodes;
    }
    /* test-writer DIR N: N episodes in all (a program that polls while it
     * works makes hundreds of thousands): the ranks keep the first
     * TDR_EP_HEAD and the last TDR_EP_TAIL; episode 7 (kept at the head)
     * is UNSAFE on rank 0, episode N - 1000 (in the ring, shown among the UNSAFE ones) on the last rank,
     * episode 2000 (omitted by then) nowhere */
    long many = argc > 2 ? atol(argv[2]) : 0;
    for (long ep = 3; ep <= many; ep++) {
        r.t_last_passive = r.t_init + 0.4 + 1e-7 * (double)ep;
        if (tdr_episode_add(&r, (uint32_t)ep, r.t_init + 0.5 + 1e-7 * (double)ep + 0.01 * rank) != 0)
            fail = 1;
        if (ep == 7 && rank == 0)
            tdr_episode_unsafe(&r, 7, 1u << TD_EV_SEND, "test: rank 0, episode 7");
    }
    if (many > 20) {
        tdr_episode_unsafe(&r, 2000, 1u << TD_EV_SEND, "test: omitted");
        if (rank == size - 1)
            tdr_episode_unsafe(&r, (uint32_t)(many - 1000), 1u << TD_EV_BEFORE, "test: last rank, in the ring");
    }
    /* the table is made whole at the first episode and never moves: its
     * growth ran on the notification's path (tdr.c, tdr_episode_add) */
    if (r.episodes != table || r.capepisodes != TDR_EP_HEAD + TDR_EP_TAIL) {
        fprintf(stderr, "rank %d: the episode table moved or grew (capacity %zu)\n", rank, r.capepisodes);
        fail = 1;
    }
    r.t_end = r.t_init + 1.0 + 0.1 * rank;

    td_ctx core;
    td_cfg cfg;
    td_cfg_default(&cfg, rank, size);
    td_io io = {.user = NULL, .send = no_send};
    if (td_ctx_init(&core, td_algo_find("bcj"), &cfg, &io) != TD_OK) {
        fprintf(stderr, "rank %d: td_ctx_init failed\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    core.stats.ctl_sent[0][TD_EM_TERM] = 1;
    core.stats.ctl_recv[0][TD_EM_TERM] = rank ? 1 : 0;
    core.stats.ctl_sent[1][0] = 3 + (uint64_t)rank - 1;
    core.stats.ctl_recv[1][0] = 5 + (uint64_t)rank - (rank ? 1 : 0);
    core.stats.waves = 7;
    core.stats.busy_to_idle = 30 + (uint64_t)rank;
    core.stats.idle_to_busy = 29 + (uint64_t)rank;
    core.stats.violations = rank == 2 ? 1 : 0;

    /* call sites: every record must be either attributed or counted as not */
    int topn = 3;
    tdr_sites_init(&r, topn); /* -1 without libunwind: then reported as unavailable */
    for (int i = 0; i < 5; i++)
        tdr_site_record(&r, TDR_SITE_POLL, 1e-6);
    for (int i = 0; i < 2; i++)
        tdr_site_record(&r, TDR_SITE_SEND, 2e-6);

    static const tdr_kv kv[] = {{"TDSHIM_ALGO", "bcj"}, {"TDSHIM_REPORT", "text,json"}};
    tdr_meta meta = {
        .version = "test",
        .algo = "bcj",
        .config = kv,
        .nconfig = 2,
        .report_dir = argc > 1 ? argv[1] : "",
        .want_json = 1,
        .want_text = 1,
        .callsites_top = topn,
    };
    if (tdr_write_reports(&r, &core, &meta, comm) != 0) {
        fprintf(stderr, "rank %d: tdr_write_reports failed\n", rank);
        fail = 1;
    }
    td_ctx_fini(&core);
    tdr_rank_free(&r);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return fail;
}
