/*
 * The interface every termination-detection algorithm implements, and the
 * services the engine offers it. One algorithm = one td_algo table + a
 * state struct (DESIGN.md §2). Algorithms never see the wire: they build a
 * td_msg and call td_send(); the engine encodes, counts and transmits.
 *
 * Contract the engine guarantees to an algorithm:
 *   - on_control() is only called with messages of the current episode,
 *     of this algorithm, with type < ntypes;
 *   - on_passive() is called whenever the rank is passive and ready for the
 *     current episode: when it becomes passive, on every poll while passive,
 *     and after each control message handled while passive. Algorithms do
 *     their protocol work there (Charm++ QD: control work costs a busy rank
 *     nothing), and only record state in on_control() when the rank is active;
 *   - c->sent / c->recvd are cumulative primary counts, already updated when
 *     on_recv() runs; on_send() runs before the count and cannot hold the
 *     send back: tdshim never waits for another rank except inside a call
 *     that waits natively for that same rank (DESIGN.md §2, cda.c);
 *   - after an announcement is learned, new_episode() runs before any message
 *     of the next episode is delivered.
 *
 * An algorithm proves quiescence of the current episode by calling
 * td_quiescent(c, dirty) at rank 0 (dirty = OR of TD_MF_DIRTY over the
 * ranks' reports, including rank 0's own c->dirty). The engine announces
 * (broadcast TERM over the tree) when dirty is set, and otherwise makes the
 * root dormant until some rank shows activity (SLEEP/WAKE), so a program
 * that keeps polling after a notification is not notified twice.
 * Symmetric algorithms (TD_ALGO_SYMMETRIC) call td_announce_local() on
 * every rank instead.
 */
#ifndef TD_ALGO_H
#define TD_ALGO_H

#include "td_core.h"

enum {
    TD_ALGO_SYMMETRIC = 1u, /* every rank proves quiescence itself: td_announce_local. A rank that learned
                             * an announcement must not be needed to answer later: the driver takes no
                             * control message in the program's blocking collectives, so the rank tells
                             * every rank that may not have learned it when it announces (bcjrd) or at
                             * the latest when the program blocks (on_block: xulau); tests/core/test-barrier */
    TD_ALGO_BROKEN = 2u,    /* deliberately broken variant (TD_TEST_BROKEN builds): tests must catch it */
    TD_ALGO_NODETECT = 4u,  /* never announces (the "none" baseline) */
    TD_ALGO_CREDIT = 8u,    /* a credit algorithm (cda, hcda): the TDSHIM_CDA_* constants apply and must agree */
    TD_ALGO_LATE = 16u,     /* on_control also sees messages of an announced episode (m->episode older): they
                             * settle per-message bookkeeping (edod's acknowledgements) after a premature
                             * announcement; the engine still marks the episode unsafe */
    TD_ALGO_EPISODE = 64u,  /* the piggyback carries the sender's whole episode and on_recv calls
                             * td_late_primary for an older one (td_engine.c, "Premature announcements") */
    TD_ALGO_MODEL = 32u,    /* not for users, not broken (TD_TEST_BROKEN builds): a variant that mirrors an
                             * abstraction of a SPIN model (bcj-mod4), so the model's executions replay through it */
    TD_ALGO_OVERLAY = 128u, /* xulau: TDSHIM_XULAU_TOPO/_DIMS shape the protocol (they must agree, tds_init.c) */
    TD_ALGO_FIXPOINT = 256u, /* on_passive reads only its state struct (no memory behind a pointer) and the
                              * context: a turn that sends nothing, calls no engine service and leaves the
                              * struct's bytes as they were would do the same at the next poll, and the
                              * engine skips the turns after it until an input changes (td_engine.c,
                              * "Quiet turns"; cfg.quiet_check makes the simulator verify it) */
};

typedef struct td_algo {
    const char *name;
    uint8_t id;              /* wire algo id, unique, > 0 */
    uint8_t ntypes;          /* message types 0..ntypes-1 */
    const char *const *type_names;
    uint8_t pb_size;         /* piggyback bytes on every primary, <= TD_PB_MAX */
    unsigned flags;          /* TD_ALGO_* */
    size_t state_size;

    int (*init)(td_ctx *c, void *st);
    void (*fini)(td_ctx *c, void *st);
    void (*new_episode)(td_ctx *c, void *st);
    /* on_send NULL: the piggyback of every send is c->pb_out (zero unless
     * the algorithm writes it), copied by the engine's inline fast path */
    void (*on_send)(td_ctx *c, void *st, int dest, uint8_t *pb);
    void (*on_recv)(td_ctx *c, void *st, int src, const uint8_t *pb);
    /* optional, beside on_recv: n primaries received together (one
     * completion call of the program's completed them all), their
     * piggybacks pb_size bytes each at pb, pb + stride, ...; c->recvd
     * already counts all n. It must do what n calls of on_recv do, in any
     * order and without their sources: only for an algorithm whose on_recv
     * ignores src and whose calls commute (BCJ's maximum of stamps). The
     * shim gives a window of receives to one call (td_primary_recv_many):
     * one indirect call per message cost BCJ's receiver 11 instructions
     * and a frame (issue 28). */
    void (*on_recv_many)(td_ctx *c, void *st, const uint8_t *pb, size_t stride, unsigned n);
    /* optional: a primary received whose piggyback was lost
     * (td_primary_recv_lost); it must assume the worst piggyback */
    void (*on_recv_lost)(td_ctx *c, void *st, int src);
    void (*on_passive)(td_ctx *c, void *st);
    int (*on_control)(td_ctx *c, void *st, int src, const td_msg *m);
    /* optional: one line of what this rank's part of the protocol waits
     * for (TDSHIM_VERBOSE progress lines, the partial report of a killed
     * job); reads the state only */
    void (*describe)(const td_ctx *c, const void *st, char *buf, size_t len);
    /* optional, called at the root only: the root called a collective
     * (td_collective). An algorithm that has it gives up the proof in
     * progress there, so that its next proof rests only on reports asked
     * for after the collective, and the engine then does not confirm that
     * proof with two count waves (td_quiescent, coll_taint): see bcj.c. */
    void (*on_collective)(td_ctx *c, void *st);
    /* optional: the program is about to block in a call in which the
     * driver takes no control message (a blocking collective, td_blocking):
     * the last moment to tell a rank that may wait for this one's word */
    void (*on_block)(td_ctx *c, void *st);
} td_algo;

/* "children a-b" of this rank in the tree, for describe() */
int td_children_str(const td_ctx *c, char *buf, size_t len);

/* BCJ's one-byte sweep stamp decoded against the receiver's sweep r: the
 * number congruent to byte in [r-254, r+1] (the safety argument is in
 * bcj.c). Inline: it runs on every received message. */
static inline uint32_t td_bcj_stamp(uint32_t r, uint8_t byte)
{
    uint32_t hi = r + 1;                          /* the newest possible stamp */
    uint8_t back = (uint8_t)((uint8_t)hi - byte); /* hi - s modulo 256 */
    return back > hi ? 0 : hi - back;
}

/* Services for algorithms (td_engine.c). */
void td_send(td_ctx *c, int dest, td_msg *m); /* fills algo id and episode */
/* the same, stamped with episode ep: c->episode + 1 from a rank that knows
 * the current episode announced before TERM reached it (cda.c, "ahead") */
void td_send_ep(td_ctx *c, int dest, td_msg *m, uint32_t ep);
void td_quiescent(td_ctx *c, int dirty);
void td_announce_local(td_ctx *c);
/* symmetric algorithms: tell rank dest, still in the episode this rank
 * announced last, that it was announced at round c->ann_seq (engine TERM;
 * dest adopts it) */
void td_tell_announced(td_ctx *c, int dest);
/* A primary stamped with episode ep < c->episode (an algorithm that
 * piggybacks the episode, TD_ALGO_EPISODE): it belongs to an announced
 * episode, so that announcement (ep + 1) was premature. Marks it unsafe
 * (late-primary, with the tag td_stamp_seen saw); the caller drops what the
 * message carried for episode ep. */
void td_late_primary(td_ctx *c, int src, uint32_t ep);
int td_fail(td_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static inline int td_is_root(const td_ctx *c) { return c->rank == 0; }

/* a control message this rank needs may be waiting (td_ctx.want_poll) */
static inline void td_want_poll(td_ctx *c)
{
    if (c->want_poll)
        return;
    c->want_poll = 1;
    if (c->io.want_poll)
        c->io.want_poll(c->io.user);
}

/* Credit algorithms (cda.c, hcda.c; cda.c's header has the argument).
 * A BORROW (message type `type`) to rank 0 for a prepaid primary to dest
 * (-1: none), with a REFILL for this rank when `refill` (message flag
 * `refill_flag`, seq ++*seq, *borrowing set), stamped with episode ep. */
static inline void td_credit_borrow(td_ctx *c, uint8_t type, int dest, int refill, uint8_t refill_flag,
                                    uint64_t *seq, uint8_t *borrowing, uint32_t ep)
{
    td_msg m = {.type = type, .a = dest};
    if (!refill && *borrowing)
        td_want_poll(c); /* its REFILL's grant may be waiting */
    if (refill) {
        m.flags = refill_flag;
        m.seq = ++*seq;
        *borrowing = 1;
    }
    td_send_ep(c, 0, &m, ep);
    c->stats.borrows++;
}
/* One half of a prepaid pair (the primary, or its grant) reaches its
 * receiver: pairs are counted, whichever half comes first waits for the
 * other in *mine. Returns 1 when this half completes a pair. */
static inline int td_prepaid_half(uint64_t *mine, uint64_t *other)
{
    if (*other) {
        (*other)--;
        return 1;
    }
    (*mine)++;
    return 0;
}

/* A prepaid primary reaches its receiver (on_recv): td_prepaid_half, and
 * when it came before its other half (rank 0: the BORROW; another rank:
 * the grant), the driver is asked to drain the control channel
 * (td_ctx.want_poll): a receiver that never waits long enough to poll
 * would leave the BORROW, and the REFILL queued before it, unanswered
 * while its sender prepays every message (issue 43). */
static inline int td_prepaid_primary(td_ctx *c, uint64_t *awaiting, uint64_t *reserved)
{
    if (td_prepaid_half(awaiting, reserved))
        return 1;
    td_want_poll(c);
    return 0;
}

/* Counts of primary messages in control messages: no run reaches 2^53
 * (9e15 messages), so a larger one is forged or corrupted. Checking every
 * received count against it keeps every sum of them (at most 64 children
 * and the rank's own counts) far from int64 overflow (tests/fuzz). */
#define TD_COUNT_MAX ((int64_t)1 << 53)
static inline int td_count_ok(int64_t v) { return v >= 0 && v <= TD_COUNT_MAX; }
static inline int td_child(const td_ctx *c, int src)
{
    return src >= c->tree.first_child && src < c->tree.first_child + c->tree.nchildren;
}
static inline uint8_t td_dirty_flag(const td_ctx *c) { return c->dirty ? TD_MF_DIRTY : 0; }

/* little-endian helpers for piggyback bytes */
static inline void td_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}
static inline uint32_t td_get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline void td_put64(uint8_t *p, uint64_t v) { td_put32(p, (uint32_t)v); td_put32(p + 4, (uint32_t)(v >> 32)); }
static inline uint64_t td_get64(const uint8_t *p) { return td_get32(p) | (uint64_t)td_get32(p + 4) << 32; }

#endif
