/*
 * The per-rank record (DESIGN.md §6, SCHEMA.md): the JSON file each rank
 * writes, and the row it sends rank 0 for the summary (tdr_row.h).
 *
 * Async-signal-safe: the partial report (tdr_partial.c) writes the same
 * JSON from a signal handler, so nothing here allocates, uses stdio or
 * takes a lock; formatting is tdr_json.h's, into the caller's buffer. The
 * call sites, whose writer allocates, come through x->sites_json, which a
 * signal handler leaves NULL (tests/report/test-partial-symbols.sh checks
 * this object's symbols).
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <mpi.h> /* MPI_THREAD_* */

#include "tdr_writer.h"
#include "td_algo.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/utsname.h>
#include <unistd.h>

const char *const tdr_cat_names[TDR_NCAT] = {"send", "recv", "progress", "control", "finalize"};

const char *tdr_thread_level(int level)
{
    switch (level) {
    case MPI_THREAD_SINGLE: return "single";
    case MPI_THREAD_FUNNELED: return "funneled";
    case MPI_THREAD_SERIALIZED: return "serialized";
    case MPI_THREAD_MULTIPLE: return "multiple";
    default: return "unknown";
    }
}

size_t tdr_read_cmdline(char *out, size_t cap)
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

void tdr_fill_record(const tdr_ctx *x, uint64_t u[U_N], double d[D_N])
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
    u[U_WOTHER] = r->work_tags_other;
    u[U_NODER] = (uint64_t)(r->node_ranks > 0 ? r->node_ranks : 0);
    u[U_NCPU] = (uint64_t)(r->node_cpus > 0 ? r->node_cpus : 0);
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
        u[U_WTAG + 3 * t] = (uint64_t)(r->work_tags[t].tag + 1);
        u[U_WTAG + 3 * t + 1] = r->work_tags[t].times;
        u[U_WTAG + 3 * t + 2] = r->work_tags[t].found;
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
        uint64_t *v = u + U_VTAG + U_VTAG_W * i;
        v[0] = (uint64_t)r->viol_tags[i].tag + 1;
        v[1] = r->viol_tags[i].messages;
        v[2] = r->viol_tags[i].empty;
        v[3] = r->viol_tags[i].bytes;
        v[4] = r->viol_tags[i].min_bytes;
        v[5] = r->viol_tags[i].max_bytes;
        v[6] = r->viol_tags[i].min_messages;
    }
    u[U_NOTIF] = r->notifications;
    u[U_NEP] = r->ep_total;
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
    d[D_WALL] = tdr_wall_of(r);
    d[D_BUSYGAP] = r->busy_gap_s;
    d[D_WAIT] = r->t_cat[TDR_CAT_WAIT];
    for (int c = 0; c < TDR_NCAT; c++)
        d[D_TCAT + c] = r->t_cat[c];
    d[D_TOTAL] = x->total;
    d[D_OFF] = r->t_offset;
    d[D_OFFERR] = r->t_offset_err;
    /* Idle2End of the last episode, the one that ended the run */
    d[D_I2E] = NAN;
    if (r->nepisodes) {
        const tdr_episode *e = tdr_episode_at(r, r->nepisodes - 1);
        if (e->t_last_passive > 0)
            d[D_I2E] = e->t_detect - e->t_last_passive;
    }
}

void tdr_json_rank(buf *b, const tdr_ctx *x)
{
    const tdr_rank *r = x->r;
    const tdr_meta *m = x->meta;
    double wall = tdr_wall_of(r);
    struct utsname un; /* uname, not gethostname: async-signal-safe */
    const char *host = uname(&un) == 0 ? un.nodename : "?";

    jprintf(b, "{\n  \"schema\": \"" TDR_SCHEMA "\",\n  \"tdshim_version\": ");
    bjstr(b, m->version);
    jprintf(b, ",\n  \"rank\": %d,\n  \"size\": %d,\n  \"host\": ", x->rank, x->size);
    bjstr(b, host);
    jprintf(b, ",\n  \"node\": {\"ranks\": %d, \"online_cpus\": %d}", r->node_ranks, r->node_cpus);
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
        if (x->sigsafe && r->ep_total > TDR_SIG_EPISODES)
            jprintf(b, ", \"episodes_omitted\": %llu", (unsigned long long)(r->ep_total - TDR_SIG_EPISODES));
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
            tdr_thread_level(r->thread_requested), tdr_thread_level(r->thread_provided), (unsigned)r->threads_max,
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
    bjnum(b, tdr_rel(x, r->t_init));
    jprintf(b, ",\n  \"t_finalize_s\": ");
    bjnum(b, tdr_rel(x, r->t_end));
    jprintf(b, ",\n  \"wall_s\": ");
    bjnum(b, wall);
    jprintf(b, ",\n  \"finalize_wait_s\": ");
    bjnum(b, r->t_cat[TDR_CAT_WAIT]);

    jprintf(b, ",\n  \"tdshim_time\": {\"total_s\": ");
    bjnum(b, x->total);
    jprintf(b, ", \"percent_of_wall\": ");
    bjnum(b, wall > 0 ? 100 * x->total / wall : NAN);
    jprintf(b, ", \"categories\": {");
    for (int c = 0; c < TDR_NCAT; c++) {
        jprintf(b, "%s\n    \"%s\": {\"seconds\": ", c ? "," : "", tdr_cat_names[c]);
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
    jprintf(b, "], \"unreceived_other_tags\": %llu, \"sent_early\": %llu,\n    \"other_jobs\": {\"sent\": %llu, "
               "\"sent_bytes\": %llu, \"received\": %llu, \"received_bytes\": %llu}},\n",
            (unsigned long long)r->unrecv_tags_other, (unsigned long long)r->eager_detached,
            (unsigned long long)r->xjob_sent,
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
        jprintf(b, "%s{\"tag\": %d, \"times\": %llu, \"found\": %llu}", t ? ", " : "", r->work_tags[t].tag,
                (unsigned long long)r->work_tags[t].times, (unsigned long long)r->work_tags[t].found);
    jprintf(b, "], \"work_tags_other\": %llu},\n", (unsigned long long)r->work_tags_other);

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
        jprintf(b, "%s{\"tag\": %d, \"messages\": %llu, \"empty\": %llu, \"bytes\": %llu, \"min_bytes\": %llu, "
                   "\"max_bytes\": %llu, \"min_messages\": %llu}",
                i ? ", " : "", r->viol_tags[i].tag, (unsigned long long)r->viol_tags[i].messages,
                (unsigned long long)r->viol_tags[i].empty, (unsigned long long)r->viol_tags[i].bytes,
                (unsigned long long)r->viol_tags[i].min_bytes, (unsigned long long)r->viol_tags[i].max_bytes,
                (unsigned long long)r->viol_tags[i].min_messages);
    jprintf(b, "], \"violations_other_tags\": %llu", (unsigned long long)r->viol_tags_other);
    jprintf(b, ", \"borrows\": %llu, \"flushes\": %llu, \"held_control\": %llu, "
               "\"quiescent_clean\": %llu, \"notifications\": %llu,\n    \"busy_again\": %llu, "
               "\"unsafe\": %llu, \"unsafe_episode\": %u, \"confirmed\": %llu, \"refuted\": %llu, "
               "\"collective_confirms\": %llu, \"spin_unsure\": %llu, \"core_error\": ",
            (unsigned long long)s->borrows, (unsigned long long)s->flushes, (unsigned long long)s->held,
            (unsigned long long)s->quiescent_clean, (unsigned long long)r->notifications,
            (unsigned long long)s->busy_again, (unsigned long long)s->unsafe, s->unsafe_episode,
            (unsigned long long)s->confirmed, (unsigned long long)s->refuted, (unsigned long long)s->coll_confirms,
            (unsigned long long)s->unsure);
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
    bjnum(b, tdr_rel(x, r->t_last_passive));

    if (!x->sigsafe && r->ep_total > r->nepisodes) /* kept: the first TDR_EP_HEAD, the last TDR_EP_TAIL */
        jprintf(b, ",\n  \"episodes_omitted\": %llu", (unsigned long long)(r->ep_total - r->nepisodes));
    jprintf(b, ",\n  \"episodes\": [");
    /* in a signal handler the last TDR_SIG_EPISODES (the room reserved at MPI_Init) */
    size_t ep0 = x->sigsafe && r->nepisodes > TDR_SIG_EPISODES ? r->nepisodes - TDR_SIG_EPISODES : 0;
    for (size_t i = ep0; i < r->nepisodes; i++) {
        const tdr_episode *e = tdr_episode_at(r, i);
        jprintf(b, "%s\n    {\"episode\": %u, \"t_detect_s\": ", i > ep0 ? "," : "", (unsigned)e->episode);
        bjnum(b, tdr_rel(x, e->t_detect));
        jprintf(b, ", \"t_last_passive_s\": ");
        bjnum(b, tdr_rel(x, e->t_last_passive));
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
        x->sites_json(b, r->sites, TDR_SITE_POLL, m->callsites_top);
        jprintf(b, ",\n    \"send\": ");
        x->sites_json(b, r->sites, TDR_SITE_SEND, m->callsites_top);
    }
    jprintf(b, "}\n}\n");
}
