#!/bin/sh
# A deliberately unsound setting must show UNSAFE, never "ok" (issues 37 and
# 41; shim/core/td_engine.c, "Premature announcements").
# aggregated_traversal tests the same MPI_ANY_TAG receives with MPI_Testany
# while it expands its frontier and while it waits; under TDSHIM_IDLE=test
# every such empty poll makes the rank passive, so tdshim notifies while
# ranks still hold work (no rule about what a poll can deliver separates
# the two: docs/internals.md, "Which polls are idle polls"; work_steal, the
# example this test used first, is sound under test since the busy rank's
# poll is on the ignored request tag).
# Under bcj (stamped header), skr and fourcounter (header-free: they see
# only send-after and late control messages) and cda (its own episode in
# the piggyback), 2 ranks, two graphs at --work-us 1: whenever the program
# saw a premature notification (its RESULT line says early>0, or a
# notification arrived in the wrong place: stray>0), some rank's JSON
# report must mark an episode unsafe with its evidence, the stderr line
# must say UNSAFE, and summary.txt must name the evidence. A run that
# happened to see nothing premature is tried again, at most 20 times (on a
# quiet machine skr was premature in 3 of 12 runs: 5 tries missed about one
# time in four); one that never does is a failure of the setting to be
# unsound, reported.
# skr and fourcounter (no stamp) may flag such a run only by the contract
# violations of its misjudged ranks (counted, and CONTRACT VIOLATIONS on
# stderr) when no send-after evidence arose: accepted for them, not for bcj
# or cda.
TDSHIM_TEST_TIMEOUT=${TDSHIM_TEST_TIMEOUT:-40}
. "$top_srcdir/tests/mpi/test-examples-lib.sh"

ALGOS="bcj skr fourcounter cda"
plan 4

# unsafe_run ALGO SEED: 0 UNSAFE shown, 1 premature but not shown (or a
# broken report), 2 nothing premature in this run
unsafe_run() {
    algo=$1 seed=$2
    dir="$work/rep-$algo-$seed" out="$work/out" st=0
    mkdir -p "$dir"
    TDSHIM_IDLE=test \
        timeout -k 5 "$TMO" "$RUN" --algo "$algo" --notify "tag:$DONE_TAG" --report-dir "$dir" \
        -np 2 "$EX/aggregated_traversal" --done-tag "$DONE_TAG" --linger-ms 2 --seeds 2 --work-us 1 --seed "$seed" \
        >"$out" 2>"$out.err"
    rc=$?
    res=$(grep "^RESULT example=aggregated_traversal" "$out")
    if [ $rc -eq 124 ]; then
        # the program itself may wait for ever for work a premature
        # notification made it drop (aggregated_traversal counts its level's
        # messages): no report to read, so this seed proves nothing; the next
        diag "$algo seed $seed: timed out (the program waited after an early notification?), next seed" \
            "$(grep '^aggregated_traversal' "$out.err" | head -n 3)"
        rm -rf "$dir"
        return 2
    fi
    if [ -z "$res" ]; then
        diag "$algo seed $seed: exit status $rc, no RESULT line" "$(tail -n 6 "$out.err")"
        return 1
    fi
    case $res in
    *" early=0 "*" ok") rm -rf "$dir"; return 2 ;;
    esac
    diag "$algo seed $seed: $(echo "$res" | grep -o 'notifications=[^ ]* stray=[^ ]*') $(echo "$res" | grep -o 'early=[0-9]*')"
    "${PYTHON3:-python3}" - "$dir" 2 "$algo" <<'PY' 
import glob, json, os, sys
parent, n, algo = sys.argv[1], int(sys.argv[2]), sys.argv[3]
runs = glob.glob(os.path.join(parent, "tdshim-report-*"))
if len(runs) != 1:
    print("# %d report directories" % len(runs)); sys.exit(1)
unsafe = []
for r in range(n):
    j = json.load(open(os.path.join(runs[0], "rank-%04d.json" % r)))
    det = j["detection"]
    if sum(det["unsafe_by"].values()) != det["unsafe"]:
        print("# rank %d: unsafe %d but by kind %s" % (r, det["unsafe"], det["unsafe_by"])); sys.exit(1)
    for e in j["episodes"]:
        if e["unsafe"]:
            if not e["unsafe_evidence"] or not e["unsafe_why"]:
                print("# rank %d episode %d: unsafe without evidence" % (r, e["episode"])); sys.exit(1)
            unsafe.append((e["episode"], r, e["unsafe_why"]))
if not unsafe:
    # header-free algorithms see no stamp; a run whose only evidence is the
    # contract violations of the misjudged ranks (warned on stderr, counted
    # by tag) is flagged, though not per episode (README of this test)
    viol = sum(json.load(open(os.path.join(runs[0], "rank-%04d.json" % r)))["detection"]["violations"] for r in range(n))
    if algo in ("skr", "fourcounter") and viol:
        print("# %s: no episode marked unsafe; flagged by %d contract violations" % (algo, viol)); sys.exit(3)
    print("# a premature notification, and no rank's report marks an episode unsafe: Check said ok"); sys.exit(1)
for u in unsafe[:3]:
    print("# episode %d, rank %d: %s" % u)
summary = open(os.path.join(runs[0], "summary.txt")).read()
if "UNSAFE, evidence:" not in summary or "Check looked at:" not in summary:
    print("# summary.txt names no evidence"); sys.exit(1)
PY
    prc=$?
    if [ $prc -eq 3 ]; then
        rm -rf "$dir"
        grep -q "CONTRACT VIOLATIONS" "$out.err"
        return $?
    fi
    [ $prc -eq 0 ] || st=1
    if grep -q "UNSAFE EPISODE" "$out.err"; then
        :
    elif grep -q "killed by SIGTERM\|job has been aborted" "$out.err"; then
        # the program's own check failed on a rank, which exited 1, and
        # mpirun killed the others: rank 0's stderr line can be cut off
        # there (seen once in CI: "... 21 episode(" then rank 1's SIGTERM
        # line). The JSON and summary.txt checked above are the record.
        diag "the job was aborted (a rank's own check failed): its stderr line may be cut, not judged:" \
            "$(grep '^tdshim: '"$algo" "$out.err" | cut -c1-160)"
    else
        diag "the stderr line does not say UNSAFE:" "$(grep '^tdshim: '"$algo" "$out.err")"
        st=1
    fi
    rm -rf "$dir"
    return $st
}

for a in $ALGOS; do
    if ! have_shim; then
        skip "$a: libtdshim not built"
        continue
    fi
    st=2
    for seed in $(seq 1 20); do
        unsafe_run "$a" "$seed"
        st=$?
        [ $st -ne 2 ] && break
    done
    [ $st -eq 2 ] && diag "$a: TDSHIM_IDLE=test was premature in none of 20 runs (the unsound setting was not shown unsound)"
    ok $((st != 0)) "$a: TDSHIM_IDLE=test on aggregated_traversal (the same MPI_Testany busy and idle): the premature notification is UNSAFE with its evidence"
done
