#!/bin/sh
# Diagnosable hangs (README, "Diagnosing a hang"): tests/mpi/stuck never
# ends by itself (ranks 0 and 1 poll, rank 2 computes without MPI).
#  - TDSHIM_VERBOSE=1: rank 0 prints a progress line about once a second
#    while the episode is pending, naming what it waits for (bcj: one of its
#    two children has not answered); without TDSHIM_VERBOSE, no such line;
#  - killed by SIGTERM as a batch system kills a job (every rank signalled),
#    each rank writes its partial JSON report (schema-valid, "partial" set,
#    the busy rank says it was active), says so on stderr, and dies of the
#    signal;
#  - a program with its own SIGTERM handler keeps it: no partial report.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
# when a rank dies, mpirun SIGTERMs the others and SIGKILLs them 1 s later;
# a loaded CI box may not schedule a signalled rank within 1 s. Open MPI 4.1
# sleeps the whole timeout before its SIGKILL even when every rank is gone
# (twice per job here: 18 s a run at 10 s, 4.5 s at 3 s), so 4 s
export OMPI_MCA_odls_base_sigkill_timeout=4

# run ENV... : stuck at 3 ranks, ranks killed with SIGTERM 3.2 s after they are all running
run_killed() {
    rm -rf "$TMPD/rep" "$TMPD/pids" && mkdir -p "$TMPD/rep" "$TMPD/pids"
    run_mpi 3 LD_PRELOAD="$LIB" TDSHIM_REPORT_DIR="$TMPD/rep" STUCK_PIDDIR="$TMPD/pids" "$@" -- "$B/stuck" 30 $own \
        >"$TMPD/out" 2>"$TMPD/err" &
    m=$!
    # every rank past MPI_Init (a loaded CI box may be slow to start), then 3.2 s
    k=0
    while [ "$(ls "$TMPD/pids" | wc -l)" -lt 3 ] && [ $k -lt 200 ]; do sleep 0.1; k=$((k + 1)); done
    sleep 3.2
    # the busy rank first, and the others once it has written its report (or
    # after 5 s): when a rank dies, mpirun kills the rest itself (SIGTERM,
    # then SIGKILL 1 s later), and on a loaded box a rank signalled last
    # might not have run its handler by then
    # (hydra kills the others at once when one rank dies: there every rank
    # is signalled together, as a batch system does)
    if [ "$MPI_FLAVOUR" = hydra ]; then
        for f in "$TMPD"/pids/pid.*; do [ -f "$f" ] && kill -TERM "$(cat "$f")" 2>/dev/null; done
    else
        kill -TERM "$(cat "$TMPD/pids/pid.2")" 2>/dev/null
    fi
    k=0
    while [ -z "$(find "$TMPD/rep" -name rank-0002.json 2>/dev/null)" ] && [ $k -lt 50 ]; do
        sleep 0.1
        k=$((k + 1))
    done
    for f in "$TMPD"/pids/pid.*; do [ -f "$f" ] && kill -TERM "$(cat "$f")" 2>/dev/null; done
    wait $m
    echo $? >"$TMPD/rc"
}

plan 11
# ranks_ok N: N ranks did what every rank must. Under MPICH's hydra, when
# one rank dies the launcher SIGKILLs the others at once, so a rank may be
# killed before its handler runs: there at least one rank must have, and
# each that did is checked all the same
ranks_ok() {
    if [ "$MPI_FLAVOUR" = hydra ]; then [ "$1" -ge 1 ]; else [ "$1" -eq 3 ]; fi
}
own=
run_killed TDSHIM_VERBOSE=1
lines=$(grep -c '^tdshim: rank 0: \[[0-9.]* s\] episode 1: passive.*bcj: sweep [0-9]*, 1 of 2 answered (children 1-2)' "$TMPD/err")
[ "$lines" -ge 2 ] && [ "$lines" -le 5 ]
ok $? "TDSHIM_VERBOSE=1: $lines progress lines at rank 0 in about 3.5 s, each naming the unanswered child pair"
! grep -q '^tdshim: rank [12]: \[' "$TMPD/err"
ok $? "TDSHIM_VERBOSE=1: only rank 0 prints progress lines"
nk=$(grep -c '^tdshim: rank [0-2]: killed by SIGTERM (episode 1: .*); partial report written: ' "$TMPD/err")
ranks_ok "$nk"
ok $? "every rank says it was killed, with its detection state and its report's name ($nk)"
grep -q '^tdshim: rank 2: killed by SIGTERM (episode 1: active' "$TMPD/err" ||
    { [ "$MPI_FLAVOUR" = hydra ] && ! grep -q '^tdshim: rank 2: killed' "$TMPD/err"; }
ok $? "the busy rank says it was active"
[ "$(cat "$TMPD/rc")" -ne 0 ]
ok $? "the job still ends as killed (mpirun status $(cat "$TMPD/rc"))"
n=$(find "$TMPD/rep" -path '*tdshim-report-*-partial-*' -name 'rank-*.json' | wc -l)
ranks_ok "$n" && [ "$n" -eq "$nk" ]
ok $? "three partial JSON reports in one directory (found $n)"
python3 - "$top_srcdir/shim/report/schema.json" "$TMPD"/rep/tdshim-report-*-partial-*/rank-*.json <<'PY'
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
for f in sys.argv[2:]:
    d = json.load(open(f))
    jsonschema.validate(d, schema)
    assert d["partial"]["reason"] == "SIGTERM", f
    assert d["partial"]["detection_state"].startswith("episode 1: "), d["partial"]
    assert d["wall_s"] > 3.0, d["wall_s"]
PY
ok $? "the partial reports are valid against schema.json, marked SIGTERM, with the detection state and the wall time"
python3 "$top_srcdir/scripts/tdshim-report" --no-plots "$TMPD"/rep/tdshim-report-*-partial-* 2>&1 | grep -q "^@ PARTIAL   : $n of $n reports written by a killed rank (SIGTERM)"
ok $? "tdshim-report reads the partial directory and says the reports are partial"
run_killed TDSHIM_VERBOSE=0
! grep -q '^tdshim: rank 0: \[' "$TMPD/err"
ok $? "without TDSHIM_VERBOSE no progress line"
own=own
run_killed TDSHIM_VERBOSE=0
ranks_ok "$(grep -c 'own SIGTERM handler' "$TMPD/out")"
ok $? "a program's own SIGTERM handler runs in every rank"
! grep -q 'killed by' "$TMPD/err" && [ -z "$(find "$TMPD/rep" -name '*.json')" ]
ok $? "and tdshim writes no partial report then"
done_testing
