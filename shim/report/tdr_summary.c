/*
 * Rank 0's text summary (summary.txt up to its Advice, which tdr_advice.c
 * writes) and its lines on stderr, from the rows and episodes every rank
 * sent (tdr_row.h, tdr_report.c). No MPI here.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "tdr_writer.h"
#include "tdr_file.h"
#include "tdr_site.h"
#include "td_algo.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

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

static void text_header(buf *b, const tdr_ctx *x)
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
    bprintf(b, "@ Thread level: requested %s, provided %s (rank 0)", tdr_thread_level(x->r->thread_requested),
            tdr_thread_level(x->r->thread_provided));
    if (x->r->threads_max)
        bprintf(b, "; threads using MPI at once: %u (rank 0)", (unsigned)x->r->threads_max);
    bprintf(b, "\n");
    if (x->r->node_ranks > 0 && x->r->node_cpus > 0)
        bprintf(b, "@ Node        : %d of the job's ranks on %d online CPUs (rank 0's node)%s\n", x->r->node_ranks,
                x->r->node_cpus,
                x->r->node_ranks > x->r->node_cpus ? "; oversubscribed: time in tdshim includes waits for a core "
                                                     "(the MPI library, or the kernel, gives it to another rank inside "
                                                     "tdshim's calls into MPI)"
                                                   : "");
    bprintf(b, "@ Configuration:\n");
    for (int i = 0; i < m->nconfig; i++)
        bprintf(b, "@   %-26s %s\n", m->config[i].key, m->config[i].value);
}

static void text_per_rank(buf *b, const tdr_ctx *x, const tdr_summary_in *in)
{
    bprintf(b, "\n@--- Overhead per rank (seconds; %% of the rank's wall time, MPI_Init to the end of MPI_Finalize's "
               "tdshim work; waiting there for the last rank, as MPI_Finalize does natively, is not tdshim's) ---\n");
    bprintf(b, "%5s %10s %10s %7s", "Rank", "Wall", "tdshim", "%");
    for (int c = 0; c < TDR_NCAT; c++)
        bprintf(b, " %9s", tdr_cat_names[c]);
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

static void text_across(buf *b, const tdr_ctx *x, const tdr_summary_in *in)
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
    ROWD("waiting at MPI_Finalize (s)", D_WAIT); /* in the wall time, not tdshim's (TDR_CAT_WAIT) */
    for (int c = 0; c < TDR_NCAT; c++) {
        char name[64];
        snprintf(name, sizeof name, "  %s (s)", tdr_cat_names[c]);
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

static void text_control(buf *b, const tdr_ctx *x, const tdr_summary_in *in)
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
static void text_evidence_checked(buf *b, const tdr_ctx *x)
{
    bprintf(b, "Check looked at: late-control, %ssend-after, send-before%s.\n", x->meta->stamped ? "late-primary, " : "",
            x->meta->stamped ? "" : "; it cannot see late-primary in a header-free run (the episode's stamp "
                                    "travels in tdshim's header: TDSHIM_PIGGYBACK=copy shows it)");
}

/* The gathered episode rows (E_N numbers each) ordered by episode, rank
 * order kept within one: each episode's rows are then one run (a rank
 * keeps up to TDR_EP_HEAD + TDR_EP_TAIL, so n is at most size times that;
 * grouping by a scan per episode was quadratic: 1.3 million rows of Ray's
 * run kept rank 0 in MPI_Finalize for more than 15 minutes) */
typedef struct ep_row {
    uint32_t ep, k;
} ep_row;
static int ep_row_cmp(const void *a, const void *b)
{
    const ep_row *x = a, *y = b;
    if (x->ep != y->ep)
        return x->ep < y->ep ? -1 : 1;
    return (x->k > y->k) - (x->k < y->k);
}
static ep_row *ep_rows(const tdr_summary_in *in)
{
    ep_row *v = malloc((size_t)(in->nep_total ? in->nep_total : 1) * sizeof *v);
    if (!v)
        return NULL;
    for (int k = 0; k < in->nep_total; k++)
        v[k] = (ep_row){(uint32_t)in->ep[(size_t)k * E_N + E_EP], (uint32_t)k};
    qsort(v, (size_t)in->nep_total, sizeof *v, ep_row_cmp);
    return v;
}
/* the end of the run of rows of v[i]'s episode */
static int ep_run_end(const ep_row *v, int n, int i)
{
    int j = i + 1;
    while (j < n && v[j].ep == v[i].ep)
        j++;
    return j;
}
/* the union of the run's unsafe kinds */
static unsigned ep_run_unsafe(const tdr_summary_in *in, const ep_row *v, int i, int j)
{
    unsigned u = 0;
    for (int t = i; t < j; t++)
        u |= (unsigned)in->ep[(size_t)v[t].k * E_N + E_UNSAFE];
    return u;
}

/* the table's lines: every episode up to TDR_SUM_EPS, else the first
 * TDR_SUM_HEAD, the last TDR_SUM_TAIL and the first TDR_SUM_UNSAFE UNSAFE
 * ones between them */
#define TDR_SUM_EPS 64
#define TDR_SUM_HEAD 16
#define TDR_SUM_TAIL 32
#define TDR_SUM_UNSAFE 64 /* UNSAFE ones between those */

static void episode_line(buf *b, const tdr_summary_in *in, const ep_row *v, int i, int j)
{
    int ranks = j - i, late = 0;
    double lp = -INFINITY, fd = INFINITY, ld = -INFINITY, imin = INFINITY, imax = -INFINITY;
    for (int t = i; t < j; t++) {
        const double *e = in->ep + (size_t)v[t].k * E_N;
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
    for (int t = i; t < j; t++) {
        const double *e = in->ep + (size_t)v[t].k * E_N;
        if (!isfinite(e[E_PASSIVE]))
            continue;
        if (e[E_PASSIVE] > fd)
            late++;
        else if (e[E_PASSIVE] > lp)
            lp = e[E_PASSIVE];
    }
    bprintf(b, "%7u %6d ", (unsigned)v[i].ep, ranks);
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
    bprintf(b, "%5d %7s\n", late, ep_run_unsafe(in, v, i, j) ? "UNSAFE" : "ok");
}

static void text_episodes(buf *b, const tdr_ctx *x, const tdr_summary_in *in)
{
    bprintf(b, "\n@--- Detection episodes and latency (aligned clocks, seconds since rank 0's MPI_Init) ---\n");
    if (in->nep_total == 0) {
        bprintf(b, "no episode was detected\n");
        return;
    }
    ep_row *v = ep_rows(in);
    if (!v) {
        bprintf(b, "(out of memory: the episodes are in the ranks' JSON reports)\n");
        return;
    }
    int n = in->nep_total, neps = 0;
    for (int i = 0; i < n; i = ep_run_end(v, n, i))
        neps++;
    uint64_t learned = 0, kept = 0; /* the most any rank learned, and kept */
    for (int r = 0; r < x->size; r++) {
        uint64_t l = in->u[(size_t)r * U_N + U_NEP];
        learned = l > learned ? l : learned;
        kept = (uint64_t)in->ep_count[r] / E_N > kept ? (uint64_t)in->ep_count[r] / E_N : kept;
    }
    if (learned > kept)
        bprintf(b, "%llu episodes; the ranks kept the first %d and the last %d, %d in all (each rank's JSON lists "
                   "its own, episodes_omitted counts the rest)\n",
                (unsigned long long)learned, TDR_EP_HEAD, TDR_EP_TAIL, neps);
    if (neps > TDR_SUM_EPS)
        bprintf(b, "%d episodes: the first %d, the last %d and up to %d UNSAFE ones between:\n", neps, TDR_SUM_HEAD,
                TDR_SUM_TAIL, TDR_SUM_UNSAFE);
    bprintf(b, "%7s %6s %14s %14s %14s %14s %12s %12s %5s %7s\n", "Episode", "Ranks", "LastPassive", "FirstDetect",
            "LastDetect", "Latency", "I2E min", "I2E max", "Late", "Check");
    int g = 0, skipped = 0, shown = 0;
    for (int i = 0, j; i < n; i = j, g++) {
        j = ep_run_end(v, n, i);
        if (neps > TDR_SUM_EPS && g >= TDR_SUM_HEAD && g < neps - TDR_SUM_TAIL &&
            (shown >= TDR_SUM_UNSAFE || !ep_run_unsafe(in, v, i, j))) {
            skipped++;
            continue;
        }
        shown += g >= TDR_SUM_HEAD && g < neps - TDR_SUM_TAIL;
        if (skipped)
            bprintf(b, "%7s (%d episodes)\n", "...", skipped);
        skipped = 0;
        episode_line(b, in, v, i, j);
    }
    int nunsafe = 0;
    for (int i = 0, j; i < n; i = j) { /* the evidence, one line per UNSAFE episode */
        j = ep_run_end(v, n, i);
        unsigned unsafe = ep_run_unsafe(in, v, i, j);
        if (!unsafe)
            continue;
        if (nunsafe++ == TDR_SUM_UNSAFE + TDR_SUM_HEAD + TDR_SUM_TAIL) {
            bprintf(b, "(more UNSAFE episodes: the ranks' JSON reports give their evidence)\n");
            break;
        }
        bprintf(b, "Episode %u UNSAFE, evidence:", (unsigned)v[i].ep);
        for (int k = 0, c = 0; k < TD_EV_N; k++)
            if (unsafe & 1u << k)
                bprintf(b, "%s%s", c++ ? ", " : " ", td_ev_names[k]);
        bprintf(b, "\n");
    }
    free(v);
    bprintf(b, "Latency = last rank's detection - LastPassive, the last busy->idle transition before the first "
               "detection (global detection latency); I2E = Idle2End per rank; Late = ranks whose last transition "
               "came after the first detection (next phase's work already begun, or a premature announcement); "
               "UNSAFE = a rank proved the announcement premature, or its proof unsound (contract violation, or a "
               "rank judged passive that still worked); its evidence: late-control / late-primary = a control / "
               "primary message of the announced episode arrived after it; send-after = a rank sent a primary "
               "after learning the announcement with no message received, no collective and no notification; "
               "send-before = a rank that had reported passive to the detection sent a primary with none of "
               "these before learning it (its report was wrong: the announcement may have been right only by "
               "chance) (the ranks' reports give it in words: episodes[].unsafe_why).\n");
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

static void text_sites(buf *b, const tdr_ctx *x, const tdr_summary_in *in)
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

static void text_unreceived(buf *b, const tdr_ctx *x, const tdr_summary_in *in)
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

void tdr_summary_text(buf *b, const tdr_ctx *x, const tdr_summary_in *in, int sites_ok)
{
    text_header(b, x);
    text_per_rank(b, x, in);
    text_across(b, x, in);
    text_control(b, x, in);
    text_episodes(b, x, in);
    if (sites_ok)
        text_sites(b, x, in);
    else
        bprintf(b, "\n@--- Call sites (TDSHIM_CALLSITES) ---\nnot gathered (out of memory)\n");
    text_unreceived(b, x, in);
}

/* the UNSAFE episodes among those gathered, the kinds of their evidence,
 * and how many episodes were gathered (neps) */
static int unsafe_episodes(const tdr_summary_in *in, unsigned *kinds, int *neps)
{
    int n = 0;
    *kinds = 0;
    *neps = in->nep_total;
    ep_row *v = ep_rows(in);
    if (!v) { /* each row once: an episode several ranks proved premature counts more than once */
        for (int k = 0; k < in->nep_total; k++) {
            unsigned u = (unsigned)in->ep[(size_t)k * E_N + E_UNSAFE];
            *kinds |= u;
            n += u != 0;
        }
        return n;
    }
    for (int i = 0, j; i < in->nep_total; i = j) {
        j = ep_run_end(v, in->nep_total, i);
        unsigned u = ep_run_unsafe(in, v, i, j);
        *kinds |= u;
        n += u != 0;
        (*neps) -= j - i - 1;
    }
    free(v);
    return n;
}

/* the short version on stderr */
void tdr_stderr_summary(const tdr_ctx *x, const tdr_summary_in *in, const char *hint, int summary_err, int pfd,
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
            ctl, (unsigned)x->r->ep_total);
    if (viol)
        fprintf(stderr, ", %llu CONTRACT VIOLATIONS", viol);
    if (unrecv)
        fprintf(stderr, ", %llu unreceived messages", unrecv);
    if (late)
        fprintf(stderr, ", %llu LATE THREADS", late);
    /* an oversubscribed node (the most ranks per CPU): its ranks' times in
     * tdshim hold waits for a core (Open MPI yields it inside tdshim's own
     * calls into MPI; user guide, Reports) */
    unsigned long long over_r = 0, over_c = 0;
    for (int i = 0; i < n; i++) {
        unsigned long long r = in->u[(size_t)i * U_N + U_NODER], c = in->u[(size_t)i * U_N + U_NCPU];
        if (c && r > c && (!over_c || r * over_c > over_r * c))
            over_r = r, over_c = c;
    }
    if (over_c)
        fprintf(stderr, ", node oversubscribed (%llu ranks on %llu CPUs: time in tdshim includes waits for a core)",
                over_r, over_c);
    unsigned kinds;
    int neps, unsafe = unsafe_episodes(in, &kinds, &neps);
    uint64_t learned = 0; /* the most episodes a rank learned of: more than neps where ranks kept a part */
    for (int i = 0; i < n; i++)
        learned = in->u[(size_t)i * U_N + U_NEP] > learned ? in->u[(size_t)i * U_N + U_NEP] : learned;
    if (unsafe) {
        fprintf(stderr, ", %d UNSAFE EPISODE%s", unsafe, unsafe == 1 ? "" : "S");
        if (learned > (uint64_t)neps)
            fprintf(stderr, " of the %d kept", neps);
        fprintf(stderr, " (premature or unsoundly proven; evidence:");
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
    tdr_put_why(&w, e);
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
