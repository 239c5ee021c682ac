#!/usr/bin/env python3
"""cgcost: self cost (Ir) per object file from a callgrind output file.

callgrind_annotate prints code inlined from headers on lines of their own
file, without the object that holds it, so filtering its output by library
name drops exactly the inlined request table and counting. The object
(ob=) of a cost line is the object of the function it is charged to, which
holds inlined code too: summing self cost by ob= is the whole cost of a
library. A cost line that follows calls= is the inclusive cost of that call,
not self cost, and is skipped.

usage: cgcost.py FILE [OBJ-SUBSTRING]
       cgcost.py --calls FN-SUBSTRING FILE
       cgcost.py --fns OBJ-SUBSTRING FILE
       cgcost.py --per OBJ-SUBSTRING N BIG-FILE SMALL-FILE
  prints "Ir<TAB>object" per object, or one number: the total self cost of
  the objects whose name contains OBJ-SUBSTRING; with --calls, the number of
  calls made to functions whose name contains FN-SUBSTRING; with --fns, the
  self cost of each function of the objects named (code inlined into a
  function is counted in it); with --per, each function's cost in BIG-FILE
  less its cost in SMALL-FILE over N (what one of N more messages costs it).
"""
import re
import sys


def expand(table, val):
    """a name of name compression: "(id) name" defines id, "(id)" uses it"""
    m = re.match(r"\((\d+)\)(?: (.*))?$", val)
    if not m:
        return val
    if m.group(2) is not None:
        table[m.group(1)] = m.group(2)
    return table.get(m.group(1), m.group(1))


def objcost(path):
    names = {}          # compressed (id) -> name, for ob= and cob=
    fnames = {}         # the same for fn= and cfn=
    cost = {}
    ob = None
    cfn = fn = ""
    fcost = {}          # (object, function) -> self cost, inlined code included
    ncalls = {}         # callee name -> calls
    skip_next = False
    events = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line or line == "\n":
                continue
            c = line[0]
            if c.isdigit() or c in "+-*":
                if skip_next:
                    skip_next = False
                    continue
                parts = line.split()
                # positions: line (one column; instr line would be two)
                if len(parts) > npos:
                    cost[ob] = cost.get(ob, 0) + int(parts[npos])
                    k = (ob, fn)
                    fcost[k] = fcost.get(k, 0) + int(parts[npos])
                continue
            key, _, val = line.rstrip("\n").partition("=")
            if key in ("ob", "cob"):
                name = expand(names, val)
                if key == "ob":
                    ob = name
            elif key in ("fn", "cfn"):
                name = expand(fnames, val)
                if key == "cfn":
                    cfn = name
                else:
                    fn = name
            elif line.startswith("calls="):
                skip_next = True
                ncalls[cfn] = ncalls.get(cfn, 0) + int(line[6:].split()[0])
            elif line.startswith("events:"):
                events = line.split()[1:]
    return cost, events, ncalls, fcost


npos = 1  # columns of position before the cost (the positions: header)


def main():
    global npos
    if len(sys.argv) == 6 and sys.argv[1] == "--per":
        obj, n = sys.argv[2], int(sys.argv[3])
        big, small = (objcost(f)[3] for f in sys.argv[4:6])
        rows = {}
        for d, sign in ((big, 1), (small, -1)):
            for (o, f), v in d.items():
                if o and obj in o:
                    rows[f] = rows.get(f, 0) + sign * v
        for f, v in sorted(rows.items(), key=lambda kv: -kv[1]):
            if v:
                print("%8.1f  %s" % (v / n, f))
        print("%8.1f  total" % (sum(rows.values()) / n))
        return
    calls = fns = None
    if len(sys.argv) == 4 and sys.argv[1] in ("--calls", "--fns"):
        if sys.argv[1] == "--calls":
            calls = sys.argv[2]
        else:
            fns = sys.argv[2]
        del sys.argv[1:3]
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    # read the positions header first: it decides how many columns precede the cost
    with open(sys.argv[1], encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("positions:"):
                npos = len(line.split()) - 1
                break
            if line.startswith("fn=") or line.startswith("ob="):
                break
    cost, events, ncalls, fcost = objcost(sys.argv[1])
    if fns is not None:
        for (o, f), v in sorted(fcost.items(), key=lambda kv: -kv[1]):
            if o and fns in o:
                print("%d\t%s" % (v, f))
        return
    if calls is not None:
        print(sum(v for k, v in ncalls.items() if calls in k))
        return
    if events and events[0] != "Ir":
        sys.exit("cgcost: the first event is %s, not Ir" % events[0])
    if len(sys.argv) == 3:
        print(sum(v for k, v in cost.items() if k and sys.argv[2] in k))
    else:
        for k, v in sorted(cost.items(), key=lambda kv: -kv[1]):
            print("%d\t%s" % (v, k))


if __name__ == "__main__":
    main()
