#!/bin/sh
# Two genome assemblers written by others under tdshim, as Debian builds
# them against Open MPI (scripts/deps installs abyss and ray): ABySS's
# ABYSS-P and Ray. Both are asynchronous message-driven programs of the
# kind tdshim is for: each rank loops, polls with MPI_Iprobe (MPI_ANY_SOURCE,
# MPI_ANY_TAG) and receives what it found while it works, sends small
# messages with MPI_Send/MPI_Isend, and runs its own termination protocol
# (ABySS: per-phase checkpoints; Ray: RayPlatform's master/slave states).
#
# The input is made here: a genome of 6 random parts, each followed by the
# same 400-base repeat, and 100-base reads from both strands with 0.4 %
# substitutions (seeded: the same every run). Every run must end as
# natively, and what it found must be native's: ABySS's contigs (each
# contig's sequence as the lesser of it and its reverse complement, with
# its length and k-mer coverage, sorted: their order and names depend on
# timing, natively too); Ray's k-mer coverage distribution, de Bruijn
# graph degree distribution, graph and sequence partitions and seed
# lengths (its contigs depend on timing natively: two native runs beside
# two busy loops gave other contigs than three quiet ones, and tdshim's
# runs other ones again). The reports balance (messages Ray leaves queued at its end,
# natively too, counted as unreceived) and their violations are on the
# summary line (both programs poll while they work).
#
# Ray under the defaults found the report writer's quadratic summary: 644,418
# episodes in 52 s, and rank 0 in MPI_Finalize for more than 15 minutes
# (2026-12-02; tests/report/test-writer.sh 7 now). A Ray run takes 22 s
# of both cores here, whatever the input's size: make check runs ABySS
# at 2 ranks (ASSEMBLY_ABYSS2; ASSEMBLY_ABYSS4 adds 4-rank runs, for
# machines with 4 cores) and
# make check-long-assembly Ray as well (ASSEMBLY_RAY, default none).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
. "$top_srcdir/tests/mpi/thirdparty.sh"
AB2=${ASSEMBLY_ABYSS2:-"bcj skr:none cda xulau bcj:auto:test"}
# none at 4 ranks by default: 4 ABySS ranks on this VM's 2 cores run for
# more than 10 minutes natively (each rank polls without yielding)
AB4=${ASSEMBLY_ABYSS4:-}
RAY2=${ASSEMBLY_RAY:-}
n=0
for _ in $AB2 $AB4 $RAY2; do n=$((n + 3)); done
npoints=$((n + 1 + $([ -n "$RAY2" ] && echo 2 || echo 0)))
plan $npoints
ABYSS=${ABYSS_P:-/usr/lib/abyss/ABYSS-P}
RAY=${RAY:-$(command -v Ray)}
tp_need_ompi $npoints "$ABYSS" abyss
if [ -n "$RAY2" ]; then
    [ -n "$RAY" ] && ldd "$RAY" 2>/dev/null | grep -q 'libmpi\.so\.40' ||
        tp_skip_all $npoints "no Ray linked with Open MPI (scripts/deps installs Debian's ray)"
fi

make_reads "$TMPD/reads.fa"
# contigs FASTA: the facts of its contigs (above), one a line
contigs() {
    "${PYTHON3:-python3}" - "$1" <<'PY'
import sys
comp = {'A': 'T', 'C': 'G', 'G': 'C', 'T': 'A', 'N': 'N'}
out = []
for l in open(sys.argv[1]):
    l = l.strip()
    if l.startswith('>'):
        out.append([l.split()[1:], ''])
    elif out:
        out[-1][1] += l
for s, h in sorted((min(s, ''.join(comp[c] for c in reversed(s))), ' '.join(h)) for h, s in out):
    print(h, s)
PY
}
# assemble PROG NP NAME [VAR=value...]: one run in $TMPD/NAME, its facts in
# $TMPD/NAME/facts
assemble() {
    as_p=$1 as_n=$2 d="$TMPD/$3"
    shift 3
    mkdir -p "$d"
    case $as_p in
    abyss)
        # ABySS races with itself, natively too (1 run of 19 and 1 of 15 on
        # 2026-12-02, nothing preloaded): a rank sends a message too long to
        # be buffered (MPI_Send of 4,900 bytes; Open MPI buffers 4,040) while
        # the other sits in MPI_Allreduce with its one standing receive full
        # of the previous one. Such a run hangs until the timeout (124) and
        # is run once more: a hang of tdshim's making would come back
        for as_try in 1 2; do
            (cd "$d" && RUN_MPI_TIMEOUT=150 run_mpi "$as_n" "$@" -- "$ABYSS" -k31 "$TMPD/reads.fa" \
                -o contigs.fa >"$d/out" 2>&1)
            as_rc=$?
            [ $as_rc -eq 124 ] && [ $as_try = 1 ] || break
            diag "$3: ABySS hung (timeout; its own race, natively 1 run in about 15): run again"
            rm -rf "$d"/tdshim-report-* "$d/contigs.fa"
        done
        (exit $as_rc) ;;
    ray) (cd "$d" && RUN_MPI_TIMEOUT=300 run_mpi "$as_n" "$@" -- "$RAY" -k 31 -s "$TMPD/reads.fa" -o ray \
        >"$d/out" 2>&1) ;;
    esac
    as_rc=$?
    : >"$d/facts"
    if [ "$as_p" = abyss ]; then
        [ -s "$d/contigs.fa" ] && contigs "$d/contigs.fa" >"$d/facts"
    else
        for f in CoverageDistribution.txt CoverageDistributionAnalysis.txt degreeDistribution.txt \
            GraphPartition.txt SeedLengthDistribution.txt NumberOfSequences.txt; do
            [ -s "$d/ray/$f" ] && cat "$d/ray/$f" >>"$d/facts" || { : >"$d/facts"; break; }
        done
    fi
    return $as_rc
}

# one native run per program, at 2 ranks (the 4-rank runs are compared with
# it too: an assembly depends on its reads and k, not on the ranks)
for prog in abyss $([ -n "$RAY2" ] && echo ray); do
    assemble "$prog" 2 "$prog-native"
    rc=$?
    nf=$(grep -c . "$TMPD/$prog-native/facts")
    [ $rc -eq 0 ] && [ "$nf" -ge 5 ] || rc=1
    ok $rc "$prog native, 2 ranks: ends, $nf lines of facts"
    [ $rc -eq 0 ] || tail -n 5 "$TMPD/$prog-native/out" | sed 's/^/# /'
done
for run in abyss:2 abyss:4 ray:2; do
    prog=${run%:*} np=${run#*:}
    case $run in abyss:2) cfgs=$AB2 ;; abyss:4) cfgs=$AB4 ;; ray:2) cfgs=$RAY2 ;; esac
    for cfg in $cfgs; do
        cfg_parse "$cfg"
        name="$prog-$np-$a-$pb-$idle"
        assemble "$prog" "$np" "$name" LD_PRELOAD="$LIB" TDSHIM_ALGO="$a" TDSHIM_PIGGYBACK="$pb" \
            TDSHIM_IDLE="$idle" TDSHIM_REPORT=text,json TDSHIM_REPORT_DIR="$TMPD/$name"
        rc=$?
        what="$prog, $np ranks, $a, piggyback $pb, idle $idle"
        facts_point "$what: ends, what it found native's ($(grep -c . "$TMPD/$name/facts") lines)" \
            "$TMPD/$prog-native" "$TMPD/$name" $rc
        b=$(balanced "$TMPD/$name" "$np" "$([ "$prog" = ray ] && echo 1)")
        ok $? "$what: the reports balance (${b#\# })"
        violations_point "$what" "$b" "$TMPD/$name/out" "$idle"
        grep -h '^tdshim: .*wall' "$TMPD/$name/out" | cut -c1-200 | sed 's/^/# /'
    done
done
[ -z "$RAY2" ] || {
    # the report of Ray's run: written, and a size that does not grow with its episodes
    d=$(ls -d "$TMPD"/ray-2-*/tdshim-report-*/ 2>/dev/null | head -n 1)
    kb=$(du -sk "$d" 2>/dev/null | cut -f1)
    [ -n "$d" ] && [ -s "$d/summary.txt" ] && [ "${kb:-99999}" -lt 20000 ]
    ok $? "Ray's report: summary.txt written, ${kb:-?} KiB in all"
}
