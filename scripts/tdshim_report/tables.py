"""The tables of one run and of a comparison of two, as a Document (doc):
the terminal gets its text, the HTML page its tables."""
import math
import statistics

from .common import CATEGORIES
from .doc import Document


def fmt(v, spec):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return format(v, spec)


def mmm(values):
    vals = [v for v in values if v is not None]
    if not vals:
        return (None, None, None)
    return (min(vals), statistics.median(vals), max(vals))


METRICS = [
    # label, function of a rank document, format
    ("wall time (s)", lambda d: d["wall_s"], ".4f"),
    ("time in tdshim (s)", lambda d: d["tdshim_time"]["total_s"], ".6f"),
    ("time in tdshim (% of wall)", lambda d: d["tdshim_time"]["percent_of_wall"], ".3f"),
    # in the wall time, not tdshim's: MPI_Finalize waits so natively (absent before 2026-12-04)
    ("waiting at MPI_Finalize (s)", lambda d: d.get("finalize_wait_s"), ".6f"),
] + [(f"  {c} (s)", (lambda c: lambda d: d["tdshim_time"]["categories"][c]["seconds"])(c), ".6f")
     for c in CATEGORIES] + [
    ("primary messages sent", lambda d: d["primary"]["sent"], ".0f"),
    ("primary messages received", lambda d: d["primary"]["received"], ".0f"),
    ("primary bytes sent", lambda d: d["primary"]["sent_bytes"], ".0f"),
    ("piggyback bytes sent", lambda d: d["primary"]["piggyback_bytes_sent"], ".0f"),
    ("control messages sent", lambda d: d["control"]["sent"], ".0f"),
    ("control messages received", lambda d: d["control"]["received"], ".0f"),
    ("control bytes sent", lambda d: d["control"]["bytes_sent"], ".0f"),
    ("polls", lambda d: d["polls"]["total"], ".0f"),
    ("empty polls", lambda d: d["polls"]["empty"], ".0f"),
    ("sweeps/waves", lambda d: d["detection"]["waves"], ".0f"),
    ("busy->idle transitions", lambda d: d["detection"]["busy_to_idle"], ".0f"),
    ("idle->busy transitions", lambda d: d["detection"]["idle_to_busy"], ".0f"),
    ("contract violations", lambda d: d["detection"]["violations"], ".0f"),
    ("late threads", lambda d: d["thread_level"].get("late_threads"), ".0f"),
    ("credit borrows", lambda d: d["detection"]["borrows"], ".0f"),
    ("credit flushes", lambda d: d["detection"]["flushes"], ".0f"),
    ("unreceived at finalize", lambda d: d["primary"]["unreceived_at_finalize"], ".0f"),
    ("Idle2End, last episode (s)",
     lambda d: d["episodes"][-1]["idle2end_s"] if d["episodes"] else None, ".6f"),
]


def header_section(doc, run):
    h = run.head
    facts = doc.section("Header").table(kind="facts")
    for k, v in (("Directory", run.dir), ("Command", h["command"]), ("Ranks", f"{run.size} ({len(run.ranks)} reports)"),
                 ("Algorithm", h["algorithm"]), ("Version", f"tdshim {h['tdshim_version']}")):
        facts.row(k, v, text=f"@ {k:<10}: {v}")
    killed = [r for r in run.ranks if r.get("partial")]
    if killed:
        why = (f"{len(killed)} of {len(run.ranks)} reports written by a killed rank "
               f"({', '.join(sorted({r['partial']['reason'] for r in killed}))})")
        facts.row("PARTIAL", why, text=f"@ PARTIAL   : {why}; what detection waited for:")
        for r in sorted(killed, key=lambda r: r["rank"]):
            facts.row(f"rank {r['rank']}", r["partial"]["detection_state"],
                      text=f"@   rank {r['rank']:<5} {r['partial']['detection_state']}")
    for k, v in h["config"].items():
        facts.row(k, v, text=f"@   {k:<26} {v}")


def overhead_section(doc, run):
    s = doc.section("Overhead per rank (seconds; % of the rank's wall time, MPI_Init to the end of MPI_Finalize's "
                    "tdshim work; waiting there for the last rank, as MPI_Finalize does natively, is not tdshim's)")
    t = s.table([(5, ">"), (9, ">"), (10, ">"), (7, ">")] + [(9, ">")] * len(CATEGORIES)
                + [(9, ">"), (9, ">"), (8, ">"), (8, ">")])
    t.header("Rank", "Wall", "tdshim", "%", *CATEGORIES, "PrimSent", "PrimRecv", "CtlSent", "CtlRecv")
    for d in run.ranks:
        tt = d["tdshim_time"]
        t.row(d["rank"], f"{d['wall_s']:.4f}", f"{tt['total_s']:.6f}", fmt(tt["percent_of_wall"], "7.3f"),
              *(f"{tt['categories'][c]['seconds']:.6f}" for c in CATEGORIES),
              d["primary"]["sent"], d["primary"]["received"], d["control"]["sent"], d["control"]["received"])

    t = doc.section("Across ranks (min / median / max)").table([(28, "<"), (14, ">"), (14, ">"), (14, ">")])
    t.header("Metric", "min", "median", "max")
    for label, fn, spec in METRICS:
        lo, med, hi = mmm(run.column(fn))
        t.row(label, fmt(lo, spec), fmt(med, ".6g"), fmt(hi, spec))

    t = doc.section("Control messages (by type, all ranks)").table(
        [(22, "<"), (12, ">"), (12, ">"), (12, ">"), (10, ">")])
    t.header("Type", "Sent", "Received", "BytesSent", "max/rank")
    for name in run.control_types():
        s = sum(run.control_by_type(d).get(name, 0) for d in run.ranks)
        r = sum(run.control_by_type(d, "received").get(name, 0) for d in run.ranks)
        nb = sum(run.control_by_type(d, "bytes_sent").get(name, 0) for d in run.ranks)
        mx = max(run.control_by_type(d).get(name, 0) for d in run.ranks)
        t.row(name, s, r, nb, mx)


def episodes_section(doc, run):
    s = doc.section("Detection episodes and latency (aligned clocks, s since rank 0's MPI_Init)")
    eps = run.episodes()
    if not eps:
        s.line("no episode was detected")
        return
    learned = run.episodes_learned()
    if learned > len(eps):
        s.line(f"{learned} episodes; the ranks kept the first 1024 and the last 4096, {len(eps)} in all")
    if len(eps) > 64:  # as summary.txt: the first 16, the last 32, up to 64 UNSAFE ones between
        mid = [e for e in eps[16:-32] if e["unsafe"]][:64]
        s.line(f"{len(eps)} episodes: the first 16, the last 32 and up to 64 UNSAFE ones between")
        eps = eps[:16] + mid + eps[-32:]
    t = s.table([(7, ">"), (6, ">"), (12, ">"), (12, ">"), (12, ">"), (10, ">"), (10, ">"), (10, ">"), (10, ">"),
                 (5, ">"), (7, ">")])
    t.header("Episode", "Ranks", "LastPassive", "FirstDetect", "LastDetect", "Latency", "I2E min", "I2E med",
             "I2E max", "Late", "Check")
    for e in eps:
        lo, med, hi = mmm(e["i2e"])
        t.row(e["episode"], e["ranks"], fmt(e["last_passive"], "12.6f"), fmt(e["first_detect"], "12.6f"),
              fmt(e["last_detect"], "12.6f"), fmt(e["latency"], "10.6f"), fmt(lo, "10.6f"), fmt(med, "10.6f"),
              fmt(hi, "10.6f"), e["late"], "UNSAFE" if e["unsafe"] else "ok")
    err = max(d["clock"]["offset_error_s"] for d in run.ranks)
    s.line(f"Latency: last rank's detection - LastPassive (the last busy->idle transition before the first "
           f"detection); Late: ranks whose last transition came after the first detection; UNSAFE: a rank "
           f"proved the announcement premature; clock alignment error <= {err:.2e} s")
    for e in eps:
        if e["unsafe"]:
            s.line(f"Episode {e['episode']} UNSAFE, evidence: {', '.join(e['evidence']) or 'not recorded'}")
            for r, why in e["why"]:
                s.line(f"  rank {r}: {why}")
    det = run.ranks[0]["detection"]
    if "evidence_checked" in det:
        unseen = det["evidence_unseen"]
        s.line(f"Check looked at: {', '.join(det['evidence_checked'])}"
               + (f"; it cannot see {', '.join(unseen)} in a header-free run" if unseen else ""))


def callsites_section(doc, run, top):
    s = doc.section("Call sites")
    cs = run.head["callsites"]
    if not cs["requested"]:
        s.line("off (TDSHIM_CALLSITES=N records the top N call sites of polls and sends)")
        return
    if not cs["available"]:
        s.line(f"unavailable: {cs.get('reason', '?')}")
        return
    for kind in ("poll", "send"):
        agg = {}
        for d in run.ranks:
            for c in d["callsites"].get(kind, {}).get("top", []):
                key = (c["function"], c["offset"], c["module"])
                a = agg.setdefault(key, [0, 0.0, 0])
                a[0] += c["count"]
                a[1] += c["seconds"]
                a[2] += 1
        s.line(f"Top call sites of {kind}s (all ranks):")
        t = s.table([(3, ">"), (40, "<"), (24, "<"), (10, ">"), (10, ">"), (5, ">")])
        t.header("#", "Function+offset", "Module", "Count", "Time(s)", "Ranks")
        for i, (key, a) in enumerate(sorted(agg.items(), key=lambda kv: (-kv[1][0], -kv[1][1]))[:top], 1):
            t.row(i, f"{key[0] or '?'}+0x{key[1]:x}", key[2], a[0], f"{a[1]:.6f}", a[2])
        if not agg:
            s.line("(none recorded)")


def run_sections(doc, run, top):
    """every section of one run, in the order summary.txt has them"""
    header_section(doc, run)
    overhead_section(doc, run)
    episodes_section(doc, run)
    callsites_section(doc, run, top)
    s = doc.section("Unreceived messages at MPI_Finalize")
    un = [(d["rank"], d["primary"]["unreceived_at_finalize"]) for d in run.ranks
          if d["primary"]["unreceived_at_finalize"]]
    for r, n in un:
        s.line(f"rank {r}: {n}")
    s.line(f"total {sum(n for _, n in un)} (primary sent {sum(run.column(lambda d: d['primary']['sent']))}, "
           f"received {sum(run.column(lambda d: d['primary']['received']))})")


def vs_section(doc, a, b):
    s = doc.section(f"Comparison: A = {a.label}  vs  B = {b.label}")
    if a.head["command"] != b.head["command"] or a.size != b.size:
        s.line(f"note: different runs: A {a.size} ranks '{a.head['command']}', "
               f"B {b.size} ranks '{b.head['command']}'")
    t = s.table([(46, "<"), (14, ">"), (14, ">"), (8, ">")])
    t.header("Metric (median over ranks; total for counts)", "A", "B", "B/A")

    def row(label, va, vb, spec):
        ratio = vb / va if va not in (None, 0) and vb is not None else None
        t.row(label, fmt(va, spec), fmt(vb, spec), fmt(ratio, ".3f"))

    for label, fn, spec in METRICS:
        if spec == ".0f":
            row(label + " (total)", sum(v or 0 for v in a.column(fn)), sum(v or 0 for v in b.column(fn)), spec)
        else:
            row(label + " (median)", mmm(a.column(fn))[1], mmm(b.column(fn))[1], spec)
    row("time in tdshim, worst rank (% of wall)",
        mmm(a.column(lambda d: d["tdshim_time"]["percent_of_wall"]))[2],
        mmm(b.column(lambda d: d["tdshim_time"]["percent_of_wall"]))[2], ".3f")
    ea, eb = a.episodes(), b.episodes()
    row("episodes detected", a.episodes_learned(), b.episodes_learned(), ".0f")
    for k in range(min(max(len(ea), len(eb)), 64)):  # the first 64
        row(f"episode {k + 1} global detection latency (s)",
            ea[k]["latency"] if k < len(ea) else None, eb[k]["latency"] if k < len(eb) else None, ".6f")


def document(runs, top):
    """the whole text: each run (A and B under a banner when two), then the comparison"""
    doc = Document()
    for i, run in enumerate(runs):
        if len(runs) == 2:
            doc.section(f"{'AB'[i]}: {run.dir}", banner=True)
        run_sections(doc, run, top)
    if len(runs) == 2:
        vs_section(doc, *runs)
    return doc


def summary(runs):
    """the page's first table: per run, what a reader looks at first
    (label, [(fact, value per run)])"""
    rows = []

    def fact(label, fn):
        rows.append((label, [fn(r) for r in runs]))

    fact("Command", lambda r: r.head["command"])
    fact("Algorithm", lambda r: r.head["algorithm"])
    fact("Ranks (reports)", lambda r: f"{r.size} ({len(r.ranks)})")
    fact("Job wall time (longest rank)", lambda r: f"{max(d['wall_s'] for d in r.ranks):.4f} s")
    fact("Time in tdshim, median / worst rank",
         lambda r: "%s / %s %% of wall" % tuple(fmt(v, ".3f") for v in
                                                mmm(r.column(lambda d: d["tdshim_time"]["percent_of_wall"]))[1:]))
    fact("Episodes detected", lambda r: str(r.episodes_learned()))
    fact("Detection latency per episode",
         lambda r: ", ".join(f"{fmt(e['latency'] * 1e6 if e['latency'] is not None else None, '.1f')} us"
                             for e in r.episodes()[:64]) + (" ..." if len(r.episodes()) > 64 else "") or "-")
    fact("UNSAFE episodes", lambda r: ", ".join(str(e["episode"]) for e in r.episodes() if e["unsafe"]) or "none")
    fact("Primary / control messages sent",
         lambda r: f"{sum(r.column(lambda d: d['primary']['sent']))} / {sum(r.column(lambda d: d['control']['sent']))}")
    fact("Unreceived at MPI_Finalize", lambda r: str(sum(r.column(lambda d: d["primary"]["unreceived_at_finalize"]))))
    fact("Partial reports (killed ranks)", lambda r: str(sum(1 for d in r.ranks if d.get("partial"))))
    return rows
