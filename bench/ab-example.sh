#!/bin/sh
# An example's wall time natively (its own termination, --native-stop) and
# under several builds of libtdshim stopping on the notification, runs
# alternating in one invocation (these VMs are noisy: compare within one
# invocation only). Per side: quartiles of the program's RESULT time= and
# the ratio of medians to native; a run whose RESULT line is not
# "early=0 ... ok" is named on stderr and still counted.
#
#   bench/ab-example.sh BUILDDIR ROUNDS "SETTINGS" "LIB.so..." EXAMPLE ARGS...
# e.g. (issue 37, 2026-11-29):
#   bench/ab-example.sh _build/lead 11 "TDSHIM_ALGO=bcj TDSHIM_IDLE=test TDSHIM_IGNORE_TAGS=1 TDSHIM_IGNORE_EMPTY=1" \
#       "before.so after.so" work_steal --phases 100 --work-us 0 --linger-ms 0
# NP (default 2) sets the ranks. OWNSTOP="ALGO..." adds, for each ALGO, a
# side where the first library runs under TDSHIM_ALGO=ALGO (none: no
# detection at all) and the program stops by its own count (--native-stop):
# what tdshim's wrapped calls cost without waiting for a notification.
# PASSTHRU="SET..." adds, for each SET ("all" or a comma-separated list of
# MPI calls without "MPI_", e.g. Test,Testany), a side stopping by its own
# count under the first library and SETTINGS with bench/passthru.c's
# interposer preloaded before it, which sends the calls of SET straight to
# the MPI library: what those wrappers cost (compare with OWNSTOP under the
# same algorithm; only a set that covers the program's loop is consistent).
set -u
B=${1:?usage: bench/ab-example.sh BUILDDIR ROUNDS SETTINGS LIBS EXAMPLE ARGS...}
R=$2 SET=$3 LIBS=$4 EX=$5
shift 5
NP=${NP:-2}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
[ -x "$B/examples/$EX" ] || { echo "ab-example: build $B first" >&2; exit 2; }
T=$(mktemp -d) && trap 'rm -rf "$T"' EXIT
if [ -n "${PASSTHRU:-}" ]; then
    mpicc -O2 -shared -fPIC -o "$T/passthru.so" "$(dirname "$0")/passthru.c" -ldl ||
        { echo "ab-example: cannot build bench/passthru.c" >&2; exit 2; }
fi
i=0
for l in $LIBS; do
    [ -f "$l" ] || { echo "ab-example: no $l" >&2; exit 2; }
    i=$((i + 1))
    cp "$l" "$T/lib$i.so"
done
for _ in $(seq "$R"); do
    mpirun -np "$NP" "$B/examples/$EX" --native-stop "$@" | sed -n 's/.*time=\([0-9.]*\) .*/\1/p' >>"$T/native"
    i=0
    for l in $LIBS; do
        i=$((i + 1))
        # shellcheck disable=SC2046
        o=$(mpirun -np "$NP" -x LD_PRELOAD="$T/lib$i.so" -x TDSHIM_NOTIFY=tag:999 -x TDSHIM_REPORT=none \
            $(for v in $SET; do printf -- '-x %s ' "$v"; done) "$B/examples/$EX" --done-tag 999 "$@" 2>&1 | grep RESULT)
        echo "$o" | grep -q 'early=0 .* ok$' || echo "ab-example: not ok under $l: $o" >&2
        echo "$o" | sed -n 's/.*time=\([0-9.]*\) .*/\1/p' >>"$T/lib$i"
    done
    for a in ${OWNSTOP:-}; do
        # shellcheck disable=SC2046
        o=$(mpirun -np "$NP" -x LD_PRELOAD="$T/lib1.so" -x TDSHIM_NOTIFY=tag:999 -x TDSHIM_REPORT=none \
            $(for v in $SET; do case $v in TDSHIM_ALGO=*) ;; *) printf -- '-x %s ' "$v" ;; esac; done) \
            -x TDSHIM_ALGO="$a" "$B/examples/$EX" --native-stop "$@" 2>&1 | grep RESULT)
        echo "$o" | grep -q ' ok$' || echo "ab-example: not ok, own stop under $a: $o" >&2
        echo "$o" | sed -n 's/.*time=\([0-9.]*\) .*/\1/p' >>"$T/own-$a"
    done
    k=0
    for p in ${PASSTHRU:-}; do
        k=$((k + 1))
        # shellcheck disable=SC2046
        o=$(mpirun -np "$NP" -x LD_PRELOAD="$T/passthru.so:$T/lib1.so" -x PASSTHRU="$p" -x TDSHIM_NOTIFY=tag:999 \
            -x TDSHIM_REPORT=none $(for v in $SET; do printf -- '-x %s ' "$v"; done) \
            "$B/examples/$EX" --native-stop "$@" 2>&1 | grep RESULT)
        echo "$o" | grep -q ' ok$' || echo "ab-example: not ok, own stop with $p passed through: $o" >&2
        echo "$o" | sed -n 's/.*time=\([0-9.]*\) .*/\1/p' >>"$T/pass-$k"
    done
done
python3 - "$T" "$LIBS" "${OWNSTOP:-}" "${PASSTHRU:-}" <<'PY'
import statistics as st, sys
d, libs, own, pas = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), sys.argv[4].split()
sides = [("native", "native")] + [("lib%d" % (i + 1), l) for i, l in enumerate(libs)]
sides += [("own-" + a, "own stop, TDSHIM_ALGO=" + a) for a in own]
sides += [("pass-%d" % (i + 1), "own stop, passed: " + p) for i, p in enumerate(pas)]
v = {k: sorted(float(x) for x in open(d + "/" + k) if x.strip()) for k, _ in sides}
if any(len(x) < 4 for x in v.values()):
    sys.exit("ab-example: too few runs")
q = {k: st.quantiles(x, n=4) for k, x in v.items()}
for k, name in sides:
    print("%-30s n=%d Q1 %.6f median %.6f Q3 %.6f s, median / native %.3f" % (
        name[-30:], len(v[k]), q[k][0], q[k][1], q[k][2], q[k][1] / q["native"][1]))
PY
