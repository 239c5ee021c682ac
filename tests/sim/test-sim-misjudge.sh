#!/bin/sh
# Ranks misjudged passive while they work (tdsim --misjudge; TDSHIM_IDLE=spin's
# main error: work between two polls shorter than the spin gap): 1 in 4 polls
# of a rank with a task to run tell its core it is passive, so its sends are
# contract violations until a receive, or until a later poll finds a long gap
# (td_busy). tests/core/test-misjudge does the same for the wave algorithms;
# this covers every algorithm of tdsim --list-algos, the credit ones (cda,
# hcda: they hold sends for credit and need tdsim's driver) included, with
# and without confirmation, over every workload, P drawn in 2..16,
# TDSIM_SCHEDULES (default 200) adversarial schedules per workload.
# No algorithm can be safe when its passivity input is wrong: false
# announcements are counted and reported, never failed. A point fails on a
# core error (PROTOCOL), a phase never announced or a deadlock (LIVENESS),
# or a task not run exactly once (GROUNDTRUTH).
#
# A known core error can be made TAP TODO, one per algorithm and setting in
# KNOWN ("cda:on"): the point is "not ok # TODO" while every violation it
# meets is a PROTOCOL error, and "ok # TODO" (an unexpected pass, reported)
# once shim/core is fixed; remove the entry then. The ones this test found
# (README-sim.md, Findings) are fixed (f60d6b2).
. "$top_srcdir/tests/tap.sh"
SIM="$top_builddir/tests/sim/tdsim"
N=${TDSIM_SCHEDULES:-200}
SMALL="--ranks 2-16 --adversarial --misjudge 4 --p 0.8 --lmax 8 --depth 3 --phases 3 --local-tasks 3 --length 8 --iters 3 --gens 4 --max-events 20000000"
WORKLOADS="spawn tree skrA skrB ring skrC skrD bcj5"
KNOWN=
algos=$("$SIM" --list-algos) || { echo "1..0 # SKIP tdsim --list-algos failed"; exit 1; }
set -- $algos
plan $(($# * 2 + 2))
nw=$(echo $WORKLOADS | wc -w)
all_false=0 all_misj=0
for a in $algos; do
    for c in off on; do
        case " $KNOWN " in *" $a:$c "*) known=1 ;; *) known=0 ;; esac
        bad= other= nbad=0 runs=0 fruns=0 fann=0 per=
        for w in $WORKLOADS; do
            out=$("$SIM" --algo "$a" --workload "$w" $SMALL --confirm "$c" --seed 1 --schedules "$N" 2>&1)
            rc=$?
            line=$(printf '%s\n' "$out" | grep '^summary ')
            if [ $rc -ne 0 ] || [ -z "$line" ]; then
                v=$(printf '%s\n' "$out" | grep -m 1 VIOLATION)
                [ -n "$bad" ] || bad="$w: ${v:-exit $rc: $out}"
                case $v in "VIOLATION PROTOCOL: "*) ;; *) other="$w: ${v:-exit $rc}" ;; esac
                per="$per $w -" nbad=$((nbad + 1))
                continue
            fi
            f=$(printf '%s\n' "$line" | sed -n 's/.* false_runs=\([0-9]*\).*/\1/p')
            k=$(printf '%s\n' "$line" | sed -n 's/.* false_ann=\([0-9]*\).*/\1/p')
            m=$(printf '%s\n' "$line" | sed -n 's/.* misjudged=\([0-9.]*\).*/\1/p')
            runs=$((runs + N)) fruns=$((fruns + f)) fann=$((fann + k))
            all_misj=$(awk -v a="$all_misj" -v b="$m" -v n="$N" 'BEGIN { printf "%d", a + b * n }')
            per="$per $w $f"
        done
        all_false=$((all_false + fann))
        what="$a --confirm $c: $runs runs ($nw workloads x $N, P 2..16), no core error, every phase announced, every task run once; $fruns with a false announcement ($fann in all)"
        [ $nbad -eq 0 ] || what="$a --confirm $c: a violation on $nbad of $nw workloads within $N schedules ($runs runs of the others: $fruns with a false announcement)"
        if [ $known -eq 1 ] && [ -n "$bad" ] && [ -z "$other" ]; then
            tap_n=$((tap_n + 1))
            echo "not ok $tap_n - $what # TODO core error under misjudgment with confirmation, see tests/sim/README-sim.md (Findings)"
            diag "$bad"
        elif [ $known -eq 1 ] && [ -z "$bad" ]; then
            tap_n=$((tap_n + 1))
            echo "ok $tap_n - $what # TODO known core error no longer seen: remove $a:$c from KNOWN"
        else
            ok "$([ -z "$bad" ]; echo $?)" "$what"
            [ -z "$bad" ] || diag "${other:-$bad}"
        fi
        diag "runs with a false announcement per workload (of $N; - a violation):$per"
    done
done
# the core errors it found (README-sim.md, Findings; fixed in f60d6b2),
# replayed: cda and hcda with confirmation at P=2, and hcda's rarer one
# without (about 1 in 20,000 spawn schedules)
out=$({ "$SIM" --algo cda --workload skrC --ranks 2 --misjudge 4 --confirm on --seed 26 &&
        "$SIM" --algo hcda --workload skrC --ranks 2 --misjudge 4 --confirm on --seed 26 &&
        "$SIM" --algo hcda --workload spawn $SMALL --seed 118807 --schedules 1; } 2>&1)
rc=$?
ok $rc "the replays of the core errors found (cda, hcda skrC P=2 seed 26 with confirmation; hcda spawn seed 118807) run clean"
[ $rc -eq 0 ] || diag "$(printf '%s\n' "$out" | grep -m 1 VIOLATION)"
# the mode does something: ranks were misjudged and false announcements counted
[ "$all_misj" -gt 0 ] && [ "$all_false" -gt 0 ]
ok $? "ranks were misjudged ($all_misj times) and the oracle counted $all_false false announcements without failing them"
done_testing
