#!/bin/sh
# Requests the MPI library frees without reporting them (tests/mpi/lostreq.c):
# under Open MPI 4.1 an MPI_Testany or MPI_Waitany that returns one
# request's error frees every other request of the array that completed in
# error, unreported (docs/user-guide.md, "MPI libraries"). tdshim kept its
# entries of those receives, and a handle MPI reused for a later receive
# found the stale one: under bcj one message of the 1,200 that follow was
# not copied out (its buffer kept what it held; the sum one short), in every
# run (shim/mpi/tds_complete.c, lost_others). The program's transcript must
# be native's under skr header-free (flat entries), bcj (flat, a header) and
# bcj with the datatype layout (the general entries), for both calls; where
# the library frees them (native's first call leaves both handles null),
# each run says so once on stderr, and never where it does not (MPICH).
# Modes p and q: a persistent receive that truncates, completed by MPI_Wait
# or MPI_Test, which Open MPI frees there too (its handle comes back null);
# tdshim's entry of it, kept for MPI_Request_free, was then stale, and MPI
# gave its handle to a later receive (tds_req.c, tds_rq_purge): the same
# transcript, and nothing said (the request was reported).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
P="$B/lostreq"
plan 28
for mode in t w p q; do
    case $mode in t) call=MPI_Testany ;; w) call=MPI_Waitany ;; p) call="persistent, MPI_Wait" ;; q) call="persistent, MPI_Test" ;; esac
    run_mpi 3 -- "$P" $mode >"$TMPD/native$mode" 2>"$TMPD/native$mode.err"
    rc=$?
    grep -q '^windows: bad=0 ' "$TMPD/native$mode" && grep -q '^one at a time: sum=' "$TMPD/native$mode" || rc=1
    ok $rc "native, $call: $(head -n 1 "$TMPD/native$mode")"
    lost=0
    case $mode in t | w) grep -q 'null=1,1$' "$TMPD/native$mode" && lost=1 ;; esac
    for cfg in skr bcj bcjdt; do
        case $cfg in
        skr) set -- TDSHIM_ALGO=skr TDSHIM_PIGGYBACK=none ;;
        bcj) set -- TDSHIM_ALGO=bcj ;;
        bcjdt) set -- TDSHIM_ALGO=bcj TDSHIM_PIGGYBACK=datatype ;;
        esac
        run_mpi 3 LD_PRELOAD="$LIB" TDSHIM_REPORT=none "$@" -- "$P" $mode >"$TMPD/$cfg$mode" 2>"$TMPD/$cfg$mode.err"
        rc=$?
        if [ $rc -eq 0 ] && cmp -s "$TMPD/native$mode" "$TMPD/$cfg$mode"; then
            ok 0 "$call, $cfg: transcript identical to native"
        else
            ok 1 "$call, $cfg: transcript identical to native (rc=$rc)"
            diff "$TMPD/native$mode" "$TMPD/$cfg$mode" | sed 's/^/# /'
            sed 's/^/# stderr: /' "$TMPD/$cfg$mode.err" | head -5
        fi
        n=$(grep -c 'the MPI library freed 1 request(s) done in error without reporting them' "$TMPD/$cfg$mode.err")
        [ "$n" -eq "$lost" ]
        ok $? "$call, $cfg: the requests MPI freed unreported named on stderr $n time(s), expected $lost"
    done
done
