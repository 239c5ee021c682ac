/*
 * The report writer's orchestration (DESIGN.md §6, shim/report/SCHEMA.md):
 * at MPI_Finalize, rank 0 makes the report directory, every rank writes its
 * JSON file (tdr_record.c), rank 0 gathers every rank's row, episodes and
 * call sites and writes the text summary (tdr_summary.c) with the advice
 * (tdr_advice.c) and prints the short summary on stderr. At MPI_Init it
 * agrees the run's identity the partial report (tdr_partial.c) is named
 * after. tdr_writer.h lists the other files.
 *
 * All MPI traffic here goes through PMPI_* on the shim's private
 * communicator, so the program never sees it and the shim does not count
 * it. Every rank takes part in every collective whatever went wrong
 * locally (a failed write must not hang the job); errors are remembered
 * and returned at the end.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <mpi.h>

#include "tdr_mpi.h"
#ifdef TDS_IN_SHIM
/* in libtdshim: the MPI calls below go to the next layer, never to
 * tdshim's own PMPI_* entry points (gen_wrappers.py) */
#include "tds_bodies.h"
#endif
#include "tdr_writer.h"
#include "tdr_advice.h"
#include "tdr_site.h"
#include "tdr_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Files and directories                                               */
/* ------------------------------------------------------------------ */

/* the batch job id (SLURM_JOB_ID, PBS_JOBID), or else the local time */
static void run_stamp(char *stamp, size_t len)
{
    const char *job = getenv("SLURM_JOB_ID");
    if (!job || !*job)
        job = getenv("PBS_JOBID");
    if (job && *job) {
        snprintf(stamp, len, "%s", job);
    } else {
        time_t t = time(NULL);
        struct tm tm;
        localtime_r(&t, &tm);
        strftime(stamp, len, "%Y%m%d-%H%M%S", &tm);
    }
}

/*
 * Rank 0 makes this run's directory (SCHEMA.md, "Where reports go"):
 * TDSHIM_REPORT_DIR (default ".", created if missing) is the parent of
 * tdshim-report-<job id or local time>, then -2, -3, ... when that name is
 * taken. The directory is created with an exclusive mkdir, so two jobs
 * sharing a parent never share a report directory, an earlier report is
 * never overwritten, and a name another user created in advance (or a
 * symbolic link planted there) is passed over (tdr_file.h). Returns the
 * directory's descriptor (*pfd: the parent's), or -1 after one warning.
 */
static int choose_dir(const tdr_meta *meta, char *path, size_t len, char *name, int *pfd)
{
    const char *parent = meta->report_dir && meta->report_dir[0] ? meta->report_dir : ".";
    mode_t dm = TDR_DMODE(meta->group_mode);
    char stamp[64];
    int e = 0;
    run_stamp(stamp, sizeof stamp);
    if (strlen(parent) + TDR_NAME_MAX + 2 > len) {
        fprintf(stderr, "tdshim: no report written: TDSHIM_REPORT_DIR %s is too long\n", parent);
        return -1;
    }
    *pfd = tdr_parent_open(parent, dm, &e);
    if (*pfd < 0) {
        fprintf(stderr, "tdshim: no report written: cannot use TDSHIM_REPORT_DIR %s: %s\n", parent,
                e == EPERM ? "another user's directory that is not sticky" : strerror(e));
        return -1;
    }
    for (int n = 1; n < 10000; n++) {
        if (n == 1)
            snprintf(name, TDR_NAME_MAX, "tdshim-report-%.64s", stamp);
        else
            snprintf(name, TDR_NAME_MAX, "tdshim-report-%.64s-%d", stamp, n);
        int fd = tdr_dir_open(*pfd, name, dm, 1, &e);
        if (fd >= 0) {
            snprintf(path, len, "%s/%s", parent, name);
            return fd;
        }
        if (e != EEXIST)
            break;
    }
    fprintf(stderr, "tdshim: no report written: cannot create a report directory tdshim-report-%s[-N] in %s: %s\n",
            stamp, parent, e == EEXIST ? "every name is taken" : strerror(e));
    close(*pfd);
    *pfd = -1;
    return -1;
}

/* ------------------------------------------------------------------ */
/* Gathering                                                           */
/* ------------------------------------------------------------------ */

static int gather_sites(const tdr_ctx *x, MPI_Comm comm, int kind, tdr_site_info **out, int **counts)
{
    int topn = x->meta->callsites_top;
    int have = x->r->sites != NULL;
    tdr_site_info *mine = have && topn > 0 ? calloc((size_t)topn, sizeof *mine) : NULL;
    int n = mine ? tdr_sites_top(x->r->sites, kind, mine, topn) : 0;
    int nbytes = n * (int)sizeof *mine;
    int *cnt = NULL, *displ = NULL;
    char *all = NULL;
    int rc = 0;
    if (x->rank == 0) {
        cnt = calloc((size_t)x->size, sizeof *cnt);
        displ = calloc((size_t)x->size, sizeof *displ);
        *counts = calloc((size_t)x->size, sizeof **counts);
    }
    /* without memory at rank 0 every rank skips the gather (the summary
     * then says the call sites were not gathered) */
    int ok0 = x->rank != 0 || (cnt && displ && *counts);
    if (PMPI_Bcast(&ok0, 1, MPI_INT, 0, comm) != MPI_SUCCESS || !ok0) {
        free(mine), free(cnt), free(displ);
        return ok0 ? -1 : 0;
    }
    if (PMPI_Gather(&nbytes, 1, MPI_INT, cnt, 1, MPI_INT, 0, comm) != MPI_SUCCESS)
        rc = -1;
    int total = 0;
    if (x->rank == 0 && !rc) {
        for (int i = 0; i < x->size; i++) {
            displ[i] = total;
            total += cnt[i];
            (*counts)[i] = cnt[i] / (int)sizeof *mine;
        }
        all = malloc((size_t)(total ? total : 1));
    }
    ok0 = x->rank != 0 || all;
    if (PMPI_Bcast(&ok0, 1, MPI_INT, 0, comm) != MPI_SUCCESS || !ok0) {
        free(mine), free(cnt), free(displ);
        return ok0 ? -1 : 0;
    }
    if (PMPI_Gatherv(mine ? (void *)mine : (void *)&nbytes, nbytes, MPI_BYTE, all, cnt, displ, MPI_BYTE, 0, comm)
        != MPI_SUCCESS)
        rc = -1;
    free(mine);
    free(cnt);
    free(displ);
    if (x->rank == 0)
        *out = (tdr_site_info *)all;
    return rc;
}

static void free_site_gather(tdr_site_info *s[2], int *c[2])
{
    for (int k = 0; k < 2; k++) {
        free(s[k]);
        free(c[k]);
    }
}

int tdr_write_reports(tdr_rank *r, const struct td_ctx *core, const tdr_meta *meta, MPI_Comm comm)
{
    if (!meta->want_json && !meta->want_text)
        return 0;
    tdr_ctx x = {.r = r, .core = core, .meta = meta, .sites_json = tdr_sites_json};
    int err = 0;
    if (PMPI_Comm_rank(comm, &x.rank) != MPI_SUCCESS || PMPI_Comm_size(comm, &x.size) != MPI_SUCCESS)
        return -1;
    if (r->t_end <= 0)
        r->t_end = tdr_now();
    for (int c = 0; c < TDR_NCAT; c++)
        x.total += r->t_cat[c];
    x.cmdlen = tdr_read_cmdline(x.cmd, sizeof x.cmd);

    /* rank 0 picks the directory; an empty name tells everyone it failed */
    struct {
        double t0;
        char dir[TDR_DIR_MAX];
        char name[TDR_NAME_MAX];
    } hdr = {r->t_init, "", ""};
    int pfd = -1, dfd = -1, werr = 0;
    if (x.rank == 0 && (dfd = choose_dir(meta, hdr.dir, sizeof hdr.dir, hdr.name, &pfd)) < 0)
        hdr.dir[0] = '\0';
    if (PMPI_Bcast(&hdr, (int)sizeof hdr, MPI_BYTE, 0, comm) != MPI_SUCCESS) {
        tdr_close_fds(pfd, dfd);
        return -1;
    }
    if (!hdr.dir[0])
        return -1; /* rank 0 printed why */
    x.t0 = hdr.t0;
    snprintf(x.dir, sizeof x.dir, "%s", hdr.dir);

    /* the other ranks: the same directory, made on a node that does not
     * share rank 0's file system, and used only when it is ours */
    mode_t dm = TDR_DMODE(meta->group_mode), fm = TDR_FMODE(meta->group_mode);
    if (meta->want_json && x.rank != 0) {
        const char *parent = meta->report_dir && meta->report_dir[0] ? meta->report_dir : ".";
        if ((pfd = tdr_parent_open(parent, dm, &werr)) >= 0)
            dfd = tdr_dir_open(pfd, hdr.name, dm, 0, &werr);
    }
    if (meta->want_json && dfd >= 0) {
        buf b = {0};
        tdr_json_rank(&b, &x);
        char name[64];
        snprintf(name, sizeof name, "rank-%04d.json", x.rank);
        if (b.oom)
            werr = ENOMEM;
        else
            tdr_file_put(dfd, name, b.p, b.len, fm, &werr);
        free(b.p);
    }
    if (werr)
        err = -1;

    /* gather the summary records, the episodes and the call sites */
    uint64_t u[U_N];
    double d[D_N];
    tdr_fill_record(&x, u, d);
    u[U_WERR] = (uint64_t)werr;
    uint64_t *uall = NULL;
    double *dall = NULL, *epall = NULL;
    int *epcnt = NULL, *epdispl = NULL;
    if (x.rank == 0) {
        uall = calloc((size_t)x.size * U_N, sizeof *uall);
        dall = calloc((size_t)x.size * D_N, sizeof *dall);
        epcnt = calloc((size_t)x.size, sizeof *epcnt);
        epdispl = calloc((size_t)x.size, sizeof *epdispl);
        if (!uall || !dall || !epcnt || !epdispl)
            fprintf(stderr, "tdshim: out of memory for the report summary\n");
    }
    int root_ok = x.rank != 0 || (uall && dall && epcnt && epdispl);
    if (PMPI_Bcast(&root_ok, 1, MPI_INT, 0, comm) != MPI_SUCCESS || !root_ok) {
        free(uall), free(dall), free(epcnt), free(epdispl);
        tdr_close_fds(pfd, dfd);
        return -1;
    }
    int nep = (int)r->nepisodes * E_N;
    double *mine = malloc((size_t)(nep ? nep : 1) * sizeof *mine);
    if (!mine)
        nep = 0;
    for (size_t i = 0; mine && i < r->nepisodes; i++) {
        const tdr_episode *e = tdr_episode_at(r, i);
        mine[i * E_N + E_EP] = e->episode;
        mine[i * E_N + E_DETECT] = tdr_rel(&x, e->t_detect);
        mine[i * E_N + E_PASSIVE] = tdr_rel(&x, e->t_last_passive);
        mine[i * E_N + E_UNSAFE] = e->unsafe;
    }
    int mpierr = 0;
    mpierr |= PMPI_Gather(u, U_N, MPI_UINT64_T, uall, U_N, MPI_UINT64_T, 0, comm) != MPI_SUCCESS;
    mpierr |= PMPI_Gather(d, D_N, MPI_DOUBLE, dall, D_N, MPI_DOUBLE, 0, comm) != MPI_SUCCESS;
    mpierr |= PMPI_Gather(&nep, 1, MPI_INT, epcnt, 1, MPI_INT, 0, comm) != MPI_SUCCESS;
    int eptotal = 0;
    if (x.rank == 0 && !mpierr)
        for (int i = 0; i < x.size; i++) {
            epdispl[i] = eptotal;
            eptotal += epcnt[i];
        }
    /* a rank that could not copy its episodes sends none; if rank 0 cannot
     * hold them all, nobody sends any (the summary then has no episodes) */
    int ep_ok = 1;
    if (x.rank == 0) {
        epall = malloc((size_t)(eptotal ? eptotal : 1) * sizeof *epall);
        ep_ok = epall != NULL;
    }
    mpierr |= PMPI_Bcast(&ep_ok, 1, MPI_INT, 0, comm) != MPI_SUCCESS;
    if (!ep_ok) {
        nep = 0;
        if (x.rank == 0) {
            for (int i = 0; i < x.size; i++)
                epcnt[i] = epdispl[i] = 0;
            eptotal = 0;
        }
    }
    mpierr |= PMPI_Gatherv(mine ? mine : d, nep, MPI_DOUBLE, epall ? epall : d, epcnt, epdispl, MPI_DOUBLE, 0, comm)
              != MPI_SUCCESS;
    free(mine);

    tdr_site_info *sites[2] = {NULL, NULL};
    int *scount[2] = {NULL, NULL};
    int want_sites = meta->callsites_top > 0;
    for (int k = 0; k < 2 && want_sites; k++)
        mpierr |= gather_sites(&x, comm, k, &sites[k], &scount[k]) != 0;
    if (mpierr) {
        if (x.rank == 0)
            fprintf(stderr, "tdshim: MPI error while gathering the reports\n");
        err = -1;
    }

    int summary_err = 0;
    if (x.rank == 0 && !mpierr) {
        tdr_summary_in in = {uall, dall, epall, epcnt, eptotal / E_N, {sites[0], sites[1]}, {scount[0], scount[1]}};
        int sites_ok = !want_sites || (sites[0] && sites[1] && scount[0] && scount[1]);
        tdr_advice_in ain = {.nranks = x.size, .u = uall, .d = dall, .meta = meta};
        tdr_advice adv;
        if (meta->want_text) {
            buf b = {0};
            tdr_summary_text(&b, &x, &in, sites_ok);
            tdr_advice_write(&b, &ain, &adv);
            int serr = b.oom ? ENOMEM : 0;
            if (!serr && tdr_file_put(dfd, "summary.txt", b.p, b.len, fm, &serr) != 0)
                err = -1;
            summary_err = serr;
            free(b.p);
        }
        if (!meta->want_text) { /* the advice is computed with the text */
            buf nb = {0};
            tdr_advice_write(&nb, &ain, &adv);
            free(nb.p);
        }
        tdr_stderr_summary(&x, &in, adv.hint, summary_err, pfd, hdr.name);
    }
    tdr_close_fds(pfd, dfd);
    free_site_gather(sites, scount);
    free(uall), free(dall), free(epall), free(epcnt), free(epdispl);
    return err;
}

/* ------------------------------------------------------------------ */
/* At MPI_Init: what a partial report is named after                   */
/* ------------------------------------------------------------------ */

/* 64 unpredictable bits: the partial-report directory's name must not be
 * guessable from ps (issue 27), or another user could create it first */
static uint64_t run_token(void)
{
    uint64_t t = 0;
    if (getrandom(&t, sizeof t, GRND_NONBLOCK) == (ssize_t)sizeof t && t)
        return t;
    struct timespec ts; /* no entropy pool yet (early boot): better than nothing */
    clock_gettime(CLOCK_REALTIME, &ts);
    t = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15u ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 32) ^
        (uint64_t)(uintptr_t)&t;
    return t ? t : 1;
}

int tdr_run_id(tdr_rank *r, MPI_Comm comm)
{
    struct {
        double t0;
        long pid;
        uint64_t token;
        char stamp[sizeof r->run_stamp];
    } id = {r->t_init, (long)getpid(), 0, ""};
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        run_stamp(id.stamp, sizeof id.stamp);
        id.token = run_token();
    }
    /* the partial report's room, reserved now: a signal handler cannot allocate */
    if (!r->sig_buf && (r->sig_buf = malloc(TDR_SIG_BUF)) != NULL)
        r->sig_cap = TDR_SIG_BUF;
    if (PMPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, comm) != MPI_SUCCESS)
        return -1;
    r->t0_rank0 = id.t0;
    r->run_pid0 = id.pid;
    r->run_token = id.token;
    snprintf(r->run_stamp, sizeof r->run_stamp, "%s", id.stamp);
    return 0;
}
