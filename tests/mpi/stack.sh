#!/bin/sh
# Stacking with another PMPI tool (README "Stacking with other PMPI tools
# and Fortran"): tests/mpi/libpcount.so counts the program's calls the
# classic way (its MPI_X calls PMPI_X). Preloaded before or after tdshim:
#  - the transparency program's transcript is byte for byte the native one,
#    and the tool counts exactly the calls it counts without tdshim (all
#    but the polls, whose number is timing);
#  - tdprog (tokens between ranks, polling with MPI_Iprobe) gets exactly one
#    notification per phase, and in the same run the tool and tdshim saw the
#    same calls: the tool's MPI_Send count and the bytes the program asked
#    to send equal tdshim's primary messages and bytes, and the tool's
#    MPI_Iprobe count equals tdshim's polls;
#  - TDSHIM_VERBOSE names a tool preloaded after tdshim;
#  - a layer after tdshim that defines PMPI_ names only (libponly.so) is
#    the next layer of tdshim's own calls, and the program's calls still
#    reach tdshim: one notification per phase, every primary message
#    counted on both ends with its header, and the layer saw at least the
#    sends tdshim counted (tdshim's own blocking sends too: clock
#    synchronisation, reports). Before, MPI_Send and MPI_Finalize went from
#    tdshim's entries straight to the MPI library's: messages without a
#    header, no report.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"

SHIM="$top_builddir/shim/.libs/libtdshim.so"
PC="$B/.libs/libpcount.so"
PO="$B/.libs/libponly.so"
PRE=${LIB%"$SHIM"} # a sanitizer runtime that must come first, if any
plan 11
if [ ! -f "$PC" ] || [ ! -f "$PO" ]; then
    for i in 1 2 3 4 5 6 7 8 9 10 11; do skip "no $PC or $PO"; done
    exit 0
fi

# pcount files of a run, one line per rank, in rank order, without the
# polls (how often a test loop spins is timing; every other count is the
# program's sequence of calls)
counts() {
    for r in $(seq 0 $(($2 - 1))); do cat "$1/pcount-$r.txt" 2>/dev/null || echo missing; done |
        sed -E 's/(^| )(Iprobe|Improbe|Test|Testany|Testall|Testsome)=[0-9]+//g'
}

nt=3 # (not n: run_mpi sets it)
mkdir -p "$TMPD/alone"
run_mpi $nt -- "$B/transparency" >"$TMPD/native" 2>"$TMPD/native.err"
run_mpi $nt LD_PRELOAD="$PRE$PC" PCOUNT_DIR="$TMPD/alone" -- "$B/transparency" >"$TMPD/alone.out" 2>&1
counts "$TMPD/alone" $nt >"$TMPD/alone.counts"
cmp -s "$TMPD/native" "$TMPD/alone.out" && [ -s "$TMPD/native" ] && ! grep -q missing "$TMPD/alone.counts"
ok $? "the tool alone leaves the transparency transcript as native ($(wc -l <"$TMPD/native") lines) and counts"

for order in tdshim-first tool-first; do
    case $order in
    tdshim-first) pre="$PRE$SHIM:$PC" ;;
    *) pre="$PRE$PC:$SHIM" ;;
    esac
    d="$TMPD/$order"
    mkdir -p "$d/t" "$d/p" "$d/rep"
    run_mpi $nt LD_PRELOAD="$pre" TDSHIM_REPORT=none PCOUNT_DIR="$d/t" -- "$B/transparency" \
        >"$d/tr.out" 2>"$d/tr.err"
    rc=$?
    counts "$d/t" $nt >"$d/t.counts"
    if [ $rc -eq 0 ] && cmp -s "$TMPD/native" "$d/tr.out" && cmp -s "$TMPD/alone.counts" "$d/t.counts"; then
        ok 0 "$order: transparency transcript identical to native, the tool counts the calls it counts alone"
    else
        ok 1 "$order: transparency transcript identical to native, the tool counts the calls it counts alone (rc=$rc)"
        diff "$TMPD/native" "$d/tr.out" | head -8 | sed 's/^/# /'
        diff "$TMPD/alone.counts" "$d/t.counts" | head -8 | sed 's/^/# /'
        sed 's/^/# stderr: /' "$d/tr.err" | head -8
    fi

    np=4
    run_mpi $np LD_PRELOAD="$pre" TDSHIM_NOTIFY=tag:999 TDSHIM_REPORT=json TDSHIM_REPORT_DIR="$d/rep" \
        PCOUNT_DIR="$d/p" -- "$B/tdprog" probe 4 999 20 >"$d/td.out" 2>"$d/td.err"
    rc=$?
    good=$(grep -c 'phases 4 notified 4 extra 0 tokens_seen 1 episodes 4$' "$d/td.out")
    [ $rc -eq 0 ] && [ "$good" -eq $np ]
    ok $? "$order: tdprog at $np ranks, 4 phases: exactly one notification per phase on every rank (rc=$rc)"
    [ "$good" -eq $np ] || sed 's/^/# /' "$d/td.out" "$d/td.err" | head -12

    "${PYTHON3:-python3}" - "$d/rep" "$d/p" $np <<'PY'
import glob, json, os, re, sys
rep, pdir, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
runs = glob.glob(os.path.join(rep, "tdshim-report-*"))
if len(runs) != 1:
    print("# %d report directories" % len(runs)); sys.exit(1)
bad = 0
for r in range(n):
    j = json.load(open(os.path.join(runs[0], "rank-%04d.json" % r)))
    c = dict((k, int(v)) for k, v in re.findall(r"(\w+)=(\d+)", open(os.path.join(pdir, "pcount-%d.txt" % r)).read()))
    tool = (c["Send"], c["bytes_sent"], c["Iprobe"])
    shim = (j["primary"]["sent"], j["primary"]["sent_bytes"], j["polls"]["total"])
    if tool != shim or c["Send"] == 0:
        print("# rank %d: the tool saw (MPI_Send, bytes, MPI_Iprobe) = %s, tdshim %s" % (r, tool, shim))
        bad = 1
sys.exit(bad)
PY
    ok $? "$order: in the same run, the tool and tdshim saw the same sends, bytes and polls on every rank"
done

run_mpi 2 LD_PRELOAD="$PRE$SHIM:$PC" TDSHIM_VERBOSE=1 TDSHIM_REPORT=none TDSHIM_NOTIFY=tag:999 -- \
    "$B/tdprog" probe 1 999 20 >"$d/v.out" 2>"$d/v.err"
grep -q "a PMPI tool is preloaded after tdshim (.*libpcount.so)" "$d/v.err"
ok $? "TDSHIM_VERBOSE names the tool preloaded after tdshim"
run_mpi 2 LD_PRELOAD="$PRE$SHIM" TDSHIM_VERBOSE=1 TDSHIM_REPORT=none TDSHIM_NOTIFY=tag:999 -- \
    "$B/tdprog" probe 1 999 20 >"$d/v.out" 2>"$d/v.err"
! grep -q "PMPI tool is preloaded" "$d/v.err"
ok $? "...and says nothing of the kind without one"

d="$TMPD/ponly"
mkdir -p "$d/p" "$d/rep"
run_mpi 4 LD_PRELOAD="$PRE$SHIM:$PO" TDSHIM_NOTIFY=tag:999 TDSHIM_REPORT=json TDSHIM_REPORT_DIR="$d/rep" \
    PCOUNT_DIR="$d/p" -- "$B/tdprog" probe 4 999 20 >"$d/td.out" 2>"$d/td.err"
rc=$?
good=$(grep -c 'phases 4 notified 4 extra 0 tokens_seen 1 episodes 4$' "$d/td.out")
[ $rc -eq 0 ] && [ "$good" -eq 4 ]
ok $? "a PMPI-only layer after tdshim: tdprog at 4 ranks, one notification per phase on every rank (rc=$rc)"
[ "$good" -eq 4 ] || sed 's/^/# /' "$d/td.out" "$d/td.err" | head -12
"${PYTHON3:-python3}" - "$d/rep" "$d/p" 4 <<'PY'
import glob, json, os, sys
rep, pdir, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
runs = glob.glob(os.path.join(rep, "tdshim-report-*"))
if len(runs) != 1:
    print("# %d report directories" % len(runs)); sys.exit(1)
bad, sent, recv = 0, 0, 0
for r in range(n):
    j = json.load(open(os.path.join(runs[0], "rank-%04d.json" % r)))
    layer = int(open(os.path.join(pdir, "ponly-%d.txt" % r)).read().split("=")[1])
    sent += j["primary"]["sent"]
    recv += j["primary"]["received"]
    if layer < j["primary"]["sent"] or j["primary"]["sent"] == 0:
        print("# rank %d: the layer saw %d PMPI_Send calls, tdshim counted %d primary sends" % (r, layer, j["primary"]["sent"]))
        bad = 1
if sent != recv:
    print("# %d primary messages sent, %d received" % (sent, recv)); bad = 1
sys.exit(bad)
PY
[ $? -eq 0 ] && ! grep -q "without tdshim's header" "$d/td.err"
ok $? "...every message counted on both ends, with its header; the layer saw tdshim's sends"
done_testing
