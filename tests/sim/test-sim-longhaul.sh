#!/bin/sh
# Long-haul runs: primaries in transit for so long that the algorithms run
# thousands of waves before quiescence. For bcj this wraps the one-byte
# modular sweep stamp (bcj.c, td_bcj_stamp) many times over while messages
# stamped hundreds of sweeps earlier are still arriving: zero violations, and
# the runs really do pass 256 waves (else the test proves nothing).
. "$top_srcdir/tests/tap.sh"
SIM="$top_builddir/tests/sim/tdsim-test"
plan 4
for w in skrC spawn; do
    out=$("$SIM" --algo bcj --workload "$w" --ranks 2-8 --pdelay const:300 --cdelay uniform:0.1:1 \
          --schedules 200 --seed 3 2>&1)
    st=$?
    v=$(printf '%s\n' "$out" | sed -n 's/^summary .* violations=\([0-9]*\).*/\1/p')
    waves=$(printf '%s\n' "$out" | sed -n 's/^summary .* waves=\([0-9.]*\).*/\1/p')
    ok $([ $st -eq 0 ] && [ "$v" = 0 ]; echo $?) "bcj $w, primaries delayed 300x: no violation (exit $st)"
    ok $(awk -v w="${waves:-0}" 'BEGIN { exit !(w > 256) }'; echo $?) "bcj $w long haul ran $waves waves per run (> 256: the stamp wrapped)"
done
done_testing
