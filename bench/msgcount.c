/*
 * msgcount: the deterministic per-message workload behind the instruction
 * budget (tests/perf/icount.sh, bench/RESULTS.md "Instructions per message").
 *
 * Rank 0 sends --windows windows (after one of warm-up) of --window
 * messages of --bytes bytes to rank 1. Every message has arrived before the call that completes it, so
 * no completion call spins and an instruction count is the same from run to
 * run whatever the machine's load:
 *
 *   --mode nb        rank 1 posts the window's MPI_Irecv; barrier; rank 0
 *                    MPI_Isend x W, MPI_Waitall; barrier; rank 1 MPI_Waitall
 *                    (eager sends: rank 0's MPI_Waitall finds them done)
 *   --mode blocking  rank 0 MPI_Send x W; barrier; rank 1 MPI_Recv x W
 *   --mode probe     as blocking, rank 1 MPI_Iprobe (finds it) + MPI_Recv
 *                    per message: how an asynchronous program takes work
 *   --mode test      as blocking, rank 1 MPI_Irecv + MPI_Test (done) per
 *                    message: the other way
 *   --mode mprobe    as probe with MPI_Improbe + MPI_Mrecv
 *   --mode testany   as blocking, rank 1 keeps 4 standing MPI_Irecv and
 *                    polls them with MPI_Testany, reposting the one done
 *   --mode testsome  the same with MPI_Testsome
 *   --mode idle      rank 1 alone makes W empty MPI_Iprobe calls (tag 2,
 *                    which nothing is sent on) per window: an idle rank's
 *                    poll loop; rank 0 sends nothing
 *   --mode idletest  rank 1 alone makes W empty MPI_Testany calls per window
 *                    on 3 standing receives, for tags 3, 2 and 4, which
 *                    nothing is sent on: examples/work_steal's idle loop
 *                    (its steal requests, work and the notification; run it
 *                    with TDSHIM_IDLE=test TDSHIM_IGNORE_TAGS=3)
 *   --mode busy      rank 1 alone makes W MPI_Test calls per window on a
 *                    standing MPI_Irecv for tag 3, which nothing is sent on:
 *                    a busy rank polling for steal requests between work
 *                    items (run it with TDSHIM_IGNORE_TAGS=3: out of scope)
 *   --mode busynear  as busy, with a receive for tag 2 posted after the
 *                    standing one (the notification's: examples/work_steal
 *                    tests its standing receive for steal requests while
 *                    later receives stand, so it is not the last posted)
 *   --mode busywork  as busy, with 40 us of the thread's CPU time spent
 *                    after each MPI_Test (a rank that polls while busy,
 *                    as measure mode sees it: every interval between two
 *                    polls longer than TDSHIM_SPIN_GAP)
 *                    busy, busynear, busywork and idletest: rank 1 first sends itself a byte
 *                    (MPI_Isend, MPI_Recv, MPI_Wait) after posting its
 *                    receives, outside the counted calls
 *   probe-any, test-any, mprobe-any: those modes with MPI_ANY_SOURCE and
 *                    MPI_ANY_TAG (--phases only)
 *   --dup            the messages travel on a duplicate of MPI_COMM_WORLD
 *                    (same group and ranks: tdshim's flat entries take it
 *                    as MPI_COMM_WORLD, tds.fcomm)
 *   --split          the messages travel on a communicator of the same
 *                    group in the reverse order (MPI_Comm_split): not a
 *                    copy of MPI_COMM_WORLD, so tdshim's general path
 *   --alt            odd messages are MPI_CHAR, even ones MPI_BYTE (the
 *                    same bytes; two types in turn, as a program that
 *                    sends items of one type and replies of another);
 *                    nbalt3 (--phases only): MPI_BYTE, MPI_CHAR and
 *                    MPI_UNSIGNED_CHAR in turn
 *   --phases LIST    several runs in one process, one after the other:
 *                    LIST is MODE:W[,MODE:W...], MODE a --mode above or
 *                    nbdup, nbsplit, nbalt (nb with --dup, --split,
 *                    --alt) or a *-any mode, W the window; each phase has its own
 *                    warm-up window and communicator (made and freed
 *                    outside the counted calls) and ends with a callgrind
 *                    dump named after it (CALLGRIND_DUMP_STATS_AT), so one
 *                    valgrind start-up serves every measurement
 *                    (tests/perf/icount.sh)
 *
 * The barriers are per window, so two runs with the same --windows and
 * different --window sizes differ only by messages: their difference over
 * the difference of messages is what one more message costs, start-up,
 * finalize and the barriers excluded. Plain MPI; the received bytes are
 * checked so a transparency fault cannot pass unnoticed.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
/* only the message calls are counted (cgtoggle.h): the barriers and
 * start-up stay out */
#include "cgtoggle.h"
/* the first window is a warm-up (tdshim's request table and buffers grow to
 * the window's size in it): not counted */
#define TOGGLE()                                                                                   \
    do {                                                                                           \
        if (w > 0)                                                                                 \
            CALLGRIND_TOGGLE_COLLECT;                                                              \
    } while (0)

static int usage(int rank, int bad)
{
    if (rank == 0)
        fprintf(bad ? stderr : stdout,
                "usage: msgcount [--mode nb|blocking|probe|test|mprobe|testany|testsome|idle|idletest|busy|busynear|busywork] [--bytes B] [--window W] [--windows N] [--dup|--split] [--alt]\n"
                "       msgcount --phases MODE:W[,MODE:W...] [--bytes B] [--windows N]\n"
                "  defaults: nb, 8 B, windows of 64 messages, 20 windows after one of warm-up,\n"
                "  MPI_COMM_WORLD (--dup: a duplicate of it; --split: its group in the reverse order);\n"
                "  --phases: MODE one of those or nbdup nbsplit nbalt nbalt3 probe-any test-any mprobe-any,\n"
                "  each phase ending with a callgrind dump named MODE-W; needs 2 ranks (others idle)\n");
    return bad ? 2 : 0;
}

/* spend s of the calling thread's CPU time */
static void cpu_work(double s)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    do
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    while ((double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec) < s);
}

/* one measurement: the mode, its communicator and type variants, the window */
struct phase {
    int blocking; /* 0 nb, 1 blocking, 2 probe, 3 test, 4 mprobe, 5 testany, 6 testsome, 7 idle, 8 busy, 9 idletest,
                   * 10 busywork, 11 busynear */
    int dup, split, alt, any;
    long window;
    char name[32];
};

static const char *const mode_names[] = {"nb", "blocking", "probe", "test", "mprobe", "testany", "testsome", "idle", "busy", "idletest", "busywork", "busynear"};
/* the standing receives of testany and testsome */
#define STANDING 4

/* parse_mode NAME P: P's mode and variants from nb|blocking|probe|test|nbdup|nbsplit|nbalt; 0 or -1 */
static int parse_mode(const char *s, size_t n, struct phase *p)
{
    static const struct {
        const char *name;
        int blocking, dup, split, alt, any;
    } modes[] = {{"nb", 0, 0, 0, 0, 0},         {"blocking", 1, 0, 0, 0, 0},  {"probe", 2, 0, 0, 0, 0},
                 {"test", 3, 0, 0, 0, 0},       {"mprobe", 4, 0, 0, 0, 0},    {"testany", 5, 0, 0, 0, 0},
                 {"testsome", 6, 0, 0, 0, 0},   {"nbdup", 0, 1, 0, 0, 0},     {"nbsplit", 0, 0, 1, 0, 0},
                 {"nbalt", 0, 0, 0, 1, 0},      {"nbalt3", 0, 0, 0, 3, 0},    {"probe-any", 2, 0, 0, 0, 1}, {"test-any", 3, 0, 0, 0, 1},
                 {"mprobe-any", 4, 0, 0, 0, 1}, {"idle", 7, 0, 0, 0, 0},
                 {"busy", 8, 0, 0, 0, 0},       {"idletest", 9, 0, 0, 0, 0},  {"busywork", 10, 0, 0, 0, 0},
                 {"busynear", 11, 0, 0, 0, 0}};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        if (strlen(modes[i].name) == n && !strncmp(modes[i].name, s, n)) {
            p->blocking = modes[i].blocking;
            p->dup = modes[i].dup;
            p->split = modes[i].split;
            p->alt = modes[i].alt;
            p->any = modes[i].any;
            return 0;
        }
    return -1;
}

/* the type of message k: MPI_BYTE, or with --alt MPI_CHAR for odd k; with
 * nbalt3 MPI_BYTE, MPI_CHAR, MPI_UNSIGNED_CHAR in turn (the same bytes:
 * three types, as work_steal's int requests, int64 work and byte "no
 * work" replies) */
static MPI_Datatype alt_type(int alt, long k)
{
    return alt == 3 ? (k % 3 == 0 ? MPI_BYTE : k % 3 == 1 ? MPI_CHAR : MPI_UNSIGNED_CHAR)
                    : alt && k % 2 ? MPI_CHAR : MPI_BYTE;
}

/* run_phase: warm-up plus WINDOWS windows of P on a communicator of its own; wrong bytes received */
static long run_phase(const struct phase *p, int rank, int size, long bytes, long windows, unsigned char *buf,
                      MPI_Request *rq)
{
    const int blocking = p->blocking, alt = p->alt;
    const long window = p->window;
    MPI_Comm comm = MPI_COMM_WORLD;
    int to = 1, from = 0; /* world ranks 1 and 0 in comm */
    const int tag = p->any ? MPI_ANY_TAG : 1;
    if (p->dup)
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    if (p->split) { /* the reverse order: world rank r is size - 1 - r */
        MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &comm);
        to = size - 2;
        from = size - 1;
    }
    long wrong = 0;
    for (long w = 0; w <= windows; w++) { /* w = 0: the warm-up */
        if (rank == 0)
            for (long k = 0; k < bytes * window; k++)
                buf[k] = (unsigned char)(w + k);
        if (rank == 1 && !blocking) {
            TOGGLE();
            for (long k = 0; k < window; k++)
                MPI_Irecv(buf + k * bytes, (int)bytes, alt_type(alt, k), from, 1, comm, &rq[k]);
            TOGGLE();
        }
        if (!blocking)
            MPI_Barrier(MPI_COMM_WORLD); /* every receive is posted before its message is sent */
        if (rank == 0 && blocking < 7) { /* 7-10: nothing sent */
            TOGGLE();
            for (long k = 0; k < window; k++) {
                if (blocking)
                    MPI_Send(buf + k * bytes, (int)bytes, alt_type(alt, k), to, 1, comm);
                else
                    MPI_Isend(buf + k * bytes, (int)bytes, alt_type(alt, k), to, 1, comm, &rq[k]);
            }
            if (!blocking)
                MPI_Waitall((int)window, rq, MPI_STATUSES_IGNORE);
            TOGGLE();
        }
        MPI_Barrier(MPI_COMM_WORLD); /* every message of the window has arrived after it */
        if (rank == 1) {
            const int src = p->any ? MPI_ANY_SOURCE : from;
            MPI_Request standing = MPI_REQUEST_NULL;
            MPI_Request idl[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
            if (blocking == 8 || blocking == 10 || blocking == 11)
                MPI_Irecv(buf, (int)bytes, MPI_BYTE, from, 3, comm, &standing);
            if (blocking == 11)
                MPI_Irecv(buf + bytes, (int)bytes, MPI_BYTE, from, 2, comm, &idl[1]);
            for (int j = 0; blocking == 9 && j < 3; j++)
                MPI_Irecv(buf + j * bytes, (int)bytes, MPI_BYTE, from, j == 0 ? 3 : j == 1 ? 2 : 4, comm, &idl[j]);
            if (blocking >= 8) {
                /* a send of the program's completed between the posts and
                 * the polls, as hpcc's MPIRandomAccess tests its bucket's
                 * MPI_Isend between its polls: its completion must leave
                 * the standing receives where the flat tests find them */
                MPI_Request sr;
                char one = 1, got = 0;
                MPI_Isend(&one, 1, MPI_BYTE, 1, 5, comm, &sr);
                MPI_Recv(&got, 1, MPI_BYTE, 1, 5, comm, MPI_STATUS_IGNORE);
                MPI_Wait(&sr, MPI_STATUS_IGNORE);
                wrong += got != 1;
            }
            TOGGLE();
            for (long k = 0; blocking == 9 && k < window; k++) { /* an idle rank's empty tests */
                int flag = 0, idx = 0;
                MPI_Testany(3, idl, &idx, &flag, MPI_STATUS_IGNORE);
                wrong += flag;
            }
            for (long k = 0; (blocking == 8 || blocking == 11) && k < window; k++) { /* a busy rank's polls for requests */
                int flag = 0;
                MPI_Test(&standing, &flag, MPI_STATUS_IGNORE);
                wrong += flag;
            }
            for (long k = 0; blocking == 10 && k < window; k++) { /* polls while busy: 40 us of work after each */
                int flag = 0;
                MPI_Test(&standing, &flag, MPI_STATUS_IGNORE);
                wrong += flag;
                cpu_work(40e-6);
            }
            for (long k = 0; blocking == 7 && k < window; k++) { /* an idle rank's empty polls */
                int flag = 0;
                MPI_Iprobe(src, 2, comm, &flag, MPI_STATUS_IGNORE);
                wrong += flag;
            }
            for (long k = 0; blocking && blocking < 5 && k < window; k++) {
                MPI_Datatype t = alt_type(alt, k);
                int flag = 0;
                MPI_Status st;
                if (blocking == 2)
                    while (!flag)
                        MPI_Iprobe(src, tag, comm, &flag, &st);
                if (blocking == 3) {
                    MPI_Request r;
                    MPI_Irecv(buf + k * bytes, (int)bytes, t, src, tag, comm, &r);
                    while (!flag)
                        MPI_Test(&r, &flag, &st);
                } else if (blocking == 4) {
                    MPI_Message m;
                    while (!flag)
                        MPI_Improbe(src, tag, comm, &flag, &m, &st);
                    MPI_Mrecv(buf + k * bytes, (int)bytes, t, &m, MPI_STATUS_IGNORE);
                } else {
                    MPI_Recv(buf + k * bytes, (int)bytes, t, src, tag, comm, MPI_STATUS_IGNORE);
                }
            }
            if (blocking == 5 || blocking == 6) { /* STANDING receives, each reposted for the next message when done */
                const long nst = window < STANDING ? window : STANDING;
                long next = 0, done = 0;
                for (; next < nst; next++)
                    MPI_Irecv(buf + next * bytes, (int)bytes, alt_type(alt, next), src, tag, comm,
                              &rq[next]);
                while (done < window) {
                    int idx[STANDING], n = 0;
                    MPI_Status st[STANDING];
                    if (blocking == 5) {
                        int flag = 0;
                        MPI_Testany((int)nst, rq, &idx[0], &flag, &st[0]);
                        n = flag && idx[0] != MPI_UNDEFINED;
                    } else {
                        MPI_Testsome((int)nst, rq, &n, idx, st);
                        n = n == MPI_UNDEFINED ? 0 : n;
                    }
                    for (int j = 0; j < n; j++, done++)
                        if (next < window) {
                            MPI_Irecv(buf + next * bytes, (int)bytes, alt_type(alt, next), src,
                                      tag, comm, &rq[idx[j]]);
                            next++;
                        }
                }
            }
            if (!blocking)
                MPI_Waitall((int)window, rq, MPI_STATUSES_IGNORE);
            TOGGLE();
            if (standing != MPI_REQUEST_NULL) {
                MPI_Cancel(&standing);
                MPI_Wait(&standing, MPI_STATUS_IGNORE);
            }
            for (int j = 0; j < 3; j++)
                if (idl[j] != MPI_REQUEST_NULL) {
                    MPI_Cancel(&idl[j]);
                    MPI_Wait(&idl[j], MPI_STATUS_IGNORE);
                }
            for (long k = 0; blocking < 7 && k < bytes * window; k++)
                wrong += buf[k] != (unsigned char)(w + k);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (comm != MPI_COMM_WORLD)
        MPI_Comm_free(&comm);
    if (rank == 1)
        printf("msgcount %s%s%s %ld x %ld messages of %ld B: %s\n", mode_names[blocking], p->any ? "-any" : "",
               p->dup ? " dup" : p->split ? " split" : alt == 3 ? " alt3" : alt ? " alt" : "", windows, window, bytes,
               wrong ? "WRONG DATA" : "ok");
    return wrong;
}

#define MAX_PHASES 64

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0, nphases = 0, dumps = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    struct phase one = {.window = 64}, ph[MAX_PHASES];
    long bytes = 8, windows = 20, maxw = 0;
    for (int i = 1; i < argc && !bad; i++) {
        long *dst = NULL;
        if (!strcmp(argv[i], "--help")) {
            int rc = usage(rank, 0);
            MPI_Finalize();
            return rc;
        } else if (!strcmp(argv[i], "--mode") && i + 1 < argc) {
            i++;
            struct phase m; /* --mode takes the four modes; the variants are flags */
            bad = parse_mode(argv[i], strlen(argv[i]), &m) || m.dup || m.split || m.alt || m.any;
            one.blocking = m.blocking;
        } else if (!strcmp(argv[i], "--phases") && i + 1 < argc) {
            dumps = 1;
            for (const char *s = argv[++i]; *s && !bad; nphases++) {
                const char *colon = strchr(s, ':'), *comma = strchr(s, ',');
                char *end;
                if (nphases == MAX_PHASES || !colon || (comma && comma < colon) ||
                    parse_mode(s, (size_t)(colon - s), &ph[nphases]) ||
                    (ph[nphases].window = strtol(colon + 1, &end, 10)) < 1 || (*end && *end != ',')) {
                    bad = 1;
                    break;
                }
                snprintf(ph[nphases].name, sizeof ph[nphases].name, "%.*s-%ld", (int)(colon - s), s,
                         ph[nphases].window);
                s = *end ? end + 1 : end;
                bad |= *end && !*s; /* a trailing comma */
            }
            bad |= nphases == 0;
        } else if (!strcmp(argv[i], "--dup"))
            one.dup = 1;
        else if (!strcmp(argv[i], "--split"))
            one.split = 1;
        else if (!strcmp(argv[i], "--alt"))
            one.alt = 1;
        else if (!strcmp(argv[i], "--bytes"))
            dst = &bytes;
        else if (!strcmp(argv[i], "--window"))
            dst = &one.window;
        else if (!strcmp(argv[i], "--windows"))
            dst = &windows;
        else
            bad = 1;
        if (dst) {
            char *end;
            if (i + 1 >= argc || (*dst = strtol(argv[++i], &end, 10)) < 1 || *end)
                bad = 1;
        }
    }
    if (!dumps)
        ph[nphases++] = one;
    for (int k = 0; k < nphases; k++) {
        bad |= (ph[k].dup && ph[k].split) || ph[k].window > 4096;
        maxw = ph[k].window > maxw ? ph[k].window : maxw;
    }
    if (bad || size < 2 || bytes > 4096 || windows > 100000) {
        int rc = usage(rank, 1);
        MPI_Finalize();
        return rc;
    }
    unsigned char *buf = calloc((size_t)(bytes * maxw), 1);
    MPI_Request *rq = malloc((size_t)maxw * sizeof *rq);
    if (!buf || !rq)
        MPI_Abort(MPI_COMM_WORLD, 1);
    long wrong = 0;
    for (int k = 0; k < nphases; k++) {
        wrong += run_phase(&ph[k], rank, size, bytes, windows, buf, rq);
        if (dumps)
            CALLGRIND_DUMP_STATS_AT(ph[k].name);
    }
    free(buf);
    free(rq);
    MPI_Finalize();
    return wrong != 0;
}
