/*
 * The processes of the model (engine.pml says what they stand for): the
 * program of each rank, one deliverer per channel, phase 2, and init.
 * Included last by an algorithm model, after its inlines.
 */
proctype program(byte r)
{
    byte d;
end:
    do
    :: atomic {
        act[r] && budget > 0 ->
        budget--;
        select(d : 0 .. P - 2);
        if
        :: d >= r -> d++ /* any rank but r */
        :: else
        fi;
        try_send(r, d);
        printf("EV send %d %d\n", r, d);
        oracle()
    }
    :: atomic {
        act[r] ->
        act[r] = 0;
        printf("EV passive %d\n", r);
        progress(r);
        oracle()
    }
    :: atomic {
        !act[r] ->
        printf("EV poll %d\n", r);
        progress(r);
        oracle()
    }
    od
}

/* delivers the control messages from s to d, oldest first */
proctype ctlnet(byte s; byte d)
{
end:
    do
    :: atomic {
        ctl[s * P + d]?mt, me, mq, ma, mb, mf;
        printf("EV ctl %d %d\n", s, d);
        td_control(d, s);
        oracle()
    }
    od
}

proctype primnet(byte s; byte d)
{
end:
    do
    :: atomic {
        prim[s * P + d]?p0, p1;
        transit--;
        printf("EV recv %d %d\n", s, d);
        recvd[d]++;
        if
        :: !(act[d] && dirty[d]) ->
            act[d] = 1;
            mark_dirty(d)
        :: else
        fi;
        algo_on_recv(d, s);
        oracle()
    }
    od
}

/* phase 2: a rank that learned announcement 1 starts new work */
proctype phase2()
{
    byte r;
    atomic {
        select(r : 0 .. P - 1);
        episode[r] >= 1;
        printf("EV activity %d\n", r);
        act[r] = 1;
        mark_dirty(r);
        budget = budget + MSGS2;
        started2 = 1;
        oracle()
    }
}

init {
    atomic {
        i_ = 0;
        do
        :: i_ < P ->
            act[i_] = 1;
            dirty[i_] = 1; /* the program's start is activity (td_ctx_init) */
            algo_init(i_);
            run program(i_);
            i_++
        :: else -> break
        od;
        /* control channels: tree edges and every rank to and from rank 0 */
        i_ = 0;
        do
        :: i_ < P ->
            j_ = 0;
            do
            :: j_ < P ->
                if
                :: i_ != j_ && (i_ == 0 || j_ == 0 || ISCHILD(i_, j_) || ISCHILD(j_, i_)) -> run ctlnet(i_, j_)
                :: else
                fi;
                if
                :: i_ != j_ -> run primnet(i_, j_)
                :: else
                fi;
                j_++
            :: else -> break
            od;
            i_++
        :: else -> break
        od;
        if
        :: PHASES > 1 -> run phase2()
        :: else
        fi
    }
}

ltl live { <> (ann == PHASES || capped) }
