#!/bin/sh
# scripts/tdshim-run: --help, --version, option errors (one clear line, exit
# status 2), what it hands to mpirun (--dry-run: LD_PRELOAD and every
# TDSHIM_* forwarded with -x, --oversubscribe only when -np exceeds the
# cores), the exit status of the program passed through, a run directory
# of its own for each run (two at once, CDPATH exported), and a real run
# under the shim that says where the report is.
. "$top_srcdir/tests/mpi/test-examples-lib.sh"

plan 26
R=$RUN

"$R" --help >"$work/o" 2>&1
ok $? "--help exits 0"
grep -q '^usage: tdshim-run' "$work/o" && grep -q -- '--notify N' "$work/o"
ok $? "--help shows the usage and the options"
"$R" --version | grep -q '^tdshim-run (tdshim) [0-9]'
ok $? "--version"

# expect_error DESC PATTERN ARGS...: exit status 2 and one line naming the problem
expect_error() {
    local desc=$1 pat=$2 rc
    shift 2
    "$R" "$@" >"$work/o" 2>&1
    rc=$?
    [ $rc -eq 2 ] && [ "$(wc -l <"$work/o")" -eq 1 ] && grep -q -- "^tdshim-run: .*$pat" "$work/o"
    local st=$?
    [ $st -eq 0 ] || diag "exit $rc:" "$(cat "$work/o")"
    ok $st "$desc"
}
expect_error "no program" "no program to run" --notify none
expect_error "--algo without a value" "--algo needs a value" --algo
expect_error "bad --notify value" "--notify tag:x" --notify tag:x ./a.out
expect_error "unknown --notify kind" "--notify sometimes" --notify sometimes ./a.out
expect_error "--notify with a leading zero (tdshim reads plain decimals)" "--notify tag:07" --notify tag:07 ./a.out
expect_error "--lib that does not exist" "no such file" --lib "$work/nope.so" -np 1 true
L="$work/fake.so"
: >"$L"
expect_error "--report-dir that cannot be created" "cannot create" --lib "$L" --report-dir /proc/tdshim/x -np 1 true
# the dry runs below speak to Open MPI's mpirun: a stand-in that answers
# --version as it does (the tests may be configured for another launcher,
# e.g. MPICH's hydra through MPIRUN, whose forwarding is checked further down)
mkdir -p "$work/ompi"
printf '#!/bin/sh\n[ "$1" = --version ] && { echo "mpirun (Open MPI) 4.1.4"; exit 0; }\necho "mpirun $*"\n' \
    >"$work/ompi/mpirun"
chmod +x "$work/ompi/mpirun"
RO() { PATH="$work/ompi:$PATH" MPIRUN=mpirun "$R" "$@"; }
TDSHIM_CALLSITES=5 RO --lib "$L" --algo skr --notify tag:7 --report-dir "$work/r" --dry-run -np 1 ./app --x 1 >"$work/o" 2>&1
ok $? "--dry-run exits 0"
line=$(cat "$work/o")
case $line in *"-x LD_PRELOAD=$L -x TDSHIM_ALGO -x TDSHIM_CALLSITES -x TDSHIM_NOTIFY -x TDSHIM_REPORT_DIR -np 1 ./app --x 1") st=0 ;; *) st=1 ;; esac
[ $st -eq 0 ] || diag "$line"
ok $st "LD_PRELOAD (ranks only) and every TDSHIM_* (options and environment) forwarded with -x, program args kept"
case $line in "TDSHIM_ALGO=skr TDSHIM_CALLSITES=5 TDSHIM_NOTIFY=tag:7 TDSHIM_REPORT_DIR=$work/r/tdshim-run-"[0-9]*" "*"mpirun -x LD_PRELOAD="*) st=0 ;; *) st=1 ;; esac
[ $st -eq 0 ] || diag "$line"
ok $st "the values set by --algo, --notify, --report-dir (a run directory in it) and the environment; mpirun itself not preloaded"
case $line in *--oversubscribe*) st=1 ;; *) st=0 ;; esac
ok $st "no --oversubscribe for -np 1"
big=$(( $(nproc) + 1 ))
RO --lib "$L" --dry-run -np $big ./app 2>&1 | grep -q -- "--oversubscribe .*-np $big"
ok $? "--oversubscribe added for -np $big > nproc"
# the program's own options are the program's (issue: "-c" read as a count)
line=$(RO --lib "$L" --dry-run -np 2 ./app -c 3 -i 20 2>&1)
case $line in *"mpirun -x LD_PRELOAD=$L -x TDSHIM_REPORT_DIR -np 2 ./app -c 3 -i 20") st=0 ;; *) st=1 ;; esac
[ $st -eq 0 ] || diag "$line"
ok $st "the program's arguments (-c 3 -i 20) are left to it: no --oversubscribe from its -c"
line=$(RO --lib "$L" --dry-run mpirun -np $big --oversubscribe ./app -np 1 2>&1)
case $line in *"mpirun -x LD_PRELOAD=$L -x TDSHIM_REPORT_DIR -np $big --oversubscribe ./app -np 1") st=0 ;; *) st=1 ;; esac
[ $st -eq 0 ] || diag "$line"
ok $st "drop-in before mpirun: the launcher's --oversubscribe is not doubled, the program's -np is its own"
# drop-in before srun (a stand-in srun that prints what it got)
mkdir -p "$work/bin"
printf '#!/bin/sh\necho "srun $*"\nenv | grep -E "^(TDSHIM_|LD_PRELOAD)" | sort\n' >"$work/bin/srun"
chmod +x "$work/bin/srun"
PATH="$work/bin:$PATH" "$R" --lib "$L" --algo skr --report-dir "$work/rs" srun -n 8 ./app -c 3 >"$work/o" 2>&1
grep -qx "srun --export=ALL,LD_PRELOAD=$L -n 8 ./app -c 3" "$work/o" && grep -qx "TDSHIM_ALGO=skr" "$work/o" &&
    ! grep -q '^LD_PRELOAD=' "$work/o"
st=$?
[ $st -eq 0 ] || diag "$(cat "$work/o")"
ok $st "drop-in before srun: LD_PRELOAD for the tasks only (--export=ALL,...), TDSHIM_* in the environment"
# drop-in before MPICH's hydra (a stand-in that answers --version as hydra does)
printf '#!/bin/sh
[ "$1" = --version ] && { echo "HYDRA build details:"; exit 0; }
echo "mpiexec.hydra $*"
env | grep -E "^LD_PRELOAD" | sort
' >"$work/bin/mpiexec.hydra"
chmod +x "$work/bin/mpiexec.hydra"
PATH="$work/bin:$PATH" "$R" --lib "$L" --algo skr --report-dir "$work/rh" mpiexec.hydra -n 8 ./app -c 3 >"$work/o" 2>&1
line=$(grep '^mpiexec.hydra ' "$work/o")
case $line in "mpiexec.hydra -genv LD_PRELOAD $L -envlist "*TDSHIM_ALGO*" -n 8 ./app -c 3") st=0 ;; *) st=1 ;; esac
case $line in *-envlist*TDSHIM_REPORT_DIR*) ;; *) st=1 ;; esac
grep -q '^LD_PRELOAD=' "$work/o" && st=1
[ $st -eq 0 ] || diag "$(cat "$work/o")"
ok $st "drop-in before mpiexec.hydra: -genv LD_PRELOAD for the ranks only, TDSHIM_* with -envlist"
# each run its own directory: a stand-in Open MPI mpirun that makes the
# report directory as tdshim's rank 0 does (tdshim-report-STAMP, then -2,
# -3 ... when taken) a second after it starts, with one STAMP for all
mkdir -p "$work/ompiw"
printf '#!/bin/sh
[ "$1" = --version ] && { echo "mpirun (Open MPI) 4.1.4"; exit 0; }
sleep 1
d=$TDSHIM_REPORT_DIR/tdshim-report-X n=1
until mkdir "$d" 2>/dev/null; do [ $n -lt 9 ] || exit 1; n=$((n + 1)); d=$TDSHIM_REPORT_DIR/tdshim-report-X-$n; done
echo "$TDSHIM_REPORT_DIR"
sleep 1
' >"$work/ompiw/mpirun"
chmod +x "$work/ompiw/mpirun"
RW() { PATH="$work/ompiw:$PATH" MPIRUN=mpirun timeout 30 "$R" "$@"; }
RW --lib "$L" --report-dir "$work/two" -np 1 ./app >"$work/o1" 2>"$work/e1" &
RW --lib "$L" --report-dir "$work/two" -np 1 ./app >"$work/o2" 2>"$work/e2"
wait
d1=$(sed -n 's/^tdshim-run: report in //p' "$work/e1")
d2=$(sed -n 's/^tdshim-run: report in //p' "$work/e2")
[ "$(printf '%s\n' "$d1" | wc -l)" -eq 1 ] && [ "$(printf '%s\n' "$d2" | wc -l)" -eq 1 ] && [ -n "$d1" ] &&
    [ -n "$d2" ] && [ "$d1" != "$d2" ] && [ "$(dirname "$d1")" = "$work/two" ] &&
    [ "$(dirname "$d2")" = "$work/two" ] && [ -d "$d1" ] && [ -d "$d2" ] &&
    [ "$(cat "$work/o1")" != "$(cat "$work/o2")" ] && ! [ -e "$(cat "$work/o1")" ] && ! [ -e "$(cat "$work/o2")" ]
st=$?
[ $st -eq 0 ] || diag "run 1:" "$(cat "$work/o1" "$work/e1")" "run 2:" "$(cat "$work/o2" "$work/e2")"
ok $st "two runs started together: each wrote into a run directory of its own, then names one report, its own, moved into --report-dir"
# CDPATH exported: a relative --report-dir is still the one in the working
# directory (cd would have followed CDPATH to the decoy and printed it)
mkdir -p "$work/decoy/rel" "$work/cwd"
(cd "$work/cwd" && export CDPATH="$work/decoy" && RW --lib "$L" --report-dir rel -np 1 ./app >"$work/o" 2>"$work/e")
d=$(sed -n 's/^tdshim-run: report in //p' "$work/e")
case $d in "$work/cwd/rel/tdshim-report-X"*) st=0 ;; *) st=1 ;; esac
case $(cat "$work/o") in "$work/cwd/rel/tdshim-run-"*) ;; *) st=1 ;; esac
[ -z "$(ls "$work/decoy/rel")" ] || st=1
[ $st -eq 0 ] || diag "$(cat "$work/o" "$work/e")"
ok $st "CDPATH exported: a relative --report-dir is the working directory's"
# no report (the program never reached MPI_Finalize): no empty run directory left
mkdir -p "$work/none" "$work/fail"
printf '#!/bin/sh\n[ "$1" = --version ] && { echo "mpirun (Open MPI) 4.1.4"; exit 0; }\nexit 3\n' >"$work/fail/mpirun"
chmod +x "$work/fail/mpirun"
PATH="$work/fail:$PATH" MPIRUN=mpirun "$R" --lib "$L" --report-dir "$work/none" -np 1 ./app 2>"$work/e"
rc=$?
[ $rc -eq 3 ] && grep -qx "tdshim-run: no report was written under $work/none" "$work/e" && [ -z "$(ls "$work/none")" ]
ok $? "no report written: said so, exit status passed through, no empty run directory left"

"$R" --native --dry-run -np 2 ./app 2>&1 | grep -q -e LD_PRELOAD -e TDSHIM_REPORT_DIR
[ $? -ne 0 ]
ok $? "--native preloads nothing and sets up no report"

"$R" --native -np 2 "$EX/five_cycle" --native-stop --work-us 100 >"$work/o" 2>"$work/e" &&
    grep -q '^RESULT example=five_cycle ranks=2 .* ok$' "$work/o"
ok $? "--native runs the program (exit 0, RESULT ok)"
"$R" --native -np 2 "$EX/five_cycle" --native-stop --expect-notify 1 >"$work/o" 2>&1
[ $? -ne 0 ]
ok $? "a failing program's exit status is passed through"

if have_shim; then
    (cd "$work" && timeout -k 5 "$TMO" "$R" --notify tag:999 --report-dir rep -np 2 \
        "$EX/five_cycle" --work-us 100 >"$work/o" 2>"$work/e")
    rc=$?
    d=$(sed -n 's/^tdshim-run: report in //p' "$work/e")
    [ $rc -eq 0 ] && grep -q '^RESULT .* ok$' "$work/o" && [ "$(dirname "$d")" = "$work/rep" ] &&
        [ -f "$d/rank-0000.json" ] && [ -f "$d/rank-0001.json" ] && [ "$(stat -c %a "$d")" = 700 ] &&
        [ -z "$(ls -d "$work/rep"/tdshim-run-* 2>/dev/null)" ]
    st=$?
    [ $st -eq 0 ] || diag "exit $rc:" "$(tail -n 3 "$work/o")" "$(tail -n 10 "$work/e")"
    ok $st "a run under the shim names the new report directory (absolute, 0700, moved up into --report-dir, no run directory left) and it holds every rank's report"
else
    ok 1 "run under the shim: $SHIMLIB not built"
fi
done_testing
