#!/bin/sh
# scripts/tdshim-report against planted names (issue 27 part 2): it writes
# only into a directory the user names or a new one it creates, never into
# the report directory it reads, never through a symbolic link, and it does
# not pick another user's run as "the newest" in a shared parent. The
# victim's canary files must keep their content. Points 5-10 need root: a
# second account (nobody, through setpriv) plants the links and the newer
# run in a sticky shared directory; skipped with the reason otherwise.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/report/report_lib.sh"
TOOL=$top_srcdir/scripts/tdshim-report
FIX=$top_srcdir/tests/report/fixture-demo
PYT=python3
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import matplotlib' 2>/dev/null && PYT=/usr/bin/python3
"$PYT" -c 'import matplotlib' 2>/dev/null || bail_all 10 "no python3 with matplotlib here (Debian: python3-matplotlib)"
plan 10
NAMES="overhead.png control.png timeline.png"
V=$WORK/victim
mkdir -p "$V" "$WORK/cwd"
canaries() { for i in 1 2 3 4; do printf 'canary %s\n' "$i" >"$V/canary-$i"; done; }
canaries_intact() { # the canaries' content, or the first that changed
    for i in 1 2 3 4; do
        [ "$(cat "$V/canary-$i")" = "canary $i" ] || { echo "canary-$i changed: $(head -c 8 "$V/canary-$i" | od -c | head -1)"; return 1; }
    done
}
plant() { # plant DIR: the output names in DIR as links to the canaries
    i=1
    for n in $NAMES report.html; do ln -sfn "$V/canary-$i" "$1/$n"; i=$((i + 1)); done
}
canaries

# 1: by default, a new private directory in the current one; the run read is untouched
mkdir -p "$WORK/mine" && cp -r "$FIX" "$WORK/mine/run"
before=$(ls -la "$WORK/mine/run")
(cd "$WORK/cwd" && "$PYT" "$TOOL" "$WORK/mine/run" >"$WORK/1.out" 2>&1)
st=$?
pd=$(ls -d "$WORK"/cwd/tdshim-plots-* 2>/dev/null)
[ $st -eq 0 ] && [ "$(ls -la "$WORK/mine/run")" = "$before" ] && [ "$(echo "$pd" | wc -l)" -eq 1 ] &&
    [ "$(stat -c %a "$pd")" = 700 ] && [ "$(ls "$pd" | wc -l)" -eq 3 ]
ok $? "default output: one new mode-0700 tdshim-plots-* directory with 3 plots, nothing written into the run read (exit $st)"

# 2: -o naming our own link to our own directory: followed (~/scratch -> /lustre/...)
mkdir -p "$WORK/elsewhere" && ln -sfn "$WORK/elsewhere" "$WORK/link"
"$PYT" "$TOOL" "$WORK/mine/run" -o "$WORK/link/" >/dev/null 2>"$WORK/2.err"
st=$?
[ $st -eq 0 ] && [ "$(ls "$WORK/elsewhere" | wc -l)" -eq 3 ] && [ -L "$WORK/link" ]
ok $? "-o through our own link to our own directory: the 3 plots are written there (exit $st) $(cat "$WORK/2.err")"

# 3, 4: links planted at the plot names and at the --html name are replaced, not followed
mkdir -p "$WORK/out" && plant "$WORK/out"
"$PYT" "$TOOL" "$WORK/mine/run" -o "$WORK/out" --html "$WORK/out/report.html" >"$WORK/3.out" 2>&1
st=$?
regular=0
for n in $NAMES report.html; do [ -f "$WORK/out/$n" ] && [ ! -L "$WORK/out/$n" ] && regular=$((regular + 1)); done
msg=$(canaries_intact)
[ $st -eq 0 ] && [ -z "$msg" ] && [ $regular -eq 4 ]
ok $? "links planted at the 3 plot names and the page's name: canaries intact, $regular of 4 names now regular files (exit $st) $msg"
canaries
ln -sfn "$V/canary-4" "$WORK/page.html"
"$PYT" "$TOOL" "$WORK/mine/run" --no-plots --html "$WORK/page.html" >/dev/null 2>&1
st=$?
msg=$(canaries_intact)
[ $st -eq 0 ] && [ -z "$msg" ] && [ ! -L "$WORK/page.html" ] && grep -q '^<!DOCTYPE html>' "$WORK/page.html"
ok $? "--html FILE where FILE is a link to a canary: the canary is intact, FILE is the page (exit $st) $msg"

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
    for i in 5 6 7 8 9 10; do must_run "needs root and setpriv to act as a second account (nobody)"; done
    done_testing
fi
canaries
# a sticky shared parent, as /tmp or a project's scratch directory
S=$(mktemp -d /tmp/tdshim-attack.XXXXXX) && chmod 1777 "$S" || bail_all 6 "mktemp in /tmp failed"
trap 'rm -rf "$S"' EXIT
chmod 755 "$V" && chmod 644 "$V"/canary-*
as_nobody() { setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups "$@"; }
cp -r "$FIX" "$S/tdshim-report-20260101-000000" && touch -d '-1 hour' "$S/tdshim-report-20260101-000000"
as_nobody sh -c 'mkdir "$1/tdshim-report-20260101-000001" && cp "$2"/rank-*.json "$1/tdshim-report-20260101-000001/" &&
    i=1; for n in overhead.png control.png timeline.png; do ln -s "$3/canary-$i" "$1/tdshim-report-20260101-000001/$n"; i=$((i + 1)); done' \
    sh "$S" "$FIX" "$V" || diag "nobody could not plant its run"

# 5: the newest run in the shared parent is nobody's: refused, with how to read it
(cd "$WORK/cwd" && "$PYT" "$TOOL" "$S" >"$WORK/5.out" 2>"$WORK/5.err")
st=$?
msg=$(canaries_intact)
[ $st -eq 1 ] && [ "$(wc -l <"$WORK/5.err")" -eq 1 ] && grep -q "belongs to nobody, not to you; name a run directory" "$WORK/5.err" &&
    [ -z "$msg" ]
ok $? "a newer run of another user in a sticky parent: refused in one line saying how to read it, canaries intact (exit $st: $(cat "$WORK/5.err")) $msg"

# 6: named explicitly, nobody's run is read; nothing is written into it
before=$(ls -la "$S/tdshim-report-20260101-000001")
(cd "$WORK/cwd" && "$PYT" "$TOOL" "$S/tdshim-report-20260101-000001" >"$WORK/6.out" 2>&1)
st=$?
msg=$(canaries_intact)
[ $st -eq 0 ] && [ -z "$msg" ] && [ "$(ls -la "$S/tdshim-report-20260101-000001")" = "$before" ]
ok $? "nobody's run named explicitly: read (exit $st), nothing written into it, canaries intact $msg"

# 7: -o naming a directory that nobody made for us: refused
as_nobody mkdir -m 777 "$S/plots-by-nobody"
"$PYT" "$TOOL" "$S/tdshim-report-20260101-000000" -o "$S/plots-by-nobody" >/dev/null 2>"$WORK/7.err"
st=$?
[ $st -eq 1 ] && grep -q "belongs to nobody, not to you" "$WORK/7.err" && [ -z "$(ls -A "$S/plots-by-nobody")" ]
ok $? "-o naming a directory another user made: refused, nothing written (exit $st: $(cat "$WORK/7.err"))"

# 8: the shared sticky directory itself as -o (ours: root made it), nobody's links at the names
as_nobody sh -c 'i=1; for n in overhead.png control.png timeline.png report.html; do ln -s "$2/canary-$i" "$1/$n"; i=$((i + 1)); done' \
    sh "$S" "$V"
"$PYT" "$TOOL" "$S/tdshim-report-20260101-000000" -o "$S" --html "$S/report.html" >/dev/null 2>"$WORK/8.err"
st=$?
msg=$(canaries_intact)
[ -z "$msg" ]
ok $? "nobody's links at the output names in a sticky directory: canaries intact (exit $st) $msg"

# 9, 10: nobody's link to the victim's directory, as -o DIR and as the page's directory
mkdir -p "$V/mydir" && echo keep >"$V/mydir/overhead.png"
as_nobody ln -s "$V/mydir" "$S/plots"
"$PYT" "$TOOL" "$S/tdshim-report-20260101-000000" -o "$S/plots/" >/dev/null 2>"$WORK/9.err"
st=$?
[ $st -eq 1 ] && [ "$(wc -l <"$WORK/9.err")" -eq 1 ] && grep -q "is a symbolic link of nobody; not followed" "$WORK/9.err" &&
    [ "$(ls "$V/mydir")" = overhead.png ] && [ "$(cat "$V/mydir/overhead.png")" = keep ]
ok $? "-o naming nobody's link to the victim's directory: refused, the directory unchanged (exit $st: $(cat "$WORK/9.err"))"
"$PYT" "$TOOL" "$S/tdshim-report-20260101-000000" --no-plots --html "$S/plots/report.html" >/dev/null 2>"$WORK/10.err"
st=$?
[ $st -eq 1 ] && grep -q "is a symbolic link of nobody; not followed" "$WORK/10.err" && [ "$(ls "$V/mydir")" = overhead.png ]
ok $? "--html through nobody's link to the victim's directory: refused, nothing written there (exit $st)"
done_testing
