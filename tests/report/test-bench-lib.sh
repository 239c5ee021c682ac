#!/bin/sh
# bench/run's shared module without MPI: tests/report/bench_lib.py (the
# reports read through tdshim-report's loader, the episodes' latencies, the
# rotation of sides, the RESULTS markers).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/report/report_lib.sh"
exec python3 "$top_srcdir/tests/report/bench_lib.py" "$top_srcdir" "$top_srcdir/tests/report/fixture-demo" "$WORK"
