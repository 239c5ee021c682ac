/* The algorithms built into the core, by TDSHIM_ALGO name. */
#include "td_algo.h"

#include <string.h>

extern const td_algo td_algo_bcj;
extern const td_algo td_algo_none;
#ifdef TD_TEST_BROKEN
extern const td_algo td_algo_bcj_noinf;
#endif

static const td_algo *const algos[] = {
    &td_algo_bcj,
    &td_algo_none,
#ifdef TD_TEST_BROKEN
    /* deliberately broken variants: test builds only */
    &td_algo_bcj_noinf,
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
