/*
 * The PMPI layer of tdshim (DESIGN.md §2, shim/mpi): internal interface.
 *
 * All mutable state of the library lives in the one process-wide struct
 * `tds` (STYLE: no scattered globals). The entry points MPI_* are generated
 * from p2p.list (gen_wrappers.py) and call the tds_body_* functions
 * written by hand in tds_p2p.c, tds_req.c and tds_init.c.
 */
#ifndef TDS_H
#define TDS_H

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
#include "tds_env.h"
#include "tds_hdr.h"

/* ---- configuration (tds_config.c) ---- */
enum { TDS_NOTIFY_NONE = 0, TDS_NOTIFY_TAG, TDS_NOTIFY_EXIT };
enum { TDS_IDLE_PROBE = 0, TDS_IDLE_TEST, TDS_IDLE_BLOCKING, TDS_IDLE_PCONTROL, TDS_IDLE_API, TDS_IDLE_SPIN };
/* TDSHIM_IDLE=spin: empty polls in a row, each within TDSHIM_SPIN_GAP of
 * the one before, that make a rank passive (tds_init.c, spin_poll) */
#define TDS_SPIN_POLLS_DEFAULT 16
enum { TDS_PB_AUTO = 0, TDS_PB_COPY, TDS_PB_DATATYPE, TDS_PB_NONE };

typedef struct tds_range {
    int lo, hi;
} tds_range;

typedef struct tds_config {
    const struct td_algo *algo;
    td_cfg cfg;                /* rank/size filled at init */
    int notify, notify_tag, exit_code;
    int idle, idle_polls;      /* probe:N -> idle_polls = N (1 for plain probe); spin:N likewise */
    double spin_gap;           /* TDSHIM_SPIN_GAP (seconds): longest program time between two polls of a spin */
    tds_range *ignore;         /* TDSHIM_IGNORE_TAGS, sorted ranges */
    int nignore;
    int ignore_empty;          /* TDSHIM_IGNORE_EMPTY: zero-byte messages are not primary */
    int threads;               /* TDSHIM_THREADS: threads using MPI before a rank can be passive (tds_mt.c) */
    int piggyback;
    int want_text, want_json;
    char report_dir[512];
    int report_group;          /* TDSHIM_REPORT_MODE=group */
    int callsites;
    double finalize_timeout;
    int mixed_native;          /* TDSHIM_MIXED=native: a job with ranks not under tdshim runs natively */
    double mixed_timeout;      /* TDSHIM_MIXED_TIMEOUT (seconds; 0: no launch check) */
    int verbose;
    tdr_kv kv[TDS_ENV_N];      /* effective values, for the report header */
} tds_config;

/* Parses every TDSHIM_* variable. On a bad value returns -1 and writes the
 * one-line user message into err. tag_ub: MPI_TAG_UB of MPI_COMM_WORLD. */
int tds_config_parse(tds_config *cfg, int tag_ub, char *err, size_t errlen);
void tds_config_free(tds_config *cfg);
/* One line on out for each TDSHIM_* variable of the environment that
 * neither the library (TDS_ENV_LIST) nor its tools (TDS_ENV_TOOLS) know,
 * naming the nearest known one; returns how many. Not fatal. */
int tds_config_unknown(FILE *out);

/* ---- launch check (tds_preload.c) ----
 * Are all ranks of the job under tdshim? Asked before any communication on
 * MPI_COMM_WORLD, through the MPI name service only. 1: yes (or the check
 * is off or impossible), go on; 0: no, and TDSHIM_MIXED=native: the rank
 * passes every call through; with TDSHIM_MIXED=stop it does not return. */
int tds_preload_check(void);
void tds_preload_unpublish(void); /* at MPI_Finalize */

/* ---- piggyback header: tds_hdr.h (DESIGN.md §4) ---- */

/* Messages up to this many user bytes are copied into a bounce buffer;
 * larger ones go through a struct datatype (no copy). Measured with
 * tests/mpi/pbsize (2 ranks, Open MPI 4.1.4 vader, 2-core VM, best of 5):
 * round trip copy/datatype 2.21/2.92 us at 2 KiB, 5.74/4.39 at 4 KiB,
 * 8.55/6.53 at 8 KiB: copying wins up to 2 KiB, the datatype above. */
#define TDS_COPY_MAX_DEFAULT 2048

/* The most user bytes a message may have for tdshim's copy layout to post it
 * as an int count of MPI_BYTE (header included). A larger one (an MPI-4.0
 * large count, or an int count of a large type) goes with the struct layout
 * when tdshim sends it; received in the copy layout (MPICH), its bounce
 * buffer is posted as one element of a contiguous type of bytes
 * (tds_p2p.c, issue 29). */
#define TDS_WIRE_MAX ((size_t)INT_MAX - TDS_HDR_MAX)

/* ---- status fields on the fast path ----
 * The byte count and the cancelled flag of a status. With Open MPI
 * (3.x-5.x: `_ucount` bytes, `_cancelled`) they are read and written in
 * place: PMPI_Get_count + PMPI_Test_cancelled + PMPI_Status_set_elements_x
 * are three calls with argument checks on every completed message, a
 * measurable part of the per-message budget. Writing _ucount in bytes is
 * what MPI_Status_set_elements_x(st, MPI_BYTE, n) does there. Other MPIs
 * take the portable calls. */
#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION >= 3 && OMPI_MAJOR_VERSION <= 5
static inline size_t tds_st_bytes(const MPI_Status *st)
{
    return st->_ucount;
}
static inline int tds_st_cancelled(const MPI_Status *st)
{
    return st->_cancelled;
}
static inline void tds_st_set_bytes(MPI_Status *st, size_t n)
{
    st->_ucount = n;
}
static inline void tds_st_set_uncancelled(MPI_Status *st)
{
    st->_cancelled = 0;
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
 * transparency test built with ASan under MPICH, whose stack differs). */
static inline void tds_status_seed(MPI_Status *st, const MPI_Status *user)
{
    if (user != MPI_STATUS_IGNORE)
        *st = *user;
    else
        st->MPI_ERROR = MPI_SUCCESS;
}
static inline void tds_status_out(MPI_Status *user, const MPI_Status *st)
{
    if (user != MPI_STATUS_IGNORE)
        *user = *st;
}

/* ---- request table (tds_req.c) ---- */
/* TDS_RQ_PAIR: an MPI_Isendrecv's generalized request (tds_p2p.c, "pairs") */
enum { TDS_RQ_SEND = 1, TDS_RQ_RECV = 2, TDS_RQ_PAIR = 3 };

enum { TDS_OWN_TYPE = 1, TDS_OWN_BIG = 2 }; /* tds_rq.owns_type */
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
    int sendmode;              /* persistent sends: which PMPI_*_init */
    size_t ubytes;             /* count * size(type) */
    int tsize;                 /* size(type) */
    /* receives: the communicator's rank map (NULL: MPI_COMM_WORLD), kept
     * if the program frees the communicator while the receive is pending */
    int *cmap;
    uint8_t owns_type;         /* TDS_OWN_TYPE: type is tdshim's duplicate of the program's (packed
                                * receives of derived types outside Open MPI, tds_p2p.c recv_fields);
                                * TDS_OWN_BIG: the bounce buffer is larger than TDS_WIRE_MAX, freed
                                * with the entry rather than kept for the next operation */
    uint8_t finished;          /* receive already finished (Request_get_status) */
    uint8_t part;              /* 1: a partitioned request, 2: one with a header companion, `inner` (tds_p2p.c,
                                * "partitioned communication"); 0 in every other entry, free ones too */
    MPI_Status saved;          /* ...and the status the program saw then */
    /* MPI_Isendrecv* ("pairs", tds_p2p.c): `inner` its send, `rreq` its
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
 * entry (tds_p2p.c, tds_fast_select) needs nothing at completion but to be
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
 * (tds_hs_find empties the ring into the slots: every user of the set
 * sees the same set). A program that posts a window of receives and
 * completes them with MPI_Waitall never hashes them: waitall_flat
 * (tds_complete.c) finds them in the array by walking the ring beside it,
 * or by one memcmp when the array is the ring (issue 28: the set's insert
 * and take were 45 of a received message's 113 instructions; the append
 * and the memcmp cost about 6). A completed
 * receive's handle is never in the ring: every completion path but that
 * walk looks handles up with tds_hs_find, which empties it first. */
#define TDS_HS_RING 128
typedef struct tds_hset {
    tds_hslot *slot;
    unsigned mask, n, limit;   /* n live in the slots; grown at limit */
    unsigned rn;               /* handles in the ring, not in the slots */
    unsigned flushes;          /* times the ring was emptied into the slots */
    MPI_Request rk[TDS_HS_RING]; /* the ring's handles, as the program holds them (one memcmp against its array) */
    struct tds_cell *rv[TDS_HS_RING]; /* ...and their cells (header-free: never written, NULL) */
} tds_hset;
/* With a header (pb_static algorithms: bcj), a flat receive of at
 * most TDS_CELL_DATA user bytes lands in a cell: its wire bytes (header and
 * data) and where they go. Cells come from a free list, never move while
 * MPI writes into them (the set holds pointers), and are allocated 64 at a
 * time when the list runs dry. */
#define TDS_CELL_DATA 120
typedef struct tds_cell {
    struct tds_cell *next;     /* free list */
    void *buf;                 /* the program's buffer */
    size_t ub;                 /* its capacity in bytes (count x size of the type) */
    int tsize;                 /* size of the (predefined) type */
    uint8_t wire[TDS_HDR_MAX + TDS_CELL_DATA];
} tds_cell;

/* ---- the one process-wide state ---- */
typedef struct tds_ctl_slot {
    MPI_Request req;
    uint8_t wire[TD_WIRE_SIZE];
} tds_ctl_slot;

typedef struct tds_state {
    int on;                    /* wrappers active: between our Init and Finalize */
    int fast;                  /* on, and no lock to take (not MPI_THREAD_MULTIPLE): the wrappers' one test */
    int rank, size;
    MPI_Comm ctl;              /* private duplicate of MPI_COMM_WORLD */
    MPI_Comm self;             /* private duplicate of MPI_COMM_SELF, errors returned (tds_p2p.c unpack_derived) */
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
    int coll_progress;         /* blocking collectives answer control messages: TD_ALGO_SYMMETRIC */

    /* control sends in flight (never block the program on one) */
    tds_ctl_slot **slots;
    int nslots;

    /* launch check (tds_preload.c): the job's prefix of names on the MPI
     * name service, and which of them this rank published */
    char pl_prefix[96];
    uint8_t pl_mine, pl_verdict;

    unsigned scan_gen;         /* generation of the last completion call's scan */

    tds_hset hs;               /* flat receives: handles, and header mode's cells */
    tds_cell *cells;           /* free cells */
    uint8_t *fsend;            /* the flat sends' wire buffer (tds_p2p.c, TDS_FSEND bytes) */
    size_t keep_ub;            /* ...the user bytes of the last one */
    tds_cell *keep_cell;       /* the flat receive being posted's cell */
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
    MPI_Datatype tc_prev;      /* the plain type cached before it, its size and cell capacity (type_cache_set) */
    int tc_prev_size;
    unsigned tc_prev_cmax;
    uint64_t tc_elems;         /* elements of that type the header-free flat sends sent, not yet in
                                * prim_sent_bytes (tds_sent_bytes_fold: when the cache changes, at a report) */
    double outer_t0, nested_dt; /* slow sections inside a sampled fast path */
    uint64_t ctl_seen;         /* control messages handled so far */
    uint64_t *sent_to;         /* primary messages sent to each world rank */
    uint64_t *ctl_sent_to;     /* control messages sent to each world rank */
    double t_progress;         /* TDSHIM_VERBOSE: when the last progress line was printed */
    uint64_t spin_mark;        /* spin: 1 + messages sent and received when last seen busy again (0: not) */
    int pending_exit;          /* TDSHIM_NOTIFY=exit fired */
    int warned_violation, warned_cancel, warned_unsafe, warned_error, warned_trunc;
    uint8_t dtnull;            /* count-0 MPI_DATATYPE_NULL: 0 not asked yet, else 1 | 2 (sends taken) | 4 (receives
                                * taken) (tds_p2p.c, dtnull_ask) */
    uint64_t viol_seen;        /* core violations already counted by tag */
    uint8_t poll_armed;        /* measure mode: an empty poll to measure from (none since the last activity) */
    double poll_cpu;           /* ...this thread's CPU time at its end */
    uint8_t poll_gap;          /* ...and the interval before it was a busy gap */
    uint64_t poll_recv0;       /* primaries received by then */
    double poll_w;             /* measure mode: when the last empty poll began (the wall clock) */
    uint8_t poll_cpu_next;     /* ...it came after a longer interval than TDSHIM_SPIN_GAP: CPU time at its end */
    /* measure mode: the idle notions side by side (cand_poll): judged passive, and the primaries sent and
     * received by then; spin's run of polls in scope and when the last one began */
    uint8_t cand[TDR_NCAND];
    uint64_t cand_s0[TDR_NCAND], cand_r0[TDR_NCAND];
    uint64_t cand_b0;          /* ...and the primary bytes sent when spin judged it passive */
    int cand_spin_run;
    double cand_spin_w;
    int found_tag;             /* measure mode: the tag of the last message a probe found (-1: none since) */
    uint64_t unsafe_seen;      /* td_stats.unsafe already warned about */
    uint64_t unsafe_by_seen[TD_EV_N]; /* ...td_stats.unsafe_by */
    struct tds_mprobed {
        MPI_Message msg;
        MPI_Comm comm;
    } *mprobed;                /* matched messages not yet received */
    int nmprobed, capmprobed;
    tds_rq *orphans;           /* requests the program freed while active */
    tds_rq *pairs;             /* MPI_Isendrecv* whose send or receive is pending (tds_p2p.c) */
    int npairs, in_pairs;      /* ...how many; tds_pairs_progress running */
    int nheld;                 /* pending pairs + orphans (receives the program freed): what completion
                                * calls and waiting loops finish first (tds_held_progress) */
    void *bsend_user;          /* MPI_Buffer_attach: the program's buffer... */
    MPI_Count bsend_user_size;
    void *big_spare;           /* the bounce buffer of the last message over TDS_WIRE_MAX bytes, for the
                                * next (tds_req.c): a fresh one costs MPICH/UCX seconds per 2 GiB */
    size_t big_spare_cap;
    void *bsend_ours;          /* ...and the larger one tdshim attached instead */
    MPI_Comm last_comm;        /* one-entry cache of the world-rank map */
    MPI_Comm fcomm;            /* the last communicator seen with MPI_COMM_WORLD's group in its order (a
                                * duplicate; else MPI_COMM_WORLD): the flat entries take it as
                                * MPI_COMM_WORLD (tds_init.c, cmap_of; cleared when it is freed) */
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
} tds_state;

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
    MPI_Request *brq_wait;     /* ...its request while it waits (else NULL) */
    int empty_polls_run;       /* probe:N, spin: consecutive empty polls without a send */
    uint64_t run_work;         /* ...primary messages sent and received when it was last seen (poll_run) */
    double spin_last;          /* spin: when tdshim finished with the last empty poll */
    double poll_t0;            /* spin: when the current poll entered tdshim (tds_poll_enter) */
    /* MPI_THREAD_MULTIPLE (tds_mt.c): this thread's place in the rule "the
     * rank is passive when every thread using MPI is" */
    tds_thread_slot me;
} tds_thread;
extern __thread tds_thread tds_t __attribute__((tls_model("initial-exec")));

/* ---- MPI_THREAD_MULTIPLE (tds_mt.c, README "Threads") ----
 * One lock serializes tdshim's state; the wrappers take it only when the
 * program was granted MPI_THREAD_MULTIPLE (tds.mt, fixed at init), so a
 * single-threaded program pays one predictable branch. A call that waits
 * (every blocking call is a test loop then) lets the others in on every
 * turn (tds_mt_pause), and never blocks inside MPI holding the lock. */
extern int tds_mt;
void tds_mt_init(void);   /* MPI granted MPI_THREAD_MULTIPLE: before tds.on */
void tds_mt_lock_slow(void);
void tds_mt_unlock_slow(void);
void tds_mt_pause(int long_wait);
static inline void tds_lock(void)
{
    if (__builtin_expect(tds_mt, 0))
        tds_mt_lock_slow();
}
/* the same for collectives: a thread that only calls collectives (the
 * main thread between MPI_Init, a barrier and joining its workers) is not
 * counted by the passivity rule, or it would keep its rank busy for ever */
void tds_mt_lock_coll(void);
static inline void tds_lock_coll(void)
{
    if (__builtin_expect(tds_mt, 0))
        tds_mt_lock_coll();
}
static inline void tds_unlock(void)
{
    if (__builtin_expect(tds_mt, 0))
        tds_mt_unlock_slow();
}
/* waits are test loops under MPI_THREAD_MULTIPLE (the lock let go) */
#define TDS_LOOP_WAITS() (__builtin_expect(tds_mt, 0))
/* go_passive under MPI_THREAD_MULTIPLE: 1 if every other thread using MPI
 * is idle too (this thread now is) */
int tds_mt_all_idle(void);
int tds_mt_others_idle(void); /* cand_poll: no side effect */
void tds_mt_describe(char *buf, size_t len); /* "; threads: N using MPI, M busy" */
/* this thread sent or received a primary message: a spin run starts over,
 * and the thread is busy for the rule above */
static inline void tds_worked(void)
{
    tds_t.empty_polls_run = 0;
    tds_t.me.work++;
}

/* Entry of a program poll (Iprobe, Improbe, Test*, Request_get_status):
 * under TDSHIM_IDLE=spin the gap between polls is the program's time from
 * the end of one poll to the start of the next, not the time spent inside
 * MPI and tdshim (tds_init.c, spin_poll). One load and a branch otherwise. */
void tds_pairs_progress(void);
void tds_held_progress(void); /* pairs and orphans (tds_complete.c) */
void tds_poll_enter_slow(void);
static inline int tds_poll_enter_needed(void)
{
    return tds.nheld != 0 || tds.cf.idle == TDS_IDLE_SPIN;
}
static inline void tds_poll_enter(void)
{
    if (__builtin_expect(tds_poll_enter_needed(), 0))
        tds_poll_enter_slow(); /* out of line: no frame for the clock read in the callers */
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
 * sites on), clears the nested time, reads the clock (tds_req.c) */
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

/* ---- tds_init.c: control transport, progress, notification ---- */
void tds_poll_control(void);          /* drain control messages, reap sends */
void tds_set_passive(void);           /* the rank is passive by the idle notion */
/* A program poll: kind 0 probe, 1 test; recv: in scope (tds_poll_scope);
 * found: it found a primary message or the notification. A found poll is
 * two stores, inline (the empty poll's work, measure mode's included, has
 * a frame of its own: tds_empty_poll); tds_idle_poll_rc returns rc, so
 * that a completion call's last call stays a tail call. */
void tds_empty_poll(int kind, int recv);
int tds_empty_poll_rc(int kind, int recv, int rc);
static inline void tds_idle_poll(int kind, int recv, int found)
{
    tds.m.polls++;
    if (found)
        tds_t.empty_polls_run = 0;
    else
        tds_empty_poll(kind, recv);
}
static inline int tds_idle_poll_rc(int kind, int recv, int found, int rc)
{
    tds.m.polls++;
    if (!found)
        return tds_empty_poll_rc(kind, recv, rc);
    tds_t.empty_polls_run = 0;
    return rc;
}
/* measure mode: the tag of a message a poll found (tds_init.c cand_poll: the tags that carry work) */
static inline void tds_found_tag(const MPI_Status *st)
{
    if (__builtin_expect(tds.cf.notify == TDS_NOTIFY_NONE, 0))
        tds.found_tag = st->MPI_TAG;
}
/* can an empty poll of (tag, comm) be an idle poll: could it deliver work (and the notification)? */
int tds_poll_scope(int tag, MPI_Comm comm);
static inline int tds_scoped(void) { return tds.cf.nignore != 0 || tds.cf.notify == TDS_NOTIFY_TAG; }
/* an MPI_Iprobe/MPI_Improbe on tag of comm: found (measure mode keeps its
 * tag: tds_init.c cand_poll), or an empty poll in its scope (tds_poll_scope);
 * inline, so that the common case stays a tail call into tds_idle_poll_rc */
static inline int tds_probe_poll_rc(int tag, MPI_Comm comm, const MPI_Status *st, int found, int rc)
{
    if (found) {
        if (__builtin_expect(tds.cf.notify == TDS_NOTIFY_NONE, 0) && st != MPI_STATUS_IGNORE)
            tds.found_tag = st->MPI_TAG;
        return tds_idle_poll_rc(0, 1, 1, rc);
    }
    return tds_idle_poll_rc(0, !tds_scoped() || tds_poll_scope(tag, comm), 0, rc);
}
/* what a poll "finds" (DESIGN.md §1): primary messages and notifications;
 * a completion call found something if this moved during it */
static inline uint64_t tds_found_mark(void)
{
    return tds.m.prim_recv + tds.m.notifications;
}
/* A blocking loop of the shim (Recv, Probe, Wait*, finalize): one tds_wait per call, begun before the loop and
 * stepped once per turn that found nothing.
 *
 * THE passivity rule of every completion path (DESIGN.md §1, README "The
 * model"): a waiting rank is passive only while the call is blocked waiting
 * for a primary message (recv: the caller still waits for a receive) AND no
 * primary message was received since the call began (recv0: tds.m.prim_recv
 * then). A receive completed inside the call makes the rank active for the
 * rest of it, whatever else the call still waits for; a call that waits
 * only for the rank's own sends never makes it passive. tds_wait_slow
 * (tds_init.c) applies it; the callers only say whether they still wait
 * for a receive.
 *
 * The first TDS_SPIN turns only retry the MPI call: checked inline, so the
 * spin turns of a ping-pong cost no call and the poll period stays that of
 * the MPI call alone. */
#define TDS_SPIN 256
typedef struct tds_wait {
    unsigned iter;
    int recv;                  /* the call still waits for a receive */
    uint64_t recv0;            /* tds.m.prim_recv when the call began */
} tds_wait;
/* what moves when a primary message is received: the rank's count, or
 * under MPI_THREAD_MULTIPLE this thread's own (tds_mt.c) */
static inline uint64_t tds_wait_mark(void)
{
    return __builtin_expect(tds_mt, 0) ? tds_t.me.work : tds.m.prim_recv;
}
static inline tds_wait tds_wait_begin(int recv)
{
    tds_wait w = {0, recv, tds_wait_mark()};
    return w;
}
/* by value, so a loop's tds_wait stays in registers */
void tds_wait_slow(int recv, uint64_t recv0);
static inline void tds_wait_step(tds_wait *w)
{
    if (__builtin_expect(tds.nheld != 0, 0))
        tds_held_progress();
    if (__builtin_expect(tds_mt, 0))
        tds_mt_pause(w->iter >= TDS_SPIN);
    if (__builtin_expect(w->iter++ >= TDS_SPIN, 0))
        tds_wait_slow(w->recv, w->recv0);
}
/* the rule itself: may this waiting call make the rank passive? */
static inline int tds_wait_passive(int recv, uint64_t recv0)
{
    return recv && tds_wait_mark() == recv0;
}
void tds_activity(void);
void tds_check_core(void);            /* warn once of what the core found wrong; never aborts */
void tds_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* comm (remote group for intercomms) -> world; total: MPI_UNDEFINED (< 0)
 * for a rank outside comm and for every rank of a foreign communicator */
int tds_world_rank(MPI_Comm comm, int rank);
/* the cached map of a communicator: ints [refs, freed, foreign, n, world ranks...] */
enum { TDS_MAP_REFS = 0, TDS_MAP_DEAD, TDS_MAP_FOREIGN, TDS_MAP_WORLD, TDS_MAP_N, TDS_MAP_RANKS };
/* the flat entries' communicators (tds_p2p.c): MPI_COMM_WORLD, or a copy of it (tds.fcomm); sends on
 * tds.xcomm take flat entries of their own (the destination translated), receives the same ones (a flat
 * receive's source is never looked up: tds_fast_select's cores ignore it) */
static inline int tds_flat_comm(MPI_Comm comm) { return comm == MPI_COMM_WORLD || comm == tds.fcomm; }
static inline int tds_flat_comm_rx(MPI_Comm comm)
{
    return comm == MPI_COMM_WORLD || comm == tds.fcomm_rx || comm == tds.xcomm_rx;
}
/* the communicator a flat receive's entry (tds_cell_slow, tds_hs_promote)
 * names: MPI_COMM_WORLD while no flat receive can have been on xcomm, else
 * none (MPI_COMM_NULL: a source is then named as "of the receive's
 * communicator" in a warning, and never translated) */
static inline MPI_Comm tds_flat_rx_comm(void)
{
    return tds.x_seen ? MPI_COMM_NULL : MPI_COMM_WORLD;
}
/* Other jobs (README "Other jobs"): a communicator holding a process
 * outside MPI_COMM_WORLD (spawned, connected, joined, or built from such a
 * communicator) is foreign. Its messages are not primary: they travel as
 * the program wrote them (no header, nothing held), on both ends, which
 * both see the same membership; they are counted apart (report
 * primary.other_jobs), and a receive of one is activity. */
int tds_comm_foreign_slow(MPI_Comm comm);
static inline int tds_comm_foreign(MPI_Comm comm)
{
    return comm != MPI_COMM_WORLD && tds_comm_foreign_slow(comm);
}
/* "rank r of communicator 'name' (world rank w)" for warnings
 * (MPI_COMM_NULL: of a communicator the program has freed) */
void tds_describe_rank(char *buf, size_t len, MPI_Comm comm, int rank);
/* a message to or from another job (ub user bytes) */
void tds_xjob_sent(size_t ub);
void tds_xjob_recv(size_t ub);
int *tds_cmap_get(MPI_Comm comm); /* a reference that outlives MPI_Comm_free */
void tds_cmap_put(int *map);
/* the same, with MPI_COMM_WORLD (the common case) answered without a call */
/* the world rank of a completed receive's source (the communicator may be freed by now) */
static inline int tds_q_wrank(const tds_rq *q, int src)
{
    if (__builtin_expect(q->cmap == NULL, 1))
        return src;
    return (unsigned)src < (unsigned)q->cmap[TDS_MAP_N] ? q->cmap[TDS_MAP_RANKS + src] : MPI_UNDEFINED;
}
static inline int tds_wrank(MPI_Comm comm, int rank)
{
    if (__builtin_expect(comm == MPI_COMM_WORLD, 1)) /* a rank outside it is MPI's error, never an index */
        return (unsigned)rank < (unsigned)tds.size ? rank : MPI_UNDEFINED;
    return tds_world_rank(comm, rank);
}
int tds_tag_ignored(int tag);
/* header-free mode: the kind (TDS_HK_*) of a received message from its
 * envelope (source rank in comm, tag, bytes), as its header would say */
int tds_env_kind(int source, int tag, size_t bytes, MPI_Comm comm);
void tds_nenv_push(int notification);

/* ---- tds_req.c ---- */
/* The per-message operations are inline (each is a few instructions;
 * calls showed in profiles of the message rate); growing is not. */
static inline unsigned tds_rq_hash(MPI_Request r)
{
    uintptr_t v = (uintptr_t)r;
    v ^= v >> 17;
    v *= 0x9E3779B97F4A7C15ull;
    return (unsigned)(v >> 32);
}
void tds_hs_grow(void);               /* tds_hset: room for one more handle */
static inline void tds_hs_put(MPI_Request r, tds_cell *v);
/* tds_hs_put where the slots may be full */
static inline void tds_hs_add(MPI_Request r, tds_cell *v)
{
    if (__builtin_expect(tds.hs.n >= tds.hs.limit, 0))
        tds_hs_grow();
    tds_hs_put(r, v);
}
static inline unsigned tds_hs_home(uintptr_t k)
{
    return (unsigned)((k * 0x9E3779B97F4A7C15ull) >> 32);
}
/* the set has room (tds.hs.n < tds.hs.limit) */
static inline void tds_hs_put(MPI_Request r, tds_cell *v)
{
    uintptr_t k = (uintptr_t)r;
    tds_hslot *s = tds.hs.slot;
    unsigned m = tds.hs.mask, i = tds_hs_home(k) & m;
    while (s[i].k != TDS_HS_EMPTY)
        i = (i + 1) & m;
    s[i].k = k;
    s[i].v = v;
    tds.hs.n++;
}
/* the ring into the slots (tds_req.c) */
void tds_hs_flush(void);
/* a flat receive was posted: its handle at the end of the ring */
static inline void tds_hs_post(MPI_Request r, tds_cell *v)
{
    unsigned rn = tds.hs.rn;
    if (__builtin_expect(rn == TDS_HS_RING, 0)) {
        tds_hs_flush();
        rn = 0;
    }
    tds.hs.rk[rn] = r;
    tds.hs.rv[rn] = v;
    tds.hs.rn = rn + 1;
}
/* a flat receive is pending (in the ring or the slots) */
static inline int tds_hs_any(void)
{
    return (tds.hs.n | tds.hs.rn) != 0;
}
/* the slot of r among the slots (not the ring), or -1 */
static inline long tds_hs_find_slots(MPI_Request r)
{
    if (!tds.hs.n)
        return -1;
    uintptr_t k = (uintptr_t)r;
    const tds_hslot *s = tds.hs.slot;
    unsigned m = tds.hs.mask, i = tds_hs_home(k) & m;
    for (;;) { /* the handle at its home first: the common case */
        uintptr_t x = s[i].k;
        if (__builtin_expect(x == k, 1))
            return i;
        if (x == TDS_HS_EMPTY)
            return -1;
        i = (i + 1) & m;
    }
}
/* the slot of r, or -1 (the ring emptied into the slots first) */
static inline long tds_hs_find(MPI_Request r)
{
    if (__builtin_expect(tds.hs.rn != 0, 0))
        tds_hs_flush();
    return tds_hs_find_slots(r);
}
/* empty slot i, moving back the handles of its chain that would no
 * longer be found (Knuth's algorithm R for linear probing) */
static inline void tds_hs_drop(long slot)
{
    tds_hslot *s = tds.hs.slot;
    unsigned m = tds.hs.mask, i = (unsigned)slot, j = i;
    for (;;) {
        j = (j + 1) & m;
        if (s[j].k == TDS_HS_EMPTY)
            break;
        unsigned h = tds_hs_home(s[j].k) & m;
        /* s[j] stays if its home lies cyclically in (i, j] */
        if (i <= j ? (i < h && h <= j) : (i < h || h <= j))
            continue;
        s[i] = s[j];
        i = j;
    }
    s[i].k = TDS_HS_EMPTY;
    tds.hs.n--;
}
/* 1 if r was a flat receive (now taken out of the set; *v its cell) */
static inline int tds_hs_take(MPI_Request r, tds_cell **v)
{
    long i = tds_hs_find(r);
    if (i < 0)
        return 0;
    *v = tds.hs.slot[i].v;
    tds_hs_drop(i);
    return 1;
}
/* A single completion call (MPI_Test, MPI_Wait) on a flat receive posted
 * among the last TDS_HS_NEAR, still in the ring: what a program that posts
 * a receive and tests it until done does. Found by a walk back from the
 * ring's end and, once complete, taken out by moving the handles after it
 * (the ring keeps its posting order), instead of tds_hs_find's flush of
 * the ring into the slots and a hash lookup: bench/msgcount --mode test.
 * Returns the handle's place in the ring, or -1 (look in the whole set). */
#define TDS_HS_NEAR 8
static inline long tds_hs_near(MPI_Request r)
{
    unsigned rn = tds.hs.rn, lo = rn > TDS_HS_NEAR ? rn - TDS_HS_NEAR : 0;
    for (unsigned j = rn; j-- > lo;)
        if (tds.hs.rk[j] == r)
            return (long)j;
    return -1;
}
/* tds_hs_take for a handle found at j by tds_hs_near before the MPI call
 * that completed it (nothing that call runs enters tdshim: tds_inside; the
 * ring is checked again all the same) */
static inline int tds_hs_take_near(MPI_Request r, long j, tds_cell **v)
{
    unsigned rn = tds.hs.rn;
    if (__builtin_expect(j < 0 || (unsigned)j >= rn || tds.hs.rk[j] != r, 0))
        return tds_hs_take(r, v);
    *v = tds.hs.rv[j];
    for (unsigned i = (unsigned)j + 1; i < rn; i++) {
        tds.hs.rk[i - 1] = tds.hs.rk[i];
        tds.hs.rv[i - 1] = tds.hs.rv[i];
    }
    tds.hs.rn = rn - 1;
    return 1;
}
tds_rq *tds_rq_alloc(void);           /* free list empty: a new entry */
void tds_rq_grow(void);
static inline tds_rq *tds_rq_new(void)
{
    tds_rq *q = tds.rq_free;
    if (__builtin_expect(q == NULL, 0))
        q = tds_rq_alloc();
    else
        tds.rq_free = q->next;
    /* the callers (send_post, recv_layout) set the operation's fields; a
     * full memset of the entry showed in profiles of the message rate */
    q->req = MPI_REQUEST_NULL;
    q->next = NULL;
    q->pprev = NULL;
    q->persistent = q->active = q->finished = q->foreign = 0;
    q->sendmode = 0;
    return q;
}
static inline void tds_rq_insert(tds_rq *q)
{
    if (__builtin_expect(tds.rq_count >= tds.rq_limit, 0))
        tds_rq_grow();
    tds_rq **b = &tds.rq_hash[tds_rq_hash(q->req) & tds.rq_mask];
    q->next = *b;
    if (q->next)
        q->next->pprev = &q->next;
    *b = q;
    q->pprev = b;
    tds.rq_count++;
}
int tds_rq_insert_send(tds_rq *q);    /* 0: handle shared with an entry, q not inserted */
/* the entry of r in the table only (a plain receive has none) */
static inline tds_rq *tds_rq_lookup(MPI_Request r)
{
    if (!tds.rq_count || r == MPI_REQUEST_NULL)
        return NULL;
    for (tds_rq *q = tds.rq_hash[tds_rq_hash(r) & tds.rq_mask]; q; q = q->next)
        if (q->req == r)
            return q;
    return NULL;
}
/* a plain receive's handle becomes an entry of the table (tds_p2p.c) */
tds_rq *tds_hs_promote(long slot, MPI_Request r);
/* the entry of r: a plain receive gets one here, for the paths that need
 * it (the completion paths of the message rate look in the set themselves) */
static inline tds_rq *tds_rq_find(MPI_Request r)
{
    tds_rq *q = tds_rq_lookup(r);
    if (q || __builtin_expect(!tds_hs_any(), 1))
        return q;
    long i = tds_hs_find(r);
    return i < 0 ? NULL : tds_hs_promote(i, r);
}
/* q is in the table: take it out without a lookup */
static inline void tds_rq_unlink(tds_rq *q)
{
    *q->pprev = q->next;
    if (q->next)
        q->next->pprev = q->pprev;
    q->next = NULL;
    q->pprev = NULL;
    tds.rq_count--;
}
tds_rq *tds_rq_remove(MPI_Request r);
void tds_rq_drop_refs(tds_rq *q); /* cmap, owned type */
static inline void tds_rq_release(tds_rq *q)
{
    if (__builtin_expect(q->cmap != NULL || q->owns_type || q->cell, 0))
        tds_rq_drop_refs(q);
    q->next = tds.rq_free;
    tds.rq_free = q;
}
static inline int tds_rq_any(void)
{
    return (tds.rq_count | tds.hs.n | tds.hs.rn) != 0;
}
void *tds_scratch_grow(size_t n);
/* the bounce buffer of blocking calls; grows, never shrinks */
static inline void *tds_scratch(size_t n)
{
    return __builtin_expect(n <= tds_t.scratch_cap, 1) ? tds_t.scratch : tds_scratch_grow(n);
}
int tds_ensure_rq_scratch(int n);

/* ---- tds_p2p.c ---- */
void tds_core_failed(void) __attribute__((cold)); /* tds_check_core, out of the fast path */
/* memcpy for the small messages of the fast paths: up to 16 bytes as two
 * overlapping word moves, inline (a call to memcpy costs more than the copy) */
static inline void small_copy(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (n >= 8 && n <= 16) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &b, 8);
    } else if (n >= 4 && n < 8) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &b, 4);
    } else if (n < 4) {
        for (size_t i = 0; i < n; i++)
            d[i] = s[i];
    } else {
        memcpy(d, s, n);
    }
}

/* small_copy for the flat entries' messages, of at most TDS_CELL_DATA
 * bytes: no call to memcpy above 16 bytes (a call costs the entries a
 * frame of saved registers on every message), 8-byte words with the last
 * one overlapping */
static inline __attribute__((always_inline)) void cell_copy(void *dst, const void *src, size_t n)
{
    if (__builtin_expect(n > 16, 0)) {
        unsigned char *d = dst;
        const unsigned char *s = src;
        uint64_t w;
        for (size_t i = 0; i + 8 < n; i += 8) {
            memcpy(&w, s + i, 8);
            memcpy(d + i, &w, 8);
        }
        memcpy(&w, s + n - 8, 8);
        memcpy(d + n - 8, &w, 8);
        return;
    }
    small_copy(dst, src, n);
}

/* The receive of almost every message, inline and without a frame of its
 * own: a primary message in the copy layout, into a predefined contiguous
 * type, filling whole elements. Does what recv_finish (tds_p2p.c) does for it;
 * returns 0, having done nothing, for anything else. */
static inline __attribute__((always_inline)) int tds_recv_fast_nohdr(tds_rq *q, MPI_Status *st);
static inline __attribute__((always_inline)) int tds_recv_fast(tds_rq *q, MPI_Status *st)
{
    const uint8_t *b = q->bounce;
    size_t bytes = tds_st_bytes(st), ub = bytes - (size_t)tds.hdr_len;
    if (!(q->copy & q->plain))
        return tds.nohdr ? tds_recv_fast_nohdr(q, st) : 0;
    if (bytes < (size_t)tds.hdr_len || b[0] != tds.core.hdr_in ||
        (ub != q->ubytes && (q->tsize != 1 || ub > q->ubytes)) || tds_st_cancelled(st))
        return 0;
    double t0 = tds_tstart();
    td_primary_recv(&tds.core, tds_q_wrank(q, st->MPI_SOURCE), b + TDS_HDR_FIXED);
    if (__builtin_expect(tds.core.error != 0, 0))
        tds_core_failed();
    tds.m.prim_recv++;
    tds.m.prim_recv_bytes += ub; /* pb_bytes_recv: derived at finalize */
    tds_worked();
    small_copy(q->buf, b + tds.hdr_len, ub);
    tds_st_set_bytes(st, ub);
    tds_tstop(TDR_CAT_RECV, t0);
    return 1;
}

/* The same for a header-free receive (README "Header-free mode"): a
 * primary message when no tag is ignored and it is not on the
 * notification's envelope; the data is in the program's buffer already and
 * the status is MPI's. */
static inline __attribute__((always_inline)) int tds_recv_fast_nohdr(tds_rq *q, MPI_Status *st)
{
    if (tds.nh_slow || q->foreign || st->MPI_TAG == tds.nenv_tag || tds_st_cancelled(st))
        return 0;
    double t0 = tds_tstart();
    td_primary_recv(&tds.core, tds_q_wrank(q, st->MPI_SOURCE), NULL);
    if (__builtin_expect(tds.core.error != 0, 0))
        tds_core_failed();
    tds.m.prim_recv++;
    tds.m.prim_recv_bytes += tds_st_bytes(st);
    tds_worked();
    tds_tstop(TDR_CAT_RECV, t0);
    return 1;
}

/* A plain receive (tds_hset) completed: the header-free receive of
 * tds_recv_fast_nohdr, for a receive on MPI_COMM_WORLD that no ignored tag
 * or call site concerns (tds_fast_select installs the flat entries only
 * then); the notification's envelope, a cancelled receive and the sampled
 * call of the timer take recv_finish (tds_plain_slow). */
void tds_plain_slow(MPI_Status *st);
static inline __attribute__((always_inline)) void tds_plain_done(MPI_Status *st)
{
    if (__builtin_expect(st->MPI_TAG == tds.nenv_tag || tds_st_cancelled(st) || tds.tleft <= 1, 0)) {
        tds_plain_slow(st);
        return;
    }
    tds.tleft--;
    tds.m.n_cat[TDR_CAT_RECV]++; /* what tds_tstop counts; the time is sampled in tds_plain_slow */
    td_primary_recv(&tds.core, st->MPI_SOURCE, NULL);
    if (__builtin_expect(tds.core.error != 0, 0))
        tds_core_failed();
    tds.m.prim_recv++;
    tds.m.prim_recv_bytes += tds_st_bytes(st);
    /* no tds_worked: plain receives are single-threaded (poll_run) */
}

/* Flat receives a completion call counted together (waitall_flat): the
 * counts tds_plain_done and tds_wire_done make per message, made once for
 * n messages of `bytes` user bytes in all (issue 28: per-message counting
 * was a fifth of a received message's instructions). The sampled call of
 * the timer comes at the next flat operation (tleft left at 1). The
 * core's count (c->recvd) is the caller's: tds_plain_batch, or
 * td_primary_recv_many with the piggybacks (tds_batch_end). */
static inline void tds_recv_batch(uint64_t n, uint64_t bytes)
{
    tds.tleft = tds.tleft > n ? tds.tleft - (unsigned)n : 1;
    tds.m.n_cat[TDR_CAT_RECV] += n;
    if (__builtin_expect(tds.core.error != 0, 0))
        tds_core_failed();
    tds.m.prim_recv += n;
    tds.m.prim_recv_bytes += bytes;
}
/* ...of plain receives: the core has no on_recv (tds_fast_select) */
static inline void tds_plain_batch(uint64_t n, uint64_t bytes)
{
    tds.core.recvd += n;
    if (__builtin_expect(!(tds.core.active & tds.core.dirty), 0))
        td_recv_activity(&tds.core);
    tds_recv_batch(n, bytes);
}
/* ...with a header: the messages' piggybacks, TD_PB_MAX bytes each,
 * gathered for one td_primary_recv_many (the core's on_recv once per
 * window, not once per message: tds_fast_select makes flat receives with
 * a header only for a core that has on_recv_many or no on_recv) */
#define TDS_BATCH_PB 128
typedef struct tds_batch {
    uint64_t n, bytes;
    unsigned k;                   /* piggybacks in pb, not yet given to the core */
    uint64_t pb[TDS_BATCH_PB];
} tds_batch;
static inline void tds_batch_pbs(tds_batch *b)
{
    td_primary_recv_many(&tds.core, (const uint8_t *)b->pb, sizeof b->pb[0], b->k);
    b->k = 0;
}
static inline void tds_batch_end(tds_batch *b)
{
    if (b->k)
        tds_batch_pbs(b);
    if (b->n)
        tds_recv_batch(b->n, b->bytes);
}

/* A flat receive with a header (tds_cell) completed: tds_recv_fast for a
 * cell, the cell returned to the free list. Anything but a whole message
 * with our header (a shorter one only into bytes, as tds_recv_fast) is
 * recv_finish's (tds_cell_slow). Also the flat blocking receive's, with
 * its own wire buffer (c->wire unused then: wire given). */
void tds_cell_slow(const uint8_t *wire, void *buf, size_t cub, int tsize, MPI_Status *st);
static inline __attribute__((always_inline)) void tds_wire_done(const uint8_t *wire, void *buf, size_t cub,
                                                                int tsize, MPI_Status *st)
{
    size_t bytes = tds_st_bytes(st), ub = bytes - (size_t)tds.hdr_len;
    if (__builtin_expect(bytes < (size_t)tds.hdr_len || wire[0] != tds.core.hdr_in ||
                             (ub != cub && (tsize != 1 || ub > cub)) || tds_st_cancelled(st) || tds.tleft <= 1,
                         0)) {
        tds_cell_slow(wire, buf, cub, tsize, st);
        return;
    }
    tds.tleft--;
    tds.m.n_cat[TDR_CAT_RECV]++;
    td_primary_recv(&tds.core, st->MPI_SOURCE, wire + TDS_HDR_FIXED);
    if (__builtin_expect(tds.core.error != 0, 0))
        tds_core_failed();
    tds.m.prim_recv++;
    tds.m.prim_recv_bytes += ub;
    cell_copy(buf, wire + tds.hdr_len, ub);
    tds_st_set_bytes(st, ub);
}
/* tds_wire_done for a cell of a batch: counted into b (tds_batch_end
 * does the rest), or finished on its own by recv_finish */
static inline __attribute__((always_inline)) void tds_wire_one(tds_cell *c, MPI_Status *st, tds_batch *b)
{
    const uint8_t *wire = c->wire;
    size_t bytes = tds_st_bytes(st), ub = bytes - (size_t)tds.hdr_len;
    if (__builtin_expect(bytes < (size_t)tds.hdr_len || wire[0] != tds.core.hdr_in ||
                             (ub != c->ub && (c->tsize != 1 || ub > c->ub)) || tds_st_cancelled(st),
                         0)) {
        tds_cell_slow(wire, c->buf, c->ub, c->tsize, st);
        return;
    }
    _Static_assert(TDS_HDR_MAX - TDS_HDR_FIXED == sizeof b->pb[0], "a piggyback is one word of tds_batch");
    memcpy(&b->pb[b->k], wire + TDS_HDR_FIXED, sizeof b->pb[0]); /* the cell has TDS_HDR_MAX header bytes */
    if (__builtin_expect(++b->k == TDS_BATCH_PB, 0))
        tds_batch_pbs(b);
    cell_copy(c->buf, wire + tds.hdr_len, ub);
    tds_st_set_bytes(st, ub);
    b->n++;
    b->bytes += ub;
}
static inline __attribute__((always_inline)) void tds_flat_done(tds_cell *c, MPI_Status *st)
{
    if (__builtin_expect(c == NULL, 1)) {
        tds_plain_done(st);
        return;
    }
    tds_wire_done(c->wire, c->buf, c->ub, c->tsize, st);
    c->next = tds.cells;
    tds.cells = c;
}

/* a request of ours completed (st: the PMPI status of the wire message,
 * turned into the program's view): count, unpack, recycle. The common
 * receive inline, the rest in tds_complete_slow. */
void tds_complete_slow(tds_rq *q, MPI_Status *st);
static inline __attribute__((always_inline)) void tds_complete(tds_rq *q, MPI_Status *st)
{
    if (__builtin_expect(q->kind == TDS_RQ_RECV && !q->persistent && !q->finished, 1) && tds_recv_fast(q, st)) {
        tds_rq_unlink(q);
        tds_rq_release(q);
        return;
    }
    tds_complete_slow(q, st);
}
void tds_finish_early(tds_rq *q, MPI_Status *st);

/* A receive finished in this call found what MPI reports natively as an
 * error (a type signature mismatch, tds_p2p.c unpack_derived): the call
 * returns it, as natively. tds_recv_err: a single-completion call's return
 * code; tds_recv_err_in: 1 if request st of a multiple-completion call got
 * it (its status's MPI_ERROR; the call returns MPI_ERR_IN_STATUS). */
static inline int tds_recv_err(int rc)
{
    if (__builtin_expect(tds_t.recv_err == 0, 1))
        return rc;
    rc = tds_t.recv_err;
    tds_t.recv_err = 0;
    return rc;
}
static inline int tds_recv_err_in(MPI_Status *st)
{
    if (__builtin_expect(tds_t.recv_err == 0, 1))
        return 0;
    st->MPI_ERROR = tds_t.recv_err;
    tds_t.recv_err = 0;
    return 1;
}
void tds_send_start(tds_rq *q);          /* MPI_Start of a persistent send: its header */
/* the entry points of the `fast` functions of p2p.list (gen_wrappers.py):
 * flat ones for this configuration while tds.fast, else tds_wrap_<Name> */
void tds_fast_select(void);
/* partitioned requests (q->part; tds_p2p.c) */
void tds_part_start(tds_rq *q);          /* MPI_Start: the companion's round */
void tds_part_done(tds_rq *q, MPI_Status *st); /* the request completed: finished, the companion too */
void tds_part_free(tds_rq *q);           /* MPI_Request_free: the companion too */
void tds_reap_orphans(void);

#endif
