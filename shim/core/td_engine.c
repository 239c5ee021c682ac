/*
 * The engine: the part of the core common to every algorithm. It counts
 * primary messages, tracks passive/active, validates and routes control
 * messages, and implements episodes (DESIGN.md §1, "Notification"):
 *
 *   - an algorithm proves quiescence at rank 0 with td_quiescent(c, dirty);
 *   - if some rank showed activity since it learned of the previous
 *     announcement (dirty), the engine announces: TERM goes down the tree and
 *     every rank moves to the next episode;
 *   - otherwise the job is still quiescent since the last announcement: the
 *     root goes dormant (SLEEP down the tree) instead of announcing twice, and
 *     the first rank to show activity afterwards sends it one WAKE;
 *   - with gate_on_notify, a rank takes part in the next episode only after
 *     the program consumed the notification (td_notified): a rank that has
 *     not yet seen the end of phase k cannot vouch for phase k+1. Messages of
 *     an episode the rank has not reached are held and replayed in order.
 */
#include "td_algo.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct td_held {
    int src;
    td_msg m;
};

static const char *const engine_type_names[TD_EM_NTYPES] = {"terminate", "sleep", "wake", "confirm",
                                                              "confirm-ack", "confirm-wake"};

const char *td_strerror(int rc)
{
    switch (rc) {
    case TD_OK: return "ok";
    case TD_EINVAL: return "invalid argument";
    case TD_EPROTO: return "protocol error";
    case TD_EWIRE: return "malformed control message";
    case TD_ENOMEM: return "out of memory";
    }
    return "unknown error";
}

void td_cfg_default(td_cfg *cfg, int rank, int size)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->rank = rank;
    cfg->size = size;
    cfg->tree_arity = 2;
    /* CDA: the paper's experiments use C_init = 2^32 (cda-credit-hpc.txt
     * §V-B); cda carries credit in 32 bits, so the default is 2^31. The
     * paper gives no values for C_con, W_con, C_borrow: these are ours. */
    cfg->cda_init = (int64_t)1 << 31;
    cfg->cda_con = 64;
    cfg->cda_wcon = 16;
    cfg->cda_borrow = (int64_t)1 << 20;
    cfg->xulau_topo = TD_TOPO_RING;
}

const char *td_type_name(const td_ctx *c, int engine, int type)
{
    if (engine)
        return type >= 0 && type < TD_EM_NTYPES ? engine_type_names[type] : "?";
    if (type < 0 || type >= c->algo->ntypes)
        return "?";
    return c->algo->type_names[type];
}

int td_children_str(const td_ctx *c, char *buf, size_t len)
{
    const td_tree *t = &c->tree;
    if (t->nchildren == 0)
        return snprintf(buf, len, "no children");
    if (t->nchildren == 1)
        return snprintf(buf, len, "child %d", t->first_child);
    return snprintf(buf, len, "children %d-%d", t->first_child, t->first_child + t->nchildren - 1);
}

void td_describe(const td_ctx *c, char *buf, size_t len)
{
    int n = snprintf(buf, len,
                     "episode %u: %s%s%s, primaries sent %llu received %llu, control sent %llu received %llu, "
                     "waves %llu",
                     (unsigned)c->episode + 1, c->finalized ? "finalized" : c->active ? "active" : "passive",
                     c->dirty ? "" : ", no activity since the last announcement", c->dormant ? ", dormant" : "",
                     (unsigned long long)c->sent, (unsigned long long)c->recvd,
                     (unsigned long long)td_ctl_total(c->stats.ctl_sent),
                     (unsigned long long)td_ctl_total(c->stats.ctl_recv), (unsigned long long)c->stats.waves);
    if (n < 0 || (size_t)n >= len)
        return;
    if (c->confirming) {
        int k = snprintf(buf + n, len - (size_t)n, "; confirmation wave %llu round %d, %d answers due",
                         (unsigned long long)(c->conf_seq / 2), (int)(c->conf_seq & 1) + 1, c->conf_wait);
        if (k < 0 || (size_t)(n += k) >= len)
            return;
    }
    if (c->error) {
        snprintf(buf + n, len - (size_t)n, "; stopped: %s", c->errmsg);
        return;
    }
    if (c->algo->describe && len - (size_t)n > 3) {
        buf[n++] = ';';
        buf[n++] = ' ';
        buf[n] = '\0';
        c->algo->describe(c, c->st, buf + n, len - (size_t)n);
    }
}

int td_fail(td_ctx *c, const char *fmt, ...)
{
    c->gen++;
    if (!c->error) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->errmsg, sizeof c->errmsg, fmt, ap);
        va_end(ap);
        c->error = TD_EPROTO;
    }
    return TD_EPROTO;
}

int td_ctx_init(td_ctx *c, const td_algo *algo, const td_cfg *cfg, const td_io *io)
{
    memset(c, 0, sizeof *c);
    if (!algo || !cfg || !io || !io->send || algo->pb_size > TD_PB_MAX || algo->ntypes > TD_MAX_TYPES)
        return TD_EINVAL;
    c->algo = algo;
    c->io = *io;
    c->cfg = *cfg;
    c->rank = cfg->rank;
    c->size = cfg->size;
    if (td_tree_init(&c->tree, cfg->rank, cfg->size, cfg->tree_arity > 0 ? cfg->tree_arity : 2) != TD_OK)
        return TD_EINVAL;
    c->active = 1;
    c->dirty = 1; /* the start of the program is activity: episode 1 may be announced */
    c->ready = 1;
    c->reason = 1; /* the start of the program is a reason to work */
    c->unsafe_tag = c->late_tag = -1;
    td_stamp_base(c, 0);
    c->pb_static = algo->on_send == NULL;
    c->pb_size = algo->pb_size;
    c->on_send = algo->on_send;
    c->on_recv = algo->on_recv;
    c->on_recv_many = algo->on_recv ? algo->on_recv_many : NULL;
    c->gen = 1; /* quiet_gen 0: not quiet */
    /* TD_ALGO_FIXPOINT: the copy quiet turns compare with follows the state */
    size_t fix = (algo->flags & TD_ALGO_FIXPOINT) && algo->state_size ? 2 : 1;
    c->st = calloc(fix, algo->state_size ? algo->state_size : 1);
    if (!c->st)
        return TD_ENOMEM;
    c->st_prev = fix == 2 ? (char *)c->st + algo->state_size : NULL;
    return algo->init ? algo->init(c, c->st) : TD_OK;
}

void td_ctx_fini(td_ctx *c)
{
    if (c->algo && c->algo->fini && c->st)
        c->algo->fini(c, c->st);
    free(c->st);
    free(c->held);
    c->st = c->st_prev = NULL;
    c->held = NULL;
    c->nheld = c->capheld = 0;
}

/* ---------------------------------------------------------------- sending */

static void transmit(td_ctx *c, int dest, const td_msg *m, int engine)
{
    uint8_t wire[TD_WIRE_SIZE];
    td_wire_encode(m, wire);
    c->stats.ctl_sent[engine ? 0 : 1][m->type]++;
    /* send-before ("Premature announcements"): a report, or any control
     * message, made while passive */
    c->ctl_gen = c->active ? 0 : c->passive_gen;
    c->viol_rep = 0;
    c->gen++; /* a turn that sends is no fixed point */
    c->io.send(c->io.user, dest, wire);
}

void td_send_ep(td_ctx *c, int dest, td_msg *m, uint32_t ep)
{
    m->algo = c->algo->id;
    m->episode = ep;
    transmit(c, dest, m, 0);
}

void td_send(td_ctx *c, int dest, td_msg *m) { td_send_ep(c, dest, m, c->episode); }

static void engine_send(td_ctx *c, int dest, int type, uint64_t seq)
{
    td_msg m = {.algo = 0, .type = (uint8_t)type, .episode = c->episode, .seq = seq};
    transmit(c, dest, &m, 1);
}

static void engine_to_children(td_ctx *c, int type, uint64_t seq)
{
    for (int i = 0; i < c->tree.nchildren; i++)
        engine_send(c, c->tree.first_child + i, type, seq);
}

/* ---------------------------------------------------------------- episodes */

static void progress(td_ctx *c);

static void stamp_update(td_ctx *c);

static void send_before(td_ctx *c);

void td_announce_local(td_ctx *c)
{
    c->gen++;
    c->episode++;
    /* sender-side evidence ("Premature announcements" below) */
    if (c->viol_rep)
        send_before(c);
    c->viol_rep = 0;
    c->ctl_gen = 0;
    c->armed = !c->reason && c->recvd == c->recv_mark && !c->finalized;
    c->arm_recvd = c->recvd;
    c->ahead = 0;
    stamp_update(c);
    c->dirty = 0;
    c->dormant = 0;
    /* A finalized rank stays ready (td_finalize): its program is gone and
     * consumes no notification, so a gate here would shut it out of every
     * later episode. The ranks still running may work on after this
     * announcement (a new phase, or a late receive that the program drops
     * after a premature notification); their next episode then needs this
     * rank's part in the waves, and without it every dirty rank waits out
     * TDSHIM_FINALIZE_TIMEOUT at MPI_Finalize, or for ever for a
     * notification (issue 41: the fourcounter stall at MPI_Finalize). */
    c->ready = c->finalized || !c->cfg.gate_on_notify;
    if (c->algo->new_episode)
        c->algo->new_episode(c, c->st);
    if (c->io.announce)
        c->io.announce(c->io.user, c->episode);
}

/*
 * Confirmation (cfg.confirm; TDSHIM_CONFIRM, README "Choosing TDSHIM_IDLE").
 * A notion that judges passivity from timing (TDSHIM_IDLE=spin) may take a
 * busy rank for a passive one. Before announcing, the root then checks the
 * algorithm's proof with two waves over the tree, four-counter style
 * (papers/cda-credit-hpc.txt §III-B; Mattern's four counters): each rank
 * answers with its primary counts sent and received, its count of
 * passive->active transitions, and whether it is active (or not ready) now;
 * subtrees add up. The proof stands if both waves find every rank passive,
 * sent == received, and the same three sums: every rank was then passive
 * throughout the interval between its two visits (no transition), which all
 * contain the instant between the waves, and at that instant nothing was in
 * transit (the counts did not move). A misjudged rank that works between
 * polls is unsure at its next poll (td_unsure: one long gap) and active
 * again at the one after (td_busy: a second one before it spins again);
 * either way it answers the next wave busy, so the proof is refuted; the
 * algorithm then goes on as after a dormancy wake. Cost: two tree traversals down and up
 * (4 x depth control hops) added to every announcement. Symmetric
 * algorithms (xulau) announce on every rank and are not confirmed here:
 * xulau lengthens its own idle window instead (xl_init).
 */
static void conf_snapshot(td_ctx *c)
{
    c->conf_acc[0] = (int64_t)c->sent;
    c->conf_acc[1] = (int64_t)c->recvd;
    c->conf_acc[2] = (int64_t)c->stats.idle_to_busy;
    c->conf_busy = c->active || !c->ready || c->unsure;
    if (c->conf_busy)
        c->conf_owe_wake = 1;
}

/* A proof refuted because a rank was busy is not proven again until that
 * rank is passive again: it owes the root a CONF_WAKE (carrying the wave's
 * round-1 seq), sent at its next passive transition (td_passive). Without
 * this a credit algorithm, whose proof is immediate (out == 0 at the root),
 * would prove and refute in a loop while the rank works. A wake that
 * arrives before the refutation it answers still counts (conf_woken). */
static int conf_held(const td_ctx *c)
{
    return c->conf_hold && c->conf_woken < c->conf_hold;
}

static void conf_wake(td_ctx *c)
{
    c->conf_owe_wake = 0;
    uint64_t s1 = c->conf_seq & ~(uint64_t)1;
    if (c->rank == 0) {
        if (s1 > c->conf_woken)
            c->conf_woken = s1;
        return;
    }
    engine_send(c, 0, TD_EM_CONF_WAKE, s1);
}

static void conf_round(td_ctx *c, int round)
{
    if (round == 1)
        c->conf_seq = (c->conf_seq / 2 + 1) * 2;
    else
        c->conf_seq |= 1;
    c->confirming = 1;
    conf_snapshot(c);
    c->conf_wait = c->tree.nchildren;
    engine_to_children(c, TD_EM_CONF, c->conf_seq);
}

static void conf_subtree_done(td_ctx *c);

static void conf_decide(td_ctx *c)
{
    if (!(c->conf_seq & 1)) { /* round 1 in: keep it, start round 2 */
        memcpy(c->conf_r1, c->conf_acc, sizeof c->conf_r1);
        c->conf_r1_busy = c->conf_busy;
        conf_round(c, 2);
        if (c->conf_wait == 0)
            conf_subtree_done(c);
        return;
    }
    c->confirming = 0;
    int same = !memcmp(c->conf_r1, c->conf_acc, sizeof c->conf_r1);
    if (!c->conf_r1_busy && !c->conf_busy && same && c->conf_acc[0] == c->conf_acc[1]) {
        c->stats.confirmed++;
        engine_to_children(c, TD_EM_TERM, 0);
        td_announce_local(c);
    } else {
        c->stats.refuted++; /* the algorithm proves it again (progress -> on_passive) */
        if (c->conf_r1_busy || c->conf_busy)
            c->conf_hold = c->conf_seq & ~(uint64_t)1; /* ...once the busy rank is passive again */
    }
}

static void conf_subtree_done(td_ctx *c)
{
    if (c->rank == 0) {
        conf_decide(c);
        return;
    }
    td_msg m = {.algo = 0, .type = TD_EM_CONF_ACK, .episode = c->episode, .seq = c->conf_seq,
                .a = c->conf_acc[0], .b = c->conf_acc[1], .c = c->conf_acc[2], .flags = c->conf_busy};
    transmit(c, c->tree.parent, &m, 1);
}

void td_quiescent(td_ctx *c, int dirty)
{
    c->gen++;
    if (c->confirming)
        return; /* a proof is being confirmed already */
    /* A collective at the root since its wave began (td_collective): the
     * wave may hold reports that ranks sent while passive before the
     * collective, and the collective may have made them active without a
     * primary message (no stamp, no count tells it: a phase that starts
     * after an MPI_Allreduce, say, with the work on one rank). The root's
     * own dirtiness from that collective would then announce on stale
     * reports (issue 37: work_steal, bcj, 2 ranks on a loaded node,
     * early=1-2 of 10 phases). So that proof is confirmed by two count
     * waves that start after the collective, whatever TDSHIM_CONFIRM says:
     * a rank still working then refutes it. The first proof after each
     * collective pays the two waves; a collective without the root (a
     * sub-communicator) is not seen here (docs/internals.md). */
    int coll = c->coll_taint;
    c->coll_taint = 0;
    if (dirty && coll && !c->cfg.confirm)
        c->stats.coll_confirms++;
    if (dirty && (c->cfg.confirm || coll) && !(c->algo->flags & TD_ALGO_SYMMETRIC)) {
        conf_round(c, 1);
        if (c->conf_wait == 0)
            conf_subtree_done(c);
        return;
    }
    if (dirty) {
        engine_to_children(c, TD_EM_TERM, 0);
        td_announce_local(c);
        return;
    }
    c->stats.quiescent_clean++;
    c->dormant = 1;
    c->sleep_id++;
    engine_to_children(c, TD_EM_SLEEP, c->sleep_id);
}

static void mark_dirty(td_ctx *c)
{
    if (c->dirty)
        return;
    c->dirty = 1;
    if (c->dormant) {
        c->dormant = 0;
        if (c->rank != 0)
            engine_send(c, 0, TD_EM_WAKE, c->sleep_id);
    }
}

/* ---------------------------------------------------------------- primary */

static void send_after(td_ctx *c, int dest);

void td_primary_send_slow(td_ctx *c, int dest, uint8_t *pb)
{
    c->gen++;
    if (__builtin_expect(c->armed, 0))
        send_after(c, dest);
    if (!c->active) {
        /* contract violation: a passive rank sends before receiving (§1) */
        c->stats.violations++;
        if (c->ctl_gen && c->ctl_gen == c->passive_gen)
            c->viol_rep = 1; /* send-before, judged when it learns the announcement */
        c->stats.idle_to_busy++;
        c->active = 1;
    }
    if (c->algo->on_send)
        c->algo->on_send(c, c->st, dest, pb);
    else if (c->pb_size)
        memcpy(pb, c->pb_out, c->pb_size);
    c->sent++;
    mark_dirty(c);
}

void td_recv_activity(td_ctx *c)
{
    c->gen++;
    if (!c->active) {
        c->active = 1;
        c->stats.idle_to_busy++;
    }
    mark_dirty(c);
}

void td_collective(td_ctx *c)
{
    c->gen++;
    td_activity(c);
    if (c->tree.parent >= 0)
        return;
    if (c->algo->on_collective)
        c->algo->on_collective(c, c->st);
    else
        c->coll_taint = 1;
}

void td_blocking(td_ctx *c)
{
    c->gen++;
    if (c->algo->on_block)
        c->algo->on_block(c, c->st);
}

void td_primary_recv_lost(td_ctx *c, int src)
{
    c->gen++;
    c->recvd++;
    td_recv_activity(c); /* a primary's arrival, without its stamp */
    if (c->algo->on_recv_lost)
        c->algo->on_recv_lost(c, c->st, src);
    else if (!c->pb_size && c->on_recv)
        c->on_recv(c, c->st, src, NULL);
}

void td_activity(td_ctx *c)
{
    c->gen++;
    /* the first reason to work since the rank was last passive: it may be
     * the next phase's start, before this rank learned the announcement
     * that ended the last one ("Premature announcements": ahead) */
    if (!c->reason && c->recvd == c->recv_mark && !c->ahead) {
        c->ahead = 1;
        stamp_update(c);
    }
    c->reason = 1;
    c->armed = 0;
    td_recv_activity(c);
}

void td_busy(td_ctx *c)
{
    c->gen++;
    c->unsure = 0;
    if (!c->active) {
        c->active = 1;
        c->stats.idle_to_busy++;
        c->stats.busy_again++;
    }
}

/* Confirmation (above): an unsure rank answers a wave busy, so a proof
 * whose wave visits it while it may be working is refuted (and held until
 * its wake); an isolated long gap that no wave sees refutes nothing. */
void td_unsure(td_ctx *c)
{
    c->gen++;
    if (!c->active && !c->unsure) {
        c->unsure = 1;
        c->stats.unsure++;
    }
}

void td_notified(td_ctx *c)
{
    c->gen++;
    if (!c->active) {
        c->active = 1;
        c->stats.idle_to_busy++;
    }
    c->reason = 1; /* the next phase may start */
    c->armed = 0;
    c->ready = 1;
}

/* only disarms: the rank stays passive, and a reason that does not make
 * it active would hide the first reason after a later announcement (ahead) */
void td_saw_notification(td_ctx *c)
{
    c->gen++;
    c->armed = 0;
}

/*
 * Quiet turns. An idle rank polls, and every empty poll gives the
 * algorithm its passive turn (td_algo.h). Once a turn sent nothing,
 * called no engine service and left the algorithm's state as it was, the
 * next one would do the same unless an input changed: a control message
 * (dispatch), a primary (c->sent, c->recvd: the inline paths change only
 * these), the driver's word (td_busy, td_notified, td_activity, ...). The
 * engine counts those inputs in c->gen (every entry point but the turn
 * itself, and every control message sent, transmit) and marks such a turn
 * quiet: td_passive then returns at once until the counts move. An idle
 * MPI_Testany spent 83 of its 414 instructions redoing the turn (issue
 * 38, bench/RESULTS.md).
 *
 * Sound only where on_passive is a function of the state struct and the
 * context: an algorithm that keeps state behind a pointer (edod's
 * per-neighbour tables, xulau's overlay) could change that memory in a
 * turn that looks unchanged here, and its next turn, skipped, might have
 * sent what the protocol waits for (no notification: a liveness failure).
 * So an algorithm opts in with TD_ALGO_FIXPOINT. Only the second turn of
 * a passive period and later ones are compared (the first one after the
 * transition nearly always sends), so a rank that goes passive once per
 * message pays no copy. cfg.quiet_check (the simulator, the core's tests)
 * runs the turns that would be skipped and fails if one changes anything.
 */
static void passive_turn(td_ctx *c, int was_quiet)
{
    size_t sz = c->algo->state_size;
    uint64_t g = c->gen, sent = c->sent, recvd = c->recvd;
    memcpy(c->st_prev, c->st, sz);
    progress(c);
    if (c->gen == g && c->sent == sent && c->recvd == recvd && !c->active && !memcmp(c->st_prev, c->st, sz)) {
        c->quiet_gen = g;
        c->quiet_sent = sent;
        c->quiet_recvd = recvd;
    } else if (was_quiet) {
        td_fail(c, "%s: a passive turn after a quiet one changed %s (TD_ALGO_FIXPOINT does not hold)",
                c->algo->name, c->gen != g ? "the engine's inputs or sent a control message" : "its state");
    }
}

void td_passive(td_ctx *c)
{
    int quiet = td_quiet(c);
    if (quiet && !c->cfg.quiet_check)
        return;
    if (c->active) {
        c->gen++;
        c->active = 0;
        c->reason = 0;
        c->recv_mark = c->recvd;
        c->passive_gen++;
        c->stats.busy_to_idle++;
        if (c->conf_owe_wake)
            conf_wake(c);
        c->unsure = 0;
    } else {
        if (c->unsure) { /* it spun again: sure now, and the wake it may owe goes */
            c->unsure = 0;
            if (c->conf_owe_wake)
                conf_wake(c);
        }
        if (c->st_prev) {
            passive_turn(c, quiet); /* passive already: a fixed point? */
            return;
        }
    }
    progress(c);
}

void td_finalize(td_ctx *c)
{
    c->gen++;
    c->finalized = 1;
    c->ready = 1; /* a finalizing rank vouches for every later episode */
    td_passive(c);
}

/* ---------------------------------------------------------------- control */

static int hold(td_ctx *c, int src, const td_msg *m)
{
    if (c->nheld == c->capheld) {
        size_t cap = c->capheld ? 2 * c->capheld : 8;
        td_held *h = realloc(c->held, cap * sizeof *h);
        if (!h)
            return td_fail(c, "out of memory holding a control message");
        c->held = h;
        c->capheld = cap;
    }
    c->held[c->nheld].src = src;
    c->held[c->nheld].m = *m;
    c->nheld++;
    c->stats.held++;
    return TD_OK;
}

static int engine_control(td_ctx *c, int src, const td_msg *m)
{
    switch (m->type) {
    case TD_EM_TERM:
        if (c->algo->flags & TD_ALGO_SYMMETRIC) { /* from a neighbour that announced (dispatch) */
            if (m->episode == c->episode) {
                c->ann_seq = m->seq;
                td_announce_local(c);
            }
            return TD_OK; /* otherwise learned already */
        }
        if (m->episode != c->episode || c->rank == 0)
            return td_fail(c, "terminate for episode %u from rank %d at episode %u", m->episode, src, c->episode);
        engine_to_children(c, TD_EM_TERM, 0);
        td_announce_local(c);
        return TD_OK;
    case TD_EM_SLEEP:
        if (m->episode < c->episode)
            return TD_OK; /* an older episode's dormancy: moot */
        if (m->episode > c->episode || c->rank == 0)
            return td_fail(c, "sleep for episode %u from rank %d at episode %u", m->episode, src, c->episode);
        engine_to_children(c, TD_EM_SLEEP, m->seq);
        if (m->seq > c->sleep_id) {
            c->sleep_id = (uint32_t)m->seq;
            if (c->dirty)
                engine_send(c, 0, TD_EM_WAKE, c->sleep_id);
            else
                c->dormant = 1;
        }
        return TD_OK;
    case TD_EM_WAKE:
        if (c->rank != 0)
            return td_fail(c, "wake sent to rank %d", c->rank);
        if (m->episode == c->episode && m->seq == c->sleep_id)
            c->dormant = 0;
        return TD_OK; /* otherwise stale: the root already woke or announced */
    case TD_EM_CONF: /* a confirmation wave: snapshot, pass it down, answer when the subtree has */
        if (c->rank == 0 || src != c->tree.parent)
            return td_fail(c, "confirmation wave from rank %d at rank %d", src, c->rank);
        c->conf_seq = m->seq;
        conf_snapshot(c);
        c->conf_wait = c->tree.nchildren;
        engine_to_children(c, TD_EM_CONF, m->seq);
        if (c->conf_wait == 0)
            conf_subtree_done(c);
        return TD_OK;
    case TD_EM_CONF_WAKE:
        if (c->rank != 0)
            return td_fail(c, "confirmation wake sent to rank %d", c->rank);
        if (m->seq > c->conf_woken)
            c->conf_woken = m->seq;
        return TD_OK;
    case TD_EM_CONF_ACK:
        if (!td_child(c, src) || !td_count_ok(m->a) || !td_count_ok(m->b) || !td_count_ok(m->c))
            return td_fail(c, "confirmation answer (%lld, %lld, %lld) from rank %d at rank %d", (long long)m->a,
                           (long long)m->b, (long long)m->c, src, c->rank);
        if (m->seq != c->conf_seq || c->conf_wait <= 0)
            return TD_OK; /* a refuted or finished wave's late answer */
        c->conf_acc[0] += m->a;
        c->conf_acc[1] += m->b;
        c->conf_acc[2] += m->c;
        c->conf_busy |= m->flags & 1;
        if (--c->conf_wait == 0)
            conf_subtree_done(c);
        return TD_OK;
    }
    return td_fail(c, "engine message type %u", m->type);
}

void td_tell_announced(td_ctx *c, int dest)
{
    c->gen++;
    if (c->episode == 0)
        return;
    td_msg t = {.algo = 0, .type = TD_EM_TERM, .episode = c->episode - 1, .seq = c->ann_seq};
    transmit(c, dest, &t, 1);
}

/* ---------------------------------------------------------------- premature announcements
 *
 * An announcement is correct when, at the instant T the proof completed,
 * every rank was passive and no primary was in transit (DESIGN.md §1). Under
 * the contract a passive rank sends nothing until it receives a primary, so
 * after a correct announcement a rank can only start working again for a
 * *reason*: a primary received, a collective call (or Pcontrol, the
 * program's own declaration: td_activity), or the notification of the
 * announcement (td_notified). Three kinds of evidence (TD_EV_*) show that
 * an announcement was premature, i.e. that some rank still worked, or a
 * primary was in transit, at T (a rank misjudged passive by TDSHIM_IDLE, a
 * contract violation, or activity no algorithm can see). Each marks the
 * episode unsafe; none is ever an error of this rank.
 *
 * late-control: a control message of an announced episode arrives
 *   (dispatch): its sender still took part in that episode's detection.
 *
 * late-primary: a primary stamped with an announced episode arrives. Every
 *   primary with tdshim's header carries, in TD_STAMP_MASK of its header
 *   byte, the sender's episode e (announcements it had learned when it
 *   sent) plus `ahead`, modulo 4: no wire byte more. A rank is ahead when it
 *   may already work for the next phase without having learned the
 *   announcement that ended the last one: it received a primary stamped
 *   newer than its episode (td_stamp_seen), or the first reason to work
 *   since it was last passive was not a primary (td_activity: the barrier
 *   of the next phase after its own termination test, which may complete
 *   before TERM reaches it). `ahead` resets when it learns the announcement.
 *   Claim: a primary stamped s = e arriving at a rank r that has learned
 *   announcement e + 1 proves announcement e + 1 premature. Either it was
 *   sent before T, and was in transit at T: premature by definition. Or it
 *   was sent after T by a rank q that had not learned announcement e + 1 and
 *   was not ahead. If the announcement were correct, q was passive at T with
 *   nothing in transit to it, and its first reason to work after T cannot
 *   have been a collective (q would be ahead), nor the notification (q would
 *   have learned e + 1), nor a primary stamped e + 1 (ahead again); so it
 *   was a primary stamped e received after T, whose sender is in the same
 *   situation as q, earlier. (A stamp e from a rank at episode e - 1 that
 *   is ahead was sent before T: at T every rank had learned e.) This
 *   backward chain is finite, so some rank
 *   sent a primary after T with no reason at all: it was not passive at T
 *   (misjudged) or it broke the contract. Either way the announcement did
 *   not describe the job, which is what UNSAFE reports.
 *   Why a sender *ahead* is no evidence: a rank q that learned e + 1 (or is
 *   ahead) works legitimately in the next phase, and its primaries may reach
 *   a rank r still at episode e (TERM travels the tree, primaries go
 *   directly); r then works for the next phase too, so it becomes ahead, and
 *   its own primaries carry e + 1: a rank that learned e + 1 does not take
 *   them for late ones (without `ahead` it would, and would flag a correct
 *   announcement: test-engine's stamp tests).
 *   Modulo 4 is enough. Announcement e + 2 needs a proof in episode e + 1, in
 *   which every rank takes part only once it learned e + 1 (control messages
 *   of a later episode are held), so when any rank has learned e + 2 every
 *   rank has learned e + 1: at any instant the episodes learned differ by at
 *   most one, and a stamp (at most the sender's episode + 1, which is at most
 *   the receiver's episode + 1 at the sending and so at the arrival) exceeds
 *   the receiver's episode by at most 2. So with d = (stamp - episode) mod 4,
 *   d = 3 can only be a stamp 1 (or 5, 9...) behind: evidence; d = 1 and 2
 *   are taken as ahead (a stamp 3 or 2 behind, a message in transit across
 *   several announcements, goes unflagged: evidence missed, never invented).
 *   The stamp costs the fast paths nothing beyond the header byte they write
 *   and compare already: the sender writes c->hdr_out instead of a constant
 *   and the receiver compares with c->hdr_in; any other stamp takes the slow
 *   path (td_stamp_seen). The magic loses those 2 bits (tds_hdr.h).
 *   Algorithms whose piggyback carries the whole episode (cda, hcda:
 *   TD_ALGO_EPISODE) judge late primaries themselves (td_late_primary); the
 *   stamp only gives them the tag.
 *
 * send-after: a rank that learned announcement k with no reason to work
 *   since it was last passive (it was passive, or busy again only by the
 *   notion's own judgement, td_busy) is armed; if it then sends a primary
 *   before any reason to work (a primary received, td_activity,
 *   td_notified, or a probe that found the notification:
 *   td_saw_notification), announcement k was premature: the send needs, under the
 *   contract, a reason the rank did not have, so the rank was still working
 *   in the old phase when it learned (misjudged passive), or broke the
 *   contract. A rank with a reason before it learned (the next phase's
 *   barrier already, a primary) is not armed: that reason may come after T
 *   legitimately. This needs no header: header-free runs see it too. A
 *   disarmed rank cannot be re-armed before the next announcement. Cost:
 *   the first send after an announcement takes td_primary_send's slow path
 *   anyway (dirty is clear), where `armed` is tested.
 *
 * send-before: a rank that sent a control message while passive (in every
 *   algorithm its report, or a message of the protocol made on the
 *   strength of its passivity) and then, in the same passive period and
 *   before learning announcement k, sends a primary (a contract violation:
 *   passive ranks send only after a reason, which would have ended the
 *   period) was working when it reported. If that report is part of the
 *   proof of k (a later control message while passive, a new report,
 *   clears the mark: transmit), the proof rested on a false premise, so
 *   learning k marks it unsafe (td_announce_local). This is what
 *   send-after misses when the misjudged rank receives a primary between
 *   its report and TERM (not armed) and sends after it with the new stamp.
 *   It proves the proof unsound rather than k premature: the rank's work
 *   may have ended before T by chance (edod's acknowledgements cover its
 *   messages: tests/core/test-engine's random runs). A correct execution
 *   never shows it. Cost: a store per control message; the check is on
 *   the violation's slow path.
 */
static void stamp_update(td_ctx *c)
{
    c->hdr_out = (uint8_t)(c->hdr_base | (((c->episode + c->ahead) & 3u) << TD_STAMP_SHIFT));
    c->hdr_in = (uint8_t)(c->hdr_base | ((c->episode & 3u) << TD_STAMP_SHIFT));
}

void td_stamp_base(td_ctx *c, uint8_t base)
{
    c->gen++;
    c->hdr_base = (uint8_t)(base & ~TD_STAMP_MASK);
    stamp_update(c);
}

const char *const td_ev_names[TD_EV_N] = {"late-control", "late-primary", "send-after", "send-before"};

/* Announcement ep + 1 was premature, by evidence of kind ev (what happened,
 * phrased by the caller). Counted and reported (the driver warns), never an
 * error. */
static void mark_unsafe(td_ctx *c, uint32_t ep, int ev, const char *what)
{
    c->stats.unsafe++;
    c->stats.unsafe_by[ev]++;
    c->stats.unsafe_episode = ep + 1;
    snprintf(c->unsafe_msg, sizeof c->unsafe_msg, "%s: %s: %.170s", td_ev_names[ev], c->algo->name, what);
}

/* a primary of episode ep from src, with tag (-1: not known here) */
static void late_primary(td_ctx *c, int src, int tag, uint32_t ep)
{
    char what[120];
    c->unsafe_tag = tag;
    if (tag >= 0)
        snprintf(what, sizeof what, "primary (tag %d) of episode %u from rank %d arrived after announcement %u",
                 tag, ep, src, c->episode);
    else
        snprintf(what, sizeof what, "primary of episode %u from rank %d arrived after announcement %u", ep, src,
                 c->episode);
    mark_unsafe(c, ep, TD_EV_PRIMARY, what);
}

void td_late_primary(td_ctx *c, int src, uint32_t ep)
{
    c->gen++;
    int tag = c->late_tag; /* the stamp saw it first (td_stamp_seen) */
    c->late_tag = -1;
    late_primary(c, src, tag, ep);
}

void td_stamp_seen(td_ctx *c, int src, int tag, uint8_t hdr)
{
    c->gen++;
    unsigned d = ((unsigned)(hdr >> TD_STAMP_SHIFT) - c->episode) & 3u;
    if (d == 0)
        return;
    if (d == 3) { /* one episode behind (see above) */
        if (c->episode == 0)
            return; /* cannot be: no announced episode */
        if (c->algo->flags & TD_ALGO_EPISODE)
            c->late_tag = tag; /* the algorithm judges it on the whole episode */
        else
            late_primary(c, src, tag, c->episode - 1);
        return;
    }
    if (!c->ahead) { /* d = 1 or 2: from the next phase */
        c->ahead = 1;
        stamp_update(c);
    }
}

static void send_after(td_ctx *c, int dest)
{
    c->armed = 0;
    if (c->recvd != c->arm_recvd || c->episode == 0)
        return; /* a primary came in since: a reason to work */
    char what[200];
    snprintf(what, sizeof what,
             "rank %d sent a primary to rank %d after learning announcement %u with no primary, collective or "
             "notification since it was last passive",
             c->rank, dest, c->episode);
    mark_unsafe(c, c->episode - 1, TD_EV_SEND, what);
}

static void send_before(td_ctx *c)
{
    char what[200];
    snprintf(what, sizeof what,
             "rank %d sent a primary with no primary, collective or notification since it was last passive, after "
             "a control message of its passive period and before learning announcement %u",
             c->rank, c->episode);
    mark_unsafe(c, c->episode - 1, TD_EV_BEFORE, what);
}

static int dispatch(td_ctx *c, int src, const td_msg *m)
{
    c->gen++; /* a control message is an input of the passive turn ("Quiet turns") */
    if (m->algo == 0)
        return engine_control(c, src, m);
    if (m->episode > c->episode || (m->episode == c->episode && !c->ready))
        return hold(c, src, m);
    if (m->episode < c->episode) {
        if (c->algo->flags & TD_ALGO_SYMMETRIC) {
            /* a neighbour's message of an episode this rank announced: its
             * last round, or a laggard that missed the announcing round (a
             * rank that TDSHIM_IDLE=spin saw busy again in its detection
             * window, README Limitations). Tell it: this rank's proof
             * holds for the whole job (xulau.c's argument), so it adopts
             * the announcement at the same round (TERM, seq = round). */
            if (m->episode + 1 == c->episode)
                td_tell_announced(c, src);
            return TD_OK;
        }
        /* src still worked for an episode that is announced: announcement
         * m->episode + 1 was premature (a contract violation, or activity
         * no algorithm can see). Not an error of this rank: the episode is
         * marked unsafe (the driver warns and reports it) and the message,
         * which belongs to an episode that is over, is dropped. Its sender
         * learns the announcement and goes on in the new episode. */
        char what[120];
        snprintf(what, sizeof what, "control message '%s' of episode %u from rank %d arrived after announcement %u",
                 c->algo->type_names[m->type], m->episode, src, c->episode);
        mark_unsafe(c, m->episode, TD_EV_CONTROL, what);
        if (c->algo->flags & TD_ALGO_LATE)
            return c->algo->on_control(c, c->st, src, m); /* its bookkeeping still counts */
        return TD_OK;
    }
    return c->algo->on_control(c, c->st, src, m);
}

static void replay_held(td_ctx *c)
{
    int again = 1;
    while (again && c->ready && !c->error) {
        again = 0;
        for (size_t i = 0; i < c->nheld; i++) {
            if (c->held[i].m.episode > c->episode)
                continue;
            td_held h = c->held[i];
            memmove(&c->held[i], &c->held[i + 1], (c->nheld - i - 1) * sizeof h);
            c->nheld--;
            dispatch(c, h.src, &h.m);
            again = 1;
            break;
        }
    }
}

static void progress(td_ctx *c)
{
    if (c->active || !c->ready || c->error)
        return;
    if (c->nheld)
        replay_held(c);
    if (c->active || !c->ready || c->error)
        return;
    if (c->rank == 0 && (c->dormant || c->confirming || conf_held(c)))
        return;
    if (c->algo->on_passive)
        c->algo->on_passive(c, c->st);
}

int td_control(td_ctx *c, int src, const uint8_t *wire, size_t len)
{
    td_msg m;
    char why[120];
    if (c->error)
        return c->error;
    if (src < 0 || src >= c->size)
        return td_fail(c, "control message from rank %d outside 0..%d", src, c->size - 1);
    if (td_wire_decode(wire, len, &m, why, sizeof why) != TD_OK) {
        td_fail(c, "%s, from rank %d", why, src);
        return c->error = TD_EWIRE;
    }
    if (m.algo == 0 ? m.type >= TD_EM_NTYPES : (m.algo != c->algo->id || m.type >= c->algo->ntypes)) {
        td_fail(c, "control message for algorithm id %u type %u from rank %d, but this rank runs %s (id %u)",
                m.algo, m.type, src, c->algo->name, c->algo->id);
        return c->error = TD_EWIRE;
    }
    c->stats.ctl_recv[m.algo == 0 ? 0 : 1][m.type]++;
    int rc = dispatch(c, src, &m);
    if (rc < 0)
        return rc;
    progress(c);
    return c->error ? c->error : TD_OK;
}
