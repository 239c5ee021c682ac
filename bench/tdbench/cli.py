"""The command line of bench/run: the sections to run (--only), their sizes
(--quick, --rounds), where the tables (--out, between RESULTS markers) and
the plots (--plots) go."""
import argparse
import os
import shutil
import sys
import time

from . import __doc__ as DOC
from . import cost, examples, latency, scale, skr, table1
from .common import Bench, update_results

# the sections in the order a full run makes them
SECTIONS = {"cost": cost.run, "table1": table1.run, "latency": latency.run, "examples": examples.run,
            "skr": skr.run, "scale": scale.run}


def main(argv=None):
    ap = argparse.ArgumentParser(description=DOC.split("\n")[0])
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # bench/
    ap.add_argument("--quick", action="store_true", help="smoke test: every section, small (under 5 minutes)")
    ap.add_argument("--builddir", default=None, help="build directory (default: ., if it is one, else _build/check)")
    ap.add_argument("--out", default=os.path.join(here, "RESULTS.md"), help="markdown file to update")
    ap.add_argument("--plots", default=os.path.join(here, "plots"), help="directory of the plots")
    ap.add_argument("--only", default=",".join(SECTIONS), help="sections, comma-separated")
    ap.add_argument("--rounds", type=int, default=0, help="rounds/repetitions per section (default: per section)")
    ap.add_argument("--strict", action="store_true", help="exit 1 if any run failed (CI's smoke test)")
    a = ap.parse_args(argv)
    if a.builddir is None:  # the current directory if it is a build, else _build/check
        cand = os.path.join(os.path.dirname(here), "_build", "check")
        a.builddir = "." if os.path.exists(os.path.join("shim", ".libs", "libtdshim.so")) or \
            not os.path.isdir(cand) else cand
    sections = [s.strip() for s in a.only.split(",") if s.strip()]
    for s in sections:
        if s not in SECTIONS:
            sys.exit("bench/run: --only: no section %r (%s)" % (s, ", ".join(SECTIONS)))
    b = Bench(a)
    for s in sections:
        b.say("section %s" % s)
        t, n, plots = time.time(), len(b.commands), set(b.plots)
        b.md = []
        SECTIONS[s](b)
        b.sec[s], b.elapsed[s], b.cmd_range[s] = b.md, time.time() - t, (n, len(b.commands))
        b.sec_plots[s] = [k for k in b.plots if k not in plots]
    made = b.write_plots()
    update_results(b, sections, a.out, made)
    shutil.rmtree(b.tmp, ignore_errors=True)
    b.say("wrote %s%s; %d run(s) failed" % (a.out, " and %d plots in %s" % (len(made), a.plots) if made else "",
                                             b.failed))
    if a.strict and b.failed:
        sys.exit(1)
