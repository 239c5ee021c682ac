#!/usr/bin/env python3
"""dom_check.py DOM RANKS EPISODES FIGURES: the report's tables and figures in
the document a browser built from tdshim-report --html's page (chromium
--dump-dom): "Summary" the first heading, over a table; under the headings
"Overhead per rank", "Control messages" and "Detection episodes" a real
<table> with its column header (<th>) and a row of cells (<td>) per rank
(RANKS) or episode (EPISODES); no preformatted text (<pre>) anywhere;
FIGURES <figure>s, each an <img> of a PNG data: URI and a <figcaption>.
Prints what it found; exit 1 if anything is missing
(tests/report/test-tool-plots.sh)."""
import re
import sys
from html.parser import HTMLParser


class Doc(HTMLParser):
    def __init__(self):
        super().__init__()
        self.sections = []  # [heading, [table: [row: [(is <th>, text)]]]]
        self.figures = []   # [has a PNG <img>, caption text]
        self.pre = 0
        self.stack = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.stack.append(tag)
        if tag == "h2":
            self.sections.append(["", []])
        elif tag == "pre":
            self.pre += 1
        elif tag == "table" and self.sections:
            self.sections[-1][1].append([])
        elif tag == "tr" and self.sections and self.sections[-1][1]:
            self.sections[-1][1][-1].append([])
        elif tag in ("td", "th") and self.sections and self.sections[-1][1] and self.sections[-1][1][-1]:
            self.sections[-1][1][-1][-1].append([tag == "th", ""])
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
        elif ("td" in self.stack or "th" in self.stack) and self.sections and self.sections[-1][1] \
                and self.sections[-1][1][-1] and self.sections[-1][1][-1][-1]:
            self.sections[-1][1][-1][-1][-1][1] += data
        elif "figcaption" in self.stack and self.figures:
            self.figures[-1][1] += data


def main():
    dom, ranks, episodes, nfig = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    d = Doc()
    d.feed(open(dom, encoding="utf-8", errors="replace").read())
    # heading, the header cells a table starts with, a data row's cells (regular expressions), rows wanted
    want = [("Overhead per rank", ["Rank", "Wall", "tdshim"], [r"\d+", r"\d+\.\d+"], ranks),
            ("Control messages", ["Type", "Sent", "Received"], [r"\S.*", r"\d+", r"\d+", r"\d+", r"\d+"], 1),
            ("Detection episodes", ["Episode", "Ranks", "LastPassive"], [r"\d+", str(ranks), r"\d+\.\d+"], episodes)]
    found, bad = [], []
    if not d.sections or d.sections[0][0] != "Summary" or not d.sections[0][1] or len(d.sections[0][1][0]) < 5:
        bad.append("the first heading is not Summary over a table of at least 5 rows")
    else:
        found.append("Summary first: %d rows" % len(d.sections[0][1][0]))
    if d.pre:
        bad.append("%d <pre> blocks" % d.pre)
    for title, header, row, n in want:
        tables = next((t for h, t in d.sections if h.startswith(title)), None)
        if tables is None:
            bad.append("no heading %r" % title)
            continue
        ok = []
        for t in tables:
            heads = [[c[1].strip() for c in r] for r in t if r and all(c[0] for c in r)]
            data = [[c[1].strip() for c in r] for r in t if r and not any(c[0] for c in r)]
            if heads and heads[0][:len(header)] == header:
                ok.append(sum(1 for r in data if len(r) >= len(row) and
                              all(re.fullmatch(p, c) for p, c in zip(row, r))))
        if not ok or max(ok) < n:
            bad.append("%r: %s, %d rows (at least %d)" % (title, "a table with header %s" % header if ok else
                                                             "no <table> with header %s" % header,
                                                             max(ok) if ok else 0, n))
        else:
            found.append("%s: %d rows" % (title, max(ok)))
    figs = [f for f in d.figures if f[0] and f[1].strip()]
    if len(figs) != nfig:
        bad.append("%d figures with a PNG and a caption (of %d figures), expected %d" % (len(figs), len(d.figures), nfig))
    else:
        found.append("%d figures with a PNG and a caption" % len(figs))
    print("; ".join(found + ["MISSING: " + b for b in bad]))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
