#!/usr/bin/env python3
"""Runs tdsim and prints the markdown tables of '## Algorithm skr / fourcounter'."""
import subprocess, sys, math
SIM = sys.argv[1]

def run(args):
    out = subprocess.run([SIM] + args, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("tdsim failed: %s\n%s%s" % (" ".join(args), out.stdout, out.stderr))
    line = [l for l in out.stdout.splitlines() if l.startswith("summary ")][-1]
    return {k: v for k, v in (f.split("=", 1) for f in line.split()[1:])}

def depth(P):
    d, last = 0, P - 1
    while last > 0:
        last = (last - 1) // 2; d += 1
    return d

def table1(n):
    probs = [("A", "skrA", ["--depth", "11"]), ("B", "skrB", ["--depth", "10", "--phases", "6"]),
             ("C", "skrC", ["--length", "42"]), ("D", "skrD", ["--iters", "2000"])]
    print("| problem | P | primaries | episodes | control msgs (init+idle+activity) | iterations Phase 1 + Phase 2 | paper: control msgs | paper: iterations |")
    print("|---|---:|---:|---:|---:|---|---:|---|")
    paper = {"A": {2:(20,"8+2"),4:(40,"9+1"),8:(88,"10+1"),16:(144,"8+1"),32:(256,"7+1"),64:(384,"5+1"),128:(996,"6+1"),256:(1992,"6+1")},
             "B": {2:(90,"44+1"),4:(172,"42+1"),8:(264,"32+1"),16:(416,"25+1"),32:(608,"17+2"),64:(1024,"15+1"),128:(2304,"16+2"),256:(3328,"12+1")},
             "C": {2:(26,"12+1"),4:(92,"21+1"),8:(232,"28+1"),16:(496,"30+1"),32:(960,"29+1"),64:(2112,"32+1"),128:(2688,"20+1"),256:(4096,"15+1")},
             "D": {2:(6,"2+1"),4:(12,"2+1"),8:(24,"2+1"),16:(48,"2+1"),32:(96,"2+1"),64:(192,"2+1"),128:(384,"2+1"),256:(768,"2+1")}}
    for name, w, extra in probs:
        for P in [2, 4, 8, 16, 32, 64, 128, 256]:
            r = run(["--algo", "skr", "--workload", w, "--ranks", str(P), "--schedules", str(n), "--seed", "1"] + extra)
            e = P - 1
            k = float(r["ctl.sleep"]) / e  # dormancy rounds after the last announcement: 1+1 iterations each
            p1 = float(r["ctl.idle"]) / e - k
            p2 = float(r["ctl.activity"]) / e - k
            ctl = float(r["ctl.init"]) + float(r["ctl.idle"]) + float(r["ctl.activity"]) - 4 * e * k
            pc, pi = paper[name][P]
            print(f"| {name} | {P} | {float(r['primaries']):.0f} | {r['episodes']} | {ctl:.0f} | {p1:.1f}+{p2:.1f} | {pc} | {pi} |")

def traversals(n):
    print("| workload | P | depth | bcj hops mean / max | bcj traversals mean / max | skr hops mean / max | skr traversals mean / max |")
    print("|---|---:|---:|---|---|---|---|")
    for w in ["ring", "spawn", "skrA", "skrC", "bcj5"]:
        for P in [16, 64, 256]:
            d = depth(P)
            row = [w, str(P), str(d)]
            for a in ["bcj", "skr"]:
                r = run(["--algo", a, "--workload", w, "--ranks", str(P), "--schedules", str(n), "--seed", "1", "--adversarial"])
                row += [f"{float(r['hops_mean']):.1f} / {r['hops_max']}", f"{float(r['hops_mean']) / d:.2f} / {int(r['hops_max']) / d:.2f}"]
            print("| " + " | ".join(row) + " |")

def fourcounter(n):
    print("| P | q | token moves (mean) | waves (detection) | control msgs measured | Theorem 1: P/q + P | measured / Theorem 1 | P x moves + P | measured / (P x moves + P) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for q in [0.1, 0.01]:
        for P in [16, 64, 256, 1024, 4096]:
            r = run(["--algo", "fourcounter", "--workload", "ring", "--ranks", str(P), "--p", str(1 - q),
                     "--service", "const:1000", "--cdelay", "const:0.001", "--pdelay", "const:0.001", "--send-at", "end",
                     "--schedules", str(n), "--seed", "1"])
            e = P - 1
            k = float(r["ctl.sleep"]) / e  # dormancy after the announcement: 2 waves, 1 repeat, 1 sleep broadcast
            ctl = float(r["ctl"]) - k * 4 * e
            waves = float(r["ctl.stop"]) / e - 2 * k
            bound = P / q + P
            eff = P * float(r["primaries"]) + P
            print(f"| {P} | {q} | {float(r['primaries']):.1f} | {waves:.1f} | {ctl:.0f} | {bound:.0f} | {ctl / bound:.2f} | {eff:.0f} | {ctl / eff:.2f} |")

what = sys.argv[2]
n = int(sys.argv[3])
{"table1": table1, "traversals": traversals, "fourcounter": fourcounter}[what](n)
