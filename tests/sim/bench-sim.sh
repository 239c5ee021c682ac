#!/bin/sh
# Markdown table of one algorithm's control messages (by type) and waves per
# workload at several rank counts, from tdsim summaries (means over seeds).
# usage: tests/sim/bench-sim.sh [TDSIM] [ALGO] [SCHEDULES] [P...]
# Default workload parameters (tdsim --help); no adversary.
SIM=${1:-tests/sim/tdsim}; ALGO=${2:-bcj}; N=${3:-20}
shift 3 2>/dev/null
[ $# -gt 0 ] || set -- 8 64 1024
for P in "$@"; do
    for w in ring tree skrA skrB skrC skrD bcj5 spawn; do
        "$SIM" --algo "$ALGO" --workload "$w" --ranks "$P" --seed 1 --schedules "$N" | grep '^summary' || exit 1
    done
done | python3 -c '
import sys
rows = [dict(kv.split("=", 1) for kv in l.split()[1:]) for l in sys.stdin]
types = []
for r in rows:
    for k in r:
        if k.startswith("ctl.") and k not in types:
            types.append(k)
print("| P | workload | tasks | primaries | waves | control | " + " | ".join(t[4:] for t in types) + " | delay | hops |")
print("|---" * (8 + len(types)) + "|")
f = lambda v: ("%.1f" % float(v)).rstrip("0").rstrip(".")
for r in rows:
    print("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (r["ranks"], r["workload"], f(r["tasks"]), f(r["primaries"]),
          f(r["waves"]), f(r["ctl"]), " | ".join(f(r.get(t, 0)) for t in types), f(r["delay_mean"]), f(r["hops_mean"])))
'
