/*
 * The discrete-event engine of tdsim, the oracle and the adversary.
 *
 * Rank model (what the MPI shim sees of a program):
 *   - a rank runs tasks one at a time; between tasks it polls: it handles
 *     every message that arrived (control -> td_control, primary ->
 *     td_primary_recv + a new task), then runs the next task, or, with
 *     nothing to do, calls td_passive() and is IDLE;
 *   - an IDLE rank handles each arrival at once (it is blocked in a poll);
 *   - a message that arrived but was not handled yet is still in transit for
 *     the oracle (DESIGN.md §1: terminated = all passive, nothing in transit);
 *   - every send leaves at once: no algorithm holds one back (td_core.h);
 *   - multi-phase programs: on an announcement the rank consumes the
 *     notification (td_notified), enters a barrier, and when every rank has
 *     entered it calls td_activity() and starts the next phase.
 *
 * Events at the same instant run in class order: arrivals, then task ends
 * and barriers, then polls, so a message sent "now" with zero delay is seen
 * by a poll "now" (needed by the step models of cda-credit-hpc.txt §V-B).
 */
#include "sim_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum { AF_SERVICE, AF_POLL };
enum { HOLD_NONE, HOLD_WAVES, HOLD_DEST, HOLD_LONG };
static const char *const vnames[] = {"OK", "SAFETY", "LIVENESS", "PROTOCOL", "GROUNDTRUTH", "RESOURCE"};

const char *sim_violation_name(int v) { return vnames[v]; }

void sim_violate(sim *s, int kind, const char *fmt, ...)
{
    if (s->failed)
        return;
    s->failed = 1;
    s->res->violation = kind;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->res->why, sizeof s->res->why, fmt, ap);
    va_end(ap);
}

#define TRACE(s, ...) do { if ((s)->trace) { fprintf((s)->trace, "t=%.6f ", (s)->now); fprintf((s)->trace, __VA_ARGS__); fputc('\n', (s)->trace); } } while (0)

/* ---------------------------------------------------------------- oracle */

static int in_window(const sim *s) { return (uint32_t)s->qpoints > (s->o->misjudge ? s->covered : s->announced); }

/* Called whenever a rank becomes idle: the only transition that can make
 * the system quiescent (a receive makes its rank busy first). */
static void oracle_update(sim *s)
{
    if (s->nbusy || s->transit || s->qpoints >= s->phases_started)
        return;
    s->qpoints++;
    s->tq = s->now;
    for (int r = 0; r < s->P; r++)
        s->rk[r].hops = 0;
    TRACE(s, "ORACLE quiescent point %d", s->qpoints);
    if (!s->detects && s->qpoints < s->nphases)
        sim_schedule(s, s->now, EV_ORACLE_PHASE, 0); /* the program itself ends the phase */
}

/* --misjudge: the core's passivity input is wrong, so an announcement may
 * be false; one made while a rank works or a primary is in transit, or with
 * no quiescent point since the last true one, is counted, not a violation
 * (no algorithm can be safe then; tests/core/test-misjudge.c). A true one
 * covers the quiescent point; one after every phase started is the last
 * (final_ep: the drain check counts from it). Returns 1 if true. */
static int misjudge_true(sim *s, uint32_t ep)
{
    if (s->nbusy || s->transit || (uint32_t)s->qpoints <= s->covered) {
        s->res->false_ann++;
        TRACE(s, "ORACLE false announcement of episode %u (%lld active, %lld in transit)", ep, (long long)s->nbusy,
              (long long)s->transit);
        return 0;
    }
    s->covered = (uint32_t)s->qpoints;
    if (s->phases_started == s->nphases)
        s->final_ep = ep;
    return 1;
}

static void first_announcement(sim *s, int r, uint32_t ep)
{
    sim_result *res = s->res;
    if (ep != s->announced + 1) {
        sim_violate(s, V_SAFETY, "rank %d learned episode %u first, but episode %u was the last announced", r, ep, s->announced);
        return;
    }
    s->announced = ep;
    if (s->o->misjudge) {
        if (!misjudge_true(s, ep))
            return;
    } else if ((int)ep > s->nphases) {
        sim_violate(s, V_SAFETY, "episode %u announced at t=%.6g, but the workload has only %d quiescent point(s)",
                ep, s->now, s->nphases);
        return;
    } else if (s->nbusy || s->transit || s->qpoints < (int)ep) {
        int busy = -1;
        for (int q = 0; q < s->P && busy < 0; q++)
            if (s->rk[q].state != R_IDLE)
                busy = q;
        sim_violate(s, V_SAFETY, "episode %u announced at t=%.6g by rank %d while %lld rank(s) active (first: %d) and %lld primary message(s) in transit",
                ep, s->now, r, (long long)s->nbusy, busy, (long long)s->transit);
        return;
    }
    double delay = s->now - s->tq;
    uint32_t hops = s->rk[r].hops;
    res->delay_sum += delay;
    res->hops_sum += hops;
    if (delay > res->delay_max)
        res->delay_max = delay;
    if (hops > res->hops_max)
        res->hops_max = hops;
    /* Liveness bound (documented in README-sim.md): 8*(D+2) control hops,
     * each at most the longest control delay observed, covering a wave in
     * progress at quiescence, a failing wave, the proving wave and the
     * broadcast (BCJ §6: at most two traversals after termination).
     * Confirmation (td_engine.c) adds two count waves (4D) to the proof,
     * and a confirmation in progress at quiescence that is refuted 4D more. */
    double hop_bound = 8.0 * (s->depth_bound + 2) + (s->o->cfg.confirm ? 8.0 * s->depth_bound : 0);
    if (s->o->busy_again && s->flick_end > s->tq)
        return; /* a rank stopped polling after quiescence: no hop bound, only eventual detection */
    if (hops > hop_bound || delay > hop_bound * s->dmax_ctl * (1 + 1e-9))
        sim_violate(s, V_LIVENESS, "episode %u announced %.6g time units / %u hops after quiescence; bound %.6g / %.0f (D=%d, max control delay %.6g)",
                ep, delay, hops, hop_bound * s->dmax_ctl, hop_bound, s->depth_bound, s->dmax_ctl);
}

/* td_io.user points at this pair: the simulator and the rank */
typedef struct rank_ref { sim *s; int rank; } rank_ref;

static void announce_cb(void *user, uint32_t ep)
{
    rank_ref *ref = user;
    sim *s = ref->s;
    int r = ref->rank;
    sim_rank *rk = &s->rk[r];
    TRACE(s, "r=%d LEARNS episode %u", r, ep);
    oracle_update(s);
    if (ep != rk->learned + 1) {
        sim_violate(s, V_SAFETY, "rank %d learned episode %u after episode %u", r, ep, rk->learned);
        return;
    }
    rk->learned = ep;
    if (ep > s->announced)
        first_announcement(s, r, ep);
    if ((int)ep == s->nphases)
        s->learned_final++;
    else if (s->gate && r < s->Pw)
        rk->pending_notify = 1; /* a rank in MPI_Finalize (--finalized) is not notified */
    if (s->o->misjudge && s->gate && (int)ep >= s->nphases)
        rk->pending_notify = 1; /* consumed without a barrier (process_notify) */
    if (ep == s->final_ep)
        s->final_learned++; /* --misjudge */
}

/* ---------------------------------------------------------------- adversary */

/* HOLD_WAVES counts the root's waves. With --misjudge a confirmation
 * refuted because of the held primary counts too: after a false
 * announcement a credit algorithm's root proves again at once (the old
 * episode's credit is gone), so it only runs refuted confirmations, and the
 * held primary would never arrive (MPI delivers it in finite time). */
static uint64_t root_rounds(const sim *s)
{
    return s->ctx[0].stats.waves + (s->o->misjudge ? s->ctx[0].stats.refuted : 0);
}

static void deliver_at(sim *s, int32_t m, double t)
{
    sim_schedule(s, t, EV_ARRIVE, m);
}

static void release_held(sim *s, const char *why)
{
    if (s->held >= 0) {
        TRACE(s, "ADV release held primary %d->%d (%s)", s->msg[s->held].src, s->msg[s->held].dst, why);
        deliver_at(s, s->held, s->now);
        s->held = -1;
    }
}
static void release_victim(sim *s)
{
    while (s->victim_held >= 0) {
        int32_t m = s->victim_held;
        s->victim_held = s->msg[m].next;
        TRACE(s, "ADV burst: release primary %d->%d", s->msg[m].src, s->msg[m].dst);
        deliver_at(s, m, s->now);
    }
}

/* ---------------------------------------------------------------- transport */

static void io_send(void *user, int dest, const uint8_t *wire)
{
    rank_ref *ref = user;
    sim *s = ref->s;
    int r = ref->rank;
    if (dest < 0 || dest >= s->P) {
        sim_violate(s, V_PROTOCOL, "rank %d sent a control message to rank %d (size %d)", r, dest, s->P);
        return;
    }
    int32_t i = sim_msg_alloc(s);
    if (i < 0)
        return;
    sim_msg *m = &s->msg[i];
    s->ctl_sends++;
    m->src = r;
    m->dst = dest;
    m->ctl = 1;
    m->sent = s->now;
    m->hops = (in_window(s) ? s->rk[r].hops : 0) + 1;
    memcpy(m->u.wire, wire, TD_WIRE_SIZE);
    double t = s->now + sim_dist_draw(&s->cdelay, &s->rng);
    if (!s->o->nonfifo) {
        double *last = sim_channel(s, r, dest);
        if (!last)
            return;
        if (t <= *last)
            t = nextafter(*last, INFINITY); /* strictly later: ties may be broken randomly */
        *last = t;
    }
    if (t - s->now > s->dmax_ctl)
        s->dmax_ctl = t - s->now;
    if (s->trace) {
        td_msg d;
        td_wire_decode(wire, TD_WIRE_SIZE, &d, NULL, 0);
        TRACE(s, "r=%d SEND ctl %s seq=%llu a=%lld flags=%u ep=%u -> %d (arrives %.6f)", r,
              td_type_name(&s->ctx[r], d.algo == 0, d.type), (unsigned long long)d.seq, (long long)d.a,
              d.flags, d.episode, dest, t);
    }
    deliver_at(s, i, t);
    /* adversary: re-activate a rank right after it reported */
    if (r == s->victim)
        release_victim(s);
    if (s->hold_mode == HOLD_DEST && s->held >= 0 && s->msg[s->held].dst == r)
        release_held(s, "destination sent a control message");
}

static void route_primary(sim *s, int src, int dst, const sim_task *t, const uint8_t *pb)
{
    int32_t i = sim_msg_alloc(s);
    if (i < 0)
        return;
    sim_msg *m = &s->msg[i];
    m->src = src;
    m->dst = dst;
    m->ctl = 0;
    m->sent = s->now;
    m->hops = 0;
    m->u.p.task = *t;
    memcpy(m->u.p.pb, pb, TD_PB_MAX);
    m->u.p.hdr = s->ctx[src].hdr_out;
    s->transit++;
    s->res->primaries++;
    int64_t idx = (int64_t)s->psends++;
    TRACE(s, "r=%d SEND primary -> %d", src, dst);
    if (idx == s->hold_index && s->held < 0) {
        s->held = i;
        s->hold_waves = root_rounds(s) + 1 + sim_below(&s->rng, 3);
        TRACE(s, "ADV hold primary %d->%d (mode %d)", src, dst, s->hold_mode);
        if (s->hold_mode == HOLD_LONG) {
            s->held = -1;
            deliver_at(s, i, s->now + sim_dist_draw(&s->pdelay, &s->rng) * (5 + sim_below(&s->rng, 50)));
        }
        return;
    }
    if (dst == s->victim) {
        m->next = s->victim_held;
        s->victim_held = i;
        return;
    }
    deliver_at(s, i, s->now + sim_dist_draw(&s->pdelay, &s->rng));
}

void sim_send(sim *s, int src, int dst, sim_task t)
{
    if (dst < 0 || dst >= s->P) {
        sim_violate(s, V_GROUNDTRUTH, "workload sent to rank %d (size %d)", dst, s->P);
        return;
    }
    int32_t i = sim_tn_alloc(s);
    if (i < 0)
        return;
    s->tn[i].t = t;
    s->tn[i].dst = dst;
    sim_list_push(s->tn, &s->rk[src].ohead, &s->rk[src].otail, i);
    s->created++;
}

void sim_spawn(sim *s, int rank, sim_task t)
{
    int32_t i = sim_tn_alloc(s);
    if (i < 0)
        return;
    s->tn[i].t = t;
    s->tn[i].dst = rank;
    sim_list_push(s->tn, &s->rk[rank].qhead, &s->rk[rank].qtail, i);
    s->created++;
}

/* ---------------------------------------------------------------- rank behaviour */

static void check_core(sim *s, int r)
{
    if (s->ctx[r].error)
        sim_violate(s, V_PROTOCOL, "rank %d: %s", r, s->ctx[r].errmsg);
}

static void set_busy(sim *s, int r, int state)
{
    if (s->rk[r].state == R_IDLE)
        s->nbusy++;
    s->rk[r].state = (uint8_t)state;
}

static void poll_idle(sim *s, int r);
static void drain_inbox(sim *s, int r, int take_primary);

static void process_notify(sim *s, int r)
{
    sim_rank *rk = &s->rk[r];
    rk->pending_notify = 0;
    td_notified(&s->ctx[r]);
    check_core(s, r);
    if (s->o->misjudge && rk->learned >= (uint32_t)s->nphases) {
        /* --misjudge: the last phase's notification, premature if it was a
         * false announcement; the program consumes it and goes on with the
         * work it still has (no barrier: there is no next phase) */
        TRACE(s, "r=%d notified of the last phase, goes on", r);
        if (rk->state == R_IDLE)
            poll_idle(s, r);
        return;
    }
    set_busy(s, r, R_BARRIER);
    TRACE(s, "r=%d notified, enters barrier", r);
    if (s->barrier_passive) {
        /* the shim may count a rank blocked in a collective as passive; the
         * oracle still counts it busy: it resumes without a message */
        poll_idle(s, r);
    }
    if (++s->barrier_n == s->Pw) {
        s->barrier_n = 0;
        int lg = 1;
        while ((1 << lg) < s->P)
            lg++;
        sim_schedule(s, s->now + sim_dist_draw(&s->cdelay, &s->rng) * lg, EV_BARRIER, 0);
    }
}

static void after_core(sim *s, int r)
{
    check_core(s, r);
    if (s->rk[r].pending_notify && s->rk[r].state == R_IDLE && !s->failed)
        process_notify(s, r);
}

/*
 * An idle rank spins on polls, and the engine calls on_passive at each one
 * (td_algo.h). The core has no clocks, so a poll that neither sends nor
 * changes any state is a no-op and so are all later polls until a message
 * arrives: poll until that fixpoint instead of simulating every spin. A
 * protocol that changes state at every poll forever is a livelock.
 */
static void poll_idle(sim *s, int r)
{
    td_ctx *c = &s->ctx[r];
    size_t sz = c->algo->state_size;
    if (s->rk[r].flick)
        return; /* not polling: the core takes it for busy */
    for (int iter = 0;
         (s->rk[r].state == R_IDLE || (s->rk[r].state == R_BARRIER && s->barrier_passive) ||
          (s->rk[r].state == R_SENDWAIT && s->sendwait == 2) || s->rk[r].misj) &&
         !s->failed;
         iter++) {
        if (iter > 100000) {
            sim_violate(s, V_LIVENESS, "rank %d changes state at every poll while idle (livelock)", r);
            return;
        }
        uint64_t sent = s->ctl_sends;
        uint32_t ep = c->episode, sl = c->sleep_id;
        uint8_t dormant = c->dormant, ready = c->ready;
        size_t nheld = c->nheld;
        if (sz)
            memcpy(s->snap, c->st, sz);
        td_passive(c);
        after_core(s, r);
        if (sent == s->ctl_sends && ep == c->episode && sl == c->sleep_id && dormant == c->dormant &&
            ready == c->ready && nheld == c->nheld && (!sz || !memcmp(s->snap, c->st, sz))) {
            /* the engine skips the next polls' turns if it took this one
             * for a fixed point (td_engine.c, "Quiet turns"): one of them,
             * run under cfg.quiet_check, fails if it would have changed
             * anything */
            if (td_quiet(c)) {
                td_passive(c);
                after_core(s, r);
            }
            return;
        }
    }
}

/* A long gap before a poll of a rank passive for its core, as
 * TDSHIM_IDLE=spin judges it (tds_progress.c, spin_poll): unsure at the
 * first (td_unsure: it answers confirmation waves busy), busy again at a
 * second before it spins again (td_busy). */
static void long_gap(sim *s, int r)
{
    td_ctx *c = &s->ctx[r];
    if (c->unsure)
        td_busy(c);
    else
        td_unsure(c);
    check_core(s, r);
}

/* --busy-again: an idle rank the shim's notion takes for busy (one long
 * gap between polls, e.g. the rank was descheduled: td_unsure; half the
 * time a second one: td_busy) and that does not poll for a while: its
 * arrivals wait. The truth is unchanged: it is idle, and what waits for it
 * is in transit. */
static void maybe_flick(sim *s, int r)
{
    sim_rank *rk = &s->rk[r];
    if (rk->state != R_IDLE || rk->flick || rk->flicks <= 0 || s->failed || sim_below(&s->rng, 3))
        return;
    rk->flicks--;
    rk->flick = 1;
    long_gap(s, r);
    if (!s->failed && sim_below(&s->rng, 2))
        long_gap(s, r);
    double end = s->now + sim_dist_draw(&s->service, &s->rng);
    if (end > s->flick_end)
        s->flick_end = end;
    TRACE(s, "r=%d busy again or unsure (long gaps; not polling until t=%.6f)", r, end);
    sim_schedule(s, end, EV_FLICK_END, r);
}

static void flick_end(sim *s, int r)
{
    sim_rank *rk = &s->rk[r];
    rk->flick = 0;
    TRACE(s, "r=%d polls again", r);
    if (rk->state != R_IDLE)
        return;
    drain_inbox(s, r, 1);
    if (rk->state == R_POLL && !s->failed)
        sim_schedule(s, s->now, EV_POLL, r);
    else
        poll_idle(s, r);
}

/* --misjudge: TDSHIM_IDLE=spin takes a working rank for passive when its
 * work between polls is shorter than the spin gap (tests/core/world.h
 * W.misjudge). Called at a poll of a rank that has a task to run (its
 * outbox is empty: every send leaves at once). Still misjudged (no send or receive since), the
 * gap before this poll may have been long: long_gap, as spin_poll (unsure
 * at the first, busy again at the second); or short, and an unsure rank's
 * N short polls in a row may make it sure again (td_passive); else
 * 1 in misjudge such polls tell the core passive (tds_set_passive: td_passive
 * and the protocol's turn), while the rank runs its task: its sends are
 * contract violations, and it handles control messages as they arrive (it
 * polls often). The truth is unchanged: the rank is busy. */
static void misjudge_step(sim *s, int r)
{
    sim_rank *rk = &s->rk[r];
    td_ctx *c = &s->ctx[r];
    if (rk->misj && !c->active) {
        if (sim_below(&s->rng, 2)) { /* short gaps still: passive for the core */
            if (c->unsure && sim_below(&s->rng, 2) == 0) {
                TRACE(s, "r=%d sure again (short polls while misjudged)", r);
                td_passive(c);
                check_core(s, r);
            }
            return;
        }
        TRACE(s, "r=%d %s (long gap while misjudged)", r, c->unsure ? "busy again" : "unsure");
        long_gap(s, r);
        rk->misj = !c->active;
        return;
    }
    rk->misj = 0;
    if (c->active && rk->ohead < 0 && !s->failed && sim_below(&s->rng, (uint64_t)s->o->misjudge) == 0) {
        TRACE(s, "r=%d misjudged: passive for the core while it works", r);
        s->res->misjudged++;
        rk->misj = 1;
        poll_idle(s, r);
    }
}

/* --misjudge: a misjudged rank that runs out of work is passive in truth
 * now; the gap before this poll was long (long_gap first) or
 * not (spin never saw the work), one or the other at random. */
static void misjudge_end(sim *s, int r)
{
    if (s->rk[r].misj && !s->ctx[r].active && sim_below(&s->rng, 2)) {
        TRACE(s, "r=%d %s before going idle", r, s->ctx[r].unsure ? "busy again" : "unsure");
        long_gap(s, r);
    }
    s->rk[r].misj = 0;
}

static void go_idle(sim *s, int r)
{
    if (s->o->misjudge)
        misjudge_end(s, r);
    s->rk[r].state = R_IDLE;
    s->nbusy--;
    oracle_update(s);
    TRACE(s, "r=%d passive", r);
    poll_idle(s, r);
    maybe_flick(s, r);
}

static void handle_control(sim *s, int r, int32_t i)
{
    sim_msg *m = &s->msg[i];
    if (in_window(s) && m->hops > s->rk[r].hops)
        s->rk[r].hops = m->hops;
    int src = m->src;
    uint8_t wire[TD_WIRE_SIZE];
    memcpy(wire, m->u.wire, TD_WIRE_SIZE);
    sim_msg_free(s, i);
    TRACE(s, "r=%d RECV ctl from %d", r, src);
    td_control(&s->ctx[r], src, wire, TD_WIRE_SIZE);
    after_core(s, r);
}

static void handle_primary(sim *s, int r, int32_t i)
{
    sim_msg *m = &s->msg[i];
    set_busy(s, r, s->rk[r].state == R_IDLE ? R_POLL : s->rk[r].state);
    s->transit--;
    TRACE(s, "r=%d RECV primary from %d", r, m->src);
    if (m->u.p.hdr != s->ctx[r].hdr_in) /* stamped with another episode: as the shim's tds_recv_finish */
        td_stamp_seen(&s->ctx[r], m->src, 0, m->u.p.hdr);
    td_primary_recv(&s->ctx[r], m->src, m->u.p.pb);
    int32_t t = sim_tn_alloc(s);
    if (t < 0)
        return;
    s->tn[t].t = m->u.p.task;
    s->tn[t].dst = r;
    sim_list_push(s->tn, &s->rk[r].qhead, &s->rk[r].qtail, t);
    sim_msg_free(s, i);
    check_core(s, r);
}

/* Handle arrived messages in arrival order; primaries only if take_primary. */
static void drain_inbox(sim *s, int r, int take_primary)
{
    sim_rank *rk = &s->rk[r];
    int32_t prev = -1, i = rk->ihead;
    while (i >= 0 && !s->failed) {
        int32_t next = s->msg[i].next;
        if (s->msg[i].ctl || take_primary) {
            if (prev >= 0)
                s->msg[prev].next = next;
            else
                rk->ihead = next;
            if (rk->itail == i)
                rk->itail = prev;
            if (s->msg[i].ctl)
                handle_control(s, r, i);
            else
                handle_primary(s, r, i);
            /* a handler may have appended nothing to this inbox (arrivals are events) */
        } else {
            prev = i;
        }
        i = next;
    }
}


/* Send what the running task produced: every send leaves at once (no
 * algorithm holds one back, td_core.h). */
static void flush(sim *s, int r)
{
    sim_rank *rk = &s->rk[r];
    while (rk->ohead >= 0 && !s->failed) {
        sim_tnode *n = &s->tn[rk->ohead];
        uint8_t pb[TD_PB_MAX] = {0};
        td_primary_send(&s->ctx[r], n->dst, pb);
        check_core(s, r);
        sim_task t = n->t;
        int dst = n->dst;
        int32_t idx = sim_list_pop(s->tn, &rk->ohead, &rk->otail);
        s->tn[idx].next = s->tfree;
        s->tfree = idx;
        route_primary(s, r, dst, &t, pb);
        rk->sent_task++;
    }
}

static void after_flush(sim *s, int r)
{
    if (s->rk[r].after_flush == AF_SERVICE) {
        sim_schedule(s, s->now + sim_dist_draw(&s->service, &s->rng), EV_TASK_END, r);
    } else if (s->sendwait && s->rk[r].sent_task) {
        /* --sendwait: the task ends in a completion call that still waits
         * for its own sends (MPI_Waitall over its receive, already in, and
         * its sends): a rendezvous ack comes after the message travels, the
         * receiver reaches its next poll, and the ack travels back */
        s->rk[r].state = R_SENDWAIT;
        double d = sim_dist_draw(&s->pdelay, &s->rng) + sim_dist_draw(&s->service, &s->rng) +
                   sim_dist_draw(&s->pdelay, &s->rng);
        sim_schedule(s, s->now + d, EV_SENDWAIT_END, r);
        TRACE(s, "r=%d waits for its own sends%s", r, s->sendwait == 2 ? " (passive for the core: old rule)" : "");
        if (s->sendwait == 2)
            poll_idle(s, r); /* td_passive: what the old shim did */
    } else {
        sim_schedule(s, s->now, EV_POLL, r);
    }
}

static void start_task(sim *s, int r)
{
    sim_rank *rk = &s->rk[r];
    int32_t i = sim_list_pop(s->tn, &rk->qhead, &rk->qtail);
    sim_task t = s->tn[i].t;
    s->tn[i].next = s->tfree;
    s->tfree = i;
    rk->state = R_BUSY;
    rk->sent_task = 0;
    s->executed++;
    TRACE(s, "r=%d runs task kind=%d a=%d b=%lld", r, t.kind, t.a, (long long)t.b);
    wl_exec(s, r, &t);
    if (s->o->send_at_start) {
        rk->after_flush = AF_SERVICE;
        flush(s, r);
        after_flush(s, r);
    } else {
        sim_schedule(s, s->now + sim_dist_draw(&s->service, &s->rng), EV_TASK_END, r);
    }
}

static void do_poll(sim *s, int r)
{
    drain_inbox(s, r, 1);
    if (s->failed)
        return;
    if (s->rk[r].pending_notify) {
        process_notify(s, r);
        if (s->rk[r].state == R_BARRIER || s->failed)
            return;
    }
    if (s->rk[r].qhead >= 0) {
        if (s->o->misjudge)
            misjudge_step(s, r);
        if (!s->failed)
            start_task(s, r);
    } else {
        go_idle(s, r);
    }
}

static void on_arrive(sim *s, int32_t i)
{
    int r = s->msg[i].dst;
    sim_rank *rk = &s->rk[r];
    s->msg[i].next = -1;
    if (rk->itail >= 0)
        s->msg[rk->itail].next = i;
    else
        rk->ihead = i;
    rk->itail = i;
    switch (rk->state) {
    case R_IDLE:
        if (rk->flick)
            break; /* --busy-again: not polling */
        /* blocked in a poll: handles it now */
        drain_inbox(s, r, 1);
        if (rk->state == R_POLL && !s->failed)
            sim_schedule(s, s->now, EV_POLL, r);
        else {
            poll_idle(s, r);
            maybe_flick(s, r);
        }
        break;
    case R_BARRIER: /* the shim progresses its control traffic in blocking calls */
        drain_inbox(s, r, 0);
        if (s->barrier_passive)
            poll_idle(s, r);
        break;
    case R_SENDWAIT: /* the shim's completion loop progresses control traffic */
        drain_inbox(s, r, 0);
        if (s->sendwait == 2)
            poll_idle(s, r);
        break;
    default: /* busy: waits for the next poll point */
        if (rk->misj && s->msg[i].ctl && !s->ctx[r].active) { /* --misjudge: polls often, passive for the core */
            drain_inbox(s, r, 0);
            poll_idle(s, r);
        }
        break;
    }
}

static void start_phase(sim *s)
{
    int phase = s->phases_started++;
    TRACE(s, "PHASE %d starts", phase);
    wl_phase(s, phase);
    for (int r = 0; r < s->Pw; r++) {
        s->rk[r].state = R_POLL;
        if (s->leave_activity) /* --leave activity */
            td_activity(&s->ctx[r]);
        else /* the barrier is a collective (the shim's MPI_Barrier) */
            td_collective(&s->ctx[r]);
        check_core(s, r);
        sim_schedule(s, s->now, EV_POLL, r);
    }
}

/* ---------------------------------------------------------------- schedule choice */

static void random_dist(sim_rng *g, sim_dist *d, double mean)
{
    switch (sim_below(g, 4)) {
    case 0: *d = (sim_dist){DIST_CONST, mean, 0}; break;
    case 1: *d = (sim_dist){DIST_UNIFORM, mean * sim_unif(g) * 0.5, mean * (1.5 + sim_unif(g))}; break;
    case 2: *d = (sim_dist){DIST_EXP, mean, 0}; break;
    default: { double a = 1.1 + 2 * sim_unif(g); *d = (sim_dist){DIST_PARETO, mean * (a - 1) / a, a}; break; }
    }
}

static void choose_schedule(sim *s)
{
    const sim_opts *o = s->o;
    s->pdelay = o->pdelay;
    s->cdelay = o->cdelay;
    s->service = o->service;
    s->hold_mode = HOLD_NONE;
    s->hold_index = -1;
    s->victim = -1;
    s->rand_tie = 0;
    s->barrier_passive = o->barrier_passive;
    s->leave_activity = o->leave_activity;
    s->sendwait = o->sendwait;
    if (!o->adversarial)
        return; /* --barrier passive is never drawn: it breaks every wave algorithm (README-sim.md) */
    /* scales of the means; control never below 0.1: 100x faster than work is
     * already adversarial, faster only spins more identical waves */
    static const double scale[] = {0.01, 0.1, 1, 10};
    sim_rng *g = &s->rng;
    if (sim_below(g, 4))
        random_dist(g, &s->pdelay, scale[sim_below(g, 4)]);
    if (sim_below(g, 4))
        random_dist(g, &s->cdelay, scale[1 + sim_below(g, 3)]);
    if (sim_below(g, 4))
        random_dist(g, &s->service, scale[sim_below(g, 4)]);
    s->rand_tie = (int)sim_below(g, 2);
    if (sim_below(g, 2)) {
        s->hold_mode = 1 + (int)sim_below(g, 3);
        s->hold_index = (int64_t)sim_below(g, 12);
    }
    if (sim_below(g, 3) == 0)
        s->victim = (int)sim_below(g, (uint64_t)s->P);
}

/* ---------------------------------------------------------------- run */

int sim_detects(const td_algo *a)
{
    /* A measurement baseline like "none" never announces: for those the
     * program itself ends each phase at the oracle's quiescent point and only
     * safety and ground truth are checked. */
    return !(a->flags & TD_ALGO_NODETECT);
}

static void sim_free(sim *s)
{
    if (s->ctx)
        for (int r = 0; r < s->P; r++)
            td_ctx_fini(&s->ctx[r]);
    free(s->ctx);
    free(s->rk);
    free(s->refs);
    free(s->heap);
    free(s->msg);
    free(s->tn);
    free(s->chkey);
    free(s->chlast);
    free(s->snap);
    wl_free(&s->wl);
}

int sim_run(const sim_opts *o, uint64_t seed, sim_result *res, FILE *trace)
{
    sim S, *s = &S;
    memset(s, 0, sizeof S);
    memset(res, 0, sizeof *res);
    s->o = o;
    s->res = res;
    s->trace = trace;
    s->mfree = s->tfree = -1;
    s->held = s->victim_held = -1;
    sim_rng_seed(&s->rng, seed);
    s->P = o->pmin == o->pmax ? o->pmin : o->pmin + (int)sim_below(&s->rng, (uint64_t)(o->pmax - o->pmin + 1));
    res->P = s->P;
    s->Pw = s->P - (o->finalized < s->P ? o->finalized : s->P - 1);
    choose_schedule(s);
    sim_rng_seed(&s->wl.rng, sim_hash(seed, 0x776f726bull)); /* workload stream, independent of the schedule */
    if (wl_init(s) != 0) {
        sim_free(s);
        return -1;
    }
    s->nphases = s->wl.nphases;
    s->gate = s->nphases > 1 || o->exit_on_notify;
    s->detects = sim_detects(o->algo);
    int arity = o->cfg.tree_arity > 0 ? o->cfg.tree_arity : 2;
    s->depth_bound = (o->algo->flags & TD_ALGO_SYMMETRIC) ? s->P : td_tree_depth(s->P, arity);

    rank_ref *refs = calloc((size_t)s->P, sizeof *refs);
    s->ctx = calloc((size_t)s->P, sizeof *s->ctx);
    s->snap = malloc(o->algo->state_size + 1);
    s->rk = calloc((size_t)s->P, sizeof *s->rk);
    s->refs = refs;
    if (!refs || !s->ctx || !s->rk || !s->snap) {
        fprintf(stderr, "tdsim: out of memory for %d ranks\n", s->P);
        s->P = 0;
        sim_free(s);
        return -1;
    }
    for (int r = 0; r < s->P; r++) {
        sim_rank *rk = &s->rk[r];
        rk->qhead = rk->qtail = rk->ihead = rk->itail = rk->ohead = rk->otail = -1;
        rk->flicks = r < s->Pw ? o->busy_again : 0;
        rk->state = r < s->Pw ? R_POLL : R_IDLE;
        refs[r] = (rank_ref){s, r};
        td_cfg cfg = o->cfg;
        cfg.rank = r;
        cfg.size = s->P;
        cfg.gate_on_notify = s->gate;
        cfg.quiet_check = 1; /* the turns the engine would skip run, and fail if they change anything */
        td_io io = {.user = &refs[r], .send = io_send, .announce = announce_cb};
        int rc = td_ctx_init(&s->ctx[r], o->algo, &cfg, &io);
        if (rc != TD_OK) {
            sim_violate(s, V_PROTOCOL, "rank %d: td_ctx_init: %s%s%s", r, td_strerror(rc),
                    s->ctx[r].errmsg[0] ? ": " : "", s->ctx[r].errmsg);
            s->P = r + 1;
            sim_free(s);
            return 0;
        }
    }
    s->nbusy = s->Pw;
    s->phases_started = 1;
    wl_phase(s, 0);
    for (int r = 0; r < s->Pw; r++)
        sim_schedule(s, 0.0, EV_POLL, r);
    /* --finalized: these ranks are in MPI_Finalize before the program starts
     * (the extreme of ranks that leave early, tests/mpi/finlate.c): passive
     * for good, they answer control messages as they arrive */
    for (int r = s->Pw; r < s->P && !s->failed; r++) {
        td_finalize(&s->ctx[r]);
        check_core(s, r);
    }

    uint64_t drain_cap = 10000 + 200 * (uint64_t)s->P;
    while (!s->failed) {
        if (!s->nheap) {
            /* nothing else can happen: the adversary must let go */
            if (s->held < 0 && s->victim_held < 0)
                break;
            release_held(s, "event queue empty");
            s->victim = -1;
            release_victim(s);
            continue;
        }
        sim_ev e = sim_pop(s);
        s->now = e.t;
        ++s->events;
        if (in_window(s) && ++s->window_events > 100000 + 1000 * (uint64_t)s->P) {
            sim_violate(s, V_LIVENESS, "no announcement %llu events after quiescence (t=%.6g, quiescent since t=%.6g)",
                    (unsigned long long)s->window_events - 1, s->now, s->tq);
            break;
        }
        if (!in_window(s))
            s->window_events = 0;
        if (s->events > o->max_events) {
            sim_violate(s, V_LIVENESS, "no end after %llu events (t=%.6g, %d of %d episodes announced)",
                    (unsigned long long)o->max_events, s->now, s->announced, s->nphases);
            break;
        }
        switch (e.kind) {
        case EV_ARRIVE: on_arrive(s, e.arg); break;
        case EV_TASK_END:
            s->rk[e.arg].after_flush = AF_POLL;
            flush(s, e.arg);
            after_flush(s, e.arg);
            break;
        case EV_POLL: do_poll(s, e.arg); break;
        case EV_SENDWAIT_END:
            s->rk[e.arg].state = R_POLL;
            do_poll(s, e.arg);
            break;
        case EV_BARRIER: start_phase(s); break;
        case EV_FLICK_END: flick_end(s, e.arg); break;
        case EV_ORACLE_PHASE:
            for (int r = 0; r < s->P; r++)
                s->rk[r].pending_notify = 1;
            for (int r = 0; r < s->Pw && !s->failed; r++)
                if (s->rk[r].state == R_IDLE && !s->rk[r].flick)
                    process_notify(s, r);
            break;
        }
        if (s->hold_mode == HOLD_WAVES && s->held >= 0 && root_rounds(s) >= s->hold_waves)
            release_held(s, "root started more waves");
        if ((s->o->misjudge ? s->final_learned : s->learned_final) == s->P && ++s->post_final > drain_cap)
            sim_violate(s, V_LIVENESS, "control traffic goes on after every rank learned the final episode (%llu events later)",
                    (unsigned long long)drain_cap);
    }
    res->events = s->events;
    res->end_time = s->now;
    if (!s->failed) {
        if (s->detects && (int)s->announced < s->nphases)
            sim_violate(s, V_LIVENESS, "event queue ran dry at t=%.6g: %u of %d episode(s) announced; %s (%lld active, %lld in transit)",
                    s->now, s->announced, s->nphases,
                    s->qpoints > (int)s->announced ? "quiescent and not announced" : "not quiescent: deadlock",
                    (long long)s->nbusy, (long long)s->transit);
        else if (s->o->misjudge && (s->nbusy || s->transit))
            sim_violate(s, V_LIVENESS, "event queue ran dry at t=%.6g with %lld rank(s) active and %lld primary message(s) in transit: deadlock",
                    s->now, (long long)s->nbusy, (long long)s->transit);
        else if (s->detects && s->learned_final != s->P)
            sim_violate(s, V_LIVENESS, "only %d of %d ranks learned the final episode", s->learned_final, s->P);
        else if (s->transit || s->executed != s->created || s->created != s->wl.expected ||
                 (s->o->misjudge ? s->phases_started : s->qpoints) != s->nphases)
            sim_violate(s, V_GROUNDTRUTH, "tasks executed %llu, created %llu, expected %llu; %lld in transit; %d quiescent points of %d",
                    (unsigned long long)s->executed, (unsigned long long)s->created,
                    (unsigned long long)s->wl.expected, (long long)s->transit, s->qpoints, s->nphases);
    }
    /* evidence of a premature announcement (td_engine.c) where every
     * announcement was right: a stamp, a send-after or a send-before taken wrongly */
    for (int r = 0; r < s->P; r++)
        res->evidence += s->ctx[r].stats.unsafe_by[TD_EV_PRIMARY] + s->ctx[r].stats.unsafe_by[TD_EV_SEND] + s->ctx[r].stats.unsafe_by[TD_EV_BEFORE];
    if (!s->failed && !s->o->misjudge && res->evidence)
        for (int r = 0; r < s->P; r++)
            if (s->ctx[r].stats.unsafe_by[TD_EV_PRIMARY] + s->ctx[r].stats.unsafe_by[TD_EV_SEND] + s->ctx[r].stats.unsafe_by[TD_EV_BEFORE]) {
                sim_violate(s, V_SAFETY, "rank %d found evidence of a premature announcement in a run without one: %s", r,
                        s->ctx[r].unsafe_msg);
                break;
            }
    res->tasks = s->executed;
    res->episodes = s->announced;
    res->waves = s->ctx[0].stats.waves;
    for (int r = 0; r < s->P; r++)
        for (int k = 0; k < 2; k++)
            for (int t = 0; t < TD_MAX_TYPES; t++) {
                res->ctl[k][t] += s->ctx[r].stats.ctl_sent[k][t];
                res->ctl_total += s->ctx[r].stats.ctl_sent[k][t];
            }
    sim_free(s);
    return 0;
}
