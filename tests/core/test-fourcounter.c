/*
 * fourcounter (papers/cda-credit-hpc.txt §III-B) driven by the
 * synchronous world of world.h: control messages FIFO, primaries held in transit
 * until the test delivers them. Checks the wave structure and message
 * counts, in-transit messages and busy ranks, the orphan message that fools
 * a single wave with S = R (fourcounter-onewave), episodes, dormancy and
 * rejection of unexpected messages. Randomized adversarial schedules are
 * the simulator's job (tests/sim).
 */
#include "tap.h"
#include "world.h"

#include <stdlib.h>
#include <string.h>

static tw_world W;

enum { STOP = 0, REPEAT = 1 };

/* Tree 0 -> {1, 2}. Rank 1 sends STOP {0, 0}; busy rank 2 sends x to rank
 * 1 (counted sent, received after rank 1's report: in transit for the
 * wave); rank 1 answers y to rank 2 (sent after its report, received before
 * rank 2's: an orphan) and stays busy. sigma_s = sigma_r = 1 in this wave.
 * Returns 1 if termination was announced while rank 1 was busy. */
static int orphan(const char *algo)
{
    tw_init(&W, 3, td_algo_find(algo), NULL);
    td_passive(&W.c[1]);
    tw_send(&W, 2, 1, 0);
    tw_recv(&W, 1, 2);
    tw_send(&W, 1, 2, 0);
    tw_recv(&W, 2, 1);
    td_passive(&W.c[2]);
    tw_drain(&W);
    td_passive(&W.c[0]);
    tw_drain(&W);
    int bad = W.nann[0] > 0 && W.c[1].active;
    tw_fini(&W);
    return bad;
}

int main(void)
{
    tap_plan(12);
    tap_ok(td_algo_find("fourcounter") && td_algo_find("fourcounter-onewave"),
           "registry has fourcounter and fourcounter-onewave");

    tw_init(&W, 1, td_algo_find("fourcounter"), NULL);
    td_passive(&W.c[0]);
    tap_ok(W.nann[0] == 1 && W.c[0].stats.waves == 2, "a single rank announces at its first poll, after two waves (%llu)",
           (unsigned long long)W.c[0].stats.waves);
    tw_fini(&W);

    tw_init(&W, 7, td_algo_find("fourcounter"), NULL);
    tw_all_passive(&W);
    tw_until_announced(&W, 1);
    uint64_t stop_n = tw_sent(&W, STOP), repeat_n = tw_sent(&W, REPEAT);
    tw_drain(&W);
    tap_ok(tw_all_announced(&W, 1) && !tw_errors(&W), "7 ranks: every rank learns episode 1 exactly once");
    tap_ok(stop_n == 12 && repeat_n == 6, "two waves with equal totals: stop %llu (12), repeat %llu (6)",
           (unsigned long long)stop_n, (unsigned long long)repeat_n);
    tw_send(&W, 3, 5, 0);
    td_passive(&W.c[3]);
    tw_drain(&W);
    td_passive(&W.c[0]);
    tw_drain(&W);
    tap_ok(W.nann[0] == 1, "no announcement while a primary is in transit");
    tw_recv(&W, 5, 3);
    tw_drain(&W);
    tap_ok(W.nann[0] == 1, "no announcement while its receiver is busy");
    td_passive(&W.c[5]);
    tw_drain(&W);
    tap_ok(tw_all_announced(&W, 2) && !tw_errors(&W), "episode 2 announced once the receiver is passive");
    tw_all_passive(&W);
    tw_drain(&W);
    tap_ok(tw_all_announced(&W, 2) && W.c[0].dormant, "quiescence without new activity leaves the root dormant");
    td_activity(&W.c[2]);
    td_passive(&W.c[2]);
    tw_drain(&W);
    tap_ok(tw_all_announced(&W, 3) && !tw_errors(&W), "activity wakes the dormant root and episode 3 is announced");
    tw_fini(&W);

    tap_ok(!orphan("fourcounter"), "an orphan message does not fool two waves");
    tap_ok(orphan("fourcounter-onewave"), "an orphan message fools one wave with S = R (fourcounter-onewave caught)");

    tw_init(&W, 3, td_algo_find("fourcounter"), NULL);
    td_msg m = {.algo = 3, .type = REPEAT, .seq = 5};
    uint8_t w[TD_WIRE_SIZE];
    td_wire_encode(&m, w);
    int rc = td_control(&W.c[1], 2, w, sizeof w);
    tap_ok(rc == TD_EPROTO && strstr(W.c[1].errmsg, "fourcounter:"), "repeat from a non-parent is a protocol error: %s",
           W.c[1].errmsg);
    tw_fini(&W);
    return tap_done();
}
