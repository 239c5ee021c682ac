#!/bin/sh
# A signalled rank dies of the signal (issue 26): tdshim's SIGTERM handler
# is async-signal-safe, so a rank signalled inside malloc, inside MPI or
# inside tdshim (tests/mpi/sigprog loop: half the ranks allocate, half
# ping-pong) writes its partial report and dies within a second, with the
# exit status a native rank has (143). The handler it replaced called
# malloc and stdio and could block for ever on a lock the signal
# interrupted (both ranks outlived mpirun in 4 of 10 tries).
# SIG_SIZES sets the jobs' sizes (default 12 jobs of 4 ranks: 48 signals;
# make check-long-signals: 25 jobs, 100 signals; small jobs, because on an oversubscribed node the old handler's deadlock
# was seen far less often).
# A forked child of a rank (fork, system, popen) killed by SIGTERM dies of
# it without a report or a word, and the job still exits 0 (sigprog fork).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
# mpirun must not SIGKILL a rank that is still in its handler: what is
# measured is the rank's own death, 1 s after the signal (mpirun kills 2 s
# after its own SIGTERM, which follows the first death)
export OMPI_MCA_odls_base_sigkill_timeout=2
plan 6
sizes=${SIG_SIZES:-4 4 4 4 4 4 4 4 4 4 4 4}
signals=0 survivors=0 wrong=0 reports=0 said=0 runs=0
for n in $sizes; do
    runs=$((runs + 1))
    R="$TMPD/run$runs"
    mkdir -p "$R/pids" "$R/st" "$R/rep"
    # each rank's wait status, seen by the shell that started it (which
    # outlives the launcher's own SIGTERM to say it: a caught signal, reset
    # to the default in the rank)
    run_mpi "$n" LD_PRELOAD="$LIB" TDSHIM_REPORT_DIR="$R/rep" -- \
        sh -c 'trap : TERM; "$0" "$@"; echo $? >"'"$R"'/st/st.${OMPI_COMM_WORLD_RANK:-$PMI_RANK}"' \
        "$B/sigprog" loop "$R/pids" 60 \
        >"$R/out" 2>"$R/err" &
    m=$!
    k=0
    while [ "$(ls "$R/pids" | wc -l)" -lt "$n" ] && [ $k -lt 300 ]; do sleep 0.1; k=$((k + 1)); done
    # a little while into the loops, every rank at once, as a batch system does
    sleep "0.$((3 + runs % 5))"
    pids=$(cat "$R"/pids/pid.* 2>/dev/null)
    # shellcheck disable=SC2086
    kill -TERM $pids 2>/dev/null
    signals=$((signals + $(echo $pids | wc -w)))
    sleep 1
    for p in $pids; do
        # alive: not gone and not a zombie (dead, its shell not yet scheduled to reap it)
        state=$(sed -n 's/^[0-9]* (.*) \([A-Z]\).*/\1/p' /proc/"$p"/stat 2>/dev/null)
        if [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]; then
            survivors=$((survivors + 1))
            diag "run $runs: pid $p alive (state $state) 1 s after SIGTERM: $(cat /proc/"$p"/wchan 2>/dev/null)"
            kill -KILL "$p" 2>/dev/null
        fi
    done
    wait $m
    for f in "$R"/st/st.*; do
        [ "$(cat "$f")" = 143 ] || { wrong=$((wrong + 1)); diag "run $runs: $(basename "$f") exit status $(cat "$f")"; }
    done
    missing=$((n - $(ls "$R/st" | wc -l)))
    [ "$missing" -eq 0 ] || diag "run $runs: $missing ranks' exit status not known"
    # hydra SIGKILLs the other ranks' shells as soon as one rank dies (and
    # may kill a rank still in its handler: tests/mpi/hang.sh): there only
    # the statuses and reports that exist are judged
    [ "$MPI_FLAVOUR" = hydra ] || wrong=$((wrong + missing))
    reports=$((reports + $(find "$R/rep" -path '*-partial-*' -name 'rank-*.json' | wc -l)))
    said=$((said + $(grep -c '^tdshim: rank [0-9]*: killed by SIGTERM (episode .*); partial report written: ' "$R/err")))
    grep '^tdshim: rank' "$R/err" | grep -v 'partial report written' | head -n 3 | while read -r l; do diag "run $runs: $l"; done
done
want=0
for n in $sizes; do want=$((want + n)); done
ok $([ "$signals" -ge "$want" ]; echo $?) "$signals SIGTERMs delivered into $runs jobs (ranks in malloc, MPI_Sendrecv, tdshim)"
ok $([ "$survivors" -eq 0 ]; echo $?) "no rank alive 1 s after its signal ($survivors survivors)"
ok $([ "$wrong" -eq 0 ]; echo $?) "every rank died of SIGTERM (exit status 143 as native; $wrong not)"
# (under hydra: at least one per job, and its output of a killed rank may be lost)
if [ "$MPI_FLAVOUR" = hydra ]; then full=$runs lines=$runs; else full=$signals lines=$reports; fi
ok $([ "$reports" -ge "$full" ] && [ "$reports" -le "$signals" ] && [ "$said" -ge "$lines" ] && [ "$said" -le "$reports" ]
    echo $?) \
    "every rank wrote its partial report and said so ($reports reports, $said lines, of $signals)"
python3 - "$top_srcdir/shim/report/schema.json" "$TMPD"/run*/rep/*-partial-*/rank-*.json <<'PY' >"$TMPD/schema.out" 2>&1
import json, sys
try:
    import jsonschema
except ImportError:
    jsonschema = None
schema = json.load(open(sys.argv[1]))
for f in sys.argv[2:]:
    d = json.load(open(f))
    if jsonschema:
        jsonschema.validate(d, schema)
    assert d["partial"]["reason"] == "SIGTERM", f
PY
st=$?
[ $st -eq 0 ] || diag "$(tail -n 3 "$TMPD/schema.out")"
ok $st "the partial reports are valid JSON (and against schema.json)"

# fork, system, popen
mkdir -p "$TMPD/fork"
run_mpi 2 LD_PRELOAD="$LIB" TDSHIM_REPORT_DIR="$TMPD/fork" -- "$B/sigprog" fork >"$TMPD/fork.out" 2>"$TMPD/fork.err"
st=$?
n=$(grep -c 'died of SIGTERM' "$TMPD/fork.out")
[ $st -eq 0 ] && [ "$n" -eq 3 ] && ! grep -q 'killed by' "$TMPD/fork.err" &&
    [ -z "$(find "$TMPD/fork" -name '*-partial-*')" ] && [ "$(grep -c '^tdshim: report in' "$TMPD/fork.err")" -eq 1 ]
st=$?
[ $st -eq 0 ] || diag "$(cat "$TMPD/fork.out" "$TMPD/fork.err" | head -n 12)"
ok $st "children of a rank killed by SIGTERM (fork, system, popen: $n of 3) die of it without a report or a word; the job exits 0 with one report"
done_testing
