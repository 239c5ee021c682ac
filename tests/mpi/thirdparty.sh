# Shared by the tests that run programs written by others under tdshim
# (hpcc.sh, assembly.sh, netpipe.sh, lammps.sh, nwchem.sh, starpu.sh,
# hyphy.sh, mumps.sh, tachyon.sh, scalapack.sh, petsc.sh, mpi4py.sh,
# coarrays.sh, meep.sh, memcheck.sh): sourced after tap.sh and mpi-env.sh.

# tp_cfg QUICK FULL: a program's configurations (ALGO[:PIGGYBACK[:IDLE]]):
# make check runs QUICK, bcj and skr header-free everywhere and the other
# algorithms spread over the programs that take longest (bcjrd, xulau:
# starpu; skr with its header, hcda, and xulau at 4 ranks: mumps;
# fourcounter, edod: hpcc; cda: starpu at 4 ranks; scalapack and hyphy:
# bcj and skr header-free only; the cheap ones, lammps and tachyon, run
# every algorithm); make check-long-thirdparty (TP_FULL=1) runs FULL,
# every algorithm on every program
tp_cfg() {
    if [ "${TP_FULL:-0}" = 1 ]; then echo "$2"; else echo "$1"; fi
}
# tp_skip_all N REASON: skip the N planned points and end the script
tp_skip_all() {
    for _ in $(seq "$1"); do skip "$2"; done
    exit 0
}
# tp_need_ompi N PROG PACKAGE: the program Debian builds against Open MPI is
# here and the MPI under test is Open MPI (its libmpi.so.40), else every one
# of the N planned points is skipped (on the CI machine a skip not listed in
# tests/skips-allowed.txt fails the run)
tp_need_ompi() {
    [ -n "$2" ] && [ -x "$2" ] || tp_skip_all "$1" "no program of Debian's $3 here ($2; scripts/deps installs it)"
    [ "$MPI_FLAVOUR" = ompi ] || tp_skip_all "$1" "$2 is Debian's build, linked with Open MPI"
    ldd "$2" 2>/dev/null | grep -q 'libmpi\.so\.40' || tp_skip_all "$1" "$2 is not linked with Open MPI's libmpi.so.40"
}
# facts_point WHAT NATIVE DIR RC: one point: the run in DIR ended (its exit
# status RC 0) and its facts (DIR/facts) are the native run's (NATIVE/facts)
# byte for byte; else the difference and the run's last lines (DIR/out and
# DIR/err) as diagnostics
facts_point() {
    if [ "$4" -eq 0 ] && [ -s "$3/facts" ] && cmp -s "$2/facts" "$3/facts"; then
        ok 0 "$1"
    else
        ok 1 "$1 (rc=$4)"
        diff "$2/facts" "$3/facts" | head -n 6 | cut -c1-100 | sed 's/^/# /'
        cat "$3/out" "$3/err" 2>/dev/null | grep -v '^tdshim: report in' | tail -n 5 | sed 's/^/# /'
    fi
}

# tp_sub LABEL NATIVE DIR RC NP [UNRECEIVED_OK]: one of a configuration's
# runs (an example, a problem; starpu.sh, mumps.sh, coarrays.sh): LABEL is
# added to $differ when the run failed (RC) or its facts are not
# NATIVE/facts (the difference and the run's last lines as diagnostics);
# the primaries its reports count to $totals, or LABEL to $unbal when they
# do not balance (balanced's UNRECEIVED_OK)
tp_sub() {
    if [ "$4" -ne 0 ] || ! cmp -s "$2/facts" "$3/facts"; then
        differ="$differ $1(rc=$4)"
        diff "$2/facts" "$3/facts" | head -n 4 | cut -c1-120 | sed "s/^/# $1: /"
        grep -v '^tdshim: report in' "$3/err" | tail -n 3 | sed "s/^/# $1: /"
    fi
    if tps_b=$(balanced "$3" "$5" "${6:-0}"); then
        totals="$totals $1 ${tps_b%% primaries*};"
    else
        unbal="$unbal $1"
        echo "$tps_b" | sed "s/^/# $1: /"
    fi
}

# tp_close LABEL WHAT: a configuration's two points after its tp_sub runs:
# "LABEL: WHAT" when no run differed, "LABEL: the reports balance" when
# every run's did (both name the runs that did not)
tp_close() {
    [ -z "$differ" ]
    ok $? "$1: $2${differ:+; not:$differ}"
    [ -z "$unbal" ]
    ok $? "$1: the reports balance (primaries:$totals)${unbal:+; not:$unbal}"
}

# tp_shim_all CFG: one configuration (cfg_parse: a, pb; name ALGO-PIGGYBACK)
# of a script that runs all its programs with run_all DIR [VAR=value...]
# (scalapack.sh, petsc.sh): run_all in $TMPD/$name under tdshim (JSON
# reports in each run's directory), then $differ, $unbal and $totals empty
# for its tp_sub calls
tp_shim_all() {
    cfg_parse "$1"
    name="$a-$pb"
    run_all "$TMPD/$name" LD_PRELOAD="$LIB" TDSHIM_ALGO="$a" TDSHIM_PIGGYBACK="$pb" TDSHIM_REPORT=json \
        TDSHIM_REPORT_DIR=.
    differ="" unbal="" totals=""
}

# tp_each DIR [VAR=value...]: the run_all of a script whose programs run
# one after the other, $NP ranks each, every one of $PROGS (scalapack.sh,
# coarrays.sh): in DIR/PROG, which tp_prep PROG DIR/PROG prepares, the
# program tp_exe PROG names, within $TP_TIMEOUT seconds; its out, err and rc
# there, and its facts, which tp_facts DIR/PROG writes (its status: the run
# failed by the program's own account); a run that failed either way is
# named in $failed
tp_each() {
    te_d=$1
    shift
    failed=""
    for p in $PROGS; do
        d="$te_d/$p"
        mkdir -p "$d"
        tp_prep "$p" "$d"
        (cd "$d" && RUN_MPI_TIMEOUT=$TP_TIMEOUT run_mpi $NP "$@" -- "$(tp_exe "$p")" >"$d/out" 2>"$d/err")
        rc=$?
        echo $rc >"$d/rc"
        tp_facts "$d" && [ $rc -eq 0 ] || failed="$failed $p(rc=$rc)"
    done
}

# tp_points LABEL WHAT NATIVE DIR RC NP: a run's two points, facts_point
# "LABEL: WHAT" and "LABEL: the reports balance" (balanced's line; left in
# b for violations_point)
tp_points() {
    facts_point "$1: $2" "$3" "$4" "$5"
    b=$(balanced "$4" "$6")
    ok $? "$1: the reports balance (${b#\# })"
}

# balanced DIR NP [UNRECEIVED_OK]: the run's JSON reports: every primary
# sent received, in messages and bytes, nothing unreceived (with
# UNRECEIVED_OK=1: every primary sent received or found queued at
# MPI_Finalize, for a program that leaves messages unreceived natively);
# with nothing unreceived, the algorithm proved the job's end: every rank
# learned of an episode after its last passive transition (entering
# MPI_Finalize is one), as tds_init.c's finish waits for (a receive the
# reports count but the algorithm does not leaves it unproven:
# tests/mutants/mutants.ini, hf-uncounted);
# prints the totals, MPI_THREAD_MULTIPLE if a rank ran at it (tdshim's
# flat entries then unrun), and the job's violations (these programs poll
# while they work, so the idle notions can judge a rank with work passive:
# the report must say so, not the run break)
balanced() {
    "${PYTHON3:-python3}" - "$1" "$2" "${3:-0}" <<'PY'
import glob, json, os, sys
d, np, unrecv_ok = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
runs = glob.glob(os.path.join(d, "tdshim-report-*"))
if len(runs) != 1:
    print("# %d report directories" % len(runs)); sys.exit(1)
t = dict(sent=0, received=0, sent_bytes=0, received_bytes=0, violations=0, unreceived=0)
unproven, levels = [], set()
for r in range(np):
    j = json.load(open(os.path.join(runs[0], "rank-%04d.json" % r)))
    p = j["primary"]
    for k in ("sent", "received", "sent_bytes", "received_bytes"):
        t[k] += p[k]
    t["violations"] += j["detection"]["violations"]
    t["unreceived"] += p["unreceived_at_finalize"]
    levels.add(j["thread_level"]["provided"])
    eps, lp = j.get("episodes") or [], j.get("last_passive_s")
    last = max((e["t_detect_s"] for e in eps), default=None)
    if last is None or (lp is not None and last < lp):
        unproven.append("rank %d: last episode %s, last passive %s" % (r, last, lp))
    if p["unreceived_at_finalize"] and not unrecv_ok:
        print("# rank %d: %d unreceived" % (r, p["unreceived_at_finalize"]))
        sys.exit(1)
if t["sent"] != t["received"] + t["unreceived"] or t["sent"] == 0 or \
        (t["unreceived"] == 0 and t["sent_bytes"] != t["received_bytes"]) or t["sent_bytes"] < t["received_bytes"]:
    print("# sent %(sent)d (%(sent_bytes)d bytes), received %(received)d (%(received_bytes)d bytes), "
          "%(unreceived)d unreceived" % t)
    sys.exit(1)
if unproven and t["unreceived"] == 0:
    print("# the job's end not proven by the algorithm: " + "; ".join(unproven[:3]))
    sys.exit(1)
# at MPI_THREAD_MULTIPLE tdshim takes its general entries only (tds.fast
# off): said, so that a test's coverage of the flat ones is not assumed
t["mt"] = ", MPI_THREAD_MULTIPLE: general entries only" if "multiple" in levels else ""
print("%(sent)d primaries, %(sent_bytes)d bytes, %(unreceived)d unreceived%(mt)s, %(violations)d violations" % t)
PY
}

# violations_point WHAT BALANCED OUT IDLE: one point: the violations the
# reports count (BALANCED: balanced's line) are the number on the summary
# line at rank 0's MPI_Finalize (in OUT), and the advice never names the
# notion that made them (IDLE) as free of breaches
violations_point() {
    vp_v=$(echo "$2" | sed -n 's/.* \([0-9][0-9]*\) violations$/\1/p')
    vp_said=$(sed -n 's/^tdshim: .* \([0-9][0-9]*\) CONTRACT VIOLATIONS.*/\1/p' "$3")
    case $vp_v in
    '') vp_rc=1 ;;
    0) [ -z "$vp_said" ]; vp_rc=$? ;;
    *) [ "$vp_said" = "$vp_v" ] && ! grep -q "^tdshim: advice: TDSHIM_IDLE=$4 (no breach" "$3"; vp_rc=$? ;;
    esac
    ok $vp_rc "$1: ${vp_v:-?} violations in the reports, ${vp_said:-none} on the summary line"
    [ $vp_rc -eq 0 ] || grep '^tdshim: ' "$3" | grep -v 'report in' | head -n 5 | sed 's/^/# /'
}

# cfg_parse ALGO[:PIGGYBACK[:IDLE]]: sets a, pb (default auto), idle (probe)
cfg_parse() {
    a=${1%%:*} pb=auto idle=probe
    case $1 in *:*) cp_rest=${1#*:} pb=${cp_rest%%:*} ;; esac
    case $1 in *:*:*) idle=${1##*:} ;; esac
}

# hpcc_input N NB P Q: hpcc's input (hpccinf.txt) on stdout: HPL's N in
# NB-wide blocks on a P x Q grid, and the other kernels sized from it
# (hpcc's own example input otherwise; hpcc.sh, memcheck.sh)
hpcc_input() {
    cat <<EOF
HPLinpack benchmark input file
Innovative Computing Laboratory, University of Tennessee
HPL.out      output file name (if any)
8            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
$1          Ns
1            # of NBs
$2           NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
$3            Ps
$4            Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
##### This line (no. 32) is ignored (it serves as a separator). ######
0                               Number of additional problem sizes for PTRANS
1200 10000 30000                values of N
0                               number of additional blocking sizes for PTRANS
40 9 8 13 13 20 16 32 64        values of NB
EOF
}

# melt_input BOX STEPS: LAMMPS's Lennard-Jones melt on stdout: an fcc
# lattice of BOX^3 cells (4 atoms each), STEPS steps, thermodynamics every
# 50 (lammps.sh, memcheck.sh)
melt_input() {
    cat <<EOF
units           lj
atom_style      atomic
lattice         fcc 0.8442
region          box block 0 $1 0 $1 0 $1
create_box      1 box
create_atoms    1 box
mass            1 1.0
velocity        all create 3.0 87287 loop geom
pair_style      lj/cut 2.5
pair_coeff      1 1 1.0 1.0 2.5
neighbor        0.3 bin
neigh_modify    every 20 delay 0 check no
fix             1 all nve
thermo          50
run             $2
EOF
}

# make_reads FILE: the assemblers' input (assembly.sh, bench/ab-assembly.sh):
# a genome of 6 random parts of 8,000 bases, each followed by the same
# 400-base repeat, and 8,000 100-base reads of both strands with 0.4 %
# substitutions, seeded: the same every time
make_reads() {
    "${PYTHON3:-python3}" - "$1" <<'PY'
import random, sys
random.seed(7)
rep = ''.join(random.choice('ACGT') for _ in range(400))
g = ''.join(''.join(random.choice('ACGT') for _ in range(8000)) + rep for _ in range(6))
comp = {'A': 'T', 'C': 'G', 'G': 'C', 'T': 'A'}
with open(sys.argv[1], 'w') as f:
    for i in range(8000):
        p = random.randrange(0, len(g) - 100)
        s = [c if random.random() >= 0.004 else random.choice('ACGT') for c in g[p:p + 100]]
        s = ''.join(s)
        if random.random() < 0.5:
            s = ''.join(comp[c] for c in reversed(s))
        f.write('>r%d\n%s\n' % (i, s))
PY
}
