#!/usr/bin/env python3
"""dom_check.py DOM RANKS EPISODES FIGURES: the report's tables and figures in
the document a browser built from tdshim-report --html's page (chromium
--dump-dom): under the headings "Overhead per rank", "Control messages" and
"Detection episodes", a table (a <pre>) with its column header and a row
per rank (RANKS) or episode (EPISODES); FIGURES <figure>s, each an <img> of
a PNG data: URI and a <figcaption>. Prints what it found; exit 1 if
anything is missing (tests/report/test-tool-plots.sh)."""
import re
import sys
from html.parser import HTMLParser


class Doc(HTMLParser):
    def __init__(self):
        super().__init__()
        self.sections = []  # [heading, text of the <pre>s after it]
        self.figures = []   # [has a PNG <img>, caption text]
        self.stack = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.stack.append(tag)
        if tag == "h2":
            self.sections.append(["", ""])
        elif tag == "figure":
            self.figures.append([False, ""])
        elif tag == "img" and self.figures and "figure" in self.stack:
            self.figures[-1][0] = (a.get("src") or "").startswith("data:image/png;base64,iVBOR")

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop() == tag:
                break

    def handle_data(self, data):
        if "h2" in self.stack and self.sections:
            self.sections[-1][0] += data
        elif "pre" in self.stack and self.sections:
            self.sections[-1][1] += data
        elif "figcaption" in self.stack and self.figures:
            self.figures[-1][1] += data


def main():
    dom, ranks, episodes, nfig = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    d = Doc()
    d.feed(open(dom, encoding="utf-8", errors="replace").read())
    want = [("Overhead per rank", r"^ *Rank +Wall +tdshim", r"^ +\d+ +\d+\.\d+ ", ranks),
            ("Control messages", r"^Type +Sent +Received", r"^\S.* +\d+ +\d+ +\d+ +\d+$", 1),
            ("Detection episodes", r"^Episode +Ranks +LastPassive", r"^ +\d+ +%d +\d" % ranks, episodes)]
    found, bad = [], []
    for title, header, row, n in want:
        body = next((b for h, b in d.sections if h.startswith(title)), None)
        if body is None:
            bad.append("no heading %r" % title)
            continue
        lines = body.split("\n")
        rows = sum(1 for line in lines if re.match(row, line))
        if not any(re.match(header, line) for line in lines) or rows < n:
            bad.append("%r: table header %s, %d rows (at least %d)" %
                       (title, "found" if any(re.match(header, x) for x in lines) else "missing", rows, n))
        else:
            found.append("%s: %d rows" % (title, rows))
    figs = [f for f in d.figures if f[0] and f[1].strip()]
    if len(figs) != nfig:
        bad.append("%d figures with a PNG and a caption (of %d figures), expected %d" % (len(figs), len(d.figures), nfig))
    else:
        found.append("%d figures with a PNG and a caption" % len(figs))
    print("; ".join(found + ["MISSING: " + b for b in bad]))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
