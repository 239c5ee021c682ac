"""cost: per-message cost, ping-pong latency and the 8-byte message rate, native against the
hand-header floor, the PMPI-tool floor, header-free and header-carrying
algorithms, on shared memory and on Open MPI's TCP transport."""
import os
import re

from .common import ALGOS, q1, q3, rotated


def run(b):
    a = b.a
    # --quick is the CI's smoke test (every side runs, no figure asserted): 2 rounds, 1 over TCP
    rounds = a.rounds or (2 if a.quick else 11)
    sizes = [8, 65536] if a.quick else [8, 64, 1024, 16384, 262144, 4194304]
    sides = [("native", None), ("floor 2 B", "floor"), ("none (header-free)", {"TDSHIM_ALGO": "none"}),
             ("skr (header-free)", {"TDSHIM_ALGO": "skr"}),
             ("skr, 1-byte header, copy layout at every size", {"TDSHIM_ALGO": "skr", "TDSHIM_PIGGYBACK": "copy"}),
             ("bcj (2-byte header)", {"TDSHIM_ALGO": "bcj"})]
    if not a.quick:
        # every other algorithm under auto (its header size and its per-message work)
        sides += [(algo, {"TDSHIM_ALGO": algo}) for algo in ALGOS if algo not in ("bcj", "skr")]
        # the two layouts at every size (auto: copy up to 2 KiB, datatype above)
        sides += [("bcj, copy layout", {"TDSHIM_ALGO": "bcj", "TDSHIM_PIGGYBACK": "copy"}),
                  ("bcj, datatype layout", {"TDSHIM_ALGO": "bcj", "TDSHIM_PIGGYBACK": "datatype"})]
    # the floor of interposition: a PMPI tool that only counts calls and
    # bytes (tests/mpi/pcount.c, built by make check)
    pcount = os.path.join(b.b, "tests", "mpi", ".libs", "libpcount.so")
    if os.path.exists(pcount):
        sides.insert(2, ("pcount (counting PMPI tool)", {"_lib": pcount}))
    else:
        b.say("no %s (make check builds it): the PMPI-tool floor is left out" % pcount)
    transports = [("shared memory", None), ("TCP (btl tcp,self)", {"btl": "tcp,self", "btl_tcp_if_include": "lo"})]
    b.md += ["#### Per-message cost", ""]
    for tname, mca in transports:
        lat = {}   # (side, size) -> [min one-way us per run]
        rate = {}  # side -> [best batch msgs/s per run]
        trounds = rounds if mca is None or not a.quick else 1
        for r in range(trounds):
            for name, tds in rotated(sides, r):
                if tds != "floor":
                    pp = ["--min", str(sizes[0]), "--max", str(sizes[-1]), "--reps", "5"]
                    pp += ["--iters", "300"] if a.quick else []
                    out, err = b.launch(2, tds, [b.exe("bench", "pingpong")] + pp, mca)
                    if err:
                        b.say("pingpong %s %s: %s" % (tname, name, err))
                    for m in re.finditer(r"^pingpong (\d+) ([\d.]+) ([\d.]+)$", out or "", re.M):
                        if int(m.group(1)) in sizes:
                            lat.setdefault((name, int(m.group(1))), []).append(float(m.group(3)))
                mr = [b.exe("bench", "msgrate"), "--bytes", "8", "--reps", "5"]
                mr += ["--windows", "60"] if a.quick else []
                if tds == "floor":
                    mr += ["--hand-header", "2"]
                out, err = b.launch(2, None if tds == "floor" else tds, mr, mca)
                if err:
                    b.say("msgrate %s %s: %s" % (tname, name, err))
                m = re.search(r"^msgrate (\d+) (\d+) (\d+)$", out or "", re.M)
                if m:
                    rate.setdefault(name, []).append(float(m.group(3)))
            b.say("cost, %s: round %d/%d" % (tname, r + 1, trounds))
        b.md += ["##### %s, %d alternating rounds" % (tname, trounds), ""]
        b.md += ["One-way latency (ping-pong, each run's best of 5 batches; lower quartile over the rounds, "
                 "min..max in brackets); added = lower quartile minus native's, in ns per one-way message.", ""]
        names = [n for n, t in sides if t != "floor"]
        b.md.append("| size (B) | " + " | ".join(names) + " |")
        b.md.append("|---:|" + "---:|" * len(names))
        for sz in sizes:
            nat = lat.get(("native", sz))
            cells = []
            for n in names:
                v = lat.get((n, sz))
                if not v:
                    cells.append("-")
                elif n == "native" or not nat:
                    cells.append("%.3f us [%.3f..%.3f]" % (q1(v), min(v), max(v)))
                else:
                    cells.append("%.3f us, %.3f, %+.0f ns" % (q1(v), q1(v) / q1(nat), (q1(v) - q1(nat)) * 1e3))
            b.md.append("| %d | %s |" % (sz, " | ".join(cells)))
        b.md += ["", "8-byte message rate (msgrate, each run's best batch; upper quartile over the rounds); "
                 "ratio to native and to the 2-byte hand-header floor; added ns per message.", ""]
        b.md += ["| side | msgs/s | min..max | ratio to native | ratio to floor | added ns/msg |",
                 "|:--|---:|:--|---:|---:|---:|"]
        nat, flo = rate.get("native"), rate.get("floor 2 B")
        for n, t in sides:
            v = rate.get(n)
            if not v:
                b.md.append("| %s | - | | | | |" % n)
                continue
            rn = "%.3f" % (q3(v) / q3(nat)) if nat else "-"
            rf = "%.3f" % (q3(v) / q3(flo)) if flo else "-"
            add = "%+.1f" % (1e9 / q3(v) - 1e9 / q3(nat)) if nat else "-"
            b.md.append("| %s | %.0f | %.0f..%.0f | %s | %s | %s |" % (n, q3(v), min(v), max(v), rn, rf, add))
        b.md.append("")

