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
    TDR_CAT_DEFER,      /* sends held back for credit */
    TDR_CAT_FINALIZE,   /* finishing the episode, gathering reports */
    TDR_NCAT
} tdr_cat;

typedef struct tdr_episode {
    uint32_t episode;
    double t_detect;       /* when this rank learned of it (tdr_now, aligned: see t_offset) */
    double t_last_passive; /* this rank's last busy->idle transition before it */
} tdr_episode;

typedef struct tdr_sites tdr_sites; /* call-site table (tdr_callsite.c), NULL when off */

typedef struct tdr_rank {
    int rank, size;
    double t_init, t_end;   /* tdr_now() at MPI_Init and at MPI_Finalize entry */
    double t_offset;        /* add to local times to get rank 0's clock (estimated at init) */
    double t_cat[TDR_NCAT];
    uint64_t n_cat[TDR_NCAT];

    uint64_t prim_sent, prim_sent_bytes;   /* primary messages, user payload bytes */
    uint64_t prim_recv, prim_recv_bytes;
    uint64_t pb_bytes_sent, pb_bytes_recv; /* piggyback header bytes */
    uint64_t ctl_bytes_sent, ctl_bytes_recv;
    uint64_t polls, empty_polls;           /* program polls (Iprobe/Test...) */
    uint64_t ignored_msgs;                 /* messages on TDSHIM_IGNORE_TAGS */
    uint64_t cancelled_recvs;
    uint64_t unreceived;                   /* sent to this rank, never received (finalize) */
    uint64_t notifications;                /* notifications delivered to the program */
    double t_last_passive;                 /* last busy->idle transition */
    double t_deferred;                     /* time sends spent deferred (credit) */
    int thread_requested, thread_provided;

    tdr_episode *episodes;
    size_t nepisodes, capepisodes;
    tdr_sites *sites;
} tdr_rank;

static inline double tdr_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* records an episode; returns 0 or -1 when out of memory */
int tdr_episode_add(tdr_rank *r, uint32_t episode, double t_detect);

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
} tdr_meta;

/* tdr_report.c (MPI): gathers over comm (the private communicator) and
 * writes the per-rank JSON files and rank 0's text summary; rank 0 prints
 * the short summary on stderr. Returns 0 or -1 (a message was printed). */
struct td_ctx;
#ifdef MPI_VERSION
int tdr_write_reports(tdr_rank *r, const struct td_ctx *core, const tdr_meta *meta, MPI_Comm comm);
#endif

#endif
