#!/bin/sh
# What tdshim costs two asynchronous programs written by others, Debian's
# genome assemblers ABySS (ABYSS-P) and Ray, on tests/mpi/assembly.sh's
# input: each run natively and under each setting, alternating in one
# invocation (these VMs are noisy: compare within one invocation only).
# Prints every run's wall time, then per program and side the median and
# quartiles over the rounds and the median's ratio to native's. A run that
# fails is named on stderr and left out.
#
#   bench/ab-assembly.sh BUILDDIR ROUNDS "SETTING..." [PROGRAMS]
# SETTING: ALGO[:PIGGYBACK[:IDLE]] (default auto, probe; measure mode, no
# report); PROGRAMS: "abyss ray" (default); NP (default 2) ranks; LIBS:
# libraries to compare (default the build's), each setting run under each,
# named SETTING@N.
# e.g. bench/ab-assembly.sh _build/lead 5 "bcj bcj:auto:pcontrol"
#      LIBS="before.so after.so" bench/ab-assembly.sh _build/lead 5 bcj ray
set -u
B=${1:?usage: bench/ab-assembly.sh BUILDDIR ROUNDS "SETTING..." [PROGRAMS]}
R=${2:?rounds}
SETS=${3:?settings}
PROGS=${4:-abyss ray}
NP=${NP:-2}
top=$(cd "$(dirname "$0")/.." && pwd)
LIB=$(cd "$B/shim/.libs" 2>/dev/null && pwd)/libtdshim.so
[ -f "$LIB" ] || { echo "ab-assembly: build $B first" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
T=$(mktemp -d) && trap 'rm -rf "$T"' EXIT
# shellcheck source=../tests/mpi/thirdparty.sh
. "$top/tests/mpi/thirdparty.sh"
make_reads "$T/reads.fa"
cmd() {
    case $1 in
    abyss) echo "/usr/lib/abyss/ABYSS-P -k31 $T/reads.fa -o $T/w/contigs.fa" ;;
    ray) echo "Ray -k 31 -s $T/reads.fa -o $T/w/ray" ;;
    esac
}
for p in $PROGS; do
    c=$(cmd "$p")
    [ -n "$c" ] && [ -x "$(command -v "${c%% *}")" ] || { echo "ab-assembly: no $p (scripts/deps installs it)" >&2; exit 2; }
done
SIDES=$SETS
if [ -n "${LIBS:-}" ]; then
    SIDES= i=0
    for l in $LIBS; do
        [ -f "$l" ] || { echo "ab-assembly: no $l" >&2; exit 2; }
        i=$((i + 1))
        echo "@$i: $l"
        for s in $SETS; do SIDES="$SIDES $s@$i"; done
    done
fi
: >"$T/times"
for r in $(seq "$R"); do
    for p in $PROGS; do
        for s in native $SIDES; do
            rm -rf "$T/w" && mkdir -p "$T/w"
            x=""
            if [ "$s" != native ]; then
                cfg_parse "${s%@*}"
                l=$LIB
                [ -z "${LIBS:-}" ] || l=$(echo "$LIBS" | tr ' ' '\n' | grep . | sed -n "${s##*@}p")
                x="-x LD_PRELOAD=$l -x TDSHIM_REPORT=none -x TDSHIM_ALGO=$a -x TDSHIM_PIGGYBACK=$pb -x TDSHIM_IDLE=$idle"
            fi
            t0=$(date +%s.%N)
            # shellcheck disable=SC2046,SC2086
            if (cd "$T/w" && mpirun -np "$NP" $x $(cmd "$p") >"$T/out" 2>&1); then
                t1=$(date +%s.%N)
                echo "$p $s $(echo "$t1 - $t0" | bc)" | tee -a "$T/times"
            else
                echo "ab-assembly: round $r, $p, $s failed" >&2
            fi
        done
    done
done
echo "# program setting: median [Q1-Q3] s, median / native's (rounds)"
"${PYTHON3:-python3}" - "$T/times" <<'PY'
import statistics, sys
t = {}
for l in open(sys.argv[1]):
    p, s, v = l.split()
    t.setdefault((p, s), []).append(float(v))
for (p, s), v in t.items():
    q = statistics.quantiles(v, n=4) if len(v) > 1 else [v[0]] * 3
    nat = statistics.median(t.get((p, "native"), [float("nan")]))
    print("%s %s: %.2f [%.2f-%.2f] s, %.3f (%d)" % (p, s, statistics.median(v), q[0], q[2],
                                                     statistics.median(v) / nat, len(v)))
PY
