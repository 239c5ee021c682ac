/*
 * The advice (shim/report/tdr_advice.c) as the pure function it is: rows
 * as rank 0 gathers them (tdr_row.h) and the effective settings in, the
 * Advice section and its numbers out. Built with plain cc, without MPI:
 * no mpi.h on the include path, no MPI library. Each case is a run the
 * README's "Measure mode and the advice" describes:
 *   1. no idle notion qualifies: says so and points at pcontrol/api;
 *   2. one qualifies (test): named, and given as the setting to change;
 *   3. probe breach-free but blind to half of test's idle periods: test;
 *   4. a tag is advised for TDSHIM_IGNORE_TAGS only when its messages
 *      never made a rank waiting for work send a primary (work tags), and
 *      never when a rank found messages on more tags than it kept;
 *   5. an all-empty tag: TDSHIM_IGNORE_EMPTY=1, even if it once carried work;
 *   6. a clean run under its own notion: kept the contract, nothing to change;
 *   7. no primary message counted: ignore fewer tags where messages were
 *      ignored, else nothing to change (all with other jobs, or none);
 *   8. late threads: TDSHIM_THREADS;
 *   9. the same inputs give the same text and leave the inputs untouched;
 *  10. probe breach-free but ranks poll while busy: no notion, and why;
 *  11. spin qualified on a run with no primary message: not said to fail;
 *  12. premature announcements with no contract violation and no breach
 *      (work that did not travel in messages: NWChem's one-sided traffic
 *      under cda): notification is not advised, and why; with violations,
 *      the items above are the cause.
 */
#include "tap.h"
#include "tdr_advice.h"

#include <stdlib.h>
#include <string.h>

#define MAXR 4

typedef struct job {
    int n;
    uint64_t u[MAXR][U_N];
    double d[MAXR][D_N];
    tdr_kv kv[4];
    tdr_meta meta;
} job;

/* n ranks that polled, sent and became passive, none of them busy */
static void job_init(job *j, int n, const char *idle, const char *notify)
{
    memset(j, 0, sizeof *j);
    j->n = n;
    for (int i = 0; i < n; i++) {
        j->u[i][U_PSENT] = 100;
        j->u[i][U_PRECV] = 100;
        j->u[i][U_POLLS] = 1000;
        j->u[i][U_EMPTY] = 500;
        j->u[i][U_B2I] = 10;
        j->u[i][U_THREADS] = 1;
        j->d[i][D_WALL] = 1.0;
    }
    j->kv[0] = (tdr_kv){.key = "TDSHIM_IDLE"};
    j->kv[1] = (tdr_kv){.key = "TDSHIM_NOTIFY"};
    j->kv[2] = (tdr_kv){.key = "TDSHIM_SPIN_GAP", .value = "20"};
    j->kv[3] = (tdr_kv){.key = "TDSHIM_THREADS", .value = "1"};
    snprintf(j->kv[0].value, sizeof j->kv[0].value, "%s", idle);
    snprintf(j->kv[1].value, sizeof j->kv[1].value, "%s", notify);
    j->meta = (tdr_meta){.version = "test", .algo = "bcj", .config = j->kv, .nconfig = 4, .want_text = 1};
}

/* rank i: candidate c judged it passive `passive` times, `breaches` of them breached */
static void cand(job *j, int i, int c, uint64_t passive, uint64_t breaches)
{
    j->u[i][U_CANDP + c] = passive;
    j->u[i][U_CANDB + c] = breaches;
}

/* rank i under probe, test and spin: passive judgements and breaches of each */
static void cand3(job *j, int i, uint64_t pp, uint64_t bp, uint64_t pt, uint64_t bt, uint64_t ps, uint64_t bs)
{
    cand(j, i, TDR_CAND_PROBE, pp, bp);
    cand(j, i, TDR_CAND_TEST, pt, bt);
    cand(j, i, TDR_CAND_SPIN, ps, bs);
}

/* rank i's k-th violation tag with messages of minb to maxb bytes, how
 * many of them were empty, and how many were of the shortest size */
static void viol_mix(job *j, int i, int k, int tag, uint64_t messages, uint64_t empty, uint64_t minb, uint64_t maxb,
                     uint64_t atmin)
{
    uint64_t *v = &j->u[i][U_VTAG + U_VTAG_W * k];
    v[0] = (uint64_t)tag + 1, v[1] = messages, v[2] = empty, v[3] = maxb * (messages - empty);
    v[4] = empty ? 0 : minb, v[5] = empty < messages ? maxb : 0;
    v[6] = atmin;
    j->u[i][U_VIOL] += messages;
}

/* ...every non-empty one of the shortest size if there is one size, else one */
static void viol_sized(job *j, int i, int k, int tag, uint64_t messages, uint64_t empty, uint64_t minb, uint64_t maxb)
{
    viol_mix(j, i, k, tag, messages, empty, minb, maxb, empty ? empty : minb == maxb ? messages : 1);
}

/* ...of 1 to 8 bytes: messages of more than one size */
static void viol(job *j, int i, int k, int tag, uint64_t messages, uint64_t empty)
{
    viol_sized(j, i, k, tag, messages, empty, 1, 8);
}

/* rank i's k-th work tag: a rank waiting for work found a message on it
 * `found` times, and `times` of those then sent primary data */
static void work(job *j, int i, int k, int tag, uint64_t times, uint64_t found)
{
    j->u[i][U_WTAG + 3 * k] = (uint64_t)tag + 1;
    j->u[i][U_WTAG + 3 * k + 1] = times;
    j->u[i][U_WTAG + 3 * k + 2] = found;
}

static char text[1 << 16];

static tdr_advice advise(const job *j)
{
    tdr_advice a;
    tdr_buf b = {0};
    tdr_advice_in in = {.nranks = j->n, .u = &j->u[0][0], .d = &j->d[0][0], .meta = &j->meta};
    int rc = tdr_advice_write(&b, &in, &a);
    snprintf(text, sizeof text, "%s", rc == 0 && b.p && !b.oom ? b.p : "(failed)");
    free(b.p);
    return a;
}

static int has(const char *hay, const char *needle) { return strstr(hay, needle) != NULL; }

static void show(const tdr_advice *a)
{
    tap_diag("pick %d, items %d, kept %d, hint: %s", a->pick, a->items, a->kept, a->hint);
    for (char *p = text, *nl; *p; p = nl + 1) {
        nl = strchr(p, '\n');
        if (!nl)
            nl = p + strlen(p) - 1;
        tap_diag("%.*s", (int)(nl - p), p);
    }
}

#define CHECK(cond, a, ...) \
    do {                    \
        if (!tap_ok((cond), __VA_ARGS__)) \
            show(a);        \
    } while (0)

int main(void)
{
    tap_plan(22);
    job j;
    tdr_advice a;

    /* 1: every notion breached (requests sent by ranks judged passive) */
    job_init(&j, 2, "probe", "none");
    for (int i = 0; i < 2; i++)
        cand3(&j, i, 50, 5, 60, 7, 20, 1);
    a = advise(&j);
    CHECK(a.pick == -1 && has(text, "No idle notion was free of breaches") &&
              has(text, "TDSHIM_IDLE=pcontrol") && has(text, "api (tdshim_set_passive())") &&
              has(a.hint, "no TDSHIM_IDLE free of breaches (TDSHIM_NOTIFY=tag:N probed for only where idle, TDSHIM_IDLE=pcontrol or api") && a.breaches[0] == 10 &&
              a.breaches[1] == 14 && a.breaches[2] == 2 && a.passive[1] == 120 && !a.kept,
          &a, "no notion qualifies: says so, points at pcontrol/api, counts the breaches side by side");

    /* 2: test never breached and judged every polling rank passive; probe breached */
    job_init(&j, 3, "probe", "none");
    for (int i = 0; i < 3; i++)
        cand3(&j, i, 40, i == 1, 70, 0, 30, 2);
    a = advise(&j);
    CHECK(a.pick == TDR_CAND_TEST && has(text, "TDSHIM_IDLE=test: no breach among its 210 passive judgements") &&
              !strcmp(a.hint, "TDSHIM_IDLE=test (no breach in 210 passive judgements)") &&
              has(text, "notification can be turned on") && !a.kept,
          &a, "one notion qualifies (test): named with its judgements, and the only setting suggested");

    /* 3: probe breach-free but judged passive at fewer than half of test's idle polls */
    job_init(&j, 2, "probe", "none");
    for (int i = 0; i < 2; i++) {
        cand(&j, i, TDR_CAND_PROBE, 10, 0);
        cand(&j, i, TDR_CAND_TEST, 30, 0);
    }
    a = advise(&j);
    CHECK(a.pick == TDR_CAND_TEST && has(a.hint, "TDSHIM_IDLE=test"), &a,
          "a breach-free probe that misses half of test's idle periods is passed over for test");

    /* 4: tag 3 (requests) and tag 7 (work) both sent by ranks judged passive;
     * tag 7's messages made a rank waiting for work send primary data */
    job_init(&j, 2, "test", "none");
    for (int i = 0; i < 2; i++) {
        cand3(&j, i, 40, 3, 40, 3, 40, 3);
        viol(&j, i, 0, 3, 20, 0);
        viol(&j, i, 1, 7, 5, 1);
    }
    work(&j, 1, 0, 7, 4, 12);
    a = advise(&j);
    CHECK(has(text, "tag 3: 40 messages sent by passive ranks (2 ranks; 0 empty") &&
              has(text, "add it to TDSHIM_IGNORE_TAGS") && has(a.hint, "TDSHIM_IGNORE_TAGS=3 if tag 3 carries no work") &&
              has(text, "Tag 7 carries work: 4 of the 12 times") && has(text, "Do not ignore it") &&
              !has(a.hint, "TDSHIM_IGNORE_TAGS=7") && !has(text, "tag 7: 10 messages sent by passive ranks"),
          &a, "a tag is advised for TDSHIM_IGNORE_TAGS only when its messages never made a waiting rank send primary data");

    /* 4b: the same, but tag 3's messages were followed by primary data once
     * in 196 (work_steal: Safra's token forwarded in the loop turn that
     * answered a request "no work"): a coincidence, tag 3 is still advised */
    job_init(&j, 2, "test", "none");
    for (int i = 0; i < 2; i++) {
        cand3(&j, i, 40, 3, 40, 3, 40, 3);
        viol(&j, i, 0, 3, 20, 0);
    }
    work(&j, 0, 0, 3, 1, 100);
    work(&j, 1, 0, 3, 0, 96);
    a = advise(&j);
    CHECK(has(a.hint, "TDSHIM_IGNORE_TAGS=3 if tag 3 carries no work") && !has(text, "Tag 3 carries work"), &a,
          "a tag followed by primary data once in 196 finds is not taken for a work tag");
    work(&j, 1, 0, 3, 48, 96);
    a = advise(&j);
    CHECK(!has(a.hint, "TDSHIM_IGNORE_TAGS=3") && has(text, "Tag 3 carries work: 49 of the 196 times"), &a,
          "...and at 49 of 196 (one in four) it is");
    work(&j, 1, 0, 3, 47, 96);
    a = advise(&j);
    CHECK(has(a.hint, "TDSHIM_IGNORE_TAGS=3") && !has(text, "Tag 3 carries work"), &a, "...and at 48 of 196 not");
    /* ...and not when rank 1 found messages on tags beyond the 8 it keeps
     * (polls.work_tags_other; Ray uses over a hundred): tag 3's finds there
     * are unknown, so are tags 5 (no entry) and 6 (one size, 4 bytes) */
    j.u[1][U_WOTHER] = 33;
    viol(&j, 0, 1, 5, 10, 0);
    viol_sized(&j, 0, 2, 6, 10, 0, 4, 4);
    a = advise(&j);
    int lost = !has(a.hint, "TDSHIM_IGNORE_TAGS") && !has(text, "add it to TDSHIM_IGNORE_TAGS") &&
               has(text, "Whether tag 3 carries work is unknown") && has(text, "Whether tag 5 carries work is unknown") &&
               has(text, "(33 finds beyond them; polls.work_tags_other)") &&
               has(a.hint, "TDSHIM_IGNORE_SHORT=6:4") && has(text, "Whether tag 6 carries work is unknown");
    j.u[1][U_WOTHER] = 0;
    a = advise(&j);
    lost = lost && has(a.hint, "TDSHIM_IGNORE_TAGS=3") && has(text, "add it to TDSHIM_IGNORE_TAGS") &&
           !has(text, "is unknown");
    /* ...nor a tag found by waiting ranks but never judged (an entry with
     * found 0: each find came too long after the poll before) */
    work(&j, 0, 1, 5, 0, 0);
    a = advise(&j);
    CHECK(lost && has(a.hint, "TDSHIM_IGNORE_TAGS=3") && !has(a.hint, "TDSHIM_IGNORE_TAGS=5") &&
              has(text, "Whether tag 5 carries work is unknown: ranks waiting for work found messages on it, none judged"),
          &a, "...nor when a rank found messages on more tags than it kept, or on a tag it never judged");

    /* 4c: work_queue (issue 41): tag 2 carries work, and every message a
     * passive rank sent on it was 4 bytes ("no work"): TDSHIM_IGNORE_SHORT,
     * never the tag; tag 1 (requests, 4 bytes, no work) is advised for
     * TDSHIM_IGNORE_TAGS as before; with two sizes on tag 2 no shortcut */
    job_init(&j, 2, "spin", "none");
    for (int i = 0; i < 2; i++) {
        cand3(&j, i, 40, 6, 40, 6, 40, 0);
        viol_sized(&j, i, 0, 2, 30, 0, 4, 4);
        viol_sized(&j, i, 1, 1, 10, 0, 4, 4);
        work(&j, i, 0, 2, 20, 40);
    }
    a = advise(&j);
    int sr = has(a.hint, "TDSHIM_IGNORE_SHORT=2:4") && has(text, "set TDSHIM_IGNORE_SHORT=2:4") &&
             !has(a.hint, "TDSHIM_IGNORE_TAGS=2") && has(text, "do not ignore the tag") &&
             has(text, "add it to TDSHIM_IGNORE_TAGS");
    viol_sized(&j, 1, 0, 2, 30, 0, 4, 1024); /* a work message sent while judged passive, too */
    a = advise(&j);
    int two = has(a.hint, "TDSHIM_IGNORE_SHORT=2:4 if its 4-byte messages carry no work") &&
              has(text, "Do not ignore it") && !has(a.hint, "TDSHIM_IGNORE_TAGS=2");
    viol_sized(&j, 0, 0, 2, 30, 0, 4, 1024); /* ...the shortest size seen once in the job: no shortcut */
    viol_sized(&j, 1, 0, 2, 30, 0, 8, 1024);
    a = advise(&j);
    two = two && !has(a.hint, "TDSHIM_IGNORE_SHORT") && has(text, "Do not ignore it") &&
          !has(a.hint, "TDSHIM_IGNORE_TAGS=2");
    /* a notifying run (no work-tag evidence) of the same program: the
     * narrow setting, never the tag */
    job_init(&j, 2, "probe", "tag:999");
    for (int i = 0; i < 2; i++)
        viol_sized(&j, i, 0, 2, 30, 0, 4, 4);
    a = advise(&j);
    CHECK(sr && two && has(a.hint, "TDSHIM_IGNORE_SHORT=2:4") && !has(a.hint, "TDSHIM_IGNORE_TAGS=2") &&
              has(text, "measured in measure mode only (TDSHIM_NOTIFY=none), so ignore no more than these messages"),
          &a, "a work tag whose passive-sent messages are all one short size gets TDSHIM_IGNORE_SHORT=TAG:BYTES, "
              "never the tag (and so does any such tag in a run that cannot tell); with long ones too, still that "
              "size; with the shortest size seen once, neither");

    /* 4d: work_queue in measure mode with its requests ignored (issue 41),
     * where spin never judged a rank passive (4 ranks on 2 cores), so no
     * work tag was measured: probe's misjudged ranks sent tag 2's 4-byte
     * "no work" replies and stolen batches of up to 68 KB. Messages of
     * several sizes beyond TDR_SHORT_REPLY are data: never the tag; the
     * 4-byte ones are TDSHIM_IGNORE_SHORT's; the token (tag 4, 16 bytes,
     * one size) is left to the user */
    job_init(&j, 4, "probe", "none");
    for (int i = 0; i < 4; i++) {
        cand3(&j, i, 80, 25, 80, 25, 0, 0);
        viol_mix(&j, i, 0, 2, 25, 0, 4, 68016, 12); /* 4-byte replies, batches from 32 bytes up */
    }
    viol_sized(&j, 0, 1, 4, 2, 0, 16, 16);
    a = advise(&j);
    CHECK(has(a.hint, "TDSHIM_IGNORE_SHORT=2:4 if its 4-byte messages carry no work") &&
              !has(a.hint, "TDSHIM_IGNORE_TAGS=2") && !has(text, "If tag 2 never carries work") &&
              has(text, "Tag 2 carries work: its messages have several sizes, up to 68016 bytes") &&
              has(text, "48 of them were 4 bytes long, the shortest") && has(a.hint, "TDSHIM_NOTIFY=tag:N probed for only where idle"),
          &a, "measure mode, no work tag measured: a tag of several sizes up to 68016 bytes carries work, never "
              "advised for ignoring; its 4-byte messages for TDSHIM_IGNORE_SHORT; the scoped notification named");
    for (int i = 0; i < 4; i++)
        viol_mix(&j, i, 0, 2, 25, 0, 100, 100, 25);
    a = advise(&j);
    CHECK(has(a.hint, "TDSHIM_IGNORE_TAGS=2 if tag 2 carries no work") && !has(text, "Tag 2 carries work"), &a,
          "...while messages of one size (100 bytes: a request) leave the tag's question to the user");

    /* 5: tag 2 all empty ("no work" replies), even though one once preceded a send */
    job_init(&j, 2, "test", "tag:9");
    viol(&j, 0, 0, 2, 6, 6);
    work(&j, 0, 0, 2, 1, 1);
    a = advise(&j);
    CHECK(has(text, "tag 2: 6 messages sent by passive ranks (1 ranks), all empty") &&
              has(a.hint, "TDSHIM_IGNORE_EMPTY=1 (empty messages on tag 2 sent while passive)") &&
              !has(text, "Tag 2 carries work") && !has(a.hint, "TDSHIM_IGNORE_TAGS"),
          &a, "an all-empty tag gets TDSHIM_IGNORE_EMPTY=1, not TDSHIM_IGNORE_TAGS");

    /* 6: a clean run measured under the notion it supports (probe: the first
     * without breach, and it sees more than half of test's idle periods) */
    job_init(&j, 2, "probe", "none");
    for (int i = 0; i < 2; i++)
        cand3(&j, i, 40, 0, 50, 0, 10, 0);
    a = advise(&j);
    CHECK(a.kept && a.pick == TDR_CAND_PROBE && a.items == 2 && a.hint[0] == '\0' &&
              has(text, "The program kept the contract under TDSHIM_IDLE=probe"),
          &a, "a clean run: kept the contract, nothing to change (empty hint)");

    /* 7: measure mode, ranks polled, but every message was ignored */
    job_init(&j, 2, "probe", "none");
    for (int i = 0; i < 2; i++) {
        j.u[i][U_PSENT] = 0;
        j.u[i][U_IGN] = 5;
        cand(&j, i, TDR_CAND_PROBE, 40, 0);
    }
    a = advise(&j);
    CHECK(a.pick == -2 && has(text, "No primary message was counted") && has(text, "TDSHIM_IGNORE_EMPTY=1: 10 received") &&
              !strcmp(a.hint, "ignore fewer tags (no primary message was counted)"),
          &a, "no primary message counted, messages ignored: ignore fewer tags");
    /* ...none ignored, every message to or from another job (a spawned
     * pool: mpi4py.futures' MPIPoolExecutor): no setting helps */
    for (int i = 0; i < 2; i++) {
        j.u[i][U_IGN] = 0;
        j.u[i][U_XSENT] = 51;
        j.u[i][U_XRECV] = 50;
    }
    a = advise(&j);
    CHECK(a.pick == -2 && has(text, "its 202 messages went to or came from other jobs") &&
              !has(text, "Ignore fewer tags") &&
              !strcmp(a.hint, "nothing to detect (no primary message within this job: its 202 went to or came "
                              "from other jobs)"),
          &a, "no primary message counted, all with other jobs: nothing to detect, no setting named");
    /* ...and none at all: the program communicated otherwise */
    for (int i = 0; i < 2; i++)
        j.u[i][U_XSENT] = j.u[i][U_XRECV] = 0;
    a = advise(&j);
    CHECK(a.pick == -2 && has(text, "sent no point-to-point message within this job") && !has(text, "Ignore fewer") &&
              !strcmp(a.hint, "nothing to detect (no point-to-point message within this job)"),
          &a, "no primary message counted, none sent: nothing to detect, no setting named");

    /* 8: rank 1 had 3 threads, 2 of them first seen while it was passive */
    job_init(&j, 2, "probe", "tag:9");
    j.u[1][U_THREADS] = 3;
    j.u[1][U_TLATE] = 2;
    a = advise(&j);
    CHECK(has(text, "ranks 1: 2 threads made their first MPI call") &&
              has(a.hint, "TDSHIM_THREADS=3 (threads called MPI after their rank was judged passive)"),
          &a, "late threads: TDSHIM_THREADS set to the most threads a rank used");

    /* 10: probe and test breach-free on every polling rank, but rank 1 polls
     * while busy and spin never judged it passive: no notion, and why */
    job_init(&j, 2, "probe", "none");
    for (int i = 0; i < 2; i++)
        cand3(&j, i, 40, 0, 60, 0, 0, 0);
    j.u[1][U_BUSYGAPS] = 50;
    j.d[1][D_BUSYGAP] = 0.05;
    a = advise(&j);
    CHECK(a.pick == -1 && has(text, "No idle notion was free of breaches") &&
              has(text, "(TDSHIM_IDLE=probe had no breach in 80 passive judgements, but ranks 1 poll while busy") &&
              has(text, "ranks 1 poll while busy: 50 times") && !has(text, "Measure again") &&
              has(text, "on this run spin did not qualify (item above): 0 passive judgements on 0 of 2 polling ranks") &&
              has(a.hint, "no TDSHIM_IDLE safe: ranks 1 poll while busy"),
          &a, "a breach-free notion ruled out by busy polling: the advice says that was the reason");

    /* 11: spin qualified on a busy-polling run that counted no primary message:
     * "no primary message" wins the pick, but spin is not said to have failed */
    job_init(&j, 2, "probe", "none");
    for (int i = 0; i < 2; i++) {
        cand3(&j, i, 40, 0, 60, 0, 30, 0);
        j.u[i][U_PSENT] = 0;
    }
    j.u[1][U_BUSYGAPS] = 50;
    j.d[1][D_BUSYGAP] = 0.05;
    a = advise(&j);
    CHECK(a.pick == -2 && has(text, "ranks 1 poll while busy: 50 times") && !has(text, "spin did not qualify"), &a,
          "no primary message on a busy-polling run where spin qualified: spin not said to have failed");

    /* 12: probe breach-free and picked, but 3 announcements UNSAFE with no
     * violation: no setting of this run is advised for notification */
    job_init(&j, 2, "probe", "none");
    for (int i = 0; i < 2; i++)
        cand3(&j, i, 40, 0, 60, 0, 30, 0);
    j.u[0][U_UNSAFE] = 3;
    j.meta.algo = "cda";
    a = advise(&j);
    CHECK(a.pick == TDR_CAND_PROBE && !has(text, "notification can be turned on") &&
              !has(text, "Notification can be turned on") &&
              has(text, "Ranks found 3 times evidence that an announcement was premature (UNSAFE in the episode "
                        "table; detection.unsafe), yet no rank judged passive sent a primary message without receiving one (0 contract violations, and no breach "
                        "of this notion)") &&
              has(text, "under TDSHIM_ALGO=cda: do not turn notification on") && has(a.hint, "no setting: 3 times evidence") &&
              !a.kept,
          &a, "premature announcements no misjudged rank explains: notification not advised, the ways work escapes named");

    /* 12b: the same with violations: the misjudged ranks explain them */
    for (int i = 0; i < 2; i++)
        viol(&j, i, 0, 3, 4, 0);
    a = advise(&j);
    CHECK(has(text, "Ranks found 3 times evidence that an announcement was premature (UNSAFE in the episode table; "
                    "detection.unsafe): follow the items above") &&
              !has(text, "yet no rank judged passive") && !has(text, "notification can be turned on"),
          &a, "premature announcements with contract violations: the items above are the cause");

    /* 9: purity */
    job_init(&j, 3, "probe", "none");
    for (int i = 0; i < 3; i++) {
        cand(&j, i, TDR_CAND_TEST, 30, (uint64_t)i);
        viol(&j, i, 0, 4 + i, 3, 1);
    }
    j.u[2][U_BUSYGAPS] = 5;
    j.d[2][D_BUSYGAP] = 0.5;
    job copy = j;
    tdr_advice a1 = advise(&j);
    static char first[sizeof text];
    memcpy(first, text, sizeof text);
    tdr_advice a2 = advise(&j);
    tap_ok(!memcmp(&copy, &j, sizeof j) && !strcmp(first, text) && !memcmp(&a1, &a2, sizeof a1) && a1.items > 3,
           "the same inputs give the same advice (%d items) and are left untouched", a1.items);
    return tap_done();
}
