#!/bin/sh
# A program's wall time natively and under libtdshim with several settings,
# runs alternating in one invocation (these VMs are noisy: compare within
# one invocation only), timed around mpirun (the launch included: the same
# on every side). Per side: quartiles in ms and the ratio of medians to
# native; a run that fails is named on stderr and not counted.
#
#   bench/ab-prog.sh LIB.so ROUNDS NP "SETTINGS|SETTINGS..." PROG ARGS...
# e.g. (2026-12-04, the third-party drivers of tests/mpi):
#   bench/ab-prog.sh _build/lead/shim/.libs/libtdshim.so 11 2 \
#       "TDSHIM_ALGO=bcj|TDSHIM_ALGO=skr TDSHIM_PIGGYBACK=none" _build/lead/tests/mpi/tachyscene 20 192
# Each SETTINGS is a space-separated list of VAR=value exported to the
# ranks with LD_PRELOAD=LIB.so and TDSHIM_REPORT=none. Ranks are bound to
# cores (--bind-to core) when NP is at most the number of cores.
set -u
L=${1:?usage: bench/ab-prog.sh LIB.so ROUNDS NP "SETTINGS|..." PROG ARGS...}
R=$2 NP=$3 SIDES=$4
shift 4
[ -f "$L" ] || { echo "ab-prog: no $L" >&2; exit 2; }
L=$(cd "$(dirname "$L")" && pwd)/$(basename "$L")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
bind="--bind-to core"
[ "$NP" -le "$(nproc)" ] || bind="--bind-to none"
T=$(mktemp -d) && trap 'rm -rf "$T"' EXIT
ms() { date +%s%N | cut -c1-13; }
i=0
while [ $i -lt "$R" ]; do
    i=$((i + 1))
    s=$(ms)
    if mpirun -np "$NP" $bind "$@" </dev/null >/dev/null 2>"$T/err"; then echo "native $(($(ms) - s))" >>"$T/t"; else
        echo "ab-prog: round $i, native failed: $(tail -n 1 "$T/err")" >&2; fi
    k=0
    echo "$SIDES" | tr '|' '\n' >"$T/sides"
    while read -r side; do
        k=$((k + 1))
        xs="-x LD_PRELOAD=$L -x TDSHIM_REPORT=none"
        for v in $side; do xs="$xs -x $v"; done
        s=$(ms)
        # shellcheck disable=SC2086
        if mpirun -np "$NP" $bind $xs "$@" </dev/null >/dev/null 2>"$T/err"; then echo "$k $(($(ms) - s))" >>"$T/t"; else
            echo "ab-prog: round $i, $side failed: $(tail -n 1 "$T/err")" >&2; fi
    done <"$T/sides"
done
"${PYTHON3:-python3}" - "$T/t" "$T/sides" <<'PY'
import statistics as st, sys
names = ["native"] + [l.strip() for l in open(sys.argv[2]) if l.strip()]
d = {}
for l in open(sys.argv[1]):
    k, v = l.split()
    d.setdefault("native" if k == "native" else names[int(k)], []).append(int(v))
base = st.median(d.get("native", [0])) or float("nan")
for n in names:
    v = sorted(d.get(n, []))
    if len(v) < 2:
        print("%-50s too few runs (%d)" % (n, len(v))); continue
    q = st.quantiles(v, n=4)
    print("%-50s Q1 %6.0f  median %6.0f  Q3 %6.0f ms  (%d runs)  / native %.3f" % (n, q[0], st.median(v), q[2], len(v), st.median(v) / base))
PY
