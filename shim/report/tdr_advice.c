/*
 * The advice on TDSHIM_IDLE and the ignore settings (tdr_advice.h): a pure
 * function of the rows rank 0 gathered (tdr_row.h) and the effective
 * settings. No MPI, no global state.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "tdr_advice.h"
#include "tdr_writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *cfg_get(const tdr_meta *m, const char *key)
{
    for (int i = 0; i < m->nconfig; i++)
        if (strcmp(m->config[i].key, key) == 0)
            return m->config[i].value;
    return "";
}

/* a tag carries work when at least one in TDR_WORK_SHARE of the messages a
 * waiting rank found on it was followed by work and primary data sent
 * (struct tdr_worktag, tds_progress.c cand_poll) */
#define TDR_WORK_SHARE 4
typedef struct vtag {
    int tag, ranks;
    unsigned long long messages, empty, bytes, found, minb, maxb, atmin;
} vtag;

static int vtag_cmp(const void *a, const void *b)
{
    const vtag *x = a, *y = b;
    return x->messages != y->messages ? (x->messages < y->messages ? 1 : -1) : (x->tag > y->tag) - (x->tag < y->tag);
}

/* one rank's row of a tag table (tag + 1, messages[, empty, bytes, min,
 * max bytes, messages of min bytes]: n words) into the job's table of *ntab tags */
static void vtag_add(vtag *tab, int *ntab, const uint64_t *row, int n)
{
    int tag = (int)(row[0] - 1), j = 0;
    while (j < *ntab && tab[j].tag != tag)
        j++;
    if (j == *ntab)
        tab[(*ntab)++] = (vtag){.tag = tag, .minb = ~0ull};
    tab[j].ranks++;
    tab[j].messages += row[1];
    if (n == 3)
        tab[j].found += row[2];
    if (n == U_VTAG_W) {
        tab[j].empty += row[2];
        tab[j].bytes += row[3];
        if (row[4] < tab[j].minb)
            tab[j].minb = row[4], tab[j].atmin = 0;
        if (row[4] == tab[j].minb)
            tab[j].atmin += row[6];
        if (row[5] > tab[j].maxb)
            tab[j].maxb = row[5];
    }
}

/* "0,3,5" (at most 12 ranks, then "..."): the ranks where flag[i] */
static void rank_list(char *out, size_t len, const int *flag, int n)
{
    size_t k = 0;
    int shown = 0;
    out[0] = '\0';
    for (int i = 0; i < n && k + 16 < len; i++) {
        if (!flag[i])
            continue;
        if (shown == 12) {
            snprintf(out + k, len - k, ",...");
            return;
        }
        k += (size_t)snprintf(out + k, len - k, "%s%d", shown++ ? "," : "", i);
    }
}

/* Written into summary.txt; the settings it suggests, in one line, into
 * out->hint for the stderr summary (empty: nothing to change). */
int tdr_advice_write(buf *b, const tdr_advice_in *in, tdr_advice *out)
{
    const tdr_meta *m = in->meta;
    char *hint = out->hint;
    const size_t hintlen = sizeof out->hint;
    const char *idle = cfg_get(m, "TDSHIM_IDLE"), *notify = cfg_get(m, "TDSHIM_NOTIFY");
    int spin = strncmp(idle, "spin", 4) == 0, prog = strncmp(idle, "pcontrol", 8) == 0 || strcmp(idle, "api") == 0;
    int n = in->nranks, item = 0;
    unsigned long long viol = 0, vother = 0, wother = 0, gaps = 0, empty = 0, unsafe = 0, again = 0, late = 0;
    unsigned long long most_threads = 0;
    double gap_s = 0;
    int *busy = calloc((size_t)n, sizeof *busy), *never = calloc((size_t)n, sizeof *never);
    int *tests = calloc((size_t)n, sizeof *tests), ntests = 0;
    unsigned long long etests = 0;
    vtag *tags = calloc((size_t)n * TDR_VIOL_TAGS + 1, sizeof *tags);
    vtag *wtags = calloc((size_t)n * TDR_VIOL_TAGS + 1, sizeof *wtags);
    int ntags = 0, nbusy = 0, nnever = 0, nwtags = 0, polling = 0;
    unsigned long long cpass[TDR_NCAND] = {0}, cbreach[TDR_NCAND] = {0}, psent = 0, pign = 0, pxjob = 0;
    int clive[TDR_NCAND] = {0};
    memset(out, 0, sizeof *out);
    out->pick = -1;
    bprintf(b, "\n@--- Advice (TDSHIM_IDLE=%s; from what this run showed) ---\n", idle);
    if (!busy || !never || !tags || !tests || !wtags) {
        bprintf(b, "not computed (out of memory)\n");
        free(busy), free(never), free(tags), free(tests), free(wtags);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        const uint64_t *u = in->u + (size_t)i * U_N;
        viol += u[U_VIOL];
        vother += u[U_VOTHER];
        wother += u[U_WOTHER];
        gaps += u[U_BUSYGAPS];
        empty += u[U_EMPTY];
        unsafe += u[U_UNSAFE];
        again += u[U_BUSYAGAIN];
        late += u[U_TLATE];
        most_threads = u[U_THREADS] > most_threads ? u[U_THREADS] : most_threads;
        gap_s += in->d[(size_t)i * D_N + D_BUSYGAP];
        /* a rank polls while busy when at least 3 times two empty polls in
         * a row were each followed by work, taking 1% of its wall time or more */
        busy[i] = u[U_BUSYGAPS] >= 3 && in->d[(size_t)i * D_N + D_BUSYGAP] >= 0.01 * in->d[(size_t)i * D_N + D_WALL];
        tests[i] = u[U_ETESTS] >= 100 && 2 * u[U_ETESTS] >= u[U_EMPTY];
        ntests += tests[i];
        etests += u[U_ETESTS];
        nbusy += busy[i];
        never[i] = u[U_B2I] == 0;
        nnever += never[i];
        psent += u[U_PSENT];
        pign += u[U_IGN];
        pxjob += u[U_XSENT] + u[U_XRECV];
        polling += u[U_EMPTY] != 0;
        for (int c = 0; c < TDR_NCAND; c++) {
            cpass[c] += u[U_CANDP + c];
            cbreach[c] += u[U_CANDB + c];
            clive[c] += u[U_CANDP + c] != 0;
        }
        for (int t = 0; t < TDR_VIOL_TAGS && u[U_WTAG + 3 * t]; t++)
            vtag_add(wtags, &nwtags, u + U_WTAG + 3 * t, 3);
        for (int t = 0; t < TDR_VIOL_TAGS && u[U_VTAG + U_VTAG_W * t]; t++)
            vtag_add(tags, &ntags, u + U_VTAG + U_VTAG_W * t, U_VTAG_W);
    }
    qsort(tags, (size_t)ntags, sizeof *tags, vtag_cmp);
    char ranks[128];
    size_t hk = 0;
#define HINT(...)                                                                                                 \
    do {                                                                                                       \
        if (hk < hintlen)                                                                                      \
            hk += (size_t)snprintf(hint + hk, hintlen - hk, "%s", hk ? ", " : "");                             \
        if (hk < hintlen)                                                                                      \
            hk += (size_t)snprintf(hint + hk, hintlen - hk, __VA_ARGS__);                                      \
    } while (0)
    if (late) {
        int *lr = calloc((size_t)n, sizeof *lr);
        for (int i = 0; lr && i < n; i++)
            lr[i] = in->u[(size_t)i * U_N + U_TLATE] != 0;
        if (lr)
            rank_list(ranks, sizeof ranks, lr, n);
        else
            snprintf(ranks, sizeof ranks, "?");
        free(lr);
        const char *set = cfg_get(m, "TDSHIM_THREADS");
        bprintf(b, "%d. ranks %s: %llu threads made their first MPI call while tdshim judged their rank passive "
                   "without them (it counts a thread from its first point-to-point call, and TDSHIM_THREADS=%s "
                   "did not cover them): until then detection could not see their work, and a notification could "
                   "have come early. Set TDSHIM_THREADS=%llu (the most threads of a rank that used MPI at once in "
                   "this run).\n",
                ++item, ranks, late, *set ? set : "1", most_threads);
        HINT("TDSHIM_THREADS=%llu (threads called MPI after their rank was judged passive)", most_threads);
    }
    int measure = strcmp(notify, "none") == 0;
    /* the idle notions side by side (measure mode; tds_init.c cand_poll) */
    static const char *const cand_names[] = TDR_CAND_NAMES;
    int pick = -1, cand_items = 0, spin_fit = 0;
    if (measure && polling) {
        bprintf(b, "%d. The idle notions side by side on this run (a breach: a rank the notion would have judged "
                   "passive then sent a primary message without receiving one, so it still had work):",
                ++item);
        for (int c = 0; c < TDR_NCAND; c++) {
            bprintf(b, "%s TDSHIM_IDLE=%s%s%s%s judged %llu times passive on %d of %d ranks, %llu breaches",
                    c ? ";" : "", cand_names[c], c == TDR_CAND_SPIN ? " (TDSHIM_SPIN_GAP=" : "",
                    c == TDR_CAND_SPIN ? cfg_get(m, "TDSHIM_SPIN_GAP") : "", c == TDR_CAND_SPIN ? " us)" : "",
                    cpass[c], clive[c], n, cbreach[c]);
            /* the notion this run supports: no breach, every polling rank
             * judged passive by it, and (probe, test) no rank polling while
             * busy in its scope, which an empty poll in scope would hide */
            if (pick < 0 && cbreach[c] == 0 && clive[c] == polling && (c == TDR_CAND_SPIN || !nbusy) &&
                /* probe: it must see the idle periods test sees (test
                 * judges at every probe too); one that misses half of them
                 * misses the program's idle loop (its MPI_Test*) */
                (c != TDR_CAND_PROBE || 2 * cpass[TDR_CAND_PROBE] >= cpass[TDR_CAND_TEST]))
                pick = c;
        }
        bprintf(b, ".\n");
        spin_fit = pick == TDR_CAND_SPIN; /* before "no primary message" overrides the pick */
        if (psent == 0) {
            /* why: the ignore settings, other jobs (an MPI_Comm_spawn'ed
             * pool: mpi4py.futures), or no point-to-point message at all;
             * only the first is changed by a setting */
            if (pign) {
                bprintf(b, "%d. No primary message was counted in this run (every message was on an ignored tag, "
                           "or empty under TDSHIM_IGNORE_EMPTY=1: %llu received): detection has nothing to see, "
                           "and a notification would say nothing of the program's work. Ignore fewer tags.\n",
                        ++item, pign);
                HINT("ignore fewer tags (no primary message was counted)");
            } else if (pxjob) {
                bprintf(b, "%d. No primary message was counted in this run: its %llu messages went to or came from "
                           "other jobs (an intercommunicator of MPI_Comm_spawn, MPI_Comm_connect/accept or "
                           "MPI_Comm_join; primary.other_jobs), which tdshim does not count, as detection covers one "
                           "job: it has nothing to see here, and a notification would say nothing of the program's "
                           "work. No setting changes that; the other jobs' ranks under tdshim write their own "
                           "reports.\n",
                        ++item, pxjob);
                HINT("nothing to detect (no primary message within this job: its %llu went to or came from other jobs)", pxjob);
            } else {
                bprintf(b, "%d. No primary message was counted in this run: the program sent no point-to-point "
                           "message within this job (collectives and one-sided communication are not primary "
                           "messages): detection has nothing to see, and a notification would say nothing of the "
                           "program's work.\n",
                        ++item);
                HINT("nothing to detect (no point-to-point message within this job)");
            }
            pick = -2;
        } else if (pick >= 0) {
            bprintf(b, "%d. TDSHIM_IDLE=%s: no breach among its %llu passive judgements, every polling rank judged "
                       "passive: the notion this run supports. Under TDSHIM_NOTIFY=tag:N a poll that cannot receive "
                       "tag N on MPI_COMM_WORLD does not count either, which only removes judgements.%s\n",
                    ++item, cand_names[pick], cpass[pick],
                    viol || unsafe ? "" : " With it, notification can be turned on (TDSHIM_NOTIFY=tag:N or exit).");
            cand_items = strcmp(idle, cand_names[pick]) == 0 ? 2 : 0; /* nothing to change if nothing else */
            if (strcmp(idle, cand_names[pick]) != 0 && !(pick == TDR_CAND_SPIN && spin))
                HINT("TDSHIM_IDLE=%s (no breach in %llu passive judgements)", cand_names[pick], cpass[pick]);
        } else {
            /* a notion that judges at every empty poll was ruled out only by
             * ranks polling while busy (every other condition of the pick
             * above held): say so, the breaches being none */
            int quiet = -1;
            for (int c = 0; c < TDR_NCAND && quiet < 0; c++)
                if (c != TDR_CAND_SPIN && nbusy && cbreach[c] == 0 && clive[c] == polling &&
                    (c != TDR_CAND_PROBE || 2 * cpass[TDR_CAND_PROBE] >= cpass[TDR_CAND_TEST]))
                    quiet = c;
            char why[384] = "";
            if (quiet >= 0) {
                rank_list(ranks, sizeof ranks, busy, n);
                snprintf(why, sizeof why,
                         " (TDSHIM_IDLE=%s had no breach in %llu passive judgements, but ranks %s poll while busy, "
                         "polls.busy_gaps: an empty poll there does not mean idle)",
                         cand_names[quiet], cpass[quiet], ranks);
            }
            bprintf(b, "%d. No idle notion was free of breaches with every polling rank passive%s: none can be "
                       "trusted for this program as it ran%s. Ignoring a tag that carries only requests (items "
                       "below) removes the breaches its sends make; else let the program say when it is idle: "
                       "TDSHIM_IDLE=pcontrol (it calls MPI_Pcontrol(0) where it has no work) or api "
                       "(tdshim_set_passive()). Under TDSHIM_NOTIFY=tag:N a poll that cannot receive tag N on "
                       "MPI_COMM_WORLD is never an idle poll: a program that probes for N only where it has no work "
                       "is judged passive only there.\n",
                    ++item, nbusy ? " (and, for probe and test, no rank polling while busy)" : "", why);
            /* the tags of a notion's breaches show when it is the one measured (its violations) */
            int cover = 2 * cpass[TDR_CAND_PROBE] < cpass[TDR_CAND_TEST] ? TDR_CAND_TEST : TDR_CAND_PROBE;
            if (quiet >= 0) {
                HINT("no TDSHIM_IDLE safe: ranks %s poll while busy (TDSHIM_NOTIFY=tag:N probed for only where "
                     "idle, TDSHIM_IDLE=pcontrol or api)",
                     ranks);
            } else if (strcmp(idle, cand_names[cover]) != 0 && !viol) {
                bprintf(b, "%d. Measure again with TDSHIM_IDLE=%s (the notion that sees this program's idle "
                           "polls): the tags of its breaches then show as contract violations.\n",
                        ++item, cand_names[cover]);
                HINT("measure again with TDSHIM_IDLE=%s (its %llu breaches' tags then show)", cand_names[cover],
                     cbreach[cover]);
            } else {
                HINT("no TDSHIM_IDLE free of breaches (TDSHIM_NOTIFY=tag:N probed for only where idle, "
                     "TDSHIM_IDLE=pcontrol or api, or ignore request tags)");
            }
        }
    }
    int empty_hint = 0, tags_hint = 0;
    for (int j = 0; j < ntags && j < 8; j++) {
        const vtag *v = &tags[j];
        const vtag *w = NULL;
        for (int k = 0; k < nwtags && !w; k++)
            w = wtags[k].tag == v->tag ? &wtags[k] : NULL;
        /* an entry with no find judged: ranks waiting for work found
         * messages on the tag, each too long after their last empty poll
         * to tell whether work followed (tds_progress.c tds_spin_found) */
        const int unjudged = w && w->found == 0;
        /* a waiting rank that found a message on the tag then worked and
         * sent primary data: the tag carries work when that is no
         * coincidence, one time in TDR_WORK_SHARE or more. work_steal
         * answers its requests "no work" and sends its own next request or
         * Safra's token in the same loop turn: counted as work once in 196
         * when CPU time was not asked for (a fresh-clone CI run named tag 1
         * a work tag then), 0 to 2 times in 20-30 finds since */
        if (w && (w->messages == 0 || w->messages * TDR_WORK_SHARE < w->found))
            w = NULL;
        /* an all-empty tag is the "no work" reply's case: TDSHIM_IGNORE_EMPTY
         * ignores the empty messages, not the tag (a reply that makes its
         * thief send the next request is no work) */
        if (v->empty == v->messages)
            w = NULL;
        /* measured, but not all kept: a rank found messages on more tags
         * than its table holds (Ray has over a hundred), so this tag's
         * finds on that rank are unknown, and a tag no kept entry shows
         * carrying work may carry it there; or found, never judged. Never
         * suggested for TDSHIM_IGNORE_TAGS then (issue 37: only settings
         * the run proved safe) */
        const int unknown = measure && !w && (wother || unjudged);
        char why[160];
        if (unjudged)
            snprintf(why, sizeof why, "ranks waiting for work found messages on it, none judged (each found too long "
                                      "after the poll before)");
        else
            snprintf(why, sizeof why, "ranks waiting for work found messages on more tags than a report keeps (%llu "
                                      "finds beyond them; polls.work_tags_other)",
                     wother);
        /* a tag whose messages sent while passive all have one short size:
         * a libcircle-style "no work" reply (TDSHIM_IGNORE_SHORT), the work
         * itself travelling in longer ones from busy ranks. Advised when the
         * tag carries work, and when this run could not tell (work tags are
         * measured in measure mode only): ignoring those messages alone is
         * never less sound than ignoring the tag (issue 41: a notifying run
         * of work_queue was told to ignore its work tag) */
        int uniform = v->empty == 0 && v->minb == v->maxb && v->maxb <= TDR_SHORT_REPLY;
        int data = v->maxb > TDR_SHORT_REPLY && v->minb < v->maxb;
        if (uniform && (w || !measure || unknown)) {
            bprintf(b, "%d. tag %d: %llu messages sent by ranks judged passive (%d ranks), every one %llu bytes long. ",
                    ++item, v->tag, v->messages, v->ranks, v->maxb);
            if (w)
                bprintf(b, "Tag %d carries work (%llu of the %llu times a rank waiting for work found a message on "
                           "it, it then sent primary data), so do not ignore the tag; ",
                        v->tag, w->messages, w->found);
            else if (unknown)
                bprintf(b, "Whether tag %d carries work is unknown: %s, so ignore no more than these messages; ", v->tag,
                        why);
            else
                bprintf(b, "Whether tag %d carries work is measured in measure mode only (TDSHIM_NOTIFY=none), so "
                           "ignore no more than these messages; ",
                        v->tag);
            bprintf(b, "if a message of at most %llu bytes on tag %d never carries work (a \"no work\" reply, a "
                       "request), set TDSHIM_IGNORE_SHORT=%d:%llu.\n",
                    v->maxb, v->tag, v->tag, v->maxb);
            if (!empty_hint++)
                HINT("TDSHIM_IGNORE_SHORT=%d:%llu (%llu-byte messages on tag %d sent while passive)", v->tag, v->maxb,
                     v->maxb, v->tag);
        } else if (v->empty == v->messages) {
            bprintf(b, "%d. tag %d: %llu messages sent by passive ranks (%d ranks), all empty. If an empty message on "
                       "tag %d never carries work (a \"no work\" reply), set TDSHIM_IGNORE_EMPTY=1.\n",
                    ++item, v->tag, v->messages, v->ranks, v->tag);
            if (!empty_hint++)
                HINT("TDSHIM_IGNORE_EMPTY=1 (empty messages on tag %d sent while passive)", v->tag);
        } else if (w || data) {
            /* a tag that carries work: measured (w), or data: messages of
             * several sizes, some longer than a request or a reply (issue
             * 41: measure mode with the requests ignored named work_queue's
             * work tag, whose 4-byte "no work" replies and stolen batches
             * of up to 68 KB a rank misjudged by TDSHIM_IDLE=probe had
             * sent). Its shortest size, when short and repeated, is the
             * candidate for TDSHIM_IGNORE_SHORT (work_queue's stolen
             * batches can be 32 bytes, its replies are 4): never the tag */
            bprintf(b, "%d. tag %d: %llu messages sent by ranks judged passive (%d ranks; %llu empty, %llu to %llu "
                       "bytes). Tag %d carries work",
                    ++item, v->tag, v->messages, v->ranks, v->empty, v->minb, v->maxb, v->tag);
            if (w)
                bprintf(b, ": %llu of the %llu times a rank waiting for work found a message on it, it then sent "
                           "primary data",
                        w->messages, w->found);
            else
                bprintf(b, ": its messages have several sizes, up to %llu bytes", v->maxb);
            bprintf(b, ". Do not ignore it; its senders were judged passive while they still had work (see the idle "
                       "notions above).");
            if (v->minb && v->minb <= TDR_SHORT_REPLY && v->atmin > 1) {
                bprintf(b, " %llu of them were %llu bytes long, the shortest: if a message of at most %llu bytes on "
                           "tag %d never carries work (a \"no work\" reply, a request), set TDSHIM_IGNORE_SHORT=%d:%llu.",
                        v->atmin, v->minb, v->minb, v->tag, v->tag, v->minb);
                if (!empty_hint++)
                    HINT("TDSHIM_IGNORE_SHORT=%d:%llu if its %llu-byte messages carry no work (tag %d carries work: "
                         "never ignore it)",
                         v->tag, v->minb, v->minb, v->tag);
            }
            bprintf(b, "\n");
        } else if (unknown) {
            bprintf(b, "%d. tag %d: %llu messages sent by passive ranks (%d ranks; %llu empty, %llu bytes in all). "
                       "Whether tag %d carries work is unknown: %s, so this run cannot advise ignoring it; its senders "
                       "may have been judged passive while still working (see the idle notions)%s.\n",
                    ++item, v->tag, v->messages, v->ranks, v->empty, v->bytes, v->tag, why,
                    v->empty ? "; the empty ones, if they are \"no work\" replies: TDSHIM_IGNORE_EMPTY=1" : "");
        } else {
            bprintf(b, "%d. tag %d: %llu messages sent by passive ranks (%d ranks; %llu empty, %llu bytes in all). "
                       "If tag %d never carries work (requests, acknowledgements, replies), add it to "
                       "TDSHIM_IGNORE_TAGS; if it does, its senders were judged passive while still working "
                       "(see the idle notions)%s.\n",
                    ++item, v->tag, v->messages, v->ranks, v->empty, v->bytes, v->tag,
                    v->empty ? "; the empty ones, if they are \"no work\" replies: TDSHIM_IGNORE_EMPTY=1" : "");
            if (!tags_hint++)
                HINT("TDSHIM_IGNORE_TAGS=%d if tag %d carries no work", v->tag, v->tag);
        }
    }
    if (ntags > 8 || vother)
        bprintf(b, "%d. more tags had violations (%llu messages beyond the tables): see the per-rank JSON files.\n",
                ++item, vother);
    if (nbusy && !spin && !prog) {
        rank_list(ranks, sizeof ranks, busy, n);
        bprintf(b, "%d. ranks %s poll while busy: %llu times the program used more than TDSHIM_SPIN_GAP=%s us of CPU "
                   "time after each of two empty polls in a row without receiving anything (%.3f s in all, of %llu empty polls), so an "
                   "empty poll "
                   "does not mean idle. TDSHIM_IDLE=spin fits such a program (passive only while it spins on empty "
                   "polls; confirmation waves come with it)",
                ++item, ranks, gaps, cfg_get(m, "TDSHIM_SPIN_GAP"), gap_s, empty);
        /* measured side by side and not picked: spin saw this program spin too rarely, or breached */
        if (measure && polling && !spin_fit)
            bprintf(b, " if it spins on empty polls while idle; on this run spin did not qualify (item above): %llu "
                       "passive judgements on %d of %d polling ranks, %llu breaches",
                    cpass[TDR_CAND_SPIN], clive[TDR_CAND_SPIN], polling, cbreach[TDR_CAND_SPIN]);
        bprintf(b, ".\n");
        if (!(measure && polling)) /* else the side-by-side item decides */
            HINT("TDSHIM_IDLE=spin (ranks poll while busy)");
    }
    if (ntests && strncmp(idle, "probe", 5) == 0 && !(measure && polling)) { /* else the side-by-side item */
        rank_list(ranks, sizeof ranks, tests, n);
        bprintf(b, "%d. ranks %s poll their receives with MPI_Test* (%llu empty Test polls): TDSHIM_IDLE=probe "
                   "counts only empty MPI_Iprobe as idle, so these ranks are passive only inside blocking calls and "
                   "detection waits for MPI_Finalize. TDSHIM_IDLE=%s.\n",
                ++item, ranks, etests,
                nbusy ? "spin fits them (they also poll while busy)" : "test fits them (they do not poll while busy), or spin");
        if (!nbusy)
            HINT("TDSHIM_IDLE=test (ranks poll receives with MPI_Test)");
    }
    if (nnever && !prog) {
        rank_list(ranks, sizeof ranks, never, n);
        bprintf(b, "%d. ranks %s never became passive under TDSHIM_IDLE=%s (no empty poll or blocking wait counted "
                   "as idle): detection cannot complete while they run. If they poll receives with MPI_Test*, "
                   "TDSHIM_IDLE=spin (or test) sees them; if they never poll, TDSHIM_IDLE=pcontrol (the program "
                   "calls MPI_Pcontrol(0) when idle) or the termdetect API.\n",
                ++item, ranks, idle);
        if (!spin && !(measure && polling))
            HINT("TDSHIM_IDLE=spin or pcontrol (ranks %s never became passive)", ranks);
    }
    /* premature announcements that no misjudged rank explains: no contract
     * violation, and the notion in use breach-free where it was measured
     * (NWChem over ARMCI-MPI under cda, 2026-12-03: 3-6 UNSAFE episodes a
     * run, 0 violations, and item 2 said notification could be turned on) */
    int cur = -1;
    for (int c = 0; c < TDR_NCAND && measure && polling; c++)
        if (strcmp(idle, cand_names[c]) == 0 || (c == TDR_CAND_SPIN && spin))
            cur = c;
    if (unsafe && !viol && (cur < 0 || cbreach[cur] == 0)) {
        bprintf(b, "%d. Ranks found %llu times evidence that an announcement was premature (UNSAFE in the episode "
                   "table; detection.unsafe), yet no rank judged "
                   "passive sent a primary message without receiving one (0 contract violations%s): the work that "
                   "made them premature reached a rank some way tdshim does not count as a message, such as "
                   "one-sided communication (MPI_Put, MPI_Get, MPI_Accumulate and the like pass through unwrapped), "
                   "a rooted collective whose root returns before the others enter it (MPI_Bcast), a collective on "
                   "a communicator without rank 0, or memory the ranks share. No setting this run measured makes "
                   "the program's notifications trustworthy under TDSHIM_ALGO=%s: do not turn notification on "
                   "from it.\n",
                ++item, unsafe, cur >= 0 ? ", and no breach of this notion" : "", m->algo ? m->algo : "?");
        HINT("no setting: %llu times evidence of premature announcements, no contract violation (work not in "
             "messages: one-sided, rooted collectives?)",
             unsafe);
    } else if (unsafe) {
        bprintf(b, "%d. Ranks found %llu times evidence that an announcement was premature (UNSAFE in the episode "
                   "table; detection.unsafe): follow the items above before relying on notifications.\n",
                ++item, unsafe);
    }
    if (item && !m->callsites_top && (ntags || nbusy))
        bprintf(b, "%d. TDSHIM_CALLSITES=5 names the program's poll and send call sites (section Call sites).\n",
                ++item);
    out->kept = item == cand_items && (cand_items || !(measure && polling));
    if (out->kept)
        bprintf(b, "The program kept the contract under TDSHIM_IDLE=%s: no primary message was sent by a passive "
                   "rank%s.%s\n",
                idle, spin || prog || !measure ? "" : " and no rank polled while busy",
                measure ? " Notification can be turned on (TDSHIM_NOTIFY=tag:N or exit)." : "");
    if (!measure && !spin && !prog)
        bprintf(b, "Whether the program polls while busy is measured in measure mode only (TDSHIM_NOTIFY=none).\n");
    if (spin && again)
        bprintf(b, "Note: TDSHIM_IDLE=spin judged a rank passive and then saw it work again %llu times "
                   "(detection.busy_again): polls with work between them shorter than TDSHIM_SPIN_GAP=%s us. The "
                   "confirmation waves keep that from notifying early; a smaller gap or a larger spin:N makes it "
                   "rarer and detection slower.\n",
                again, cfg_get(m, "TDSHIM_SPIN_GAP"));
#undef HINT
    free(busy), free(never), free(tags), free(tests), free(wtags);
    out->items = item;
    out->pick = pick;
    for (int c = 0; c < TDR_NCAND; c++) {
        out->passive[c] = cpass[c];
        out->breaches[c] = cbreach[c];
    }
    return 0;
}

