#!/bin/sh
# Other jobs (issue 31, README "Other jobs"): point-to-point messages
# between processes that are not in one MPI_COMM_WORLD, under every
# algorithm, with tdshim preloaded on both sides (each job detects its own
# quiescence; messages between jobs travel as the program wrote them):
#  - spawn: a job of 2 spawns 2 children (MPI_Comm_spawn); and again with
#    children not preloaded (spawn-noshim, under bcj, skr and cda: a header,
#    header-free, a credit algorithm): the parent must send as written;
#  - connect/accept: two mpiruns of 2 (MPI_Open_port, the port name passed
#    through a file; Open MPI 4.1 needs its ompi-server for that);
#  - join: two mpiruns of 1 joined by MPI_Comm_join over a TCP socket on the
#    loopback (ompi-server too);
#  - inter: an intercommunicator between the halves of one job of 4
#    (MPI_Intercomm_create), whose messages stay primary.
# tests/mpi/xjob exchanges messages both ways over the intercommunicator,
# blocking and nonblocking (Send/Recv, Isend/Irecv, Ssend/Issend, persistent,
# Probe, Improbe+Mrecv, MPI_ANY_SOURCE), then over it merged into one
# intracommunicator (MPI_Intercomm_merge: of two jobs, a mixed one, whose
# messages are all another job's, even those of two ranks of one job:
# the decision is the communicator's), MPI_ANY_SOURCE receives. Each run must exit 0 with the
# sorted transcript of all processes identical to the native run's, and no
# sanitizer report (scripts/check runs this under ASan+UBSan). Before
# tdshim knew other jobs, a message to a child counted to world rank
# -32766: a heap overrun (ASan: WRITE in count_send), a credit core error
# under cda (finalize then timed out), SIGBUS at finalize under bcj.
# The reports: messages between jobs are counted in primary.other_jobs (both
# ends agree), never as primary; the intercommunicator of one job counts
# primary messages as before. A contract violation on a named duplicate of
# MPI_COMM_SELF is warned with the world rank, the communicator's name and
# the rank in it.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"

ALGOS="bcj skr fourcounter termdetect cda hcda edod xulau bcjrd none"
plan 50
if [ $MPI_FLAVOUR != ompi ]; then
    i=0
    while [ $i -lt 50 ]; do skip "Open MPI only (ompi-server; not tried under MPICH's hydra)"; i=$((i + 1)); done
    exit 0
fi
# processes of different jobs reach each other only over TCP (vader is
# within one job)
case $OMPI_MCA_btl in *tcp*) ;; *) export OMPI_MCA_btl="$OMPI_MCA_btl,tcp" ;; esac
export OMPI_MCA_btl_tcp_if_include=lo

# the rendezvous server of two mpiruns; stopped by its id at exit
OMPI_MCA_orte_tmpdir_base=$(mktemp -d "$TMPD/ompi.XXXXXX") ompi-server --no-daemonize -r "$TMPD/uri" \
    >"$TMPD/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; rm -rf "$TMPD"' EXIT
i=0
while [ ! -s "$TMPD/uri" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
URI="file:$TMPD/uri"

# run CASE OUT [VAR=value...]: one case, all its processes' stdout sorted
# into OUT, stderr in OUT.err; returns the worst exit status
run_case() {
    c=$1 out=$2
    shift 2
    rm -f "$TMPD/port"
    case $c in
    spawn*) run_mpi 2 "$@" -- "$B/xjob" $c 2 >"$out.raw" 2>"$out.err" ;;
    inter) run_mpi 4 "$@" -- "$B/xjob" inter >"$out.raw" 2>"$out.err" ;;
    connect | join)
        n=2 lo=accept hi=connect
        [ $c = join ] && n=1 lo=join-listen hi=join-connect
        run_mpi $n "$@" -- --ompi-server "$URI" "$B/xjob" $lo "$TMPD/port" >"$out.raw" 2>"$out.err" &
        p=$!
        run_mpi $n "$@" -- --ompi-server "$URI" "$B/xjob" $hi "$TMPD/port" >"$out.raw2" 2>"$out.err2"
        r2=$?
        wait $p
        r1=$?
        cat "$out.raw2" >>"$out.raw"
        cat "$out.err2" >>"$out.err"
        sort "$out.raw" >"$out"
        [ $r1 -eq 0 ] && return $r2
        return $r1
        ;;
    esac
    r=$?
    sort "$out.raw" >"$out"
    return $r
}

CASES="spawn connect join inter"
for c in $CASES; do
    run_case $c "$TMPD/native.$c"
    rc=$?
    [ $rc -eq 0 ] && grep -q 'recv3' "$TMPD/native.$c" && grep -q 'mrecv7' "$TMPD/native.$c"
    ok $? "$c: native run ($(wc -l <"$TMPD/native.$c") lines, rc=$rc)"
    [ -s "$TMPD/native.$c" ] || sed 's/^/# /' "$TMPD/native.$c.err" | head -10
done

# like_native CASE ALGO NATIVE WHAT: run CASE under ALGO, compare with NATIVE
like_native() {
    o="$TMPD/$2.$1"
    run_case $1 "$o" LD_PRELOAD="$LIB" TDSHIM_ALGO=$2 TDSHIM_REPORT=none
    rc=$?
    if [ $rc -eq 0 ] && cmp -s "$3" "$o" &&
        ! grep -qE 'Sanitizer|runtime error|-32766|tdshim: .*(stopped|not proven|error)' "$o.err"; then
        ok 0 "$4"
    else
        ok 1 "$4 (rc=$rc)"
        diff "$3" "$o" | head -6 | sed 's/^/# /'
        grep -v '^\[' "$o.err" | head -6 | sed 's/^/# stderr: /'
    fi
}
for c in $CASES; do
    for a in $ALGOS; do
        like_native $c $a "$TMPD/native.$c" "$c under $a: transcript identical to native, no abort, no sanitizer report"
    done
done
for a in bcj skr cda; do
    like_native spawn-noshim $a "$TMPD/native.spawn" "spawn under $a, children not under tdshim: transcript identical to native"
done

# the reports: other_jobs counted on both ends alike, primary balanced per job
for c in spawn inter; do
    mkdir -p "$TMPD/rep.$c"
    run_case $c "$TMPD/rep.$c.out" LD_PRELOAD="$LIB" TDSHIM_ALGO=bcj TDSHIM_REPORT=json,text \
        TDSHIM_REPORT_DIR="$TMPD/rep.$c"
done
"${PYTHON3:-python3}" - "$TMPD/rep.spawn" "$TMPD/rep.inter" <<'PY'
import glob, json, os, sys
def jobs(d):
    return [[json.load(open(f)) for f in sorted(glob.glob(os.path.join(r, "rank-*.json")))]
            for r in sorted(glob.glob(os.path.join(d, "tdshim-report-*")))]
bad = []
sp = jobs(sys.argv[1])
if len(sp) != 2 or sorted(len(j) for j in sp) != [2, 2]:
    bad.append("spawn: %d reports" % len(sp))
else:
    xs = sum(r["primary"]["other_jobs"]["sent"] for j in sp for r in j)
    xr = sum(r["primary"]["other_jobs"]["received"] for j in sp for r in j)
    xsb = sum(r["primary"]["other_jobs"]["sent_bytes"] for j in sp for r in j)
    xrb = sum(r["primary"]["other_jobs"]["received_bytes"] for j in sp for r in j)
    # the parent's rank 0: 2 x 2 messages to the children and 2 persistent
    # ones (80 bytes), 6 replies (80 bytes); the children 12 messages in all
    top = max((r["primary"]["other_jobs"]["sent"], r["primary"]["other_jobs"]["sent_bytes"]) for j in sp for r in j)
    # and 3 on the merged communicator, of two jobs (parent rank 1's too)
    if (xs, xr, xsb, xrb) != (15, 15, 172, 172) or top != (6, 80):
        bad.append("spawn: other_jobs sent %d/%dB received %d/%dB, most %s" % (xs, xsb, xr, xrb, top))
    for j in sp:
        s = sum(r["primary"]["sent"] for r in j)
        rv = sum(r["primary"]["received"] for r in j)
        if s != rv or s != 4:
            bad.append("spawn: a job's primary sent %d received %d (its ring and self-messages: 4)" % (s, rv))
it = jobs(sys.argv[2])
if len(it) != 1:
    bad.append("inter: %d reports" % len(it))
else:
    x = sum(r["primary"]["other_jobs"]["sent"] + r["primary"]["other_jobs"]["received"] for r in it[0])
    s = sum(r["primary"]["sent"] for r in it[0])
    rv = sum(r["primary"]["received"] for r in it[0])
    # ring 4 + self 4 + 2 x 2 to the high half + 2 persistent + 2 x 2 replies + Ssend + Issend
    # + 3 on the merged communicator
    if x or s != rv or s != 23:
        bad.append("inter: other_jobs %d, primary sent %d received %d (want 0, 23, 23)" % (x, s, rv))
for b in bad:
    print("# " + b)
sys.exit(1 if bad else 0)
PY
ok $? "reports: other_jobs 15 messages/172 bytes each way between the jobs of spawn, primary balanced per job; inter: 23 primary, no other_jobs"
grep -q 'messages to other jobs' "$TMPD"/rep.spawn/tdshim-report-*/summary.txt
ok $? "the text summary has the other-jobs rows"

# a violation on a named dup of MPI_COMM_SELF (XJOB_VIOLATE: an empty
# MPI_Iprobe just before the self-message) names world rank 1, the
# communicator and the rank in it
run_case inter "$TMPD/viol" LD_PRELOAD="$LIB" TDSHIM_ALGO=bcj TDSHIM_REPORT=none XJOB_VIOLATE=1
grep -q "tdshim: rank 1: a primary message (tag 8, to rank 0 of communicator 'xjob-self' (world rank 1), 4 bytes)" \
    "$TMPD/viol.err"
ok $? "the contract-violation warning names the world rank, the communicator and the rank in it"
grep 'contract violation' "$TMPD/viol.err" | head -2 | sed 's/^/# /'
done_testing
