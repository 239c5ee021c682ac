/*
 * tdshim algorithm core: the sans-I/O termination-detection engine.
 *
 * Everything here is pure computation. The core knows nothing of MPI,
 * clocks or files (DESIGN.md §2). A *driver* (the MPI shim, the simulator
 * tdsim, the termdetect API) owns one td_ctx per rank and
 *
 *   - reports primary traffic:   td_primary_send(), td_primary_recv()
 *   - reports polling/idleness:  td_passive(), td_activity(), td_notified()
 *   - delivers control messages: td_control() with the wire bytes it got
 *   - transmits what the core asks through td_io.send (TD_WIRE_SIZE bytes)
 *   - learns of termination through td_io.announce
 *
 * Algorithms implement struct td_algo (td_algo.h) and are found by name
 * with td_algo_find().
 */
#ifndef TD_CORE_H
#define TD_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Return codes. Negative values are errors; td_strerror() names them. */
enum {
    TD_OK = 0,
    TD_EINVAL = -1,    /* bad argument or configuration */
    TD_EPROTO = -2,    /* unexpected control message for the protocol state */
    TD_EWIRE = -3,     /* malformed control message on the wire */
    TD_ENOMEM = -4,
};
const char *td_strerror(int rc);

/* ------------------------------------------------------------------ */
/* Control messages (td_wire.c)                                        */
/* ------------------------------------------------------------------ */

/*
 * Wire format, version 1, little-endian, fixed TD_WIRE_SIZE bytes:
 *   0  u8  magic   TD_WIRE_MAGIC
 *   1  u8  version TD_WIRE_VERSION
 *   2  u8  algo    algorithm id (0 = engine messages)
 *   3  u8  type    message type, < the algorithm's ntypes
 *   4  u8  flags   TD_MF_* bits; undefined bits must be zero
 *   5  u8  reserved, must be zero
 *   6  u16 reserved, must be zero
 *   8  u32 episode  announcements the sender had learned of
 *  12  u32 reserved, must be zero
 *  16  u64 seq      sweep / wave / round number
 *  24  i64 a        algorithm payload
 *  32  i64 b
 *  40  i64 c
 */
#define TD_WIRE_SIZE 48
#define TD_WIRE_MAGIC 0xD7
#define TD_WIRE_VERSION 1

#define TD_MF_DIRTY 0x01u /* subtree showed activity since the last announcement */
#define TD_MF_INF 0x02u   /* BCJ: count is INFINITY */
#define TD_MF_ALGO1 0x04u /* algorithm-defined */
#define TD_MF_ALGO2 0x08u /* algorithm-defined */
#define TD_MF_ALL 0x0fu

typedef struct td_msg {
    uint8_t algo;
    uint8_t type;
    uint8_t flags;
    uint32_t episode;
    uint64_t seq;
    int64_t a, b, c;
} td_msg;

void td_wire_encode(const td_msg *m, uint8_t out[TD_WIRE_SIZE]);
/* Validates everything but the (algo, type) pair; on error writes a
 * one-line reason into why (if non-NULL) and returns TD_EWIRE. */
int td_wire_decode(const uint8_t *buf, size_t len, td_msg *m, char *why, size_t whylen);

/* ------------------------------------------------------------------ */
/* Spanning tree (td_tree.c)                                           */
/* ------------------------------------------------------------------ */

/* k-ary heap-ordered tree rooted at rank 0: parent(r) = (r-1)/k. */
typedef struct td_tree {
    int rank, size, arity;
    int parent;      /* -1 at the root */
    int first_child; /* children are first_child .. first_child+nchildren-1 */
    int nchildren;
} td_tree;

int td_tree_init(td_tree *t, int rank, int size, int arity);
int td_tree_depth(int size, int arity); /* edges from root to deepest leaf */

/* ------------------------------------------------------------------ */
/* Configuration                                                       */
/* ------------------------------------------------------------------ */

typedef struct td_cfg {
    int rank, size;
    int tree_arity;      /* 2 = binary (default) */
    int gate_on_notify;  /* after an announcement, wait for td_notified() */
    /* algorithm parameters (used by the algorithms that need them) */
    int64_t cda_init;    /* CDA: initial credit per rank */
    int64_t cda_con;     /* CDA: C_con */
    int64_t cda_wcon;    /* CDA: W_con */
    int64_t cda_borrow;  /* CDA: C_borrow */
    int xulau_topo;      /* Xu-Lau overlay: TD_TOPO_* */
    int xulau_dims[3];
    int confirm;         /* confirm every proof of quiescence with two count waves (td_engine.c) */
    int quiet_check;     /* tests: run the turns td_passive would skip as quiet, and fail if one changes anything */
} td_cfg;

enum { TD_TOPO_RING = 0, TD_TOPO_MESH, TD_TOPO_TORUS, TD_TOPO_HYPERCUBE };

void td_cfg_default(td_cfg *cfg, int rank, int size);

/* ------------------------------------------------------------------ */
/* The engine                                                          */
/* ------------------------------------------------------------------ */

typedef struct td_io {
    void *user;
    /* transmit a control message (TD_WIRE_SIZE bytes) to rank dest */
    void (*send)(void *user, int dest, const uint8_t *wire);
    /* this rank learned that episode `episode` (1-based) is quiescent */
    void (*announce)(void *user, uint32_t episode);
    /* optional: td_ctx.want_poll was set (td_want_poll); the driver drains
     * the control channel at its next safe point and clears it */
    void (*want_poll)(void *user);
} td_io;

#define TD_MAX_TYPES 12 /* per algorithm, engine types included */
#define TD_PB_MAX 8     /* piggyback bytes an algorithm may declare */

/* Engine message types (algo id 0). */
enum { TD_EM_TERM = 0, TD_EM_SLEEP, TD_EM_WAKE, TD_EM_CONF, TD_EM_CONF_ACK, TD_EM_CONF_WAKE, TD_EM_NTYPES };

/* Evidence that an announcement was premature, or its proof unsound
 * (send-before) (td_stats.unsafe_by; the
 * argument for each is in td_engine.c, "Premature announcements"). */
enum {
    TD_EV_CONTROL = 0, /* a control message of an announced episode arrived */
    TD_EV_PRIMARY,     /* a primary message stamped with an announced episode arrived */
    TD_EV_SEND,        /* a rank sent a primary after learning the announcement with no reason to work */
    TD_EV_BEFORE,      /* a rank reported passive to the detection, then sent a primary with no reason to work */
    TD_EV_N
};
extern const char *const td_ev_names[TD_EV_N]; /* "late-control", "late-primary", "send-after", "send-before" */

/* The stamp of the episode on every primary message with a header
 * (td_engine.c, "Premature announcements"): 2 bits of the driver's header
 * byte, the sender's episode (plus one if it may work for the next one:
 * td_ctx.ahead) modulo 4. */
#define TD_STAMP_SHIFT 2
#define TD_STAMP_MASK (3u << TD_STAMP_SHIFT)

typedef struct td_stats {
    uint64_t ctl_sent[2][TD_MAX_TYPES]; /* [0] engine types, [1] algorithm types */
    uint64_t ctl_recv[2][TD_MAX_TYPES];
    uint64_t waves;          /* sweeps/waves/rounds initiated (root) or joined */
    uint64_t busy_to_idle, idle_to_busy;
    uint64_t violations;     /* primary sends while passive */
    uint64_t busy_again;     /* passive -> active without new work (td_busy: a notion misjudged) */
    uint64_t unsure;         /* passive -> unsure (td_unsure: maybe work, maybe the machine's noise) */
    uint64_t unsafe;         /* evidence that an announcement was premature (unsafe_by[] by kind) */
    uint32_t unsafe_episode; /* the last announcement proven premature (0: none) */
    uint64_t unsafe_by[TD_EV_N]; /* ...by kind of evidence (TD_EV_*) */
    uint64_t borrows, flushes;
    uint64_t held;           /* control messages held for a later episode */
    uint64_t quiescent_clean;/* quiescence proven with no new activity: dormant */
    uint64_t confirmed, refuted; /* root, cfg.confirm: proofs the confirmation waves upheld / refuted */
    uint64_t coll_confirms;  /* root: proofs confirmed because a collective came since the wave began */
} td_stats;

/* control messages sent (or received), all types */
static inline uint64_t td_ctl_total(const uint64_t counts[2][TD_MAX_TYPES])
{
    uint64_t n = 0;
    for (int e = 0; e < 2; e++)
        for (int t = 0; t < TD_MAX_TYPES; t++)
            n += counts[e][t];
    return n;
}

typedef struct td_held td_held;
struct td_algo;

typedef struct td_ctx {
    const struct td_algo *algo;
    void *st; /* algorithm state, algo->state_size bytes */
    td_io io;
    td_cfg cfg;
    td_tree tree;
    int rank, size;

    uint64_t sent, recvd;  /* primary messages, cumulative over the run */
    uint32_t episode;      /* announcements learned of */
    uint8_t active;        /* 1 until the first td_passive() */
    uint8_t dirty;         /* activity since the last announcement learned */
    uint8_t ready;         /* may take part in the current episode */
    uint8_t dormant;       /* root: proven quiescent but clean, waiting for a WAKE */
    uint8_t finalized;
    /* a control message this rank needs may be waiting, and the program
     * may make no call that would look: set by an on_send that prepays a
     * primary because its REFILL's grant has not been received
     * (td_credit_borrow), and by an on_recv that took a prepaid primary
     * before its BORROW or grant (td_prepaid_primary). A rank that only
     * sends, or a rank 0 whose receives never wait long, never polled: a
     * stream of 10^6 messages to rank 0 under cda paid 871,917 BORROWs.
     * Set by td_want_poll; the driver clears it and drains the control
     * channel at a safe point (tds_want_poll_run), never from inside the
     * engine */
    uint8_t want_poll;
    uint8_t pb_static;     /* the algorithm has no on_send: its piggyback is pb_out */
    uint8_t pb_size;       /* algo->pb_size */
    uint8_t pb_out[TD_PB_MAX]; /* the piggyback of the next send (pb_static algorithms keep it current) */
    void (*on_send)(struct td_ctx *c, void *st, int dest, uint8_t *pb); /* algo->on_send */
    void (*on_recv)(struct td_ctx *c, void *st, int src, const uint8_t *pb); /* algo->on_recv */
    void (*on_recv_many)(struct td_ctx *c, void *st, const uint8_t *pb, size_t stride, unsigned n); /* algo's */
    uint32_t sleep_id;     /* root: dormancy count; others: last SLEEP seen */
    uint64_t ann_seq;      /* symmetric algorithms: the round of the last announcement (td_announce_local) */
    /* confirmation waves (cfg.confirm, td_engine.c) */
    uint8_t confirming;    /* root: waves under way, the algorithm waits */
    uint8_t coll_taint;    /* root: a collective since the last proof: confirm the next one (td_collective) */
    uint8_t conf_busy, conf_r1_busy;
    uint8_t conf_owe_wake; /* answered a wave busy: tell the root when passive again */
    uint8_t unsure;        /* passive, but may have worked since (td_unsure): answers waves busy */
    uint64_t conf_hold;    /* root: round-1 seq of a proof refuted by a busy rank (0: none) */
    uint64_t conf_woken;   /* root: greatest round-1 seq a busy rank's wake answered */
    int conf_wait;         /* children whose CONF_ACK is due */
    uint64_t conf_seq;     /* wave being answered: id * 2 + round - 1 */
    int64_t conf_acc[3], conf_r1[3]; /* sent, received, activations: this subtree; round 1 at the root */

    /* premature announcements (td_engine.c, "Premature announcements") */
    uint8_t hdr_base;      /* the driver's header byte without the stamp (td_stamp_base) */
    uint8_t hdr_out;       /* hdr_base | the stamp of this rank's sends: episode + ahead */
    uint8_t hdr_in;        /* hdr_base | the stamp of a primary of this rank's episode */
    uint8_t ahead;         /* may work for the next episode already (a newer stamp, or activity after passive) */
    uint8_t reason;        /* since the last passive transition: activity that is not a primary (a collective) */
    uint8_t armed;         /* learned the last announcement with no reason to work: a send proves it premature */
    uint64_t recv_mark;    /* c->recvd at the last passive transition */
    uint64_t arm_recvd;    /* c->recvd when armed */
    uint32_t passive_gen;  /* passive periods begun (td_passive) */
    uint32_t ctl_gen;      /* passive_gen when this rank last sent a control message while passive (0: active) */
    uint8_t viol_rep;      /* a contract violation since the last control message, in a passive period that sent one */
    int unsafe_tag;        /* the tag of the last late primary (TD_EV_PRIMARY; -1: unknown) */
    int late_tag;          /* td_stamp_seen -> td_late_primary: the tag of a late primary (-1: none) */

    /* quiet turns (td_passive, td_quiet): the inputs of a passive turn
     * counted, and what they were after a turn that changed nothing */
    uint64_t gen;          /* bumped by every engine entry point but td_passive's turn, every control message sent */
    uint64_t quiet_gen;    /* gen after a turn that was a fixed point (0: none; gen starts at 1) */
    uint64_t quiet_sent, quiet_recvd; /* sent, recvd then: the inline primary paths change these alone */
    void *st_prev;         /* TD_ALGO_FIXPOINT: the state before the turn, state_size bytes */

    td_held *held;         /* control messages for a later episode */
    size_t nheld, capheld;
    int error;             /* first protocol error, sticky */
    char errmsg[160];
    char unsafe_msg[200];  /* why the last unsafe episode was: "kind: algo: what" (td_stats.unsafe) */
    td_stats stats;
} td_ctx;

/* Life cycle. td_ctx_init returns TD_OK or an error (then td_ctx_fini). */
int td_ctx_init(td_ctx *c, const struct td_algo *algo, const td_cfg *cfg, const td_io *io);
void td_ctx_fini(td_ctx *c);

/* Primary traffic. pb points to algo->pb_size bytes (may be NULL if 0).
 * td_primary_send counts the message and fills pb: it never holds a send
 * back (no algorithm may make a send wait for another rank: cda.c, the
 * progress rule of DESIGN.md §2). */
/* Both are inline (below this block); pb has the algorithm's pb_size bytes
 * and may be NULL only when pb_size is 0 (the termdetect API's counting). */
void td_primary_send_slow(td_ctx *c, int dest, uint8_t *pb); /* td_primary_send's general case */

/* The rank polled and found nothing (or waits in a blocking call). */
void td_passive(td_ctx *c);
/* A passive rank's turn would change nothing: the last one was a fixed
 * point of an algorithm that promises it is one (TD_ALGO_FIXPOINT), and no
 * input changed since (td_engine.c, "Quiet turns"). td_passive returns at
 * once then; a driver may test it inline first (tdshim's idle poll). */
static inline int td_quiet(const td_ctx *c)
{
    return c->quiet_gen == c->gen && c->quiet_sent == c->sent && c->quiet_recvd == c->recvd && !c->active;
}
/* Activity without a primary message (a collective call, Pcontrol, the
 * program's own declaration): a reason to work, as a primary received is. */
void td_activity(td_ctx *c);
/* The program called a collective: activity, and at the root the next
 * proof is confirmed (td_engine.c, td_quiescent: reports made before it may
 * be stale). */
void td_collective(td_ctx *c);
/* The program is about to block in a call in which the driver takes no
 * control message (a blocking collective: the MPI library's own, whose
 * results must be native's byte for byte). No rank may then wait for
 * this one's answer: the algorithm's on_block tells now whom it must. */
void td_blocking(td_ctx *c);
/* A primary message received without its piggyback (MPI truncated it and
 * wrote none of it, tdshim's header included: MPICH 4.0 over UCX): counted
 * and activity like any other; the algorithm's on_recv_lost judges it as the
 * most conservative piggyback would, an algorithm without a piggyback gets
 * its on_recv. One with a piggyback and no on_recv_lost (the credits of
 * cda/hcda, edod's acknowledgement, xulau's episode) cannot settle what the
 * piggyback carried: its announcement may never come, never too early. */
void td_primary_recv_lost(td_ctx *c, int src);
/* A primary's arrival made the rank active (td_primary_recv's slow case). */
void td_recv_activity(td_ctx *c);
/* The driver's header byte: base (stamp bits zero) is what it puts on
 * every primary, with the stamp in TD_STAMP_MASK; hdr_out / hdr_in follow. */
void td_stamp_base(td_ctx *c, uint8_t base);
/* A primary whose header byte hdr differs from c->hdr_in (stamped with
 * another episode) arrived from src with tag (for the report) */
void td_stamp_seen(td_ctx *c, int src, int tag, uint8_t hdr);
/* The rank is busy again without new work: a passive notion judged it
 * passive too early (TDSHIM_IDLE=spin saw the program run between two
 * polls). Active, but not dirty: it is no activity the episodes count. */
void td_busy(td_ctx *c);
/* The rank, passive, may have worked since its last poll (TDSHIM_IDLE=spin:
 * one long gap, which a machine's own hiccups also make). Nothing changes
 * but its answer to a confirmation wave: busy, as if active, until
 * td_passive (it spun again: the gap was noise; the wake it owes the root
 * goes then) or td_busy (a second long gap: it works). No transition is
 * counted, so a wave that does not visit it meanwhile is not refuted. */
void td_unsure(td_ctx *c);
/* The program consumed the notification of the last announcement. */
void td_notified(td_ctx *c);
/* It saw it (a probe found it): a reason to work, as td_notified */
void td_saw_notification(td_ctx *c);
/* A control message arrived. Returns TD_OK or an error (c->errmsg). */
int td_control(td_ctx *c, int src, const uint8_t *wire, size_t len);
/* Finalize: passive for good. */
void td_finalize(td_ctx *c);

static inline uint32_t td_episode(const td_ctx *c) { return c->episode; }

/* The primary-message fast paths, inline: they run for every message the
 * program sends or receives. A rank that is active and already showed
 * activity this episode (active, dirty) has nothing to record but the
 * count, and an algorithm without on_send keeps its piggyback in pb_out
 * (BCJ: the sweep stamp), so a send is a copy and an increment. Everything
 * else (a violation, the first activity of an episode, which may wake the
 * dormant root, on_send) is td_primary_send_slow. */
/* the piggyback of an algorithm without on_send: pb_out */
static inline __attribute__((always_inline)) void td_pb_static(const td_ctx *c, uint8_t *pb)
{
    if (c->pb_size) { /* BCJ: one byte; a loop here costs more than the send's other work */
        pb[0] = c->pb_out[0];
        for (unsigned i = 1; __builtin_expect(i < c->pb_size, 0); i++)
            pb[i] = c->pb_out[i];
    }
}
static inline void td_primary_send(td_ctx *c, int dest, uint8_t *pb)
{
    if (__builtin_expect(c->active & c->dirty & c->pb_static, 1)) {
        td_pb_static(c, pb);
        c->sent++;
        return;
    }
    td_primary_send_slow(c, dest, pb);
}

/* td_primary_send for a caller that checked c->active & c->dirty itself:
 * the slow case's work for such a rank (no violation, no dormant root to
 * wake, not armed with its count unchanged: td_announce_local clears dirty)
 * is on_send's, so an algorithm with on_send (cda, hcda, edod, xulau) takes
 * the inline send paths too (issue 43: its sends took the general path,
 * 230 instructions a message before on_send ran) */
static inline __attribute__((always_inline)) void td_primary_send_dirty(td_ctx *c, int dest, uint8_t *pb)
{
    if (__builtin_expect(c->pb_static, 1))
        td_pb_static(c, pb);
    else
        c->on_send(c, c->st, dest, pb);
    c->sent++;
}

static inline void td_primary_recv(td_ctx *c, int src, const uint8_t *pb)
{
    c->recvd++;
    if (__builtin_expect(!(c->active & c->dirty), 0))
        td_recv_activity(c);
    if (c->on_recv)
        c->on_recv(c, c->st, src, pb);
}
/* n primaries received together, their piggybacks at pb + i * stride
 * (i < n): what n calls of td_primary_recv do, for an algorithm that has
 * on_recv_many or no on_recv (td_recv_many_ok) */
static inline int td_recv_many_ok(const td_ctx *c)
{
    return !c->on_recv || c->on_recv_many;
}
static inline void td_primary_recv_many(td_ctx *c, const uint8_t *pb, size_t stride, unsigned n)
{
    c->recvd += n;
    if (__builtin_expect(!(c->active & c->dirty), 0))
        td_recv_activity(c);
    if (c->on_recv_many)
        c->on_recv_many(c, c->st, pb, stride, n);
}
/* ...for a core whose on_recv needs each message's source and has no
 * on_recv_many (cda, hcda, edod, xulau): what n calls of td_primary_recv
 * do, in order, src[i] the world rank of message i (issue 43: these
 * algorithms' receives took the general path, 150 instructions a message
 * more than bcj's flat ones) */
static inline void td_primary_recv_src(td_ctx *c, const uint8_t *pb, size_t stride, const int *src, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        td_primary_recv(c, src[i], pb + i * stride);
}
const char *td_type_name(const td_ctx *c, int engine, int type);
/* one line of this rank's detection state: the episode, its counts and
 * what the algorithm waits for (TDSHIM_VERBOSE, the partial report) */
void td_describe(const td_ctx *c, char *buf, size_t len);

/* ------------------------------------------------------------------ */
/* Algorithm registry (td_algos.c)                                     */
/* ------------------------------------------------------------------ */

const struct td_algo *td_algo_find(const char *name);
/* NULL-terminated list of the algorithms built into this core. */
const struct td_algo *const *td_algo_list(void);
/* writes "bcj, skr, ..." (for error messages) into buf */
void td_algo_names(char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
