/*
 * TDSHIM_* configuration (DESIGN.md §5): one parser per value kind. Every
 * variable is validated at MPI_Init, including the ones the chosen
 * algorithm ignores, so a typo never goes unnoticed. A bad value produces
 * exactly one line: "tdshim: TDSHIM_X='value' is invalid: accepted values
 * are ...". The environment string is never modified (mpiP mutates it).
 */
#include "tds.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "td_algo.h"

#define TDS_ENV_DOC(m, name, def, acc) [m] = {name, def, acc},
const tds_env_doc tds_env_docs[TDS_ENV_N] = {TDS_ENV_LIST(TDS_ENV_DOC)};
#undef TDS_ENV_DOC

/* ---- value kinds ---- */

/* whole string is a decimal integer in [lo, hi] */
static int parse_int(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    if (!*s || isspace((unsigned char)*s))
        return -1;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int parse_double(const char *s, double lo, double hi, double *out)
{
    char *end;
    if (!*s || isspace((unsigned char)*s))
        return -1;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !(v > lo) || v > hi)
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

/* "1,5-9,42" -> ranges; empty string = none */
static int parse_tag_list(const char *s, int tag_ub, tds_range **out, int *n)
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
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        long long lo, hi;
        char *dash = strchr(tok, '-');
        if (dash) {
            *dash = 0;
            if (parse_int(tok, 0, tag_ub, &lo) || parse_int(dash + 1, 0, tag_ub, &hi) || hi < lo)
                goto bad;
        } else if (parse_int(tok, 0, tag_ub, &lo)) {
            goto bad;
        } else {
            hi = lo;
        }
        r[k++] = (tds_range){(int)lo, (int)hi};
    }
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

/* ---- the variables ---- */

static const char *env_or_default(int v)
{
    const char *s = getenv(tds_env_docs[v].name);
    return s ? s : tds_env_docs[v].def;
}

/* The one line of a bad value. The value is quoted as the user can read
 * it: bytes that are not printable become '?', and a long one is cut to
 * its first 64 bytes and "...", so the accepted values always fit the
 * line (a 600-byte value once pushed them out of it: tests/fuzz). */
static int bad(int v, const char *value, const char *accepted, char *err, size_t errlen)
{
    char shown[72];
    size_t n = 0;
    for (; value[n] && n < 64; n++)
        shown[n] = isprint((unsigned char)value[n]) ? value[n] : '?';
    snprintf(shown + n, sizeof shown - n, "%s", value[n] ? "..." : "");
    snprintf(err, errlen, "tdshim: %s='%s' is invalid: accepted values are %s", tds_env_docs[v].name, shown,
             accepted ? accepted : tds_env_docs[v].accepted);
    return -1;
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

    s = env_or_default(TDS_ENV_REPORT_DIR);
    if (!*s || strlen(s) >= sizeof cf->report_dir ||
        ((cf->want_text || cf->want_json) && access(s, W_OK | X_OK)))
        return bad(TDS_ENV_REPORT_DIR, s, NULL, err, errlen);
    snprintf(cf->report_dir, sizeof cf->report_dir, "%s", s);

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
    cf->nignore = 0;
}
