#!/bin/sh
# What tdshim costs a third-party program: the HPC Challenge suite
# (Debian's hpcc) natively and under each setting, runs alternating in one
# invocation (these VMs are noisy: compare within one invocation only).
# Per side and kernel: the median of hpcc's own figure over the rounds and
# its ratio to native's median (rates: above 1 is faster; latencies: above
# 1 is slower). A run that fails, or whose summary says Success=0 or counts
# RandomAccess errors, is named on stderr and left out.
#
#   bench/ab-hpcc.sh BUILDDIR ROUNDS "SETTING..." [N]
# SETTING: ALGO[:PIGGYBACK[:IDLE[:NOTIFY]]] (TDSHIM_ALGO, TDSHIM_PIGGYBACK,
# TDSHIM_IDLE, TDSHIM_NOTIFY; default auto, probe, none: measure mode), no
# report; N: HPL's matrix order (default 1000); NP (default 2) ranks on a
# 1 x NP grid; LIBS: libraries to compare (default the build's), each
# setting run under each, a column per pair.
# e.g. bench/ab-hpcc.sh _build/lead 11 "bcj skr:none"
#      LIBS="before.so after.so" bench/ab-hpcc.sh _build/lead 11 "skr:none:probe:tag:9999"
set -u
B=${1:?usage: bench/ab-hpcc.sh BUILDDIR ROUNDS "SETTING..." [N]}
R=${2:?rounds}
SETS=${3:?settings}
N=${4:-1000}
NP=${NP:-2}
LIB="$B/shim/.libs/libtdshim.so"
[ -f "$LIB" ] || { echo "ab-hpcc: build $B first" >&2; exit 2; }
HPCC=$(command -v hpcc) || { echo "ab-hpcc: no hpcc (apt-get install hpcc)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
T=$(mktemp -d) && trap 'rm -rf "$T"' EXIT
LIB=$(cd "$(dirname "$LIB")" && pwd)/libtdshim.so
LIBS=${LIBS:-$LIB}
i=0
for l in $LIBS; do
    [ -f "$l" ] || { echo "ab-hpcc: no $l" >&2; exit 2; }
    i=$((i + 1))
    cp "$l" "$T/lib$i.so"
done
NLIB=$i
# hpcc's example input, HPL's order N in 80-wide blocks on 1 x NP
zcat -f /usr/share/doc/hpcc/examples/_hpccinf.txt 2>/dev/null |
    sed -e "6s/^[0-9]* /$N /" -e "11s/^[0-9]* /1 /" -e "12s/^[0-9]* /$NP /" >"$T/hpccinf.txt"
[ -s "$T/hpccinf.txt" ] || { echo "ab-hpcc: no /usr/share/doc/hpcc/examples/_hpccinf.txt" >&2; exit 2; }
KEYS="HPL_Tflops PTRANS_GBs MPIRandomAccess_GUPs MPIRandomAccess_LCG_GUPs MPIFFT_Gflops
      AvgPingPongLatency_usec AvgPingPongBandwidth_GBytes NaturallyOrderedRingLatency_usec
      NaturallyOrderedRingBandwidth_GBytes"
# one SIDE NAME [mpirun options]: a run, its summary's figures appended to $T/NAME
one() {
    name=$1; shift
    d="$T/run" && rm -rf "$d" && mkdir "$d" && cp "$T/hpccinf.txt" "$d/" &&
        (cd "$d" && timeout 300 mpirun -np "$NP" "$@" "$HPCC" >out 2>&1)
    rc=$?
    f="$d/hpccoutf.txt"
    if [ $rc -ne 0 ] || ! grep -qx 'Success=1' "$f" 2>/dev/null || ! grep -qx 'MPIRandomAccess_Errors=0' "$f"; then
        echo "ab-hpcc: $name: run failed (rc=$rc)" >&2
        return
    fi
    line=
    for k in $KEYS; do line="$line $(sed -n "s/^$k=//p" "$f")"; done
    echo "$line" >>"$T/$name"
}
for _ in $(seq "$R"); do
    one native
    for s in $SETS; do
        a=${s%%:*} rest=${s#"$a"} rest=${rest#:}
        pb=${rest%%:*} rest=${rest#"$pb"} rest=${rest#:}
        idle=${rest%%:*} nt=${rest#"$idle"} nt=${nt#:}
        for i in $(seq "$NLIB"); do
            name=$s
            [ "$NLIB" -gt 1 ] && name="$s@$i"
            one "$name" -x LD_PRELOAD="$T/lib$i.so" -x TDSHIM_ALGO="$a" -x TDSHIM_PIGGYBACK="${pb:-auto}" \
                -x TDSHIM_IDLE="${idle:-probe}" -x TDSHIM_NOTIFY="${nt:-none}" -x TDSHIM_REPORT=none
        done
    done
done
sides=
for s in $SETS; do
    if [ "$NLIB" -gt 1 ]; then for i in $(seq "$NLIB"); do sides="$sides $s@$i"; done; else sides="$sides $s"; fi
done
if [ "$NLIB" -gt 1 ]; then
    i=0
    for l in $LIBS; do i=$((i + 1)); echo "@$i: $l"; done
fi
python3 - "$T" "native$sides" "$KEYS" "$R" "$N" "$NP" <<'PY'
import os, statistics as st, sys
d, sides, keys = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
rows = {}
for s in sides:
    p = os.path.join(d, s)
    rows[s] = [list(map(float, l.split())) for l in open(p)] if os.path.exists(p) else []
print("hpcc, %s rounds, HPL N=%s, 1 x %s ranks; medians (runs kept), ratio to native's median" % tuple(sys.argv[4:7]))
print("| kernel | native | " + " | ".join(sides[1:]) + " |")
print("|---|---:|" + "---:|" * (len(sides) - 1))
for i, k in enumerate(keys):
    nat = st.median(r[i] for r in rows["native"]) if rows["native"] else float("nan")
    cells = ["%.4g (%d)" % (nat, len(rows["native"]))]
    for s in sides[1:]:
        if not rows[s]:
            cells.append("no run")
            continue
        m = st.median(r[i] for r in rows[s])
        cells.append("%.4g, %.3f (%d)" % (m, m / nat if nat else float("nan"), len(rows[s])))
    print("| %s | %s |" % (k, " | ".join(cells)))
PY
