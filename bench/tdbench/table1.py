"""table1: BCJ section 6 Table 1, five_cycle static (--native-stop) against
dynamic (ended by tdshim's notification), per algorithm and number of ranks."""
import re
import statistics

from .common import ALGOS, DONE_TAG, alternating


def run(b):
    a = b.a
    reps = a.rounds or (2 if a.quick else 30)
    ps = [2, 4] if a.quick else [2, 4, 8, 16]
    algos = ["bcj", "skr"] if a.quick else ALGOS
    args = ["--work-us", "20000", "--linger-ms", "0"]
    res = {}  # (algo, p) -> {"static": [...], "dynamic": [...]}; failures counted
    fails = {}
    for p in ps:
        for r in range(reps):
            for algo in alternating(algos, r):
                for mode in alternating(["static", "dynamic"], r + len(algo)):
                    if mode == "static":
                        out, err = b.launch(p, None, [b.exe("examples", "five_cycle"), "--native-stop"] + args)
                    else:
                        out, err = b.launch(p, {"TDSHIM_ALGO": algo, "TDSHIM_NOTIFY": "tag:%d" % DONE_TAG,
                                                "TDSHIM_REPORT": "none"},
                                            [b.exe("examples", "five_cycle"), "--done-tag", str(DONE_TAG)] + args)
                    m = re.search(r"^RESULT .* time=([\d.]+) .*ok$", out or "", re.M)
                    if m:
                        res.setdefault((algo, p), {}).setdefault(mode, []).append(float(m.group(1)))
                    else:
                        fails[(algo, p, mode)] = fails.get((algo, p, mode), 0) + 1
                        b.say("table1 %s P=%d %s: %s" % (algo, p, mode, err or "no RESULT ok"))
        b.say("table1: P=%d done (%d repetitions)" % (p, reps))
    b.md += ["#### BCJ Table 1 (papers/bcj-sweep-termination.txt §6): five_cycle, static vs dynamic", "",
             "Every rank does one short task, then the root and the last rank exchange work five times "
             "(20 ms of CPU per task). Static: the program stops by its own count (`--native-stop`); "
             "dynamic: tdshim's notification ends it. Median program time (RESULT time=, from after the "
             "start barrier to the end) over %d alternating repetitions; ratio dynamic/static "
             "(the paper: 1.000-1.002; target <= 1.01)." % reps, ""]
    b.md.append("| algorithm | " + " | ".join("P=%d" % p for p in ps) + " |")
    b.md.append("|:--|" + "---:|" * len(ps))
    series = {}
    for algo in algos:
        cells = []
        for p in ps:
            d = res.get((algo, p), {})
            s, y = d.get("static"), d.get("dynamic")
            nf = sum(v for k, v in fails.items() if k[0] == algo and k[1] == p)
            if s and y:
                ratio = statistics.median(y) / statistics.median(s)
                cells.append("%.4f (%.3f s)%s" % (ratio, statistics.median(s), " %d failed" % nf if nf else ""))
                series.setdefault(algo, []).append((p, ratio))
            else:
                cells.append("failed (%d)" % nf)
        b.md.append("| %s | %s |" % (algo, " | ".join(cells)))
    b.md.append("")
    b.plots["overhead-vs-p"] = ("five_cycle: dynamic / static run time", "ranks", "ratio", series, False)

