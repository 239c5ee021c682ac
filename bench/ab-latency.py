#!/usr/bin/env python3
"""bench/ab-latency.py ALGO[,ALGO...] ROUNDS RANKS LIB.so [LIB.so...]

Detection latency of one or more algorithms under one or more builds of
libtdshim, every (algorithm, build) pair alternating round by round in one
invocation (these VMs are
noisy: compare within one invocation only). Each run is
examples/three_phase with TDSHIM_NOTIFY=tag:999 and JSON reports; the
latency of an episode is bench/run's: the last rank's detection minus the
last rank's last passive transition before the first detection (the
episode closed inside MPI_Finalize left out). Prints, per build, the
quartiles over all episodes and the median MPI_Allreduce time the program
measured in the same runs. Run from a build directory (it uses
examples/three_phase there)."""
import glob, json, os, re, shutil, statistics as S, subprocess, sys, tempfile

if len(sys.argv) < 5:
    sys.exit(__doc__)
algos, rounds, p = sys.argv[1].split(","), int(sys.argv[2]), int(sys.argv[3])
cells = [(a, l) for a in algos for l in sys.argv[4:]]
prog = os.path.abspath("examples/three_phase")
if not os.path.exists(prog):
    sys.exit("ab-latency.py: no examples/three_phase (run from a build directory)")
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
over = p > (os.cpu_count() or 1)
if over:  # more ranks than cores: no binding (and times worth less)
    env["OMPI_MCA_rmaps_base_oversubscribe"] = "1"
else:
    env.pop("OMPI_MCA_rmaps_base_oversubscribe", None)  # oversubscribed: no binding, bimodal times
lats = {c: [] for c in cells}
coll = {c: [] for c in cells}
for r in range(rounds):
    for cell in (cells if r % 2 == 0 else cells[::-1]):
        algo, lib = cell
        d = tempfile.mkdtemp(prefix="ablat.")
        cmd = ["mpirun", "-np", str(p), "--bind-to", "none" if over else "core", "-x", "LD_PRELOAD=" + os.path.abspath(lib),
               "-x", "TDSHIM_ALGO=" + algo, "-x", "TDSHIM_NOTIFY=tag:999", "-x", "TDSHIM_REPORT=json",
               "-x", "TDSHIM_REPORT_DIR=" + d, prog, "--done-tag", "999", "--work-us", "200",
               "--local-tasks", "100", "--fanout", "8", "--coll-reps", "300"]
        out = subprocess.run(cmd, env=env, capture_output=True, text=True).stdout
        reps = [json.load(open(f)) for f in glob.glob(os.path.join(d, "*", "rank-*.json"))]
        shutil.rmtree(d, ignore_errors=True)
        m = re.search(r"allreduce_us=([\d.]+).* ok$", out, re.M)
        if not m or len(reps) != p:
            print("round %d %s %s: run failed" % (r, algo, lib), file=sys.stderr)
            continue
        coll[cell].append(float(m.group(1)))
        eps = {}
        for rep in reps:
            for e in rep["episodes"]:
                eps.setdefault(e["episode"], []).append(e)
        t_fin = min(rep["t_finalize_s"] for rep in reps)
        for es in eps.values():
            fd = min(e["t_detect_s"] for e in es)
            ld = max(e["t_detect_s"] for e in es)
            lp = [e["t_last_passive_s"] for e in es if e["t_last_passive_s"] is not None and e["t_last_passive_s"] <= fd]
            if lp and len(es) == p and fd < t_fin:
                lats[cell].append((ld - max(lp)) * 1e6)
for cell in cells:
    algo, lib = cell
    if len(lats[cell]) < 2:
        print("%s %s: too few episodes" % (lib, algo))
        continue
    q = S.quantiles(lats[cell], n=4)
    a = S.median(coll[cell])
    print("%s %s P=%d: latency Q1 %.2f median %.2f Q3 %.2f us (%d episodes); MPI_Allreduce median %.2f us; "
          "median / MPI_Allreduce %.1f" % (lib, algo, p, q[0], q[1], q[2], len(lats[cell]), a, q[1] / a))
