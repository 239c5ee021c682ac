#!/bin/sh
# Sends that complete before their receive is posted (tests/mpi/eagerx.c).
# MPI sends a message within its eager limit at once; tdshim's header must
# not push one over it, or a send-send exchange that finishes natively
# deadlocks (Open MPI 4.1 over shared memory: 4,040 bytes go eagerly, 4,041
# do not, so 4,039 with bcj's 2 header bytes hung). The limits are found
# natively first (`eagerx limits`, PMPI on a communicator tdshim does not
# see); then the 12 sizes up to each limit are exchanged rank to rank
# (MPI_Send, MPI_Isend + MPI_Wait, and a persistent send's MPI_Start +
# MPI_Wait twice, before the MPI_Recv) and rank to itself, natively and under algorithms with 2-, 6- and 5-byte headers and
# a header-free one: every run must end, with the native transcript (bytes,
# guard bytes, count, source, tag) and reports that count every message;
# under a header, some sends must have been returned early
# (primary.sent_early), so the check sees the path it is about.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
P="$B/eagerx"
plan 6
lim=$(RUN_MPI_TIMEOUT=120 run_mpi 2 -- "$P" limits 2>"$TMPD/err")
# eagerx-ucx.sh: the limit UCX_RNDV_THRESH sets (EAGERX_LIMIT), through a
# pml this Open MPI may not be able to select here (no UCX): a visible skip
if [ -n "${EAGERX_LIMIT:-}" ] && [ -z "$lim" ] && grep -q "cannot be selected" "$TMPD/err"; then
    for i in 1 2 3 4 5 6; do skip "Open MPI's pml ucx cannot be selected here"; done
    exit 0
fi
peer=$(printf '%s\n' "$lim" | sed -n 's/^peer=\([0-9]*\) self=\([0-9]*\)$/\1/p')
self=$(printf '%s\n' "$lim" | sed -n 's/^peer=\([0-9]*\) self=\([0-9]*\)$/\2/p')
[ -n "$peer" ] && [ -n "$self" ] && [ "$peer" -ge 64 ] && [ "$self" -ge 64 ] &&
    { [ -z "${EAGERX_LIMIT:-}" ] || { [ "$peer" = "$EAGERX_LIMIT" ] && [ "$self" = "$EAGERX_LIMIT" ]; }; } &&
    { [ -z "${EAGERX_PEER:-}" ] || [ "$peer" = "$EAGERX_PEER" ]; }
ok $? "native eager limits found: $lim${EAGERX_LIMIT:+ (UCX_RNDV_THRESH=$UCX_RNDV_THRESH: $EAGERX_LIMIT expected)}${EAGERX_PEER:+ ($EAGERX_WHY: peer=$EAGERX_PEER expected)}"
if [ -z "$peer" ] || [ -z "$self" ] || [ "$peer" -lt 64 ] || [ "$self" -lt 64 ]; then
    head -3 "$TMPD/err" | sed 's/^/# /'
    for i in 2 3 4 5 6; do skip "no eager limit to test at"; done
    exit 0
fi
ps="" ss=""
for k in 0 1 2 3 4 5 6 8 12 16 24 32; do
    ps="$ps $((peer - k))"
    ss="$ss $((self - k))"
done
# both kinds of exchange, into $TMPD/$1 (the transcript, sorted); under
# tdshim (more arguments) the reports go to $TMPD/rep-$1/peer and /self
exchange() {
    name=$1
    shift
    : >"$TMPD/$name"
    for kind in peer self; do
        sizes=$ps
        [ $kind = self ] && sizes=$ss
        rep=""
        if [ $# -gt 0 ]; then
            mkdir -p "$TMPD/rep-$name/$kind"
            rep="TDSHIM_REPORT=json TDSHIM_REPORT_DIR=$TMPD/rep-$name/$kind"
        fi
        run_mpi 2 "$@" $rep -- "$P" $kind $sizes >>"$TMPD/$name" 2>>"$TMPD/$name.err"
        echo "rc=$?" >>"$TMPD/$name"
    done
    sort -o "$TMPD/$name" "$TMPD/$name"
}
# the sum of a primary field over the reports in a directory
field() {
    python3 -c '
import glob, json, sys
print(sum(json.load(open(f))["primary"].get(sys.argv[2], 0) for f in glob.glob(sys.argv[1] + "/**/rank-*.json", recursive=True)))
' "$1" "$2" 2>/dev/null || echo 0
}
exchange native
n=$(grep -c ' rc=0 .* bad=0$' "$TMPD/native")
[ "$n" -eq $((2 * 12 * 4 + 2 * 12)) ] && [ "$(grep -c '^rc=0$' "$TMPD/native")" -eq 2 ]
ok $? "natively every exchange ends and is intact ($n of 120 lines; peer sizes$ps; self sizes$ss)"
for a in bcj cda edod skr; do
    exchange "$a" LD_PRELOAD="$LIB" TDSHIM_ALGO=$a
    d="$TMPD/rep-$a"
    sp=$(field "$d/peer" sent) ep=$(field "$d/peer" sent_early)
    sq=$(field "$d/self" sent) eq=$(field "$d/self" sent_early)
    if [ $a = skr ]; then # header-free: nothing changes size
        early_ok() { [ "$ep" -eq 0 ] && [ "$eq" -eq 0 ]; }
    else
        early_ok() { [ "$ep" -gt 0 ] && [ "$eq" -gt 0 ]; }
    fi
    cmp -s "$TMPD/native" "$TMPD/$a" && [ "$sp" -eq 96 ] && [ "$sq" -eq 24 ] && early_ok
    ok $? "$a: every exchange ends as natively; sends counted $sp of 96 and $sq of 24, returned early $ep and $eq"
    diff "$TMPD/native" "$TMPD/$a" | head -6 | sed 's/^/# /'
    grep -v '^$' "$TMPD/$a.err" | head -3 | cut -c1-200 | sed 's/^/# /'
done
done_testing
