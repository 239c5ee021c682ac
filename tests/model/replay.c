/*
 * replay: runs the steps of a SPIN trail through the real core, so that a
 * model (the .pml files here) that drifts from the code it models is noticed
 * (issue 15). check.sh feeds it the "EV ..." lines that `spin -t` prints
 * for a counterexample of a broken variant; every other line is ignored.
 *
 *   replay -a ALGO -n P [-c INIT,CON,WCON,BORROW] [--expect-unsafe] [--partial] [FILE]
 *
 * The ranks are td_ctx's of ALGO in the synchronous world of
 * tests/core/world.h, configured as the model is (engine.pml): binary
 * tree, gate_on_notify 0, confirm 0, and for the credit algorithms the
 * model's small credits (-c). Messages in transit wait in the world's
 * queue; a step delivers the oldest one of its (source, destination) pair
 * and kind, which is MPI's non-overtaking order the model keeps.
 *
 * The steps (engine.pml, processes.pml):
 *   send R D        rank R's program sends a primary to D (never held back)
 *   passive R       R's program becomes passive (td_passive)
 *   poll R          R, passive, polls (td_passive again)
 *   ctl S D         the oldest control message from S to D is delivered
 *   recv S D        the oldest primary from S to D is received
 *   activity R      R starts phase-2 work (td_activity)
 *   replay R S      (inside the step before it: a held message replayed)
 *   announce R E    (inside the step before it: R learned episode E)
 *
 * The replay agrees with the model when every send answers the model's RC
 * and, before each step and at the end, every rank has learned exactly the
 * episodes the model says it learned by then (--partial: the input may
 * stop inside its last step, a random simulation cut at `spin -u`, so the
 * check at the end is skipped). With --expect-unsafe it also
 * requires the core to commit the model's violation: an announcement made
 * while the world's ground truth is not quiescent (tests/core/world.c's
 * oracle), or a control message of an announced episode (the core's
 * "unsafe" count). Exit status 0 when everything required holds, 1 when
 * not (with the step and the difference on stderr), 2 on bad input.
 */
#include "core/world.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXP 16

static void usage(void)
{
    fprintf(stderr, "usage: replay -a ALGO -n P [-c INIT,CON,WCON,BORROW] [--expect-unsafe] [--partial] [FILE]\n");
    exit(2);
}

/* the oldest message of one kind from s to d */
static int deliver(tw_world *w, int s, int d, int primary)
{
    for (size_t i = 0; i < w->nq; i++)
        if (w->q[i].src == s && w->q[i].dst == d && w->q[i].primary == primary) {
            tw_deliver(w, i);
            return 0;
        }
    return -1;
}

int main(int argc, char **argv)
{
    const char *algo = NULL, *file = NULL;
    int n = 0, expect_unsafe = 0, credits = 0, partial = 0;
    long long ci[4] = {0};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-a") && i + 1 < argc)
            algo = argv[++i];
        else if (!strcmp(argv[i], "-n") && i + 1 < argc)
            n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-c") && i + 1 < argc) {
            if (sscanf(argv[++i], "%lld,%lld,%lld,%lld", &ci[0], &ci[1], &ci[2], &ci[3]) != 4)
                usage();
            credits = 1;
        } else if (!strcmp(argv[i], "--expect-unsafe"))
            expect_unsafe = 1;
        else if (!strcmp(argv[i], "--partial"))
            partial = 1;
        else if (argv[i][0] != '-' && !file)
            file = argv[i];
        else
            usage();
    }
    const td_algo *a = algo ? td_algo_find(algo) : NULL;
    if (!a || n < 2 || n > MAXP) {
        fprintf(stderr, "replay: %s\n", !a ? "unknown or missing algorithm (-a)" : "-n must be 2..16");
        usage();
    }
    FILE *in = file ? fopen(file, "r") : stdin;
    if (!in) {
        perror(file);
        return 2;
    }

    td_cfg cfg;
    td_cfg_default(&cfg, 0, n);
    cfg.tree_arity = 2;
    cfg.gate_on_notify = 0;
    cfg.confirm = 0;
    if (credits) {
        cfg.cda_init = ci[0];
        cfg.cda_con = ci[1];
        cfg.cda_wcon = ci[2];
        cfg.cda_borrow = ci[3];
    }
    tw_world w;
    memset(&w, 0, sizeof w);
    tw_init(&w, n, a, &cfg);

    uint32_t model_ep[MAXP] = {0}; /* what the model says each rank learned */
    int model_nann[MAXP] = {0};
    char line[512];
    int steps = 0, lineno = 0, bad = 0;
    while (!bad && fgets(line, sizeof line, in)) {
        lineno++;
        char *ev = strstr(line, "EV ");
        if (!ev)
            continue;
        char kind[16];
        int x = -1, y = -1, z = -1;
        int k = sscanf(ev + 3, "%15s %d %d %d", kind, &x, &y, &z);
        if (k < 2 || x < 0 || x >= n || (k >= 3 && y < 0)) {
            fprintf(stderr, "replay: line %d: cannot read '%s'\n", lineno, ev);
            return 2;
        }
        if (!strcmp(kind, "announce")) {
            model_ep[x] = (uint32_t)y;
            model_nann[x]++;
            continue;
        }
        if (!strcmp(kind, "replay"))
            continue; /* part of the step before it, inside the core */
        /* a step: the ranks agree on what they learned so far */
        for (int r = 0; r < n; r++)
            if (w.announced[r] != model_ep[r] || w.nann[r] != model_nann[r]) {
                fprintf(stderr,
                        "replay: before step %d (line %d: %s) rank %d learned episode %u (%d announcements) in the "
                        "core, %u (%d) in the model\n",
                        steps + 1, lineno, ev, r, w.announced[r], w.nann[r], model_ep[r], model_nann[r]);
                bad = 1;
            }
        if (bad)
            break;
        steps++;
        if (!strcmp(kind, "send")) {
            if (k != 3 || y >= n || y == x) {
                fprintf(stderr, "replay: line %d: bad %s\n", lineno, kind);
                return 2;
            }
            tw_send(&w, x, y, 0); /* never held back (td_core.h) */
        } else if (!strcmp(kind, "passive") || !strcmp(kind, "poll")) {
            tw_passive(&w, x);
        } else if (!strcmp(kind, "activity")) {
            tw_activity(&w, x);
        } else if (!strcmp(kind, "ctl") || !strcmp(kind, "recv")) {
            if (k != 3 || y >= n) {
                fprintf(stderr, "replay: line %d: bad %s\n", lineno, kind);
                return 2;
            }
            if (deliver(&w, x, y, kind[0] == 'r')) {
                fprintf(stderr, "replay: step %d (line %d): no %s message from %d to %d in transit in the core\n",
                        steps, lineno, kind[0] == 'r' ? "primary" : "control", x, y);
                bad = 1;
            }
        } else {
            fprintf(stderr, "replay: line %d: unknown step '%s'\n", lineno, kind);
            return 2;
        }
    }
    if (!bad && !partial)
        for (int r = 0; r < n; r++)
            if (w.announced[r] != model_ep[r] || w.nann[r] != model_nann[r]) {
                fprintf(stderr, "replay: at the end rank %d learned episode %u (%d) in the core, %u (%d) in the model\n",
                        r, w.announced[r], w.nann[r], model_ep[r], model_nann[r]);
                bad = 1;
            }
    uint64_t unsafe_msgs = 0;
    int errors = 0;
    for (int r = 0; r < n; r++) {
        unsafe_msgs += w.c[r].stats.unsafe;
        errors += w.c[r].error != 0;
    }
    printf("replay: %s, %d ranks: %d steps, announcements", algo, n, steps);
    for (int r = 0; r < n; r++)
        printf(" %u", w.announced[r]);
    printf("; core: %d unsafe announcement%s, %llu unsafe control message%s, %d rank%s in error\n", w.unsafe,
           w.unsafe == 1 ? "" : "s", (unsigned long long)unsafe_msgs, unsafe_msgs == 1 ? "" : "s", errors,
           errors == 1 ? "" : "s");
    if (!steps) {
        fprintf(stderr, "replay: no step in the input\n");
        bad = 1;
    }
    if (expect_unsafe && !bad && !w.unsafe && !unsafe_msgs) {
        fprintf(stderr, "replay: the model's violation did not happen in the core\n");
        bad = 1;
    }
    if (!expect_unsafe && (w.unsafe || unsafe_msgs || errors)) {
        fprintf(stderr, "replay: the core reports a violation the model did not\n");
        bad = 1;
    }
    tw_fini(&w);
    if (in != stdin)
        fclose(in);
    return bad;
}
