#!/bin/sh
# Report files are safe to write in shared directories (issue 27) and a
# failed write does no harm (issue 26):
#  - modes 0700/0600 by default, 0750/0640 with TDSHIM_REPORT_MODE=group;
#  - a rank under `ulimit -f 1` (every report file too large) exits as it
#    does natively (0, not SIGXFSZ), with one warning, no temporary file,
#    no empty report directory and no "report in" line; likewise on a full
#    file system (a 64 KiB tmpfs; root only);
#  - an attacker (another account: nobody, through setpriv) who plants
#    directories and symbolic links at every predictable name in a shared
#    sticky directory (the report directory and its -N successors, the
#    temporary and final file names in them, the partial-report directory
#    of rank 0's pid) changes nothing outside the victim's report: a victim
#    file the links point to keeps its content and mtime, the attacker's
#    entries are untouched, and the reports are written into directories
#    of the victim's own, 0700/0600 (root only); a parent directory of
#    another user that is not sticky is not written into at all.
# Open MPI's shared-memory transport writes files a file-size limit kills
# natively: the ulimit runs use TCP (self,tcp); MPICH's cannot be avoided
# that way, and a job that fails natively is skipped. Skips happen only off
# the supported platform (Debian 12 as root, where CI runs): there a point
# that cannot run (no tmpfs, no setpriv, a native failure) fails (must_run).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/report/report_lib.sh"
plan 9
[ -n "$SHIMLIB" ] || { i=0; while [ $i -lt 9 ]; do skip "libtdshim.so not built"; i=$((i + 1)); done; exit 0; }
PROG=$REPORT_DIR_T/report-prog
SIGPROG=$top_builddir/tests/mpi/sigprog
modes() { # the modes of a report directory and of its files, one line
    (cd "$1" && stat -c %a . && stat -c %a ./*) | sort -u | tr '\n' ' '
}

mkdir -p "$WORK/m1" "$WORK/m2"
$RUN -np 2 -x LD_PRELOAD="$SHIMLIB" -x TDSHIM_REPORT_DIR="$WORK/m1" "$PROG" 4 1 >"$WORK/m1.out" 2>&1
$RUN -np 2 -x LD_PRELOAD="$SHIMLIB" -x TDSHIM_REPORT_DIR="$WORK/m2" -x TDSHIM_REPORT_MODE=group "$PROG" 4 1 \
    >"$WORK/m2.out" 2>&1
m1=$(modes "$WORK"/m1/tdshim-report-*/)
m2=$(modes "$WORK"/m2/tdshim-report-*/)
[ "$m1" = "600 700 " ] && [ "$m2" = "640 750 " ]
ok $? "report modes: private '$m1', TDSHIM_REPORT_MODE=group '$m2' (umask $(umask))"

# failed_run NAME DIR PREFIX...: the program natively and under tdshim with
# reports in DIR, each through PREFIX (sh -c ...); compares
failed_run() {
    name=$1 dir=$2; shift 2
    OMPI_MCA_btl=self,tcp $RUN -np 2 "$@" "$PROG" 4 1 >"$WORK/$name.native" 2>&1
    nst=$?
    if [ $nst -ne 0 ]; then # MPICH's shared memory is a file too
        must_run "$name: the job fails natively already (exit $nst: the MPI library's own files)"
        return
    fi
    OMPI_MCA_btl=self,tcp $RUN -np 2 -x LD_PRELOAD="$SHIMLIB" -x TDSHIM_REPORT_DIR="$dir" "$@" "$PROG" 4 1 \
        >"$WORK/$name.out" 2>&1
    sst=$?
    warn=$(grep -c '^tdshim: .*\(not written\|no report\|cannot\)' "$WORK/$name.out")
    tmps=$(find "$dir" -name '*.tmp*' | wc -l)
    left=$(find "$dir" -mindepth 1 | wc -l)
    claims=$(grep -c '^tdshim: report in ' "$WORK/$name.out")
    [ $nst -eq 0 ] && [ $sst -eq $nst ] && [ "$warn" -eq 1 ] && [ "$tmps" -eq 0 ] && [ "$left" -eq 0 ] &&
        [ "$claims" -eq 0 ]
    st=$?
    [ $st -eq 0 ] || diag "$(grep -v '^report-prog' "$WORK/$name.out" | head -n 8)"
    ok $st "$name: exit $sst as natively ($nst), $warn warning: $(grep '^tdshim: .*\(not written\|no report\)' "$WORK/$name.out" | head -n 1); $tmps temporary files, $left entries left, $claims 'report in' lines"
}
mkdir -p "$WORK/ulimit"
failed_run "ulimit -f 1" "$WORK/ulimit" sh -c 'ulimit -f 1; exec "$0" "$@"'

if [ "$(id -u)" -ne 0 ]; then
    skip "full file system: mounting a tmpfs needs root"
elif mkdir -p "$WORK/full" && mount -t tmpfs -o size=64k tdshim-full "$WORK/full" 2>/dev/null; then
    dd if=/dev/zero of="$WORK/full/filler" bs=4k 2>/dev/null
    mkdir -p "$WORK/full/rep" 2>/dev/null
    failed_run "full file system" "$WORK/full/rep"
    umount "$WORK/full"
else
    must_run "full file system: cannot mount a tmpfs here"
fi

# ---- the attacker
root_skip() { i=0; while [ $i -lt "$1" ]; do must_run "$2"; i=$((i + 1)); done; }
if [ "$(id -u)" -ne 0 ]; then
    root_skip 6 "attacker: needs root to act as a second account (setpriv --reuid=nobody)"
    done_testing
    exit 0
fi
if ! command -v setpriv >/dev/null || ! id nobody >/dev/null 2>&1; then
    root_skip 6 "attacker: setpriv or the account nobody is missing"
    done_testing
    exit 0
fi
S=$(mktemp -d "${TMPDIR:-/tmp}/tdshim-shared.XXXXXX")
chmod 1777 "$S"
CANARY=$WORK/victim/canary
mkdir -p "$WORK/victim" && echo "the victim's file" >"$CANARY"
touch -d '2020-01-01 00:00' "$CANARY"
canary0=$(stat -c '%s %Y' "$CANARY")$(cksum <"$CANARY")
J=attack$$
attacker() { a=$1; shift; setpriv --reuid=nobody --regid=nogroup --clear-groups sh -c "$a" sh "$S" "$CANARY" "$J" "$@"; }
# plant DIR PIDS...: a 0777 directory of the attacker's with links to the
# canary at every name a victim could write in it
PLANT='S=$1 C=$2 J=$3 d=$4; shift 4
mkdir -m 777 "$S/$d" || exit 1
for n in rank-0000.json rank-0001.json summary.txt; do
    ln -s "$C" "$S/$d/$n"
    for p in "$@"; do ln -s "$C" "$S/$d/.$n.tmp.$p"; done
done'
snap() { (cd "$S" && find . -user nobody -printf '%p %y %m %l %s\n' | sort | cksum); }
# victim N LIMIT: the victim's 2-rank job N (sigprog loop, LIMIT seconds)
# in the background ($m); once its ranks are running: $pids, rank 0's $p0
victim() {
    mkdir -p "$WORK/pids$1"
    $RUN -np 2 -x LD_PRELOAD="$SHIMLIB" -x TDSHIM_REPORT_DIR="$S" -x SLURM_JOB_ID="$J" \
        "$SIGPROG" loop "$WORK/pids$1" "$2" >"$WORK/attack$1.out" 2>&1 &
    m=$!
    k=0
    # both pids written (a pid file exists before its pid is in it)
    while [ "$(cat "$WORK/pids$1"/pid.* 2>/dev/null | wc -w)" -lt 2 ] && [ $k -lt 300 ]; do sleep 0.1; k=$((k + 1)); done
    pids=$(cat "$WORK/pids$1"/pid.* | tr '\n' ' ')
    p0=$(cat "$WORK/pids$1/pid.0")
}

# a job that finalizes: the final report's names are taken in advance
victim 1 4
attacker "$PLANT" "tdshim-report-$J" $pids
attacker 'ln -s "$(dirname "$2")" "$1/tdshim-report-$3-2"; mkdir "$1/tdshim-report-$3-3"'
attacker "$PLANT" "tdshim-report-$J-partial-$p0" $pids
before=$(snap)
planted=$(find "$S" -user nobody | wc -l)
wait $m
st=$?
mine=$(find "$S" -mindepth 1 -maxdepth 1 -user root -name "tdshim-report-$J*")
[ "$planted" -eq 22 ] && [ $st -eq 0 ] && [ "$(echo "$mine" | wc -w)" -eq 1 ] && [ "$(modes "$mine")" = "600 700 " ] &&
    [ "$(ls "$mine" | tr '\n' ' ')" = "rank-0000.json rank-0001.json summary.txt " ] &&
    grep -q "^tdshim: report in $mine\$" "$WORK/attack1.out"
ok $? "the final report avoids the $planted names planted in advance: $(basename "$mine") of the victim's own, modes $(modes "$mine")"
[ "$(snap)" = "$before" ] && [ "$(stat -c '%s %Y' "$CANARY")$(cksum <"$CANARY")" = "$canary0" ] &&
    [ -z "$(ls -A "$WORK/victim" | grep -v '^canary$')" ]
ok $? "nothing the attacker planted changed, nor the victim's file the links point to, nor its directory"

# a killed job: the partial report's directory of rank 0's pid is taken
victim 2 60
attacker "$PLANT" "tdshim-report-$J-partial-$p0" $pids
before=$(snap)
planted=$(find "$S" -user nobody -path "*-partial-$p0/*" | wc -l)
sleep 0.5
# shellcheck disable=SC2086
kill -TERM $pids
wait $m
part=$(find "$S" -mindepth 1 -maxdepth 1 -user root -name "tdshim-report-$J-partial-$p0*")
n=$(find "$S" -user root -path "*-partial-$p0*" -name 'rank-*.json' -type f | wc -l)
[ "$planted" -eq 9 ] && [ "$(echo "$part" | wc -w)" -eq 1 ] && [ "$n" -eq 2 ] && [ "$(modes "$part")" = "600 700 " ]
ok $? "with $planted links planted in rank 0's partial-report directory, killed ranks write their partial reports ($n) into a directory of their own ($(basename "$part"), modes $(modes "$part"))"
[ "$(snap)" = "$before" ] && [ "$(stat -c '%s %Y' "$CANARY")$(cksum <"$CANARY")" = "$canary0" ]
ok $? "the attacker's partial-report directory and the victim's file are untouched"
python3 -c 'import json, sys; [json.load(open(f)) for f in sys.argv[1:]]' "$part"/rank-*.json 2>/dev/null &&
    grep -q "partial report written: $part/rank-0000.json" "$WORK/attack2.out"
ok $? "the partial reports parse and the ranks name them"

# a parent directory of another user that is not sticky: that user could
# swap the report's entry, so nothing is written there (one warning)
O=$S/others
attacker 'mkdir -m 777 "$1/others"'
before=$(snap)
$RUN -np 2 -x LD_PRELOAD="$SHIMLIB" -x TDSHIM_REPORT_DIR="$O" "$PROG" 4 1 >"$WORK/others.out" 2>&1
st=$?
[ $st -eq 0 ] && [ -z "$(ls -A "$O")" ] && [ "$(snap)" = "$before" ] &&
    [ "$(grep -c "^tdshim: no report written: cannot use TDSHIM_REPORT_DIR $O: another user's directory that is not sticky" "$WORK/others.out")" -eq 1 ]
ok $? "a non-sticky parent directory of another user gets nothing, with one warning (exit $st)"
rm -rf "$S"
done_testing
