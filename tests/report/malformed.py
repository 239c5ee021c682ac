#!/usr/bin/env python3
"""Seeded generator of malformed report directories, run against
scripts/tdshim-report (TAP).

    malformed.py TOOL FIXTURE_DIR WORK_DIR [--seed S] [--count N] [--cli-every K]

Each case copies FIXTURE_DIR (a real run's rank-*.json) and breaks one rank
file: a field deleted, a value of another type or out of range, a truncated
or byte-flipped file (bytes that are not UTF-8 too), deep nesting, NaN, a
huge file, a FIFO, a directory or a symbolic link to /dev/zero in place of
the file, an absurd size, a rank twice, control characters in strings. The
oracle is independent of the tool: python3-jsonschema with schema.json plus
the bounds the tool documents (MAX_RANKS, MAX_TIME, MAX_NUMBER, MAX_FILE).

The tool runs in this process (imported; TDSHIM_REPORT_DEBUG=1 so an
exception escapes and counts as a traceback; SIGALRM counts a hang), and
every K-th case also as a command under `timeout`. Asserts: no traceback, no
hang, a malformed case exits 1 with exactly one line on stderr naming the
file (and the broken field when the case broke one), a valid case exits 0,
and no raw control character reaches stdout or stderr.
"""
import argparse
import contextlib
import copy
import importlib.machinery
import io
import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
import types

import jsonschema

MAX_RANKS = 1 << 24
MAX_TIME = 1e9
MAX_NUMBER = 1e18
MAX_FILE = 64 << 20
RAW_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def paths(v, p=()):
    """every (path, value) in a document; path is a tuple of keys/indices"""
    yield p, v
    if isinstance(v, dict):
        for k, x in v.items():
            yield from paths(x, p + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from paths(x, p + (i,))


def get_parent(doc, p):
    for k in p[:-1]:
        doc = doc[k]
    return doc


def in_bounds(doc):
    for p, v in paths(doc):
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            leaf = p[-1] if p and isinstance(p[-1], str) else ""
            if abs(v) > MAX_NUMBER or ((leaf.endswith("_s") or leaf == "seconds") and abs(v) > MAX_TIME):
                return False
    return True


WRONG = ["x", "", [], {}, True, None, -1, 0, 1.5, 10 ** 12, 10 ** 30, 1e300, -1e300, "\x1b[31m", [1, [2]],
         {"a": 1}, "tdshim-report/2", 2 ** 63]


class Case:
    def __init__(self, kind, target, key=None, expect_ok=None):
        self.kind, self.target, self.key, self.expect_ok = kind, target, key, expect_ok


def make_case(rng, docs, d, validator):
    """write one case into directory d; return a Case"""
    names = sorted(docs)
    target = rng.choice(names)
    out = {n: copy.deepcopy(docs[n]) for n in names}
    doc = out[target]
    kind = rng.choice(["delete"] * 3 + ["wrong"] * 5 + [
        "valid", "escape", "truncate", "flip", "nest", "nan", "huge", "fifo", "dir", "symlink", "size", "rank",
        "twice", "sizes"])
    raw = None
    key = None
    expect = None
    if kind in ("delete", "wrong"):
        ps = [p for p, _ in paths(doc) if p]
        p = rng.choice(ps)
        parent = get_parent(doc, p)
        key = p[-1] if isinstance(p[-1], str) else None
        if kind == "delete":
            if isinstance(parent, list):
                parent.pop(p[-1])
            else:
                del parent[p[-1]]
        else:
            parent[p[-1]] = copy.deepcopy(rng.choice(WRONG))
    elif kind == "escape":   # control characters and bidi overrides in every string: valid, escaped on output
        for p, v in list(paths(doc)):
            if isinstance(v, str) and p and p[-1] in ("command", "host", "detection_state", "function",
                                                      "module", "name") or (p[:1] == ("config",) and len(p) == 2):
                get_parent(doc, p)[p[-1]] = "\x1b]0;t\x07\x1b[2J" + v + "\u202e\x9b\x00"
        doc["config"]["K\x1b[1m"] = "v\r"
    elif kind == "truncate":
        raw = json.dumps(docs[target]).encode()
        raw = raw[:rng.randrange(len(raw))]
    elif kind == "flip":
        raw = bytearray(json.dumps(docs[target]).encode())
        for _ in range(rng.randint(1, 4)):
            raw[rng.randrange(len(raw))] = rng.choice([0xff, 0xc3, 0x80, 0x00, 0x1b, 0x22, 0x7b, 0x5d, 0x30])
        raw = bytes(raw)
    elif kind == "nest":
        depth = rng.choice([2000, 50000, 500000])
        raw = ("[" * depth + "]" * depth if rng.random() < 0.5 else '{"a":' * depth + "1" + "}" * depth).encode()
        expect = False
    elif kind == "nan":
        raw = re.sub(r'"wall_s": [-+0-9.eE]+', '"wall_s": ' + rng.choice(["NaN", "Infinity", "-Infinity"]),
                     json.dumps(docs[target]), count=1).encode()
        expect = False
    elif kind == "size":
        doc["size"] = rng.choice([10 ** 12, MAX_RANKS + 1, 2 ** 62])
        key = "size"
    elif kind == "rank":
        doc["rank"] = doc["size"] + rng.randrange(3)
        key = "rank"
    elif kind == "sizes":   # ranks that disagree on the job's size
        doc["size"] = doc["size"] + 1 + rng.randrange(5)
        key = "size"
        expect = False
    os.mkdir(d)
    for n in names:
        path = os.path.join(d, n)
        if n != target:
            with open(path, "w") as f:
                json.dump(out[n], f)
            continue
        if kind == "fifo":
            os.mkfifo(path)
            expect = False
        elif kind == "dir":
            os.mkdir(path)
            expect = False
        elif kind == "symlink":
            os.symlink("/dev/zero", path)
            expect = False
        elif kind == "huge":
            with open(path, "w") as f:
                json.dump(out[n], f)
            os.truncate(path, MAX_FILE + 1 + rng.randrange(1 << 20))
            expect = False
        elif raw is not None:
            with open(path, "wb") as f:
                f.write(raw)
        else:
            with open(path, "w") as f:
                json.dump(doc, f)
    if kind == "twice":   # a second file holding the same rank
        other = [n for n in names if n != target][0]
        shutil.copy(os.path.join(d, other), os.path.join(d, "rank-9999.json"))
        key, expect = "rank", False
    if expect is None:
        if raw is not None:   # the oracle reads bytes as the tool documents: UTF-8 with U+FFFD
            try:
                doc = json.loads(raw.decode("utf-8", errors="replace"),
                                 parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
            except (ValueError, RecursionError):
                doc = None
        expect = doc is not None and validator.is_valid(doc) and in_bounds(doc) \
            and isinstance(doc.get("size"), int) and doc["size"] <= MAX_RANKS and doc["rank"] < doc["size"] \
            and kind not in ("sizes", "twice") \
            and doc["size"] == docs[names[0]]["size"] and doc["rank"] == docs[target]["rank"]
    if kind == "valid":
        expect = True
    return Case(kind, target, key, expect)


class Hang(Exception):
    pass


def on_alarm(signum, frame):
    raise Hang()


def judge(case, rc, out, err, tb):
    """the problems with one run, as a list of strings"""
    bad = []
    if tb:
        bad.append(f"traceback: {tb}")
        return bad
    if RAW_CONTROL.search(out) or RAW_CONTROL.search(err):
        bad.append("a raw control character in the output")
    lines = err.splitlines()
    if case.expect_ok:
        if rc != 0:
            bad.append(f"valid case rejected (exit {rc}): {err.strip()[:300]}")
    else:
        if rc != 1:
            bad.append(f"malformed case exit {rc}, not 1")
        errs = [ln for ln in lines if "not UTF-8" not in ln]
        if len(errs) != 1:
            bad.append(f"{len(errs)} lines on stderr, not 1: {err[:300]!r}")
        elif not errs[0].startswith("tdshim-report: ") or ("rank-" not in errs[0]):
            bad.append(f"the line does not name the file: {errs[0][:300]!r}")
        elif case.key and case.key not in errs[0] and case.kind not in ("twice",):
            bad.append(f"the line does not name the field {case.key!r}: {errs[0][:300]!r}")
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("fixture")
    ap.add_argument("work")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--cli-every", type=int, default=10)
    ap.add_argument("--timeout", type=float, default=10)
    ap.add_argument("--memory", type=int, default=1024, help="MiB of address space (this and the commands)")
    a = ap.parse_args()
    os.environ["TDSHIM_REPORT_DEBUG"] = "1"
    # an unbounded allocation (range(size) with size 10^12) must fail here
    # as a MemoryError, not take the machine's memory
    resource.setrlimit(resource.RLIMIT_AS, (a.memory << 20, a.memory << 20))
    loader = importlib.machinery.SourceFileLoader("tdshim_report", a.tool)
    tool = types.ModuleType(loader.name)
    tool.__file__ = a.tool
    loader.exec_module(tool)
    schema_path = os.path.join(os.path.dirname(os.path.realpath(a.tool)), "..", "shim", "report", "schema.json")
    with open(schema_path) as f:
        validator = jsonschema.Draft7Validator(json.load(f))
    docs = {}
    for n in sorted(os.listdir(a.fixture)):
        if n.startswith("rank-") and n.endswith(".json"):
            with open(os.path.join(a.fixture, n)) as f:
                docs[n] = json.load(f)
    rng = random.Random(a.seed)
    signal.signal(signal.SIGALRM, on_alarm)
    stats = {"cases": 0, "malformed": 0, "valid": 0, "tracebacks": 0, "hangs": 0, "cli": 0}
    failures = []
    kinds = {}
    t0 = time.time()
    for i in range(a.count):
        d = os.path.join(a.work, f"case-{i:05d}")
        case = make_case(rng, docs, d, validator)
        kinds[case.kind] = kinds.get(case.kind, 0) + 1
        stats["valid" if case.expect_ok else "malformed"] += 1
        out, err, tb, rc = io.StringIO(), io.StringIO(), None, None
        signal.setitimer(signal.ITIMER_REAL, a.timeout)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                rc = tool.main([d, "--no-plots"])
        except Hang:
            stats["hangs"] += 1
            tb = "hang (no answer in %gs)" % a.timeout
        except BaseException as e:  # noqa: B036 - any escape is a failure here
            stats["tracebacks"] += 1
            tb = f"{type(e).__name__}: {str(e)[:200]}"
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        bad = judge(case, rc, out.getvalue(), err.getvalue(), tb)
        if a.cli_every and i % a.cli_every == 0:
            stats["cli"] += 1
            env = dict(os.environ)
            env.pop("TDSHIM_REPORT_DEBUG")
            try:
                p = subprocess.run(["timeout", "-k", "2", str(a.timeout), sys.executable, a.tool, d, "--no-plots"],
                                   capture_output=True, env=env)
                perr = p.stderr.decode("utf-8", errors="replace")
                if "Traceback" in perr:
                    stats["tracebacks"] += 1
                if p.returncode == 124:
                    stats["hangs"] += 1
                bad += ["command: " + b for b in judge(case, p.returncode, p.stdout.decode("utf-8", "replace"),
                                                       perr, "Traceback" if "Traceback" in perr else
                                                       "hang" if p.returncode == 124 else None)]
            except OSError as e:
                bad.append(f"command: {e}")
        stats["cases"] += 1
        if bad:
            failures.append(f"case {i} ({case.kind}, {case.target}, field {case.key}): " + "; ".join(bad))
        else:
            shutil.rmtree(d, ignore_errors=True)
    dt = time.time() - t0
    print("1..4")
    print(f"# seed {a.seed}: {stats['cases']} cases ({stats['malformed']} malformed, {stats['valid']} valid, "
          f"{stats['cli']} also as a command) in {dt:.1f} s; kinds {json.dumps(kinds, sort_keys=True)}")
    for f in failures[:20]:
        print("# " + f.replace("\n", "\\n"))
    print(f"{'ok' if stats['tracebacks'] == 0 else 'not ok'} 1 - no traceback ({stats['tracebacks']})")
    print(f"{'ok' if stats['hangs'] == 0 else 'not ok'} 2 - no hang under a {a.timeout:g} s timeout "
          f"({stats['hangs']})")
    mal = [f for f in failures if "valid case rejected" not in f]
    print(f"{'ok' if not mal else 'not ok'} 3 - each of {stats['malformed']} malformed cases: exit 1, one line "
          f"naming the file and the field, nothing raw on the terminal ({len(mal)} failed)")
    val = [f for f in failures if "valid case rejected" in f]
    print(f"{'ok' if not val else 'not ok'} 4 - each of {stats['valid']} valid cases (control characters in "
          f"strings, bytes that are not UTF-8 in strings) succeeds ({len(val)} failed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
