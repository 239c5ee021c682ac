"""Checks a report written by test-writer.c against the values it filled.

usage: check_writer.py SCHEMA.json REPORT_DIR NRANKS
Exit status 0 when everything matches; each mismatch is printed.
The formulas mirror tests/report/test-writer.c: keep the two in step.
"""
import json
import os
import re
import sys

import jsonschema

errors = []


def expect(cond, what):
    if not cond:
        errors.append(what)


def near(a, b, tol=1e-6):
    return a is not None and b is not None and abs(a - b) <= tol


def check_rank(doc, r):
    p = doc["primary"]
    expect(p["sent"] == 10 + r and p["sent_bytes"] == 1000 * (r + 1), f"rank {r}: primary sent {p}")
    expect(p["received"] == 20 + r and p["received_bytes"] == 2000 * (r + 1), f"rank {r}: primary received {p}")
    expect(p["piggyback_bytes_sent"] == 4 * (10 + r) and p["piggyback_bytes_received"] == 4 * (20 + r),
           f"rank {r}: piggyback bytes {p}")
    expect(p["unreceived_at_finalize"] == (2 if r == 1 else 0), f"rank {r}: unreceived {p}")
    expect(p["sent_early"] == 11 + r, f"rank {r}: sent_early {p}")
    c = doc["control"]
    expect(c["bytes_sent"] == 48 * (3 + r) and c["bytes_received"] == 48 * (5 + r), f"rank {r}: control bytes")
    engine = [t for t in c["by_type"] if t["engine"]]  # engine type 0 is TERM
    term = engine[0] if engine else None
    expect(term is not None and term["sent"] == 1 and term["received"] == (1 if r else 0),
           f"rank {r}: engine type 0 (TERM) {term}")
    algo = [t for t in c["by_type"] if not t["engine"]]
    expect(algo and algo[0]["sent"] == 2 + r and algo[0]["received"] == 5 + r - (1 if r else 0),
           f"rank {r}: first algorithm type {algo[:1]}")
    expect(c["sent"] == 3 + r and c["received"] == 5 + r, f"rank {r}: control totals {c['sent']} {c['received']}")
    expect(all(t["bytes_sent"] == 48 * t["sent"] and t["bytes_received"] == 48 * t["received"] for t in c["by_type"]),
           f"rank {r}: bytes by type are 48 x count")
    expect(doc["polls"] == {"total": 100 + r, "empty": 50 + r, "empty_tests": 20 + r, "busy_gaps": 3 + r,
                            "busy_gap_s": 0.25, "unscoped": 4 + r,
                            "candidates": {n: {"passive": 10 * c + r, "breaches": c + r}
                                           for c, n in enumerate(["probe", "test", "spin"])},
                            "work_tags": [{"tag": 7, "times": 2 + r, "found": 9}], "work_tags_other": 5 + r}, f"rank {r}: polls {doc['polls']}")
    # wall = MPI_Init..MPI_Finalize entry + the finalize category and the wait there (spent after it)
    wall = 1.0 + 0.1 * r + 0.005 * (r + 1) + 0.002 * (r + 1)
    expect(near(doc["wall_s"], wall), f"rank {r}: wall {doc['wall_s']}")
    expect(near(doc["finalize_wait_s"], 0.002 * (r + 1)), f"rank {r}: finalize_wait_s {doc['finalize_wait_s']}")
    expect(near(doc["t_finalize_s"] - doc["t_init_s"], 1.0 + 0.1 * r), f"rank {r}: t_finalize - t_init")
    cats = doc["tdshim_time"]["categories"]
    for i, name in enumerate(["send", "recv", "progress", "control", "finalize"]):
        expect(near(cats[name]["seconds"], 0.001 * (i + 1) * (r + 1)) and cats[name]["calls"] == i + r,
               f"rank {r}: category {name} {cats[name]}")
    total = 0.001 * 15 * (r + 1)
    expect(near(doc["tdshim_time"]["total_s"], total), f"rank {r}: total {doc['tdshim_time']}")
    expect(near(doc["tdshim_time"]["percent_of_wall"], 100 * total / wall, 1e-4), f"rank {r}: percent")
    d = doc["detection"]
    expect(d["waves"] == 7 and d["busy_to_idle"] == 30 + r and d["idle_to_busy"] == 29 + r,
           f"rank {r}: waves/transitions {d}")
    expect(d["violations"] == (1 if r == 2 else 0) and d["notifications"] == 2, f"rank {r}: violations {d}")
    expect(doc["node"] == {"ranks": 4 if r == 2 else 1, "online_cpus": 2 if r == 2 else 4}, f"rank {r}: node {doc['node']}")
    expect(doc["thread_level"] == {"requested": "multiple", "provided": "serialized", "threads_using_mpi": 2 + r,
                                   "late_threads": 3 if r == 1 else 0}, f"rank {r}: thread level")
    eps = doc["episodes"]
    expect(len(eps) == 2, f"rank {r}: {len(eps)} episodes")
    for k, e in enumerate(eps, 1):
        expect(e["episode"] == k, f"rank {r}: episode number {e}")
        expect(near(e["t_detect_s"] - doc["t_init_s"], 0.5 * k + 0.01 * r), f"rank {r}: t_detect {e}")
        expect(near(e["t_last_passive_s"] - doc["t_init_s"], 0.4 * k + 0.02 * r), f"rank {r}: t_last_passive {e}")
        expect(near(e["idle2end_s"], 0.1 * k - 0.01 * r), f"rank {r}: idle2end {e}")
    expect(near(doc["last_passive_s"] - doc["t_init_s"], 0.8 + 0.02 * r), f"rank {r}: last_passive")
    ck = doc["clock"]
    expect(abs(ck["offset_to_rank0_s"]) <= ck["offset_error_s"] + 1e-3, f"rank {r}: clock {ck}")
    expect(ck["sync_rounds"] > 0, f"rank {r}: clock not synchronised")
    if r == 0:
        expect(ck["offset_to_rank0_s"] == 0 and near(doc["t_init_s"], 0), f"rank 0: origin {ck} {doc['t_init_s']}")
    cs = doc["callsites"]
    expect(cs["requested"] and cs["top"] == 3, f"rank {r}: callsites {cs}")
    if cs["available"]:
        for kind, n in (("poll", 5), ("send", 2)):
            s = cs[kind]
            got = sum(t["count"] for t in s["top"]) + s["unattributed"]
            expect(s["total"] == n and (got == n if s["distinct"] <= 3 else got <= n),
                   f"rank {r}: {kind} sites {s}")
    else:
        expect("libunwind" in cs.get("reason", ""), f"rank {r}: unavailable without a reason {cs}")


def main():
    schema_path, d, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    schema = json.load(open(schema_path))
    docs = []
    for r in range(n):
        path = os.path.join(d, f"rank-{r:04d}.json")
        doc = json.load(open(path))
        try:
            jsonschema.validate(doc, schema)
        except jsonschema.ValidationError as e:
            errors.append(f"{path}: {e.message} at {list(e.absolute_path)}")
            continue
        expect(doc["rank"] == r and doc["size"] == n, f"{path}: rank/size")
        check_rank(doc, r)
        docs.append(doc)
    expect(not [f for f in os.listdir(d) if ".tmp." in f], "temporary files left behind")
    text = open(os.path.join(d, "summary.txt")).read()
    for sec in ["Header", "Overhead per rank", "Across ranks", "Control messages",
                "Detection episodes and latency", "Call sites", "Unreceived messages"]:
        expect(re.search(r"^@--- " + re.escape(sec), text, re.M), f"summary.txt: no section {sec}")
    if len(docs) == n:
        m = re.search(r"^primary messages sent\s+(\S+)\s+(\S+)\s+(\S+)$", text, re.M)
        expect(m and [float(x) for x in m.groups()] == [10, 10 + (n - 1) / 2, 10 + n - 1],
               f"summary.txt: min/median/max of primary sent: {m and m.groups()}")
        for k in (1, 2):
            lp = max(doc["episodes"][k - 1]["t_last_passive_s"] for doc in docs)
            ld = max(doc["episodes"][k - 1]["t_detect_s"] for doc in docs)
            m = re.search(r"^\s*%d\s+%d\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)" % (k, n), text, re.M)
            expect(m and near(float(m.group(4)), ld - lp, 1e-5),
                   f"summary.txt: episode {k} latency {m and m.group(4)} != {ld - lp}")
        m = re.search(r"^\d+\. ranks (\S+): (\d+) threads made their first MPI call while tdshim judged their rank "
                      r"passive.* Set TDSHIM_THREADS=(\d+) ", text, re.M)
        expect((m and m.groups() == ("1", "3", str(n + 1))) if n > 1 else not m,
               f"summary.txt: late threads advice {m and m.groups()}")
        expect(re.search(r"^@ Node        : 1 of the job's ranks on 4 online CPUs \(rank 0's node\)$", text, re.M),
               "summary.txt: rank 0's node line")
        m = re.search(r"never received: (\d+)", text)
        expect(m and int(m.group(1)) == (2 if n > 1 else 0), "summary.txt: unreceived total")
    for e in errors:
        print("MISMATCH:", e)
    print(f"checked {len(docs)} rank files and summary.txt in {d}: {len(errors)} mismatches")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
