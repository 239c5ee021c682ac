#!/bin/sh
# Issue 43: a passive rank that then sends 10^5 messages to itself
# (MPI_Sendrecv on MPI_COMM_SELF) and 10^5 to another rank (bench/burst:
# rank 1 waits for a go from rank 0, then sends; at 3 ranks rank 2 takes
# them in windows of 1000 preposted receives, at 2 ranks rank 0 does).
#  - Under cda and hcda the control messages of the whole job per primary
#    message are <= 0.01 in every run, at 3 ranks (the receiver is not
#    rank 0) and at 2: the credit constants, not the message count, set
#    them (hcda paid a borrow, a grant and a return through rank 0 per
#    message; cda's receiver returned an overflow at every message).
#  - A stream of BURST_PEER_N (default 300,000) messages to rank 0 alone, 2
#    ranks: <= 0.01 too. Rank 1 makes no call that receives, and rank 0's
#    windows complete without waiting long enough to poll: cda paid a
#    BORROW per message once the sender's credit ran out (871,917 for
#    10^6), its REFILL's grant unread on both sides, until td_want_poll
#    made both ranks drain their control channel.
#  - Instructions (callgrind, rank 1's loop of messages to itself, the whole
#    process: MPI's work included): cda's and hcda's within 1.10x of bcj's
#    (the issue's target, as a count: these loops take 10-20 ms, and the
#    wall times of a loaded 2-core machine vary more than 10 %). Skipped
#    as icount.sh is: without valgrind, for a sanitizer build, another MPI.
#  - The messages to itself alone, timed: bcj, cda and hcda alternate for
#    BURST_ROUNDS rounds (default 5) at 2 ranks, and the median of rank 1's
#    times under cda and hcda is within BURST_MAX_RATIO (default 5: runs of
#    10-100 ms, where a CI run saw 2.2x once) of bcj's; the ratio is
#    printed against the target, 1.10x.
#  - With the messages to the other rank too the times are printed, not
#    checked (bench/RESULTS.md, *A passive rank's burst*).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
BURST="$top_builddir/bench/burst"
N=${BURST_N:-100000}
PEER_N=${BURST_PEER_N:-300000}
ROUNDS=${BURST_ROUNDS:-5}
MAXR=${BURST_MAX_RATIO:-5}
PY=${PYTHON3:-python3}

# run NP ALGO TAG [MODE [COUNT]]: one run with JSON reports in $TMPD/TAG;
# prints rank 1's seconds, the job's control and primary messages and their ratio
run() {
    rm -rf "$TMPD/$3" && mkdir -p "$TMPD/$3"
    run_mpi "$1" LD_PRELOAD="$LIB" TDSHIM_ALGO="$2" TDSHIM_REPORT=json TDSHIM_REPORT_DIR="$TMPD/$3" -- \
        "$BURST" "${5:-$N}" 1000 "${4:-both}" >"$TMPD/$3.out" 2>"$TMPD/$3.err" || { echo "rc=$? fail"; return; }
    s=$(sed -n 's/^burst: .* seconds=\([0-9.]*\)$/\1/p' "$TMPD/$3.out")
    "$PY" - "$TMPD/$3" "$s" <<'EOF'
import glob, json, sys
d = glob.glob(sys.argv[1] + "/tdshim-report-*/")[0]
js = [json.load(open(f)) for f in sorted(glob.glob(d + "rank-*.json"))]
ctl = sum(j["control"]["sent"] for j in js)
prim = sum(j["primary"]["sent"] for j in js)
print(sys.argv[2] or "none", ctl, prim, "%.6f" % (ctl / prim))
EOF
}

plan 13
fails=0
failed() { fails=$((fails + 1)); diag "$*"; }
for np in 3 2; do
    for a in bcj cda hcda; do
        set -- $(run $np $a "$a-p$np")
        case $1 in rc=* | none | "") failed "$a at $np ranks: $*"; sed 's/^/# /' "$TMPD/$a-p$np.err" | head -5 ;; esac
        echo "$a $np $1 $2 $3 $4" >>"$TMPD/both"
        [ $a = bcj ] && continue
        awk -v w="${4:-9}" 'BEGIN { exit !(w <= 0.01) }'
        ok $? "$a, $np ranks (to itself and to rank $((np - 1 == 2 ? 2 : 0))): control messages per primary ${4:-?} (${2:-?} for ${3:-?} primaries)"
    done
done
diag "$(sed 's/^/both: algo ranks seconds control primary per-primary: /' "$TMPD/both")"
# a stream to rank 0 alone
for a in bcj cda hcda; do
    set -- $(run 2 $a "$a-peer" peer "$PEER_N")
    case $1 in rc=* | none | "") failed "$a, stream to rank 0: $*"; sed 's/^/# /' "$TMPD/$a-peer.err" | head -5 ;; esac
    diag "peer: $a 2 ranks, $PEER_N messages to rank 0: $1 s, $2 control for $3 primaries ($4)"
    [ $a = bcj ] && continue
    awk -v w="${4:-9}" 'BEGIN { exit !(w <= 0.01) }'
    ok $? "$a, 2 ranks, $PEER_N messages to rank 0 alone: control messages per primary ${4:-?} (${2:-?} for ${3:-?} primaries)"
done
# instructions per message of rank 1's loop to itself (callgrind)
SHIM="$top_builddir/shim/.libs/libtdshim.so"
CG="$top_srcdir/tests/perf/cgcost.py"
CGN=10000
why=
command -v valgrind >/dev/null 2>&1 || why="no valgrind"
[ -z "$why" ] && [ "$LIB" != "$SHIM" ] && why="a sanitizer build: instrumented counts"
[ -z "$why" ] && [ "$MPI_FLAVOUR" != ompi ] && why="not Open MPI"
icount() { # ALGO: the process's instructions per message in rank 1's loop, or "none"
    rm -f "$TMPD/cg.$1".*
    run_mpi 2 LD_PRELOAD="$LIB" TDSHIM_ALGO="$1" -- valgrind -q --tool=callgrind --collect-atstart=no \
        --callgrind-out-file="$TMPD/cg.$1.%q{OMPI_COMM_WORLD_RANK}" "$BURST" "$CGN" 1000 self \
        >"$TMPD/cg.$1.out" 2>&1 || { echo none; return; }
    [ -s "$TMPD/cg.$1.1" ] || { echo none; return; }
    "$PY" "$CG" "$TMPD/cg.$1.1" | awk -v n="$CGN" '{ t += $1; if ($2 ~ /libtdshim/) s = $1 }
        END { if (t > 0 && s > 0) printf "%.1f %.1f\n", t / n, s / n; else print "none" }'
}
if [ -n "$why" ]; then
    skip "cda, instructions of a loop to itself within 1.10x of bcj's: $why"
    skip "hcda, instructions of a loop to itself within 1.10x of bcj's: $why"
else
    set -- $(icount bcj)
    bt=$1 bs=${2:-none}
    for a in cda hcda; do
        set -- $(icount $a)
        awk -v b="$bt" -v t="$1" 'BEGIN { exit !(b != "none" && t != "none" && b > 500 && t / b <= 1.10) }'
        ok $? "$a, instructions per message of a loop to itself within 1.10x of bcj's: $1 against $bt ($(awk -v b="$bt" -v t="$1" 'BEGIN { if (b > 0 && t != "none") printf "%.3f", t / b; else print "none" }'); libtdshim's own ${2:-?} against $bs)"
    done
fi
# messages to itself only, 2 ranks, timed
# the median of each algorithm's times, over cda's and hcda's
ratios() {
    for a in cda hcda; do
        m=$(awk -v a=$a '$1 == a { print $2 }' "$TMPD/runs" | sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }')
        b=$(awk '$1 == "bcj" { print $2 }' "$TMPD/runs" | sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }')
        awk -v m="$m" -v b="$b" 'BEGIN { if (b > 0 && m > 0) printf "%.3f ", m / b; else printf "none " }'
    done
}
r=0
while [ $r -lt "$ROUNDS" ]; do
    r=$((r + 1))
    for a in bcj cda hcda; do
        set -- $(run 2 $a "$a-$r" self)
        case $1 in rc=* | none | "") failed "$a round $r: $*"; sed 's/^/# /' "$TMPD/$a-$r.err" | head -5; continue ;; esac
        echo "$a $1 $2 $3 $4" >>"$TMPD/runs"
    done
done
ok $fails "all runs of $N messages to itself and $N to another rank (3 and 2 ranks), and $r rounds of $N to itself only, completed; every message in order"
diag "$(sed 's/^/self: algo seconds control primary per-primary: /' "$TMPD/runs")"
for a in cda hcda; do
    worst=$(awk -v a=$a '$1 == a && $5 > m { m = $5 } END { printf "%.6f", m + 0 }' "$TMPD/runs")
    nruns=$(awk -v a=$a '$1 == a' "$TMPD/runs" | wc -l)
    awk -v w="$worst" -v n="$nruns" 'BEGIN { exit !(n > 0 && w <= 0.01) }'
    ok $? "$a, $N messages to itself (2 ranks): control messages per primary <= 0.01 in every run (worst $worst of $nruns runs)"
done
set -- $(ratios)
for a in cda hcda; do
    awk -v r="$1" -v x="$MAXR" 'BEGIN { exit !(r != "none" && r <= x) }'
    ok $? "$a, $N messages to itself: median time within ${MAXR}x of bcj's in the same invocation ($1, $r rounds; target 1.10x)"
    shift
done
done_testing
