/*
 * What the report writer's files share (private to shim/report; no MPI
 * here). docs/internals.md, "The report writer", says which file owns what:
 *   tdr_report.c   orchestration: the directory, the gathering, what is
 *                  written when (MPI)
 *   tdr_clock.c    the clock alignment at MPI_Init (MPI)
 *   tdr_record.c   the per-rank record: its JSON and its row (tdr_row.h);
 *                  async-signal-safe
 *   tdr_summary.c  rank 0's text summary and its lines on stderr
 *   tdr_advice.c   the advice, a pure function (tdr_advice.h)
 *   tdr_partial.c  the report of a rank killed by a signal, alone, without
 *                  malloc or stdio (tests/report/test-partial-symbols.sh)
 *   tdr_text.c     printf into a growable buffer (summary and advice only)
 */
#ifndef TDR_WRITER_H
#define TDR_WRITER_H

#include <math.h>
#include <string.h>

#include "tdr.h"
#include "tdr_json.h"
#include "tdr_row.h"
#include "tdr_site.h"

#define TDR_SCHEMA "tdshim-report/1"
#define TDR_PATH_MAX 4096
#define TDR_DIR_MAX (TDR_PATH_MAX - 64) /* room for "/run-N" and file names */
#define TDR_NAME_MAX 96 /* a report directory's own name */
#define TDR_SIG_EPISODES 256 /* episodes in a partial report (tdr_write_partial) */
#define TDR_SIG_BUF (192 * 1024) /* its room, reserved at MPI_Init (tdr_run_id) */

extern const char *const tdr_cat_names[TDR_NCAT]; /* "send", "recv", ... (tdr_record.c) */

typedef tdr_buf buf;

/* printf into a growable buffer (tdr_text.c: vsnprintf, malloc): for the
 * text summary and the advice (rank 0 at MPI_Finalize, never in a signal
 * handler) */
void tdr_bprintf(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define bprintf tdr_bprintf

/* the JSON writer (async-signal-safe, tdr_json.h): strings valid UTF-8, cut at TDR_STR_MAX bytes */
#define TDR_STR_MAX 4096
static inline int bjstr(buf *b, const char *s) { return tdr_json_str(b, s ? s : "", s ? strlen(s) : 0, TDR_STR_MAX); }
#define bjnum tdr_putnum
#define jprintf tdr_putf

/* one rank's report being written */
typedef struct tdr_ctx {
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
    /* writes the "poll" or "send" object of the call sites (tdr_sites_json; NULL in a
     * signal handler, so that tdr_record.o names no function that allocates) */
    void (*sites_json)(buf *b, const tdr_sites *s, int kind, int topn);
} tdr_ctx;

/* MPI_Init to the end of tdshim's own MPI_Finalize work: t_end is taken at
 * MPI_Finalize entry and the finalize category is all spent after it, so
 * the percentages of this wall time cover everything tdshim did */
/* MPI_Init to the end of MPI_Finalize's tdshim work: t_end is MPI_Finalize's
 * entry, and what tdshim did there is timed (its own work, and waiting for
 * the last rank) */
static inline double tdr_wall_of(const tdr_rank *r)
{
    return r->t_end - r->t_init + r->t_cat[TDR_CAT_FINALIZE] + r->t_cat[TDR_CAT_WAIT];
}

static inline double tdr_rel(const tdr_ctx *x, double local)
{
    return local > 0 ? local + x->r->t_offset - x->t0 : NAN;
}

/* ---- tdr_record.c: async-signal-safe ---- */
/* "single", "funneled", ... for an MPI_THREAD_* level */
const char *tdr_thread_level(int level);
/* the command line from /proc (Linux), arguments joined by spaces, at most
 * cap - 1 bytes; "?" elsewhere. Returns its length. */
size_t tdr_read_cmdline(char *out, size_t cap);
/* the per-rank JSON (SCHEMA.md, schema.json) */
void tdr_json_rank(buf *b, const tdr_ctx *x);
/* the row gathered at rank 0 (tdr_row.h) */
void tdr_fill_record(const tdr_ctx *x, uint64_t u[U_N], double d[D_N]);

/* ---- tdr_summary.c: rank 0 ---- */
/* the job's rows and episodes as rank 0 gathered them */
typedef struct tdr_summary_in {
    const uint64_t *u;      /* size * U_N */
    const double *d;        /* size * D_N */
    const double *ep;       /* E_N per gathered episode */
    const int *ep_count;    /* per rank */
    int nep_total;
    const tdr_site_info *sites[2]; /* gathered top sites, per kind */
    const int *site_count[2];      /* per rank */
} tdr_summary_in;
/* summary.txt up to the advice (tdr_advice_write writes that): sites_ok = 0
 * when the call sites could not be gathered */
void tdr_summary_text(buf *b, const tdr_ctx *x, const tdr_summary_in *in, int sites_ok);
/* the short summary on stderr, the advice's hint and where the report is;
 * removes the directory dirname (in pfd) when no file of it was written */
void tdr_stderr_summary(const tdr_ctx *x, const tdr_summary_in *in, const char *hint, int summary_err, int pfd,
                        const char *dirname);

#endif
