/*
 * td_describe (TDSHIM_VERBOSE progress lines, the partial report of a
 * killed job): one line per rank that says what the protocol waits for.
 * P = 5 on the binary tree 0 -> {1, 2}, 1 -> {3, 4}; rank 3 keeps working,
 * so every tree algorithm's root and rank 1 must say that one of their two
 * children has not answered, and each line names the algorithm and the
 * episode. Small buffers truncate without overflowing (the sanitizer build
 * runs this test too).
 */
#include "tap.h"

#include "world.h"

#include <string.h>

static tw_world W;
#define P 5
#define BUSY 3

int main(void)
{
    const td_algo *const *list = td_algo_list();
    static const char *const tree[] = {"bcj", "skr", "fourcounter", "termdetect"};
    for (int i = 0; list[i]; i++) {
        const td_algo *a = list[i];
        if (a->flags & (TD_ALGO_BROKEN | TD_ALGO_MODEL))
            continue;
        tap_ok(a->describe != NULL || (a->flags & TD_ALGO_NODETECT), "%s: has a describe hook", a->name);
        tw_init(&W, P, a, NULL);
        for (int r = P - 1; r >= 0; r--)
            if (r != BUSY)
                tw_passive(&W, r);
        tw_drain(&W);
        char line[512], prefix[32];
        td_describe(&W.c[0], line, sizeof line);
        tap_diag("%s rank 0: %s", a->name, line);
        snprintf(prefix, sizeof prefix, "; %s: ", a->name);
        tap_ok(strstr(line, "episode 1: passive") != NULL && strstr(line, "waves") != NULL &&
               (a->describe == NULL || strstr(line, prefix) != NULL),
           "%s: the root's line names the episode, its state and the algorithm", a->name);
        for (size_t k = 0; k < sizeof tree / sizeof *tree; k++) {
            if (strcmp(a->name, tree[k]) != 0)
                continue;
            tap_ok(strstr(line, "1 of 2") != NULL, "%s: the root says one of its two children has not answered", a->name);
            td_describe(&W.c[1], line, sizeof line);
            tap_ok(strstr(line, "1 of 2") != NULL && strstr(line, "children 3-4") != NULL,
               "%s: rank 1 says one of children 3-4 has not answered: %s", a->name, line);
        }
        td_describe(&W.c[BUSY], line, sizeof line);
        tap_ok(strstr(line, "episode 1: active") != NULL, "%s: the busy rank says it is active", a->name);
        int fits = 1;
        for (size_t len = 1; len < 64; len += 7) {
            char small[64];
            memset(small, 'x', sizeof small);
            td_describe(&W.c[1], small, len);
            fits &= strlen(small) < len && small[len] == 'x';
        }
        tap_ok(fits, "%s: a short buffer truncates the line, nothing written past it", a->name);
        tw_passive(&W, BUSY);
        tw_drain(&W);
        td_describe(&W.c[0], line, sizeof line);
        tap_ok(a->flags & TD_ALGO_NODETECT ? 1 : strstr(line, "episode 2:") != NULL,
           "%s: after the announcement the root describes episode 2", a->name);
        tw_fini(&W);
    }
    tap_plan(tap_n);
    return tap_done();
}
