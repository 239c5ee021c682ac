#!/bin/sh
# Reports are valid UTF-8 JSON whatever the program's command line and
# environment hold (issue 27): a command line with a Latin-1 byte, control
# characters, quotes, backslashes and more than 4 KiB of multibyte
# characters (one across the cut), and a TDSHIM_REPORT_DIR whose name has
# a Latin-1 byte, quotes, a backslash and a space. Every rank's file is
# read back with Python's json (strict): the command is the command line
# with U+FFFD for the Latin-1 byte, cut on a character boundary at no
# more than 4096 bytes and marked ("…", command_truncated), the directory
# is in the configuration as given (U+FFFD again); scripts/tdshim-report
# reads the directory. The writer it replaces cut the command line at
# 1,023 bytes inside a character and wrote the Latin-1 byte raw, and
# tdshim-report rejected the whole run.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/report/report_lib.sh"
plan 4
[ -n "$SHIMLIB" ] || { i=0; while [ $i -lt 4 ]; do skip "libtdshim.so not built"; i=$((i + 1)); done; exit 0; }
# the hostile strings, as bytes (printf octal escapes: sh has no \x)
latin=$(printf 'caf\351')
ctl=$(printf 'tab\there\001bell\033esc')
quotes=$(printf '"q" back\\slash \\"both\\"')
# 4 KiB and more: 2-, 3- and 4-byte characters, so the cut falls inside one
long=$(python3 -c 'import sys; sys.stdout.write("é€😀x" * 500)')
D=$WORK/$(printf 'r\351p "d" \\ x')
mkdir -p "$D"
$RUN -np 2 -x LD_PRELOAD="$SHIMLIB" -x TDSHIM_REPORT_DIR="$D" \
    "$REPORT_DIR_T/report-prog" 4 1 "$latin" "$ctl" "$quotes" "$long" >"$WORK/run.out" 2>&1
st=$?
R=$(ls -d "$D"/tdshim-report-*/ 2>/dev/null | head -n 1)
[ $st -eq 0 ] && [ -f "$R/rank-0000.json" ] && [ -f "$R/rank-0001.json" ] && [ -f "$R/summary.txt" ]
ok $? "a run with a hostile command line and report directory writes its report (exit $st)"

python3 - "$R" "$D" "$SCHEMA" "$latin" "$ctl" "$quotes" "$long" <<'PY' >"$WORK/check.out" 2>&1
import json, os, sys
rdir, parent, schema = sys.argv[1], os.fsencode(sys.argv[2]), sys.argv[3]
args = [os.fsencode(a) for a in sys.argv[4:]]
try:
    import jsonschema
except ImportError:
    jsonschema = None
for r in (0, 1):
    raw = open(os.path.join(rdir, "rank-%04d.json" % r), "rb").read()
    text = raw.decode("utf-8")            # strict: valid UTF-8 or an exception
    d = json.loads(text)                  # strict JSON
    if jsonschema:
        jsonschema.validate(d, json.load(open(schema)))
    cmd = d["command"]
    assert d["command_truncated"] is True, d["command_truncated"]
    assert cmd.endswith("\u2026"), cmd[-10:]
    body = cmd[:-1]
    # the limit counts the command line's own bytes (a U+FFFD takes 3 for 1)
    n = len(body.encode("utf-8")) - 2 * body.count("\ufffd")
    assert 4096 - 4 < n <= 4096, n
    # the program's arguments, as /proc/self/cmdline joins them, with U+FFFD
    # for the Latin-1 byte (isolated: one replacement either way)
    full = b" ".join(args).decode("utf-8", "replace")
    rest = body[body.index(" 4 1 ") + 5:]
    assert full.startswith(rest), (rest[:80], full[:80])
    assert "caf\ufffd tab\there\x01bell\x1besc \"q\" back\\slash \\\"both\\\" é€😀x" in body, body[:200]
    assert body.endswith(("é", "€", "😀", "x")), body[-5:]
    val = d["config"]["TDSHIM_REPORT_DIR"]
    assert val == parent.decode("utf-8", "replace")[:128] or parent.decode("utf-8", "replace").startswith(val.rstrip("\ufffd")), val
    assert "r\ufffdp \"d\" \\ x" in val, val
print("both rank files: strict UTF-8 JSON, command cut at %d bytes and marked, directory in the config" % n)
PY
st=$?
diag "$(tail -n 3 "$WORK/check.out")"
ok $st "the files are strict UTF-8 JSON with the command line cut on a character boundary and marked, and the directory's name"
python3 "$top_srcdir/scripts/tdshim-report" "$R" >"$WORK/report.out" 2>&1
st=$?
[ $st -ne 0 ] && diag "$(tail -n 3 "$WORK/report.out")"
ok $st "scripts/tdshim-report reads the directory (exit $st)"
grep -qxF "tdshim: report in ${R%/}" "$WORK/run.out"
ok $? "rank 0 names the directory on stderr"
done_testing
