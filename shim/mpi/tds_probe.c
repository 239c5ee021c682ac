/*
 * Probes: MPI_Iprobe, MPI_Probe, the matched probes and the receives
 * of the messages they matched (MPI_Mrecv, MPI_Imrecv).
 */
#include "tds_flat.h"
#include "tds_recv.h"

#include <stdlib.h>
#include <string.h>

/* a probed message that is no work for the idle notion: not primary
 * (tds_not_primary; st already fixed to the user's count;
 * MPI_STATUS_IGNORE: unknown, counted as found). The look is out of line:
 * inlined, its calls cost the found probe a frame (icount: +16) */
static int __attribute__((noinline, cold)) probe_not_primary(const MPI_Status *st)
{
    return tds_not_primary(tds_st_tag(st), tds_st_bytes(st));
}
static inline int probe_ignorable(const MPI_Status *st)
{
    if (st == MPI_STATUS_IGNORE || !tds.cf.classify)
        return 0;
    return probe_not_primary(st);
}

/* the program's view of a probed message: its own byte count, and not
 * cancelled (MPI's definition: MPICH 4.0's probes leave the flag as they
 * found it, so a program's uninitialised status showed a cancelled probe,
 * issue 26) */
static void __attribute__((noinline, cold)) probe_armed(const MPI_Status *st, MPI_Comm comm)
{
    /* a probe that finds the notification's envelope: the program saw it
     * and may leave its loop before it receives it (td_engine.c, send-after) */
    if (tds.cf.notify == TDS_NOTIFY_TAG && tds_st_tag(st) == tds.cf.notify_tag && tds_st_source(st) == tds.rank &&
        comm == MPI_COMM_WORLD)
        td_saw_notification(&tds.core);
}
/* inline: a found MPI_Iprobe's (the armed core's check and a missing
 * header out of line) */
static inline __attribute__((always_inline)) void fix_probe_status(MPI_Status *st, MPI_Comm comm)
{
    if (st == MPI_STATUS_IGNORE || tds_st_source(st) == MPI_PROC_NULL)
        return;
    if (__builtin_expect(tds.core.armed, 0))
        probe_armed(st, comm);
    tds_st_set_uncancelled(st);
    if (tds.nohdr || tds_comm_foreign(comm))
        return;
    size_t bytes = tds_st_bytes(st);
    if (bytes < (size_t)tds.hdr_len)
        tds_no_header(st, bytes, comm);
    else
        tds_st_set_bytes(st, bytes - (size_t)tds.hdr_len);
}

/* The communicator of a matched message is not in MPI_Message, and the
 * receive needs it (world rank of the source): Mprobe/Improbe record it. */
static void __attribute__((noinline, cold)) mprobed_grow(void)
{
    int cap = tds.capmprobed ? 2 * tds.capmprobed : 8;
    struct tds_mprobed *v = realloc(tds.mprobed, (size_t)cap * sizeof *v);
    if (!v)
        tds_fatal("out of memory recording a matched message");
    tds.mprobed = v;
    tds.capmprobed = cap;
}
/* with room for it */
static inline __attribute__((always_inline)) void mprobed_put(MPI_Message m, MPI_Comm comm, size_t bytes)
{
    struct tds_mprobed *e = &tds.mprobed[tds.nmprobed++];
    e->msg = m;
    e->comm = comm;
    e->bytes = bytes;
}
/* inline: every found MPI_Improbe's (the growth out of line) */
static inline __attribute__((always_inline)) void mprobed_add(MPI_Message m, MPI_Comm comm, const MPI_Status *st)
{
    if (__builtin_expect(tds.nmprobed == tds.capmprobed, 0))
        mprobed_grow();
    mprobed_put(m, comm, st != MPI_STATUS_IGNORE ? tds_st_bytes(st) : SIZE_MAX);
}

static MPI_Comm mprobed_take(MPI_Message m)
{
    int i = tds_mprobed_find(m);
    if (i < 0)
        tds_fatal("MPI_Mrecv/MPI_Imrecv of a message that MPI_Mprobe/MPI_Improbe did not return");
    MPI_Comm c = tds.mprobed[i].comm;
    tds.mprobed[i] = tds.mprobed[--tds.nmprobed];
    return c;
}

int tds_body_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Status *status)
{
    if (*message == MPI_MESSAGE_NO_PROC || *message == MPI_MESSAGE_NULL || tds_dtnull_refused(type, 1))
        return PMPI_Mrecv(buf, count, type, message, status);
    tds_rq *q = &tds_t.brq;
    void *wbuf;
    int wcount;
    MPI_Datatype wtype;
    MPI_Status st;
    recv_layout(q, buf, count, type, mprobed_take(*message), &wbuf, &wcount, &wtype);
    tds_status_seed(&st, status);
    /* MPI's blocking MPI_Mrecv, as the flat one's: the message is matched,
     * it waits at most for its data, and the rank is not passive meanwhile.
     * Not MPI_Imrecv and a test: Open MPI 4.1.4's pml ucx completes such a
     * request in error (a truncated message) without its communicator, and
     * the test's error handler crashes on it, where MPI_Mrecv returns the
     * error (user guide, "MPI libraries") */
    int rc = PMPI_Mrecv(wbuf, wcount, wtype, message, &st);
    tds_layout_done(q, &wtype);
    rc = tds_recv_blocked(q, rc, &st, status);
    brq_done(q);
    return rc;
}

int tds_body_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Request *request)
{
    if (*message == MPI_MESSAGE_NO_PROC || *message == MPI_MESSAGE_NULL || tds_dtnull_refused(type, 1))
        return PMPI_Imrecv(buf, count, type, message, request);
    return recv_post(0, buf, count, type, MPI_ANY_SOURCE, MPI_ANY_TAG, mprobed_take(*message), message, request);
}

/* ---------------------------------------------------------------- probes */

/* The envelope of the message the last found MPI_Iprobe or MPI_Probe saw (issue 38: a
 * loop that takes messages one at a time probes, then receives what it
 * found). While no call that can match a message has run since
 * (gen_wrappers.py, MATCHING: tdshim's every such call forgets it), that
 * message is still in the MPI library's queue, and a receive whose source
 * and tag cover it cannot block: tds_flat.c's flat MPI_Recv then makes the
 * blocking call itself, without the request and test that let a receive
 * wait as passive (tds_probed_covers). Without a status, the probe's own source
 * and tag: a receive covers them only with the same or a wildcard.
 * One per rank, not per thread: under MPI_THREAD_SERIALIZED another thread
 * may take the message between one thread's probe and its receive (tests/
 * mpi/probed.sh, the thread way). Read only where no other thread calls
 * MPI at the same time (the flat entries, which a rank under
 * MPI_THREAD_MULTIPLE never takes, tds.fast; the general MPI_Recv without
 * it, tds_mt); written by every thread, hence relaxed atomics (plain moves
 * on x86; ThreadSanitizer sees no race in a MPI_THREAD_MULTIPLE program). */
tds_probed_t tds_probed;
static inline __attribute__((always_inline)) void probed_keep(int source, int tag, MPI_Comm comm,
                                                              const MPI_Status *st)
{
    tds_probed_set(comm, comm);
    tds_probed_set(source, st != MPI_STATUS_IGNORE ? tds_st_source(st) : source);
    tds_probed_set(tag, st != MPI_STATUS_IGNORE ? tds_st_tag(st) : tag);
    tds_probed_set(bytes, st != MPI_STATUS_IGNORE ? tds_st_bytes(st) : SIZE_MAX);
}

/* what MPI_Iprobe does after MPI's call: the program's view of the
 * message, and the idle notion's turn (last: a tail call) */
static inline __attribute__((always_inline)) int iprobe_after(int rc, int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    if (rc != MPI_SUCCESS || source == MPI_PROC_NULL)
        return rc;
    int found = *flag; /* read once: fix_probe_status writes the status */
    if (found) {
        fix_probe_status(status, comm);
        probed_keep(source, tag, comm, status);
    }
    return tds_probe_poll_rc(tag, comm, status, found && !probe_ignorable(status), rc);
}
/* with tds_poll_enter's work or call sites: out of the common case's way
 * (its frame and clock reads) */
static int __attribute__((noinline, cold)) iprobe_timed(int source, int tag, MPI_Comm comm, int *flag,
                                                        MPI_Status *status)
{
    tds_poll_enter();
    double t0 = tds.m.sites ? tdr_now() : 0.0;
    int rc = PMPI_Iprobe(source, tag, comm, flag, status);
    if (rc != MPI_SUCCESS || source == MPI_PROC_NULL)
        return rc;
    iprobe_after(rc, source, tag, comm, flag, status);
    if (tds.m.sites)
        tdr_site_record(&tds.m, TDR_SITE_POLL, tdr_now() - t0);
    return rc;
}
int tds_body_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    if (__builtin_expect(tds_poll_enter_needed() || tds.m.sites, 0))
        return iprobe_timed(source, tag, comm, flag, status);
    return iprobe_after(PMPI_Iprobe(source, tag, comm, flag, status), source, tag, comm, flag, status);
}

/* MPI_Improbe as MPI_Iprobe (issue 38: the probe of a loop that takes
 * messages one at a time), and the matched message's communicator
 * recorded for its receive. The program's status is MPI's: probe_ignorable
 * and fix_probe_status take MPI_STATUS_IGNORE as they do for MPI_Iprobe. */
static inline __attribute__((always_inline)) int improbe_after(int rc, int source, int tag, MPI_Comm comm, int *flag,
                                                               MPI_Message *message, MPI_Status *status)
{
    if (rc != MPI_SUCCESS || source == MPI_PROC_NULL)
        return rc;
    int found = *flag;
    if (found) {
        fix_probe_status(status, comm);
        mprobed_add(*message, comm, status);
    }
    return tds_probe_poll_rc(tag, comm, status, found && !probe_ignorable(status), rc);
}
/* The flat MPI_Iprobe and MPI_Improbe (issue 38: the probe of a loop that
 * takes messages one at a time; gen_wrappers.py kind `fast`, chosen by tds_fast_select
 * where nothing a found probe looks at per message is configured: no
 * classification, call sites or spin notion). A probe that found a message
 * and has a status, on a rank with nothing held and no armed core: the
 * program's view of the status, the envelope kept, the poll counted (and
 * its tag, in measure mode: MEAS), all stores, after one call into MPI and
 * no other, so without the general entry's re-entry guard (tds_flat.c's
 * argument: a flat entry holds no state across the MPI call it makes).
 * HDR: a header on MPI_COMM_WORLD taken off the count (fix_probe_status's
 * case; another communicator, a short message: the rest). Anything else
 * after MPI's call is iprobe_rest's, the general entry's work under the
 * guard (an empty probe is the idle notion's turn, which makes calls). The
 * arguments wait in tds across MPI's call (single-threaded: tds.fast), not
 * in registers the entry would save and restore (icount probe: 10
 * instructions fewer). */
static int __attribute__((noinline)) iprobe_rest(int rc)
{
    const struct tds_fprobe *a = &tds.fprobe;
    tds_inside = 1;
    rc = iprobe_after(rc, a->source, a->tag, a->comm, a->flag, a->status);
    tds_inside = 0;
    return rc;
}
static int __attribute__((noinline)) improbe_rest(int rc)
{
    const struct tds_fprobe *a = &tds.fprobe;
    tds_inside = 1;
    rc = improbe_after(rc, a->source, a->tag, a->comm, a->flag, a->message, a->status);
    tds_inside = 0;
    return rc;
}
/* MATCHED: MPI_Improbe's, whose found message is recorded for its receive
 * (mprobed_add) where MPI_Iprobe keeps the envelope */
static inline __attribute__((always_inline)) int flat_probe(int source, int tag, MPI_Comm comm, int *flag,
                                                            MPI_Message *message, MPI_Status *status, int hdr,
                                                            int meas, int matched)
{
    if (__builtin_expect(tds_inside || tds.nheld != 0 || source == MPI_PROC_NULL, 0))
        return matched ? tds_wrap_Improbe(source, tag, comm, flag, message, status)
                       : tds_wrap_Iprobe(source, tag, comm, flag, status);
    struct tds_fprobe *a = &tds.fprobe;
    a->source = source;
    a->tag = tag;
    a->comm = comm;
    a->flag = flag;
    a->status = status;
    if (matched)
        a->message = message;
    int rc = matched ? PMPI_Improbe(source, tag, comm, flag, message, status)
                     : PMPI_Iprobe(source, tag, comm, flag, status);
    MPI_Status *st = a->status;
    size_t bytes = 0;
    if (__builtin_expect(rc != MPI_SUCCESS || !*a->flag || st == MPI_STATUS_IGNORE || tds.core.armed ||
                             (matched && tds.nmprobed == tds.capmprobed) ||
                             (hdr && (a->comm != MPI_COMM_WORLD || (bytes = tds_st_bytes(st)) < (size_t)tds.hdr_len)),
                         0))
        return matched ? improbe_rest(rc) : iprobe_rest(rc);
    tds_st_set_uncancelled(st);
    if (hdr)
        tds_st_set_bytes(st, bytes - (size_t)tds.hdr_len);
    if (matched) { /* room checked above: no call, no frame */
        mprobed_put(*a->message, a->comm, hdr ? bytes - (size_t)tds.hdr_len : tds_st_bytes(st));
    } else {
        tds_probed_set(comm, a->comm);
        tds_probed_set(source, tds_st_source(st));
        tds_probed_set(tag, tds_st_tag(st));
        tds_probed_set(bytes, hdr ? bytes - (size_t)tds.hdr_len : tds_st_bytes(st));
    }
    if (meas)
        tds_found_tag_set(tds_st_tag(st));
    return tds_idle_poll_rc(0, 1, 1, rc);
}
#define FLAT_PROBES(SUFFIX, HDR, MEAS)                                                                                \
    int tds_flat##SUFFIX##_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)                 \
    {                                                                                                             \
        return flat_probe(source, tag, comm, flag, NULL, status, HDR, MEAS, 0);                                         \
    }                                                                                                             \
    int tds_flat##SUFFIX##_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,             \
                                   MPI_Status *status)                                                               \
    {                                                                                                             \
        return flat_probe(source, tag, comm, flag, message, status, HDR, MEAS, 1);                                      \
    }
FLAT_PROBES(, 0, 0)
FLAT_PROBES(_hdr, 1, 0)
FLAT_PROBES(_meas, 0, 1)
FLAT_PROBES(_meas_hdr, 1, 1)

static int __attribute__((noinline, cold)) improbe_timed(int source, int tag, MPI_Comm comm, int *flag,
                                                         MPI_Message *message, MPI_Status *status)
{
    tds_poll_enter();
    double t0 = tds.m.sites ? tdr_now() : 0.0;
    int rc = PMPI_Improbe(source, tag, comm, flag, message, status);
    if (rc != MPI_SUCCESS || source == MPI_PROC_NULL)
        return rc;
    improbe_after(rc, source, tag, comm, flag, message, status);
    if (tds.m.sites)
        tdr_site_record(&tds.m, TDR_SITE_POLL, tdr_now() - t0);
    return rc;
}
int tds_body_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status)
{
    if (__builtin_expect(tds_poll_enter_needed() || tds.m.sites, 0))
        return improbe_timed(source, tag, comm, flag, message, status);
    return improbe_after(PMPI_Improbe(source, tag, comm, flag, message, status), source, tag, comm, flag, message,
                         status);
}

int tds_body_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    if (source == MPI_PROC_NULL)
        return PMPI_Probe(source, tag, comm, status);
    MPI_Status st;
    tds_status_seed(&st, status);
    int flag = 0, rc;
    tds_wait w = tds_wait_begin(1);
    while ((rc = PMPI_Iprobe(source, tag, comm, &flag, &st)) == MPI_SUCCESS && !flag)
        tds_wait_step(&w);
    if (flag) {
        fix_probe_status(&st, comm);
        probed_keep(source, tag, comm, &st); /* MPI_Probe + MPI_Recv: as a found MPI_Iprobe's */
    }
    tds_status_out(status, &st);
    return rc;
}

int tds_body_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    if (source == MPI_PROC_NULL)
        return PMPI_Mprobe(source, tag, comm, message, status);
    MPI_Status st;
    tds_status_seed(&st, status);
    int flag = 0, rc;
    tds_wait w = tds_wait_begin(1);
    while ((rc = PMPI_Improbe(source, tag, comm, &flag, message, &st)) == MPI_SUCCESS && !flag)
        tds_wait_step(&w);
    if (flag) {
        fix_probe_status(&st, comm);
        mprobed_add(*message, comm, &st);
    }
    tds_status_out(status, &st);
    return rc;
}
