#!/bin/sh
# How TDSHIM_IDLE=spin reacts and misjudges, on tests/mpi/tdprog (4 ranks,
# 6 phases each ended by tdshim's notification): an idle-polling program
# (style test: a standing MPI_Irecv polled by MPI_Test) and a program that
# polls while busy (style busyprobe: 10 x 50 us of work per token with an
# MPI_Iprobe between chunks). Per configuration, REPS runs: runs whose every
# rank saw exactly 6 notifications and no extra one, detection latency per
# phase (first rank's detection minus the last rank's last busy->idle
# transition, from the JSON reports), passive transitions, busy_again (a
# rank judged passive seen working, or a poll loop the OS descheduled),
# confirmations upheld/refuted at rank 0, contract violations.
#
#   bench/spin-notion.sh BUILDDIR [REPS]      (prints a markdown table)
set -u
B=${1:?usage: bench/spin-notion.sh BUILDDIR [REPS]}
REPS=${2:-5}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
L="$B/shim/.libs/libtdshim.so"
T=$(mktemp -d) && trap 'rm -rf "$T"' EXIT
echo "| program | TDSHIM_IDLE | TDSHIM_CONFIRM | runs right | latency µs min / median / max | busy→idle | busy_again | confirmed / refuted | violations |"
echo "|---|---|---|---|---|---|---|---|---|"
for cfg in "test test off" "test spin on" "busyprobe spin on" "busyprobe spin off" "busyprobe probe off"; do
    set -- $cfg
    for rep in $(seq "$REPS"); do
        d="$T/$1-$2-$3-$rep"
        mkdir -p "$d"
        timeout 60 mpirun --oversubscribe -n 4 -x LD_PRELOAD="$L" -x TDSHIM_IDLE="$2" -x TDSHIM_CONFIRM="$3" \
            -x TDSHIM_REPORT=json -x TDSHIM_REPORT_DIR="$d" -x TDSHIM_NOTIFY=tag:999 \
            "$B/tests/mpi/tdprog" "$1" 6 999 20 >"$d/out" 2>&1
        grep -c 'notified 6 extra 0' "$d/out" >"$d/ok"
    done
    python3 - "$1" "$2" "$3" "$T/$1-$2-$3-"* <<'PY'
import glob, json, sys, statistics
lat = []; ba = b2i = conf = ref = viol = good = 0
for dd in sys.argv[4:]:
    good += open(dd + "/ok").read().strip() == "4"
    runs = glob.glob(dd + "/tdshim-report-*/")
    if not runs: continue
    js = [json.load(open(f)) for f in sorted(glob.glob(runs[0] + "rank-*.json"))]
    eps = {}
    for j in js:
        for e in j["episodes"]:
            eps.setdefault(e["episode"], []).append(e)
    for k, es in sorted(eps.items()):
        lp = [e["t_last_passive_s"] for e in es if e["t_last_passive_s"] is not None]
        if k <= 6 and lp: lat.append((min(e["t_detect_s"] for e in es) - max(lp)) * 1e6)
    det = [j["detection"] for j in js]
    ba += sum(x["busy_again"] for x in det); b2i += sum(x["busy_to_idle"] for x in det)
    conf += det[0]["confirmed"]; ref += det[0]["refuted"]; viol += sum(x["violations"] for x in det)
lat.sort()
q = lambda: "%.0f / %.0f / %.0f" % (lat[0], statistics.median(lat), lat[-1]) if lat else "-"
print("| %s | %s | %s | %d/%d | %s | %d | %d | %d / %d | %d |" % (sys.argv[1], sys.argv[2], sys.argv[3], good,
      len(sys.argv) - 4, q(), b2i, ba, conf, ref, viol))
PY
done
