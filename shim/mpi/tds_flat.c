/*
 * The flat entries (tds_flat.h, issue 28): MPI_Send, MPI_Isend, MPI_Recv,
 * MPI_Irecv, MPI_Mrecv and MPI_Test (issue 38) for the common case, chosen
 * at init and whenever the configuration changes (tds_fast_select); the
 * flat MPI_Iprobe and MPI_Improbe are in tds_probe.c.
 */
#include "tds_flat.h"
#include "tds_recv.h"
#include "tds_send.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------ flat entries (issue 28)
 * The entry points MPI_Send, MPI_Isend, MPI_Recv and MPI_Irecv jump through
 * a pointer (gen_wrappers.py, kind `fast`). While tds.fast (single-threaded
 * use, no PMPI tool after tdshim) in header-free mode with nothing to look
 * at per message (tds.nh_slow: ignored tags, empty messages, call sites;
 * with messages to classify and no call sites the sends, MPI_Irecv and
 * the MPI_Test family are still flat, each message classified: FLAT_SENDS'
 * CLS, flat_cls_Irecv), they are the functions below: each checks the common case in a few
 * compares and, for anything else, hands the call unchanged to the general
 * entry (tds_wrap_<Name>: re-entry guard, lock, tds_body_<Name>) by a tail
 * call. Neither keeps a frame of its own on the send side (the count is
 * made in registers, then a tail call into MPI); the receives keep no
 * request entry (tds_hset). The re-entry guard is read, never written: a
 * flat entry holds no state across the MPI call it makes, and only the
 * general entries make calls that may come back (a tool's wrapper, the
 * MPI library's own use of MPI_*: those still pass straight through).
 * Counting is what send_nohdr and tds_recv_fast_nohdr do (DESIGN.md §4,
 * header-free mode); the sampled call of the timer, an inactive or clean
 * core (td_primary_send's slow case), a derived type, the notification's
 * envelope, a communicator other than MPI_COMM_WORLD, its last copy seen
 * (tds.fcomm, tds_flat_comm) and the last other intracommunicator of this
 * job's processes seen (tds.xcomm: its sends through FLAT_XSEND), or
 * MPI_PROC_NULL take the general entry (through FLAT_MISS, where a
 * predefined type other than the cached one enters the type cache and the
 * flat entry runs again).
 */
/* an active core that is dirty: td_primary_send's fast case */
static inline __attribute__((always_inline)) int flat_core_fast(void)
{
    const td_ctx *c = &tds.core;
    return (c->active & c->dirty) != 0;
}
/* (the communicator is checked first, on its own: see FLAT_XSEND); core:
 * the core's state too (CLS asks it of a primary only) */
static inline __attribute__((always_inline)) int flat_send_ok(int count, MPI_Datatype type, int dest, int tag,
                                                              int ntag, int core)
{
    return __builtin_expect(type == tds.tc_type && (unsigned)dest < (unsigned)tds.size && count >= 0 &&
                                (!ntag || tag != tds.nenv_tag) && (!core || flat_core_fast()) && !tds_inside,
                            1);
}
/* CLS: ignored tags, empty or short messages configured (TDSHIM_IGNORE_*,
 * tds.cf.classify): a message the send checked (its type the cached one,
 * count >= 0, not the timed call) that is not primary (tds_not_primary, as
 * make_header asks) is counted as ignored (tds_count_ignored) and goes as
 * written, as the general entry's header-free send (tds_count_nohdr) does
 * with it: work_steal's steal requests and "no work" replies, two of its
 * three messages, cost 190 instructions there */
static inline __attribute__((always_inline)) int flat_send_ignored(int count, int tag)
{
    return tds_not_primary(tag, (size_t)(unsigned)count * (size_t)(unsigned)tds.tc_size);
}
/* the sample countdown, last of the checks (tleft >= 1): 0 when this call
 * is the timed one, which the general entry makes (tleft back at 1) */
static inline __attribute__((always_inline)) int flat_untimed(void)
{
    if (__builtin_expect(--tds.tleft != 0, 1))
        return 1;
    tds.tleft = 1;
    return 0;
}
/* count_send without tds_worked: a single-threaded rank's idle notions see
 * its sends and receives by their counts (tds_progress.c, poll_run) */
static inline __attribute__((always_inline)) void flat_count(int dest, size_t ub)
{
    tds.sent_to[(unsigned)dest]++; /* 0 <= dest < size (checked): zero-extended in place, no register */
    tds.m.prim_sent++;
    tds.m.prim_sent_bytes += ub;
    tds.m.n_cat[TDR_CAT_SEND]++; /* what tds_tstop counts; the time is sampled on the general path */
}
/* header-free: the elements, not the bytes (count >= 0, of the cached
 * type: tds.tc_elems, tds_sent_bytes_fold) */
static inline __attribute__((always_inline)) void flat_count_send(int dest, int count)
{
    tds.core.sent++; /* td_primary_send's fast case: pb_static, no piggyback (tds_fast_select) */
    tds.sent_to[(unsigned)dest]++;
    tds.m.prim_sent++;
    tds.tc_elems += (unsigned)count;
    tds.m.n_cat[TDR_CAT_SEND]++;
}
/* a flat receive's primary of `bytes` user bytes, counted (td_primary_recv's
 * fast case: an active core with no on_recv, which the callers checked;
 * flat_recv_count wakes an inactive one between its counts) */
static inline __attribute__((always_inline)) void flat_probed_count(size_t bytes)
{
    tds.core.recvd++;
    tds.m.n_cat[TDR_CAT_RECV]++;
    tds.m.prim_recv++;
    tds.m.prim_recv_bytes += bytes;
}
/* CLS (flat_cls_Irecv's completions): a message a flat receive delivered
 * that is not primary (tds_not_primary, as the sender decided: the status's
 * tag and user bytes) is counted as ignored apart from the primaries' quick
 * case (ftest_ignored; the Testany/Testsome rest, tds_plain_done) */
static inline __attribute__((always_inline)) int flat_recv_ignored(int cls, const MPI_Status *st)
{
    return cls && tds_not_primary(tds_st_tag(st), tds_st_bytes(st));
}
/* ntag: TDSHIM_NOTIFY=tag:N header-free, whose notifications share an
 * envelope with the program's messages (tds.nenv_tag): a variant with
 * that check, the others without it */
/* FLAT_MISS: what a flat entry hands on when its checks fail. ENTRY_miss:
 * the other type cached (type_cache_swap, no call, so no frame) and the
 * flat entry again; else ENTRY_more (a function of its own: its loop in
 * ENTRY_miss cost the swap 7 instructions): a type the pair displaced
 * (type_cache_more, no call) and the flat entry again; else ENTRY_other
 * (FLAT_OTHER, or the entry's own function): another plain type taken
 * into the cache (tds_type_cache_set) and the flat entry again, or the
 * general entry. After a change the type is
 * the cached one, so the flat entry cannot come back here for it. */
#define FLAT_MISS(ENTRY, OTHER, PARAMS, ARGS)                                                                        \
    static int ENTRY PARAMS;                                                                                         \
    static int OTHER PARAMS;                                                                                         \
    static int ENTRY##_more PARAMS;                                                                                  \
    static int __attribute__((noinline)) ENTRY##_miss PARAMS                                                        \
    {                                                                                                             \
        if (datatype == tds.tc_prev && datatype != tds.tc_type) {                                                    \
            type_cache_swap();                                                                                       \
            return ENTRY ARGS;                                                                                       \
        }                                                                                                            \
        return ENTRY##_more ARGS;                                                                                    \
    }                                                                                                                \
    static int __attribute__((noinline)) ENTRY##_more PARAMS                                                        \
    {                                                                                                             \
        if (datatype != tds.tc_type && type_cache_more(datatype))                                                    \
            return ENTRY ARGS;                                                                                       \
        return OTHER ARGS;                                                                                           \
    }
#define FLAT_OTHER(NAME, ENTRY, PARAMS, ARGS)                                                                        \
    FLAT_MISS(ENTRY, ENTRY##_other, PARAMS, ARGS)                                                                    \
    static int __attribute__((noinline, cold)) ENTRY##_other PARAMS                                                 \
    {                                                                                                             \
        if (datatype != tds.tc_type && tds_type_cache_set(datatype))                                                 \
            return ENTRY ARGS;                                                                                       \
        return tds_wrap_##NAME ARGS;                                                                                 \
    }
/* FLAT_XSEND: a flat entry's send on a communicator that is neither
 * MPI_COMM_WORLD nor its copy: on tds.xcomm, the destination's world rank
 * (dest < xn: no other is translated, xn = 0 once it is freed) is what the
 * counts take (W), and the entry's checks and work follow as for
 * MPI_COMM_WORLD (a notification's envelope is on MPI_COMM_WORLD only: no
 * tag to check here); anything else is the general entry's. A miss goes to
 * the entry's own ENTRY_miss, whose flat entry comes back here. */
#define FLAT_XSEND(NAME, ENTRY, PARAMS, ARGS, BODY)                                                                 \
    static int __attribute__((noinline)) ENTRY##_x PARAMS                                                           \
    {                                                                                                             \
        if (__builtin_expect(comm != tds.xcomm || (unsigned)dest >= tds.xn, 0))                                      \
            return tds_wrap_##NAME ARGS;                                                                             \
        int w = tds.xmap[dest];                                                                                      \
        BODY                                                                                                         \
    }
/* a plain flat send to world rank W, from ENTRY (its miss: ENTRY_miss) */
#define FLAT_PLAIN_SEND(ENTRY, W, NTAG, CLS, CALL, ARGS)                                                             \
    if (!flat_send_ok(count, datatype, W, tag, NTAG, !CLS))                                                          \
        return ENTRY##_miss ARGS;                                                                                    \
    if (CLS && flat_send_ignored(count, tag)) {                                                                      \
        if (!flat_untimed())                                                                                         \
            return ENTRY##_miss ARGS;                                                                                \
        tds_count_ignored(TDR_CAT_SEND);                                                                             \
        return CALL ARGS;                                                                                            \
    }                                                                                                                \
    if ((CLS && !flat_core_fast()) || !flat_untimed())                                                              \
        return ENTRY##_miss ARGS;                                                                                    \
    flat_count_send(W, count);                                                                                       \
    return CALL ARGS;
#define FLAT_SENDS(SUFFIX, NTAG, CLS)                                                                                   \
    FLAT_OTHER(Send, flat_Send##SUFFIX,                                                                               \
              (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm),                 \
              (buf, count, datatype, dest, tag, comm))                                                               \
    FLAT_XSEND(Send, flat_Send##SUFFIX,                                                                               \
              (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm),                 \
              (buf, count, datatype, dest, tag, comm),                                                               \
              {FLAT_PLAIN_SEND(flat_Send##SUFFIX, w, 0, CLS, PMPI_Send, (buf, count, datatype, dest, tag, comm))})   \
    static int flat_Send##SUFFIX(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,               \
                                 MPI_Comm comm)                                                                      \
    {                                                                                                             \
        if (__builtin_expect(!tds_flat_comm(comm), 0))                                                               \
            return flat_Send##SUFFIX##_x(buf, count, datatype, dest, tag, comm);                                     \
        FLAT_PLAIN_SEND(flat_Send##SUFFIX, dest, NTAG, CLS, PMPI_Send, (buf, count, datatype, dest, tag, comm))      \
    }                                                                                                             \
    FLAT_OTHER(Isend, flat_Isend##SUFFIX,                                                                             \
              (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,                  \
               MPI_Request *request),                                                                                \
              (buf, count, datatype, dest, tag, comm, request))                                                      \
    FLAT_XSEND(Isend, flat_Isend##SUFFIX,                                                                             \
              (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,                  \
               MPI_Request *request),                                                                                \
              (buf, count, datatype, dest, tag, comm, request),                                                      \
              {FLAT_PLAIN_SEND(flat_Isend##SUFFIX, w, 0, CLS, PMPI_Isend,                                            \
                               (buf, count, datatype, dest, tag, comm, request))})                                   \
    static int flat_Isend##SUFFIX(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,              \
                                  MPI_Comm comm, MPI_Request *request)                                               \
    {                                                                                                             \
        if (__builtin_expect(!tds_flat_comm(comm), 0))                                                               \
            return flat_Isend##SUFFIX##_x(buf, count, datatype, dest, tag, comm, request);                           \
        FLAT_PLAIN_SEND(flat_Isend##SUFFIX, dest, NTAG, CLS, PMPI_Isend,                                             \
                        (buf, count, datatype, dest, tag, comm, request))                                            \
    }
FLAT_SENDS(, 0, 0)
FLAT_SENDS(_ntag, 1, 0)
FLAT_SENDS(_cls, 1, 1)

/* A flat receive was posted: its handle goes to the end of the ring
 * (tds_hset), inline in the entries, with its cell c (or NULL, TDS_OOS
 * header-free). What is not that common case comes here: MPI failed (the
 * cell back to the free list), the request table is not empty (a stale
 * entry may share the handle), or the ring is full. */
static int __attribute__((noinline, cold)) flat_post_failed(int rc, tds_cell *c)
{
    if (c && c != TDS_OOS) {
        c->next = tds.cells;
        tds.cells = c;
    }
    return rc;
}
/* MPI gave a new receive a handle that an entry of the table still has:
 * the entry is stale (MPI freed its request without the program's
 * MPI_Request_free: Open MPI 4.1 does so to a persistent receive whose
 * MPI_Wait reports an error, found by tests/diff). A live request of
 * ours never shares a handle with a receive, so the entry goes; left in
 * the table, it would be found first when the receive completes. */
static int __attribute__((noinline)) flat_post_rare(int rc, MPI_Request *request, tds_cell *c)
{
    if (rc != MPI_SUCCESS)
        return flat_post_failed(rc, c);
    if (tds_rq_lookup(*request)) /* one per failed wait: all stale */
        tds_rq_purge(*request);
    tds_hs_post(*request, c); /* a full ring goes into the slots first */
    return MPI_SUCCESS;
}

static int flat_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                      MPI_Request *request)
{
    if (__builtin_expect(!tds_flat_comm_rx(comm) || source == MPI_PROC_NULL || tds_inside, 0))
        return tds_wrap_Irecv(buf, count, datatype, source, tag, comm, request);
    int rc = PMPI_Irecv(buf, count, datatype, source, tag, comm, request);
    unsigned rn = tds.hs.rn;
    if (__builtin_expect(rc != MPI_SUCCESS || tds.rq_count != 0 || rn == TDS_HS_RING, 0))
        return flat_post_rare(rc, request, NULL); /* header-free: no cell */
    tds.hs.rk[rn] = *request; /* tds_hs_post, the ring not full; header-free: no cell (rv stays NULL) */
    tds.hs.rn = rn + 1;
    return MPI_SUCCESS;
}
/* Header-free with messages to classify (TDSHIM_IGNORE_*: tds_fast_select's
 * cls; the work-stealing recipe): a receive that could deliver work
 * (tds_poll_scope: not on an ignored tag, and under TDSHIM_NOTIFY=tag:N on
 * MPI_COMM_WORLD with that tag or MPI_ANY_TAG) is a flat one, and so in
 * scope as every flat receive is (PLAIN: test_missed, tds_hs_promote); one
 * out of scope keeps its tag in an entry of the general path, so that a
 * busy rank's poll of it is never taken for an idle one. Each message a
 * flat receive delivers is classified as it completes (flat_recv_ignored,
 * tds_plain_done): on an ignored tag (MPI_ANY_TAG), empty or short, it is
 * the general path's, which counts it as ignored, as the sender did. */
static int flat_cls_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                          MPI_Request *request)
{
    if (__builtin_expect(!tds_flat_comm_rx(comm) || source == MPI_PROC_NULL || tds_inside, 0))
        return tds_wrap_Irecv(buf, count, datatype, source, tag, comm, request);
    /* the value kept in tds across MPI's call (nothing in it enters
     * tdshim), not in a register to save */
    tds.keep_v = tds_poll_scope(tag, comm) ? NULL : TDS_OOS;
    int rc = PMPI_Irecv(buf, count, datatype, source, tag, comm, request);
    unsigned rn = tds.hs.rn;
    if (__builtin_expect(rc != MPI_SUCCESS || tds.rq_count != 0 || rn == TDS_HS_RING, 0))
        return flat_post_rare(rc, request, tds.keep_v);
    tds.hs.rk[rn] = *request; /* tds_hs_post, the ring not full */
    tds.hs.rv[rn] = tds.keep_v;
    tds.hs.rn = rn + 1;
    return MPI_SUCCESS;
}

/* the ring's entry j taken, found after MPI's call (tds_hs_take_near's):
 * a poll that reposts the receive done, in its place in the array, takes
 * the ring's last when its messages had all come (no moves: inline); when
 * they come one by one as it polls, the oldest receive takes the next one,
 * the ring's first: the few after it move down here, in a loop (two calls
 * of memmove, which gcc makes of it otherwise, cost 60 instructions for 3
 * entries) */
static void __attribute__((noinline, optimize("no-tree-loop-distribute-patterns"))) hs_take_mid(unsigned j)
{
    unsigned rn = tds.hs.rn;
    for (unsigned i = j + 1; i < rn; i++) {
        tds.hs.rk[i - 1] = tds.hs.rk[i];
        tds.hs.rv[i - 1] = tds.hs.rv[i];
    }
    tds.hs.rn = rn - 1;
}
static inline __attribute__((always_inline)) void hs_take_at(unsigned j)
{
    unsigned rn = tds.hs.rn;
    if (__builtin_expect(j + 1 == rn, 1))
        tds.hs.rn = rn - 1;
    else
        hs_take_mid(j);
}
/* tds_hs_near with the ring's last first: a receive reposted in the
 * place of the one done is the next one done (MPI_Testany reports the
 * first index done) */
static inline __attribute__((always_inline)) long hs_near_last(MPI_Request h)
{
    unsigned rn = tds.hs.rn;
    if (__builtin_expect(rn != 0 && tds.hs.rk[rn - 1] == h, 1))
        return (long)rn - 1;
    return tds_hs_near(h);
}
/* The flat MPI_Test (issue 38: MPI_Irecv + MPI_Test until done, how
 * asynchronous programs take messages one at a time; gen_wrappers.py kind
 * `fast`, chosen by tds_fast_select with the flat header-free receives,
 * outside spin): a test of a flat receive on a rank with nothing held.
 * The ring's last (a loop's receive, posted and tested until done) takes
 * the inline path; one of the TDS_HS_NEAR before it (a standing receive
 * tested between the posts of others: work_steal's for steal requests,
 * posted before its steal's reply and the notification's receive) takes
 * flat_test_mid's, whose empty and ignored cases are the same and whose
 * primary done is ftest_rest's (when only the last was taken, 2,924 of
 * rank 0's 8,584 busy tests in 200 phases of work_steal took the general
 * entry, about 400 instructions of tdshim each; icount.sh busynear). The
 * place is kept in tds.ftest.j. Completed as a message of the program's (not the
 * notification's envelope, not cancelled, not the timer's sampled call, an
 * active core: tds_plain_done's quick case, whose core has no on_recv),
 * it is counted and the poll with it, all stores after one call into MPI
 * and no other: no re-entry guard (the flat entries' argument, above).
 * What it needs after the call waits in tds.ftest, not in registers it
 * would save. Anything else after MPI's call is test_near's work under the
 * guard (ftest_rest: the empty poll is the idle notion's turn, which makes
 * calls); any other request the general entry's. MEAS: measure mode keeps
 * the tag. HDR: a flat receive with a header (flat_hdr_Irecv, its cell in
 * the ring), all of whose work after the call is ftest_rest's (the
 * header's unwrapping calls the algorithm): the flat entry saves the
 * wrapper's and tds_body_Test's layers. */
/* ftest_rest's request done: taken from its place in the ring and finished (a
 * frame of its own: the empty poll's path keeps none of its registers);
 * its value (TDS_OOS: out of scope) */
static tds_cell *__attribute__((noinline)) ftest_take(int rc)
{
    const struct tds_ftest *a = &tds.ftest;
    tds_cell *fc = NULL;
    if (tds_hs_take_near(a->h, (long)a->j, &fc)) {
        if (__builtin_expect(rc != MPI_SUCCESS, 0))
            tds_flat_done_rc(rc, fc, a->st);
        else
            tds_flat_done(fc, a->st);
        tds_found_tag(a->st);
    }
    return fc;
}
static int __attribute__((noinline)) ftest_rest(int rc)
{
    tds_inside = 1;
    uint64_t m0 = tds_found_mark();
    /* the receive's value: taken, or nothing done, still at its place (flat_test's check) */
    tds_cell *fc = *tds.ftest.flag ? ftest_take(rc) : tds.hs.rv[tds.ftest.j];
    rc = tds_idle_poll_rc(1, fc != TDS_OOS, tds_found_mark() != m0, rc);
    tds_inside = 0;
    return rc;
}
/* HDR's test after MPI's call: a primary with our header done at the
 * ring's end (its last flat receive, nothing entered tdshim since
 * flat_test's check) is finished here as flat_hdr_Recv finishes its own,
 * outside the guard (the header's unwrapping calls the algorithm, whose
 * work is the core's and PMPI's: it enters no wrapper), the found poll two
 * stores; any other message of that receive is ftest_hdr_slow's, anything
 * else ftest_rest's, under the guard (issue 38: the guard, the found
 * marks, the ring's search and a frame saved on a loop's receive) */
static int __attribute__((noinline)) ftest_hdr_slow(tds_cell *fc, MPI_Status *st, int rc)
{
    tds_inside = 1;
    uint64_t m0 = tds_found_mark();
    tds_cell_slow(fc->wire, fc->buf, fc->ub, fc->tsize, st);
    fc->next = tds.cells;
    tds.cells = fc;
    tds_found_tag(st);
    rc = tds_idle_poll_rc(1, 1, tds_found_mark() != m0, rc);
    tds_inside = 0;
    return rc;
}
/* cell fc, taken out of the ring, done into st (MPI's call returned rc,
 * MPI_SUCCESS): the poll's end */
static inline __attribute__((always_inline)) int ftest_hdr_cell(tds_cell *fc, MPI_Status *st, int rc)
{
    if (__builtin_expect(!tds_wire_quick(fc->wire, fc->ub, fc->tsize, st), 0))
        return ftest_hdr_slow(fc, st, rc);
    fc->next = tds.cells; /* free before it is read: nothing takes a cell meanwhile */
    tds.cells = fc;
    tds_found_tag(st);
    tds_wire_take(fc->wire, fc->buf, st);
    return tds_idle_poll_rc(1, 1, 1, rc);
}
/* MID: the receive stood before the ring's last (flat_test_mid); a
 * primary done there is ftest_rest's */
static inline __attribute__((always_inline)) int ftest_hdr(int rc, int mid)
{
    const struct tds_ftest *a = &tds.ftest;
    unsigned rn = tds.hs.rn;
    tds_cell *fc = tds.hs.rv[rn - 1];
    if (__builtin_expect(mid || !*a->flag || rc != MPI_SUCCESS || fc == NULL, 0))
        return ftest_rest(rc);
    tds.hs.rn = rn - 1; /* tds_hs_take_near's, the ring's last */
    return ftest_hdr_cell(fc, a->st, rc);
}
/* An empty test (rc: MPI's) that judges nothing: an active rank's, where
 * the notion makes no rank passive at an empty MPI_Test* (tds.quiet_test:
 * a notification configured, TDSHIM_IDLE neither test nor spin). Under
 * them tds_empty_poll only counts it: idle_poll_notion polls the control
 * channel for a passive rank only, and poll_run's reset of the run of
 * empty probes is left to the next probe, which sees the same counts.
 * Three increments instead of ftest_rest's guard, found mark and
 * tds_empty_poll (issue 38; hpcc's MPIRandomAccess tests its receive once
 * per update it generates: 117 instructions of tdshim a test before, its
 * GUPs 0.61x native with a notification configured). */
static inline __attribute__((always_inline)) int flat_quiet_empty(int rc)
{
    if (__builtin_expect(rc != MPI_SUCCESS || !tds.quiet_test || !tds.core.active, 0))
        return 0;
    tds.m.polls++;
    tds.m.empty_polls++;
    tds.m.empty_tests++;
    return 1;
}
/* An empty MPI_Testany or MPI_Testsome where the set's scope is not asked
 * (tds.quiet_test: test_missed's recv = 0, an empty poll out of scope)
 * and tds_unscoped_quick's case holds (an active rank not due to probe for
 * control messages, nothing held): what the general entries' work after
 * the call (test_missed, tds_idle_poll) comes to, without their guard and
 * found mark. Else that work as before, under the guard. */
static inline __attribute__((always_inline)) int flat_quiet_missed(void)
{
    /* tds_unscoped_quick(1, 0) where tds.quiet_test holds: no candidate
     * stands outside measure mode, the entry found nothing held (nothing
     * in MPI's call enters tdshim), and its unscoped count adds 0 there */
    if (!tds.quiet_test || !tds.core.active || tds_t.unscoped_run >= TDS_UNSCOPED_CTL - 1)
        return 0;
    tds_t.unscoped_run++;
    tds.m.empty_polls++;
    tds.m.polls++;
    return 1;
}
/* CLS: an empty test of a receive out of scope (TDS_OOS: a busy rank's
 * standing receive for steal requests, its tag ignored) on an active rank
 * with nothing to do (tds_unscoped_quick): counted, as the general entry's
 * test_busy counts it, without ftest_rest's guard */
static inline __attribute__((always_inline)) int flat_oos_empty(int rc)
{
    if (rc != MPI_SUCCESS || tds.hs.rv[tds.ftest.j] != TDS_OOS || !tds_unscoped_quick(1, 0))
        return 0;
    tds.m.polls++;
    return 1;
}
/* CLS: the test took a message that is not primary (a steal request, a
 * "no work" reply), of the program's and not the timed call (flat_test's
 * checks): counted as ignored (tds_plain_done's case), the receive taken
 * from the ring's end, and the poll an empty one, in or out of scope by
 * the receive's value: out of it, tds_unscoped_quick's count where it
 * holds (test_busy's), else the idle notion's turn under the guard, as
 * ftest_rest's (tests/mpi/busymemo.sh, mode test) */
static int __attribute__((noinline)) ftest_ignored(int rc)
{
    unsigned j = tds.ftest.j;
    int recv = tds.hs.rv[j] != TDS_OOS;
    hs_take_at(j);
    tds.tleft--;
    tds_count_ignored(TDR_CAT_RECV);
    tds.m.polls++;
    if (!recv && tds_unscoped_quick(1, 0))
        return rc;
    tds_inside = 1;
    rc = tds_empty_poll_rc(1, recv, rc);
    tds_inside = 0;
    return rc;
}
/* the test of the flat receive at the ring's place j: its last, or
 * (MID) one before it */
static inline __attribute__((always_inline)) int flat_test_at(MPI_Request *request, int *flag, MPI_Status *status,
                                                              unsigned j, int mid, int meas, int hdr, int cls)
{
    struct tds_ftest *a = &tds.ftest;
    a->j = j;
    a->flag = flag;
    a->st = status != MPI_STATUS_IGNORE ? status : &tds_t.st_one;
    a->h = *request;
    int rc = PMPI_Test(request, flag, a->st);
    if (!meas && !*a->flag && flat_quiet_empty(rc)) /* measure mode: never quiet */
        return rc;
    if (cls && !*a->flag && flat_oos_empty(rc))
        return rc;
    if (hdr)
        return ftest_hdr(rc, mid);
    MPI_Status *st = a->st;
    const td_ctx *c = &tds.core;
    if (__builtin_expect(!*a->flag || tds_st_tag(st) == tds.nenv_tag || tds_st_cancelled(st) || tds.tleft <= 1, 0))
        return ftest_rest(rc);
    if (flat_recv_ignored(cls, st))
        return rc == MPI_SUCCESS ? ftest_ignored(rc) : ftest_rest(rc);
    /* a primary done before the ring's last (rare: a standing receive of
     * work tested between others' posts) takes ftest_rest's way */
    if (__builtin_expect(mid || !(c->active & c->dirty), 0))
        return ftest_rest(rc);
    tds.hs.rn--; /* tds_hs_take_near's, the ring's last (nothing entered tdshim since the check) */
    tds.tleft--;
    flat_probed_count(tds_st_bytes(st));
    if (meas)
        tds.found_tag = tds_st_tag(st);
    return tds_idle_poll_rc(1, 1, 1, rc);
}
/* a receive among the ring's last TDS_HS_NEAR but not its last: out of
 * line (one function a variant, below), so that the test of the last
 * keeps its path */
static inline __attribute__((always_inline)) int flat_test_mid(MPI_Request *request, int *flag, MPI_Status *status,
                                                               int meas, int hdr, int cls)
{
    long j = tds_hs_near(*request);
    if (j < 0)
        return tds_wrap_Test(request, flag, status);
    return flat_test_at(request, flag, status, (unsigned)j, 1, meas, hdr, cls);
}
static int __attribute__((noinline)) flat_mid_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    return flat_test_mid(request, flag, status, 0, 0, 0);
}
static int __attribute__((noinline)) flat_meas_mid_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    return flat_test_mid(request, flag, status, 1, 0, 0);
}
static int __attribute__((noinline)) flat_hdr_mid_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    return flat_test_mid(request, flag, status, 0, 1, 0);
}
static int __attribute__((noinline)) flat_cls_mid_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    return flat_test_mid(request, flag, status, 0, 0, 1);
}
static inline __attribute__((always_inline)) int flat_test(MPI_Request *request, int *flag, MPI_Status *status,
                                                           int meas, int hdr, int cls)
{
    unsigned rn = tds.hs.rn;
    if (__builtin_expect(tds_inside || tds.nheld != 0 || rn == 0, 0))
        return tds_wrap_Test(request, flag, status);
    if (__builtin_expect(tds.hs.rk[rn - 1] != *request, 0))
        return cls    ? flat_cls_mid_Test(request, flag, status)
               : hdr  ? flat_hdr_mid_Test(request, flag, status)
               : meas ? flat_meas_mid_Test(request, flag, status)
                      : flat_mid_Test(request, flag, status);
    return flat_test_at(request, flag, status, rn - 1, 0, meas, hdr, cls);
}
static int flat_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    return flat_test(request, flag, status, 0, 0, 0);
}
static int flat_meas_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    return flat_test(request, flag, status, 1, 0, 0);
}
static int flat_hdr_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    return flat_test(request, flag, status, 0, 1, 0);
}
static int flat_cls_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    return flat_test(request, flag, status, 0, 0, 1);
}

/* The flat MPI_Testany and MPI_Testsome (issue 38: a few standing
 * receives polled, the ones done reposted; chosen with the flat
 * MPI_Test): at most TDS_FTEST_N requests, on a rank with nothing held and
 * flat receives in the ring. Their handles are saved before MPI's call
 * (MPI sets those it frees to MPI_REQUEST_NULL; nothing in the call
 * creates a request, so a handle cannot be reused in between). A request
 * done is ours if its handle is in the ring: the receives counted in
 * stores as the flat MPI_Test's, the ring's entry taken where it is
 * (tds_hs_near: a reposted receive is near the end). Anything else after
 * MPI's call (nothing done, a status to look at, the sampled call, an
 * inactive core, a request not in the ring's last TDS_HS_NEAR) is the
 * general entry's work (tds_ftestany_rest, tds_ftestsome_rest); a header
 * to unwrap, which calls the algorithm, is done under the guard as
 * MPI_Test's (ftestany_hdr, ftestsome_hdr). MPI_Testany completes one request, so a request of
 * the general path in the array is never taken for a flat one; for
 * MPI_Testsome the table of general requests must be empty, so that
 * every handle done that the ring lacks is none of tdshim's. */
static inline __attribute__((always_inline)) void ftest_save(int n, MPI_Request *reqs)
{
    struct tds_ftest *a = &tds.ftest;
    MPI_Request *hv = a->hv;
    switch (n) { /* unrolled (1 <= n <= TDS_FTEST_N): a loop and its setup cost 4 instructions a handle */
    case 8:
        hv[7] = reqs[7]; /* fall through */
    case 7:
        hv[6] = reqs[6]; /* fall through */
    case 6:
        hv[5] = reqs[5]; /* fall through */
    case 5:
        hv[4] = reqs[4]; /* fall through */
    case 4:
        hv[3] = reqs[3]; /* fall through */
    case 3:
        hv[2] = reqs[2]; /* fall through */
    case 2:
        hv[1] = reqs[1]; /* fall through */
    default:
        hv[0] = reqs[0];
    }
    a->n = n;
    a->reqs = reqs;
}
/* a receive done with a header at the ring's place j, finished under the
 * guard (its unwrapping calls the algorithm) as ftest_rest's */
static inline __attribute__((always_inline)) void hdr_take_done(long j, int rc, MPI_Status *st)
{
    tds_cell *fc = tds.hs.rv[j];
    hs_take_at((unsigned)j);
    if (__builtin_expect(rc != MPI_SUCCESS, 0))
        tds_flat_done_rc(rc, fc, st);
    else
        tds_flat_done(fc, st);
}
/* the poll's end under the guard: found (m0: the mark before) or not */
static inline __attribute__((always_inline)) int ftest_polled(uint64_t m0, int rc)
{
    rc = tds_found_mark() != m0 ? tds_idle_poll_rc(1, 1, 1, rc) : tds_ftest_missed(rc);
    tds_inside = 0;
    return rc;
}
/* flat_testany with a header, after MPI's call: the receive done at the
 * ring's end finished here, anything else the general entry's work */
static int __attribute__((noinline)) ftestany_hdr(int rc)
{
    const struct tds_ftest *a = &tds.ftest;
    long j;
    if (!*a->flag || *a->index == MPI_UNDEFINED || rc != MPI_SUCCESS || (j = hs_near_last(a->hv[*a->index])) < 0)
        return tds_ftestany_rest(rc); /* an error: others may be lost (tds_complete.c, lost_others) */
    tds_cell *fc = tds.hs.rv[j];
    if (__builtin_expect(fc != NULL, 1)) { /* ftest_hdr's case */
        hs_take_at((unsigned)j);
        return ftest_hdr_cell(fc, a->st, rc);
    }
    tds_inside = 1;
    uint64_t m0 = tds_found_mark();
    hdr_take_done(j, rc, a->st);
    tds_found_tag(a->st);
    return ftest_polled(m0, rc);
}
/* flat_testsome with a header, after MPI's call: the receives done near
 * the ring's end (last first, as flat_testsome's) finished here, the
 * others none of tdshim's (its table is empty); an error (MPI_ERR_IN_STATUS)
 * or nothing done the general entry's work */
static int __attribute__((noinline)) ftestsome_hdr(int rc)
{
    const struct tds_ftest *a = &tds.ftest;
    int n = *a->outcount;
    if (n == 0 || n == MPI_UNDEFINED || rc != MPI_SUCCESS)
        return tds_ftestsome_rest(rc);
    tds_inside = 1;
    uint64_t m0 = tds_found_mark();
    for (int k = n; k-- > 0;) {
        MPI_Request h = a->hv[a->index[k]];
        long j = hs_near_last(h);
        tds_cell *fc;
        if (j >= 0)
            hdr_take_done(j, rc, &a->st[k]);
        else if (tds_hs_take(h, &fc))
            tds_flat_done(fc, &a->st[k]);
    }
    tds_found_tag(&a->st[n - 1]);
    return ftest_polled(m0, rc);
}
#if defined(OPEN_MPI)
/* A passive rank's MPI_Testany (an idle loop's): its empty poll then tests
 * the standing control receive (idle_poll_notion: tds_set_passive or
 * tds_poll_control), a second call into MPI whose progress finds nothing
 * the first did not (205 of MPI's instructions an idle poll, icount.sh
 * idletest). Here the control receive is tested in the program's call, last
 * in a copy of its array: a request of the program's done is reported as
 * MPI reported it (the first done: its handle after the call copied back,
 * its status the program's); the control receive done is reported as
 * nothing done, as when MPI's progress had not yet found the program's
 * (which the program cannot tell apart: it tests again), and its message is taken at the poll's passive turn (tds_ctl_tested).
 * MPI's array is the handles saved before the call (tds.ftest.hv, one place
 * longer for the control receive's), whose entry done is swapped with the
 * program's afterwards: the program's array gets MPI's handle after the
 * call, hv keeps the one before it. Only where a request of the array is
 * the ring's last flat receive (pending, so active; an idle loop polls the
 * receives it posted): a call whose requests are all inactive must report
 * flag 1 and MPI_UNDEFINED, which the control receive would hide. The
 * status MPI writes is tdshim's (st: the program's, or tds_t.st_one),
 * copied to st for a request of the program's. */
static int __attribute__((noinline)) testany_ctl(int count, MPI_Request reqs[], int *index, int *flag,
                                                  MPI_Status *st)
{
    MPI_Request *v = tds.ftest.hv, last = tds.hs.rk[tds.hs.rn - 1]; /* rn > 0: flat_testany's check */
    int pending = 0;
    for (int i = 0; i < count; i++)
        pending |= v[i] == last;
    if (!pending || (v[count] = tds_ctl_handle()) == MPI_REQUEST_NULL)
        return PMPI_Testany(count, reqs, index, flag, st);
    MPI_Status s;
    int rc = PMPI_Testany(count + 1, v, index, flag, &s);
    if (!*flag || *index == count) {
        int done = *flag; /* the control receive's error, if any, is tds.ctl's (fatal) */
        tds_ctl_tested(done, v[count], &s);
        *flag = 0;
        *index = MPI_UNDEFINED;
        return done ? MPI_SUCCESS : rc;
    }
    if (*index != MPI_UNDEFINED) {
        MPI_Request after = v[*index];
        v[*index] = reqs[*index];
        reqs[*index] = after;
        *st = s;
    }
    return rc;
}
#endif
static inline __attribute__((always_inline)) int flat_testany(int count, MPI_Request reqs[], int *index, int *flag,
                                                              MPI_Status *status, int meas, int hdr, int cls)
{
    if (__builtin_expect(tds_inside || tds.nheld != 0 || tds.hs.rn == 0 || (unsigned)(count - 1) >= TDS_FTEST_N, 0))
        return tds_wrap_Testany(count, reqs, index, flag, status);
    struct tds_ftest *a = &tds.ftest;
    ftest_save(count, reqs);
    a->flag = flag;
    a->index = index;
    MPI_Status *st = status;
    if (st == MPI_STATUS_IGNORE) { /* as the general entry's seed: no stale error for its work */
        st = &tds_t.st_one;
        tds_st_set_error(st, MPI_SUCCESS);
    }
    a->st = st;
#if defined(OPEN_MPI)
    int rc = __builtin_expect(!tds.core.active, 0) ? testany_ctl(count, reqs, index, flag, st)
                                                   : PMPI_Testany(count, reqs, index, flag, st);
#else
    int rc = PMPI_Testany(count, reqs, index, flag, st);
#endif
    if (!meas && !*flag && flat_quiet_missed())
        return rc;
    if (hdr)
        return ftestany_hdr(rc);
    st = a->st;
    const td_ctx *c = &tds.core;
    long j;
    if (__builtin_expect(!*a->flag || *a->index == MPI_UNDEFINED || rc != MPI_SUCCESS || tds_st_tag(st) == tds.nenv_tag ||
                             tds_st_cancelled(st) || tds.tleft <= 1 || !(c->active & c->dirty) ||
                             flat_recv_ignored(cls, st) || (j = hs_near_last(a->hv[*a->index])) < 0,
                         0))
        return tds_ftestany_rest(rc);
    hs_take_at((unsigned)j);
    tds.tleft--;
    flat_probed_count(tds_st_bytes(st));
    if (meas)
        tds.found_tag = tds_st_tag(st);
    return tds_idle_poll_rc(1, 1, 1, rc);
}
static int flat_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    return flat_testany(count, reqs, index, flag, status, 0, 0, 0);
}
static int flat_meas_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    return flat_testany(count, reqs, index, flag, status, 1, 0, 0);
}
static int flat_hdr_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    return flat_testany(count, reqs, index, flag, status, 0, 1, 0);
}
static int flat_cls_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    return flat_testany(count, reqs, index, flag, status, 0, 0, 1);
}
static inline __attribute__((always_inline)) int flat_testsome(int incount, MPI_Request reqs[], int *outcount,
                                                               int indices[], MPI_Status statuses[], int meas,
                                                               int hdr, int cls)
{
    /* the scratch statuses hold incount (tds_ensure_rq_scratch: the general entry grows them) */
    if (__builtin_expect(tds_inside || tds.nheld != 0 || tds.hs.rn == 0 || tds.rq_count != 0 ||
                             (unsigned)(incount - 1) >= TDS_FTEST_N || incount > tds_t.rq_found_cap,
                         0))
        return tds_wrap_Testsome(incount, reqs, outcount, indices, statuses);
    struct tds_ftest *a = &tds.ftest;
    ftest_save(incount, reqs);
    a->outcount = outcount;
    a->index = indices;
    a->st = statuses != MPI_STATUSES_IGNORE ? statuses : tds_t.st_scratch;
    int rc = PMPI_Testsome(incount, reqs, outcount, indices, a->st);
    if (!meas && *outcount == 0 && flat_quiet_missed())
        return rc;
    if (hdr)
        return ftestsome_hdr(rc);
    const td_ctx *c = &tds.core;
    int n = *a->outcount;
    if (__builtin_expect(n == 0 || n == MPI_UNDEFINED || tds.tleft <= (unsigned)n || !(c->active & c->dirty), 0))
        return tds_ftestsome_rest(rc);
    MPI_Status *st = a->st;
    for (int k = 0; k < n; k++)
        if (__builtin_expect(tds_st_tag(&st[k]) == tds.nenv_tag || tds_st_cancelled(&st[k]) || flat_recv_ignored(cls, &st[k]),
                             0))
            return tds_ftestsome_rest(rc);
    /* every status ordinary: each request done taken from the ring, or
     * none of tdshim's (a send of the program's, say) */
    int found = 0;
    tds_cell *fc;
    for (int k = n; k-- > 0;) { /* the last first: reposted in array order, each is then the ring's last */
        MPI_Request h = a->hv[a->index[k]];
        long j = hs_near_last(h);
        if (__builtin_expect(j >= 0, 1))
            hs_take_at((unsigned)j);
        else if (!tds_hs_take(h, &fc))
            continue;
        found++;
        tds.tleft--;
        flat_probed_count(tds_st_bytes(&st[k]));
    }
    if (meas)
        tds.found_tag = tds_st_tag(&st[n - 1]);
    if (__builtin_expect(!found, 0)) /* only others' requests done: an empty poll, the general entry's */
        return tds_ftestsome_rest(rc);
    return tds_idle_poll_rc(1, 1, 1, rc);
}
static int flat_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
    return flat_testsome(incount, reqs, outcount, indices, statuses, 0, 0, 0);
}
static int flat_meas_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
    return flat_testsome(incount, reqs, outcount, indices, statuses, 1, 0, 0);
}
static int flat_hdr_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
    return flat_testsome(incount, reqs, outcount, indices, statuses, 0, 1, 0);
}
static int flat_cls_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
    return flat_testsome(incount, reqs, outcount, indices, statuses, 0, 0, 1);
}

/* a flat blocking receive whose message had not arrived: wait as
 * tds_body_Recv does (wait_recv: passive while waiting, the protocol kept
 * going, TDSHIM_NOTIFY=exit may cancel it); wire NULL: header-free. A
 * matched message's (MPI_Mrecv: the message is there, its data coming)
 * as tds_body_Mrecv's: not passive, passive 0 */
static int __attribute__((noinline)) flat_recv_wait(MPI_Request *r, MPI_Status *st, const uint8_t *wire, void *buf,
                                                    size_t ub, int passive)
{
    tds_inside = 1;
    int done = 0, rc;
    tds_wait w = tds_wait_begin(passive);
    tds_t.brq_wait = r;
    while ((rc = PMPI_Test(r, &done, st)) == MPI_SUCCESS && !done)
        tds_wait_step(&w);
    tds_t.brq_wait = NULL;
    if (done && wire) {
        tds_wire_done_rc(rc, wire, buf, ub, tds.tc_size, st); /* rc may be MPI_SUCCESS: a wait, no hot path */
    } else if (done) {
        tds_plain_done(st);
    }
    tds_inside = 0;
    return rc;
}

/* tds_plain_done for a blocking receive whose message was there at once:
 * nothing can have cancelled it (the program holds no request; only a
 * wait, flat_recv_wait, lets TDSHIM_NOTIFY=exit cancel one), the core has
 * no on_recv (tds_fast_select), and the notification's envelope is looked
 * at only where it can be a program's message (ntag) */
static void __attribute__((noinline, cold)) flat_recv_wake(void)
{
    td_recv_activity(&tds.core);
    if (tds.core.error != 0)
        tds_core_failed();
}
static inline __attribute__((always_inline)) void flat_recv_count(MPI_Status *st, int ntag)
{
    if (__builtin_expect((ntag && tds_st_tag(st) == tds.nenv_tag) || !flat_untimed(), 0)) {
        tds_plain_slow(st); /* the timed call (tleft left at 1), or the envelope */
        return;
    }
    tds.core.recvd++; /* flat_probed_count's, the wake between (an inactive core) */
    if (__builtin_expect(!(tds.core.active & tds.core.dirty), 0))
        flat_recv_wake();
    tds.m.n_cat[TDR_CAT_RECV]++;
    tds.m.prim_recv++;
    tds.m.prim_recv_bytes += tds_st_bytes(st);
}
/* the rest of a flat blocking receive once MPI's call returned rc: the
 * message taken (done: counted, header-free, wire NULL, or unwrapped,
 * tds_wire_done) or waited for on request r (flat_recv_wait), and the
 * status out; passive: a receive waits as passive, a matched one not */
static inline __attribute__((always_inline)) int flat_recv_took(int rc, int done, MPI_Request *r, MPI_Status *st,
                                                                MPI_Status *status, uint8_t *wire, void *buf,
                                                                size_t ub, int ntag, int passive)
{
    if (__builtin_expect(done, 1)) {
        if (wire) {
            if (__builtin_expect(rc != MPI_SUCCESS, 0)) /* a truncated message with nothing written (lost_header) */
                tds_wire_done_rc(rc, wire, buf, ub, tds.tc_size, st);
            else
                tds_wire_done(wire, buf, ub, tds.tc_size, st);
        } else {
            flat_recv_count(st, ntag);
        }
    } else if (rc == MPI_SUCCESS) {
        rc = flat_recv_wait(r, st, wire, buf, ub, passive);
    }
    tds_status_out(status, st);
    if (wire) /* with a header: the general entries' check (an on_recv took a prepaid primary) */
        tds_after_body();
    return rc;
}
/* ...once MPI took it as request r (rc): done at once (the common case) or
 * waited for */
static inline __attribute__((always_inline)) int flat_recv_tail(int rc, MPI_Request *r, MPI_Status *st,
                                                                MPI_Status *status, uint8_t *wire, void *buf,
                                                                size_t ub, int ntag, int passive)
{
    if (__builtin_expect(rc != MPI_SUCCESS, 0))
        return rc;
    int done = 0;
    rc = PMPI_Test(r, &done, st);
    return flat_recv_took(rc, done, r, st, status, wire, buf, ub, ntag, passive);
}
/* header-free, MPI's blocking receive returned rc into st: counted when
 * it took the message */
static inline __attribute__((always_inline)) int flat_recv_own(int rc, MPI_Status *st, int ntag)
{
    if (tds_recv_taken(rc))
        flat_recv_count(st, ntag);
    return rc;
}
/* ...once MPI's blocking receive returned rc */
static inline __attribute__((always_inline)) int flat_recv_done(int rc, MPI_Status *st, MPI_Status *status,
                                                                uint8_t *wire, void *buf, size_t ub, int ntag)
{
    return flat_recv_took(rc, tds_recv_taken(rc), NULL, st, status, wire, buf, ub, ntag, 1);
}
static inline __attribute__((always_inline)) int flat_recv_probed(void *rbuf, int rcount, MPI_Datatype rtype,
                                                                  int source, int tag, MPI_Comm comm,
                                                                  MPI_Status *st, MPI_Status *status,
                                                                  uint8_t *wire, void *buf, size_t ub, int ntag)
{
    return flat_recv_done(PMPI_Recv(rbuf, rcount, rtype, source, tag, comm, st), st, status, wire, buf, ub, ntag);
}
/* The receive of the message the last found probe saw, by its own envelope
 * (issue 38: MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG) and an MPI_Recv of
 * the status's source and tag, how programs take messages one at a time):
 * MPI guarantees that such a receive takes that message (MPI-4.0 §3.8.1),
 * so it is counted before MPI's blocking receive, whose call is then a
 * tail call: no frame, no status of tdshim's. The probe kept the bytes the
 * program sees; the call cannot fail where they fit the buffer of the
 * cached type (no truncation) and the buffer is no null pointer
 * (flat_probed_fits). Its checks are flat_recv_count's, the timed call and
 * an inactive core left to flat_Recv_probed. */
static inline __attribute__((always_inline)) int flat_probed_fits(const void *buf, int count, MPI_Datatype datatype,
                                                                  size_t bytes)
{
    return __builtin_expect(datatype == tds.tc_type && count >= 0 && buf != NULL &&
                                (uint64_t)(uint32_t)count * (uint64_t)(uint32_t)tds.tc_size >= bytes &&
                                (tds.core.active & tds.core.dirty) && flat_untimed(),
                            1);
}
/* flat_probed_fits for the probed envelope itself, inline in flat_Recv,
 * which keeps no frame: a count of the cached type at least the bytes the
 * probe saw (a type's size is at least 1: the count's product is then
 * enough too) needs no multiplication, and no register more than the
 * tail call's arguments leave; a count between the two (the elements of a
 * wider type: MPI_Get_count's) takes flat_Recv_exact_wide's frame (issue
 * 38: Iprobe + Recv 93 -> 84 instructions of libtdshim a message). A
 * macro, not a function: the bytes are read where they are compared (an
 * inline function's argument read first took a register that the check
 * was to leave free, and flat_Recv had a frame again). */
#define FLAT_PROBED_QUICK(buf, count, datatype, bytes)                                                               \
    __builtin_expect((datatype) == tds.tc_type && (count) >= 0 && (size_t)(unsigned)(count) >= (bytes) &&            \
                         (buf) != NULL,                                                                              \
                     1)
static inline __attribute__((always_inline)) int flat_probed_quick(const void *buf, int count, MPI_Datatype datatype)
{
    return FLAT_PROBED_QUICK(buf, count, datatype, tds_probed_peek(bytes));
}
/* the receive of a probed message by a wider envelope (wildcards: MPI may
 * give another message that matches), or one flat_probed_fits leaves, in
 * a frame of its own, into the program's status as natively (MPI's own
 * receive: nothing to seed or copy out); a receive that no probe preceded
 * makes a request and tests it (flat_Recv_irecv, in a frame of its own so
 * that flat_Recv keeps none) */
#define FLAT_RECV(SUFFIX, NTAG)                                                                                      \
    static int __attribute__((noinline)) flat_Recv_probed##SUFFIX(void *buf, int count, MPI_Datatype datatype,      \
                                                                  int source, int tag, MPI_Comm comm,              \
                                                                  MPI_Status *status)                              \
    {                                                                                                             \
        MPI_Status own, *st = status != MPI_STATUS_IGNORE ? status : &own;                                          \
        return flat_recv_own(PMPI_Recv(buf, count, datatype, source, tag, comm, st), st, NTAG);                      \
    }                                                                                                             \
    static int __attribute__((noinline)) flat_Recv_exact_wide##SUFFIX(void *buf, int count, MPI_Datatype datatype,  \
                                                                      int source, int tag, MPI_Comm comm,          \
                                                                      MPI_Status *status)                          \
    {                                                                                                             \
        if ((NTAG && tag == tds.nenv_tag) || !flat_probed_fits(buf, count, datatype, tds_probed_peek(bytes)))         \
            return flat_Recv_probed##SUFFIX(buf, count, datatype, source, tag, comm, status);                        \
        flat_probed_count(tds_probed_peek(bytes));                                                                   \
        return PMPI_Recv(buf, count, datatype, source, tag, comm, status); /* forgets the probed message */        \
    }                                                                                                             \
    static inline __attribute__((always_inline)) int flat_Recv_exact##SUFFIX(void *buf, int count,                 \
                                                                             MPI_Datatype datatype, int source,   \
                                                                             int tag, MPI_Comm comm,              \
                                                                             MPI_Status *status)                  \
    {                                                                                                             \
        if ((NTAG && tag == tds.nenv_tag) || !flat_probed_quick(buf, count, datatype) ||                             \
            !((tds.core.active & tds.core.dirty) && flat_untimed()))                                                 \
            return flat_Recv_exact_wide##SUFFIX(buf, count, datatype, source, tag, comm, status);                    \
        flat_probed_count(tds_probed_get(bytes)); /* read again: not kept in a register to save */                 \
        return PMPI_Recv(buf, count, datatype, source, tag, comm, status); /* forgets the probed message */        \
    }                                                                                                             \
    static int __attribute__((noinline)) flat_Recv_irecv##SUFFIX(void *buf, int count, MPI_Datatype datatype,       \
                                                                 int source, int tag, MPI_Comm comm,               \
                                                                 MPI_Status *status)                               \
    {                                                                                                             \
        MPI_Request r;                                                                                               \
        MPI_Status st;                                                                                               \
        tds_status_seed(&st, status);                                                                                \
        int rc = PMPI_Irecv(buf, count, datatype, source, tag, comm, &r);                                            \
        return flat_recv_tail(rc, &r, &st, status, NULL, NULL, 0, NTAG, 1);                                          \
    }                                                                                                             \
    static int flat_Recv##SUFFIX(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,   \
                                 MPI_Status *status)                                                                 \
    {                                                                                                             \
        if (__builtin_expect(!tds_flat_comm_rx(comm) || source == MPI_PROC_NULL || tds_inside, 0))                  \
            return tds_wrap_Recv(buf, count, datatype, source, tag, comm, status);                                   \
        if (__builtin_expect(comm == tds_probed_peek(comm), 1)) {                                                    \
            if (source == tds_probed_peek(source) && tag == tds_probed_peek(tag))                                    \
                return flat_Recv_exact##SUFFIX(buf, count, datatype, source, tag, comm, status);                     \
            if (tds_probed_covers(source, tag, comm)) /* MPI's blocking receive: 86 MPI instructions fewer */    \
                return flat_Recv_probed##SUFFIX(buf, count, datatype, source, tag, comm, status);                    \
        }                                                                                                            \
        return flat_Recv_irecv##SUFFIX(buf, count, datatype, source, tag, comm, status);                             \
    }
FLAT_RECV(, 0)
FLAT_RECV(_ntag, 1)

/* MPI_Mrecv of a message MPI_Improbe/MPI_Mprobe matched (issue 38: the
 * receive that MPI_Improbe's loops make, one message at a time): its entry
 * (-1: none, or the general entry's case), the communicator the probe
 * recorded (tds_probe.c) checked as flat_Recv checks its own; the entry is
 * dropped only once the flat entry takes the message (the general one
 * takes it itself) */
static inline __attribute__((always_inline)) int flat_mrecv_entry(MPI_Message m)
{
    /* the last one recorded first (a loop's probe and receive in turn):
     * the table holds no MPI_MESSAGE_NULL nor MPI_MESSAGE_NO_PROC */
    int i = tds.nmprobed - 1;
    if (__builtin_expect(i < 0 || tds.mprobed[i].msg != m, 0) &&
        (__builtin_expect(m == MPI_MESSAGE_NO_PROC || m == MPI_MESSAGE_NULL, 0) || (i = tds_mprobed_find(m)) < 0))
        return -1;
    if (__builtin_expect(tds_inside || !tds_flat_comm_rx(tds.mprobed[i].comm), 0))
        return -1;
    return i;
}
static inline __attribute__((always_inline)) void flat_mrecv_drop(int i)
{
    if (i != --tds.nmprobed)
        tds.mprobed[i] = tds.mprobed[tds.nmprobed];
}
static inline __attribute__((always_inline)) int flat_mrecv_comm(MPI_Message m)
{
    int i = flat_mrecv_entry(m);
    if (i < 0)
        return 0;
    flat_mrecv_drop(i);
    return 1;
}
/* MPI's blocking MPI_Mrecv: the message is matched, it waits at most for
 * its data, as the flat sends do (the rank is not passive meanwhile: a
 * request and its test would only keep the protocol going; issue 38, 57-62
 * instructions fewer per message in all, icount mprobe). Counted before
 * it, as flat_Recv_exact counts, where the bytes the probe saw fit
 * (flat_probed_fits; a tail call, no frame); else into the program's status as
 * natively (flat_Recv_probed). NTAG: the tag, which the notification's
 * envelope needs, is known only after the call. The message the last
 * MPI_Improbe matched, received by a count at least its bytes
 * (FLAT_PROBED_QUICK), takes flat_Mrecv's own path, which keeps no frame
 * (no search, no copy of the entry, no multiplication: icount mprobe 116
 * -> 99, 2026-12-05); anything else flat_Mrecv_more's. */
#define FLAT_MRECV(SUFFIX, NTAG)                                                                                     \
    static int __attribute__((noinline)) flat_Mrecv_st##SUFFIX(void *buf, int count, MPI_Datatype datatype,         \
                                                               MPI_Message *message, MPI_Status *status)            \
    {                                                                                                             \
        MPI_Status own, *st = status != MPI_STATUS_IGNORE ? status : &own;                                          \
        return flat_recv_own(PMPI_Mrecv(buf, count, datatype, message, st), st, NTAG);                               \
    }                                                                                                             \
    static int __attribute__((noinline)) flat_Mrecv_more##SUFFIX(void *buf, int count, MPI_Datatype datatype,      \
                                                                 MPI_Message *message, MPI_Status *status)         \
    {                                                                                                             \
        int i = flat_mrecv_entry(*message);                                                                          \
        if (__builtin_expect(i < 0, 0))                                                                              \
            return tds_wrap_Mrecv(buf, count, datatype, message, status);                                            \
        size_t bytes = tds.mprobed[i].bytes;                                                                         \
        flat_mrecv_drop(i);                                                                                          \
        if (NTAG || !flat_probed_fits(buf, count, datatype, bytes))                                                  \
            return flat_Mrecv_st##SUFFIX(buf, count, datatype, message, status);                                     \
        flat_probed_count(bytes);                                                                                    \
        return PMPI_Mrecv(buf, count, datatype, message, status);                                                    \
    }                                                                                                             \
    static int flat_Mrecv##SUFFIX(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,                \
                                  MPI_Status *status)                                                                \
    {                                                                                                             \
        int i = tds.nmprobed - 1;                                                                                    \
        if (!NTAG && __builtin_expect(i >= 0, 1)) {                                                                  \
            const struct tds_mprobed *e = &tds.mprobed[i];                                                           \
            if (__builtin_expect(e->msg == *message && !tds_inside && tds_flat_comm_rx(e->comm) &&                   \
                                     FLAT_PROBED_QUICK(buf, count, datatype, e->bytes) &&                            \
                                     (tds.core.active & tds.core.dirty) && flat_untimed(),                           \
                                 1)) {                                                                               \
                size_t bytes = e->bytes;                                                                             \
                tds.nmprobed = i; /* flat_mrecv_drop's, the last entry */                                            \
                flat_probed_count(bytes);                                                                            \
                return PMPI_Mrecv(buf, count, datatype, message, status);                                            \
            }                                                                                                        \
        }                                                                                                            \
        return flat_Mrecv_more##SUFFIX(buf, count, datatype, message, status);                                       \
    }
FLAT_MRECV(, 0)
FLAT_MRECV(_ntag, 1)

/* With a header (copy layout, messages of at most
 * TDS_CELL_DATA bytes: send_fast's case): a send goes out of one buffer of
 * the rank's (tds.fsend, single-threaded), as send_fast's out of the
 * scratch buffer; a receive lands in a cell (tds_state.h), the blocking one in
 * the blocking receive's bounce buffer (tds_t.brq). */
#define TDS_FSEND (TDS_HDR_MAX + TDS_CELL_DATA)
/* the count fits a cell (no multiplication before the checks; a negative
 * one does not) */
static inline __attribute__((always_inline)) int flat_hdr_ok(int count, MPI_Datatype type, int dest)
{
    const td_ctx *c = &tds.core;
    return __builtin_expect(type == tds.tc_type && (unsigned)dest < (unsigned)tds.size &&
                                (unsigned)count <= tds.tc_cmax && (c->active & c->dirty) && !tds_inside &&
                                flat_untimed(),
                            1);
}
/* the header and the data in tds.fsend: the piggyback is pb_out, copied
 * whole (the data overwrites the rest), td_primary_send's fast case
 * (flat_hdr_ok, pb_static); ONS: the algorithm's on_send writes it
 * (td_primary_send_dirty's other case: cda, hcda, edod, xulau; issue 43) */
static inline __attribute__((always_inline)) uint8_t *flat_hdr_fill(const void *buf, int dest, size_t ub, int ons)
{
    uint8_t *b = tds.fsend;
    td_ctx *c = &tds.core;
    b[0] = c->hdr_out;
    if (ons)
        c->on_send(c, c->st, dest, b + TDS_HDR_FIXED);
    else
        memcpy(b + TDS_HDR_FIXED, c->pb_out, TD_PB_MAX);
    c->sent++;
    cell_copy(b + tds.hdr_len, buf, ub);
    flat_count(dest, ub);
    return b;
}

/* MPI still reads tds.fsend (a send not complete at once): the buffer goes
 * with an entry (tds_send_keep), the entry's old bounce buffer becomes tds.fsend */
static void __attribute__((noinline, cold)) flat_keep(MPI_Request r)
{
    void *s = tds_t.scratch;
    size_t sc = tds_t.scratch_cap;
    tds_t.scratch = tds.fsend;
    tds_t.scratch_cap = TDS_FSEND;
    tds_send_keep(tds_rq_new(), r, tds.keep_ub);
    void *n = tds_t.scratch;
    if (tds_t.scratch_cap < TDS_FSEND && !(n = realloc(n, TDS_FSEND)))
        tds_fatal("out of memory for a %d-byte message buffer", TDS_FSEND);
    tds.fsend = n;
    tds_t.scratch = s;
    tds_t.scratch_cap = sc;
}

/* The flat sends with a header, ENTRY_Send and ENTRY_Isend, to world rank
 * W (dest in comm; FLAT_XSEND for another communicator), their piggyback
 * by flat_hdr_fill(ONS). An on_send may ask for the control channel to be
 * drained once the message is out (td_ctx.want_poll: the general entries'
 * tds_after_body). */
#define FLAT_HDR_SENDS(ENTRY, ONS)                                                                                   \
    FLAT_OTHER(Send, ENTRY##_Send,                                                                                   \
               (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm),              \
               (buf, count, datatype, dest, tag, comm))                                                            \
    static inline __attribute__((always_inline)) int ENTRY##_send_to(const void *buf, int count,                    \
                                                                      MPI_Datatype datatype, int dest, int tag,     \
                                                                      MPI_Comm comm, int w)                         \
    {                                                                                                             \
        if (!flat_hdr_ok(count, datatype, w))                                                                        \
            return ENTRY##_Send_miss(buf, count, datatype, dest, tag, comm);                                        \
        size_t ub = (size_t)(unsigned)count * (size_t)(unsigned)tds.tc_size;                                        \
        uint8_t *b = flat_hdr_fill(buf, w, ub, ONS);                                                                 \
        if (!ONS)                                                                                                    \
            return PMPI_Send(b, tds.hdr_len + (int)ub, MPI_BYTE, dest, tag, comm);                                  \
        int rc = PMPI_Send(b, tds.hdr_len + (int)ub, MPI_BYTE, dest, tag, comm);                                    \
        tds_after_body();                                                                                            \
        return rc;                                                                                                   \
    }                                                                                                             \
    FLAT_XSEND(Send, ENTRY##_Send,                                                                                   \
               (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm),              \
               (buf, count, datatype, dest, tag, comm),                                                            \
               { return ENTRY##_send_to(buf, count, datatype, dest, tag, comm, w); })                              \
    static int ENTRY##_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)    \
    {                                                                                                             \
        if (__builtin_expect(!tds_flat_comm(comm), 0))                                                               \
            return ENTRY##_Send_x(buf, count, datatype, dest, tag, comm);                                           \
        return ENTRY##_send_to(buf, count, datatype, dest, tag, comm, dest);                                         \
    }                                                                                                             \
    FLAT_OTHER(Isend, ENTRY##_Isend,                                                                                 \
               (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,               \
                MPI_Request *request),                                                                             \
               (buf, count, datatype, dest, tag, comm, request))                                                   \
    static inline __attribute__((always_inline)) int ENTRY##_isend_to(const void *buf, int count,                   \
                                                                       MPI_Datatype datatype, int dest, int tag,    \
                                                                       MPI_Comm comm, MPI_Request *request, int w)  \
    {                                                                                                             \
        if (!flat_hdr_ok(count, datatype, w))                                                                        \
            return ENTRY##_Isend_miss(buf, count, datatype, dest, tag, comm, request);                              \
        size_t ub = (size_t)(unsigned)count * (size_t)(unsigned)tds.tc_size;                                        \
        uint8_t *b = flat_hdr_fill(buf, w, ub, ONS);                                                                 \
        tds.keep_ub = ub; /* for flat_keep: only the request is kept across the call */                              \
        int rc = PMPI_Isend(b, tds.hdr_len + (int)ub, MPI_BYTE, dest, tag, comm, request);                          \
        if (__builtin_expect(rc == MPI_SUCCESS && !DONE_AT_ONCE(*request), 0))                                       \
            flat_keep(*request);                                                                                     \
        if (ONS)                                                                                                     \
            tds_after_body();                                                                                        \
        return rc;                                                                                                   \
    }                                                                                                             \
    FLAT_XSEND(Isend, ENTRY##_Isend,                                                                                 \
               (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,               \
                MPI_Request *request),                                                                             \
               (buf, count, datatype, dest, tag, comm, request),                                                   \
               { return ENTRY##_isend_to(buf, count, datatype, dest, tag, comm, request, w); })                    \
    static int ENTRY##_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,   \
                             MPI_Request *request)                                                                 \
    {                                                                                                             \
        if (__builtin_expect(!tds_flat_comm(comm), 0))                                                               \
            return ENTRY##_Isend_x(buf, count, datatype, dest, tag, comm, request);                                 \
        return ENTRY##_isend_to(buf, count, datatype, dest, tag, comm, request, dest);                               \
    }
FLAT_HDR_SENDS(flat_hdr, 0)
FLAT_HDR_SENDS(flat_ons, 1)

/* the free list ran dry: 64 more cells (never freed: at most as many as
 * the receives a rank has had pending at once, plus 64) */
static void __attribute__((noinline, cold)) cell_refill(void)
{
    tds_cell *c = calloc(64, sizeof *c);
    if (!c)
        return;
    for (int i = 0; i < 63; i++)
        c[i].next = &c[i + 1];
    tds.cells = c;
}

/* the free list ran dry: 64 more cells, or another plain type, then as
 * flat_hdr_Irecv (out of memory, or anything but its common case: the
 * general path) */
FLAT_MISS(flat_hdr_Irecv, flat_hdr_irecv_other,
          (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request),
          (buf, count, datatype, source, tag, comm, request))
static int __attribute__((noinline, cold)) flat_hdr_irecv_other(void *buf, int count, MPI_Datatype datatype,
                                                                int source, int tag, MPI_Comm comm,
                                                                MPI_Request *request)
{
    if (!tds.cells)
        cell_refill();
    if (datatype != tds.tc_type)
        tds_type_cache_set(datatype);
    if (!tds.cells || !tds_flat_comm_rx(comm) || source == MPI_PROC_NULL || datatype != tds.tc_type ||
        (unsigned)count > tds.tc_cmax || buf == MPI_BOTTOM || tds_inside)
        return tds_wrap_Irecv(buf, count, datatype, source, tag, comm, request);
    return flat_hdr_Irecv(buf, count, datatype, source, tag, comm, request);
}
/* a flat receive with a header: a cell from the free list, MPI's receive
 * into it, its handle and cell at the end of the ring (tds_hs_post) */
static int flat_hdr_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                          MPI_Request *request)
{
    tds_cell *c = tds.cells;
    /* the count fits a cell (no multiplication here; a negative one does not) */
    if (__builtin_expect(!tds_flat_comm_rx(comm) || source == MPI_PROC_NULL || datatype != tds.tc_type ||
                             (unsigned)count > tds.tc_cmax || buf == MPI_BOTTOM || tds_inside || !c,
                         0))
        return flat_hdr_Irecv_miss(buf, count, datatype, source, tag, comm, request);
    int tsize = tds.tc_size;
    size_t ub = (size_t)(unsigned)count * (size_t)tsize;
    tds.cells = c->next;
    c->buf = buf;
    c->ub = ub;
    c->tsize = tsize;
    c->wire[0] = 0; /* no header until MPI writes one (recv_layout) */
    int rc = PMPI_Irecv(c->wire, tds.hdr_len + (int)ub, MPI_BYTE, source, tag, comm, request);
    unsigned rn = tds.hs.rn;
    if (__builtin_expect(rc != MPI_SUCCESS || tds.rq_count != 0 || rn == TDS_HS_RING, 0))
        return flat_post_rare(rc, request, c);
    tds.hs.rk[rn] = *request; /* tds_hs_post, the ring not full */
    tds.hs.rv[rn] = c;
    tds.hs.rn = rn + 1;
    return MPI_SUCCESS;
}

FLAT_OTHER(Recv, flat_hdr_Recv,
          (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status *status),
          (buf, count, datatype, source, tag, comm, status))
static int flat_hdr_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                         MPI_Status *status)
{
    uint8_t *w = tds_t.brq.bounce; /* TDS_FSEND bytes at least (tds_fast_select) */
    if (__builtin_expect(!tds_flat_comm_rx(comm) || source == MPI_PROC_NULL || datatype != tds.tc_type ||
                             (unsigned)count > tds.tc_cmax || tds_t.brq.bounce_cap < TDS_FSEND || buf == MPI_BOTTOM ||
                             tds_inside,
                         0))
        return flat_hdr_Recv_miss(buf, count, datatype, source, tag, comm, status);
    size_t ub = (size_t)(unsigned)count * (size_t)(unsigned)tds.tc_size;
    MPI_Request r;
    /* MPI writes the program's status itself (what tds_wire_done does to
     * it is what tds_status_out would copy back), or tds_t.st_one: no
     * copies in and out, as test_near's (issue 38: 12 instructions) */
    MPI_Status *st = status != MPI_STATUS_IGNORE ? status : &tds_t.st_one;
    w[0] = 0;
    if (tds_probed_covers(source, tag, comm))
        return flat_recv_probed(w, tds.hdr_len + (int)ub, MPI_BYTE, source, tag, comm, st, MPI_STATUS_IGNORE, w, buf,
                                ub, 0);
    int rc = PMPI_Irecv(w, tds.hdr_len + (int)ub, MPI_BYTE, source, tag, comm, &r);
    return flat_recv_tail(rc, &r, st, MPI_STATUS_IGNORE, w, buf, ub, 0, 1);
}

/* MPI_Mrecv with a header: flat_hdr_Recv's case and checks, the message
 * matched (flat_mrecv_comm); a type other than the cached one enters the
 * cache as for flat_hdr_Recv (FLAT_OTHER) */
FLAT_OTHER(Mrecv, flat_hdr_Mrecv, (void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status),
           (buf, count, datatype, message, status))
static int flat_hdr_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status)
{
    uint8_t *w = tds_t.brq.bounce; /* TDS_FSEND bytes at least (tds_fast_select) */
    if (__builtin_expect(datatype != tds.tc_type || (unsigned)count > tds.tc_cmax || tds_t.brq.bounce_cap < TDS_FSEND ||
                             buf == MPI_BOTTOM,
                         0))
        return flat_hdr_Mrecv_miss(buf, count, datatype, message, status);
    if (__builtin_expect(!flat_mrecv_comm(*message), 0))
        return tds_wrap_Mrecv(buf, count, datatype, message, status);
    size_t ub = (size_t)(unsigned)count * (size_t)(unsigned)tds.tc_size;
    MPI_Status *st = status != MPI_STATUS_IGNORE ? status : &tds_t.st_one; /* as flat_hdr_Recv's */
    w[0] = 0; /* MPI's blocking receive, as flat_Mrecv's */
    int rc = PMPI_Mrecv(w, tds.hdr_len + (int)ub, MPI_BYTE, message, st);
    return flat_recv_took(rc, tds_recv_taken(rc), NULL, st, MPI_STATUS_IGNORE, w, buf, ub, 0, 0);
}

void tds_fast_select(void)
{
    int on = tds.on && tds.fast;
    int flat = on && tds.core.pb_static && tds.nohdr && !tds.nh_slow && tds.core.pb_size == 0 && !tds.core.on_recv;
    /* with a header: send_fast's conditions (no ignored tags, no call
     * sites: fast_lim), and the copy layout for receives of a cell's size;
     * receives for every algorithm (a window's piggybacks to one
     * on_recv_many, or each with its source to on_recv: tds_batch), sends
     * with pb_out (hdr) or the algorithm's on_send (ons) */
    int hdr_rx = on && !tds.nohdr && tds.fast_lim && !tds.fast_min && tds.copy_max >= TDS_CELL_DATA;
    int hdr = hdr_rx && tds.core.pb_static, ons = hdr_rx && !tds.core.pb_static;
    if ((hdr || ons) && !tds.fsend && !(tds.fsend = malloc(TDS_FSEND)))
        hdr = ons = 0;
    if (hdr_rx && !tds.cells)
        cell_refill();
    if (hdr_rx) /* flat_hdr_Recv's wire buffer: a cell's bytes at least */
        (void)rq_bounce(&tds_t.brq, TDS_FSEND);
    int ntag = tds.nenv_tag >= 0;
    /* header-free with messages to classify (TDSHIM_IGNORE_*, no call
     * sites): the flat sends of primaries, each classified first
     * (FLAT_SENDS' CLS), and flat receives that keep their scope
     * (flat_cls_Irecv) and classify what they deliver. The work-stealing
     * recipe's primaries cost the general send 185-192 instructions, its
     * receives 360-476 (bench/RESULTS.md) */
    int cls = on && tds.core.pb_static && tds.nohdr && tds.cf.classify && !tds.m.sites && tds.core.pb_size == 0 &&
              !tds.core.on_recv;
    tds_ep_Send = flat  ? (ntag ? flat_Send_ntag : flat_Send)
                  : cls ? flat_Send_cls
                  : hdr ? flat_hdr_Send
                  : ons ? flat_ons_Send
                        : tds_wrap_Send;
    tds_ep_Isend = flat  ? (ntag ? flat_Isend_ntag : flat_Isend)
                   : cls ? flat_Isend_cls
                   : hdr ? flat_hdr_Isend
                   : ons ? flat_ons_Isend
                         : tds_wrap_Isend;
    /* a flat receive keeps no tag, which test and spin need to tell a
     * busy rank's poll from an idle one when the scope can exclude a
     * receive (tds_poll_scope; test_missed): those receives go general */
    int rx = !(tds_scoped() && (tds.cf.idle == TDS_IDLE_TEST || tds.cf.idle == TDS_IDLE_SPIN));
    /* with messages to classify, every receive is flat, its scope its value
     * in the set (flat_cls_Irecv: NULL or TDS_OOS), each message classified
     * as it completes; not in measure mode, whose candidates ask a
     * receive's own tag */
    int crx = cls && tds.cf.notify != TDS_NOTIFY_NONE;
    /* what tds_plain_slow finishes a flat header-free receive's message on
     * (tds_recv_finish: the notification's envelope, an ignored message) */
    if (flat || crx)
        recv_fields(&tds.plain_rq, NULL, MPI_BYTE, MPI_COMM_WORLD, 0, 1, 1);
    tds_ep_Recv = flat ? (ntag ? flat_Recv_ntag : flat_Recv) : hdr_rx ? flat_hdr_Recv : tds_wrap_Recv;
    tds_ep_Mrecv = flat ? (ntag ? flat_Mrecv_ntag : flat_Mrecv) : hdr_rx ? flat_hdr_Mrecv : tds_wrap_Mrecv;
    tds_ep_Irecv = flat && rx ? flat_Irecv : crx ? flat_cls_Irecv : hdr_rx && rx ? flat_hdr_Irecv : tds_wrap_Irecv;
    /* the test of a flat header-free receive: no clock read at entry (spin) */
    int test = rx && tds.cf.idle != TDS_IDLE_SPIN, ctest = crx && tds.cf.idle != TDS_IDLE_SPIN;
    tds.quiet_test = tds.cf.notify != TDS_NOTIFY_NONE && tds.cf.idle != TDS_IDLE_TEST && tds.cf.idle != TDS_IDLE_SPIN;
    tds_ep_Test = test && flat    ? (tds.cf.notify == TDS_NOTIFY_NONE ? flat_meas_Test : flat_Test)
                  : ctest          ? flat_cls_Test
                  : test && hdr_rx ? flat_hdr_Test
                                   : tds_wrap_Test;
    tds_ep_Testany = test && flat    ? (tds.cf.notify == TDS_NOTIFY_NONE ? flat_meas_Testany : flat_Testany)
                     : ctest          ? flat_cls_Testany
                     : test && hdr_rx ? flat_hdr_Testany
                                      : tds_wrap_Testany;
    tds_ep_Testsome = test && flat    ? (tds.cf.notify == TDS_NOTIFY_NONE ? flat_meas_Testsome : flat_Testsome)
                      : ctest          ? flat_cls_Testsome
                      : test && hdr_rx ? flat_hdr_Testsome
                                       : tds_wrap_Testsome;
    /* a found probe's work is stores only where nothing looks at its
     * message (classification, call sites) and no clock is read at entry
     * (spin); measure mode keeps its tag (tds_probe.c) */
    int probe = on && !tds.nh_slow && tds.cf.idle != TDS_IDLE_SPIN, meas = tds.cf.notify == TDS_NOTIFY_NONE;
    tds_ep_Iprobe = !probe     ? tds_wrap_Iprobe
                    : tds.nohdr ? (meas ? tds_flat_meas_Iprobe : tds_flat_Iprobe)
                                : (meas ? tds_flat_meas_hdr_Iprobe : tds_flat_hdr_Iprobe);
    tds_ep_Improbe = !probe     ? tds_wrap_Improbe
                     : tds.nohdr ? (meas ? tds_flat_meas_Improbe : tds_flat_Improbe)
                                 : (meas ? tds_flat_meas_hdr_Improbe : tds_flat_hdr_Improbe);
}
