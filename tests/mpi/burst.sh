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
#  - The messages to itself alone (the issue's case: 0.65 s against 0.007 s
#    natively under hcda, about 90x): bcj, cda and hcda alternate for
#    BURST_ROUNDS rounds (default 5) at 2 ranks, and the median of rank 1's
#    times under cda and hcda is within BURST_MAX_RATIO (default 5: runs of 10-100 ms, where the CI run saw 2.2x once) of
#    bcj's. Medians of alternating runs, so the other work of a loaded
#    2-core machine does not decide. The issue's target, 1.10x, is not met
#    (about 1.3x measured): every message of a credit algorithm takes the
#    shim's general send and receive paths (on_send, on_recv), bcj's the
#    inline ones (bench/RESULTS.md, *A passive rank's burst*).
#  - With the messages to the other rank too the times are printed, not
#    checked: those receives take tdshim's general receive path under every
#    algorithm without on_recv_many (cda, hcda), slower than bcj's flat one
#    whatever the credit does (bench/RESULTS.md, *A passive rank's burst*).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
BURST="$top_builddir/bench/burst"
N=${BURST_N:-100000}
ROUNDS=${BURST_ROUNDS:-5}
MAXR=${BURST_MAX_RATIO:-5}
PY=${PYTHON3:-python3}

# run NP ALGO TAG [MODE]: one run with JSON reports in $TMPD/TAG; prints
# rank 1's seconds, the job's control and primary messages and their ratio
run() {
    rm -rf "$TMPD/$3" && mkdir -p "$TMPD/$3"
    run_mpi "$1" LD_PRELOAD="$LIB" TDSHIM_ALGO="$2" TDSHIM_REPORT=json TDSHIM_REPORT_DIR="$TMPD/$3" -- \
        "$BURST" "$N" 1000 "${4:-both}" >"$TMPD/$3.out" 2>"$TMPD/$3.err" || { echo "rc=$? fail"; return; }
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

plan 9
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
    ok $? "$a, $N messages to itself: median time within ${MAXR}x of bcj's in the same invocation ($1, $r rounds; the target 1.10x is not met)"
    shift
done
done_testing
