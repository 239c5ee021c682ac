#!/bin/sh
# The man pages (issue 30; docs/local.mk, docs/gen-man.py): each built page
# renders with groff -ww without a warning and man -l shows it; tdshim-run(1)
# and tdshim-report(1) carry every option their --help lists right now, and
# tdshim(7) every variable of shim/mpi/tds_env.h with its default and every
# algorithm the core lists; gen-man.py refuses a variable without its
# TDS_ENV_MAN line.
: "${top_srcdir:?run through make check}" "${top_builddir:?run through make check}"
. "$top_srcdir/tests/tap.sh"
PY="${PYTHON3:-python3}"
M="$top_builddir/docs"
if [ ! -f "$M/tdshim.7" ]; then
    echo "1..0 # SKIP no man pages in this build (configured without MPI)"
    exit 0
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/tdshim-man.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
plan 11

# render PAGE: the page as text (man -l where man-db is there, else groff)
render() {
    if command -v man >/dev/null 2>&1; then
        MANWIDTH=200 man -l "$1" 2>/dev/null
    else
        groff -man -Tutf8 -rLL=200n "$1" 2>/dev/null
    fi | sed 's/.\x08//g' | expand
}
for p in tdshim-run.1 tdshim-report.1 tdshim.7; do
    if command -v groff >/dev/null 2>&1; then
        w=$(groff -man -Tutf8 -ww -z "$M/$p" 2>&1)
        [ -z "$w" ]
        st=$?
        [ $st -eq 0 ] || diag "$w"
        ok $st "$p renders without groff warnings"
    else
        skip "$p: no groff"
    fi
done

# options_of HELPTEXT: every --option and -o the help lists at the start of a line
options_of() { sed -n 's/^ \{1,8\}\(-[-A-Za-z0-9]*\).*/\1/p' | sort -u; }
check_options() { # check_options PAGE HELPFILE
    render "$M/$1" >"$work/page"
    missing=
    for o in $(options_of <"$2"); do
        grep -q -- "^ *$o\b" "$work/page" || missing="$missing $o"
    done
    n=$(options_of <"$2" | wc -l)
    [ -z "$missing" ] && [ "$n" -ge 3 ]
    st=$?
    [ $st -eq 0 ] || diag "$1 lacks:$missing ($n options in --help)"
    ok $st "$1 has all $n options of --help"
}
"$top_builddir/scripts/tdshim-run" --help >"$work/run.help"
check_options tdshim-run.1 "$work/run.help"
COLUMNS=80 TDSHIM_REPORT_NO_REEXEC=1 "$PY" "$top_srcdir/scripts/tdshim-report" --help >"$work/report.help"
check_options tdshim-report.1 "$work/report.help"

render "$M/tdshim.7" >"$work/7"
"$PY" - "$top_srcdir/shim/mpi/tds_env.h" "$work/7" >"$work/vars" <<'PY'
import re, sys
text = open(sys.argv[1]).read().replace("\\\n", " ")
page = open(sys.argv[2]).read()
env = re.findall(r'X\(TDS_ENV_\w+,\s*"(TDSHIM_\w+)",\s*"([^"]*)"', text)
for name, default in env:
    m = re.search(r"^[ \t]*%s\n(.*?)^[ \t]*Default: *(\S*)" % name, page, re.M | re.S)
    want = default or "empty"
    if not m or m.group(2) != want:
        print("%s: %s" % (name, "missing" if not m else "default %s, tds_env.h %s" % (m.group(2), want)))
print("%d variables" % len(env))
PY
tail -1 "$work/vars" | grep -q '^[1-9][0-9]* variables$' && [ "$(wc -l <"$work/vars")" -eq 1 ]
st=$?
[ $st -eq 0 ] || diag "$(cat "$work/vars")"
ok $st "tdshim(7) has every variable of tds_env.h with its default ($(tail -1 "$work/vars"))"
missing=
for a in $("$top_builddir/tests/sim/tdsim" --list-algos | awk '{print $1}'); do
    grep -A3 '^ *TDSHIM_ALGO$' "$work/7" | grep -q "Accepted:.*\b$a\b" || missing="$missing $a"
done
[ -z "$missing" ]
ok $? "tdshim(7) lists every algorithm of the core under TDSHIM_ALGO${missing:+ (lacks$missing)}"
grep -q "^ *TDSHIM_TREE$" "$work/7" && grep -A8 '^ *TDSHIM_TREE$' "$work/7" | grep -q "Every rank must set the same value" &&
    grep -A8 '^ *TDSHIM_IDLE$' "$work/7" | grep -q "May differ between ranks"
ok $? "tdshim(7) says which variables must agree between ranks (TDSHIM_TREE) and which may differ (TDSHIM_IDLE)"

# a variable without its manual line: gen-man.py says which, and writes nothing
sed '/D(TDS_ENV_TREE, "all"/d' "$top_srcdir/shim/mpi/tds_env.h" >"$work/env.h"
"$PY" "$top_srcdir/docs/gen-man.py" env "$work/env.h" "$top_srcdir/docs/tdshim.7.in" 0 bcj >"$work/out" 2>"$work/err"
st=$?
[ $st -ne 0 ] && grep -q "TDS_ENV_TREE has no line in TDS_ENV_MAN" "$work/err"
ok $? "gen-man.py refuses a variable without its TDS_ENV_MAN line (exit $st: $(cat "$work/err"))"
# and the build of the page follows tds_env.h: a changed default shows
sed 's/X(TDS_ENV_TREE, "TDSHIM_TREE", "binary"/X(TDS_ENV_TREE, "TDSHIM_TREE", "kary:4"/' \
    "$top_srcdir/shim/mpi/tds_env.h" >"$work/env.h"
"$PY" "$top_srcdir/docs/gen-man.py" env "$work/env.h" "$top_srcdir/docs/tdshim.7.in" 0 bcj >"$work/t.7" &&
    render "$work/t.7" | grep -A3 '^ *TDSHIM_TREE$' | grep -q 'Default: kary:4'
ok $? "a default changed in tds_env.h is the page's default"
render "$M/tdshim-run.1" | grep -q '^ *tdshim-run \[tdshim options\] LAUNCHER'
ok $? "tdshim-run(1) SYNOPSIS has both usage lines"
done_testing
