/*
 * The state and the types of tdshim's PMPI layer (DESIGN.md §2, shim/mpi).
 *
 * All mutable state of the library lives in the one process-wide struct
 * `tds`, and the state of one thread's call in `tds_t` (STYLE: no scattered
 * globals), both defined in tds_state.c. Every other header of shim/mpi
 * builds on this one; it includes none of them.
 */
#ifndef TDS_STATE_H
#define TDS_STATE_H

#include <mpi.h>
/* generated from p2p.list: the bodies' prototypes, and every PMPI_<Name>
 * of the list redirected to the next layer (gen_wrappers.py) */
#include "tds_bodies.h"
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "td_algo.h"
#include "tdr.h"
#include "tdr_mpi.h"
#include "tds_config.h"
#include "tds_hdr.h"

/* ---- status fields on the fast path ----
 * The byte count and the cancelled flag of a status. With Open MPI
 * (3.x-5.x: `_ucount` bytes, `_cancelled`) they are read and written in
 * place: PMPI_Get_count + PMPI_Test_cancelled + PMPI_Status_set_elements_x
 * are three calls with argument checks on every completed message, a
 * measurable part of the per-message budget. Writing _ucount in bytes is
 * what MPI_Status_set_elements_x(st, MPI_BYTE, n) does there. Other MPIs
 * take the portable calls.
 * A program's status may be aligned to 4 bytes only, where Open MPI's
 * MPI_Status (a size_t inside) needs 8: its Fortran bindings (mpif.h, use
 * mpi) pass the program's INTEGER array as the C status (found by UBSan in
 * MUMPS, tests/mpi/mumps.sh; tests/mpi/stalign.sh). The program's statuses
 * are read and written through tds_status4, the same struct at 4 bytes'
 * alignment (a typedef may lower it: GCC, clang), which x86 compiles to
 * the same moves. */
typedef MPI_Status tds_status4 __attribute__((aligned(4)));
#define TDS_ST4(st) ((tds_status4 *)(st))
#define TDS_CST4(st) ((const tds_status4 *)(st))
static inline int tds_st_source(const MPI_Status *st)
{
    return TDS_CST4(st)->MPI_SOURCE;
}
static inline int tds_st_tag(const MPI_Status *st)
{
    return TDS_CST4(st)->MPI_TAG;
}
static inline int tds_st_error(const MPI_Status *st)
{
    return TDS_CST4(st)->MPI_ERROR;
}
static inline void tds_st_set_error(MPI_Status *st, int err)
{
    TDS_ST4(st)->MPI_ERROR = err;
}
#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION >= 3 && OMPI_MAJOR_VERSION <= 5
static inline size_t tds_st_bytes(const MPI_Status *st)
{
    return TDS_CST4(st)->_ucount;
}
static inline int tds_st_cancelled(const MPI_Status *st)
{
    return TDS_CST4(st)->_cancelled;
}
static inline void tds_st_set_bytes(MPI_Status *st, size_t n)
{
    TDS_ST4(st)->_ucount = n;
}
static inline void tds_st_set_uncancelled(MPI_Status *st)
{
    TDS_ST4(st)->_cancelled = 0;
}
#else
static inline size_t tds_st_bytes(const MPI_Status *st)
{
    MPI_Count n = 0;
    PMPI_Get_elements_x(st, MPI_BYTE, &n);
    return n == MPI_UNDEFINED || n < 0 ? 0 : (size_t)n;
}
static inline int tds_st_cancelled(const MPI_Status *st)
{
    int c = 0;
    PMPI_Test_cancelled(st, &c);
    return c;
}
static inline void tds_st_set_bytes(MPI_Status *st, size_t n)
{
    PMPI_Status_set_elements_x(st, MPI_BYTE, (MPI_Count)n);
}
static inline void tds_st_set_uncancelled(MPI_Status *st)
{
    PMPI_Status_set_cancelled(st, 0);
}
#endif

/* The program's view of a status from a single-completion call (Recv,
 * Mrecv, Wait, Test, Waitany, Testany, probes, Request_get_status): the shim
 * fills a status of its own and copies it out. Every field the MPI library
 * does not write stays the program's: the shim's status starts as a copy of
 * the program's (tds_status_seed). MPI_ERROR, which Open MPI keeps (MPI-3.1
 * §3.2.5: these calls do not set it) and MPICH 4.0's probes overwrite with
 * MPI_SUCCESS; the cancelled flag, which MPICH's probes leave (found by the
 * transparency test built with ASan under MPICH, whose stack differs).
 * The program's status may be aligned to 4 bytes only (tds_status4). */
static inline void tds_status_seed(MPI_Status *st, const MPI_Status *user)
{
    if (user != MPI_STATUS_IGNORE)
        *st = *TDS_CST4(user);
    else
        tds_st_set_error(st, MPI_SUCCESS);
}
static inline void tds_status_out(MPI_Status *user, const MPI_Status *st)
{
    if (user != MPI_STATUS_IGNORE)
        *TDS_ST4(user) = *st;
}

/* A receive that covers the message the last found MPI_Iprobe saw, still
 * in the MPI library's queue (tds_probe.c, tds_probed): it cannot block,
 * so MPI's blocking receive takes it (issue 38: the MPI library's request
 * and test cost more) and forgets the message (gen_wrappers.py, MATCHING).
 * Single-threaded (the flat entries, and the general one without
 * MPI_THREAD_MULTIPLE: another thread could take the message, and a
 * blocking call must not hold tdshim's lock). */
/* rc of a blocking receive that failed: the message was taken all the same
 * when it was truncated (tds_recv.c; not declared cold here: the flat
 * entries' probed receive, which calls it, would then go to a cold section
 * with its unwrapping out of line, icount probe bcj +13) */
int tds_recv_truncated(int rc);
/* a blocking receive that returned rc took its message (the count's rule) */
static inline __attribute__((always_inline)) int tds_recv_taken(int rc)
{
    return __builtin_expect(rc == MPI_SUCCESS, 1) || tds_recv_truncated(rc);
}
static inline __attribute__((always_inline)) int tds_probed_covers(int source, int tag, MPI_Comm comm)
{
    return comm == tds_probed_get(comm) && (source == tds_probed_get(source) || source == MPI_ANY_SOURCE) &&
           (tag == tds_probed_get(tag) || tag == MPI_ANY_TAG);
}

/* ---- request table (tds_req.c) ---- */
/* TDS_RQ_PAIR: an MPI_Isendrecv's generalized request (tds_pair.c) */
enum { TDS_RQ_SEND = 1, TDS_RQ_RECV = 2, TDS_RQ_PAIR = 3 };

enum { TDS_OWN_TYPE = 1, TDS_OWN_BIG = 2 }; /* tds_rq.owns_type */
#define TDS_SEND_DETACHED (-1)                  /* tds_rq.sendmode */
#define TDS_SEND_EAGER_START (-2)               /* ...a persistent standard send whose every Start is one */
typedef struct tds_rq {
    MPI_Request req;           /* the handle the program holds */
    struct tds_rq *next;       /* hash chain / free list */
    struct tds_rq **pprev;     /* the link pointing here while in the table: O(1) removal */
    unsigned scan_gen;         /* claimed by the completion call of this generation */
    uint8_t kind, persistent, copy, active, plain; /* plain: predefined contiguous type */
    uint8_t foreign;           /* on a communicator with another job's processes: as written, not primary
                                * (a persistent send: 1; 2: to no rank of its communicator, MPI's error) */
    uint8_t hdr[TDS_HDR_MAX];  /* send: header sent; recv (datatype mode): header received */
    void *bounce;              /* copy mode buffer (header + packed data) */
    size_t bounce_cap;
    /* the program's arguments (persistent sends re-pack at every Start) */
    void *buf;
    int count;
    MPI_Datatype type;
    int peer, tag;
    MPI_Comm comm;
    int sendmode;              /* persistent sends: which PMPI_*_init; TDS_SEND_DETACHED: a standard send
                                * returned before MPI completed it (tds_send_eager), an orphan;
                                * TDS_SEND_EAGER_START: a persistent one whose Starts send so */
    size_t ubytes;             /* count * size(type) */
    int tsize;                 /* size(type) */
    /* receives: the communicator's rank map (NULL: MPI_COMM_WORLD), kept
     * if the program frees the communicator while the receive is pending */
    int *cmap;
    uint8_t owns_type;         /* TDS_OWN_TYPE: type is tdshim's duplicate of the program's (packed
                                * receives of derived types outside Open MPI, tds_recv.h recv_fields);
                                * TDS_OWN_BIG: the bounce buffer is larger than TDS_WIRE_MAX, freed
                                * with the entry rather than kept for the next operation */
    uint8_t finished;          /* receive already finished (Request_get_status) */
    uint8_t scope;             /* receives: 1 + tds_poll_scope(tag, comm) once asked (tds_complete.c
                                * rq_scope; the configuration is fixed at MPI_Init), 0 before */
    uint8_t part;              /* 1: a partitioned request, 2: one with a header companion, `inner` (tds_part.c,
                                * "partitioned communication"); 0 in every other entry, free ones too */
    MPI_Status saved;          /* ...and the status the program saw then */
    /* MPI_Isendrecv* (tds_pair.c): `inner` its send, `rreq` its
     * receive, `req` the program's handle (a generalized request); dnext
     * links the pending pairs */
    MPI_Request inner, rreq;
    struct tds_rq *dnext;
    /* a flat receive's cell (tds_hs_promote): bounce is the cell's wire
     * until the entry is released, when its own buffer comes back */
    struct tds_cell *cell;
    void *cell_bounce;
    size_t cell_cap;
} tds_rq;

/* ---- plain receives (issue 28) ----
 * A header-free nonblocking receive on MPI_COMM_WORLD posted by the flat
 * entry (tds_flat.c, tds_fast_select) needs nothing at completion but to be
 * known as a receive: its data is in the program's buffer, its source is
 * a world rank and its size is in the status. So it gets no request entry,
 * only its handle in this open-addressed set (linear probing). The
 * rare operations that need an entry (MPI_Request_free, _get_status,
 * MPI_Cancel's completion, pairs) promote the handle to one
 * (tds_rq_find). Deletion shifts the chain back (no tombstones), so at a
 * load of at most 1/4 a look-up reads one or two slots; the set grows
 * (doubles) only when live handles fill a quarter of it: no allocation per
 * message. */
#define TDS_HS_EMPTY ((uintptr_t)0) /* MPI_Request value 0 is never a live handle */
typedef struct tds_hslot {
    uintptr_t k;               /* the handle */
    struct tds_cell *v;        /* header mode: its cell; header-free: NULL */
} tds_hslot;
/* The flat receives' entries append their handles to a ring first, in
 * posting order, and the slots get them only when something looks one up
 * (tds_hs_find empties the ring into the slots where the handle may be in
 * it: a ring longer than TDS_HS_NEAR, or a shorter one that holds it;
 * every user of the set sees the same set). A program that posts a window of receives and
 * completes them with MPI_Waitall never hashes them: waitall_flat
 * (tds_complete.c) finds them in the array by walking the ring beside it,
 * or by one memcmp when the array is the ring (issue 28: the set's insert
 * and take were 45 of a received message's 113 instructions; the append
 * and the memcmp cost about 6). A completed
 * receive's handle is never in the ring: every completion path but that
 * walk takes its handle out of the ring (tds_hs_take, a short ring's walk)
 * or looks it up with tds_hs_find, which empties the ring first. */
#define TDS_HS_RING 128
/* the flat MPI_Testany and MPI_Testsome take arrays of at most this many requests (tds_flat.c) */
#define TDS_FTEST_N 8
typedef struct tds_hset {
    tds_hslot *slot;
    unsigned mask, n, limit;   /* n live in the slots; grown at limit */
    unsigned rn;               /* handles in the ring, not in the slots */
    unsigned flushes;          /* times the ring was emptied into the slots */
    MPI_Request rk[TDS_HS_RING]; /* the ring's handles, as the program holds them (one memcmp against its array) */
    struct tds_cell *rv[TDS_HS_RING]; /* ...and their cells (header-free: NULL, or TDS_OOS; a flat receive
                                       * of the unclassified runs never writes its own: NULL) */
} tds_hset;
/* A header-free flat receive's value in the set when the receive is out of
 * the idle notions' scope (tds_poll_scope: its tag ignored, say; posted by
 * flat_cls_Irecv, tds_flat.c), NULL when in scope: a mark, no cell (header-
 * free makes none). Where a value is taken for a cell (tds_flat_done,
 * batch_one, tds_hs_promote, lost_others) the mark is a cell-less receive;
 * where a poll asks its scope (test_near, test_missed, ftest_rest) it is out. */
extern char tds_oos_mark;
#define TDS_OOS ((struct tds_cell *)(void *)&tds_oos_mark)
/* With a header (pb_static algorithms: bcj), a flat receive of at
 * most TDS_CELL_DATA user bytes lands in a cell: its wire bytes (header and
 * data) and where they go. Cells come from a free list, never move while
 * MPI writes into them (the set holds pointers), and are allocated 64 at a
 * time when the list runs dry. */
#define TDS_CELL_DATA 120
#define TDS_TC_MORE 6 /* plain types kept besides the type cache's two (tds_type_cache_set) */
typedef struct tds_cell {
    struct tds_cell *next;     /* free list */
    void *buf;                 /* the program's buffer */
    size_t ub;                 /* its capacity in bytes (count x size of the type) */
    int tsize;                 /* size of the (predefined) type */
    uint8_t wire[TDS_HDR_MAX + TDS_CELL_DATA];
} tds_cell;


/* ---- the one process-wide state ---- */
/* measure mode: notion c's bit in tds.cand (TDR_CAND_*) */
#define TDS_CAND_BIT(c) (1u << (c))
typedef struct tds_ctl_slot {
    MPI_Request req;
    uint8_t wire[TD_WIRE_SIZE];
} tds_ctl_slot;

typedef struct tds_state {
    int on;                    /* wrappers active: between our Init and Finalize */
    int fast;                  /* on, and no lock to take (not MPI_THREAD_MULTIPLE): the wrappers' one test */
    int rank, size;
    MPI_Comm ctl;              /* private duplicate of MPI_COMM_WORLD */
    MPI_Comm self;             /* private duplicate of MPI_COMM_SELF, errors returned (tds_recv.c unpack_derived) */
    int comm_keyval;           /* attribute caching the world-rank map of a comm */
    tds_config cf;
    td_ctx core;
    tdr_rank m;                /* measurements for the report */
    int hdr_len;               /* TDS_HDR_FIXED + algo->pb_size; 0 when header-free */
    int nohdr;                 /* header-free (DESIGN.md §4): messages go out as the program wrote them,
                                * the receiver tells their kind from the envelope (tds_env_kind) */
    int nh_slow;               /* header-free, but each message needs a look (ignored tags or empty
                                * messages, call sites): no fast path */
    int nenv_tag;              /* header-free with TDSHIM_NOTIFY=tag:N: N (else -2, no tag): the
                                * notification's envelope, shared with the program's own empty messages
                                * to itself on tag N of MPI_COMM_WORLD, told apart by send order */
    uint64_t nenv_sent, nenv_recv; /* messages of that envelope sent and received */
    uint64_t *nenv_notes;      /* the send positions of the notifications among them, oldest first */
    size_t nenv_head, nenv_n, nenv_cap;
    size_t copy_max;
    size_t fast_lim;           /* a send of ub user bytes may take the fast path if ub - fast_min < fast_lim */
    size_t fast_min;           /* 1 with TDSHIM_IGNORE_EMPTY (zero-byte sends are not primary), else 0 */
    int detects;               /* the algorithm can announce (not 'none') */
    /* eager emulation (tds_send.c tds_send_eager): a standard send of ub
     * user bytes may have completed eagerly natively but not with the
     * header if ub > eager_lo and it is near an eager limit: a power of two
     * from 1 KiB to 16 KiB or one of eager_lim (the MPI library's
     * published ones first, then UCX_RNDV_THRESH's: eager_init in
     * tds_init.c), each once */
    size_t eager_lo;
    size_t eager_lim[16];
    int neager;
    int neager_mpit;           /* ...of which the MPI library's (read from eager_src) */
    const char *eager_src;     /* "Open MPI's MCA variables" or "MPI_T" */
    int ndetached;             /* standard sends returned before MPI completed them (orphans, TDS_SEND_DETACHED) */
    int detach_reap;           /* ...how many make tds_send_eager reap the orphans first */
    size_t detached_bytes;     /* ...their data */

    /* control sends in flight (never block the program on one) */
    tds_ctl_slot **slots;
    int nslots;
    int ctl_busy;              /* ...slots handed out since reap_ctl_sends last found all done (an upper
                                * bound: 0, and an idle rank's poll tests none) */

    /* launch check (tds_preload.c): the job's prefix of names on the MPI
     * name service, and which of them this rank published */
    char pl_prefix[96];
    uint8_t pl_mine, pl_verdict;

    unsigned scan_gen;         /* generation of the last completion call's scan */

    tds_hset hs;
    struct tds_cell *keep_v;   /* flat_cls_Irecv: the value of the receive it posts (NULL, TDS_OOS) */               /* flat receives: handles, and header mode's cells */
    tds_cell *cells;           /* free cells */
    uint8_t *fsend;            /* the flat sends' wire buffer (tds_flat.c, TDS_FSEND bytes) */
    size_t keep_ub;            /* ...the user bytes of the last one */
    size_t cell_max;           /* user bytes a flat receive may have: min(TDS_CELL_DATA, copy_max) */
    /* request table: hash by handle, chained; entries recycled */
    tds_rq **rq_hash;
    unsigned rq_mask;
    size_t rq_count;
    size_t rq_limit;           /* rq_count that makes the table grow (0: no table yet) */
    tds_rq *rq_free;

    unsigned tleft;            /* fast-path calls until the next timed one (>= 1 after init) */
    MPI_Datatype tc_type;      /* last predefined type seen, and its size */
    int tc_size;
    unsigned tc_cmax;          /* elements of that type a flat receive's cell holds (TDS_CELL_DATA bytes) */
    MPI_Datatype tc_prev;      /* the plain type cached before it, its size and cell capacity (tds_type_cache_set) */
    int tc_prev_size;
    unsigned tc_prev_cmax;
    struct tds_tc {            /* plain types the two cached ones displaced, most recent in no order (tds_type_cache_set) */
        MPI_Datatype type;
        int size;
        unsigned cmax;
    } tc_more[TDS_TC_MORE];
    uint8_t tc_nmore, tc_next; /* ...entries used; the one the next new type replaces once all are */
    uint64_t tc_elems;         /* elements of that type the header-free flat sends sent, not yet in
                                * prim_sent_bytes (tds_sent_bytes_fold: when the cache changes, at a report) */
    double outer_t0, nested_dt; /* slow sections inside a sampled fast path */
    uint64_t ctl_seen;         /* control messages handled so far */
    uint64_t *sent_to;         /* primary messages sent to each world rank */
    uint64_t *ctl_sent_to;     /* control messages sent to each world rank */
    double t_progress;         /* TDSHIM_VERBOSE: when the last progress line was printed */
    uint64_t spin_mark;        /* spin: 1 + messages sent and received when last seen busy again (0: not) */
    int pending_exit;          /* TDSHIM_NOTIFY=exit fired */
    int warned_violation, warned_cancel, warned_unsafe, warned_error, warned_trunc, warned_lost;
    uint8_t dtnull;            /* count-0 MPI_DATATYPE_NULL: 0 not asked yet, else 1 | 2 (sends taken) | 4 (receives
                                * taken) (tds_wire.c, tds_dtnull_ask) */
    uint64_t viol_seen;        /* core violations already counted by tag */
    uint8_t poll_armed;        /* measure mode: an empty poll to measure from (none since the last activity) */
    double poll_cpu;           /* ...this thread's CPU time at its end */
    uint8_t poll_gap;          /* ...and the interval before it was a busy gap */
    uint64_t poll_recv0;       /* primaries received by then */
    double poll_w;             /* measure mode: when the last empty poll began (the poll clock, tds_pnow) */
    uint8_t poll_cpu_next;     /* ...it came after a longer interval than TDSHIM_SPIN_GAP: CPU time at its end */
    uint32_t poll_tick;        /* ...such polls since busy gaps are sampled (busy_gap_arm) */
    /* measure mode: the idle notions side by side (cand_poll): judged passive, and the primaries sent and
     * received by then; spin's run of polls in scope and when the last one began */
    uint8_t cand;              /* ...bit TDS_CAND_BIT(c) for notion c (TDR_CAND_*) */
    uint64_t cand_s0, cand_r0; /* ...the one baseline of those that stand (cand_judge) */
    uint64_t cand_b0;          /* ...and the primary bytes sent when spin judged it passive */
    int64_t cand_spin_run;     /* 64 bits: hpcc polls 10^7 times a second, an int would wrap in 3.6 minutes */
    double cand_spin_w;
    int found_tag;             /* measure mode: the tag of the last message a probe found (-1: none since) */
    struct tds_fprobe {        /* the flat MPI_Iprobe's arguments across MPI's call (tds_probe.c) */
        int source, tag;
        MPI_Comm comm;
        int *flag;
        MPI_Message *message;
        MPI_Status *status;
    } fprobe;
    /* an empty MPI_Test* of an active rank judges nothing (a notification
     * configured, TDSHIM_IDLE neither test nor spin: idle_poll_notion's
     * case that does nothing but count), tds_fast_select */
    int quiet_test;
    struct tds_ftest {         /* the flat MPI_Test's, MPI_Testany's, MPI_Testsome's across MPI's call (tds_flat.c) */
        int *flag;
        MPI_Status *st;        /* the program's status, or tds_t.st_one; Testsome: the statuses MPI writes */
        MPI_Request h;         /* MPI_Test: the handle, */
        unsigned j;            /* ...its place in the ring (near its end: hs_near_last) */
        int n;                 /* MPI_Testany, MPI_Testsome: the number of requests, */
        int *index;            /* ...the index or indices MPI writes, */
        int *outcount;         /* ...MPI_Testsome's number done, */
        MPI_Request *reqs;     /* ...the program's array, */
        MPI_Request hv[TDS_FTEST_N + 1]; /* ...and its handles before the call (the last place: tds_flat.c testany_ctl) */
    } ftest;
    double spin_w;             /* measure mode: the poll clock in the last empty poll of a rank spin judged passive */
    double spin_cpu, spin_cpu_w; /* ...the thread's CPU time then or before, and when it was read (cand_poll) */
    uint8_t spin_find;         /* ...no more ranks on this node than CPUs: read at a find instead (tds_init.c
                                * spin_clock; tds_progress.c tds_spin_found) */
    uint8_t spin_arm;          /* ...at the next find: spin stood at the last empty poll, none found since */
    uint8_t spin_based;        /* ...read at a find since the last empty poll: the find is judged */
    uint8_t spin_k;            /* ...finds that judgement counts for (1, or TDS_FIND_SAMPLE once sampled) */
    int spin_tag;              /* ...the tag of that find */
    uint64_t unsafe_seen;      /* td_stats.unsafe already warned about */
    uint64_t unsafe_by_seen[TD_EV_N]; /* ...td_stats.unsafe_by */
    struct tds_mprobed {
        MPI_Message msg;
        MPI_Comm comm;
        size_t bytes;          /* as the program sees them (SIZE_MAX: unknown) */
    } *mprobed;                /* matched messages not yet received */
    int nmprobed, capmprobed;
    tds_rq *orphans;           /* requests the program freed while active */
    tds_rq *pairs;             /* MPI_Isendrecv* whose send or receive is pending (tds_pair.c) */
    int npairs, in_pairs;      /* ...how many; tds_pairs_progress running */
    int nheld;                 /* pending pairs + orphans (receives the program freed): what completion
                                * calls and waiting loops finish first (tds.held_work) */
    void *bsend_user;          /* MPI_Buffer_attach: the program's buffer... */
    MPI_Count bsend_user_size;
    void *big_spare;           /* the bounce buffer of the last message over TDS_WIRE_MAX bytes, for the
                                * next (tds_req.c): a fresh one costs MPICH/UCX seconds per 2 GiB */
    size_t big_spare_cap;
    void *bsend_ours;          /* ...and the larger one tdshim attached instead */
    MPI_Comm last_comm;        /* one-entry cache of the world-rank map */
    MPI_Comm fcomm;            /* the last communicator seen with MPI_COMM_WORLD's group in its order (a
                                * duplicate; else MPI_COMM_WORLD): the flat entries take it as
                                * MPI_COMM_WORLD (tds_comm.c, cmap_of; cleared when it is freed) */
    MPI_Comm fcomm_rx;         /* ...for flat receives: fcomm, except header-free with a notification tag
                                * (whose envelope test assumes MPI_COMM_WORLD): then MPI_COMM_WORLD */
    MPI_Comm xcomm;            /* the last other intracommunicator seen of this job's processes only (a
                                * split, a group in another order; else MPI_COMM_WORLD): the flat
                                * entries translate its ranks through xmap (cmap_of; cleared when freed) */
    MPI_Comm xcomm_rx;         /* ...for flat receives: xcomm, except header-free with a notification tag */
    const int *xmap;           /* ...its world ranks (the map's), xn of them (0: none) */
    unsigned xn;
    int x_seen;                /* a flat receive may have been on xcomm: a source in a flat receive's
                                * status is not a world rank (tds_cell_slow names no communicator) */
    int *last_map;
    int last_map_n;
    /* hooks set at init (tds_init.c), so that progress (tds_progress.c)
     * runs work of the layers above it without calling up into them:
     * held_work finishes the held pairs and orphans (tds.nheld),
     * reap_orphans the orphans alone, exit_now
     * ends the program under TDSHIM_NOTIFY=exit */
    void (*held_work)(void);
    void (*reap_orphans)(void);
    void (*exit_now)(void);
    tds_rq plain_rq;           /* what tds_recv_finish needs of a plain receive (tds_plain_slow) */
} tds_state;
_Static_assert(TDR_NCAND <= 8, "tds.cand has a bit for every candidate");

extern tds_state tds;
/* the header-free flat sends count elements of the cached type, not bytes
 * (no multiplication on their path, issue 28): into the report's bytes
 * before the cache changes and before a report reads them */
static inline void tds_sent_bytes_fold(void)
{
    tds.m.prim_sent_bytes += tds.tc_elems * (uint64_t)(unsigned)tds.tc_size;
    tds.tc_elems = 0;
}

/* The state of one thread's call in progress (per thread under
 * MPI_THREAD_MULTIPLE, where a call lets other threads in while it waits:
 * tds_mt_pause). Thread-local, initial-exec: as cheap as a global. */
typedef struct tds_thread_slot {
    uint64_t work;             /* primary messages this thread sent or received */
    uint64_t work_idle;        /* ...when it was last idle */
    uint64_t gen;              /* the rank's idle generation then (tds_mt.c) */
    int idle, registered;
    struct tds_thread_slot *next;
} tds_thread_slot;
typedef struct tds_thread {
    /* bounce buffer of blocking calls and of the send being posted */
    uint8_t *scratch;
    size_t scratch_cap;
    struct tds_rq **rq_found;  /* entries of a completion call's requests (NULL: not ours) */
    MPI_Request *rq_saved;     /* a Test* call's handles, saved before MPI frees them */
    MPI_Status *st_scratch;
    MPI_Status st_one;         /* a single completion call's, the program's being MPI_STATUS_IGNORE (no local
                                * whose address escapes: test_near's last call stays a tail call) */
    int rq_found_cap;
    tds_rq brq;                /* the blocking receive in progress */
    int recv_err;              /* a receive just finished found what MPI reports as an error (tds_recv_err) */
    int rx_rc;                 /* the failed return code of the completion call being finished (tds_rx_rc) */
    MPI_Request *brq_wait;     /* ...its request while it waits (else NULL) */
    int64_t empty_polls_run;   /* probe:N, spin: consecutive empty polls without a send (an int wraps
                                * within the hour of an idle rank's polls: negative, it judged no more) */
    uint64_t run_work;         /* ...primary messages sent and received when it was last seen (poll_run) */
    double spin_last;          /* spin: when tdshim finished with the last empty poll */
    double poll_t0;            /* spin: when the current poll entered tdshim (tds_poll_enter) */
    unsigned unscoped_run;     /* an active rank's polls out of scope since it last probed for control
                                * messages (tds_progress.c, TDS_UNSCOPED_CTL) */
    int missed_at;             /* the index of the receive in scope that the last empty Test* set held
                                * (tds_complete.c, test_missed: asked first) */
    struct tds_rq *busy_q;     /* the receive out of scope the last MPI_Test of an entry found (tds_complete.c,
                                * test_busy: taken without the table lookup while it holds that handle) */
    uint64_t busy_m0;          /* ...tds_found_mark() before its MPI_Test */
    uint64_t nvcsw;            /* measure mode: this thread's voluntary context switches when it last asked
                                * (tds_progress.c, thread_blocked) */
    /* MPI_THREAD_MULTIPLE (tds_mt.c): this thread's place in the rule "the
     * rank is passive when every thread using MPI is" */
    tds_thread_slot me;
} tds_thread;
extern __thread tds_thread tds_t __attribute__((tls_model("initial-exec")));

/* A completion call's return code while tdshim finishes the requests it
 * completed, where it is not MPI_SUCCESS (rare: tds_t.rx_rc, else 0).
 * MPICH 4.0 writes nothing of a truncated message that came before its
 * receive was posted, and the status's count is then stale: only the code
 * says that a receive with no header was a truncated message of tdshim's
 * (tds_recv.c, lost_header), MPI_ERR_TRUNCATE from a single completion,
 * or MPI_ERR_IN_STATUS, where every status's MPI_ERROR is MPI's. */
static inline __attribute__((always_inline)) void tds_rx_rc(int rc)
{
    if (__builtin_expect(rc != MPI_SUCCESS, 0))
        tds_t.rx_rc = rc;
}
static inline __attribute__((always_inline)) void tds_rx_end(int rc)
{
    if (__builtin_expect(rc != MPI_SUCCESS, 0))
        tds_t.rx_rc = MPI_SUCCESS;
}


/* this thread sent or received a primary message: a spin run starts over,
 * and the thread is busy for the rule of tds_mt.c */
static inline void tds_worked(void)
{
    tds_t.empty_polls_run = 0;
    tds_t.me.work++;
}

/* re-entry guard: thread-local, initial-exec so the check is one load */
extern __thread int tds_inside __attribute__((tls_model("initial-exec")));
#define TDS_BYPASS() (__builtin_expect(!tds.on || tds_inside, 0))

/* Time accounting (report categories, tdr.h).
 * Slow paths (control sends, progress, deferral, finalize) are exclusive
 * sections (tdr_enter/tdr_leave: nested time goes to the innermost).
 * Fast paths (send/receive bookkeeping) are timed by sampling: one call in
 * TDS_TSAMPLE is timed and weighted by TDS_TSAMPLE (counts stay exact). A
 * clock read costs 66-75 ns on the VMs here, as much as the rest of a send
 * path; at one timed call in 1024 (two to four reads) a message pays under
 * 1/256 of a read (tests/perf/icount.sh asserts it). A sampled call's time
 * is capped at TDS_TSAMPLE_CAP seconds before it is weighted: no fast path
 * takes that long by its own work (the MPI call inside is paused out), so a
 * longer one was descheduled, and weighting a preemption by 1024 would
 * charge tdshim seconds it never spent. A sampled fast path subtracts the
 * slow sections it contained (a control message sent by the algorithm). With call sites on, every call is timed. */
#define TDS_TSAMPLE 1024
#define TDS_TSAMPLE_CAP 20e-6
static inline void tds_enter(tdr_cat c)
{
    tdr_enter(&tds.m, c);
    if (tds.m.tdepth == 1)
        tds.outer_t0 = tds.m.tmark;
}
static inline void tds_leave(void)
{
    tdr_leave(&tds.m);
    if (tds.m.tdepth == 0)
        tds.nested_dt += tds.m.tmark - tds.outer_t0;
}
/* the timed call of a sample: re-arms the countdown (every call with call
 * sites on), clears the nested time, reads the clock (tds_state.c) */
double tds_tsample(void);
/* a countdown, so an untimed call costs one decrement and one branch */
static inline double tds_tstart(void)
{
    if (__builtin_expect(--tds.tleft != 0, 1))
        return 0.0;
    return tds_tsample();
}
/* accounts one call of category cat; returns its time (0 if not sampled) */
static inline double tds_tstop(int cat, double t0)
{
    tds.m.n_cat[cat]++;
    if (__builtin_expect(t0 == 0.0, 1))
        return 0.0;
    double dt = tdr_now() - t0 - tds.nested_dt;
    tds.m.t_cat[cat] += tds.m.sites ? dt : (dt < TDS_TSAMPLE_CAP ? dt : TDS_TSAMPLE_CAP) * TDS_TSAMPLE;
    return dt;
}

/* A sampled section leaves the MPI call it makes out of its time: the
 * categories are tdshim's own work (the blocking send stops its clock
 * before the call; a nonblocking one has bookkeeping after it). */
static inline double tds_tpause(double t0)
{
    return __builtin_expect(t0 == 0.0, 1) ? 0.0 : tdr_now();
}
static inline double tds_tresume(double t0, double paused)
{
    return __builtin_expect(paused == 0.0, 1) ? t0 : t0 + (tdr_now() - paused);
}


/* The poll clock: the measure mode's and TDSHIM_IDLE=spin's intervals
 * between polls (tds.poll_w, spin_w, spin_cpu_w, cand_spin_w, tds_t.
 * spin_last, poll_t0), s. Only its differences are used, never mixed with
 * tdr_now's (the report's) readings. On x86-64 with an invariant TSC it
 * reads the TSC, scaled by a rate measured across MPI_Init
 * (tds_pclock_calibrate) and measured again against tdr_now every
 * TDS_PCLOCK_WINDOW s of polling (sooner at first: tds_pclock.c
 * pclock_set), where it is anchored anew (a rate that
 * changes under the process, a VM moved to another host, is followed; a
 * TSC that jumps back takes the slow path until it is anchored again);
 * else, or if the rate looked wrong, it is tdr_now. Why: clock_gettime
 * through a paravirtual clock (kvm-clock) reads the vDSO's pages and
 * orders its TSC read after every earlier instruction, 27 ns on the 2-core
 * VM in cache and 100 ns while the program's last memory access misses
 * (a random update into 64 MiB between polls, hpcc's MPIRandomAccess's
 * loop); the TSC: 4 and 12 ns (bench/RESULTS.md, "The poll clock").
 * Relaxed atomics: a thread that reads the fields while another anchors
 * them gets one reading off by at most one window's drift. */
#define TDS_PCLOCK_WINDOW 0.05
typedef struct {
    double s_per_tick; /* > 0: calibrated */
    double t0;         /* tdr_now() at tsc0 */
    uint64_t tsc0;
    uint64_t win;      /* the window in ticks: past tsc0 + win, tdr_now again (0: not calibrated) */
} tds_pclock_t;
extern tds_pclock_t tds_pclock;
void tds_pclock_anchor(void);    /* before MPI_Init: the start of the measurement */
void tds_pclock_calibrate(void); /* after it: the rate (waits up to 2 ms if MPI_Init took less) */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TDS_PCLOCK_TSC 1
static inline uint64_t tds_rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return (uint64_t)hi << 32 | lo;
}
double tds_pnow_anchor(uint64_t c); /* tds_pclock.c: tdr_now, and the clock anchored there */
#endif
static inline double tds_pnow(void)
{
#ifdef TDS_PCLOCK_TSC
    uint64_t c = tds_rdtsc(), d = c - __atomic_load_n(&tds_pclock.tsc0, __ATOMIC_RELAXED);
    if (__builtin_expect(d < __atomic_load_n(&tds_pclock.win, __ATOMIC_RELAXED), 1)) {
        double t0, k;
        __atomic_load(&tds_pclock.t0, &t0, __ATOMIC_RELAXED);
        __atomic_load(&tds_pclock.s_per_tick, &k, __ATOMIC_RELAXED);
        return t0 + (double)(int64_t)d * k; /* d < win: a signed conversion, one instruction */
    }
    return tds_pnow_anchor(c); /* not calibrated (win 0), a window past, or the TSC behind tsc0 */
#else
    return tdr_now();
#endif
}

/* print the message and abort the job (MPI_Abort) */
void tds_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void tds_check_core_warn(void);       /* warn once of what the core found wrong; never aborts */
/* tds_check_core_warn where there is something to warn of: two loads and
 * compares inline (an idle rank's empty poll calls it at every turn) */
static inline void tds_check_core(void)
{
    if (__builtin_expect(tds.core.stats.unsafe != tds.unsafe_seen || (tds.core.error != 0 && !tds.warned_error), 0))
        tds_check_core_warn();
}
void tds_core_failed(void) __attribute__((cold)); /* tds_check_core, out of the fast path */

#endif
