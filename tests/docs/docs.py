#!/usr/bin/env python3
"""The documentation cannot drift (issue 30): shared by tests/docs/*.sh.

  docs.py links TOP                  relative links and #anchors of README.md and docs/*.md resolve;
                                     README.md names every TDSHIM_* the code reads; the user guide's
                                     variable table names every variable of shim/mpi/tds_env.h with
                                     its default
  docs.py blocks TOP                 list the runnable blocks (file:line, then the commands, NUL-ended)
  docs.py expect TOP FILE:LINE OUT   OUT (what the block at FILE:LINE printed) against the output
                                     the documentation shows for it: exit 1 with the difference

A runnable block is a ```sh fence right after a line <!-- runnable -->. The output the docs
show for it is a fence right after a line <!-- output --> that follows the block (blank lines
between allowed): each of its lines must be a line of what the block printed (the docs may
leave lines out; the order is not compared: the ranks' standard output and error reach the
launcher separately); "..." in a line stands for any text (times, paths, counts).
Prints TAP for 'links'."""
import os
import re
import sys

DOCS = ["README.md", "docs/user-guide.md", "docs/algorithms.md", "docs/internals.md"]


def doc_files(top):
    return [os.path.join(top, d) for d in DOCS]


def headings_and_lines(path):
    """(anchors, [(lineno, line)] outside fenced blocks)"""
    anchors, seen, prose, fence = set(), {}, [], False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.startswith("```"):
                fence = not fence
                continue
            if fence:
                continue
            prose.append((n, line))
            m = re.match(r"^#{1,6} +(.*?)\s*$", line)
            if m:
                # GitHub's slug: lower case, drop what is not a word character, space or
                # hyphen, spaces to hyphens; repeated headings get -1, -2...
                slug = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
                k = seen.get(slug, 0)
                seen[slug] = k + 1
                anchors.add(slug if k == 0 else "%s-%d" % (slug, k))
            for a in re.findall(r'<a (?:name|id)="([^"]+)"', line):
                anchors.add(a)
    return anchors, prose


def tds_env(top):
    """[(name, default)] of TDS_ENV_LIST"""
    text = open(os.path.join(top, "shim/mpi/tds_env.h"), encoding="utf-8").read()
    return re.findall(r'X\(TDS_ENV_\w+,\s*"(TDSHIM_\w+)",\s*"([^"]*)"', text)


def code_variables(top):
    names = set()
    for d in ("shim", "include"):
        for root, _, files in os.walk(os.path.join(top, d)):
            for fn in files:
                try:
                    text = open(os.path.join(root, fn), encoding="utf-8", errors="replace").read()
                except OSError:
                    continue
                names.update(re.findall(r"TDSHIM_[A-Z0-9_]+", text))
    # a name ending in _ is a family written as a prefix (TDSHIM_CDA_*), not a variable
    return {n for n in names if not n.endswith("_")}


def names_word(name, text):
    """NAME in TEXT as a whole word (TDSHIM_REPORT is not in TDSHIM_REPORT_DIR)"""
    return re.search(r"(?<![A-Za-z0-9_])%s(?![A-Za-z0-9_])" % re.escape(name), text) is not None


def links(top):
    tests = []  # (ok, description, diagnostics)
    cache = {}

    def anchors_of(path):
        if path not in cache:
            cache[path] = headings_and_lines(path)[0]
        return cache[path]

    for path in doc_files(top):
        rel = os.path.relpath(path, top)
        _, prose = headings_and_lines(path)
        bad, n = [], 0
        for lineno, line in prose:
            line = re.sub(r"`[^`]*`", "", line)  # code spans are not links
            for target in re.findall(r"\]\(([^)\s]+)\)", line):
                if re.match(r"^[a-z]+:", target):
                    continue  # http:, https:, mailto:
                n += 1
                file, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
                if not os.path.exists(dest):
                    bad.append("%s:%d: %s: no such file" % (rel, lineno, target))
                elif anchor and dest.endswith(".md") and anchor not in anchors_of(dest):
                    bad.append("%s:%d: %s: no heading #%s in %s" % (rel, lineno, target, anchor,
                                                                    os.path.relpath(dest, top)))
        tests.append((not bad and n > 0, "%s: %d relative links resolve" % (rel, n), bad))
    readme = open(os.path.join(top, "README.md"), encoding="utf-8").read()
    missing = sorted(v for v in code_variables(top) if not names_word(v, readme))
    tests.append((not missing, "README.md names every TDSHIM_* in shim/ and include/", missing))
    guide = open(os.path.join(top, "docs/user-guide.md"), encoding="utf-8").read()
    env = tds_env(top)
    bad = []
    for name, default in env:
        row = re.search(r"^\| `%s` \| ([^|]*) \|" % name, guide, re.M)
        want = "`%s`" % default if default else "empty"
        if not row:
            bad.append("%s: no row in the user guide's table" % name)
        elif row.group(1).strip() != want:
            bad.append("%s: the table says %s, tds_env.h %s" % (name, row.group(1).strip(), want))
    tests.append((not bad and len(env) > 0,
                  "user guide's table: all %d variables of tds_env.h with their defaults" % len(env), bad))
    print("1..%d" % len(tests))
    for i, (ok, desc, diags) in enumerate(tests, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", i, desc))
        for d in diags:
            print("# " + d)
    return 0 if all(t[0] for t in tests) else 1


def fence_after(lines, i):
    """the lines of the fence opening at lines[i] and the index of its closing line"""
    j = i + 1
    while j < len(lines) and not lines[j].startswith("```"):
        j += 1
    return lines[i + 1:j], j


def shown_output(lines, j):
    """the output shown for the block closed at lines[j] (<!-- output --> and a fence), or None"""
    k = j + 1
    while k < len(lines) and not lines[k].strip():
        k += 1
    if k + 1 < len(lines) and lines[k].strip() == "<!-- output -->" and lines[k + 1].startswith("```"):
        return fence_after(lines, k + 1)[0]
    return None


def expect(top, where, out):
    rel, _, n = where.rpartition(":")
    lines = open(os.path.join(top, rel), encoding="utf-8").read().split("\n")
    _, j = fence_after(lines, int(n) - 2)
    want = shown_output(lines, j)
    if want is None:
        print("no output shown")
        return 0
    got = open(out, encoding="utf-8", errors="replace").read().split("\n")
    missing = [w for w in want
               if not any(re.match("^" + ".*".join(map(re.escape, w.split("..."))) + "$", g) for g in got)]
    if missing or not want:
        print("the docs show %s, not printed by the block" % ", ".join(map(repr, missing or ["an empty output"])))
        return 1
    print("the %d lines the docs show printed" % len(want))
    return 0


def blocks(top):
    for path in doc_files(top):
        rel = os.path.relpath(path, top)
        lines = open(path, encoding="utf-8").read().split("\n")
        i = 0
        while i < len(lines):
            if lines[i].strip() == "<!-- runnable -->":
                if i + 1 >= len(lines) or not lines[i + 1].startswith("```sh"):
                    sys.stderr.write("%s:%d: <!-- runnable --> not followed by ```sh\n" % (rel, i + 1))
                    return 1
                body, j = fence_after(lines, i + 1)
                sys.stdout.write("%s:%d\n%s\n\0" % (rel, i + 3, "\n".join(body)))
                i = j
            i += 1
    return 0


if __name__ == "__main__":
    cmd, top = sys.argv[1], sys.argv[2]
    sys.exit({"links": links, "blocks": blocks, "expect": expect}[cmd](top, *sys.argv[3:]))
