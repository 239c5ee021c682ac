/* The algorithms built into the core, by TDSHIM_ALGO name. */
#include "td_algo.h"

#include <string.h>

extern const td_algo td_algo_bcj, td_algo_bcjrd;
extern const td_algo td_algo_none;
extern const td_algo td_algo_edod;
extern const td_algo td_algo_xulau;
extern const td_algo td_algo_skr;
extern const td_algo td_algo_fourcounter;
extern const td_algo td_algo_termdetect;
extern const td_algo td_algo_hcda, td_algo_cda;
#ifdef TD_TEST_BROKEN
extern const td_algo td_algo_bcjrd_noinf;
extern const td_algo td_algo_bcj_noinf, td_algo_bcj_stampoff, td_algo_bcj_mod4;
extern const td_algo td_algo_edod_unacked;
extern const td_algo td_algo_xulau_paper;
extern const td_algo td_algo_skr_processed_only;
extern const td_algo td_algo_skr_onephase;
extern const td_algo td_algo_fourcounter_onewave;
extern const td_algo td_algo_termdetect_workonly;
extern const td_algo td_algo_hcda_eager, td_algo_hcda_self, td_algo_cda_activeflush;
#endif

static const td_algo *const algos[] = {
    &td_algo_bcj,
    &td_algo_bcjrd,
    &td_algo_none,
    &td_algo_edod,
    &td_algo_xulau,
    &td_algo_skr,
    &td_algo_fourcounter,
    &td_algo_termdetect,
    &td_algo_hcda, &td_algo_cda,
#ifdef TD_TEST_BROKEN
    /* deliberately broken variants, and bcj-mod4 (TD_ALGO_MODEL): test builds only */
    &td_algo_bcj_noinf, &td_algo_bcj_stampoff, &td_algo_bcj_mod4, &td_algo_bcjrd_noinf,
    &td_algo_edod_unacked,
    &td_algo_xulau_paper,
    &td_algo_skr_processed_only,
    &td_algo_skr_onephase,
    &td_algo_fourcounter_onewave,
    &td_algo_termdetect_workonly,
    &td_algo_hcda_eager, &td_algo_hcda_self, &td_algo_cda_activeflush,
#endif
    NULL,
};

const td_algo *const *td_algo_list(void) { return algos; }

const td_algo *td_algo_find(const char *name)
{
    for (const td_algo *const *a = algos; name && *a; a++)
        if (!strcmp((*a)->name, name))
            return *a;
    return NULL;
}

void td_algo_names(char *buf, size_t len)
{
    size_t n = 0;
    if (!len)
        return;
    buf[0] = 0;
    for (const td_algo *const *a = algos; *a; a++) {
        size_t l = strlen((*a)->name);
        if (n + l + 3 >= len)
            break;
        if (n) {
            memcpy(buf + n, ", ", 2);
            n += 2;
        }
        memcpy(buf + n, (*a)->name, l);
        n += l;
        buf[n] = 0;
    }
}
