#!/usr/bin/env python3
"""The mutant catalogue (tests/mutants/mutants.ini) for tests/mutants/run.sh.

  mutate.py CATALOGUE list            one line per mutant: NAME<TAB>TEST [VAR=value...]
  mutate.py CATALOGUE apply NAME SRC  make mutant NAME in the source tree SRC
                                      (its file edited in place, the original
                                      kept as FILE.orig); exit 1, saying why,
                                      when its text is not in the file exactly
                                      where the catalogue says (the code moved:
                                      the catalogue must follow it)
  mutate.py CATALOGUE restore NAME SRC  put the original back
  mutate.py CATALOGUE check SRC       TAP: every mutant's text is where the
                                      catalogue says in SRC (make check:
                                      the catalogue follows the code)

A mutant replaces the text `old` of `file` by `new`: `old` must occur
exactly once in the file, or `nth` names which occurrence (1-based)."""
import configparser
import os
import shutil
import sys


def load(path):
    cp = configparser.ConfigParser(interpolation=None)
    cp.optionxform = str
    with open(path) as f:
        cp.read_file(f)
    for name in cp.sections():
        for key in ("why", "file", "old", "new", "test"):
            if not cp.get(name, key, fallback="").strip():
                sys.exit("%s: mutant %s has no %s" % (path, name, key))
    return cp


def locate(m, src):
    """(text of the mutant's file, None or why it cannot apply, offset of its text)"""
    try:
        with open(os.path.join(src, m["file"])) as f:
            text = f.read()
    except OSError as e:
        return None, str(e), -1
    old = m["old"]
    n = text.count(old)
    nth = int(m.get("nth", "0"))
    if (nth == 0 and n != 1) or (nth > 0 and n < nth):
        return text, "%r occurs %d times%s" % (old, n, " (nth = %d)" % nth if nth else ""), -1
    at = -1
    for _ in range(max(nth, 1)):
        at = text.index(old, at + 1)
    return text, None, at


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    cp, cmd = load(sys.argv[1]), sys.argv[2]
    if cmd == "list":
        for name in cp.sections():
            print("%s\t%s" % (name, cp.get(name, "test")))
        return
    if cmd == "check" and len(sys.argv) == 4:
        names = cp.sections()
        print("1..%d" % len(names))
        bad = 0
        for i, name in enumerate(names, 1):
            err = locate(cp[name], sys.argv[3])[1]
            bad += err is not None
            print("%sok %d - mutant %s: its text is in %s%s" % ("not " if err else "", i, name, cp[name]["file"],
                                                               " (%s)" % err if err else ""))
        sys.exit(1 if bad else 0)
    if cmd not in ("apply", "restore") or len(sys.argv) != 5:
        sys.exit(__doc__)
    name, src = sys.argv[3], sys.argv[4]
    if name not in cp:
        sys.exit("no mutant %s" % name)
    m = cp[name]
    path = os.path.join(src, m["file"])
    if cmd == "restore":
        shutil.copy(path + ".orig", path)  # a newer mtime: make rebuilds it
        os.unlink(path + ".orig")
        return
    text, err, at = locate(m, src)
    if err:
        sys.exit("%s: %s" % (name, err))
    shutil.copy(path, path + ".orig")
    with open(path, "w") as f:
        f.write(text[:at] + m["new"] + text[at + len(m["old"]):])


if __name__ == "__main__":
    main()
