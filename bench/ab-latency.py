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
measured in the same runs, then the same quartiles per episode (three_phase's
phases differ: 1 relay, 2 rank 0 alone for 20 ms while the others wait,
3 ring; one median over all mixes them). Each round also runs the program
natively (--native-stop: it stops by its own count), whose end barrier of
each phase is timed from the last rank's entry to the last rank's exit
(end_barrier_us): a collective entered at the moment detection starts,
with the caches and the ranks as detection finds them, beside the
MPI_Allreduce timed in a loop. Run from a build directory (it uses
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
byep = {}  # (cell, episode) -> latencies
coll = {c: [] for c in cells}
natbar = {}  # phase -> the native run's end barrier latencies (us)
args = ["--work-us", "200", "--local-tasks", "100", "--fanout", "8", "--coll-reps", "300", "--linger-ms", "0"]
for r in range(rounds):
    nat = subprocess.run(["mpirun", "-np", str(p), "--bind-to", "none" if over else "core", prog, "--native-stop"] + args,
                         env=env, capture_output=True, text=True).stdout
    m = re.search(r"end_barrier_us=([\d.]+),([\d.]+),([\d.]+).* ok$", nat, re.M)
    if not m:
        print("round %d native: run failed" % r, file=sys.stderr)
    else:
        for ph in range(3):
            natbar.setdefault(ph + 1, []).append(float(m.group(ph + 1)))
    for cell in (cells if r % 2 == 0 else cells[::-1]):
        algo, lib = cell
        d = tempfile.mkdtemp(prefix="ablat.")
        cmd = ["mpirun", "-np", str(p), "--bind-to", "none" if over else "core", "-x", "LD_PRELOAD=" + os.path.abspath(lib),
               "-x", "TDSHIM_ALGO=" + algo, "-x", "TDSHIM_NOTIFY=tag:999", "-x", "TDSHIM_REPORT=json",
               "-x", "TDSHIM_REPORT_DIR=" + d, prog, "--done-tag", "999"] + args
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
                byep.setdefault((cell, es[0]["episode"]), []).append((ld - max(lp)) * 1e6)
for cell in cells:
    algo, lib = cell
    if len(lats[cell]) < 2:
        print("%s %s: too few episodes" % (lib, algo))
        continue
    q = S.quantiles(lats[cell], n=4)
    a = S.median(coll[cell])
    print("%s %s P=%d: latency Q1 %.2f median %.2f Q3 %.2f us (%d episodes); MPI_Allreduce median %.2f us; "
          "median / MPI_Allreduce %.1f" % (lib, algo, p, q[0], q[1], q[2], len(lats[cell]), a, q[1] / a))
for ep in sorted(natbar):
    v = natbar[ep]
    q = S.quantiles(v, n=4) if len(v) >= 2 else [v[0]] * 3
    print("  phase %d, native end barrier: Q1 %.2f median %.2f Q3 %.2f us (%d)" % (ep, q[0], q[1], q[2], len(v)))
    for (cell, e), w in sorted(byep.items(), key=lambda x: cells.index(x[0][0])):
        if e == ep and len(w) >= 2:
            qw = S.quantiles(w, n=4)
            print("  episode %d, %s %s: latency Q1 %.2f median %.2f Q3 %.2f us (%d); median / the native end barrier's %.1f"
                  % (ep, cell[1], cell[0], qw[0], qw[1], qw[2], len(w), qw[1] / S.median(v)))
