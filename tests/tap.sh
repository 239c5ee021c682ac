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
# on_supported: the platform where every point must run, Debian 12 as root
# (the CI machine; scripts/check fails there on any skip not listed in
# tests/skips-allowed.txt)
on_supported() { [ "$(id -u)" = 0 ] && grep -q '^12\.' /etc/debian_version 2>/dev/null; }
# must_run REASON: a point that cannot run here: a failure on the supported
# platform, a skip elsewhere
must_run() { if on_supported; then ok 1 "$1 (cannot skip on Debian 12 as root)"; else skip "$1"; fi; }
