"""examples: the two programs that poll while busy (work_steal,
aggregated_traversal), static against dynamic, per algorithm."""
import re
import statistics

from .common import ALGOS, DONE_TAG, alternating


def run(b):
    a = b.a
    reps = a.rounds or (1 if a.quick else 11)
    algos = ["bcj"] if a.quick else ALGOS
    cases = [("work_steal", {"TDSHIM_IDLE": "spin", "TDSHIM_IGNORE_TAGS": "1", "TDSHIM_IGNORE_EMPTY": "1"}, []),
             ("aggregated_traversal", {"TDSHIM_IDLE": "spin"}, [])]
    res, fails = {}, {}
    for r in range(reps):
        for ex, cfg, args in cases:
            for algo in alternating(algos, r):
                for mode in alternating(("static", "dynamic"), r):
                    if mode == "static":
                        out, err = b.launch(4, None, [b.exe("examples", ex), "--native-stop"] + args)
                    else:
                        tds = dict(cfg, TDSHIM_ALGO=algo, TDSHIM_NOTIFY="tag:%d" % DONE_TAG, TDSHIM_REPORT="none")
                        out, err = b.launch(4, tds, [b.exe("examples", ex), "--done-tag", str(DONE_TAG)] + args)
                    m = re.search(r"^RESULT .* time=([\d.]+) .*ok$", out or "", re.M)
                    if m:
                        res.setdefault((ex, algo), {}).setdefault(mode, []).append(float(m.group(1)))
                    else:
                        fails[(ex, algo)] = fails.get((ex, algo), 0) + 1
                        b.say("examples %s %s %s: %s" % (ex, algo, mode, err or "no RESULT ok"))
        b.say("examples: round %d/%d" % (r + 1, reps))
    b.md += ["#### Programs that poll while busy: static vs dynamic, 4 ranks", "",
             "work_steal (static: its own Dijkstra-Safra token) with TDSHIM_IDLE=spin, "
             "TDSHIM_IGNORE_TAGS=1, TDSHIM_IGNORE_EMPTY=1; aggregated_traversal with TDSHIM_IDLE=spin. "
             "Median program time over %d alternating repetitions; ratio dynamic/static." % reps, ""]
    b.md += ["| algorithm | " + " | ".join(c[0] for c in cases) + " |", "|:--|" + "---:|" * len(cases)]
    for algo in algos:
        cells = []
        for ex, _, _ in cases:
            d = res.get((ex, algo), {})
            if d.get("static") and d.get("dynamic"):
                s, y = statistics.median(d["static"]), statistics.median(d["dynamic"])
                nf = fails.get((ex, algo), 0)
                cells.append("%.3f (%.3f s)%s" % (y / s, s, " %d failed" % nf if nf else ""))
            else:
                cells.append("failed (%d)" % fails.get((ex, algo), 0))
        b.md.append("| %s | %s |" % (algo, " | ".join(cells)))
    b.md.append("")

