#!/bin/sh
# scripts/tdshim-report on malformed reports: tests/report/malformed.py
# breaks the checked-in fixture-demo run REPORT_FUZZ_CASES ways (200 in
# `make check`, seed REPORT_FUZZ_SEED, 1 by default; `make fuzz-long-report`
# runs 20,000 with a new seed) and asserts one line and exit 1 for each
# malformed case, exit 0 for each valid one, no traceback, no hang, no raw
# control character on the terminal. Needs python3-jsonschema (the oracle).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/report/report_lib.sh"
if [ -z "$PY" ]; then
    plan 4
    for i in 1 2 3 4; do skip "no python3 with jsonschema here (Debian: python3-jsonschema)"; done
    exit 0
fi
# the generator prints the TAP plan and points itself
exec timeout -k 5 "${REPORT_FUZZ_TIMEOUT:-600}" "$PY" "$top_srcdir/tests/report/malformed.py" "$top_srcdir/scripts/tdshim-report" \
    "$top_srcdir/tests/report/fixture-demo" "$WORK" --seed "${REPORT_FUZZ_SEED:-1}" \
    --count "${REPORT_FUZZ_CASES:-200}" --cli-every "${REPORT_FUZZ_CLI_EVERY:-10}"
