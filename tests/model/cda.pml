/*
 * CDA, the integer-credit distribution algorithm (shim/core/cda.c;
 * papers/cda-credit-hpc.txt §IV) on the engine of engine.pml, with small
 * credits so that splitting, borrowing (BORROW/GRANT: prefetch REFILLs and
 * prepaid sends, whose grant goes to the receiver), flushing and COLLECT
 * are all reached: C_init = CINIT, C_con = CCON,
 * W_con = CWCON, C_borrow = CBORROW, a non-root rank holds at most CMAX.
 * The piggyback is (episode, credit); with PHASES=2 credit of the next
 * episode reaches ranks that have not learned the announcement yet.
 *
 * Broken variant (tests/model/check.sh): -DBROKEN_ACTIVEFLUSH, an active
 * rank gives its whole credit to a message and runs on with none
 * (cda.c's cda-activeflush).
 */
#include "engine.pml"

#ifndef CINIT
#define CINIT 3
#endif
#ifndef CCON
#define CCON 2
#endif
#ifndef CWCON
#define CWCON 1
#endif
#ifndef CBORROW
#define CBORROW 2
#endif
#ifndef CMAX
#define CMAX 7
#endif

#define CDA_FLUSH 0
#define CDA_BORROW 1
#define CDA_GRANT 2
#define CDA_COLLECT 3
#define CDA_F_OVERFLOW 4
#define CDA_F_REFILL 4
#define CDA_F_PREPAID 8

short cur[P], future[P], out;
byte bseq[P], emitted[P];
byte reserved[P], awaiting[P], awaiting_next[P];
bit borrowing[P], collect[P], collected, dirty_or, ahead[P];
short cw, cf; /* scratch */
bit cdt;

inline algo_init(ai_r)
{
    cur[ai_r] = CINIT;
    if
    :: ai_r == 0 -> out = (P - 1) * CINIT
    :: else
    fi
}

/* a flush carries the rank's dirty bit */
inline flush_credit(fl_r, fl_w, fl_f)
{
    send_ctl(fl_r, 0, CDA_FLUSH, 0, fl_w, 0, fl_f | (dirty[fl_r] -> MF_DIRTY : 0))
}

/* credit enters a non-root rank: at most CMAX; above it all but CMAX / 2
 * back at once (cda.c's CDA_KEEP) */
inline absorb(ab_r, ab_w)
{
    cur[ab_r] = cur[ab_r] + ab_w;
    if
    :: cur[ab_r] > CMAX ->
        cf = cur[ab_r] - CMAX / 2;
        cur[ab_r] = CMAX / 2;
        flush_credit(ab_r, cf, CDA_F_OVERFLOW)
    :: else
    fi
}

/* BORROW for a prepaid primary to bo_d (-1: none), with a REFILL when
 * bo_f, stamped with episode bo_e */
inline borrow(bo_r, bo_d, bo_f, bo_e)
{
    if
    :: bo_f ->
        bseq[bo_r]++;
        send_ctl_ep(bo_r, 0, CDA_BORROW, bo_e, bseq[bo_r], bo_d, 0, CDA_F_REFILL);
        borrowing[bo_r] = 1
    :: else -> send_ctl_ep(bo_r, 0, CDA_BORROW, bo_e, 0, bo_d, 0, 0)
    fi
}

/* one half of a prepaid pair: cdt = 1 when the pair is complete */
inline prepaid_half(ph_mine, ph_other)
{
    if
    :: ph_other > 0 -> ph_other--; cdt = 1
    :: else -> ph_mine++; cdt = 0
    fi
}

/* §IV: w = floor(C_cur / S), at most W_con when C_cur <= C_con, at least 1 */
inline share(sh_r)
{
    cw = cur[sh_r] / (emitted[sh_r] + 2);
    if
    :: cur[sh_r] <= CCON && cw > CWCON -> cw = CWCON
    :: else
    fi;
    if
    :: cw < 1 -> cw = 1
    :: else
    fi
}

inline algo_on_send(aos_r, aos_d)
{
    p0 = episode[aos_r];
    if
    :: aos_r == 0 ->
        if
        :: cur[0] < CBORROW || cur[0] < 2 -> cur[0] = cur[0] + CINIT
        :: else
        fi;
        share(0);
        cur[0] = cur[0] - cw;
        out = out + cw;
        emitted[0]++
    :: aos_r != 0 && ahead[aos_r] && future[aos_r] > 0 ->
        if
        :: future[aos_r] > 1 -> cw = future[aos_r] / 2
        :: else -> cw = 1
        fi;
        future[aos_r] = future[aos_r] - cw;
        p0 = episode[aos_r] + 1
    :: aos_r != 0 && ahead[aos_r] && future[aos_r] == 0 ->
        borrow(aos_r, aos_d, 0, episode[aos_r] + 1);
        cw = 0;
        p0 = episode[aos_r] + 1
    :: aos_r != 0 && !ahead[aos_r] && cur[aos_r] < 2 ->
        borrow(aos_r, aos_d, !borrowing[aos_r] && emitted[aos_r] >= 1, episode[aos_r]);
        emitted[aos_r]++;
        cw = 0
    :: aos_r != 0 && !ahead[aos_r] && cur[aos_r] >= 2 ->
        share(aos_r);
#ifdef BROKEN_ACTIVEFLUSH
        cw = cur[aos_r];
#else
        if
        :: cw > cur[aos_r] - 1 -> cw = cur[aos_r] - 1
        :: else
        fi;
#endif
        cur[aos_r] = cur[aos_r] - cw;
        emitted[aos_r]++;
        if
        :: emitted[aos_r] >= 2 && cur[aos_r] < CBORROW && !borrowing[aos_r] && cur[aos_r] >= 1 ->
            borrow(aos_r, -1, 1, episode[aos_r])
        :: else
        fi
    fi;
    p1 = cw
}

inline algo_on_recv(aor_r, aor_src)
{
    if
    :: p1 == 0 && p0 == episode[aor_r] ->
        prepaid_half(awaiting[aor_r], reserved[aor_r]);
        if
        :: cdt && aor_r != 0 -> absorb(aor_r, CINIT)
        :: else
        fi
    :: p0 == episode[aor_r] + 1 && aor_r != 0 ->
        ahead[aor_r] = 1;
        if
        :: p1 == 0 -> awaiting_next[aor_r]++
        :: else -> future[aor_r] = future[aor_r] + p1
        fi
    :: p1 > 0 && p0 == episode[aor_r] && aor_r == 0 ->
        assert(p1 <= out);
        out = out - p1;
        cur[0] = cur[0] + p1
    :: p1 > 0 && p0 == episode[aor_r] && aor_r != 0 -> absorb(aor_r, p1)
    :: else -> assert(0) /* a primary of another episode */
    fi
}

inline algo_on_passive(aop_r)
{
    emitted[aop_r] = 0;
    if
    :: aop_r != 0 ->
        if
        :: cur[aop_r] && !borrowing[aop_r] && (dirty[aop_r] || collect[aop_r]) ->
            flush_credit(aop_r, cur[aop_r], 0);
            cur[aop_r] = 0
        :: else
        fi
    :: else ->
        cdt = dirty_or || dirty[0];
        if
        :: !cdt -> skip
        :: cdt && out == 0 && reserved[0] == 0 -> td_quiescent(0, 1)
        :: cdt && (out != 0 || reserved[0] != 0) && episode[0] > 0 && !collected ->
            collected = 1;
            to_children(0, CDA_COLLECT, 0)
        :: else
        fi
    fi
}

inline algo_on_control(aoc_r, aoc_src)
{
    if
    :: mt == CDA_FLUSH ->
        assert(aoc_r == 0 && aoc_src != 0 && ma >= 1 && ma <= out);
        out = out - ma;
        dirty_or = dirty_or | (mf & MF_DIRTY)
    :: mt == CDA_BORROW ->
        assert(aoc_r == 0 && aoc_src != 0 && ma >= -1 && ma < P && (ma >= 0 || mf == CDA_F_REFILL));
        if
        :: ma == 0 -> prepaid_half(reserved[0], awaiting[0])
        :: ma > 0 ->
            send_ctl(0, ma, CDA_GRANT, 0, CINIT, 0, CDA_F_PREPAID);
            out = out + CINIT
        :: else
        fi;
        if
        :: mf == CDA_F_REFILL ->
            send_ctl(0, aoc_src, CDA_GRANT, mq, CINIT, 0, 0);
            out = out + CINIT
        :: else
        fi
    :: mt == CDA_GRANT && mf == CDA_F_PREPAID ->
        assert(aoc_r != 0 && aoc_src == 0);
        prepaid_half(reserved[aoc_r], awaiting[aoc_r]);
        if
        :: cdt -> absorb(aoc_r, CINIT)
        :: else
        fi
    :: mt == CDA_GRANT && mf != CDA_F_PREPAID ->
        assert(aoc_r != 0 && aoc_src == 0 && borrowing[aoc_r] && mq == bseq[aoc_r]);
        borrowing[aoc_r] = 0;
        absorb(aoc_r, CINIT)
    :: mt == CDA_COLLECT ->
        assert(aoc_r != 0 && aoc_src == PARENT(aoc_r) && !collect[aoc_r]);
        collect[aoc_r] = 1;
        to_children(aoc_r, CDA_COLLECT, 0)
    fi
}

inline algo_new_episode(ane_r)
{
    emitted[ane_r] = 0;
    collect[ane_r] = 0;
    borrowing[ane_r] = 0;
    reserved[ane_r] = 0;
    awaiting[ane_r] = awaiting_next[ane_r];
    awaiting_next[ane_r] = 0;
    ahead[ane_r] = 0;
    if
    :: ane_r == 0 ->
        dirty_or = 0;
        collected = 0;
        cur[0] = CINIT;
        out = (P - 1) * CINIT
    :: else ->
        cw = future[ane_r];
        future[ane_r] = 0;
        cur[ane_r] = 0;
        absorb(ane_r, CINIT);
        if
        :: cw -> absorb(ane_r, cw)
        :: else
        fi
    fi
}

#include "processes.pml"
