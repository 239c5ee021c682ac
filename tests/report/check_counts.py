"""Compares a real tdshim report with what report-prog counted itself.

usage: check_counts.py SCHEMA.json REPORT_DIR PROG_OUTPUT [MONITORING_PREFIX]

PROG_OUTPUT holds report-prog's lines "report-prog: rank R sent S ...".
With MONITORING_PREFIX (Open MPI pml monitoring files PREFIX.R.prof), also
checks that the point-to-point messages Open MPI saw leaving each rank are
exactly the primaries plus tdshim's own traffic the report declares
(control messages and clock ping-pongs), in messages and in bytes.
Prints one line per check; exit status 1 if any failed.
"""
import glob
import json
import os
import re
import sys

import jsonschema

failed = []


def check(cond, what):
    print(("ok:   " if cond else "FAIL: ") + what)
    if not cond:
        failed.append(what)


def load_prog(path):
    prog = {}
    for line in open(path):
        m = re.match(r"report-prog: rank (\d+) sent (\d+) sent_bytes (\d+) recv (\d+) recv_bytes (\d+) iprobes (\d+)",
                     line)
        if m:
            r, s, sb, n, nb, ip = map(int, m.groups())
            prog[r] = dict(sent=s, sent_bytes=sb, recv=n, recv_bytes=nb, iprobes=ip)
    return prog


def load_monitoring(prefix, rank):
    """messages and bytes rank sent point-to-point ('E' lines: not collectives)"""
    msgs = nbytes = 0
    for line in open(f"{prefix}.{rank}.prof"):
        f = line.split("\t")
        if f[0] == "E" and int(f[1]) == rank:
            nbytes += int(f[3].split()[0])
            msgs += int(f[4].split()[0])
    return msgs, nbytes


def main():
    schema = json.load(open(sys.argv[1]))
    d, out = sys.argv[2], sys.argv[3]
    mon = sys.argv[4] if len(sys.argv) > 4 else None
    prog = load_prog(out)
    files = sorted(glob.glob(os.path.join(d, "rank-*.json")))
    check(prog and len(files) == len(prog), f"{len(files)} rank files for {len(prog)} ranks that printed counts")
    docs = {}
    for f in files:
        doc = json.load(open(f))
        try:
            jsonschema.validate(doc, schema)
            docs[doc["rank"]] = doc
        except jsonschema.ValidationError as e:
            check(False, f"{f} valid: {e.message} at {list(e.absolute_path)}")
    check(len(docs) == len(files), f"all {len(files)} rank files validate against the schema")
    for r, p in sorted(prog.items()):
        doc = docs.get(r)
        if doc is None:
            check(False, f"rank {r}: no report")
            continue
        pr = doc["primary"]
        got = (pr["sent"], pr["sent_bytes"], pr["received"], pr["received_bytes"])
        want = (p["sent"], p["sent_bytes"], p["recv"], p["recv_bytes"])
        check(got == want, f"rank {r}: report sent/bytes/received/bytes {got} == program's {want}")
        # every send of the program is one call of the send category, whichever path of the shim
        # took it (send_fast or the general path, which times one call in 16)
        calls = doc["tdshim_time"]["categories"]["send"]["calls"]
        check(calls == p["sent"], f"rank {r}: report send calls {calls} == program's sends {p['sent']}")
        check(doc["polls"]["total"] == p["iprobes"],
              f"rank {r}: report polls {doc['polls']['total']} == program's Iprobe calls {p['iprobes']}")
        c = doc["control"]
        by_type = (sum(t["sent"] for t in c["by_type"]), sum(t["bytes_sent"] for t in c["by_type"]),
                   sum(t["bytes_received"] for t in c["by_type"]))
        check(by_type == (c["sent"], c["bytes_sent"], c["bytes_received"]),
              f"rank {r}: control by type (messages, bytes sent, bytes received) {by_type} add up to the shim's "
              f"totals {(c['sent'], c['bytes_sent'], c['bytes_received'])}")
        check(pr["unreceived_at_finalize"] == 0 and doc["detection"]["violations"] == 0,
              f"rank {r}: no unreceived messages, no contract violations")
        if mon:
            msgs, nbytes = load_monitoring(mon, r)
            ours = pr["sent"] + doc["control"]["sent"] + doc["clock"]["sync_messages_sent"]
            check(msgs == ours, f"rank {r}: Open MPI pml monitoring counts {msgs} point-to-point messages sent == "
                  f"primary {pr['sent']} + control {doc['control']['sent']} + clock sync "
                  f"{doc['clock']['sync_messages_sent']} = {ours}")
            obytes = (pr["sent_bytes"] + pr["piggyback_bytes_sent"] + doc["control"]["bytes_sent"]
                      + doc["clock"]["sync_bytes_sent"])
            check(nbytes == obytes, f"rank {r}: pml monitoring bytes sent {nbytes} == user {pr['sent_bytes']} + "
                  f"piggyback {pr['piggyback_bytes_sent']} + control {doc['control']['bytes_sent']} + clock sync "
                  f"{doc['clock']['sync_bytes_sent']} = {obytes}")
    if docs and not mon:
        tot = {k: sum(doc["primary"][k] for doc in docs.values())
               for k in ("sent", "received", "piggyback_bytes_sent", "piggyback_bytes_received")}
        check(tot["sent"] == tot["received"] and tot["piggyback_bytes_sent"] == tot["piggyback_bytes_received"],
              f"totals: sent == received and piggyback bytes sent == received {tot}")
        eps = [doc["episodes"] for doc in docs.values()]
        check(all(eps), "every rank learned of at least one detection episode")
        if all(eps):
            err = max(doc["clock"]["offset_error_s"] for doc in docs.values())
            last = max(e[-1]["t_detect_s"] for e in eps) - max(e[-1]["t_last_passive_s"] or 0 for e in eps)
            check(last >= -2 * err, f"global detection latency of the last episode {last:.6f} s >= -2 x clock error")
    print(f"{len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
