"""scale: cost versus scale in tdsim, control messages per rank, detection
delay, tdsim's time and memory for every algorithm from 4 to 2^20 ranks (token
ring), and control messages against primary messages at 1024 ranks."""
import os

from .common import ALGOS, fmt_p


def run(b):
    a = b.a
    if not os.path.exists(b.exe(os.path.join("tests", "sim"), "tdsim")):
        b.say("no tests/sim/tdsim in the build: scale skipped")
        b.md += ["#### Cost versus scale in tdsim", "", "Not run: no tests/sim/tdsim in the build.", ""]
        b.failed += 1
        return
    ps = [4, 16, 64, 256, 1024]
    if not a.quick:
        ps += [4096, 16384, 65536, 1 << 20]
    algos = ["bcj", "skr", "cda"] if a.quick else ALGOS
    # (label, tdsim options, largest P, most primaries): xulau exchanges
    # with every neighbour every iteration (~150 control messages per rank
    # here: 2^20 ranks would take minutes of tdsim), and on its default
    # ring overlay (diameter P) one detection takes O(P) rounds of 2P
    # exchanges: past tdsim's liveness bound at 1024 ranks
    variants = [(al, ["--algo", al], 1 << 20, 1 << 30) for al in algos if al != "xulau"]
    if "xulau" in algos:
        variants += [("xulau (ring)", ["--algo", "xulau"], 256, 0),
                     ("xulau (hypercube)", ["--algo", "xulau", "--xulau-topo", "hypercube"], 65536, 10000)]
    # the token ring with continuation p from one seed: the same number of
    # primaries at every P; the program stops at the notification
    wl = ["--workload", "ring", "--on-notify", "exit"]
    res = {}
    for p in ps:
        for label, opts, pmax, _ in variants:
            if p <= pmax:
                r = b.tdsim(opts + wl + ["--p", "0.99", "--seed", "1", "--ranks", str(p)])
                if r:
                    res[(label, p)] = r
        b.say("scale: P=%d done" % p)
    # control messages vs primaries at P = 1024: seeds whose ring runs
    # 81, 997, 7,916, 103,423 and 782,411 primary messages
    pts = [(0.99, 1, 81), (0.999, 9, 997), (0.9999, 10, 7916), (0.99999, 3, 103423),
           (0.999999, 4, 782411)][:3 if a.quick else 5]
    pp = 1024
    prim = {}
    for q, seed, n in pts:
        for label, opts, pmax, nmax in variants:
            if pp <= pmax and n <= nmax:
                r = b.tdsim(opts + wl + ["--p", str(q), "--seed", str(seed), "--ranks", str(pp)])
                if r:
                    prim[(label, q)] = r
        b.say("scale: p=%g done" % q)
    labels = [v[0] for v in variants]
    n0 = next((r[0]["primaries"] for r in res.values()), 0)
    b.md += ["#### Cost versus scale in tdsim", "",
             "tdsim (tests/sim/README-sim.md): the token ring (`--workload ring --p 0.99 --seed 1`: %d primary "
             "messages at every P, one rank busy at a time), the program stopping at the notification "
             "(`--on-notify exit`), the default delays (primary and control messages uniform 0.5–2, "
             "service exp(1)), binary spanning tree. Control messages of every type (the announcement's "
             "broadcast included) per rank; *delay*: simulated time from true quiescence to the first "
             "announcement / the longest chain of control messages in it (hops); tdsim's own wall time "
             "and peak RSS (one process, one core). xulau on its default ring overlay only to 256 ranks "
             "(one detection is O(P) rounds of exchanges; at 1024 ranks it exceeds tdsim's liveness "
             "bound of 100,000 + 1000·P events) and on a hypercube to 65,536 (about 150 exchanges per "
             "rank: 2^20 ranks would take minutes; its init plan is O(P) since 99c99ea, 250 s of tdsim "
             "at 4096 ranks before)." % n0, ""]
    hdr = ["| algorithm | " + " | ".join("P=%s" % fmt_p(p) for p in ps) + " |", "|:--|" + "---:|" * len(ps)]

    def table(title, cell):
        b.md.extend([title, ""] + hdr)
        for label in labels:
            b.md.append("| %s | %s |" % (label, " | ".join(
                cell(res[(label, p)]) if (label, p) in res else "-" for p in ps)))
        b.md.append("")

    table("Control messages per rank:", lambda r: "%.2f" % (r[0]["ctl"] / r[0]["ranks"]))
    table("Detection delay, simulated time / hops:", lambda r: "%.1f / %.0f" % (r[0]["delay_mean"], r[0]["hops_mean"]))
    table("tdsim wall time / peak RSS:", lambda r: "%.2f s / %.0f MiB" % (r[1], r[2] / 1024))
    b.md += ["<details><summary>Every run: control messages total, per rank, per primary; waves at "
             "the root; events</summary>", "",
             "| algorithm | P | primaries | control | per rank | per primary | waves | events |",
             "|:--|---:|---:|---:|---:|---:|---:|---:|"]
    for label in labels:
        for p in ps:
            if (label, p) in res:
                s = res[(label, p)][0]
                b.md.append("| %s | %d | %d | %d | %.2f | %.1f | %d | %d |" % (
                    label, p, s["primaries"], s["ctl"], s["ctl"] / p, s["ctl"] / max(s["primaries"], 1),
                    s["waves"], s["events"]))
    b.md += ["", "</details>", ""]
    qs = [q for q, _, _ in pts]
    nprim = {q: next((r[0]["primaries"] for (l, q2), r in prim.items() if q2 == q), 0) for q in qs}
    b.md += ["Control messages against primary messages, P = %d (the ring with continuation p = 0.99 .. "
             "0.999999, one seed each; cells: control messages of the whole run / per primary; tdsim prints 6 "
             "significant digits):" % pp, "",
             "| algorithm | " + " | ".join("%d primaries" % nprim[q] for q in qs) + " |",
             "|:--|" + "---:|" * len(qs)]
    for label in labels:
        cells = []
        for q in qs:
            r = prim.get((label, q))
            cells.append("%d / %.1f" % (r[0]["ctl"], r[0]["ctl"] / max(r[0]["primaries"], 1)) if r else "-")
        b.md.append("| %s | %s |" % (label, " | ".join(cells)))
    b.md.append("")
    b.plots["scale-control-per-rank-vs-p"] = (
        "tdsim ring (%d primaries): control messages per rank" % n0, "ranks", "control messages per rank",
        {l: [(p, res[(l, p)][0]["ctl"] / p) for p in ps if (l, p) in res] for l in labels
         if any((l, p) in res for p in ps)}, True)
    b.plots["scale-control-vs-primaries"] = (
        "tdsim ring, %d ranks: control vs primary messages" % pp, "primary messages", "control messages",
        {l: [(prim[(l, q)][0]["primaries"], prim[(l, q)][0]["ctl"]) for q in qs if (l, q) in prim]
         for l in labels if any((l, q) in prim for q in qs)}, True, 10)

