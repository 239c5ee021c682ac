/*
 * TDSHIM_* configuration (DESIGN.md §5): one parser per value kind. Every
 * variable is validated at MPI_Init, including the ones the chosen
 * algorithm ignores, so a typo never goes unnoticed. A bad value produces
 * exactly one line: "tdshim: TDSHIM_X='value' is invalid: accepted values
 * are ...". The environment string is never modified (mpiP mutates it).
 * A TDSHIM_* variable that nothing reads (a misspelling) is not an error:
 * tds_config_unknown names it and the nearest known one.
 */
#include "tds_config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "td_algo.h"

#define TDS_ENV_DOC(m, name, def, acc) [m] = {name, def, acc},
const tds_env_doc tds_env_docs[TDS_ENV_N] = {TDS_ENV_LIST(TDS_ENV_DOC)};
#undef TDS_ENV_DOC
/* every variable has its manual entry (tds_env.h, TDS_ENV_MAN; a wrong macro
 * name does not compile, a missing entry fails here) */
#define TDS_ENV_MAN_ONE(m, ranks, what) +((m) >= 0)
_Static_assert(0 TDS_ENV_MAN(TDS_ENV_MAN_ONE) == TDS_ENV_N,
               "every TDSHIM_* of TDS_ENV_LIST needs its line in TDS_ENV_MAN (shim/mpi/tds_env.h)");
#undef TDS_ENV_MAN_ONE

/* ---- value kinds ---- */

/* The documented number forms, nothing else: "0" or a decimal without
 * leading zeros ("007"), and with frac a fraction "1.5" (".5", "1." are
 * not). strtoll/strtod alone would also take a sign ("+1", "-0"), leading
 * blanks, and strtod hex ("0x10", "0x1p4"), exponents ("1e3"), "inf" and
 * "nan": none of them is documented, so none is accepted (issue 27).
 * Negative values are never accepted: no variable takes one. */
static int plain_decimal(const char *s, int frac)
{
    const char *p = s;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (isdigit((unsigned char)*p))
            p++;
    else
        return 0;
    if (frac && *p == '.' && isdigit((unsigned char)p[1]))
        for (p++; isdigit((unsigned char)*p);)
            p++;
    return *p == 0;
}

/* whole string is a decimal integer in [lo, hi] */
static int parse_int(const char *s, long long lo, long long hi, long long *out)
{
    if (!plain_decimal(s, 0))
        return -1;
    errno = 0;
    long long v = strtoll(s, NULL, 10);
    if (errno || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* whole string is a decimal number in (lo, hi]; a value so small that it
 * is subnormal (0.000...1 with 310 zeros) is refused, not rounded */
static int parse_double(const char *s, double lo, double hi, double *out)
{
    if (!plain_decimal(s, 1))
        return -1;
    errno = 0;
    double v = strtod(s, NULL);
    if (errno || (v != 0 && !isnormal(v)) || !(v > lo) || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* one of names[] (NULL-terminated): returns the index or -1 */
static int parse_choice(const char *s, const char *const *names)
{
    for (int i = 0; names[i]; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -1;
}

/* "prefix:N" -> N in [lo,hi]; returns 1 if matched, 0 if s is not
 * "prefix:...", -1 if it is but N is bad */
static int parse_prefixed_int(const char *s, const char *prefix, long long lo, long long hi, long long *out)
{
    size_t l = strlen(prefix);
    if (strncmp(s, prefix, l) || s[l] != ':')
        return 0;
    return parse_int(s + l + 1, lo, hi, out) ? -1 : 1;
}

static int cmp_range(const void *a, const void *b)
{
    const tds_range *x = a, *y = b;
    return (x->lo > y->lo) - (x->lo < y->lo);
}

/* one entry of TDSHIM_IGNORE_TAGS: "A" or "A-B" */
static int tag_range_tok(char *tok, int tag_ub, tds_range *r)
{
    long long lo, hi;
    char *dash = strchr(tok, '-');
    if (dash) {
        *dash = 0;
        if (parse_int(tok, 0, tag_ub, &lo) || parse_int(dash + 1, 0, tag_ub, &hi) || hi < lo)
            return -1;
    } else if (parse_int(tok, 0, tag_ub, &lo)) {
        return -1;
    } else {
        hi = lo;
    }
    *r = (tds_range){(int)lo, (int)hi};
    return 0;
}

/* one entry of TDSHIM_IGNORE_SHORT: "TAG:BYTES" (lo = tag, hi = bytes) */
static int short_tok(char *tok, int tag_ub, tds_range *r)
{
    long long tag, bytes;
    char *colon = strchr(tok, ':');
    if (!colon)
        return -1;
    *colon = 0;
    if (parse_int(tok, 0, tag_ub, &tag) || parse_int(colon + 1, 0, TDS_SHORT_BYTES_MAX, &bytes))
        return -1;
    *r = (tds_range){(int)tag, (int)bytes};
    return 0;
}

/* a comma-separated list of entries, each parsed by one(), sorted by lo;
 * empty string = none */
static int parse_range_list(const char *s, int tag_ub, tds_range **out, int *n,
                            int (*one)(char *tok, int tag_ub, tds_range *r))
{
    *out = NULL;
    *n = 0;
    if (!*s)
        return 0;
    size_t cap = 1;
    for (const char *p = s; *p; p++)
        cap += *p == ',';
    tds_range *r = calloc(cap, sizeof *r);
    char *copy = strdup(s);
    if (!r || !copy)
        goto bad;
    int k = 0;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        if (one(tok, tag_ub, &r[k++]))
            goto bad;
    /* "1,,2" or a trailing comma is a typo, not an empty entry */
    for (const char *p = s; *p; p++)
        if (*p == ',' && (p == s || p[1] == ',' || p[1] == 0))
            goto bad;
    qsort(r, (size_t)k, sizeof *r, cmp_range);
    free(copy);
    *out = r;
    *n = k;
    return 0;
bad:
    free(r);
    free(copy);
    return -1;
}

/* "1,5-9,42" -> ranges */
static int parse_tag_list(const char *s, int tag_ub, tds_range **out, int *n)
{
    return parse_range_list(s, tag_ub, out, n, tag_range_tok);
}

/* TDSHIM_IGNORE_SHORT: "TAG:BYTES[,TAG:BYTES...]", sorted by tag, each tag
 * once; *max: the greatest BYTES (-1 for an empty list) */
static int parse_short_list(const char *s, int tag_ub, tds_range **out, int *n, long *max)
{
    *max = -1;
    if (parse_range_list(s, tag_ub, out, n, short_tok))
        return -1;
    for (int i = 0; i < *n; i++) {
        if (i && (*out)[i].lo == (*out)[i - 1].lo) { /* one tag twice: which bound? a typo */
            free(*out);
            *out = NULL;
            *n = 0;
            *max = -1;
            return -1;
        }
        if ((*out)[i].hi > *max)
            *max = (*out)[i].hi;
    }
    return 0;
}

/* ---- the variables ---- */

static const char *env_or_default(int v)
{
    const char *s = getenv(tds_env_docs[v].name);
    return s ? s : tds_env_docs[v].def;
}

/* s[0..n) as the user can read it: bytes that are not printable become
 * '?', and a long one is cut to its first 64 bytes and "...", so the rest
 * of the line always fits (a 600-byte value once pushed the accepted
 * values out of it: tests/fuzz). */
static void shown(char out[72], const char *s, size_t n)
{
    size_t i = 0;
    for (; i < n && i < 64; i++)
        out[i] = isprint((unsigned char)s[i]) ? s[i] : '?';
    snprintf(out + i, 72 - i, "%s", i < n ? "..." : "");
}

/* The one line of a bad value. */
static int bad(int v, const char *value, const char *accepted, char *err, size_t errlen)
{
    char q[72];
    shown(q, value, strlen(value));
    snprintf(err, errlen, "tdshim: %s='%s' is invalid: accepted values are %s", tds_env_docs[v].name, q,
             accepted ? accepted : tds_env_docs[v].accepted);
    return -1;
}

/* Optimal string alignment distance, case-folded (TDSHIM_algo is at 0
 * from TDSHIM_ALGO, a swapped pair of letters one edit away); names are
 * compared on their first 63 bytes. */
static int edit_distance(const char *a, size_t la, const char *b)
{
    enum { M = 63 };
    size_t lb = strlen(b);
    la = la < M ? la : M;
    lb = lb < M ? lb : M;
    int d[M + 1][M + 1];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int ca = toupper((unsigned char)a[i - 1]), cb = toupper((unsigned char)b[j - 1]);
            int x = d[i - 1][j - 1] + (ca != cb), y = d[i - 1][j] + 1, z = d[i][j - 1] + 1;
            x = y < x ? y : x;
            x = z < x ? z : x;
            if (i > 1 && j > 1 && ca == toupper((unsigned char)b[j - 2]) && toupper((unsigned char)a[i - 2]) == cb &&
                d[i - 2][j - 2] + 1 < x)
                x = d[i - 2][j - 2] + 1;
            d[i][j] = x;
        }
    return d[la][lb];
}

#define TDS_TOOL_NAME(name, who) name,
static const char *const tool_names[] = {TDS_ENV_TOOLS(TDS_TOOL_NAME) NULL};
#undef TDS_TOOL_NAME

extern char **environ;

int tds_config_unknown(FILE *out)
{
    int unknown = 0;
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "TDSHIM_", 7))
            continue;
        const char *eq = strchr(*e, '=');
        size_t n = eq ? (size_t)(eq - *e) : strlen(*e);
        const char *best = NULL;
        int bestd = INT_MAX, known = 0;
        /* the library's variables (TDS_ENV_LIST), then the tools' */
        for (int v = 0; v < TDS_ENV_N + (int)(sizeof tool_names / sizeof *tool_names) - 1 && !known; v++) {
            const char *name = v < TDS_ENV_N ? tds_env_docs[v].name : tool_names[v - TDS_ENV_N];
            known = strlen(name) == n && !strncmp(*e, name, n);
            int d = edit_distance(*e, n, name);
            if (d < bestd)
                bestd = d, best = name;
        }
        if (known)
            continue;
        char q[72];
        shown(q, *e, n);
        fprintf(out, "tdshim: unknown variable %s (did you mean %s?)\n", q, best);
        unknown++;
    }
    return unknown;
}

int tds_config_parse(tds_config *cf, int tag_ub, char *err, size_t errlen)
{
    static const char *const piggyback_names[] = {"auto", "copy", "datatype", "none", NULL};
    static const char *const topo_names[] = {"ring", "mesh", "torus", "hypercube", NULL};
    static const char *const verbose_names[] = {"0", "1", "2", NULL};
    const char *s;
    long long n;

    memset(cf, 0, sizeof *cf);
    td_cfg_default(&cf->cfg, 0, 1);
    for (int v = 0; v < TDS_ENV_N; v++) {
        cf->kv[v].key = tds_env_docs[v].name;
        snprintf(cf->kv[v].value, sizeof cf->kv[v].value, "%s", env_or_default(v));
    }

    /* first: the launch check (tds_preload.c) runs even when a later
     * value is bad, and needs these two (defaults if they are bad) */
    cf->mixed_timeout = 3.0;
    s = env_or_default(TDS_ENV_MIXED_TIMEOUT);
    if (strcmp(s, "0") && parse_double(s, 0.0, 3600.0, &cf->mixed_timeout))
        return bad(TDS_ENV_MIXED_TIMEOUT, s, NULL, err, errlen);
    if (!strcmp(s, "0"))
        cf->mixed_timeout = 0.0;
    s = env_or_default(TDS_ENV_MIXED);
    {
        static const char *const mixed_names[] = {"stop", "native", NULL};
        if ((cf->mixed_native = parse_choice(s, mixed_names)) < 0) {
            cf->mixed_native = 0;
            return bad(TDS_ENV_MIXED, s, NULL, err, errlen);
        }
    }

    s = env_or_default(TDS_ENV_ALGO);
    cf->algo = td_algo_find(s);
    if (!cf->algo) {
        char names[256];
        td_algo_names(names, sizeof names);
        return bad(TDS_ENV_ALGO, s, names, err, errlen);
    }

    s = env_or_default(TDS_ENV_NOTIFY);
    if (!strcmp(s, "none")) {
        cf->notify = TDS_NOTIFY_NONE;
    } else if (!strcmp(s, "exit")) {
        cf->notify = TDS_NOTIFY_EXIT;
    } else {
        int r = parse_prefixed_int(s, "tag", 0, tag_ub, &n);
        if (r == 1) {
            cf->notify = TDS_NOTIFY_TAG;
            cf->notify_tag = (int)n;
        } else if (r == 0 && (r = parse_prefixed_int(s, "exit", 0, 255, &n)) == 1) {
            cf->notify = TDS_NOTIFY_EXIT;
            cf->exit_code = (int)n;
        } else {
            return bad(TDS_ENV_NOTIFY, s, NULL, err, errlen);
        }
    }

    s = env_or_default(TDS_ENV_IDLE);
    cf->idle_polls = 1;
    if (!strcmp(s, "probe")) {
        cf->idle = TDS_IDLE_PROBE;
    } else if (parse_prefixed_int(s, "probe", 1, INT_MAX, &n) == 1) {
        cf->idle = TDS_IDLE_PROBE;
        cf->idle_polls = (int)n;
    } else if (!strcmp(s, "spin")) {
        cf->idle = TDS_IDLE_SPIN;
        cf->idle_polls = TDS_SPIN_POLLS_DEFAULT;
    } else if (parse_prefixed_int(s, "spin", 1, INT_MAX, &n) == 1) {
        cf->idle = TDS_IDLE_SPIN;
        cf->idle_polls = (int)n;
    } else {
        static const char *const idle_names[] = {"probe", "test", "blocking", "pcontrol", "api", NULL};
        int i = parse_choice(s, idle_names);
        if (i < 0)
            return bad(TDS_ENV_IDLE, s, NULL, err, errlen);
        cf->idle = i; /* the enum follows idle_names */
    }

    s = env_or_default(TDS_ENV_IGNORE_TAGS);
    if (parse_tag_list(s, tag_ub, &cf->ignore, &cf->nignore)) {
        char acc[160];
        snprintf(acc, sizeof acc, "a comma-separated list of tags or ranges A-B (0 <= tag <= %d), or empty", tag_ub);
        return bad(TDS_ENV_IGNORE_TAGS, s, acc, err, errlen);
    }

    s = env_or_default(TDS_ENV_TREE);
    if (!strcmp(s, "binary"))
        cf->cfg.tree_arity = 2;
    else if (parse_prefixed_int(s, "kary", 2, 64, &n) == 1)
        cf->cfg.tree_arity = (int)n;
    else
        return bad(TDS_ENV_TREE, s, NULL, err, errlen);

    s = env_or_default(TDS_ENV_PIGGYBACK);
    if ((cf->piggyback = parse_choice(s, piggyback_names)) < 0)
        return bad(TDS_ENV_PIGGYBACK, s, NULL, err, errlen);
    if (cf->piggyback == TDS_PB_NONE && cf->algo->pb_size) {
        /* header-free needs an algorithm that piggybacks nothing */
        char acc[160];
        snprintf(acc, sizeof acc, "auto, copy, datatype (none only with an algorithm that piggybacks nothing: "
                 "skr, fourcounter, termdetect, none; %s piggybacks %d bytes)", cf->algo->name, cf->algo->pb_size);
        return bad(TDS_ENV_PIGGYBACK, s, acc, err, errlen);
    }

    s = env_or_default(TDS_ENV_REPORT);
    if (strcmp(s, "none")) {
        char *copy = strdup(s), *save = NULL;
        int okay = copy && *s && s[strlen(s) - 1] != ',' && s[0] != ',';
        for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; okay && t; t = strtok_r(NULL, ",", &save)) {
            if (!strcmp(t, "text"))
                cf->want_text = 1;
            else if (!strcmp(t, "json"))
                cf->want_json = 1;
            else
                okay = 0;
        }
        free(copy);
        if (!okay || strstr(s, ",,"))
            return bad(TDS_ENV_REPORT, s, NULL, err, errlen);
    }

    /* a directory we can make entries in: an executable file passes
     * access(W_OK | X_OK) and would fail only at MPI_Finalize */
    s = env_or_default(TDS_ENV_REPORT_DIR);
    struct stat st;
    if (!*s || strlen(s) >= sizeof cf->report_dir ||
        ((cf->want_text || cf->want_json) && (stat(s, &st) || !S_ISDIR(st.st_mode) || access(s, W_OK | X_OK))))
        return bad(TDS_ENV_REPORT_DIR, s, NULL, err, errlen);
    snprintf(cf->report_dir, sizeof cf->report_dir, "%s", s);

    s = env_or_default(TDS_ENV_REPORT_MODE);
    {
        static const char *const modes[] = {"private", "group", NULL};
        if ((cf->report_group = parse_choice(s, modes)) < 0)
            return bad(TDS_ENV_REPORT_MODE, s, NULL, err, errlen);
    }

    s = env_or_default(TDS_ENV_CALLSITES);
    if (parse_int(s, 0, 100, &n))
        return bad(TDS_ENV_CALLSITES, s, NULL, err, errlen);
    cf->callsites = (int)n;

    s = env_or_default(TDS_ENV_FINALIZE_TIMEOUT);
    if (parse_double(s, 0.0, 86400.0, &cf->finalize_timeout))
        return bad(TDS_ENV_FINALIZE_TIMEOUT, s, NULL, err, errlen);

    s = env_or_default(TDS_ENV_IGNORE_EMPTY);
    {
        static const char *const bools[] = {"0", "1", NULL};
        if ((cf->ignore_empty = parse_choice(s, bools)) < 0)
            return bad(TDS_ENV_IGNORE_EMPTY, s, NULL, err, errlen);
    }

    s = env_or_default(TDS_ENV_IGNORE_SHORT);
    if (parse_short_list(s, tag_ub, &cf->shorts, &cf->nshort, &cf->short_max)) {
        char acc[200];
        snprintf(acc, sizeof acc,
                 "a comma-separated list of TAG:BYTES (0 <= TAG <= %d, 0 <= BYTES <= %d, each tag once), or empty",
                 tag_ub, TDS_SHORT_BYTES_MAX);
        return bad(TDS_ENV_IGNORE_SHORT, s, acc, err, errlen);
    }
    cf->classify = cf->nignore || cf->ignore_empty || cf->nshort;
    cf->ignore_low = 0;
    for (int i = 0; i < cf->nignore; i++)
        for (long t = cf->ignore[i].lo; t <= cf->ignore[i].hi && t < 64; t++)
            cf->ignore_low |= 1ull << t;

    s = env_or_default(TDS_ENV_SPIN_GAP);
    if (parse_double(s, 0.0, 1e6, &cf->spin_gap))
        return bad(TDS_ENV_SPIN_GAP, s, NULL, err, errlen);
    cf->spin_gap *= 1e-6;

    s = env_or_default(TDS_ENV_THREADS);
    if (parse_int(s, 1, 1024, &n))
        return bad(TDS_ENV_THREADS, s, NULL, err, errlen);
    cf->threads = (int)n;

    s = env_or_default(TDS_ENV_CONFIRM);
    {
        static const char *const confirm_names[] = {"auto", "on", "off", NULL};
        int i = parse_choice(s, confirm_names);
        if (i < 0)
            return bad(TDS_ENV_CONFIRM, s, NULL, err, errlen);
        cf->cfg.confirm = i == 1 || (i == 0 && cf->idle == TDS_IDLE_SPIN);
    }

    s = env_or_default(TDS_ENV_VERBOSE);
    if ((cf->verbose = parse_choice(s, verbose_names)) < 0)
        return bad(TDS_ENV_VERBOSE, s, NULL, err, errlen);

    static const int cda_vars[4] = {TDS_ENV_CDA_INIT, TDS_ENV_CDA_CON, TDS_ENV_CDA_WCON, TDS_ENV_CDA_BORROW};
    int64_t *cda_fields[4] = {&cf->cfg.cda_init, &cf->cfg.cda_con, &cf->cfg.cda_wcon, &cf->cfg.cda_borrow};
    /* C_init travels in cda's 32-bit credit field and must split at least once */
    static const long long cda_lo[4] = {2, 1, 1, 1}, cda_hi[4] = {4294967295LL, LLONG_MAX, LLONG_MAX, LLONG_MAX};
    for (int i = 0; i < 4; i++) {
        s = env_or_default(cda_vars[i]);
        if (parse_int(s, cda_lo[i], cda_hi[i], &n))
            return bad(cda_vars[i], s, NULL, err, errlen);
        *cda_fields[i] = n;
    }

    s = env_or_default(TDS_ENV_XULAU_TOPO);
    int t = parse_choice(s, topo_names);
    if (t < 0)
        return bad(TDS_ENV_XULAU_TOPO, s, NULL, err, errlen);
    cf->cfg.xulau_topo = t; /* topo_names follows TD_TOPO_* */

    /* mesh/torus/hypercube dimensions; whether they multiply to the job's
     * size is the algorithm's check (td_ctx_init fails with the reason) */
    s = env_or_default(TDS_ENV_XULAU_DIMS);
    if (*s) {
        char buf[64], *save = NULL;
        int nd = 0;
        if (strlen(s) >= sizeof buf)
            return bad(TDS_ENV_XULAU_DIMS, s, NULL, err, errlen);
        snprintf(buf, sizeof buf, "%s", s);
        if (s[strlen(s) - 1] == ',')
            return bad(TDS_ENV_XULAU_DIMS, s, NULL, err, errlen);
        for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            if (nd >= 3 || parse_int(tok, 1, 1 << 30, &n))
                return bad(TDS_ENV_XULAU_DIMS, s, NULL, err, errlen);
            cf->cfg.xulau_dims[nd++] = (int)n;
        }
        if (!nd || strstr(s, ",,") || s[0] == ',')
            return bad(TDS_ENV_XULAU_DIMS, s, NULL, err, errlen);
    }
    return 0;
}

void tds_config_free(tds_config *cf)
{
    free(cf->ignore);
    cf->ignore = NULL;
    free(cf->shorts);
    cf->shorts = NULL;
    cf->nshort = 0;
    cf->nignore = 0;
    cf->ignore_low = 0;
}
