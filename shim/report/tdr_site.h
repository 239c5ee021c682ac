/*
 * Read side of the call-site table (tdr_callsite.c), for the report writer.
 * Private to shim/report.
 */
#ifndef TDR_SITE_H
#define TDR_SITE_H

#include "tdr.h"
#include "tdr_json.h"

#define TDR_SITE_FUNC 96
#define TDR_SITE_MODULE 96

typedef struct tdr_site_info {
    char func[TDR_SITE_FUNC];     /* symbol, "" when unknown */
    char module[TDR_SITE_MODULE]; /* basename of the object file */
    uint64_t offset;              /* into func, or into module when func is "" */
    uint64_t count;
    double seconds;
} tdr_site_info;

/* Copies the up to max busiest sites of kind (by count, then time) into out;
 * returns how many. */
int tdr_sites_top(const tdr_sites *s, int kind, tdr_site_info *out, int max);
/* Totals over every site of kind, including the ones not in the table
 * (table full: attributed to no site). */
void tdr_sites_totals(const tdr_sites *s, int kind, uint64_t *count, double *seconds,
                      uint64_t *unattributed);
/* Number of distinct sites of kind seen. */
int tdr_sites_distinct(const tdr_sites *s, int kind);
void tdr_sites_free(tdr_sites *s);
/* The "poll" or "send" object of a rank's "callsites" in its JSON
 * (SCHEMA.md): totals and the top sites. Allocates: never in a signal
 * handler (tdr_record.c calls it through tdr_ctx.sites_json). */
void tdr_sites_json(tdr_buf *b, const tdr_sites *s, int kind, int topn);

#endif
