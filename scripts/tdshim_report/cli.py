"""The command line: tdshim-report DIR [--vs OTHER_DIR] [-o PLOTDIR]
[--no-plots] [--html FILE] [--top N] [--layout-json FILE]."""
import argparse
import json
import os
import sys

from .common import ReportError, esc
from .load import Run
from .outdir import OutDir
from .page import html_page
from .plots import layout, plot_figures, png_bytes
from .tables import document


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="tdshim-report",
        description="Print tables from a tdshim report directory (one rank-NNNN.json per rank), "
                    "compare two runs, plot them as PNG, or put all of it in one HTML page.",
        epilog="DIR may also be a TDSHIM_REPORT_DIR parent: its newest tdshim-report-* run is used if it is "
               "yours (another user's run is read only when named). Every rank file is checked against "
               "schema.json; a malformed one stops the tool with one line naming the file and the field. "
               "Outputs go only into directories you own, reached through no other user's symbolic link, and "
               "never through a symbolic link at an output's name. "
               "Exit status: 0 ok; 1 no valid report, or an output could not be written; 2 usage.")
    ap.add_argument("dir", metavar="DIR", help="report directory")
    ap.add_argument("--vs", metavar="OTHER_DIR", help="compare with another run (e.g. another algorithm)")
    ap.add_argument("-o", "--output", "--plots", dest="output", metavar="PLOTDIR",
                    help="write the PNG plots into PLOTDIR (created, mode 0700, if absent; must be yours). "
                         "Default: a new ./tdshim-plots-XXXXXXXX directory, unless --html is given "
                         "(--plots is the old name)")
    ap.add_argument("--no-plots", action="store_true", help="tables only")
    ap.add_argument("--html", metavar="FILE",
                    help="also write one self-contained HTML page (tables, plots embedded as PNG) to FILE "
                         "(in a directory of yours; an existing FILE is replaced)")
    ap.add_argument("--top", type=int, default=10, metavar="N", help="call sites shown per kind (default 10)")
    ap.add_argument("--layout-json", metavar="FILE",
                    help="for tests: write the plots' text boxes and episode windows (pixels) as JSON to FILE")
    args = ap.parse_args(argv)
    for f in (args.html, args.layout_json):
        if f is not None and os.path.basename(f) in ("", ".", ".."):
            ap.error(f"{esc(f)}: a file name, not a directory")
    try:
        return run_tool(args)
    except ReportError as e:
        print(f"tdshim-report: {e}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0
    except Exception as e:  # a bug: one line, not a traceback; TDSHIM_REPORT_DEBUG=1 shows it
        if os.environ.get("TDSHIM_REPORT_DEBUG"):
            raise
        print(f"tdshim-report: internal error ({type(e).__name__}: {esc(e)}); "
              f"TDSHIM_REPORT_DEBUG=1 shows where", file=sys.stderr)
        return 1


def run_tool(args):
    runs = [Run(args.dir)]
    if args.vs:
        runs.append(Run(args.vs))
    doc = document(runs, args.top)
    text = doc.text()
    sys.stdout.write(text)
    sys.stdout.flush()
    figs = None if args.no_plots else plot_figures(runs)
    written, pngs, layouts = [], [], {}
    if figs:
        outdir = OutDir(args.output) if args.output or not args.html else None
        try:
            for name, fig, caption, panels in figs:
                png = png_bytes(fig)
                if args.layout_json:
                    layouts[name] = layout(fig, panels)
                pngs.append((name, png, caption))
                if outdir:
                    written.append((outdir.write(f"{name}.png", lambda f: f.write(png)), caption))
        finally:
            if outdir:
                outdir.close()
    if args.html:
        page = html_page(runs, doc, pngs).encode()
        parent = os.path.dirname(args.html) or "."
        hdir = OutDir(parent, create=False)
        try:
            hpath = hdir.write(os.path.basename(args.html), lambda f: f.write(page))
        finally:
            hdir.close()
    if args.layout_json:
        lj = json.dumps(layouts).encode()
        ldir = OutDir(os.path.dirname(args.layout_json) or ".", create=False)
        try:
            ldir.write(os.path.basename(args.layout_json), lambda f: f.write(lj))
        finally:
            ldir.close()
    if written or args.html:
        print("\n@--- Plots and pages ---")
        for p, caption in written:
            print(f"{esc(p)}: {caption}")
        if args.html:
            print(f"{esc(hpath)}: this report as one HTML page")
    return 0
