#!/bin/sh
# TDSHIM_CALLSITES=5: the top poll call site of every rank is report-prog's
# poll_for_work and the top send call site is send_work, in the
# report-prog module, with the program's counts; summary.txt names them.
# Built without libunwind, the shim must refuse TDSHIM_CALLSITES instead.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/report/report_lib.sh"
[ -n "$SHIMLIB" ] || bail_all 3 "shim/.libs/libtdshim.so not built"
[ -n "$PY" ] || bail_all 3 "python3 with jsonschema (Debian: python3-jsonschema) not found"
P=$REPORT_DIR_T/report-prog
if ! grep -q "define HAVE_LIBUNWIND 1" "$top_builddir/config.h"; then
    plan 1
    mkdir -p "$WORK/r"
    $RUN -np 2 -x LD_PRELOAD="$SHIMLIB" -x TDSHIM_CALLSITES=5 -x TDSHIM_REPORT_DIR="$WORK/r" \
        "$P" 10 1 >/dev/null 2>"$WORK/err"
    [ $? -ne 0 ] && grep -q "libunwind" "$WORK/err"
    ok $? "without libunwind TDSHIM_CALLSITES is refused with a message naming libunwind"
    done_testing
fi
plan 3
mkdir -p "$WORK/r"
$RUN -np 3 -x LD_PRELOAD="$SHIMLIB" -x TDSHIM_NOTIFY=none -x TDSHIM_CALLSITES=5 -x TDSHIM_REPORT_DIR="$WORK/r" \
    "$P" 40 2 >"$WORK/prog.out" 2>"$WORK/prog.err"
st=$?
D=$(ls -d "$WORK"/r/tdshim-report-*/ 2>/dev/null)
: "${D:=$WORK/no-report-dir}"
[ $st -eq 0 ] && [ -n "$D" ]
ok $? "report-prog with TDSHIM_CALLSITES=5 (exit $st)"
$PY - "$D" "$WORK/prog.out" >"$WORK/check.out" 2>&1 <<'PYEOF'
import glob, json, re, sys
d, out = sys.argv[1], sys.argv[2]
prog = {int(m.group(1)): (int(m.group(2)), int(m.group(3))) for m in
        (re.match(r"report-prog: rank (\d+) sent (\d+) .* iprobes (\d+)", l) for l in open(out)) if m}
files = sorted(glob.glob(d + "/rank-*.json"))
bad = 0 if len(files) == 3 and len(prog) == 3 else 1
print(f"{len(files)} rank files, {len(prog)} ranks printed counts")
for f in files:
    doc = json.load(open(f))
    cs, r = doc["callsites"], doc["rank"]
    if not cs["available"]:
        print(f"rank {r}: call sites unavailable: {cs.get('reason')}"); bad += 1; continue
    for kind, fn, n in (("poll", "poll_for_work", prog[r][1]), ("send", "send_work", prog[r][0])):
        top = cs[kind]["top"]
        t = top[0] if top else {}
        good = t.get("function") == fn and t.get("module") == "report-prog" and t.get("count") == n
        print(f"rank {r}: top {kind} site {t.get('function')}+{t.get('offset')} in {t.get('module')} "
              f"count {t.get('count')} (program: {fn}, {n}) {'ok' if good else 'WRONG'}")
        bad += not good
sys.exit(1 if bad else 0)
PYEOF
st=$?; diag "$(cat "$WORK/check.out")"
ok $st "every rank's top poll site is poll_for_work and top send site send_work, with the program's counts"
grep -q "poll_for_work+0x" "$D/summary.txt" && grep -q "send_work+0x" "$D/summary.txt"
ok $? "summary.txt's call-site section names poll_for_work and send_work"
done_testing
