"""skr: SKR section 3 problems A-D (examples/skr_problems) under skr (and
bcj, fourcounter): control messages and Phase 1 + Phase 2 iterations from the
reports' counts by type, time from quiescence to detection, run time against
--native-stop, beside tdsim's skrA-skrD and the paper's Tables 1 and 2."""
import os
import re
import statistics

from .common import DONE_TAG, control_sent, latencies, rotated


# papers/skr-counting-quiescence.txt, NCUBE/2: Table 1 (control messages,
# iterations Phase 1 + Phase 2, ms from onset to detection) and Table 2 (run
# time in ms with / without quiescence detection), per problem and P
PAPER_SKR = {"A": {2: (20, "8+2", 5, 8982, 9128), 4: (40, "9+1", 6, 4775, 4861), 8: (88, "10+1", 7, 2547, 2618),
                   16: (144, "8+1", 11, 1452, 1417)},
             "B": {2: (90, "44+1", 8, 55234, 53293), 4: (172, "42+1", 16, 29618, 27068),
                   8: (264, "32+1", 20, 16850, 16173), 16: (416, "25+1", 62, 9512, 9689)},
             "C": {2: (26, "12+1", 14, 43, 39), 4: (92, "21+1", 15, 56, 51), 8: (232, "28+1", 17, 57, 53),
                   16: (496, "30+1", 28, 68, 61)},
             "D": {2: (6, "2+1", 15, 983, 944), 4: (12, "2+1", 16, 984, 945), 8: (24, "2+1", 18, 988, 948),
                   16: (48, "2+1", 24, 993, 954)}}


def skr_iterations(ctl, e, extra):
    """SKR's Phase 1 and Phase 2 iterations and the control messages (init +
    idle + activity) of its detections, from control messages sent by type
    summed over the ranks (e = P - 1): an iteration sends one init down and
    one report up per non-root rank, idle in Phase 1 and activity in Phase 2.
    Each dormancy proof (sleep broadcasts) and each of `extra` other proofs
    is taken off as one Phase 1 and one Phase 2 iteration."""
    k = ctl.get("sleep", 0) / e + extra
    p1 = ctl.get("idle", 0) / e - k
    p2 = ctl.get("activity", 0) / e - k
    return p1, p2, ctl.get("init", 0) + ctl.get("idle", 0) + ctl.get("activity", 0) - 4 * e * k


def run(b):
    a = b.a
    reps = a.rounds or (1 if a.quick else 3)
    ps = [2, 4] if a.quick else [2, 4, 8, 16]
    algos = ["skr"] if a.quick else ["skr", "bcj", "fourcounter"]
    probs = "ABCD"
    # tdsim's sizes of the simulator table (bench/counting-figures.py);
    # --quick: smaller trees and cycle
    size = {"A": ["--depth", "11"], "B": ["--depth", "10", "--phases", "6"], "C": ["--length", "42"],
            "D": ["--iters", "2000"]}
    if a.quick:
        size = {"A": ["--depth", "8"], "B": ["--depth", "7", "--phases", "3"], "C": ["--length", "42"],
                "D": ["--iters", "200"]}
    phases = {pr: (int(size[pr][3]) + 1 if pr == "B" else 1) for pr in probs}
    work = "20" if a.quick else "50"
    prog = [b.exe("examples", "skr_problems"), "--work-us", work]
    res = {}  # (problem, p, side) -> {"time": [], "prim": [], "ctl": [], "lat": [], "p1": [], "p2": [], "det": []}
    bad = {}
    for p in ps:
        for r in range(reps):
            for pr in probs:
                sides = ["static"] + algos
                for side in rotated(sides, r + p):
                    argv = prog + ["--problem", pr] + size[pr]
                    reports = None
                    if side == "static":
                        out, err = b.launch(p, None, argv + ["--native-stop"])
                    else:
                        out, reports, err = b.reported(p, {"TDSHIM_ALGO": side, "TDSHIM_NOTIFY": "tag:%d" % DONE_TAG},
                                                       argv + ["--done-tag", str(DONE_TAG)])
                    m = re.search(r"^RESULT .* messages=(\d+) .* time=([\d.]+) .*ok$", out or "", re.M)
                    if not m or (side != "static" and reports is None):
                        bad[(pr, p, side)] = bad.get((pr, p, side), 0) + 1
                        b.say("skr %s P=%d %s: %s" % (pr, p, side, err or "no RESULT ok / reports"))
                        continue
                    c = res.setdefault((pr, p, side), {})
                    c.setdefault("time", []).append(float(m.group(2)))
                    c.setdefault("prim", []).append(int(m.group(1)))
                    if side == "static":
                        continue
                    eps = latencies(reports)
                    ctl = control_sent(reports)
                    c.setdefault("ctl", []).append(sum(ctl.values()))
                    c.setdefault("lat", []).extend(v for v in eps.values() if v is not None)
                    if side == "skr" and p > 1:
                        # the episode closed inside MPI_Finalize (after
                        # ex_result's collectives) is not the program's
                        p1, p2, det = skr_iterations(ctl, p - 1, len(eps) - phases[pr])
                        for k, v in (("p1", p1), ("p2", p2), ("det", det)):
                            c.setdefault(k, []).append(v)
        b.say("skr: P=%d done (%d repetitions)" % (p, reps))
    # tdsim on the same workloads (bench/counting-figures.py's formulas)
    simc = {}
    sim = b.exe(os.path.join("tests", "sim"), "tdsim")
    for pr in probs:
        for p in ps:
            s = b.tdsim(["--algo", "skr", "--workload", "skr" + pr, "--ranks", str(p), "--schedules", "20",
                         "--seed", "1"] + size[pr]) if os.path.exists(sim) else None
            if s:
                ctl = {k[4:]: v for k, v in s[0].items() if k.startswith("ctl.")}
                simc[(pr, p)] = skr_iterations(ctl, p - 1, 0)
    med = statistics.median
    b.md += ["#### SKR problems A–D under MPI (papers/skr-counting-quiescence.txt §3, Tables 1 and 2)", "",
             "examples/skr_problems (tdsim's skrA–skrD shapes and sizes: A depth %s, B depth %s with %s "
             "divide-and-conquer phases + one phase on one rank, each phase ended by its own notification "
             "and an MPI_Barrier, C a chain of %s, D %s times around the cycle; %s µs of CPU per task), "
             "%d alternating repetition(s) per cell, medians. *Control to detect* and *iterations* are "
             "derived from the JSON reports' control messages by type summed over the ranks (the reports "
             "do not split SKR's iterations by phase): each iteration sends one init down and one report "
             "up per non-root rank (idle in Phase 1, activity in Phase 2), and each proof that is not a "
             "detection of the program's — the dormancy proof after each announcement (sleep broadcasts) "
             "and the episode closed inside MPI_Finalize after the RESULT line's collectives — is counted as "
             "one Phase 1 + one Phase 2 iteration and taken off (Phase 1 is an upper bound if such a proof "
             "needed more); the whole job's control messages, every type, in brackets. B's figures are "
             "sums over its %d phases. *Quiescence → detection*: last rank's last passive transition to the "
             "last rank's notification, median over the program's episodes. *Dynamic/static*: run time "
             "ended by tdshim's notification over the program's own count (`--native-stop`), RESULT time=. "
             "tdsim: skr on the same workload, means of 20 seeds (its own delays: control as slow as "
             "primaries). Paper: NCUBE/2, Charm; its B has one detection, not one per phase." % (
                    size["A"][1], size["B"][1], size["B"][3], size["C"][1], size["D"][1], work, reps,
                    phases["B"]), ""]
    b.md += ["| problem | P | primaries | control to detect [whole job] | iterations Phase 1 + 2 | "
             "quiescence → detection | dynamic / static | tdsim: control, iterations | "
             "paper: control, iterations, time | paper Table 2: with / without |",
             "|:--|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for pr in probs:
        for p in ps:
            c, s = res.get((pr, p, "skr"), {}), res.get((pr, p, "static"), {})
            nb = sum(v for k, v in bad.items() if k[0] == pr and k[1] == p)
            cells = ["%d" % med(c["prim"]) if c.get("prim") else "-"]
            if c.get("det"):
                cells += ["%.0f [%.0f]" % (med(c["det"]), med(c["ctl"])),
                          "%.1f + %.1f" % (med(c["p1"]), med(c["p2"]))]
            else:
                cells += ["[%.0f]" % med(c["ctl"]) if c.get("ctl") else "-", "-"]
            cells.append("%.0f µs" % (med(c["lat"]) * 1e6) if c.get("lat") else "-")
            if c.get("time") and s.get("time"):
                cells.append("%.3f (%.3f s)" % (med(c["time"]) / med(s["time"]), med(s["time"])))
            else:
                cells.append("-")
            sc = simc.get((pr, p))
            cells.append("%.0f, %.1f + %.1f" % (sc[2], sc[0], sc[1]) if sc else "-")
            pc = PAPER_SKR.get(pr, {}).get(p)
            cells.append("%d, %s, %d ms" % pc[:3] if pc else "-")
            cells.append("%d / %d ms (%.3f)" % (pc[3], pc[4], pc[3] / pc[4]) if pc else "-")
            cells[0] += " (%d failed)" % nb if nb else ""
            b.md.append("| %s | %d | %s |" % (pr, p, " | ".join(cells)))
    b.md.append("")
    if len(algos) > 1:
        b.md += ["Every algorithm on the same runs' schedule: control messages of the whole job (every "
                 "type, the dormancy proofs and the finalize episode included) / quiescence → detection / "
                 "dynamic/static run time.", ""]
        b.md += ["| problem | P | " + " | ".join(algos) + " |", "|:--|---:|" + "---:|" * len(algos)]
        for pr in probs:
            for p in ps:
                s = res.get((pr, p, "static"), {})
                cells = []
                for algo in algos:
                    c = res.get((pr, p, algo), {})
                    if not c.get("ctl"):
                        cells.append("failed (%d)" % bad.get((pr, p, algo), 0))
                        continue
                    ratio = "%.3f" % (med(c["time"]) / med(s["time"])) if s.get("time") else "-"
                    lat = "%.0f µs" % (med(c["lat"]) * 1e6) if c.get("lat") else "-"
                    cells.append("%.0f / %s / %s" % (med(c["ctl"]), lat, ratio))
                b.md.append("| %s | %d | %s |" % (pr, p, " | ".join(cells)))
        b.md.append("")

