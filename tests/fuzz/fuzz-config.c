/*
 * libFuzzer target: the TDSHIM_* configuration parser (tds_config_parse,
 * shim/mpi/tds_config.c) as MPI_Init runs it. The input is a list of
 * assignments, one a line: the first byte picks the variable, the rest of
 * the line is its value (any bytes but NUL and newline); the last byte of
 * the input, if any, picks MPI_TAG_UB. Every outcome must be either a
 * configuration inside the documented ranges or one line of the form
 * "tdshim: TDSHIM_X='value' is invalid: accepted values are ...", with no
 * crash, leak or out-of-bounds access, and the environment unchanged.
 */
#include "tds_config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void bug(const char *what, const char *err)
{
    fprintf(stderr, "fuzz-config: %s [%s]\n", what, err);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char *env[TDS_ENV_N]; /* "NAME=value", owned by the environment while set */
    const char *val[TDS_ENV_N];
    for (int v = 0; v < TDS_ENV_N; v++) {
        unsetenv(tds_env_docs[v].name);
        free(env[v]);
        env[v] = NULL;
        val[v] = NULL;
    }
    static const int tag_ubs[4] = {32767, 65535, 8388607, INT_MAX};
    int tag_ub = size ? tag_ubs[data[size - 1] & 3] : 32767;
    size_t i = 0;
    while (i < size) {
        int v = data[i++] % TDS_ENV_N;
        size_t j = i;
        while (j < size && data[j] != '\n' && data[j] != 0)
            j++;
        /* putenv with our own "NAME=value" buffer, not setenv: glibc's
         * setenv keeps every distinct value it was given for the life of
         * the process (a tsearch tree), which over an hour of fuzzing is
         * an out-of-memory of the harness, not of the parser. */
        size_t nl = strlen(tds_env_docs[v].name);
        unsetenv(tds_env_docs[v].name);
        free(env[v]);
        env[v] = malloc(nl + 1 + (j - i) + 1);
        memcpy(env[v], tds_env_docs[v].name, nl);
        env[v][nl] = '=';
        memcpy(env[v] + nl + 1, data + i, j - i);
        env[v][nl + 1 + (j - i)] = 0;
        val[v] = env[v] + nl + 1;
        putenv(env[v]);
        i = j + 1;
    }

    tds_config cf;
    char err[512] = ""; /* as in the shim (tds_init.c, configure_or_exit) */
    int rc = tds_config_parse(&cf, tag_ub, err, sizeof err);
    if (rc) {
        if (strncmp(err, "tdshim: TDSHIM_", 15) || !strstr(err, "' is invalid: accepted values are ") ||
            strchr(err, '\n') || strlen(err) >= sizeof err - 1 /* cut */)
            bug("an error that is not the one documented line", err);
    } else {
        if (err[0])
            bug("success with an error message", err);
        if (!cf.algo || cf.cfg.tree_arity < 2 || cf.cfg.tree_arity > 64 || cf.idle_polls < 1 ||
            !(cf.spin_gap > 0) || !(cf.finalize_timeout > 0) || cf.callsites < 0 || cf.callsites > 100 ||
            cf.verbose < 0 || cf.verbose > 2 || cf.cfg.cda_init < 2 || cf.cfg.cda_con < 1 || cf.cfg.cda_wcon < 1 ||
            cf.cfg.cda_borrow < 1 || (cf.notify == TDS_NOTIFY_TAG && (cf.notify_tag < 0 || cf.notify_tag > tag_ub)) ||
            (cf.notify == TDS_NOTIFY_EXIT && (cf.exit_code < 0 || cf.exit_code > 255)) || !cf.report_dir[0])
            bug("a configuration outside the documented ranges", "");
        for (int k = 0; k < cf.nignore; k++)
            if (cf.ignore[k].lo < 0 || cf.ignore[k].hi < cf.ignore[k].lo || cf.ignore[k].hi > tag_ub ||
                (k && cf.ignore[k].lo < cf.ignore[k - 1].lo))
                bug("an ignored-tag range out of order or out of bounds", "");
        for (int d = 0; d < 3; d++)
            if (cf.cfg.xulau_dims[d] < 0)
                bug("a negative Xu-Lau dimension", "");
    }
    for (int v = 0; v < TDS_ENV_N; v++) {
        const char *now = getenv(tds_env_docs[v].name);
        if (val[v] ? !now || strcmp(now, val[v]) : now != NULL)
            bug("the environment changed", tds_env_docs[v].name);
    }
    tds_config_free(&cf);
    return 0;
}
