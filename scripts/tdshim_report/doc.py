"""The printed document: parts (a run of a comparison), sections, lines and
tables. Each table row keeps its cells (for the HTML page's <table>) and its
text line (for the terminal); the text is exactly what the tool printed
before it had a page, column widths and all."""


class Line:
    def __init__(self, text):
        self.text = text


class Table:
    """cols: [(width, align)] with align "<" or ">"; rows joined by one space.
    kind "grid" (a header row and data rows) or "facts" (label, value rows
    whose text is given: the run's header lines)."""

    def __init__(self, cols=None, kind="grid"):
        self.cols, self.kind = cols or [], kind
        self.head = None      # (cells, text) or None
        self.rows = []        # [(cells, text)]

    def aligned(self, cells):
        return " ".join(f"{c:{a}{w}}" for c, (w, a) in zip(cells, self.cols))

    def header(self, *cells):
        cells = [str(c) for c in cells]
        self.head = (cells, self.aligned(cells))

    def row(self, *cells, text=None):
        cells = [str(c) for c in cells]
        self.rows.append((cells, self.aligned(cells) if text is None else text))

    def lines(self):
        return ([self.head[1]] if self.head else []) + [t for _, t in self.rows]


class Section:
    def __init__(self, title, banner=False):
        self.title, self.banner = title, banner   # banner: "######## A: DIR", a run of a comparison
        self.items = []

    def line(self, text):
        self.items.append(Line(text))

    def table(self, cols=None, kind="grid"):
        t = Table(cols, kind)
        self.items.append(t)
        return t

    def text(self):
        head = f"\n######## {self.title}" if self.banner else f"\n@--- {self.title} ---"
        out = [head]
        for it in self.items:
            out += [it.text] if isinstance(it, Line) else it.lines()
        return "\n".join(out) + "\n"


class Document:
    def __init__(self):
        self.sections = []

    def section(self, title, banner=False):
        s = Section(title, banner)
        self.sections.append(s)
        return s

    def text(self):
        return "".join(s.text() for s in self.sections)
