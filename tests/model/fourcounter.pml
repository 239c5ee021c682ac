/*
 * The four-counter waves (shim/core/fourcounter.c; papers/cda-credit-hpc.txt
 * §III-B) on the engine of engine.pml: STOP(sigma_s, sigma_r) up the tree
 * when a rank is idle with every child's STOP, REPEAT down from the root;
 * the root announces when sigma_s = sigma_r and both equal the previous
 * wave's.
 *
 * Broken variant (tests/model/check.sh): -DBROKEN_ONEWAVE, one wave with
 * sigma_s = sigma_r suffices (fourcounter.c's fourcounter-onewave): an
 * orphan message cancels one in transit (§III-B).
 */
#include "engine.pml"

#define FC_STOP 0
#define FC_REPEAT 1

byte wave[P], nch[P];
bit down[P], rep[P], fdirty[P];
short ss[P], sr[P], prev_s, prev_r;
bit has_prev, fdone, fdt, fstop;
short fts, ftr;
byte fep;

inline fc_up(fu_r, fu_w)
{
    wave[fu_r] = fu_w;
    down[fu_r] = 0;
    fdirty[fu_r] = 0;
    nch[fu_r] = 0;
    ss[fu_r] = 0;
    sr[fu_r] = 0
}

inline algo_init(ai_r) { fc_up(ai_r, 1) }

inline algo_new_episode(ane_r)
{
    fc_up(ane_r, wave[ane_r] + 1);
    rep[ane_r] = 0;
    has_prev = 0
}

inline algo_on_recv(aor_r, aor_src) { skip }

inline algo_on_send(aos_r, aos_d)
{
    p0 = 0;
    p1 = 0
}

inline algo_on_control(aoc_r, aoc_src)
{
    if
    :: mt == FC_REPEAT ->
        assert(aoc_src == PARENT(aoc_r) && aoc_r != 0 && down[aoc_r] && !rep[aoc_r] && mq > wave[aoc_r]);
        fc_up(aoc_r, mq);
        rep[aoc_r] = 1
    :: mt == FC_STOP ->
        assert(!down[aoc_r] && mq == wave[aoc_r] && nch[aoc_r] < NCH(aoc_r) && ISCHILD(aoc_r, aoc_src));
        nch[aoc_r]++;
        ss[aoc_r] = ss[aoc_r] + ma;
        sr[aoc_r] = sr[aoc_r] + mb;
        fdirty[aoc_r] = fdirty[aoc_r] | (mf & MF_DIRTY)
    fi
}

/* the root entered DOWN with the totals of its wave */
inline fc_decide(fd_ts, fd_tr, fd_dirty)
{
#ifdef BROKEN_ONEWAVE
    fdone = (fd_ts == fd_tr);
#else
    fdone = (fd_ts == fd_tr && has_prev && prev_s == fd_ts && prev_r == fd_tr);
#endif
    prev_s = fd_ts;
    prev_r = fd_tr;
    has_prev = 1;
    if
    :: fdone -> td_quiescent(0, fd_dirty)
    :: else
    fi
}

/* fc_on_passive: the root runs at most two waves in one call (it has
 * children here, so the second one waits for them) */
inline algo_on_passive(aop_r)
{
    fstop = 0;
    do
    :: fstop -> break
    :: else ->
        if
        :: aop_r == 0 && down[aop_r] ->
            wave_cap(wave[aop_r] + 1);
            if
            :: capped -> fstop = 1
            :: else -> fc_up(aop_r, wave[aop_r] + 1); rep[aop_r] = 1
            fi
        :: else
        fi;
        if
        :: !fstop && rep[aop_r] -> to_children(aop_r, FC_REPEAT, wave[aop_r]); rep[aop_r] = 0
        :: else
        fi;
        if
        :: fstop || down[aop_r] || nch[aop_r] < NCH(aop_r) -> fstop = 1
        :: else ->
            fts = ss[aop_r] + sent[aop_r];
            ftr = sr[aop_r] + recvd[aop_r];
            fdt = fdirty[aop_r] || dirty[aop_r];
            down[aop_r] = 1;
            if
            :: aop_r != 0 ->
                send_ctl(aop_r, PARENT(aop_r), FC_STOP, wave[aop_r], fts, ftr, (fdt -> MF_DIRTY : 0));
                fstop = 1
            :: else ->
                fep = episode[0];
                fc_decide(fts, ftr, fdt);
                if
                :: episode[0] != fep || dormant[0] -> fstop = 1
                :: else
                fi
            fi
        fi
    od
}

#include "processes.pml"
