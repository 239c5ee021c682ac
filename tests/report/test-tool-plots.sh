#!/bin/sh
# scripts/tdshim-report's plots and HTML page on the checked-in fixture-demo
# run (scripts/demo's job: dnc_tree on 4 ranks under bcj, 2 episodes):
# layout measured by matplotlib (no text overlaps another or leaves the
# figure; each episode panel spans last busy->idle .. last detection over at
# least half its width), absolute seconds and the job's wall time in the
# overhead plot, one caption per plot in the text, and a self-contained,
# escaped HTML page that headless Chromium renders (non-blank screenshot, no
# console message) with the report's tables and figures in the rendered
# document (--dump-dom: the summary first, the overhead, control-message and
# episode tables as <table>s under their headings with a row per rank or
# episode, no <pre>, and the 3 figures with their PNG and caption). Chromium is in scripts/deps; without it
# points 7 and 8 skip.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/report/report_lib.sh"
TOOL=$top_srcdir/scripts/tdshim-report
FIX=$top_srcdir/tests/report/fixture-demo
PYT=
for p in /usr/bin/python3 python3; do
    if "$p" -c 'import matplotlib' 2>/dev/null; then PYT=$p; break; fi
done
[ -n "$PYT" ] || bail_all 8 "no python3 with matplotlib here (Debian: python3-matplotlib)"
plan 8
cd "$WORK" || exit 1
"$PYT" "$TOOL" "$FIX" -o plots --layout-json layout.json >one.out 2>one.err
st=$?
"$PYT" "$top_srcdir/tests/report/layout_check.py" layout.json 2 >one.check
ok $? "demo plots: $(tail -1 one.check), each episode's window over half its panel (exit $st)"
sed '$d' one.check | head -5 | while IFS= read -r l; do diag "$l"; done
# a run A vs B: the comparison plots too
mkdir -p b && cp "$FIX"/rank-*.json b/
"$PYT" "$TOOL" "$FIX" --vs b -o plots-vs --layout-json layout-vs.json >vs.out 2>vs.err &&
    "$PYT" "$top_srcdir/tests/report/layout_check.py" layout-vs.json 4 >vs.check
ok $? "--vs plots (7 figures): $(tail -1 vs.check)"
# overhead: the job's wall time (longest rank) and each rank's seconds beside its %
"$PYT" - "$FIX" layout.json <<'PY'
import glob, json, sys
docs = [json.load(open(f)) for f in glob.glob(sys.argv[1] + "/rank-*.json")]
texts = [t["text"] for t in json.load(open(sys.argv[2]))["overhead"]["texts"]]
job = f"job wall time {max(d['wall_s'] for d in docs):.3f} s"
per = [f"{d['tdshim_time']['total_s']:.3g} s\n{d['tdshim_time']['percent_of_wall']:.2f}%" for d in docs]
missing = [s for s in [job] + per if not any(s in t for t in texts)]
print(missing)
sys.exit(1 if missing else 0)
PY
ok $? "overhead plot: the job's wall time and every rank's seconds and % are on it"
n=$(sed -n '/^@--- Plots and pages/,$p' one.out | grep -c '\.png: .*\(look for\|latency\)')
[ $st -eq 0 ] && [ "$n" -eq 3 ]
ok $? "the text names each of the 3 plots with a caption saying what to look for ($n)"
# strings with markup and control characters, for the page
mkdir -p evil && cp "$FIX"/rank-*.json evil/
"$PYT" - evil/rank-0000.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["command"] = "<script>alert(1)</script><img src=x onerror=alert(2)>\x1b[2J&amp;"
d["config"]["TDSHIM_</pre><h1>X"] = "\"'><b>"
json.dump(d, open(sys.argv[1], "w"))
PY
"$PYT" "$TOOL" evil --html page.html >html.out 2>html.err
st=$?
"$PYT" - page.html <<'PY'
import re, sys
s = open(sys.argv[1], encoding="utf-8").read()
bad = []
if re.search(r"<script|<[^>]*onerror|<img src=x|\x1b|<h1>X", s, re.I):
    bad.append("markup or a control character from the report is raw")
if "&lt;script&gt;alert(1)&lt;/script&gt;" not in s or "\\x1b[2J&amp;amp;" not in s:
    bad.append("the command is not shown escaped")
srcs = re.findall(r'(?:src|href)="([^"]*)"', s)
if len(srcs) != 3 or any(not x.startswith("data:image/png;base64,") for x in srcs):
    bad.append(f"not self-contained: {[x[:30] for x in srcs]}")
print(bad)
sys.exit(1 if bad else 0)
PY
r=$?
[ $st -eq 0 ] && [ $r -eq 0 ] && [ -z "$(ls -d tdshim-plots-* 2>/dev/null)" ]
ok $? "--html: one self-contained page (3 PNGs as data: URIs, no plot directory), report strings escaped (exit $st)"
[ $st -eq 0 ] && grep -q "^<h2>Plots</h2>" page.html && grep -q "<h2>Detection episodes" page.html &&
    grep -q "<figcaption><b>timeline</b>: " page.html && [ "$(grep -m1 '^<h2>' page.html)" = "<h2>Summary</h2>" ] &&
    [ "$(grep -c '^<table>' page.html)" -ge 7 ] && ! grep -q '<pre' page.html
ok $? "--html: the summary first, the tables as <table>s (no <pre>), the plots with their captions"
CHROMIUM=
for c in chromium chromium-browser google-chrome; do command -v $c >/dev/null && { CHROMIUM=$c; break; }; done
if [ -z "$CHROMIUM" ]; then
    skip "no chromium here (Debian: chromium; scripts/deps installs it)"
    skip "no chromium here (Debian: chromium; scripts/deps installs it)"
else
    timeout -k 5 120 $CHROMIUM --headless --no-sandbox --disable-gpu --enable-logging=stderr --v=0 \
        --window-size=1200,2400 --screenshot="$WORK/shot.png" "file://$WORK/page.html" >chr.out 2>chr.err
    cst=$?
    console=$(grep -c ':CONSOLE' chr.err)
    var=$("$PYT" -c 'import sys, matplotlib.image as m; a = m.imread(sys.argv[1]); print(f"{a.var():.4f}" if a.size else 0)' \
        "$WORK/shot.png" 2>/dev/null)
    [ $cst -eq 0 ] && [ "$console" -eq 0 ] && [ -n "$var" ] && [ "$var" != "0.0000" ]
    ok $? "headless Chromium renders the page: pixel variance $var, $console console messages (exit $cst)"
    [ "$console" -eq 0 ] || diag "$(grep ':CONSOLE' chr.err | head -3)"
    # the document Chromium built from the page: the tables and the figures
    timeout -k 5 120 $CHROMIUM --headless --no-sandbox --disable-gpu --dump-dom "file://$WORK/page.html" \
        >dom.html 2>dom.err
    dst=$?
    found=$("$PYT" "$top_srcdir/tests/report/dom_check.py" dom.html 4 2 3 2>&1)
    fst=$?
    [ $dst -eq 0 ] && [ $fst -eq 0 ]
    ok $? "headless Chromium's document (--dump-dom): $found (exit $dst)"
fi
done_testing
