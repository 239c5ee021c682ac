# TAP helpers for shell tests. Source it: . "$top_srcdir/tests/tap.sh"
# plan N; ok COND-EXIT-STATUS "description"; diag "text"; done_testing
tap_n=0
tap_failed=0
plan() { echo "1..$1"; }
ok() { # ok STATUS DESCRIPTION
    tap_n=$((tap_n + 1))
    if [ "$1" -eq 0 ]; then echo "ok $tap_n - $2"; else echo "not ok $tap_n - $2"; tap_failed=$((tap_failed + 1)); fi
}
skip() { tap_n=$((tap_n + 1)); echo "ok $tap_n # SKIP $1"; }
diag() { printf '%s\n' "$@" | sed 's/^/# /'; }
done_testing() { [ "$tap_failed" -eq 0 ]; exit $?; }
