#!/bin/sh
# Wall time of an example under the settings measure mode's advice names,
# against the example's own termination (--native-stop, no tdshim), in one
# invocation, runs alternating (issue 37: "within 1.10x of --native-stop",
# median of alternating runs). Per algorithm: the median and quartiles of
# the program's RESULT time= (slowest rank's run time) on each side, the
# ratio of the medians, and the runs whose RESULT line was not ok (a failed
# run counts: it is not dropped).
#
#   bench/recipe-wall.sh BUILDDIR NP RUNS "SETTINGS" EXAMPLE ARGS...
# e.g.
#   bench/recipe-wall.sh _build/check 2 11 "TDSHIM_IDLE=test TDSHIM_IGNORE_TAGS=1 TDSHIM_IGNORE_EMPTY=1" \
#       work_steal --phases 10 --work-us 10
# ALGOS (default "bcj skr") chooses the algorithms.
set -u
B=${1:?usage: bench/recipe-wall.sh BUILDDIR NP RUNS SETTINGS EXAMPLE ARGS...}
NP=$2 RUNS=$3 SET=$4 EXN=$5
shift 5
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_mpi_yield_when_idle=1
L="$B/shim/.libs/libtdshim.so"
EX="$B/examples/$EXN"
T=$(mktemp -d) && trap 'rm -rf "$T"' EXIT
[ -x "$EX" ] && [ -f "$L" ] || { echo "recipe-wall: build $B first" >&2; exit 2; }
time_of() { sed -n 's/^RESULT .* time=\([0-9.]*\) .*/\1/p' "$1"; }
echo "| algorithm | native median (Q1-Q3) s | tdshim median (Q1-Q3) s | ratio of medians | runs not ok (native / tdshim) |"
echo "|---|---|---|---|---|"
for algo in ${ALGOS:-bcj skr}; do
    : >"$T/n" && : >"$T/s"
    bad_n=0 bad_s=0
    for i in $(seq "$RUNS"); do
        timeout 120 mpirun -np "$NP" "$EX" --native-stop "$@" >"$T/o" 2>/dev/null
        grep -q ' ok$' "$T/o" || bad_n=$((bad_n + 1))
        time_of "$T/o" >>"$T/n"
        # shellcheck disable=SC2086
        timeout 120 mpirun -np "$NP" -x LD_PRELOAD="$L" -x TDSHIM_ALGO="$algo" -x TDSHIM_NOTIFY=tag:999 \
            -x TDSHIM_REPORT=none $(for v in $SET; do printf -- '-x %s ' "$v"; done) \
            "$EX" --done-tag 999 "$@" >"$T/o" 2>/dev/null
        grep -q ' early=0 .* ok$' "$T/o" || bad_s=$((bad_s + 1))
        time_of "$T/o" >>"$T/s"
    done
    python3 - "$T/n" "$T/s" "$algo" "$bad_n" "$bad_s" <<'PY'
import statistics as st, sys
def q(f):
    v = sorted(float(x) for x in open(f) if x.strip())
    if len(v) < 4:
        return None
    qs = st.quantiles(v, n=4)
    return qs[1], qs[0], qs[2]
n, s = q(sys.argv[1]), q(sys.argv[2])
if not n or not s:
    print("| %s | too few runs | | | %s / %s |" % (sys.argv[3], sys.argv[4], sys.argv[5]))
else:
    print("| %s | %.3f (%.3f-%.3f) | %.3f (%.3f-%.3f) | %.2f | %s / %s |" % (
        sys.argv[3], n[0], n[1], n[2], s[0], s[1], s[2], s[0] / n[0], sys.argv[4], sys.argv[5]))
PY
done
