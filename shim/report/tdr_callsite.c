/*
 * Call sites of the program's polls and sends (TDSHIM_CALLSITES, DESIGN.md §6).
 *
 * Record path: unw_backtrace() into a stack buffer, skip the frames that lie
 * inside the object holding this code (libtdshim), and count the first
 * return address outside it in a fixed open-addressing table allocated at
 * init. Nothing is allocated after init; the symbol is resolved once, the
 * first time a site is seen (unw_get_proc_name reads .symtab, so static
 * functions of the program are named too, unlike dladdr).
 *
 * Sites are keyed by return address, so two calls on the same source line
 * are two sites; the report shows function + offset and the module, which
 * is what a user needs to find "the loop that polls".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr, dl_iterate_phdr */
#endif
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "tdr_site.h"
#include "tdr_writer.h" /* the JSON writer */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_LIBUNWIND
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>
#include <link.h>

#define SITE_CAP 1024u /* power of two; a program rarely has more than a few dozen */
#define SITE_DEPTH 48  /* frames unwound: the shim's own frames come first */

typedef struct site {
    uintptr_t ip; /* return address; 0 = free slot */
    int kind;
    uint64_t count;
    double seconds;
    tdr_site_info info;
} site;

struct tdr_sites {
    uintptr_t self_lo, self_hi; /* address range of the object containing this code */
    int topn;
    int distinct[2];
    uint64_t total[2], unattributed[2];
    double total_s[2];
    site tab[SITE_CAP];
};

typedef struct self_range {
    uintptr_t probe, lo, hi;
} self_range;

/* dl_iterate_phdr callback: the PT_LOAD span of the object containing probe */
static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
    self_range *sr = arg;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < lo)
            lo = a;
        if (a + ph->p_memsz > hi)
            hi = a + ph->p_memsz;
    }
    if (sr->probe >= lo && sr->probe < hi) {
        sr->lo = lo;
        sr->hi = hi;
        return 1;
    }
    return 0;
}

int tdr_sites_init(tdr_rank *r, int topn)
{
    r->sites = NULL;
    if (topn <= 0)
        return 0;
    tdr_sites *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    self_range sr = {(uintptr_t)&tdr_sites_init, 0, 0};
    if (!dl_iterate_phdr(find_self, &sr)) {
        free(s);
        return -1;
    }
    s->self_lo = sr.lo;
    s->self_hi = sr.hi;
    s->topn = topn;
    r->sites = s;
    return 0;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Names a site the first time it is seen: walk the stack again with a
 * cursor to the frame whose IP is the site, for unw_get_proc_name. */
static void resolve(site *e)
{
    tdr_site_info *in = &e->info;
    Dl_info dl;
    /* ip - 1: a return address may already belong to the next function */
    if (dladdr((void *)(e->ip - 1), &dl) && dl.dli_fname)
        snprintf(in->module, sizeof in->module, "%s", base_name(dl.dli_fname));
    else
        snprintf(in->module, sizeof in->module, "?");

    unw_context_t uc;
    unw_cursor_t cur;
    if (unw_getcontext(&uc) == 0 && unw_init_local(&cur, &uc) == 0) {
        do {
            unw_word_t ip;
            if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0)
                break;
            if ((uintptr_t)ip == e->ip) {
                unw_word_t off;
                if (unw_get_proc_name(&cur, in->func, sizeof in->func, &off) == 0) {
                    in->offset = off;
                    return;
                }
                break;
            }
        } while (unw_step(&cur) > 0);
    }
    if (dladdr((void *)(e->ip - 1), &dl) && dl.dli_sname && dl.dli_saddr) {
        snprintf(in->func, sizeof in->func, "%s", dl.dli_sname);
        in->offset = e->ip - (uintptr_t)dl.dli_saddr;
    } else {
        in->func[0] = '\0';
        in->offset = dl.dli_fbase ? e->ip - (uintptr_t)dl.dli_fbase : e->ip;
    }
}

void tdr_site_record(tdr_rank *r, int kind, double seconds)
{
    tdr_sites *s = r->sites;
    if (!s || (kind != TDR_SITE_POLL && kind != TDR_SITE_SEND))
        return;
    s->total[kind]++;
    s->total_s[kind] += seconds;

    void *frames[SITE_DEPTH];
    int n = unw_backtrace(frames, SITE_DEPTH);
    uintptr_t ip = 0;
    for (int i = 0; i < n; i++) {
        uintptr_t a = (uintptr_t)frames[i];
        if (a < s->self_lo || a >= s->self_hi) {
            ip = a;
            break;
        }
    }
    if (!ip) {
        s->unattributed[kind]++;
        return;
    }
    /* Fibonacci hashing of the address, linear probing */
    size_t h = (size_t)((((uint64_t)ip * 0x9E3779B97F4A7C15ull) >> 54) ^ (uint64_t)kind) & (SITE_CAP - 1);
    for (size_t k = 0; k < SITE_CAP; k++) {
        site *e = &s->tab[(h + k) & (SITE_CAP - 1)];
        if (e->ip == ip && e->kind == kind) {
            e->count++;
            e->seconds += seconds;
            return;
        }
        if (e->ip == 0) {
            e->ip = ip;
            e->kind = kind;
            e->count = 1;
            e->seconds = seconds;
            s->distinct[kind]++;
            resolve(e);
            return;
        }
    }
    s->unattributed[kind]++; /* table full */
}

static int busier(const site *a, const site *b)
{
    if (a->count != b->count)
        return a->count > b->count;
    return a->seconds > b->seconds;
}

int tdr_sites_top(const tdr_sites *s, int kind, tdr_site_info *out, int max)
{
    if (!s || max <= 0)
        return 0;
    /* partial selection: max is small (TDSHIM_CALLSITES=N) */
    const site *best[max];
    int n = 0;
    for (size_t i = 0; i < SITE_CAP; i++) {
        const site *e = &s->tab[i];
        if (!e->ip || e->kind != kind)
            continue;
        int j = n < max ? n++ : max;
        if (j == max && !busier(e, best[max - 1]))
            continue;
        if (j == max)
            j = max - 1;
        while (j > 0 && busier(e, best[j - 1])) {
            best[j] = best[j - 1];
            j--;
        }
        best[j] = e;
    }
    for (int i = 0; i < n; i++) {
        out[i] = best[i]->info;
        out[i].count = best[i]->count;
        out[i].seconds = best[i]->seconds;
    }
    return n;
}

void tdr_sites_totals(const tdr_sites *s, int kind, uint64_t *count, double *seconds,
                      uint64_t *unattributed)
{
    *count = s ? s->total[kind] : 0;
    *seconds = s ? s->total_s[kind] : 0;
    *unattributed = s ? s->unattributed[kind] : 0;
}

int tdr_sites_distinct(const tdr_sites *s, int kind) { return s ? s->distinct[kind] : 0; }

void tdr_sites_free(tdr_sites *s) { free(s); }

#else /* !HAVE_LIBUNWIND: the feature is reported as unavailable */

int tdr_sites_init(tdr_rank *r, int topn)
{
    r->sites = NULL;
    return topn > 0 ? -1 : 0;
}

void tdr_site_record(tdr_rank *r, int kind, double seconds) {}

int tdr_sites_top(const tdr_sites *s, int kind, tdr_site_info *out, int max) { return 0; }

void tdr_sites_totals(const tdr_sites *s, int kind, uint64_t *count, double *seconds,
                      uint64_t *unattributed)
{
    *count = 0;
    *seconds = 0;
    *unattributed = 0;
}

int tdr_sites_distinct(const tdr_sites *s, int kind) { return 0; }

void tdr_sites_free(tdr_sites *s) {}

#endif

/* both builds: the totals and the top sites as JSON (tdr_site.h) */
void tdr_sites_json(buf *b, const tdr_sites *s, int kind, int topn)
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
