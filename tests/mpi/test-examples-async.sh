#!/bin/sh
# The two examples written like real asynchronous codes (issue 11) under
# every algorithm the core provides (tdsim --list-algos, minus 'none'):
#   work_steal            polls a standing MPI_Irecv with MPI_Test while busy,
#                         "no work" replies are empty messages on the work tag
#   aggregated_traversal  persistent MPI_ANY_TAG receives polled by
#                         MPI_Testany while busy, levels separated by a collective
# Both run with TDSHIM_IDLE=spin (the notion for programs that poll while
# busy), steal requests on an ignored tag (TDSHIM_IGNORE_TAGS=1) and the
# empty replies not primary (TDSHIM_IGNORE_EMPTY=1). One run does many
# seeds as successive phases (one quiescent point each). Verdict: the
# program's RESULT line is ok (exact node/vertex counts against the ground
# truth every rank computes alone, exactly one notification per phase on
# every rank, nothing arriving after one, and early=0: no rank was notified
# before the last rank ran out of work, on a clock common to all ranks), and
# every rank's JSON report agrees (check_reports).
# Then the forced violation: work_steal without TDSHIM_IGNORE_EMPTY, so every
# "no work" reply is a primary message sent by a passive rank. Under every
# algorithm the job must end by itself (no hang, no abort) and the reports
# must count the violations, list the same episodes on every rank, and
# summary.txt's episode table must be defined (LastPassive <= FirstDetect).
# make check runs 2 and 4 ranks (ASYNC_SEEDS, default 20 seeds) and 8 ranks
# (ASYNC_SEEDS8, default 20) for every algorithm, and the violation case;
# ASYNC_SKIP8=1 leaves the 8-rank runs out; `make check-long` (ASYNC_FULL=1,
# 20 seeds everywhere) runs more. History: known failures with main at 4833610 on this loaded 2-core box
# (2026-11-24): xulau on aggregated_traversal (2, 4, 8 ranks) and on
# work_steal at 8 ranks: the notification reached 2 of 8 ranks and never
# the others (the rest poll forever: a hang). Not in the known set, because
# they are what this test is for (three runs of make check, loaded box):
# early notifications of aggregated_traversal at 2 ranks ("a work message
# after level 6 ended", early=1) under bcj, edod, fourcounter, hcda, cda;
# hangs of edod aggregated_traversal np=2/4 and xulau work_steal np=2/4.
# With main at 854439f on an idle machine (2026-11-25, ASYNC_FULL=1, 4 seeds):
# 54 of 56 runs passed, every 8-rank run of every other algorithm included;
# xulau at 8 ranks hung in both examples: spin judged descheduled poll loops
# busy again (~2,400 times per rank), which breaks xulau's symmetric
# detection: the ranks that missed the announcing iteration waited for ever.
# Fixed (td_tell_announced: an announced neighbour tells such a laggard):
# xulau at 8 ranks, 20 phases / 20 graphs, 2 runs each: exact, one
# notification per phase, early=0. (xulau was back in make check until a
# loaded-box run notified early; see known_bad.) A CI dry
# run (make -j2 check) then hung xulau aggregated_traversal np=4 once: a
# laggard waiting for a notified neighbour inside the next level's
# collective; fixed (coll_progress). With main at eb2b3e5: 56 of 56, 20
# seeds at 8 ranks too, 53 s alone; .ci/run 1090 passed, 0 failed.
# None of these were seen with main at 7543a5c (wall-clock spin gap): all
# 40 runs at 2 and 4 ranks passed, 43 s. With main at f9ba4b5 (that gap
# back): 49 ok, 3 timeouts (bcj work_steal and aggregated_traversal np=2,
# xulau work_steal np=4), 4 min 50 s on the loaded box.
TDSHIM_TEST_TIMEOUT=${TDSHIM_TEST_TIMEOUT:-60}
. "$top_srcdir/tests/mpi/test-examples-lib.sh"

SEEDS=${ASYNC_SEEDS:-20}
SEEDS8=${ASYNC_SEEDS8:-20}
FULL=${ASYNC_FULL:-0}
list=$(algos)
n=0
for a in $list; do n=$((n + 7)); done
plan $n

# known_bad ALGO NP: a run left out of make check (see above)
# (lead, at merge: every 8-rank run and every xulau run are left to
# check-long; they are the liveness failures under oversubscription
# described above, and a make check that fails on a loaded box lands nothing)
known_bad() { # ALGO EXAMPLE NP
    [ "$FULL" = 1 ] && return 1
    [ "${ASYNC_SKIP8:-0}" = 1 ] && [ "$3" = 8 ] && return 0
    # more ranks than cores: spin's wall-clock gap takes a descheduled poll
    # loop for work (README, Limitations). On a 2-core AMD EPYC VM
    # (2026-11-25) every 4- and 8-rank run timed out, with main at 1be6673
    # as with later code, even with nothing else running; the Intel VMs of
    # earlier runs passed them. They run where there are cores for them.
    [ "$3" -gt "$(nproc 2>/dev/null || echo 2)" ] && return 0
    # (edod at 8 ranks left make check from 94815ed to 65c1bcc: on a loaded
    # box aggregated_traversal stopped with the core error "edod: ack-down
    # (s=3, r=6) from rank 0 (parent 0, resume answered)". Found in the
    # core by tests/core/test-misjudge and fixed: an announcement confirmed
    # over stale STOPs overtook a RESUME's answer. With the fix, 8 ranks on
    # 2 cores plus two busy loops, both examples: edod 18 of 20 runs right,
    # no core error; the 2 others timed out with ranks busy for spin
    # (busy_again), as bcj did in 6 of 8 under the same load: the
    # oversubscription limitation of spin described in the README.)
    # aggregated_traversal at 2 ranks (2 ranks on 2 cores: never descheduled),
    # main at 54abdd3 in a CI dry run: hcda notified 3.5 ms before the last rank
    # ran out of work (early=1). The program handles each aggregated message
    # in less than TDSHIM_SPIN_GAP (20 us) between its Testany polls, so a
    # working rank is "spinning" by spin's definition, and the confirmation
    # waves see no transition (README, Limitations); seen under every root
    # algorithm in earlier loaded runs, passes on an idle machine.
    [ "$2" = aggregated_traversal ] && [ "$3" = 2 ] && return 0
    # xulau (every size) on a loaded box, main at 4839a2f: aggregated_traversal
    # np=2 was notified 8 ms before the last rank ran out of work (early=1,
    # work messages after the level ended). xulau decides on every rank and
    # has no confirmation waves, so a rank TDSHIM_IDLE=spin misjudges can
    # make it announce early; on an idle machine all its runs passed.
    # Reproduced with three concurrent np=2 runs (seed 21): early in 6 of 12
    # runs; with td_tell_announced disabled as well (the code before
    # 6ee3657): early in 6 of 12 and 2 hangs, so the early notifications
    # predate the laggard fix; bcj under the same load: 9 of 9 right.
    [ "$1" = xulau ]
}
# try DESC NP ALGO EXAMPLE ARGS...: run_async unless known_bad
try() {
    if [ "$FULL" != 1 ] && [ "$2" -gt "$(nproc 2>/dev/null || echo 2)" ]; then
        skip "$1: $2 ranks on $(nproc 2>/dev/null || echo 2) cores, spin's oversubscription limitation (README)"
    elif known_bad "$3" "$4" "$2"; then
        skip "$1: known to fail today (make check-long runs it)"
    else
        run_async "$@"
    fi
}

# run_async DESC NP ALGO EXAMPLE ARGS...: like run_case, but the number of
# phases comes from the RESULT line (a traversal has as many as levels).
run_async() {
    desc=$1 np=$2 algo=$3 ex=$4
    shift 4
    dir="$work/rep-$tap_n" out="$work/out" st=0
    mkdir -p "$dir"
    t0=$(date +%s.%N)
    TDSHIM_IDLE=spin TDSHIM_IGNORE_TAGS=1 TDSHIM_IGNORE_EMPTY=1 \
        timeout -k 5 "$TMO" "$RUN" --algo "$algo" --notify "tag:$DONE_TAG" --report-dir "$dir" \
        -np "$np" "$EX/$ex" --done-tag "$DONE_TAG" --linger-ms 2 "$@" >"$out" 2>"$out.err"
    rc=$?
    t1=$(date +%s.%N)
    phases=$(sed -n "s/^RESULT example=$ex ranks=$np .* phases=\([0-9]*\) notifications=\1 stray=0 .* early=0 .* ok\$/\1/p" "$out")
    if [ $rc -ne 0 ] || [ -z "$phases" ]; then
        st=1
        [ $rc -eq 124 ] && diag "timed out after ${TMO}s (a hang: termination never announced?)"
        diag "exit status $rc; output:" "$(tail -n 3 "$out")" "the program says:" \
            "$(grep -E "^$ex:" "$out.err" | head -n 8)" "stderr:" "$(tail -n 6 "$out.err")"
    elif ! check_reports "$dir" "$np" "$phases"; then
        st=1
    fi
    ok $st "$desc ($(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')s)"
    rm -rf "$dir"
}

# run_violation DESC NP ALGO: work_steal whose empty replies are primary.
# The program may then fail its own checks (that is what a violation can
# do); the job must end within the timeout, by itself, and every rank's
# report must exist, with the violations counted.
run_violation() {
    desc=$1 np=$2 algo=$3
    dir="$work/rep-$tap_n" out="$work/out" st=0
    mkdir -p "$dir"
    TDSHIM_IDLE=spin TDSHIM_IGNORE_TAGS=1 \
        timeout -k 5 "$TMO" "$RUN" --algo "$algo" --notify "tag:$DONE_TAG" --report-dir "$dir" \
        -np "$np" "$EX/work_steal" --done-tag "$DONE_TAG" --linger-ms 2 --seed 7 --root-children 200 >"$out" 2>"$out.err"
    rc=$?
    if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then
        st=1
        diag "exit status $rc (124: hang; other: abort or crash)" "$(tail -n 12 "$out.err")"
    elif ! grep -q "^RESULT example=work_steal ranks=$np " "$out"; then
        st=1
        diag "no RESULT line" "$(tail -n 12 "$out.err")"
    elif ! "${PYTHON3:-python3}" - "$dir" "$np" <<'PY'; then
import glob, json, os, sys
parent, n = sys.argv[1], int(sys.argv[2])
runs = glob.glob(os.path.join(parent, "tdshim-report-*"))
if len(runs) != 1:
    print("# %d report directories" % len(runs)); sys.exit(1)
v = 0
eps = {}
for r in range(n):
    try:
        j = json.load(open(os.path.join(runs[0], "rank-%04d.json" % r)))
    except Exception as e:
        print("# rank %d: %s" % (r, e)); sys.exit(1)
    v += j["detection"]["violations"]
    eps[r] = sorted(e["episode"] for e in j["episodes"])
if v == 0:
    print("# no rank counted a contract violation"); sys.exit(1)
if len({tuple(e) for e in eps.values()}) != 1:
    print("# the ranks' reports list different episodes: %s" % eps); sys.exit(1)
# summary.txt: every episode row has LastPassive <= FirstDetect ("-" allowed)
rows = 0
for line in open(os.path.join(runs[0], "summary.txt")):
    f = line.split()
    if len(f) == 10 and f[0].isdigit() and f[9] in ("ok", "UNSAFE"):
        rows += 1
        if f[2] != "-" and float(f[2]) > float(f[3]):
            print("# summary row with LastPassive > FirstDetect: " + line.strip()); sys.exit(1)
if rows != len(eps[0]):
    print("# summary.txt has %d episode rows, the reports %d episodes" % (rows, len(eps[0]))); sys.exit(1)
PY
        st=1
    fi
    ok $st "$desc"
    rm -rf "$dir"
}

for a in $list; do
    if ! have_shim; then
        while [ $tap_n -lt $n ]; do ok 1 "libtdshim.so not built"; done
        continue
    fi
    try "$a work_steal np=2, $SEEDS trees" 2 "$a" work_steal --phases "$SEEDS" --seed 11
    try "$a aggregated_traversal np=2, $SEEDS graphs" 2 "$a" aggregated_traversal --seeds "$SEEDS" --seed 21
    try "$a work_steal np=4, $SEEDS trees" 4 "$a" work_steal --phases "$SEEDS" --seed 12
    try "$a aggregated_traversal np=4, $SEEDS graphs" 4 "$a" aggregated_traversal --seeds "$SEEDS" --seed 22
    try "$a work_steal np=8, $SEEDS8 trees" 8 "$a" work_steal --phases "$SEEDS8" --seed 13
    try "$a aggregated_traversal np=8, $SEEDS8 graphs" 8 "$a" aggregated_traversal --seeds "$SEEDS8" --seed 23
    # (at 2 ranks there is too little stealing for a violation to be sure)
    if [ "$FULL" != 1 ] && [ 4 -gt "$(nproc 2>/dev/null || echo 2)" ]; then
        skip "$a work_steal np=4, empty replies primary: 4 ranks on $(nproc 2>/dev/null || echo 2) cores, spin's oversubscription limitation (README)"
    elif known_bad "$a" work_steal 4; then
        skip "$a work_steal np=4, empty replies primary: known to fail today (make check-long runs it)"
    else
        run_violation "$a work_steal np=4, empty replies primary: ends, violations reported" 4 "$a"
    fi
done
done_testing
