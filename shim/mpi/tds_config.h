/*
 * The configuration of tdshim (README "Environment"): the TDSHIM_*
 * variables of tds_env.h parsed into one struct (tds_config.c), apart from
 * the state and from MPI so that the parser can be fuzzed
 * (tests/fuzz/fuzz-config.c) with the code the shim runs.
 */
#ifndef TDS_CONFIG_H
#define TDS_CONFIG_H

#include <stddef.h>
#include <stdio.h>

#include "td_algo.h"
#include "tdr.h"
#include "tds_env.h"

/* ---- configuration (tds_config.c) ---- */
enum { TDS_NOTIFY_NONE = 0, TDS_NOTIFY_TAG, TDS_NOTIFY_EXIT };
enum { TDS_IDLE_PROBE = 0, TDS_IDLE_TEST, TDS_IDLE_BLOCKING, TDS_IDLE_PCONTROL, TDS_IDLE_API, TDS_IDLE_SPIN };
/* TDSHIM_IDLE=spin: empty polls in a row, each within TDSHIM_SPIN_GAP of
 * the one before, that make a rank passive (tds_progress.c, spin_poll) */
#define TDS_SPIN_POLLS_DEFAULT 16
enum { TDS_PB_AUTO = 0, TDS_PB_COPY, TDS_PB_DATATYPE, TDS_PB_NONE };

#define TDS_SHORT_BYTES_MAX 65536 /* TDSHIM_IGNORE_SHORT's largest BYTES */

typedef struct tds_range {
    int lo, hi;
} tds_range;

typedef struct tds_config {
    const struct td_algo *algo;
    td_cfg cfg;                /* rank/size filled at init */
    int notify, notify_tag, exit_code;
    int idle, idle_polls;      /* probe:N -> idle_polls = N (1 for plain probe); spin:N likewise */
    double spin_gap;           /* TDSHIM_SPIN_GAP (seconds): longest program time between two polls of a spin */
    tds_range *ignore;         /* TDSHIM_IGNORE_TAGS, sorted ranges */
    int nignore;
    uint64_t ignore_low;       /* bit t set: tag t (0 <= t < 64) is in ignore (tds_tag_ignored, without the walk) */
    int ignore_empty;          /* TDSHIM_IGNORE_EMPTY: zero-byte messages are not primary */
    tds_range *shorts;         /* TDSHIM_IGNORE_SHORT: lo = tag, hi = most bytes of a message that is not primary */
    int nshort;
    long short_max;            /* the greatest hi of shorts (-1: none) */
    int classify;              /* nignore || ignore_empty || nshort: a message's kind needs a look (tds_not_primary) */
    int threads;               /* TDSHIM_THREADS: threads using MPI before a rank can be passive (tds_mt.c) */
    int piggyback;
    int want_text, want_json;
    char report_dir[512];
    int report_group;          /* TDSHIM_REPORT_MODE=group */
    int callsites;
    double finalize_timeout;
    int mixed_native;          /* TDSHIM_MIXED=native: a job with ranks not under tdshim runs natively */
    double mixed_timeout;      /* TDSHIM_MIXED_TIMEOUT (seconds; 0: no launch check) */
    int verbose;
    tdr_kv kv[TDS_ENV_N];      /* effective values, for the report header */
} tds_config;

/* Parses every TDSHIM_* variable. On a bad value returns -1 and writes the
 * one-line user message into err. tag_ub: MPI_TAG_UB of MPI_COMM_WORLD. */
int tds_config_parse(tds_config *cfg, int tag_ub, char *err, size_t errlen);
void tds_config_free(tds_config *cfg);
/* One line on out for each TDSHIM_* variable of the environment that
 * neither the library (TDS_ENV_LIST) nor its tools (TDS_ENV_TOOLS) know,
 * naming the nearest known one; returns how many. Not fatal. */
int tds_config_unknown(FILE *out);

#endif
