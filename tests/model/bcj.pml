/*
 * Baker-Crivelli-Jessup sweeps (shim/core/bcj.c; papers/bcj-sweep-termination.txt
 * Figure 1 and §4) on the engine of engine.pml.
 *
 * The piggyback is the sender's sweep_# modulo MOD (the shim: 256, one
 * byte), decoded by the receiver as td_bcj_stamp does: the number congruent
 * to the stamp in [r - MOD + 2, r + 1], r its own sweep_#. A small MOD
 * (default 4) makes the wrap-around happen within CAP sweeps.
 *
 * Broken variants (each must give a counterexample, tests/model/check.sh):
 *   -DBROKEN_NOINF   no INFINITY rule (§4): bcj.c's bcj-noinf
 *   -DBROKEN_STAMP   the stamp decoded in [r - MOD + 1, r], as if a sender
 *                    could not be one sweep ahead: a message from a rank
 *                    already counted by the sweep in progress looks old
 */
#include "engine.pml"

#ifndef MOD
#define MOD 4
#endif

#define BCJ_DOWN 0
#define BCJ_UP 1

byte sweep[P], lms[P], cur[P], nxt, nch[P];
short accum[P];
bit down_sent[P], inf[P], bdirty[P];
byte bv; /* scratch */
short bacc;
bit binf, bdt;

inline algo_init(ai_r) { skip }

inline bcj_begin(bb_r, bb_w)
{
    cur[bb_r] = bb_w;
    nch[bb_r] = 0;
    accum[bb_r] = 0;
    down_sent[bb_r] = 0;
    inf[bb_r] = 0;
    bdirty[bb_r] = 0
}

inline algo_new_episode(ane_r) { bcj_begin(ane_r, 0) }

/* td_bcj_stamp(sweep[r], p0) */
inline algo_on_recv(aor_r, aor_src)
{
#ifdef BROKEN_STAMP
    bv = (sweep[aor_r] + MOD * 8 - p0) % MOD;
    if
    :: bv > sweep[aor_r] -> bv = 0
    :: else -> bv = sweep[aor_r] - bv
    fi;
#else
    bv = (sweep[aor_r] + 1 + MOD * 8 - p0) % MOD;
    if
    :: bv > sweep[aor_r] + 1 -> bv = 0
    :: else -> bv = sweep[aor_r] + 1 - bv
    fi;
#endif
    if
    :: bv > lms[aor_r] -> lms[aor_r] = bv
    :: else
    fi
}

inline algo_on_send(aos_r, aos_d)
{
    p0 = sweep[aos_r] % MOD;
    p1 = 0
}

inline algo_on_control(aoc_r, aoc_src)
{
    if
    :: mt == BCJ_DOWN ->
        assert(aoc_src == PARENT(aoc_r) && aoc_r != 0 && cur[aoc_r] == 0 && mq > sweep[aoc_r]);
        bcj_begin(aoc_r, mq)
    :: mt == BCJ_UP ->
        assert(cur[aoc_r] != 0 && down_sent[aoc_r] && mq == cur[aoc_r] && nch[aoc_r] < NCH(aoc_r) && ISCHILD(aoc_r, aoc_src));
        nch[aoc_r]++;
        if
        :: mf & MF_INF -> inf[aoc_r] = 1
        :: else -> accum[aoc_r] = accum[aoc_r] + ma
        fi;
        bdirty[aoc_r] = bdirty[aoc_r] | (mf & MF_DIRTY)
    fi
}

/* Figure 1, "Upward traversal" */
inline bcj_complete(bc_r)
{
#ifdef BROKEN_NOINF
    binf = inf[bc_r];
#else
    binf = inf[bc_r] || lms[bc_r] > sweep[bc_r];
#endif
    bacc = accum[bc_r] + sent[bc_r] - recvd[bc_r];
    bdt = bdirty[bc_r] || dirty[bc_r];
    sweep[bc_r] = cur[bc_r];
    cur[bc_r] = 0;
    if
    :: bc_r != 0 ->
        send_ctl(bc_r, PARENT(bc_r), BCJ_UP, sweep[bc_r], (binf -> 0 : bacc), 0, (binf -> MF_INF : 0) | (bdt -> MF_DIRTY : 0))
    :: bc_r == 0 && !binf && bacc == 0 -> td_quiescent(bc_r, bdt)
    :: else
    fi
}

inline algo_on_passive(aop_r)
{
    if
    :: aop_r == 0 && cur[aop_r] == 0 ->
        wave_cap(nxt + 1);
        if
        :: !capped ->
            nxt++;
#ifdef REACH_WRAP
            assert(nxt <= MOD + 1); /* check.sh: fails, so sweeps past the stamp's wrap-around are explored */
#endif
            bcj_begin(aop_r, nxt)
        :: else
        fi
    :: else
    fi;
    if
    :: cur[aop_r] != 0 && !down_sent[aop_r] ->
        to_children(aop_r, BCJ_DOWN, cur[aop_r]);
        down_sent[aop_r] = 1
    :: else
    fi;
    if
    :: cur[aop_r] != 0 && nch[aop_r] == NCH(aop_r) && down_sent[aop_r] -> bcj_complete(aop_r)
    :: else
    fi
}

#include "processes.pml"
