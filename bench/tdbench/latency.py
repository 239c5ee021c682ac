"""latency: detection latency per algorithm and ranks from the JSON reports'
episodes, beside MPI_Allreduce and MPI_Ibarrier timed by the same program in
the same runs, and the native program's own end barrier of each phase (its
--native-stop run, timed from the last rank's entry to the last rank's exit:
a collective entered where detection starts); control messages per detected
episode."""
import re
import statistics

from .common import ALGOS, DONE_TAG, alternating, control_sent, latencies


def run(b):
    a = b.a
    reps = a.rounds or (1 if a.quick else 5)
    ps = [2, 4] if a.quick else [2, 4, 8, 16]
    algos = ["bcj", "skr"] if a.quick else ALGOS
    prog = [b.exe("examples", "three_phase"), "--done-tag", str(DONE_TAG), "--work-us", "200",
            "--local-tasks", "100", "--fanout", "8", "--coll-reps", "50" if a.quick else "300"]
    lat = {}   # (algo, p) -> [per-episode latency s]
    coll = {}  # p -> {"allreduce": [], "ibarrier": [], "end barrier": []}
    ctl = {}   # (algo, p) -> [control messages per episode, whole job]
    bad = {}
    for p in ps:
        for r in range(reps):
            out, err = b.launch(p, None, prog[:1] + ["--native-stop", "--linger-ms", "0"] + prog[3:])
            m = re.search(r"end_barrier_us=([\d.]+),([\d.]+),([\d.]+).* ok$", out or "", re.M)
            if m:
                coll.setdefault(p, {}).setdefault("end barrier", []).extend(float(x) for x in m.groups())
            else:  # a failure, never an empty cell that passes --strict
                if out is not None:
                    b.failed += 1
                b.say("latency native P=%d: %s" % (p, err or "no RESULT ok with end_barrier_us"))
            for algo in alternating(algos, r):
                out, run, err = b.reported(p, {"TDSHIM_ALGO": algo, "TDSHIM_NOTIFY": "tag:%d" % DONE_TAG},
                                                prog)
                m = re.search(r"allreduce_us=([\d.]+) ibarrier_us=([\d.]+).* ok$", out or "", re.M)
                if not m or run is None:
                    bad[(algo, p)] = bad.get((algo, p), 0) + 1
                    b.say("latency %s P=%d: %s" % (algo, p, err or "no RESULT ok / reports"))
                    continue
                coll.setdefault(p, {}).setdefault("allreduce", []).append(float(m.group(1)))
                coll[p].setdefault("ibarrier", []).append(float(m.group(2)))
                # the finalize's own episode has control messages but no
                # notification latency (None)
                eps = latencies(run)
                lat.setdefault((algo, p), []).extend(v for v in eps.values() if v is not None)
                if eps:
                    ctl.setdefault((algo, p), []).append(sum(control_sent(run).values()) / len(eps))
        b.say("latency: P=%d done" % p)
    b.md += ["#### Detection latency and control messages (three_phase, TDSHIM_NOTIFY=tag:%d)" % DONE_TAG, "",
             "Latency: last rank's notification minus the last rank's last passive transition before the "
             "first detection, per notified episode (aligned clocks of the JSON reports; the episode "
             "closed inside MPI_Finalize is left out), median over the episodes of %d run(s) per cell. MPI_Allreduce (one double) and MPI_Ibarrier + MPI_Test: medians timed "
             "by the same program at its end, on the same ranks, in the same runs (`--coll-reps`); "
             "target: detection <= 2x MPI_Allreduce plus one polling interval. Native end barrier: the "
             "same program stopping by its own count (`--native-stop --linger-ms 0`, one run per round), "
             "its barrier at the end of each phase from the last rank's entry to the last rank's exit, "
             "median over the phases: a collective entered where detection starts. Control: control "
             "messages of the whole job per detected episode." % reps, ""]
    b.md.append("| algorithm | " + " | ".join("P=%d latency / control" % p for p in ps) + " |")
    b.md.append("|:--|" + "---:|" * len(ps))
    lseries, cseries = {}, {}
    for algo in algos:
        cells = []
        for p in ps:
            v, c = lat.get((algo, p)), ctl.get((algo, p))
            if v:
                med = statistics.median(v)
                cells.append("%.1f us / %.0f" % (med * 1e6, statistics.median(c)))
                lseries.setdefault(algo, []).append((p, med * 1e6))
                cseries.setdefault(algo, []).append((p, statistics.median(c)))
            else:
                cells.append("failed (%d)" % bad.get((algo, p), 0))
        b.md.append("| %s | %s |" % (algo, " | ".join(cells)))
    for op, label in (("allreduce", "MPI_Allreduce"), ("ibarrier", "MPI_Ibarrier"),
                      ("end barrier", "native end barrier")):
        cells = []
        for p in ps:
            v = coll.get(p, {}).get(op)
            cells.append("%.1f us" % statistics.median(v) if v else "-")
            if v:
                lseries.setdefault(label, []).append((p, statistics.median(v)))
        b.md.append("| %s | %s |" % (label, " | ".join(cells)))
    b.md.append("")
    b.plots["detection-latency-vs-p"] = ("detection latency and collectives", "ranks", "microseconds",
                                         lseries, True)
    b.plots["control-vs-p"] = ("control messages per detected episode", "ranks", "messages", cseries, True)

