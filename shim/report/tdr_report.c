/*
 * Per-rank JSON reports, rank 0's text summary and stderr line, and the
 * clock alignment they rely on (DESIGN.md §6, shim/report/SCHEMA.md).
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
#include "tdr_site.h"
#include "tdr_json.h"
#include "tdr_file.h"
#include "td_algo.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/random.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define TDR_SCHEMA "tdshim-report/1"
#define TDR_PATH_MAX 4096
#define TDR_DIR_MAX (TDR_PATH_MAX - 64) /* room for "/run-N" and file names */
#define TDR_SIG_EPISODES 256 /* episodes in a partial report (tdr_write_partial) */
#define TDR_SIG_BUF (192 * 1024) /* its room, reserved at MPI_Init (tdr_run_id) */

static const char *const cat_names[TDR_NCAT] = {"send", "recv", "progress", "control", "finalize"};

/* ------------------------------------------------------------------ */
/* Clock alignment                                                     */
/* ------------------------------------------------------------------ */

int tdr_clock_sync(tdr_rank *r, MPI_Comm comm)
{
    int rank, size, rc = MPI_SUCCESS;
    r->t_offset = 0;
    r->t_offset_err = 0;
    r->clock_rounds = 0;
    if (PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS || PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return -1;
    if (rank == 0) {
        /* serve the ranks one after the other so rank 0 answers at once */
        for (int peer = 1; peer < size && rc == MPI_SUCCESS; peer++)
            for (int k = 0; k < TDR_CLOCK_ROUNDS && rc == MPI_SUCCESS; k++) {
                char ping;
                rc = PMPI_Recv(&ping, 1, MPI_CHAR, peer, TDR_TAG_CLOCK, comm, MPI_STATUS_IGNORE);
                double now = tdr_now();
                if (rc == MPI_SUCCESS)
                    rc = PMPI_Send(&now, 1, MPI_DOUBLE, peer, TDR_TAG_CLOCK, comm);
            }
        if (rc != MPI_SUCCESS)
            return -1;
        r->clock_rounds = TDR_CLOCK_ROUNDS;
        return 0;
    }
    double best_rtt = INFINITY, best_off = 0;
    for (int k = 0; k < TDR_CLOCK_ROUNDS && rc == MPI_SUCCESS; k++) {
        char ping = 0;
        double t0 = tdr_now(), remote = 0;
        rc = PMPI_Send(&ping, 1, MPI_CHAR, 0, TDR_TAG_CLOCK, comm);
        if (rc == MPI_SUCCESS)
            rc = PMPI_Recv(&remote, 1, MPI_DOUBLE, 0, TDR_TAG_CLOCK, comm, MPI_STATUS_IGNORE);
        double t1 = tdr_now();
        if (rc == MPI_SUCCESS && t1 - t0 < best_rtt) {
            best_rtt = t1 - t0;
            best_off = remote - 0.5 * (t0 + t1);
        }
    }
    if (rc != MPI_SUCCESS)
        return -1;
    r->t_offset = best_off;
    r->t_offset_err = 0.5 * best_rtt;
    r->clock_rounds = TDR_CLOCK_ROUNDS;
    return 0;
}

/* ------------------------------------------------------------------ */
/* A growable text buffer with JSON helpers                            */
/* ------------------------------------------------------------------ */

typedef tdr_buf buf;

/* for the text summary (rank 0 at MPI_Finalize, never in a signal handler) */
static void bprintf(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bprintf(buf *b, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = 1;
        return;
    }
    if ((size_t)n < sizeof small) {
        tdr_put(b, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->oom = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    tdr_put(b, big, (size_t)n);
    free(big);
}

/* the JSON writer (async-signal-safe, tdr_json.h): strings valid UTF-8, cut at TDR_STR_MAX bytes */
#define TDR_STR_MAX 4096
static int bjstr(buf *b, const char *s) { return tdr_json_str(b, s ? s : "", s ? strlen(s) : 0, TDR_STR_MAX); }
#define bjnum tdr_putnum
#define jprintf tdr_putf

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

static void close_fds(int pfd, int dfd)
{
    if (dfd >= 0)
        close(dfd);
    if (pfd >= 0)
        close(pfd);
}

/* why a report directory or file could not be used, for the one warning */
static void put_why(buf *w, int e)
{
    if (e == EPERM)
        tdr_puts(w, "exists and is not ours (another user's, a symbolic link, or writable by others)");
    else
        tdr_put_errno(w, e);
}

#define TDR_NAME_MAX 96 /* a report directory's own name */

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

/* the command line from /proc (Linux), arguments joined by spaces, at most
 * cap - 1 bytes; "?" elsewhere. Returns its length. Async-signal-safe. */
static size_t read_cmdline(char *out, size_t cap)
{
    size_t n = 0;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    while (fd >= 0 && n < cap - 1) {
        ssize_t k = read(fd, out + n, cap - 1 - n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        n += (size_t)k;
    }
    if (fd >= 0)
        close(fd);
    while (n > 0 && out[n - 1] == '\0')
        n--;
    for (size_t i = 0; i < n; i++)
        if (out[i] == '\0')
            out[i] = ' ';
    if (n == 0)
        out[n++] = '?';
    out[n] = '\0';
    return n;
}

/* ------------------------------------------------------------------ */
/* The per-rank record gathered at rank 0 for the summary              */
/* ------------------------------------------------------------------ */

enum {
    U_PSENT, U_PSENT_B, U_PRECV, U_PRECV_B, U_PB_S, U_PB_R, U_CTLB_S, U_CTLB_R,
    U_CTL_S, U_CTL_R, U_POLLS, U_EMPTY, U_IGN, U_CANC, U_NOHDR, U_UNRECV, U_NOTIF,
    U_WAVES, U_B2I, U_I2B, U_VIOL, U_BUSYAGAIN, U_UNSAFE, U_BORROW, U_FLUSH, U_HELD, U_NEP,
    U_BUSYGAPS, U_VOTHER, U_ETESTS, U_XSENT, U_XRECV, U_THREADS, U_TLATE, U_UNSCOPED,
    U_CANDP, /* TDR_NCAND: times each candidate notion judged the rank passive (measure mode) */
    U_CANDB = U_CANDP + TDR_NCAND, /* TDR_NCAND: ...and its breaches */
    U_WERR = U_CANDB + TDR_NCAND, /* errno of this rank's failed JSON file (0: written) */
    U_UTAG, /* TDR_UNRECV_TAGS (tag + 1, 0: none) then as many message counts */
    U_VTAG = U_UTAG + 2 * TDR_UNRECV_TAGS, /* TDR_VIOL_TAGS x (tag + 1, messages, empty, bytes) */
    U_WTAG = U_VTAG + 4 * TDR_VIOL_TAGS,   /* TDR_VIOL_TAGS x (tag + 1, times): tags that carried work */
    U_NCAT = U_WTAG + 2 * TDR_VIOL_TAGS,
    U_CTLT_S = U_NCAT + TDR_NCAT,
    U_CTLT_R = U_CTLT_S + 2 * TD_MAX_TYPES,
    U_N = U_CTLT_R + 2 * TD_MAX_TYPES
};
enum { D_WALL, D_TCAT, D_TOTAL = D_TCAT + TDR_NCAT, D_OFF, D_OFFERR, D_I2E, D_BUSYGAP, D_N };

/* an episode as rank 0 sees it: aligned times relative to rank 0's MPI_Init */
enum { E_EP, E_DETECT, E_PASSIVE, E_UNSAFE, E_N };

typedef struct ctx {
    tdr_rank *r;
    const td_ctx *core;
    const tdr_meta *meta;
    int rank, size;
    double t0;  /* rank 0's t_init, the origin of every reported time */
    char dir[TDR_DIR_MAX];
    /* the command line: up to TDR_STR_MAX bytes are written, and 4 more are
     * read so that a character begun before the cut is read whole */
    char cmd[TDR_STR_MAX + 5];
    size_t cmdlen;
    int sigsafe; /* written in a signal handler (tdr_write_partial): no call sites, at most TDR_SIG_EPISODES episodes */
    double total; /* time in tdshim, all categories */
    const char *partial_why, *partial_state; /* tdr_write_partial: why and the detection state */
} ctx;

/* MPI_Init to the end of tdshim's own MPI_Finalize work: t_end is taken at
 * MPI_Finalize entry and the finalize category is all spent after it, so
 * the percentages of this wall time cover everything tdshim did */
static double wall_of(const tdr_rank *r) { return r->t_end - r->t_init + r->t_cat[TDR_CAT_FINALIZE]; }

static double rel(const ctx *x, double local) { return local > 0 ? local + x->r->t_offset - x->t0 : NAN; }

static void fill_record(const ctx *x, uint64_t u[U_N], double d[D_N])
{
    const tdr_rank *r = x->r;
    memset(u, 0, U_N * sizeof *u);
    u[U_PSENT] = r->prim_sent;
    u[U_PSENT_B] = r->prim_sent_bytes;
    u[U_PRECV] = r->prim_recv;
    u[U_PRECV_B] = r->prim_recv_bytes;
    u[U_PB_S] = r->pb_bytes_sent;
    u[U_PB_R] = r->pb_bytes_recv;
    u[U_CTLB_S] = r->ctl_bytes_sent;
    u[U_CTLB_R] = r->ctl_bytes_recv;
    u[U_POLLS] = r->polls;
    u[U_EMPTY] = r->empty_polls;
    u[U_BUSYGAPS] = r->busy_gaps;
    u[U_ETESTS] = r->empty_tests;
    u[U_VOTHER] = r->viol_tags_other;
    u[U_IGN] = r->ignored_msgs;
    u[U_CANC] = r->cancelled_recvs;
    u[U_NOHDR] = r->nohdr_msgs;
    u[U_XSENT] = r->xjob_sent;
    u[U_XRECV] = r->xjob_recv;
    u[U_UNRECV] = r->unreceived;
    u[U_THREADS] = r->threads_max;
    u[U_TLATE] = r->threads_late;
    u[U_UNSCOPED] = r->unscoped_polls;
    for (int t = 0; t < r->nwork_tags && t < TDR_VIOL_TAGS; t++) {
        u[U_WTAG + 2 * t] = (uint64_t)(r->work_tags[t].tag + 1);
        u[U_WTAG + 2 * t + 1] = r->work_tags[t].times;
    }
    for (int c = 0; c < TDR_NCAND; c++) {
        u[U_CANDP + c] = r->cand_passive[c];
        u[U_CANDB + c] = r->cand_breach[c];
    }
    for (int i = 0; i < r->nunrecv_tags; i++) {
        u[U_UTAG + i] = (uint64_t)r->unrecv_tags[i].tag + 1;
        u[U_UTAG + TDR_UNRECV_TAGS + i] = r->unrecv_tags[i].messages;
    }
    for (int i = 0; i < r->nviol_tags; i++) {
        u[U_VTAG + 4 * i] = (uint64_t)r->viol_tags[i].tag + 1;
        u[U_VTAG + 4 * i + 1] = r->viol_tags[i].messages;
        u[U_VTAG + 4 * i + 2] = r->viol_tags[i].empty;
        u[U_VTAG + 4 * i + 3] = r->viol_tags[i].bytes;
    }
    u[U_NOTIF] = r->notifications;
    u[U_NEP] = r->nepisodes;
    for (int c = 0; c < TDR_NCAT; c++)
        u[U_NCAT + c] = r->n_cat[c];
    if (x->core) {
        const td_stats *s = &x->core->stats;
        for (int e = 0; e < 2; e++)
            for (int t = 0; t < TD_MAX_TYPES; t++) {
                u[U_CTLT_S + e * TD_MAX_TYPES + t] = s->ctl_sent[e][t];
                u[U_CTLT_R + e * TD_MAX_TYPES + t] = s->ctl_recv[e][t];
                u[U_CTL_S] += s->ctl_sent[e][t];
                u[U_CTL_R] += s->ctl_recv[e][t];
            }
        u[U_WAVES] = s->waves;
        u[U_B2I] = s->busy_to_idle;
        u[U_I2B] = s->idle_to_busy;
        u[U_VIOL] = s->violations;
        u[U_BUSYAGAIN] = s->busy_again;
        u[U_UNSAFE] = s->unsafe;
        u[U_BORROW] = s->borrows;
        u[U_FLUSH] = s->flushes;
        u[U_HELD] = s->held;
    }
    d[D_WALL] = wall_of(r);
    d[D_BUSYGAP] = r->busy_gap_s;
    for (int c = 0; c < TDR_NCAT; c++)
        d[D_TCAT + c] = r->t_cat[c];
    d[D_TOTAL] = x->total;
    d[D_OFF] = r->t_offset;
    d[D_OFFERR] = r->t_offset_err;
    /* Idle2End of the last episode, the one that ended the run */
    d[D_I2E] = NAN;
    if (r->nepisodes) {
        const tdr_episode *e = &r->episodes[r->nepisodes - 1];
        if (e->t_last_passive > 0)
            d[D_I2E] = e->t_detect - e->t_last_passive;
    }
}

/* ------------------------------------------------------------------ */
/* Per-rank JSON (schema: SCHEMA.md, schema.json)                      */
/* ------------------------------------------------------------------ */

static const char *thread_level(int level)
{
    switch (level) {
    case MPI_THREAD_SINGLE: return "single";
    case MPI_THREAD_FUNNELED: return "funneled";
    case MPI_THREAD_SERIALIZED: return "serialized";
    case MPI_THREAD_MULTIPLE: return "multiple";
    default: return "unknown";
    }
}

static void json_sites(buf *b, const tdr_sites *s, int kind, int topn)
{
    uint64_t count, unattr;
    double secs;
    tdr_sites_totals(s, kind, &count, &secs, &unattr);
    jprintf(b, "{\"total\": %llu, \"seconds\": ", (unsigned long long)count);
    bjnum(b, secs);
    jprintf(b, ", \"unattributed\": %llu, \"distinct\": %d, \"top\": [",
            (unsigned long long)unattr, tdr_sites_distinct(s, kind));
    tdr_site_info *top = topn > 0 ? calloc((size_t)topn, sizeof *top) : NULL;
    int n = top ? tdr_sites_top(s, kind, top, topn) : 0;
    for (int i = 0; i < n; i++) {
        jprintf(b, "%s\n      {\"function\": ", i ? "," : "");
        bjstr(b, top[i].func);
        jprintf(b, ", \"offset\": %llu, \"module\": ", (unsigned long long)top[i].offset);
        bjstr(b, top[i].module);
        jprintf(b, ", \"count\": %llu, \"seconds\": ", (unsigned long long)top[i].count);
        bjnum(b, top[i].seconds);
        jprintf(b, "}");
    }
    free(top);
    jprintf(b, "]}");
}

static void json_rank(buf *b, const ctx *x)
{
    const tdr_rank *r = x->r;
    const tdr_meta *m = x->meta;
    double wall = wall_of(r);
    struct utsname un; /* uname, not gethostname: async-signal-safe */
    const char *host = uname(&un) == 0 ? un.nodename : "?";

    jprintf(b, "{\n  \"schema\": \"" TDR_SCHEMA "\",\n  \"tdshim_version\": ");
    bjstr(b, m->version);
    jprintf(b, ",\n  \"rank\": %d,\n  \"size\": %d,\n  \"host\": ", x->rank, x->size);
    bjstr(b, host);
    jprintf(b, ",\n  \"pid\": %ld,\n  \"command\": ", (long)getpid());
    int cut = tdr_json_str(b, x->cmd, x->cmdlen, TDR_STR_MAX);
    jprintf(b, ",\n  \"command_truncated\": %s", cut ? "true" : "false");
    jprintf(b, ",\n  \"algorithm\": ");
    bjstr(b, m->algo);
    jprintf(b, ",\n  \"partial\": ");
    if (x->partial_why) {
        jprintf(b, "{\"reason\": ");
        bjstr(b, x->partial_why);
        jprintf(b, ", \"detection_state\": ");
        bjstr(b, x->partial_state ? x->partial_state : "");
        if (x->sigsafe && r->nepisodes > TDR_SIG_EPISODES)
            jprintf(b, ", \"episodes_omitted\": %llu", (unsigned long long)(r->nepisodes - TDR_SIG_EPISODES));
        jprintf(b, "}");
    } else {
        jprintf(b, "null");
    }
    jprintf(b, ",\n  \"config\": {");
    for (int i = 0; i < m->nconfig; i++) {
        jprintf(b, "%s\n    ", i ? "," : "");
        bjstr(b, m->config[i].key);
        jprintf(b, ": ");
        bjstr(b, m->config[i].value);
    }
    jprintf(b, "},\n  \"thread_level\": {\"requested\": \"%s\", \"provided\": \"%s\", \"threads_using_mpi\": %u, "
               "\"late_threads\": %llu},\n",
            thread_level(r->thread_requested), thread_level(r->thread_provided), (unsigned)r->threads_max,
            (unsigned long long)r->threads_late);
    jprintf(b, "  \"clock\": {\"source\": \"CLOCK_MONOTONIC\", \"offset_to_rank0_s\": ");
    bjnum(b, r->t_offset);
    jprintf(b, ", \"offset_error_s\": ");
    bjnum(b, r->t_offset_err);
    /* the ping-pongs are point-to-point traffic too (e.g. for pml monitoring) */
    int peers = x->rank == 0 ? x->size - 1 : 1;
    jprintf(b, ", \"sync_rounds\": %d, \"sync_messages_sent\": %d, \"sync_bytes_sent\": %d",
            r->clock_rounds, peers * r->clock_rounds,
            peers * r->clock_rounds * (x->rank == 0 ? (int)sizeof(double) : 1));
    jprintf(b, ", \"origin\": \"rank 0 MPI_Init\"},\n  \"t_init_s\": ");
    bjnum(b, rel(x, r->t_init));
    jprintf(b, ",\n  \"t_finalize_s\": ");
    bjnum(b, rel(x, r->t_end));
    jprintf(b, ",\n  \"wall_s\": ");
    bjnum(b, wall);

    jprintf(b, ",\n  \"tdshim_time\": {\"total_s\": ");
    bjnum(b, x->total);
    jprintf(b, ", \"percent_of_wall\": ");
    bjnum(b, wall > 0 ? 100 * x->total / wall : NAN);
    jprintf(b, ", \"categories\": {");
    for (int c = 0; c < TDR_NCAT; c++) {
        jprintf(b, "%s\n    \"%s\": {\"seconds\": ", c ? "," : "", cat_names[c]);
        bjnum(b, r->t_cat[c]);
        jprintf(b, ", \"calls\": %llu, \"percent_of_wall\": ", (unsigned long long)r->n_cat[c]);
        bjnum(b, wall > 0 ? 100 * r->t_cat[c] / wall : NAN);
        jprintf(b, "}");
    }
    jprintf(b, "}},\n");

    jprintf(b, "  \"primary\": {\"sent\": %llu, \"sent_bytes\": %llu, \"received\": %llu, "
               "\"received_bytes\": %llu,\n    \"piggyback_bytes_sent\": %llu, "
               "\"piggyback_bytes_received\": %llu, \"ignored\": %llu, \"cancelled_receives\": %llu, "
               "\"without_header\": %llu, \"unreceived_at_finalize\": %llu,\n    \"unreceived_by_tag\": [",
            (unsigned long long)r->prim_sent, (unsigned long long)r->prim_sent_bytes,
            (unsigned long long)r->prim_recv, (unsigned long long)r->prim_recv_bytes,
            (unsigned long long)r->pb_bytes_sent, (unsigned long long)r->pb_bytes_recv,
            (unsigned long long)r->ignored_msgs, (unsigned long long)r->cancelled_recvs,
            (unsigned long long)r->nohdr_msgs, (unsigned long long)r->unreceived);
    for (int i = 0; i < r->nunrecv_tags; i++)
        jprintf(b, "%s{\"tag\": %d, \"messages\": %llu, \"bytes\": %llu}", i ? ", " : "", r->unrecv_tags[i].tag,
                (unsigned long long)r->unrecv_tags[i].messages, (unsigned long long)r->unrecv_tags[i].bytes);
    jprintf(b, "], \"unreceived_other_tags\": %llu,\n    \"other_jobs\": {\"sent\": %llu, \"sent_bytes\": %llu, "
               "\"received\": %llu, \"received_bytes\": %llu}},\n",
            (unsigned long long)r->unrecv_tags_other, (unsigned long long)r->xjob_sent,
            (unsigned long long)r->xjob_sent_bytes, (unsigned long long)r->xjob_recv,
            (unsigned long long)r->xjob_recv_bytes);
    jprintf(b, "  \"polls\": {\"total\": %llu, \"empty\": %llu, \"empty_tests\": %llu, \"busy_gaps\": %llu, "
               "\"busy_gap_s\": ",
            (unsigned long long)r->polls, (unsigned long long)r->empty_polls, (unsigned long long)r->empty_tests,
            (unsigned long long)r->busy_gaps);
    bjnum(b, r->busy_gap_s);
    jprintf(b, ", \"unscoped\": %llu,\n    \"candidates\": {", (unsigned long long)r->unscoped_polls);
    static const char *const cand_names[] = TDR_CAND_NAMES;
    for (int c = 0; c < TDR_NCAND; c++)
        jprintf(b, "%s\"%s\": {\"passive\": %llu, \"breaches\": %llu}", c ? ", " : "", cand_names[c],
                (unsigned long long)r->cand_passive[c], (unsigned long long)r->cand_breach[c]);
    jprintf(b, "},\n    \"work_tags\": [");
    for (int t = 0; t < r->nwork_tags; t++)
        jprintf(b, "%s{\"tag\": %d, \"times\": %llu}", t ? ", " : "", r->work_tags[t].tag,
                (unsigned long long)r->work_tags[t].times);
    jprintf(b, "]},\n");

    uint64_t ns = 0, nr = 0;
    jprintf(b, "  \"control\": {\"bytes_sent\": %llu, \"bytes_received\": %llu, \"by_type\": [",
            (unsigned long long)r->ctl_bytes_sent, (unsigned long long)r->ctl_bytes_recv);
    int first = 1;
    if (x->core) {
        const td_stats *s = &x->core->stats;
        for (int e = 0; e < 2; e++) {
            int nt = e == 0 ? TD_EM_NTYPES : x->core->algo->ntypes;
            for (int t = 0; t < nt; t++) {
                jprintf(b, "%s\n    {\"name\": ", first ? "" : ",");
                first = 0;
                bjstr(b, td_type_name(x->core, e == 0, t));
                /* control messages have a fixed size (td_core.h wire format) */
                jprintf(b, ", \"engine\": %s, \"sent\": %llu, \"received\": %llu, \"bytes_sent\": %llu, "
                           "\"bytes_received\": %llu}",
                        e == 0 ? "true" : "false", (unsigned long long)s->ctl_sent[e][t],
                        (unsigned long long)s->ctl_recv[e][t], (unsigned long long)s->ctl_sent[e][t] * TD_WIRE_SIZE,
                        (unsigned long long)s->ctl_recv[e][t] * TD_WIRE_SIZE);
                ns += s->ctl_sent[e][t];
                nr += s->ctl_recv[e][t];
            }
        }
    }
    jprintf(b, "],\n    \"sent\": %llu, \"received\": %llu},\n", (unsigned long long)ns, (unsigned long long)nr);

    td_stats zero = {0};
    const td_stats *s = x->core ? &x->core->stats : &zero;
    jprintf(b, "  \"detection\": {\"waves\": %llu, \"busy_to_idle\": %llu, \"idle_to_busy\": %llu, "
               "\"violations\": %llu,\n    \"violations_by_tag\": [",
            (unsigned long long)s->waves, (unsigned long long)s->busy_to_idle,
            (unsigned long long)s->idle_to_busy, (unsigned long long)s->violations);
    for (int i = 0; i < r->nviol_tags; i++)
        jprintf(b, "%s{\"tag\": %d, \"messages\": %llu, \"empty\": %llu, \"bytes\": %llu}", i ? ", " : "",
                r->viol_tags[i].tag, (unsigned long long)r->viol_tags[i].messages,
                (unsigned long long)r->viol_tags[i].empty, (unsigned long long)r->viol_tags[i].bytes);
    jprintf(b, "], \"violations_other_tags\": %llu", (unsigned long long)r->viol_tags_other);
    jprintf(b, ", \"borrows\": %llu, \"flushes\": %llu, \"held_control\": %llu, "
               "\"quiescent_clean\": %llu, \"notifications\": %llu,\n    \"busy_again\": %llu, "
               "\"unsafe\": %llu, \"unsafe_episode\": %u, \"confirmed\": %llu, \"refuted\": %llu, "
               "\"collective_confirms\": %llu, \"core_error\": ",
            (unsigned long long)s->borrows, (unsigned long long)s->flushes, (unsigned long long)s->held,
            (unsigned long long)s->quiescent_clean, (unsigned long long)r->notifications,
            (unsigned long long)s->busy_again, (unsigned long long)s->unsafe, s->unsafe_episode,
            (unsigned long long)s->confirmed, (unsigned long long)s->refuted, (unsigned long long)s->coll_confirms);
    if (x->core && x->core->error)
        bjstr(b, x->core->errmsg);
    else
        jprintf(b, "null");
    /* which evidence of premature announcements Check looked at, which it
     * cannot see in this run (header-free: no stamps), and how much of each
     * this rank found (td_engine.c, "Premature announcements") */
    jprintf(b, ",\n    \"unsafe_by\": {");
    for (int k = 0; k < TD_EV_N; k++)
        jprintf(b, "%s\"%s\": %llu", k ? ", " : "", td_ev_names[k], (unsigned long long)s->unsafe_by[k]);
    jprintf(b, "}, \"evidence_checked\": [");
    for (int k = 0, n = 0; k < TD_EV_N; k++)
        if (k != TD_EV_PRIMARY || x->meta->stamped)
            jprintf(b, "%s\"%s\"", n++ ? ", " : "", td_ev_names[k]);
    jprintf(b, "], \"evidence_unseen\": [%s]", x->meta->stamped ? "" : "\"late-primary\"");
    jprintf(b, "},\n  \"last_passive_s\": ");
    bjnum(b, rel(x, r->t_last_passive));

    jprintf(b, ",\n  \"episodes\": [");
    /* in a signal handler the last TDR_SIG_EPISODES (the room reserved at MPI_Init) */
    size_t ep0 = x->sigsafe && r->nepisodes > TDR_SIG_EPISODES ? r->nepisodes - TDR_SIG_EPISODES : 0;
    for (size_t i = ep0; i < r->nepisodes; i++) {
        const tdr_episode *e = &r->episodes[i];
        jprintf(b, "%s\n    {\"episode\": %u, \"t_detect_s\": ", i > ep0 ? "," : "", (unsigned)e->episode);
        bjnum(b, rel(x, e->t_detect));
        jprintf(b, ", \"t_last_passive_s\": ");
        bjnum(b, rel(x, e->t_last_passive));
        jprintf(b, ", \"idle2end_s\": ");
        bjnum(b, e->t_last_passive > 0 ? e->t_detect - e->t_last_passive : NAN);
        jprintf(b, ", \"unsafe\": %s, \"unsafe_evidence\": [", e->unsafe ? "true" : "false");
        for (int k = 0, n = 0; k < TD_EV_N; k++)
            if (e->unsafe & 1u << k)
                jprintf(b, "%s\"%s\"", n++ ? ", " : "", td_ev_names[k]);
        jprintf(b, "], \"unsafe_why\": ");
        if (e->unsafe_why[0])
            bjstr(b, e->unsafe_why);
        else
            jprintf(b, "null");
        jprintf(b, "}");
    }
    jprintf(b, "],\n");

    int requested = m->callsites_top > 0;
    /* the table is not read in a signal handler: the handler may have
     * interrupted an update of it, and sorting it allocates */
    int available = r->sites != NULL && !x->sigsafe;
    jprintf(b, "  \"callsites\": {\"requested\": %s, \"available\": %s, \"top\": %d",
            requested ? "true" : "false", available ? "true" : "false", m->callsites_top);
    if (requested && !available && x->sigsafe) {
        jprintf(b, ", \"reason\": \"not written by a signal handler (partial report)\"");
    } else if (requested && !available) {
#ifdef HAVE_LIBUNWIND
        jprintf(b, ", \"reason\": \"call-site table could not be set up\"");
#else
        jprintf(b, ", \"reason\": \"tdshim was built without libunwind\"");
#endif
    }
    if (available) {
        jprintf(b, ",\n    \"poll\": ");
        json_sites(b, r->sites, TDR_SITE_POLL, m->callsites_top);
        jprintf(b, ",\n    \"send\": ");
        json_sites(b, r->sites, TDR_SITE_SEND, m->callsites_top);
    }
    jprintf(b, "}\n}\n");
}

/* ------------------------------------------------------------------ */
/* Rank 0: the text summary                                            */
/* ------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* min, median, max of v[i*stride+off] over the ranks that have a value */
static void stats3(const double *v, int n, int stride, int off, double out[3])
{
    double *t = malloc((size_t)(n ? n : 1) * sizeof *t);
    int k = 0;
    for (int i = 0; t && i < n; i++)
        if (isfinite(v[i * stride + off]))
            t[k++] = v[i * stride + off];
    if (!k) {
        out[0] = out[1] = out[2] = NAN;
    } else {
        qsort(t, (size_t)k, sizeof *t, cmp_double);
        out[0] = t[0];
        out[1] = k % 2 ? t[k / 2] : 0.5 * (t[k / 2 - 1] + t[k / 2]);
        out[2] = t[k - 1];
    }
    free(t);
}

static void stats3u(const uint64_t *u, int n, int idx, double out[3])
{
    double *t = malloc((size_t)(n ? n : 1) * sizeof *t);
    if (!t) {
        out[0] = out[1] = out[2] = NAN;
        return;
    }
    for (int i = 0; i < n; i++)
        t[i] = (double)u[(size_t)i * U_N + idx];
    stats3(t, n, 1, 0, out);
    free(t);
}

typedef struct summary_in {
    const uint64_t *u;      /* size * U_N */
    const double *d;        /* size * D_N */
    const double *ep;       /* E_N per gathered episode */
    const int *ep_count;    /* per rank */
    int nep_total;
    const tdr_site_info *sites[2]; /* gathered top sites, per kind */
    const int *site_count[2];      /* per rank */
} summary_in;

static void text_header(buf *b, const ctx *x)
{
    const tdr_meta *m = x->meta;
    time_t now = time(NULL);
    char when[64];
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S %z", localtime(&now));
    bprintf(b, "@ tdshim report (" TDR_SCHEMA ")\n@--- Header ---\n");
    bprintf(b, "@ Command     : %s\n@ Ranks       : %d\n@ Algorithm   : %s\n@ Version     : tdshim %s\n",
            x->cmd, x->size, m->algo ? m->algo : "?", m->version ? m->version : "?");
    bprintf(b, "@ Written     : %s\n@ Directory   : %s\n", when, x->dir);
    bprintf(b, "@ Clocks      : CLOCK_MONOTONIC per rank, aligned to rank 0 by %d ping-pongs at MPI_Init "
               "(Cristian); times are seconds since rank 0's MPI_Init\n", TDR_CLOCK_ROUNDS);
    bprintf(b, "@ Thread level: requested %s, provided %s (rank 0)", thread_level(x->r->thread_requested),
            thread_level(x->r->thread_provided));
    if (x->r->threads_max)
        bprintf(b, "; threads using MPI at once: %u (rank 0)", (unsigned)x->r->threads_max);
    bprintf(b, "\n");
    bprintf(b, "@ Configuration:\n");
    for (int i = 0; i < m->nconfig; i++)
        bprintf(b, "@   %-26s %s\n", m->config[i].key, m->config[i].value);
}

static void text_per_rank(buf *b, const ctx *x, const summary_in *in)
{
    bprintf(b, "\n@--- Overhead per rank (seconds; %% of the rank's wall time, MPI_Init to the end of MPI_Finalize's "
               "tdshim work) ---\n");
    bprintf(b, "%5s %10s %10s %7s", "Rank", "Wall", "tdshim", "%");
    for (int c = 0; c < TDR_NCAT; c++)
        bprintf(b, " %9s", cat_names[c]);
    bprintf(b, " %10s %10s %8s %8s %6s\n", "PrimSent", "PrimRecv", "CtlSent", "CtlRecv", "Viol");
    for (int i = 0; i < x->size; i++) {
        const double *d = in->d + (size_t)i * D_N;
        const uint64_t *u = in->u + (size_t)i * U_N;
        bprintf(b, "%5d %10.4f %10.6f %7.3f", i, d[D_WALL], d[D_TOTAL], d[D_WALL] > 0 ? 100 * d[D_TOTAL] / d[D_WALL] : 0.0);
        for (int c = 0; c < TDR_NCAT; c++)
            bprintf(b, " %9.6f", d[D_TCAT + c]);
        bprintf(b, " %10llu %10llu %8llu %8llu %6llu\n", (unsigned long long)u[U_PSENT], (unsigned long long)u[U_PRECV],
                (unsigned long long)u[U_CTL_S], (unsigned long long)u[U_CTL_R], (unsigned long long)u[U_VIOL]);
    }
}

static void text_across(buf *b, const ctx *x, const summary_in *in)
{
    int n = x->size;
    double pct[n > 0 ? n : 1];
    for (int i = 0; i < n; i++) {
        const double *d = in->d + (size_t)i * D_N;
        pct[i] = d[D_WALL] > 0 ? 100 * d[D_TOTAL] / d[D_WALL] : NAN;
    }
    bprintf(b, "\n@--- Across ranks (min / median / max) ---\n");
    bprintf(b, "%-28s %14s %14s %14s\n", "Metric", "min", "median", "max");
    double s[3];
#define ROWD(name, off) do { stats3(in->d, n, D_N, (off), s); \
        bprintf(b, "%-28s %14.6g %14.6g %14.6g\n", (name), s[0], s[1], s[2]); } while (0)
#define ROWU(name, idx) do { stats3u(in->u, n, (idx), s); \
        bprintf(b, "%-28s %14.0f %14.1f %14.0f\n", (name), s[0], s[1], s[2]); } while (0)
    ROWD("wall time (s)", D_WALL);
    ROWD("time in tdshim (s)", D_TOTAL);
    stats3(pct, n, 1, 0, s);
    bprintf(b, "%-28s %14.6g %14.6g %14.6g\n", "time in tdshim (% of wall)", s[0], s[1], s[2]);
    for (int c = 0; c < TDR_NCAT; c++) {
        char name[64];
        snprintf(name, sizeof name, "  %s (s)", cat_names[c]);
        ROWD(name, D_TCAT + c);
    }
    ROWU("primary messages sent", U_PSENT);
    ROWU("primary messages received", U_PRECV);
    ROWU("primary bytes sent", U_PSENT_B);
    ROWU("primary bytes received", U_PRECV_B);
    ROWU("piggyback bytes sent", U_PB_S);
    ROWU("control messages sent", U_CTL_S);
    ROWU("control messages received", U_CTL_R);
    ROWU("control bytes sent", U_CTLB_S);
    ROWU("polls", U_POLLS);
    ROWU("empty polls", U_EMPTY);
    ROWU("sweeps/waves", U_WAVES);
    ROWU("busy->idle transitions", U_B2I);
    ROWU("idle->busy transitions", U_I2B);
    ROWU("contract violations", U_VIOL);
    ROWU("receives without header", U_NOHDR);
    ROWU("messages to other jobs", U_XSENT);
    ROWU("messages from other jobs", U_XRECV);
    ROWU("busy again (spin notion)", U_BUSYAGAIN);
    ROWU("unsafe (premature) announcements", U_UNSAFE);
    ROWU("credit borrows", U_BORROW);
    ROWU("credit flushes", U_FLUSH);
    ROWD("Idle2End, last episode (s)", D_I2E);
    ROWD("clock offset to rank 0 (s)", D_OFF);
    ROWD("clock offset error (s)", D_OFFERR);
#undef ROWD
#undef ROWU
}

static void text_control(buf *b, const ctx *x, const summary_in *in)
{
    bprintf(b, "\n@--- Control messages (by type, all ranks) ---\n");
    if (!x->core) {
        bprintf(b, "no algorithm core\n");
        return;
    }
    bprintf(b, "%-14s %-9s %12s %12s %12s %10s %10s %10s\n", "Type", "Kind", "Sent", "Received", "BytesSent",
            "min/rank", "med/rank", "max/rank");
    for (int e = 0; e < 2; e++) {
        int nt = e == 0 ? TD_EM_NTYPES : x->core->algo->ntypes;
        for (int t = 0; t < nt; t++) {
            int is = U_CTLT_S + e * TD_MAX_TYPES + t, ir = U_CTLT_R + e * TD_MAX_TYPES + t;
            unsigned long long ts = 0, tr = 0;
            for (int i = 0; i < x->size; i++) {
                ts += in->u[(size_t)i * U_N + is];
                tr += in->u[(size_t)i * U_N + ir];
            }
            double s[3];
            stats3u(in->u, x->size, is, s);
            bprintf(b, "%-14s %-9s %12llu %12llu %12llu %10.0f %10.1f %10.0f\n", td_type_name(x->core, e == 0, t),
                    e == 0 ? "engine" : "algorithm", ts, tr, ts * TD_WIRE_SIZE, s[0], s[1], s[2]);
        }
    }
    unsigned long long bs = 0, br = 0;
    for (int i = 0; i < x->size; i++) {
        bs += in->u[(size_t)i * U_N + U_CTLB_S];
        br += in->u[(size_t)i * U_N + U_CTLB_R];
    }
    bprintf(b, "control bytes sent %llu, received %llu\n", bs, br);
}

/* Per episode (SCHEMA.md, "Derived quantities"): LastPassive is the latest
 * busy->idle transition, over the ranks, that came before the episode's
 * first detection; a rank whose last transition came after it (it had
 * begun the next phase's work, a message from a rank notified earlier, or
 * the announcement was premature) is counted in Late instead, so LastPassive
 * never exceeds FirstDetect. Check: UNSAFE when a rank proved the
 * announcement premature (detection.unsafe). Every column is defined for
 * every episode; "-" only when no rank has a transition before it. */
/* What Check looks at, and what it cannot see in this run */
static void text_evidence_checked(buf *b, const ctx *x)
{
    bprintf(b, "Check looked at: late-control, %ssend-after%s.\n", x->meta->stamped ? "late-primary, " : "",
            x->meta->stamped ? "" : "; it cannot see late-primary in a header-free run (the episode's stamp "
                                    "travels in tdshim's header: TDSHIM_PIGGYBACK=copy shows it)");
}

static void text_episodes(buf *b, const ctx *x, const summary_in *in)
{
    bprintf(b, "\n@--- Detection episodes and latency (aligned clocks, seconds since rank 0's MPI_Init) ---\n");
    uint32_t maxep = 0;
    for (int k = 0; k < in->nep_total; k++)
        if (in->ep[k * E_N + E_EP] > maxep)
            maxep = (uint32_t)in->ep[k * E_N + E_EP];
    if (!maxep) {
        bprintf(b, "no episode was detected\n");
        return;
    }
    bprintf(b, "%7s %6s %14s %14s %14s %14s %12s %12s %5s %7s\n", "Episode", "Ranks", "LastPassive", "FirstDetect",
            "LastDetect", "Latency", "I2E min", "I2E max", "Late", "Check");
    for (uint32_t ep = 1; ep <= maxep; ep++) {
        int ranks = 0, late = 0;
        unsigned unsafe = 0;
        double lp = -INFINITY, fd = INFINITY, ld = -INFINITY, imin = INFINITY, imax = -INFINITY;
        for (int k = 0; k < in->nep_total; k++) {
            const double *e = in->ep + (size_t)k * E_N;
            if ((uint32_t)e[E_EP] != ep)
                continue;
            ranks++;
            unsafe |= (unsigned)e[E_UNSAFE];
            if (e[E_DETECT] < fd)
                fd = e[E_DETECT];
            if (e[E_DETECT] > ld)
                ld = e[E_DETECT];
            if (isfinite(e[E_PASSIVE])) {
                double i2e = e[E_DETECT] - e[E_PASSIVE];
                imin = i2e < imin ? i2e : imin;
                imax = i2e > imax ? i2e : imax;
            }
        }
        if (!ranks)
            continue;
        for (int k = 0; k < in->nep_total; k++) {
            const double *e = in->ep + (size_t)k * E_N;
            if ((uint32_t)e[E_EP] != ep || !isfinite(e[E_PASSIVE]))
                continue;
            if (e[E_PASSIVE] > fd)
                late++;
            else if (e[E_PASSIVE] > lp)
                lp = e[E_PASSIVE];
        }
        bprintf(b, "%7u %6d ", (unsigned)ep, ranks);
        if (isfinite(lp))
            bprintf(b, "%14.6f ", lp);
        else
            bprintf(b, "%14s ", "-");
        bprintf(b, "%14.6f %14.6f ", fd, ld);
        if (isfinite(lp))
            bprintf(b, "%14.6f ", ld - lp);
        else
            bprintf(b, "%14s ", "-");
        if (isfinite(imin))
            bprintf(b, "%12.6f %12.6f ", imin, imax);
        else
            bprintf(b, "%12s %12s ", "-", "-");
        bprintf(b, "%5d %7s\n", late, unsafe ? "UNSAFE" : "ok");
    }
    for (uint32_t ep = 1; ep <= maxep; ep++) { /* the evidence, one line per UNSAFE episode */
        unsigned unsafe = 0;
        for (int k = 0; k < in->nep_total; k++)
            if ((uint32_t)in->ep[k * E_N + E_EP] == ep)
                unsafe |= (unsigned)in->ep[k * E_N + E_UNSAFE];
        if (!unsafe)
            continue;
        bprintf(b, "Episode %u UNSAFE, evidence:", (unsigned)ep);
        for (int k = 0, n = 0; k < TD_EV_N; k++)
            if (unsafe & 1u << k)
                bprintf(b, "%s%s", n++ ? ", " : " ", td_ev_names[k]);
        bprintf(b, "\n");
    }
    bprintf(b, "Latency = last rank's detection - LastPassive, the last busy->idle transition before the first "
               "detection (global detection latency); I2E = Idle2End per rank; Late = ranks whose last transition "
               "came after the first detection (next phase's work already begun, or a premature announcement); "
               "UNSAFE = a rank proved the announcement premature (contract violation, or a rank judged passive "
               "that still worked); its evidence: late-control / late-primary = a control / primary message of "
               "the announced episode arrived after it; send-after = a rank sent a primary after learning the "
               "announcement with no message received, no collective and no notification (the ranks' reports "
               "give it in words: episodes[].unsafe_why).\n");
    text_evidence_checked(b, x);
}

typedef struct agg_site {
    tdr_site_info s;
    int ranks;
} agg_site;

static int agg_cmp(const void *a, const void *b)
{
    const agg_site *x = a, *y = b;
    if (x->s.count != y->s.count)
        return x->s.count < y->s.count ? 1 : -1;
    return (x->s.seconds < y->s.seconds) - (x->s.seconds > y->s.seconds);
}

static void text_sites(buf *b, const ctx *x, const summary_in *in)
{
    const tdr_meta *m = x->meta;
    bprintf(b, "\n@--- Call sites (TDSHIM_CALLSITES) ---\n");
    if (m->callsites_top <= 0) {
        bprintf(b, "off (set TDSHIM_CALLSITES=N for the top N call sites of polls and sends)\n");
        return;
    }
    if (!x->r->sites) {
#ifdef HAVE_LIBUNWIND
        bprintf(b, "unavailable: the call-site table could not be set up\n");
#else
        bprintf(b, "unavailable: tdshim was built without libunwind (reconfigure with libunwind-dev installed)\n");
#endif
        return;
    }
    static const char *const kinds[2] = {"polls", "sends"};
    for (int kind = 0; kind < 2; kind++) {
        int total = 0;
        for (int i = 0; i < x->size; i++)
            total += in->site_count[kind][i];
        agg_site *a = calloc((size_t)(total ? total : 1), sizeof *a);
        int na = 0;
        if (!a)
            continue;
        for (int k = 0; k < total; k++) {
            const tdr_site_info *s = &in->sites[kind][k];
            int j;
            for (j = 0; j < na; j++)
                if (a[j].s.offset == s->offset && !strcmp(a[j].s.func, s->func) && !strcmp(a[j].s.module, s->module))
                    break;
            if (j == na) {
                a[na].s = *s;
                a[na].ranks = 1;
                na++;
            } else {
                a[j].s.count += s->count;
                a[j].s.seconds += s->seconds;
                a[j].ranks++;
            }
        }
        qsort(a, (size_t)na, sizeof *a, agg_cmp);
        bprintf(b, "Top %d call sites of %s, all ranks (each rank's top %d merged):\n", m->callsites_top, kinds[kind],
                m->callsites_top);
        bprintf(b, "%4s %-40s %-24s %12s %12s %6s\n", "#", "Function+offset", "Module", "Count", "Time(s)", "Ranks");
        for (int j = 0; j < na && j < m->callsites_top; j++) {
            char fo[160];
            if (a[j].s.func[0])
                snprintf(fo, sizeof fo, "%s+0x%llx", a[j].s.func, (unsigned long long)a[j].s.offset);
            else
                snprintf(fo, sizeof fo, "?+0x%llx", (unsigned long long)a[j].s.offset);
            bprintf(b, "%4d %-40s %-24s %12llu %12.6f %6d\n", j + 1, fo, a[j].s.module,
                    (unsigned long long)a[j].s.count, a[j].s.seconds, a[j].ranks);
        }
        if (!na)
            bprintf(b, "(none recorded)\n");
        free(a);
    }
    bprintf(b, "Per-rank call sites: the \"callsites\" object of each rank-NNNN.json.\n");
}

static void text_unreceived(buf *b, const ctx *x, const summary_in *in)
{
    bprintf(b, "\n@--- Unreceived messages at MPI_Finalize ---\n");
    unsigned long long sent = 0, recv = 0, unrecv = 0;
    int listed = 0;
    for (int i = 0; i < x->size; i++) {
        const uint64_t *u = in->u + (size_t)i * U_N;
        sent += u[U_PSENT];
        recv += u[U_PRECV];
        unrecv += u[U_UNRECV];
        if (u[U_UNRECV]) {
            if (!listed++)
                bprintf(b, "%5s %12s  %s\n", "Rank", "Unreceived", "queued at finalize, by tag (tag:messages)");
            bprintf(b, "%5d %12llu ", i, (unsigned long long)u[U_UNRECV]);
            for (int t = 0; t < TDR_UNRECV_TAGS && u[U_UTAG + t]; t++)
                bprintf(b, " %lld:%llu", (long long)u[U_UTAG + t] - 1,
                        (unsigned long long)u[U_UTAG + TDR_UNRECV_TAGS + t]);
            bprintf(b, "\n");
        }
    }
    bprintf(b, "primary messages sent %llu, received %llu; sent to a rank but never received: %llu\n", sent, recv,
            unrecv);
}

/* ------------------------------------------------------------------ */
/* Rank 0: advice on TDSHIM_IDLE and the ignore settings               */
/* ------------------------------------------------------------------ */

static const char *cfg_get(const tdr_meta *m, const char *key)
{
    for (int i = 0; i < m->nconfig; i++)
        if (strcmp(m->config[i].key, key) == 0)
            return m->config[i].value;
    return "";
}

typedef struct vtag {
    int tag, ranks;
    unsigned long long messages, empty, bytes;
} vtag;

static int vtag_cmp(const void *a, const void *b)
{
    const vtag *x = a, *y = b;
    return x->messages != y->messages ? (x->messages < y->messages ? 1 : -1) : (x->tag > y->tag) - (x->tag < y->tag);
}

/* one rank's row of a tag table (tag + 1, messages[, empty, bytes]: n
 * words) into the job's table of *ntab tags */
static void vtag_add(vtag *tab, int *ntab, const uint64_t *row, int n)
{
    int tag = (int)(row[0] - 1), j = 0;
    while (j < *ntab && tab[j].tag != tag)
        j++;
    if (j == *ntab)
        tab[(*ntab)++] = (vtag){.tag = tag};
    tab[j].ranks++;
    tab[j].messages += row[1];
    if (n == 4) {
        tab[j].empty += row[2];
        tab[j].bytes += row[3];
    }
}

/* "0,3,5" (at most 12 ranks, then "..."): the ranks where flag[i] */
static void rank_list(char *out, size_t len, const int *flag, int n)
{
    size_t k = 0;
    int shown = 0;
    out[0] = '\0';
    for (int i = 0; i < n && k + 16 < len; i++) {
        if (!flag[i])
            continue;
        if (shown == 12) {
            snprintf(out + k, len - k, ",...");
            return;
        }
        k += (size_t)snprintf(out + k, len - k, "%s%d", shown++ ? "," : "", i);
    }
}

/* The advice of the report (README, "Measure mode and the advice"): from
 * what the run showed, which TDSHIM_IDLE and ignore settings fit the
 * program. Written into summary.txt; the settings it suggests, in one
 * line, into `hint` for the stderr summary (empty: nothing to change). */
static void text_advice(buf *b, const ctx *x, const summary_in *in, char *hint, size_t hintlen)
{
    const tdr_meta *m = x->meta;
    const char *idle = cfg_get(m, "TDSHIM_IDLE"), *notify = cfg_get(m, "TDSHIM_NOTIFY");
    int spin = strncmp(idle, "spin", 4) == 0, prog = strncmp(idle, "pcontrol", 8) == 0 || strcmp(idle, "api") == 0;
    int n = x->size, item = 0;
    unsigned long long viol = 0, vother = 0, gaps = 0, empty = 0, unsafe = 0, again = 0, late = 0;
    unsigned long long most_threads = 0;
    double gap_s = 0;
    int *busy = calloc((size_t)n, sizeof *busy), *never = calloc((size_t)n, sizeof *never);
    int *tests = calloc((size_t)n, sizeof *tests), ntests = 0;
    unsigned long long etests = 0;
    vtag *tags = calloc((size_t)n * TDR_VIOL_TAGS + 1, sizeof *tags);
    vtag *wtags = calloc((size_t)n * TDR_VIOL_TAGS + 1, sizeof *wtags);
    int ntags = 0, nbusy = 0, nnever = 0, nwtags = 0, polling = 0;
    unsigned long long cpass[TDR_NCAND] = {0}, cbreach[TDR_NCAND] = {0}, psent = 0;
    int clive[TDR_NCAND] = {0};
    hint[0] = '\0';
    bprintf(b, "\n@--- Advice (TDSHIM_IDLE=%s; from what this run showed) ---\n", idle);
    if (!busy || !never || !tags || !tests || !wtags) {
        bprintf(b, "not computed (out of memory)\n");
        free(busy), free(never), free(tags), free(tests), free(wtags);
        return;
    }
    for (int i = 0; i < n; i++) {
        const uint64_t *u = in->u + (size_t)i * U_N;
        viol += u[U_VIOL];
        vother += u[U_VOTHER];
        gaps += u[U_BUSYGAPS];
        empty += u[U_EMPTY];
        unsafe += u[U_UNSAFE];
        again += u[U_BUSYAGAIN];
        late += u[U_TLATE];
        most_threads = u[U_THREADS] > most_threads ? u[U_THREADS] : most_threads;
        gap_s += in->d[(size_t)i * D_N + D_BUSYGAP];
        /* a rank polls while busy when at least 3 times two empty polls in
         * a row were each followed by work, taking 1% of its wall time or more */
        busy[i] = u[U_BUSYGAPS] >= 3 && in->d[(size_t)i * D_N + D_BUSYGAP] >= 0.01 * in->d[(size_t)i * D_N + D_WALL];
        tests[i] = u[U_ETESTS] >= 100 && 2 * u[U_ETESTS] >= u[U_EMPTY];
        ntests += tests[i];
        etests += u[U_ETESTS];
        nbusy += busy[i];
        never[i] = u[U_B2I] == 0;
        nnever += never[i];
        psent += u[U_PSENT];
        polling += u[U_EMPTY] != 0;
        for (int c = 0; c < TDR_NCAND; c++) {
            cpass[c] += u[U_CANDP + c];
            cbreach[c] += u[U_CANDB + c];
            clive[c] += u[U_CANDP + c] != 0;
        }
        for (int t = 0; t < TDR_VIOL_TAGS && u[U_WTAG + 2 * t]; t++)
            vtag_add(wtags, &nwtags, u + U_WTAG + 2 * t, 2);
        for (int t = 0; t < TDR_VIOL_TAGS && u[U_VTAG + 4 * t]; t++)
            vtag_add(tags, &ntags, u + U_VTAG + 4 * t, 4);
    }
    qsort(tags, (size_t)ntags, sizeof *tags, vtag_cmp);
    char ranks[128];
    size_t hk = 0;
#define HINT(...)                                                                                                 \
    do {                                                                                                       \
        if (hk < hintlen)                                                                                      \
            hk += (size_t)snprintf(hint + hk, hintlen - hk, "%s", hk ? ", " : "");                             \
        if (hk < hintlen)                                                                                      \
            hk += (size_t)snprintf(hint + hk, hintlen - hk, __VA_ARGS__);                                      \
    } while (0)
    if (late) {
        int *lr = calloc((size_t)n, sizeof *lr);
        for (int i = 0; lr && i < n; i++)
            lr[i] = in->u[(size_t)i * U_N + U_TLATE] != 0;
        if (lr)
            rank_list(ranks, sizeof ranks, lr, n);
        else
            snprintf(ranks, sizeof ranks, "?");
        free(lr);
        const char *set = cfg_get(m, "TDSHIM_THREADS");
        bprintf(b, "%d. ranks %s: %llu threads made their first MPI call while tdshim judged their rank passive "
                   "without them (it counts a thread from its first point-to-point call, and TDSHIM_THREADS=%s "
                   "did not cover them): until then detection could not see their work, and a notification could "
                   "have come early. Set TDSHIM_THREADS=%llu (the most threads of a rank that used MPI at once in "
                   "this run).\n",
                ++item, ranks, late, *set ? set : "1", most_threads);
        HINT("TDSHIM_THREADS=%llu (threads called MPI after their rank was judged passive)", most_threads);
    }
    int measure = strcmp(notify, "none") == 0;
    /* the idle notions side by side (measure mode; tds_init.c cand_poll) */
    static const char *const cand_names[] = TDR_CAND_NAMES;
    int pick = -1, cand_items = 0;
    if (measure && polling) {
        bprintf(b, "%d. The idle notions side by side on this run (a breach: a rank the notion would have judged "
                   "passive then sent a primary message without receiving one, so it still had work):",
                ++item);
        for (int c = 0; c < TDR_NCAND; c++) {
            bprintf(b, "%s TDSHIM_IDLE=%s%s%s%s judged %llu times passive on %d of %d ranks, %llu breaches",
                    c ? ";" : "", cand_names[c], c == TDR_CAND_SPIN ? " (TDSHIM_SPIN_GAP=" : "",
                    c == TDR_CAND_SPIN ? cfg_get(m, "TDSHIM_SPIN_GAP") : "", c == TDR_CAND_SPIN ? " us)" : "",
                    cpass[c], clive[c], n, cbreach[c]);
            /* the notion this run supports: no breach, every polling rank
             * judged passive by it, and (probe, test) no rank polling while
             * busy in its scope, which an empty poll in scope would hide */
            if (pick < 0 && cbreach[c] == 0 && clive[c] == polling && (c == TDR_CAND_SPIN || !nbusy) &&
                /* probe: it must see the idle periods test sees (test
                 * judges at every probe too); one that misses half of them
                 * misses the program's idle loop (its MPI_Test*) */
                (c != TDR_CAND_PROBE || 2 * cpass[TDR_CAND_PROBE] >= cpass[TDR_CAND_TEST]))
                pick = c;
        }
        bprintf(b, ".\n");
        if (psent == 0) {
            bprintf(b, "%d. No primary message was counted in this run (every message was on an ignored tag, or "
                       "empty under TDSHIM_IGNORE_EMPTY=1): detection has nothing to see, and a notification would "
                       "say nothing of the program's work. Ignore fewer tags.\n",
                    ++item);
            HINT("ignore fewer tags (no primary message was counted)");
            pick = -2;
        } else if (pick >= 0) {
            bprintf(b, "%d. TDSHIM_IDLE=%s: no breach among its %llu passive judgements, every polling rank judged "
                       "passive: the notion this run supports. Under TDSHIM_NOTIFY=tag:N a poll that cannot receive "
                       "tag N on MPI_COMM_WORLD does not count either, which only removes judgements.%s\n",
                    ++item, cand_names[pick], cpass[pick],
                    viol ? "" : " With it, notification can be turned on (TDSHIM_NOTIFY=tag:N or exit).");
            cand_items = strcmp(idle, cand_names[pick]) == 0 ? 2 : 0; /* nothing to change if nothing else */
            if (strcmp(idle, cand_names[pick]) != 0 && !(pick == TDR_CAND_SPIN && spin))
                HINT("TDSHIM_IDLE=%s (no breach in %llu passive judgements)", cand_names[pick], cpass[pick]);
        } else {
            bprintf(b, "%d. No idle notion was free of breaches with every polling rank passive: none can be "
                       "trusted for this program as it ran. Ignoring a tag that carries only requests (items below) "
                       "removes the breaches its sends make; else let the program say when it is idle: "
                       "TDSHIM_IDLE=pcontrol (it calls MPI_Pcontrol(0) where it has no work) or api "
                       "(tdshim_set_passive()). Under TDSHIM_NOTIFY=tag:N a poll that cannot receive tag N on "
                       "MPI_COMM_WORLD is never an idle poll: a program that probes for N only where it has no work "
                       "is judged passive only there.\n",
                    ++item);
            /* the tags of a notion's breaches show when it is the one measured (its violations) */
            int cover = 2 * cpass[TDR_CAND_PROBE] < cpass[TDR_CAND_TEST] ? TDR_CAND_TEST : TDR_CAND_PROBE;
            if (strcmp(idle, cand_names[cover]) != 0 && !viol) {
                bprintf(b, "%d. Measure again with TDSHIM_IDLE=%s (the notion that sees this program's idle "
                           "polls): the tags of its breaches then show as contract violations.\n",
                        ++item, cand_names[cover]);
                HINT("measure again with TDSHIM_IDLE=%s (its %llu breaches' tags then show)", cand_names[cover],
                     cbreach[cover]);
            } else {
                HINT("no TDSHIM_IDLE free of breaches (TDSHIM_IDLE=pcontrol or api, or ignore request tags)");
            }
        }
    }
    int empty_hint = 0, tags_hint = 0;
    for (int j = 0; j < ntags && j < 8; j++) {
        const vtag *v = &tags[j];
        const vtag *w = NULL;
        for (int k = 0; k < nwtags && !w; k++)
            w = wtags[k].tag == v->tag ? &wtags[k] : NULL;
        /* an all-empty tag is the "no work" reply's case: TDSHIM_IGNORE_EMPTY
         * ignores the empty messages, not the tag (a reply that makes its
         * thief send the next request is no work) */
        if (v->empty == v->messages)
            w = NULL;
        if (w) {
            bprintf(b, "%d. tag %d: %llu messages sent by ranks judged passive (%d ranks; %llu empty). Tag %d "
                       "carries work: %llu times a rank waiting for work found a message on it and then sent "
                       "primary data. Do not ignore it; its senders were judged passive while they still had "
                       "work (see the idle notions above).\n",
                    ++item, v->tag, v->messages, v->ranks, v->empty, v->tag, w->messages);
        } else if (v->empty == v->messages) {
            bprintf(b, "%d. tag %d: %llu messages sent by passive ranks (%d ranks), all empty. If an empty message on "
                       "tag %d never carries work (a \"no work\" reply), set TDSHIM_IGNORE_EMPTY=1.\n",
                    ++item, v->tag, v->messages, v->ranks, v->tag);
            if (!empty_hint++)
                HINT("TDSHIM_IGNORE_EMPTY=1 (empty messages on tag %d sent while passive)", v->tag);
        } else {
            bprintf(b, "%d. tag %d: %llu messages sent by passive ranks (%d ranks; %llu empty, %llu bytes in all). "
                       "If tag %d never carries work (requests, acknowledgements, replies), add it to "
                       "TDSHIM_IGNORE_TAGS; if it does, its senders were judged passive while still working "
                       "(see the idle notions)%s.\n",
                    ++item, v->tag, v->messages, v->ranks, v->empty, v->bytes, v->tag,
                    v->empty ? "; the empty ones, if they are \"no work\" replies: TDSHIM_IGNORE_EMPTY=1" : "");
            if (!tags_hint++)
                HINT("TDSHIM_IGNORE_TAGS=%d if tag %d carries no work", v->tag, v->tag);
        }
    }
    if (ntags > 8 || vother)
        bprintf(b, "%d. more tags had violations (%llu messages beyond the tables): see the per-rank JSON files.\n",
                ++item, vother);
    if (nbusy && !spin && !prog) {
        rank_list(ranks, sizeof ranks, busy, n);
        bprintf(b, "%d. ranks %s poll while busy: %llu times the program used more than TDSHIM_SPIN_GAP=%s us of CPU "
                   "time after each of two empty polls in a row without receiving anything (%.3f s in all, of %llu empty polls), so an "
                   "empty poll "
                   "does not mean idle. TDSHIM_IDLE=spin fits such a program (passive only while it spins on empty "
                   "polls; confirmation waves come with it).\n",
                ++item, ranks, gaps, cfg_get(m, "TDSHIM_SPIN_GAP"), gap_s, empty);
        if (!(measure && polling)) /* else the side-by-side item decides */
            HINT("TDSHIM_IDLE=spin (ranks poll while busy)");
    }
    if (ntests && strncmp(idle, "probe", 5) == 0 && !(measure && polling)) { /* else the side-by-side item */
        rank_list(ranks, sizeof ranks, tests, n);
        bprintf(b, "%d. ranks %s poll their receives with MPI_Test* (%llu empty Test polls): TDSHIM_IDLE=probe "
                   "counts only empty MPI_Iprobe as idle, so these ranks are passive only inside blocking calls and "
                   "detection waits for MPI_Finalize. TDSHIM_IDLE=%s.\n",
                ++item, ranks, etests,
                nbusy ? "spin fits them (they also poll while busy)" : "test fits them (they do not poll while busy), or spin");
        if (!nbusy)
            HINT("TDSHIM_IDLE=test (ranks poll receives with MPI_Test)");
    }
    if (nnever && !prog) {
        rank_list(ranks, sizeof ranks, never, n);
        bprintf(b, "%d. ranks %s never became passive under TDSHIM_IDLE=%s (no empty poll or blocking wait counted "
                   "as idle): detection cannot complete while they run. If they poll receives with MPI_Test*, "
                   "TDSHIM_IDLE=spin (or test) sees them; if they never poll, TDSHIM_IDLE=pcontrol (the program "
                   "calls MPI_Pcontrol(0) when idle) or the termdetect API.\n",
                ++item, ranks, idle);
        if (!spin && !(measure && polling))
            HINT("TDSHIM_IDLE=spin or pcontrol (ranks %s never became passive)", ranks);
    }
    if (unsafe)
        bprintf(b, "%d. %llu announcements were proven premature (UNSAFE in the episode table): follow the items "
                   "above before relying on notifications.\n",
                ++item, unsafe);
    if (item && !m->callsites_top && (ntags || nbusy))
        bprintf(b, "%d. TDSHIM_CALLSITES=5 names the program's poll and send call sites (section Call sites).\n",
                ++item);
    if (item == cand_items && (cand_items || !(measure && polling)))
        bprintf(b, "The program kept the contract under TDSHIM_IDLE=%s: no primary message was sent by a passive "
                   "rank%s.%s\n",
                idle, spin || prog || !measure ? "" : " and no rank polled while busy",
                measure ? " Notification can be turned on (TDSHIM_NOTIFY=tag:N or exit)." : "");
    if (!measure && !spin && !prog)
        bprintf(b, "Whether the program polls while busy is measured in measure mode only (TDSHIM_NOTIFY=none).\n");
    if (spin && again)
        bprintf(b, "Note: TDSHIM_IDLE=spin judged a rank passive and then saw it work again %llu times "
                   "(detection.busy_again): polls with work between them shorter than TDSHIM_SPIN_GAP=%s us. The "
                   "confirmation waves keep that from notifying early; a smaller gap or a larger spin:N makes it "
                   "rarer and detection slower.\n",
                again, cfg_get(m, "TDSHIM_SPIN_GAP"));
#undef HINT
    free(busy), free(never), free(tags), free(tests), free(wtags);
}

/* episodes some rank proved premature, and the kinds of evidence (bits) */
static int unsafe_episodes(const summary_in *in, unsigned *kinds)
{
    int n = 0;
    *kinds = 0;
    for (int k = 0; k < in->nep_total; k++) {
        const double *e = in->ep + (size_t)k * E_N;
        unsigned u = (unsigned)e[E_UNSAFE];
        if (!u)
            continue;
        *kinds |= u;
        int first = 1; /* count each episode once, at its first unsafe entry */
        for (int j = 0; j < k && first; j++)
            first = !(in->ep[(size_t)j * E_N + E_EP] == e[E_EP] && in->ep[(size_t)j * E_N + E_UNSAFE] != 0);
        n += first;
    }
    return n;
}

/* the short version on stderr */
static void stderr_summary(const ctx *x, const summary_in *in, const char *hint, int summary_err, int pfd,
                           const char *dirname)
{
    int n = x->size, worst = 0;
    double worst_pct = -1, wall = 0, pct_sum = 0;
    unsigned long long ctl = 0, viol = 0, unrecv = 0, late = 0;
    for (int i = 0; i < n; i++) {
        const double *d = in->d + (size_t)i * D_N;
        const uint64_t *u = in->u + (size_t)i * U_N;
        double pct = d[D_WALL] > 0 ? 100 * d[D_TOTAL] / d[D_WALL] : 0;
        if (pct > worst_pct) {
            worst_pct = pct;
            worst = i;
        }
        wall = d[D_WALL] > wall ? d[D_WALL] : wall;
        pct_sum += pct;
        ctl += u[U_CTL_S];
        viol += u[U_VIOL];
        unrecv += u[U_UNRECV];
        late += u[U_TLATE];
    }
    fprintf(stderr, "tdshim: %s, %d ranks, wall %.3f s, time in tdshim %.3f%% on average (max %.3f%% on rank %d), "
                    "%llu control messages, %u episode(s) at rank 0",
            x->meta->algo ? x->meta->algo : "?", n, wall, pct_sum / n, worst_pct, worst,
            ctl, (unsigned)x->r->nepisodes);
    if (viol)
        fprintf(stderr, ", %llu CONTRACT VIOLATIONS", viol);
    if (unrecv)
        fprintf(stderr, ", %llu unreceived messages", unrecv);
    if (late)
        fprintf(stderr, ", %llu LATE THREADS", late);
    unsigned kinds;
    int unsafe = unsafe_episodes(in, &kinds);
    if (unsafe) {
        fprintf(stderr, ", %d UNSAFE EPISODE%s (premature; evidence:", unsafe, unsafe == 1 ? "" : "S");
        for (int k = 0, m = 0; k < TD_EV_N; k++)
            if (kinds & 1u << k)
                fprintf(stderr, "%s%s", m++ ? ", " : " ", td_ev_names[k]);
        fprintf(stderr, ")");
    }
    fprintf(stderr, "\n");
    if (hint && hint[0])
        fprintf(stderr, "tdshim: advice: %s; %s\n", hint,
                x->meta->want_text ? "see summary.txt, Advice" : "TDSHIM_REPORT=text writes the reasons");
    /* one line on where the report is, claiming only what was written */
    int files = 0, failed = 0, first = -1, e = summary_err;
    if (x->meta->want_json)
        for (int i = 0; i < n; i++) {
            files++;
            if (in->u[(size_t)i * U_N + U_WERR]) {
                failed++;
                if (first < 0)
                    first = i;
            }
        }
    if (x->meta->want_text)
        files++, failed += summary_err != 0;
    if (first >= 0)
        e = (int)in->u[(size_t)first * U_N + U_WERR];
    if (!failed) {
        fprintf(stderr, "tdshim: report in %s\n", x->dir);
        return;
    }
    char what[32] = "summary.txt";
    if (first >= 0)
        snprintf(what, sizeof what, "rank-%04d.json", first);
    buf w = {0};
    put_why(&w, e);
    if (failed == files) {
        /* nothing written: no empty directory left behind (on rank 0's node) */
        unlinkat(pfd, dirname, AT_REMOVEDIR);
        fprintf(stderr, "tdshim: no report written (%s: %s)\n", what, w.p ? w.p : "?");
    } else {
        fprintf(stderr, "tdshim: report in %s is incomplete: %d of %d files not written (%s: %s)\n", x->dir,
                failed, files, what, w.p ? w.p : "?");
    }
    free(w.p);
}

/* ------------------------------------------------------------------ */
/* Gathering                                                           */
/* ------------------------------------------------------------------ */

static int gather_sites(const ctx *x, MPI_Comm comm, int kind, tdr_site_info **out, int **counts)
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
    ctx x = {.r = r, .core = core, .meta = meta};
    int err = 0;
    if (PMPI_Comm_rank(comm, &x.rank) != MPI_SUCCESS || PMPI_Comm_size(comm, &x.size) != MPI_SUCCESS)
        return -1;
    if (r->t_end <= 0)
        r->t_end = tdr_now();
    for (int c = 0; c < TDR_NCAT; c++)
        x.total += r->t_cat[c];
    x.cmdlen = read_cmdline(x.cmd, sizeof x.cmd);

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
        close_fds(pfd, dfd);
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
        json_rank(&b, &x);
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
    fill_record(&x, u, d);
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
        close_fds(pfd, dfd);
        return -1;
    }
    int nep = (int)r->nepisodes * E_N;
    double *mine = malloc((size_t)(nep ? nep : 1) * sizeof *mine);
    if (!mine)
        nep = 0;
    for (size_t i = 0; mine && i < r->nepisodes; i++) {
        mine[i * E_N + E_EP] = r->episodes[i].episode;
        mine[i * E_N + E_DETECT] = rel(&x, r->episodes[i].t_detect);
        mine[i * E_N + E_PASSIVE] = rel(&x, r->episodes[i].t_last_passive);
        mine[i * E_N + E_UNSAFE] = r->episodes[i].unsafe;
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
        summary_in in = {uall, dall, epall, epcnt, eptotal / E_N, {sites[0], sites[1]}, {scount[0], scount[1]}};
        int sites_ok = !want_sites || (sites[0] && sites[1] && scount[0] && scount[1]);
        char hint[512] = "";
        if (meta->want_text) {
            buf b = {0};
            text_header(&b, &x);
            text_per_rank(&b, &x, &in);
            text_across(&b, &x, &in);
            text_control(&b, &x, &in);
            text_episodes(&b, &x, &in);
            if (sites_ok)
                text_sites(&b, &x, &in);
            else
                bprintf(&b, "\n@--- Call sites (TDSHIM_CALLSITES) ---\nnot gathered (out of memory)\n");
            text_unreceived(&b, &x, &in);
            text_advice(&b, &x, &in, hint, sizeof hint);
            int serr = b.oom ? ENOMEM : 0;
            if (!serr && tdr_file_put(dfd, "summary.txt", b.p, b.len, fm, &serr) != 0)
                err = -1;
            summary_err = serr;
            free(b.p);
        }
        if (!meta->want_text) { /* the advice is computed with the text */
            buf nb = {0};
            text_advice(&nb, &x, &in, hint, sizeof hint);
            free(nb.p);
        }
        stderr_summary(&x, &in, hint, summary_err, pfd, hdr.name);
    }
    close_fds(pfd, dfd);
    free_site_gather(sites, scount);
    free(uall), free(dall), free(epall), free(epcnt), free(epdispl);
    return err;
}

/* ------------------------------------------------------------------ */
/* A killed job: each rank alone                                       */
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

/* td_describe's first part, formatted without locks (td_describe and the
 * algorithms' describe use snprintf, which is not async-signal-safe) */
static void safe_state(buf *b, const td_ctx *c)
{
    if (!c) {
        tdr_puts(b, "no detection state");
        return;
    }
    tdr_putf(b, "episode %u: %s%s%s, primaries sent %llu received %llu, control sent %llu received %llu, waves %llu",
             (unsigned)c->episode + 1, c->finalized ? "finalized" : c->active ? "active" : "passive",
             c->dirty ? "" : ", no activity since the last announcement", c->dormant ? ", dormant" : "",
             (unsigned long long)c->sent, (unsigned long long)c->recvd,
             (unsigned long long)td_ctl_total(c->stats.ctl_sent), (unsigned long long)td_ctl_total(c->stats.ctl_recv),
             (unsigned long long)c->stats.waves);
    if (c->confirming)
        tdr_putf(b, "; confirmation wave %llu round %d, %d answers due", (unsigned long long)(c->conf_seq / 2),
                 (int)(c->conf_seq & 1) + 1, c->conf_wait);
    if (c->error)
        tdr_putf(b, "; stopped: %s", c->errmsg);
}

/*
 * Async-signal-safe (issue 26): only the storage reserved by tdr_run_id,
 * hand-written formatting (tdr_json.h) and open/write/fsync/rename
 * (tdr_file.h); no malloc, no stdio, no lock. The handler may have
 * interrupted the shim anywhere, so the counters may be mid-update: the
 * report is as good as the moment allows (SCHEMA.md, "Partial reports").
 */
int tdr_write_partial(tdr_rank *r, const struct td_ctx *core, const tdr_meta *meta, const char *why)
{
    if (!meta->want_json && !meta->want_text)
        return 0;
    ctx x = {.r = r, .core = core, .meta = meta, .rank = r->rank, .size = r->size, .partial_why = why,
             .sigsafe = 1};
    char state[512], name[TDR_NAME_MAX + 48], line[TDR_DIR_MAX + 1024];
    buf st = tdr_buf_fixed(state, sizeof state), nm = tdr_buf_fixed(name, sizeof name);
    buf msg = tdr_buf_fixed(line, sizeof line - 2);
    safe_state(&st, core);
    x.partial_state = state;
    r->t_end = tdr_now();
    for (int c = 0; c < TDR_NCAT; c++)
        x.total += r->t_cat[c];
    x.t0 = r->t0_rank0 > 0 ? r->t0_rank0 : r->t_init;
    x.cmdlen = read_cmdline(x.cmd, sizeof x.cmd);

    const char *parent = meta->report_dir && meta->report_dir[0] ? meta->report_dir : ".";
    mode_t dm = TDR_DMODE(meta->group_mode);
    tdr_putf(&nm, "tdshim-report-%s-partial-%ld-", r->run_stamp[0] ? r->run_stamp : "unknown", r->run_pid0);
    for (int i = 60; i >= 0; i -= 4)
        tdr_put(&nm, &"0123456789abcdef"[(r->run_token >> i) & 15], 1);
    size_t dirlen = nm.len;
    tdr_putf(&nm, "/rank-%d%d%d%d.json", x.rank / 1000 % 10, x.rank / 100 % 10, x.rank / 10 % 10, x.rank % 10);
    tdr_putf(&msg, "tdshim: rank %d: killed by %s (%s); ", x.rank, why, state);

    int e = 0, pfd = -1, dfd = -1;
    buf b = tdr_buf_fixed(r->sig_buf, r->sig_cap);
    if (!r->sig_buf || nm.oom) {
        e = ENOMEM;
    } else {
        json_rank(&b, &x);
        if (b.oom)
            e = ENOMEM;
    }
    name[dirlen] = '\0';
    if (!e && (pfd = tdr_parent_open(parent, dm, &e)) >= 0 && (dfd = tdr_dir_open(pfd, name, dm, 0, &e)) >= 0)
        tdr_file_put(dfd, name + dirlen + 1, b.p, b.len, TDR_FMODE(meta->group_mode), &e);
    close_fds(pfd, dfd);
    name[dirlen] = '/';
    if (!e) {
        tdr_putf(&msg, "partial report written: %s/%s", parent, name);
    } else {
        tdr_puts(&msg, "no partial report: ");
        if (e == ENOMEM)
            tdr_puts(&msg, "it does not fit the room reserved at MPI_Init");
        else
            put_why(&msg, e);
    }
    line[msg.len] = '\n';
    for (size_t off = 0, n = msg.len + 1; off < n;) {
        ssize_t w = write(2, line + off, n - off);
        if (w <= 0 && errno != EINTR)
            break;
        off += w > 0 ? (size_t)w : 0;
    }
    return e ? -1 : 0;
}
