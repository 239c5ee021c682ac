/*
 * The engine of the tdshim core (shim/core/td_engine.c), the network, the
 * program and the oracle, for SPIN. An algorithm model (bcj.pml,
 * fourcounter.pml, cda.pml) defines the algorithm's state and
 *   algo_init(r) algo_new_episode(r) algo_on_passive(r)
 *   algo_on_control(r, src) (the message is in mt, me, mq, ma, mb, mf)
 *   algo_on_send(r, d)      (sets the piggyback p0, p1; a send is never held back)
 *   algo_on_recv(r, src)    (the piggyback in p0, p1)
 * between `#include "engine.pml"` (first) and `#include "processes.pml"`
 * (last: the processes, which expand those inlines). Model parameters (cpp, spin -D...):
 *   P       ranks (2..4); the spanning tree is binary, parent (r-1)/2
 *   MSGS    primary messages the program sends in phase 1
 *   PHASES  1, or 2: a rank that learned announcement 1 starts phase 2
 *           (td_activity) with MSGS2 more messages: episodes, dormancy
 *           (SLEEP/WAKE) and messages of the next episode are reached
 *   CAP     algorithms with waves: a wave numbered above CAP begun while
 *           work remains cuts the path there (bounded model checking: the
 *           wave numbers stay finite); waves begun while the job is
 *           quiescent are not cut but counted: more than CAP_AFTER between
 *           the quiescent point and the announcement, or between the
 *           announcement and dormancy, fail (a livelock)
 *
 * What the model keeps from the code (and what it abstracts):
 * - Every handler runs atomically, as td_control/td_passive/td_primary_*
 *   do in one rank: one step of the model is one call into the core.
 * - Control messages: FIFO per (src, dst) (MPI's non-overtaking on the
 *   private communicator), any delay: one channel and one delivering
 *   process per pair. Primaries: FIFO per pair, any delay, independent of
 *   the control channels (another communicator).
 * - gate_on_notify = 0 (the default of single-phase programs): ready is 1
 *   throughout. A control message of a later episode is held (td_engine.c
 *   hold) and replayed, in arrival order, when the rank is passive in that
 *   episode (replay_held).
 * - The program: every rank starts active; an active rank sends primaries
 *   (any destination but itself, from a shared budget) and becomes
 *   passive (td_passive); a passive rank polls (td_passive again) at any
 *   time; a primary makes its receiver active. Sends while passive
 *   (contract violations) are not modelled.
 * - Confirmation (cfg.confirm) is off; the counts are small integers.
 *
 * Oracle: `qp` counts quiescent points (every rank passive, no primary in
 * transit). The first rank to learn episode e must learn
 * it in a quiescent state with e <= qp (safety; e <= qp also makes it at
 * most one announcement per quiescent point); a control message of an
 * episode already announced (the core's "unsafe" count) fails too. Liveness
 * (ltl `live`, with weak fairness): every execution announces all PHASES
 * episodes unless it was cut at CAP waves.
 *
 * Each step prints an "EV ..." line; replay.c runs a trail's lines through
 * the real core (tests/model/check.sh).
 *
 * Broken variant of the engine (check.sh: liveness must fail):
 *   -DBROKEN_NOWAKE  a dormant rank that becomes dirty does not WAKE the
 *                    root: the root sleeps through phase 2, never announced
 */
#ifndef P
#define P 3
#endif
#ifndef MSGS
#define MSGS 2
#endif
#ifndef MSGS2
#define MSGS2 1
#endif
#ifndef PHASES
#define PHASES 1
#endif
#ifndef CAP
#define CAP 6
#endif
#ifndef CAP_AFTER
#define CAP_AFTER 4
#endif
#ifndef QCAP
#define QCAP 4
#endif

#define PARENT(r) (((r) - 1) / 2)
#define NCH(r) ((2 * (r) + 1 >= P) -> 0 : ((2 * (r) + 2 >= P) -> 1 : 2))
#define ISCHILD(r, s) ((s) == 2 * (r) + 1 || (s) == 2 * (r) + 2)

/* engine message types (algorithms use 0..9) */
#define EM_TERM 20
#define EM_SLEEP 21
#define EM_WAKE 22
#define MF_DIRTY 1
#define MF_INF 2
#define NONE 255

/* a control message: type, episode, seq, a, b, flags */
chan ctl[P * P] = [QCAP] of { byte, byte, byte, short, short, byte };
/* messages held for a later episode, per rank: src, then the message */
chan heldq[P] = [QCAP] of { byte, byte, byte, byte, short, short, byte };
/* a primary: the piggyback (p0, p1) */
chan prim[P * P] = [MSGS + MSGS2] of { byte, short };

/* the engine, per rank (td_ctx) */
bit act[P], dirty[P], dormant[P];
byte episode[P], sleep_id[P], sent[P], recvd[P];

/* the program and the oracle */
byte budget = MSGS;
byte transit;           /* primaries sent and not received */
byte qp;                /* quiescent points so far */
byte qwaves;            /* waves begun since quiescence (or since the announcement) */
bit wasq;
byte ann;               /* greatest episode announced */
bit capped;             /* the path was cut at CAP waves while work remained */
bit started2;           /* phase 2 started */
bit isq;

/* scratch of the atomic steps (every step is atomic: no interleaving) */
byte mt, me, mq, mf, msrc, p0, i_, j_, k_;
short ma, mb, p1;

inline send_ctl(sc_s, sc_d, sc_t, sc_q, sc_a, sc_b, sc_f)
{
    assert(nfull(ctl[(sc_s) * P + (sc_d)]));
    ctl[(sc_s) * P + (sc_d)]!sc_t, episode[sc_s], sc_q, sc_a, sc_b, sc_f
}

/* td_send_ep: stamped with episode sc_e */
inline send_ctl_ep(sc_s, sc_d, sc_t, sc_e, sc_q, sc_a, sc_b, sc_f)
{
    assert(nfull(ctl[(sc_s) * P + (sc_d)]));
    ctl[(sc_s) * P + (sc_d)]!sc_t, sc_e, sc_q, sc_a, sc_b, sc_f
}

inline to_children(tc_r, tc_t, tc_q)
{
    if
    :: 2 * tc_r + 1 < P -> send_ctl(tc_r, 2 * tc_r + 1, tc_t, tc_q, 0, 0, 0)
    :: else
    fi;
    if
    :: 2 * tc_r + 2 < P -> send_ctl(tc_r, 2 * tc_r + 2, tc_t, tc_q, 0, 0, 0)
    :: else
    fi
}

inline quiescent_now()
{
    isq = (transit == 0);
    i_ = 0;
    do
    :: i_ < P -> if :: act[i_] -> isq = 0 :: else fi; i_++
    :: else -> break
    od
}

/* after every step: a new quiescent point? */
inline oracle()
{
    quiescent_now();
    if
    :: isq && !wasq -> qp++
    :: else
    fi;
    if
    :: !isq -> qwaves = 0
    :: else
    fi;
    wasq = isq
}

/* waves: the root starts wave w (algorithms with waves call this first) */
inline wave_cap(wc_w)
{
    quiescent_now();
    if
    :: isq ->
        qwaves++;
        assert(qwaves <= CAP_AFTER) /* LIVENESS: a wave too many since quiescence or the announcement */
    :: !isq && wc_w > CAP -> capped = 1
    :: else
    fi
}

inline announce_local(al_r)
{
    episode[al_r]++;
    dirty[al_r] = 0;
    dormant[al_r] = 0;
    algo_new_episode(al_r);
    printf("EV announce %d %d\n", al_r, episode[al_r]);
    if
    :: episode[al_r] > ann ->
        quiescent_now();
        /* quiescent now, and a quiescent point for each episode (this step's
         * own counts: oracle() runs at its end) */
        assert(isq && episode[al_r] <= qp + (wasq -> 0 : 1) && episode[al_r] <= PHASES); /* SAFETY */
        ann = episode[al_r];
        qwaves = 0
    :: else
    fi
}

/* td_quiescent, without confirmation */
inline td_quiescent(tq_r, tq_dirt)
{
    if
    :: tq_dirt ->
        to_children(tq_r, EM_TERM, 0);
        announce_local(tq_r)
    :: else ->
        dormant[tq_r] = 1;
        sleep_id[tq_r]++;
        to_children(tq_r, EM_SLEEP, sleep_id[tq_r])
    fi
}

inline mark_dirty(md_r)
{
    if
    :: !dirty[md_r] ->
        dirty[md_r] = 1;
        if
        :: dormant[md_r] ->
            dormant[md_r] = 0;
            if
#ifndef BROKEN_NOWAKE
            :: md_r != 0 -> send_ctl(md_r, 0, EM_WAKE, sleep_id[md_r], 0, 0, 0)
#endif
            :: else
            fi
        :: else
        fi
    :: else
    fi
}

/* replay_held: every held message of this episode or an earlier one, in
 * the order they arrived (the others keep theirs) */
inline replay_held(rh_r)
{
    k_ = len(heldq[rh_r]);
    do
    :: k_ > 0 ->
        heldq[rh_r]?msrc, mt, me, mq, ma, mb, mf;
        if
        :: me <= episode[rh_r] ->
            printf("EV replay %d %d\n", rh_r, msrc);
            algo_on_control(rh_r, msrc)
        :: else -> heldq[rh_r]!msrc, mt, me, mq, ma, mb, mf
        fi;
        k_--
    :: else -> break
    od
}

inline progress(pr_r)
{
    if
    :: act[pr_r] -> skip
    :: else ->
        replay_held(pr_r);
        if
        :: pr_r == 0 && dormant[0] -> skip
        :: else -> algo_on_passive(pr_r)
        fi
    fi
}

/* td_control: the message in mt, me, mq, ma, mb, mf */
inline td_control(tc2_r, tc2_src)
{
    if
    :: mt == EM_TERM ->
        assert(me == episode[tc2_r] && tc2_r != 0);
        to_children(tc2_r, EM_TERM, 0);
        announce_local(tc2_r)
    :: mt == EM_SLEEP ->
        if
        :: me < episode[tc2_r] -> skip
        :: else ->
            assert(me == episode[tc2_r] && tc2_r != 0);
            to_children(tc2_r, EM_SLEEP, mq);
            if
            :: mq > sleep_id[tc2_r] ->
                sleep_id[tc2_r] = mq;
                if
                :: dirty[tc2_r] -> send_ctl(tc2_r, 0, EM_WAKE, sleep_id[tc2_r], 0, 0, 0)
                :: else -> dormant[tc2_r] = 1
                fi
            :: else
            fi
        fi
    :: mt == EM_WAKE ->
        assert(tc2_r == 0);
        if
        :: me == episode[tc2_r] && mq == sleep_id[tc2_r] -> dormant[tc2_r] = 0
        :: else
        fi
    :: mt < EM_TERM && me > episode[tc2_r] ->
        assert(nfull(heldq[tc2_r]));
        heldq[tc2_r]!tc2_src, mt, me, mq, ma, mb, mf
    :: mt < EM_TERM && me < episode[tc2_r] ->
        assert(0) /* SAFETY: an announced episode's message (the core's "unsafe" count) */
    :: mt < EM_TERM && me == episode[tc2_r] ->
        algo_on_control(tc2_r, tc2_src)
    fi;
    progress(tc2_r)
}

inline try_send(ts_r, ts_d)
{
    algo_on_send(ts_r, ts_d);
    sent[ts_r]++;
    mark_dirty(ts_r);
    transit++;
    prim[(ts_r) * P + (ts_d)]!p0, p1
}

