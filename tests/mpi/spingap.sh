#!/bin/sh
# TDSHIM_IDLE=spin's long gaps between polls (tests/mpi/spingap.c;
# tds_progress.c, spin_poll): one long gap alone makes a passive rank
# unsure, not busy (a machine's own hiccups make such gaps: an interrupt, a
# hypervisor exit, 20-40 us); a second one before it spins again makes it
# busy again. One rank, measure mode (nothing to notify), 20 rounds of 200
# empty probes with 200 us of work before each of 1 or 2 probes. Points:
# the output is native's; one gap a round: 20 or more unsure, at most 2
# busy_again (two hiccups in a row); two gaps a round: 20 or more
# busy_again. Before 2026-12-05 one gap made the rank busy again (20
# busy_again with one gap a round: the first of those fails).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
plan 5
native=$(run_mpi 1 -- "$B/spingap" 1 20 200 2>"$TMPD/native.err")
rc=$?
[ $rc -eq 0 ] && [ "$native" = "spingap gaps=1 rounds=20 probes=4220 found=0" ]
ok $? "native: exit 0, $native"
# run GAPS: the program under spin; prints "UNSURE BUSY_AGAIN" from its report
run() {
    rm -rf "$TMPD/rep" && mkdir -p "$TMPD/rep"
    out=$(run_mpi 1 LD_PRELOAD="$LIB" TDSHIM_IDLE=spin TDSHIM_NOTIFY=none TDSHIM_REPORT=json \
        TDSHIM_REPORT_DIR="$TMPD/rep" -- "$B/spingap" "$1" 20 200 2>"$TMPD/err$1")
    rc=$?
    [ $rc -eq 0 ] && [ "$out" = "spingap gaps=$1 rounds=20 probes=$((4200 + 20 * $1)) found=0" ] || return 1
    "${PYTHON3:-python3}" -c '
import glob, json, sys
f = glob.glob(sys.argv[1] + "/tdshim-report-*/rank-0000.json")[0]
d = json.load(open(f))["detection"]
print(d["spin_unsure"], d["busy_again"])' "$TMPD/rep"
}
v=$(run 1)
ok $? "spin, one gap a round: exit 0, output as native's, a report (${v:-none})"
set -- $v
[ "${1:-0}" -ge 20 ] && [ "${2:-99}" -le 2 ]
ok $? "one gap a round: unsure ${1:-?} times (>= 20), busy again ${2:-?} (<= 2)"
v=$(run 2)
ok $? "spin, two gaps a round: exit 0, output as native's, a report (${v:-none})"
set -- $v
[ "${2:-0}" -ge 20 ]
ok $? "two gaps a round: busy again ${2:-?} times (>= 20), unsure ${1:-?}"
done_testing
