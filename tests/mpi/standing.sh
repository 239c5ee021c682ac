#!/bin/sh
# Standing receives polled by MPI_Testany and MPI_Testsome, each one done
# reposted in its place (tests/mpi/standing.c; issue 38: the flat
# MPI_Testany and MPI_Testsome of shim/mpi/tds_flat.c take arrays of up to
# TDS_FTEST_N = 8 requests, the general entries longer ones). Rank 0 keeps
# K wildcard receives in an array with a send of its own and a null
# request, ignores the statuses at one call in three, gets one truncated
# message (rank 1's; one only: Open MPI 4.1's MPI_Testany frees a second
# one done in error unreported, tests/mpi/standing.c), and cancels the
# receives left at the end. Its
# transcript (messages, bytes and checksums per sender and tag; payloads
# and error codes checked) must be native's, and the reports must count
# every message: rank 0 received what the others sent, none unreceived.
# K = 4 (flat) and 10 (general), under skr header-free in measure mode
# (flat_meas_*), under skr with TDSHIM_NOTIFY=tag:99 (flat_*: the
# notification may land in a standing receive, which the program leaves
# out, as a program that polls for it does) and under bcj (a header:
# flat_hdr_*), and under skr with TDSHIM_NOTIFY=tag:99 TDSHIM_IDLE=test
# and a tag to classify (TDSHIM_IGNORE_TAGS=50, never sent: flat_cls_*;
# rank 0 passive at its empty polls, when its MPI_Testany tests tdshim's
# control receive in the same call, tds_flat.c testany_ctl, the truncated
# message and the cancels through it too).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
P="$B/standing"
N=400
plan 20
for mode in any some; do
    for k in 4 10; do
        run_mpi 3 -- "$P" $mode $k $N >"$TMPD/native" 2>"$TMPD/native.err"
        rc=$?
        last=$(tail -n 1 "$TMPD/native")
        case $last in *"messages=$((2 * (N + 1))), truncated=1, cancelled or notified=$k, wrong=0, error codes wrong=0") ;; *) rc=1 ;; esac
        ok $rc "native, MPI_Test$mode over $k standing receives: $last"
        for cfg in skr bcj skrtag skrtest; do
            dir="$TMPD/rep-$mode$k$cfg"
            mkdir -p "$dir"
            case $cfg in
            skr) set -- TDSHIM_ALGO=skr TDSHIM_PIGGYBACK=none ;;
            bcj) set -- TDSHIM_ALGO=bcj ;;
            skrtag) set -- TDSHIM_ALGO=skr TDSHIM_PIGGYBACK=none TDSHIM_NOTIFY=tag:99 ;;
            skrtest) set -- TDSHIM_ALGO=skr TDSHIM_PIGGYBACK=none TDSHIM_NOTIFY=tag:99 TDSHIM_IDLE=test TDSHIM_IGNORE_TAGS=50 ;;
            esac
            nt=
            case $cfg in skrtag | skrtest) nt=99 ;; esac
            run_mpi 3 LD_PRELOAD="$LIB" TDSHIM_REPORT=json TDSHIM_REPORT_DIR="$dir" "$@" -- "$P" $mode $k $N $nt \
                >"$TMPD/out" 2>"$TMPD/err"
            rc=$?
            res=$("${PYTHON3:-python3}" - "$dir" $((2 * (N + 1))) <<'PY'
import glob, json, sys
fs = sorted(glob.glob(sys.argv[1] + "/tdshim-report-*/rank-*.json"))
if len(fs) != 3:
    print("wrong: %d reports" % len(fs)); sys.exit(0)
p = [json.load(open(f))["primary"] for f in fs]
want = int(sys.argv[2])
sent = sum(x["sent"] for x in p[1:])
unrec = sum(x["unreceived_at_finalize"] for x in p)
good = p[0]["received"] == want and sent == want and unrec == 0
print("%s: rank 0 received %d primaries of the %d sent to it, %d unreceived" % ("ok" if good else "wrong", p[0]["received"], sent, unrec))
PY
)
            if [ $rc -eq 0 ] && cmp -s "$TMPD/native" "$TMPD/out" && case $res in ok:*) true ;; *) false ;; esac; then
                ok 0 "$cfg, MPI_Test$mode over $k: transcript native's; $res"
            else
                ok 1 "$cfg, MPI_Test$mode over $k: transcript native's (exit $rc); $res"
                diff "$TMPD/native" "$TMPD/out" | head -10 | sed 's/^/# /'
                tail -n 5 "$TMPD/err" | sed 's/^/# stderr: /'
            fi
        done
    done
done
done_testing
