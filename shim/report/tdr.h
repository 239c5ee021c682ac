/*
 * Measurement kept by the MPI shim for the per-rank report (DESIGN.md §6).
 * The shim (shim/mpi) fills a tdr_rank; shim/report turns it, plus the
 * core's td_stats, into the JSON/text reports at MPI_Finalize. Only
 * shim/report writes files.
 *
 * Cost rule: counters are plain increments; timed sections use tdr_now()
 * (clock_gettime(CLOCK_MONOTONIC) through the vDSO: no system call).
 */
#ifndef TDR_H
#define TDR_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* where time inside tdshim goes */
typedef enum {
    TDR_CAT_SEND = 0,   /* piggyback/copy on sends */
    TDR_CAT_RECV,       /* piggyback/copy on receives, probes, completions */
    TDR_CAT_PROGRESS,   /* detection progress while passive (polling loop) */
    TDR_CAT_CONTROL,    /* sending/receiving control messages */
    TDR_CAT_FINALIZE,   /* finishing the episode, gathering reports */
    TDR_NCAT
} tdr_cat;
/* Not tdshim's time, so past TDR_NCAT (outside every sum of the
 * categories) but timed the same way: waiting in MPI_Finalize for the last
 * rank to reach it (tds_init.c finish, step 1). MPI_Finalize itself waits
 * so natively (Open MPI's and MPICH's end with a fence of all processes),
 * so this is part of the rank's wall time, not of its time in tdshim: a
 * rank that reached MPI_Finalize 3 ms before the others in a 36 ms run
 * read 8 % of its wall time in tdshim when it was (Tachyon, 4 ranks). */
#define TDR_CAT_WAIT ((tdr_cat)TDR_NCAT)

/* the idle notions measure mode evaluates side by side (TDSHIM_IDLE=probe, test, spin) */
enum { TDR_CAND_PROBE = 0, TDR_CAND_TEST, TDR_CAND_SPIN, TDR_NCAND };
#define TDR_CAND_NAMES {"probe", "test", "spin"}

typedef struct tdr_episode {
    uint32_t episode;
    double t_detect;       /* when this rank learned of it (local tdr_now; the report aligns with t_offset) */
    double t_last_passive; /* this rank's last busy->idle transition before it */
    unsigned unsafe;       /* this rank proved the announcement premature: bit k for evidence of kind k
                            * (TD_EV_*, td_ev_names; td_stats.unsafe_by) */
    char unsafe_why[200];  /* the first such evidence, in words (td_ctx.unsafe_msg) */
} tdr_episode;

/* ping-pongs per rank of the clock alignment at MPI_Init (tdr_mpi.h, tdr_clock_sync) */
#define TDR_CLOCK_ROUNDS 8

typedef struct tdr_sites tdr_sites; /* call-site table (tdr_callsite.c), NULL when off */

#define TDR_UNRECV_TAGS 8
#define TDR_VIOL_TAGS 8
/* the longest message the advice takes for a "no work" reply or a request
 * (TDSHIM_IGNORE_SHORT): a tag whose violations include longer messages, of
 * several sizes, carries data (tdr_advice.c) */
#define TDR_SHORT_REPLY 64
typedef struct tdr_rank {
    int rank, size;
    double t_init, t_end;   /* tdr_now() at MPI_Init and at MPI_Finalize entry */
    double t_offset;        /* add to local times to get rank 0's clock (estimated at init) */
    double t_offset_err;    /* bound on the error of t_offset (half the best round trip) */
    int clock_rounds;       /* ping-pongs per rank done by tdr_clock_sync (0: not synced) */
    double t_cat[TDR_NCAT + 1]; /* the categories, then TDR_CAT_WAIT */
    uint64_t n_cat[TDR_NCAT + 1];

    uint64_t prim_sent, prim_sent_bytes;   /* primary messages, user payload bytes */
    uint64_t prim_recv, prim_recv_bytes;
    uint64_t pb_bytes_sent, pb_bytes_recv; /* piggyback header bytes */
    uint64_t ctl_bytes_sent, ctl_bytes_recv;
    uint64_t polls, empty_polls;           /* program polls (Iprobe/Test...) */
    uint64_t empty_tests;                  /* ...empty MPI_Test* on sets holding a receive */
    uint64_t ignored_msgs;                 /* messages on TDSHIM_IGNORE_TAGS */
    uint64_t nohdr_msgs;                   /* receives without tdshim's header, not truncated (not counted) */
    uint64_t xjob_sent, xjob_sent_bytes;   /* messages to processes of other jobs (spawned, connected,
                                            * joined): not primary, not counted by the algorithm */
    uint64_t xjob_recv, xjob_recv_bytes;   /* ...and from them */
    uint64_t cancelled_recvs;
    uint64_t unreceived;                   /* sent to this rank, never received (finalize) */
    uint64_t eager_detached;               /* standard sends returned before MPI completed them, as eager
                                            * sends natively (tds_send_eager) */
    struct tdr_tagcount {
        int tag;
        uint64_t messages, bytes;
    } unrecv_tags[TDR_UNRECV_TAGS];        /* ...found queued at finalize, by tag (first tags seen) */
    int nunrecv_tags;
    uint64_t unrecv_tags_other;            /* ...on tags beyond the table */
    struct tdr_violtag {
        int tag;
        uint64_t messages, empty, bytes;
        uint64_t min_bytes, max_bytes;     /* the shortest and the longest of them (TDSHIM_IGNORE_SHORT's advice) */
        uint64_t min_messages;             /* how many were min_bytes long */
    } viol_tags[TDR_VIOL_TAGS];            /* contract violations by tag (first tags seen) */
    int nviol_tags;
    uint64_t viol_tags_other;              /* ...on tags beyond the table */
    uint64_t busy_gaps;                    /* empty polls after which the program ran > TDSHIM_SPIN_GAP before the
                                              next one without receiving anything: polling while busy */
    double busy_gap_s;                     /* the time of those gaps */
    uint64_t unscoped_polls;               /* empty polls that could not deliver work or the notification
                                              (tds_poll_scope): never idle polls */
    /* measure mode (TDSHIM_NOTIFY=none): the idle notions side by side (TDR_CAND_*, tds_init.c
     * cand_poll): how often each would have judged this rank passive, and how often the rank then sent a
     * primary message without receiving one (a breach: it still had work) */
    uint64_t cand_passive[TDR_NCAND], cand_breach[TDR_NCAND];
    /* measure mode: what a message on a tag did to a rank waiting for work. found: times a poll of a rank
     * the spin candidate judged passive found a message on the tag; times: how many of those the rank
     * then sent primary bytes after (before its next poll). A tag carries work when that is no
     * coincidence (tdr_advice.c, TDR_WORK_SHARE) (TDR_VIOL_TAGS tags at most) */
    struct tdr_worktag {
        int tag;
        uint64_t times, found;
        uint64_t finds; /* not reported: the finds tds_spin_found counted, its sample's clock */
    } work_tags[TDR_VIOL_TAGS];
    int nwork_tags;
    uint64_t work_tags_other;              /* ...finds on tags beyond those: whether they carry work is unknown */
    uint64_t notifications;                /* notifications delivered to the program */
    double t_last_passive;                 /* last busy->idle transition */
    int thread_requested, thread_provided;
    uint32_t threads_max;                  /* MPI_THREAD_MULTIPLE: most threads using MPI at once (tds_mt.c) */
    uint64_t threads_late;                 /* ...threads first seen while the rank was passive without them */
    int node_ranks, node_cpus;             /* this job's ranks on the rank's node, its online CPUs (0: unknown) */

    /* exclusive timing (tdr_enter/tdr_leave): the open sections, innermost last */
    int tdepth;
    uint8_t tstack[8];
    double tmark;

    /* the episodes this rank learned of: all are counted (ep_total), the
     * first TDR_EP_HEAD and the last TDR_EP_TAIL kept (nepisodes of them,
     * tdr_episode_at): a program that polls while it works can make
     * hundreds of thousands (Debian's Ray assembler: 644,418 in 52 s) */
    tdr_episode *episodes;
    size_t nepisodes, capepisodes;
    uint64_t ep_total;
    tdr_sites *sites;

    /* agreed at MPI_Init (tdr_run_id), for a report written without MPI */
    double t0_rank0;        /* rank 0's t_init on rank 0's clock (0: unknown) */
    char run_stamp[48];     /* job id, or rank 0's local time at MPI_Init */
    long run_pid0;          /* rank 0's pid */
    uint64_t run_token;     /* rank 0's random number: the partial directory's name cannot be guessed */
    long init_pid;          /* the process that called MPI_Init: the only one that reports (fork) */
    char *sig_buf;          /* the partial report's room, reserved at MPI_Init (a signal handler cannot allocate) */
    size_t sig_cap;
} tdr_rank;

static inline double tdr_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/*
 * Exclusive ("self") time per category: sections may nest (a control
 * message sent while progressing, progress inside MPI_Finalize), and time
 * goes to the innermost open section only, so the categories add up to the
 * time spent in tdshim and never exceed the wall time. Each call costs
 * one tdr_now(). Sections deeper than 8 are charged to the 8th.
 */
static inline void tdr_enter(tdr_rank *r, tdr_cat c)
{
    double now = tdr_now();
    if (r->tdepth > 0)
        r->t_cat[r->tstack[r->tdepth < 8 ? r->tdepth - 1 : 7]] += now - r->tmark;
    if (r->tdepth < 8)
        r->tstack[r->tdepth] = (uint8_t)c;
    r->tdepth++;
    r->n_cat[c]++;
    r->tmark = now;
}

static inline void tdr_leave(tdr_rank *r)
{
    double now = tdr_now();
    if (r->tdepth > 0) {
        r->t_cat[r->tstack[r->tdepth <= 8 ? r->tdepth - 1 : 7]] += now - r->tmark;
        r->tdepth--;
    }
    r->tmark = now;
}

/* episodes kept per rank: the first TDR_EP_HEAD, then the last TDR_EP_TAIL
 * in a ring over the table's rest (224 bytes each: 1.1 MB at most) */
#define TDR_EP_HEAD 1024
#define TDR_EP_TAIL 4096
/* the i-th episode kept (0 <= i < r->nepisodes), oldest first */
static inline const tdr_episode *tdr_episode_at(const tdr_rank *r, size_t i)
{
    if (r->ep_total <= TDR_EP_HEAD + TDR_EP_TAIL || i < TDR_EP_HEAD)
        return &r->episodes[i];
    size_t start = (size_t)((r->ep_total - TDR_EP_HEAD) % TDR_EP_TAIL); /* the oldest of the ring */
    return &r->episodes[TDR_EP_HEAD + (start + i - TDR_EP_HEAD) % TDR_EP_TAIL];
}
/* records an episode; returns 0 or -1 when out of memory */
int tdr_episode_add(tdr_rank *r, uint32_t episode, double t_detect);
/* marks an episode this rank learned of as premature (no-op if unknown) */
void tdr_episode_unsafe(tdr_rank *r, uint32_t episode, unsigned kinds, const char *why);
/* a primary sent while passive (a contract violation): tag, user bytes */
void tdr_violation_add(tdr_rank *r, int tag, uint64_t bytes);
/* a primary found queued at MPI_Finalize: tag, user bytes */
void tdr_unreceived_add(tdr_rank *r, int tag, uint64_t bytes);
/* frees what the report module allocated in r (episodes, call sites) */
void tdr_rank_free(tdr_rank *r);

/* ---- call sites (tdr_callsite.c; libunwind) ---- */
enum { TDR_SITE_POLL = 0, TDR_SITE_SEND = 1 };
/* returns 0, or -1 when built without libunwind (the shim then reports
 * TDSHIM_CALLSITES as unavailable) */
int tdr_sites_init(tdr_rank *r, int topn);
/* attributes one poll or send (and its time in tdshim) to the program's
 * call site: the first frame outside libtdshim */
void tdr_site_record(tdr_rank *r, int kind, double seconds);

/* ---- report configuration, as the shim parsed it ---- */
typedef struct tdr_kv {
    const char *key;    /* "TDSHIM_ALGO" */
    char value[128];    /* effective value, defaults included */
} tdr_kv;

typedef struct tdr_meta {
    const char *version;    /* PACKAGE_VERSION */
    const char *algo;
    const tdr_kv *config;   /* every TDSHIM_* variable with its effective value */
    int nconfig;
    const char *report_dir; /* TDSHIM_REPORT_DIR (effective) */
    int want_json, want_text; /* TDSHIM_REPORT */
    int callsites_top;      /* 0 = off */
    int group_mode;         /* TDSHIM_REPORT_MODE=group: files 0640, directories 0750 (else 0600, 0700) */
    int stamped;            /* primaries carry tdshim's header and its episode stamp (not header-free) */
} tdr_meta;

/* tdr_report.c (MPI): gathers over comm (the private communicator) and
 * writes the per-rank JSON files and rank 0's text summary; rank 0 prints
 * the short summary on stderr. Returns 0 or -1 (a message was printed). */
struct td_ctx;
#ifdef MPI_VERSION
int tdr_write_reports(tdr_rank *r, const struct td_ctx *core, const tdr_meta *meta, MPI_Comm comm);
/* collective at MPI_Init: every rank learns rank 0's t_init, run stamp and
 * pid (what tdr_write_partial names its directory after) */
int tdr_run_id(tdr_rank *r, MPI_Comm comm);
#endif
/* tdr_partial.c: a report written by this rank alone, without MPI, in the handler of a
 * killing signal (SIGTERM or SIGINT, why names it): its JSON file, marked
 * "partial" with why and the detection state, in <TDSHIM_REPORT_DIR>/
 * tdshim-report-<stamp>-partial-<pid of rank 0>-<run_token>/. No summary
 * (that needs every rank). Async-signal-safe: uses only the room reserved
 * by tdr_run_id. Prints one line on stderr (write(2)): the file, or why
 * there is none. Returns 0 or -1. */
int tdr_write_partial(tdr_rank *r, const struct td_ctx *core, const tdr_meta *meta, const char *why);

#endif
