#!/bin/bash
# bench/ab-libs.sh OLD.so NEW.so [ROUNDS] — native, OLD and NEW libtdshim
# alternating in one invocation (these VMs are noisy and bimodal): each
# round runs the 8-byte message rate and ping-pong under all three, and the
# end prints median and best per side. Run from a build directory (it uses
# bench/msgrate and bench/pingpong there). Used for bench/RESULTS.md
# "PMPI entry points".
#   MSGRATE_ARGS="--dup 1": extra msgrate options, every side
#   TDSHIM_ALGO=skr: the algorithm of both libraries (default: theirs)
#   PINGPONG_ARGS="--test-loop": extra pingpong options, every side
# Also prints, per library, the quartiles of the per-round ratios of its
# rate to native's and of the one-way time it adds (the same round's).
set -u
old=$1 new=$2 rounds=${3:-15}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$(mktemp)
for i in $(seq 1 "$rounds"); do
    for v in native old new; do
        case $v in native) P="" ;; old) P="-x LD_PRELOAD=$old" ;; new) P="-x LD_PRELOAD=$new" ;; esac
        [ "$v" = native ] || P="$P ${TDSHIM_ALGO:+-x TDSHIM_ALGO=$TDSHIM_ALGO}"
        # shellcheck disable=SC2086
        m=$(timeout 60 mpirun -n 2 $P -x TDSHIM_REPORT=none bench/msgrate --bytes 8 ${MSGRATE_ARGS:-} 2>/dev/null | awk '/^msgrate/{print $3}')
        # shellcheck disable=SC2086
        p=$(timeout 60 mpirun -n 2 $P -x TDSHIM_REPORT=none bench/pingpong --min 8 --max 8 ${PINGPONG_ARGS:-} 2>/dev/null | awk '/^pingpong/{print $3}')
        echo "$v ${m:-0} ${p:-0}" >>"$out"
        echo "round $i $v: msgrate ${m:-?} /s, one-way ${p:-?} us" >&2
    done
done
python3 - "$out" <<'PY'
import statistics as S, sys
d = {}
for l in open(sys.argv[1]):
    v, m, p = l.split()
    d.setdefault(v, []).append((float(m), float(p)))
for v in ("native", "old", "new"):
    ms = [x[0] for x in d[v]]; ps = [x[1] for x in d[v]]
    print("%-6s runs %d  msgrate median %.2f M/s best %.2f M/s  one-way median %.3f us best %.3f us"
          % (v, len(ms), S.median(ms) / 1e6, max(ms) / 1e6, S.median(ps), min(ps)))
for v in ("old", "new"):
    pairs = [(a, n) for a, n in zip(d[v], d["native"]) if a[0] > 0 and n[0] > 0]
    if len(pairs) >= 2:
        r = S.quantiles([a[0] / n[0] for a, n in pairs], n=4)
        t = S.quantiles([(a[1] - n[1]) * 1000 for a, n in pairs], n=4)
        print("%-6s per round: rate / native Q1 %.3f median %.3f Q3 %.3f; one way added Q1 %+.0f median %+.0f Q3 %+.0f ns"
              % (v, r[0], r[1], r[2], t[0], t[1], t[2]))
PY
rm -f "$out"
