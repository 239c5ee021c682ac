#!/bin/sh
# Every check must be able to fail: the mutants of tests/mutants/mutants.ini
# (make check-long-mutants). Each is a small bug put into a copy of the
# library's source on a path a test is meant to guard; the test, run by
# `make check` in a build of that copy, must fail on it.
#   1. make distdir gives a clean copy of the source, configured as this
#      build was (config.status --config) and built once (all and the
#      check programs);
#   2. control: each test named in the catalogue passes on the unmutated
#      copy, with the catalogue's settings (so a failure below is the
#      mutant's);
#   3. each mutant: its text found where the catalogue says and the copy
#      rebuilt with it (one point), then its test fails (one point; the
#      test's failing lines are shown; a mutant that does not build fails
#      both, its test not run), then the source restored.
# MUTANTS="NAME..." runs those alone; MUTANTS_KEEP=1 keeps the work
# directory (its path is printed).
. "$top_srcdir/tests/tap.sh"
# the makes below are the copy's own, not sub-makes of the one running this
unset MAKEFLAGS MFLAGS MAKELEVEL
M="$top_srcdir/tests/mutants"
CAT="$M/mutants.ini"
PY=${PYTHON3:-python3}
if ! list=$("$PY" "$M/mutate.py" "$CAT" list); then
    plan 1
    ok 1 "the catalogue parses"
    done_testing
fi
if [ -n "${MUTANTS:-}" ]; then
    list=$(printf '%s\n' "$list" | while IFS='	' read -r n t; do
        for w in $MUTANTS; do [ "$w" = "$n" ] && printf '%s\t%s\n' "$n" "$t"; done
    done)
fi
nm=$(printf '%s\n' "$list" | grep -c .)
if [ "$nm" -eq 0 ]; then
    plan 1
    ok 1 "the catalogue names a mutant of MUTANTS='${MUTANTS:-}'"
    done_testing
fi
tests=$(printf '%s\n' "$list" | cut -f2 | sort -u)
nt=$(printf '%s\n' "$tests" | grep -c .)
plan $((1 + nt + 2 * nm))

work=$(mktemp -d "${TMPDIR:-/tmp}/tdshim-mutants.XXXXXX") || exit 1
if [ "${MUTANTS_KEEP:-0}" = 1 ]; then diag "work directory: $work"; else trap 'rm -rf "$work"' EXIT; fi
src="$work/src" b="$work/build"
mkdir -p "$b"
t0=$(date +%s)
# build: the copy's library, examples, scripts and the check programs
# (stdin: none; the loops below read their lists from it)
build() { make -j2 all >"$work/build.log" 2>&1 </dev/null && make -j2 check TESTS= >>"$work/build.log" 2>&1 </dev/null; }
(
    set -e
    make -C "$top_builddir" distdir distdir="$src" >"$work/distdir.log" 2>&1
    eval "set -- $("$top_builddir/config.status" --config)"
    cd "$b"
    "$src/configure" -q "$@" >"$work/configure.log" 2>&1
    build
)
ok $? "a clean copy of the source configured and built as this build ($(($(date +%s) - t0)) s)"

# runtest "TEST [VAR=value...]": the test through the copy's make check;
# its status, the test's log in $work/last.log
runtest() {
    # shellcheck disable=SC2086 # the test and its settings, words
    set -- $1
    rt_t=$1
    shift
    rm -f "$b/${rt_t%.sh}.log"
    (cd "$b" && env "$@" make check TESTS="$rt_t" >"$work/check.log" 2>&1 </dev/null)
    rt_rc=$?
    cp "$b/${rt_t%.sh}.log" "$work/last.log" 2>/dev/null || cp "$work/check.log" "$work/last.log"
    return $rt_rc
}

printf '%s\n' "$tests" | {
    while read -r t; do
        ts=$(date +%s)
        runtest "$t"
        rc=$?
        ok $rc "control: $t passes on the unmutated copy ($(($(date +%s) - ts)) s)"
        [ $rc -eq 0 ] || diag "$(grep -E '^(not ok|ERROR|FAIL)' "$work/last.log" | head -n 5)"
    done
    echo "$tap_n $tap_failed" >"$work/tap"
}
read -r tap_n tap_failed <"$work/tap"

# field KEY: the catalogue's KEY of mutant $name, on one line
field() {
    "$PY" -c 'import configparser,sys; c=configparser.ConfigParser(interpolation=None); c.read(sys.argv[1]); print(" ".join(c[sys.argv[2]][sys.argv[3]].split()))' "$CAT" "$name" "$1"
}
printf '%s\n' "$list" | {
    while IFS='	' read -r name t; do
        ts=$(date +%s)
        if ! err=$("$PY" "$M/mutate.py" "$CAT" apply "$name" "$src" 2>&1); then
            ok 1 "$name: applies ($err)"
            ok 1 "$name: caught by $t (not run)"
            continue
        fi
        (cd "$b" && build)
        built=$?
        ok $built "$name: applies and builds ($(($(date +%s) - ts)) s)"
        if [ $built -ne 0 ]; then # its test would fail for that alone
            diag "$(grep -E 'error' "$work/build.log" | head -n 3 | cut -c1-200)"
            ok 1 "$name: caught by $t (not run: the mutant does not build)"
            "$PY" "$M/mutate.py" "$CAT" restore "$name" "$src"
            continue
        fi
        ts=$(date +%s)
        runtest "$t"
        rc=$?
        [ $rc -ne 0 ]
        ok $? "$name: caught by $t ($(($(date +%s) - ts)) s)"
        if [ $rc -ne 0 ]; then
            diag "$(grep -E '^not ok' "$work/last.log" | head -n 3 | cut -c1-200)"
        else
            diag "$(field why)"
        fi
        "$PY" "$M/mutate.py" "$CAT" restore "$name" "$src"
    done
    echo "$tap_n $tap_failed" >"$work/tap"
}
read -r tap_n tap_failed <"$work/tap"
done_testing
