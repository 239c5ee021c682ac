#!/usr/bin/env python3
"""bench_lib.py TOP FIXTURE WORK: bench/run's shared module (bench/tdbench/common.py)
without MPI (TAP): the reports of a run are read through tdshim-report's
loader, so a malformed rank file is refused with the file and the field
(a fake launch writes the run's reports); the episodes' latencies and the
control messages by type against an independent computation from the raw
JSON of tests/report/fixture-demo; the rotation of sides; a run of some
sections replaces only their blocks between the RESULTS markers."""
import glob
import json
import os
import shutil
import sys

top, fixture, work = sys.argv[1:4]
sys.path[:0] = [os.path.join(top, "bench"), os.path.join(top, "scripts")]
from tdbench import common  # noqa: E402

n = 0


def ok(cond, what):
    global n
    n += 1
    print(("ok" if cond else "not ok") + " %d - %s" % (n, what))


print("1..6")
docs = [json.load(open(f)) for f in sorted(glob.glob(os.path.join(fixture, "rank-*.json")))]


def fake_bench(break_rank=None):
    """a Bench whose launch writes the fixture's reports as a tdshim run would"""
    b = common.Bench.__new__(common.Bench)
    b.tmp = os.path.join(work, "tmp")
    os.makedirs(b.tmp, exist_ok=True)

    def launch(p, tds, argv, mca=None, timeout=300):
        d = os.path.join(tds["TDSHIM_REPORT_DIR"], "tdshim-report-20260101-000000")
        os.mkdir(d)
        for doc in docs:
            doc = json.loads(json.dumps(doc))
            if doc["rank"] == break_rank:
                doc["control"]["by_type"][0]["sent"] = "many"
            with open(os.path.join(d, "rank-%04d.json" % doc["rank"]), "w") as f:
                json.dump(doc, f)
        return "RESULT ok\n", None
    b.launch = launch
    return b


out, run, err = fake_bench().reported(len(docs), {"TDSHIM_ALGO": "bcj"}, ["prog"])
ok(run is not None and len(run.ranks) == len(docs) and err is None,
   "a valid run's reports come back as a tdshim-report Run (%s)" % err)
out, bad, err = fake_bench(break_rank=2).reported(len(docs), {"TDSHIM_ALGO": "bcj"}, ["prog"])
ok(bad is None and err is not None and "rank-0002.json" in err and "control.by_type[0].sent" in err,
   "a malformed rank file is refused by the loader, naming the file and the field: %s" % err)

# independent: per episode every rank recorded, last detection minus the last
# passive transition at or before the first detection; None once a rank was
# in MPI_Finalize at the first detection
t_fin = min(d["t_finalize_s"] for d in docs)
want = {}
for k in sorted({e["episode"] for d in docs for e in d["episodes"]}):
    es = [e for d in docs for e in d["episodes"] if e["episode"] == k]
    fd = min(e["t_detect_s"] for e in es)
    lp = [e["t_last_passive_s"] for e in es if e["t_last_passive_s"] is not None and e["t_last_passive_s"] <= fd]
    if len(es) == len(docs) and lp:
        want[k] = max(e["t_detect_s"] for e in es) - max(lp) if fd < t_fin else None
got = common.latencies(run)
ok(got == want and any(v is None for v in got.values()) and any(v for v in got.values()),
   "latencies from Run.episodes(): %s, expected %s" % (got, want))
ctl = {}
for d in docs:
    for t in d["control"]["by_type"]:
        ctl[t["name"]] = ctl.get(t["name"], 0) + t["sent"]
ok(common.control_sent(run) == ctl, "control messages by type, summed over the ranks (%d)" % sum(ctl.values()))

ok([common.rotated("abc", k) for k in range(4)] == [list("abc"), list("bca"), list("cab"), list("abc")]
   and common.alternating("ab", 0) == ["a", "b"] and common.alternating("ab", 3) == ["b", "a"],
   "sides rotate round by round; alternating reverses every other round")

# RESULTS markers: two sections written, then one again; the other and the text around stay
res = os.path.join(work, "R.md")
with open(res, "w") as f:
    f.write("# Results\n\nkept text\n")


def sections(b, names, tag):
    for s in names:
        b.sec[s] = ["#### %s" % s, "", "%s %s" % (s, tag), ""]
        b.elapsed[s], b.cmd_range[s], b.sec_plots[s] = 1.0, (0, 0), []


b = fake_bench()
b.sec, b.elapsed, b.cmd_range, b.sec_plots, b.commands = {}, {}, {}, {}, []
b.header = lambda s, t: ["*header %s*" % s, ""]
sections(b, ["cost", "skr"], "first")
saved = sys.stdout
sys.stdout = open(os.devnull, "w")
common.update_results(b, ["cost", "skr"], res, [])
sections(b, ["skr"], "second")
common.update_results(b, ["skr"], res, [])
sys.stdout = saved
text = open(res).read()
ok(text.startswith("# Results\n\nkept text\n\n<!-- bench/run: begin -->\n<!-- bench/run:cost begin -->\n#### cost\n")
   and "cost first" in text and "skr second" in text and "skr first" not in text
   and text.count("<!-- bench/run:skr begin -->") == 1 and text.rstrip().endswith("<!-- bench/run: end -->")
   and text.index("bench/run:cost end") < text.index("bench/run:skr begin"),
   "a run of one section replaces its block between its markers; the other section and the text stay")
shutil.rmtree(os.path.join(work, "tmp"), ignore_errors=True)
