"""What every section shares: launching (mpirun natively or under tdshim, a
run writing JSON reports read through tdshim-report's loader, tdsim), the
rotation of sides round by round, the statistics, the header line of a
section, the plots, and the RESULTS markers that let a run of some sections
replace only those."""
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from tdshim_report.common import ReportError
from tdshim_report.load import Run

ALGOS = ["bcj", "bcjrd", "skr", "fourcounter", "termdetect", "cda", "hcda", "edod", "xulau"]
DONE_TAG = 999
BEGIN, END = "<!-- bench/run: begin -->", "<!-- bench/run: end -->"


# ---------------------------------------------------------------- statistics

def q1(v):
    """lower quartile (the median of one value is the value)"""
    v = sorted(v)
    return v[0] if len(v) < 4 else statistics.quantiles(v, n=4)[0]


def q3(v):
    v = sorted(v)
    return v[-1] if len(v) < 4 else statistics.quantiles(v, n=4)[2]


def fmt_p(p):
    return "2^%d" % (p.bit_length() - 1) if p >= 1 << 20 and p & (p - 1) == 0 else str(p)


# ---------------------------------------------------------------- rotation

def rotated(seq, k):
    """seq starting at its k-th element (mod its length): each round another side goes first"""
    k %= len(seq)
    return list(seq[k:]) + list(seq[:k])


def alternating(seq, k):
    """seq in even rounds, reversed in odd ones"""
    return list(seq) if k % 2 == 0 else list(seq)[::-1]


# ---------------------------------------------------------------- reports

def latencies(run):
    """{episode: latency in s} over the episodes every rank recorded, from
    tdshim-report's Run.episodes() (the last rank's notification minus the
    last rank's last passive transition before the first detection). An
    episode detected once a rank is in MPI_Finalize is the finalize's own
    (nobody is notified of it): it has control messages but no notification
    latency, None here."""
    fins = [d["t_finalize_s"] for d in run.ranks if d["t_finalize_s"] is not None]
    t_fin = min(fins) if fins else math.inf
    return {e["episode"]: (e["latency"] if e["first_detect"] < t_fin else None)
            for e in run.episodes() if e["ranks"] == len(run.ranks) and e["latency"] is not None}


def control_sent(run):
    """control messages sent, by type name (engine and algorithm types of one
    name together), summed over the ranks"""
    tot = {}
    for d in run.ranks:
        for t in d["control"]["by_type"]:
            tot[t["name"]] = tot.get(t["name"], 0) + t["sent"]
    return tot


# ---------------------------------------------------------------- launching

class Bench:
    def __init__(self, a):
        self.a = a
        self.b = os.path.abspath(a.builddir)
        self.lib = os.path.join(self.b, "shim", ".libs", "libtdshim.so")
        for f in (self.lib, self.exe("bench", "pingpong"), self.exe("examples", "five_cycle")):
            if not os.path.exists(f):
                sys.exit("bench/run: %s missing: build first (make; make -C DIR bench/pingpong ...) "
                         "and give --builddir" % f)
        self.mpirun = os.environ.get("MPIRUN", "mpirun")
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        self.env = {k: v for k, v in env.items() if not k.startswith("TDSHIM_") and k != "LD_PRELOAD"}
        self.tmp = tempfile.mkdtemp(prefix="tdshim-bench.")
        self.t0 = time.time()
        try:  # the commit measured: the tree's at the start
            self.commit = subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(__file__)), "describe",
                                          "--always", "--dirty"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                         text=True).stdout.strip()
        except OSError:
            self.commit = ""
        self.md = []      # markdown lines of the section running
        self.sec, self.elapsed, self.cmd_range = {}, {}, {}  # per section: lines, seconds, commands[lo:hi]
        self.plots = {}   # name -> (title, xlabel, ylabel, {series: [(x, y)]}, log y[, x log base, default 2])
        self.sec_plots = {}  # section -> names of the plots it made
        self.commands = []
        self.failed = 0   # runs that failed or timed out (--strict: exit 1)

    def exe(self, d, name):
        return os.path.join(self.b, d, name)

    def say(self, msg):
        print("# [%4.0f s] %s" % (time.time() - self.t0, msg), file=sys.stderr, flush=True)

    def launch(self, np_, tds, argv, mca=None, timeout=300):
        """one mpirun; tds: None (native) or a dict of TDSHIM_* variables"""
        cmd = [self.mpirun, "-np", str(np_)]
        cmd += ["--bind-to", "core"] if np_ <= (os.cpu_count() or 1) else ["--oversubscribe", "--bind-to", "none"]
        for k, v in (mca or {}).items():
            cmd += ["--mca", k, v]
        if tds is not None:
            cmd += ["-x", "LD_PRELOAD=" + tds.get("_lib", self.lib)]
            for k, v in sorted(tds.items()):
                if not k.startswith("_"):
                    cmd += ["-x", "%s=%s" % (k, v)]
        cmd += argv
        if len(self.commands) < 400:
            self.commands.append(" ".join(cmd))
        try:
            # in the scratch directory: reports written there go with it
            p = subprocess.run(cmd, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               timeout=timeout, cwd=self.tmp)
        except subprocess.TimeoutExpired:
            self.failed += 1
            return None, "timeout after %d s" % timeout
        if p.returncode != 0:
            self.failed += 1
            return None, "exit %d: %s" % (p.returncode, (p.stderr or p.stdout)[-300:].strip().replace("\n", " | "))
        return p.stdout, None

    def reported(self, p, tds, argv):
        """one run under tdshim writing JSON reports into a fresh directory:
        (stdout, the reports as a tdshim-report Run, each rank file checked
        against schema.json, if every rank wrote one, else None; error)"""
        d = tempfile.mkdtemp(prefix="rep.", dir=self.tmp)
        out, err = self.launch(p, dict(tds, TDSHIM_REPORT="json", TDSHIM_REPORT_DIR=d), argv)
        run = None
        try:
            run = Run(d)
        except ReportError as e:
            err = err or "reports: %s" % e
        shutil.rmtree(d, ignore_errors=True)
        return out, (run if run is not None and len(run.ranks) == p else None), err

    def tdsim(self, args, timeout=900):
        """one tdsim run: (its summary line as a dict, wall s, peak RSS KiB), or None"""
        cmd = [self.exe(os.path.join("tests", "sim"), "tdsim")] + args
        if len(self.commands) < 400:
            self.commands.append(" ".join(cmd))
        # peak RSS: the child's rusage counts the memory of this python process
        # it was forked from; GNU time, a small process, forks tdsim itself
        gtime = ["/usr/bin/time", "-f", "@@maxrss %M"] if os.access("/usr/bin/time", os.X_OK) else []
        t0 = time.time()
        with tempfile.TemporaryFile("w+") as f:
            pr = subprocess.Popen(gtime + cmd, stdout=f, stderr=subprocess.STDOUT, text=True, start_new_session=True)
            nap = 0.001
            while True:
                pid, status, ru = os.wait4(pr.pid, os.WNOHANG)
                if pid:
                    break
                if time.time() - t0 > timeout:
                    os.killpg(pr.pid, 9)  # time and tdsim
                    pid, status, ru = os.wait4(pr.pid, 0)
                    break
                time.sleep(nap)
                nap = min(2 * nap, 0.05)
            wall = time.time() - t0
            pr.returncode = os.waitstatus_to_exitcode(status)
            f.seek(0)
            out = f.read()
        line = [l for l in out.splitlines() if l.startswith("summary ")]
        if pr.returncode != 0 or not line:
            self.failed += 1
            self.say("tdsim %s: exit %d: %s" % (" ".join(args), pr.returncode, out.strip()[-300:]))
            return None
        m = re.search(r"^@@maxrss (\d+)$", out, re.M)
        summ = {}
        for kv in line[-1].split()[1:]:
            k, v = kv.split("=", 1)
            try:
                summ[k] = float(v)
            except ValueError:
                summ[k] = v
        return summ, wall, int(m.group(1)) if m else ru.ru_maxrss

    # ------------------------------------------------------------ output
    def header(self, section, elapsed):
        cpu = "unknown"
        try:
            cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
        except (OSError, StopIteration):
            pass
        mv = subprocess.run([self.mpirun, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env=self.env).stdout.splitlines()
        commit = self.commit
        return ["*`bench/run%s%s --only %s`, %s UTC, %.0f s. Machine: %s, %d cores (%s), %s; MPI: %s; "
                "commit %s (at the start); load average at the end %s. All sides of a table come from this one "
                "invocation.*" % (
                    " --quick" if self.a.quick else "", " --rounds %d" % self.a.rounds if self.a.rounds else "",
                    section, time.strftime("%Y-%m-%d %H:%M", time.gmtime()), elapsed, platform.node(),
                    os.cpu_count() or 0, cpu, platform.platform(terse=True), mv[0] if mv else "?", commit or "?",
                    " ".join(open("/proc/loadavg").read().split()[:3])), ""]

    def write_plots(self):
        if not self.plots:
            return []
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            self.say("no matplotlib: plots skipped (Debian: python3-matplotlib)")
            return []
        os.makedirs(self.a.plots, exist_ok=True)
        made = []
        for name, spec in self.plots.items():
            title, xl, yl, series, log = spec[:5]
            xbase = spec[5] if len(spec) > 5 else 2
            if not series:
                continue
            fig, ax = plt.subplots(figsize=(6.4, 4.2))
            for label, pts in sorted(series.items()):
                pts = sorted(pts)
                style = "--" if label.startswith("MPI_") else "-"
                ax.plot([p for p, _ in pts], [v for _, v in pts], style, marker="o", label=label)
            ax.set_title(title)
            ax.set_xlabel(xl)
            ax.set_ylabel(yl)
            ax.set_xscale("log", base=xbase)
            if log:
                ax.set_yscale("log")
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize="small")
            fig.tight_layout()
            path = os.path.join(self.a.plots, name + ".png")
            fig.savefig(path, dpi=90)
            plt.close(fig)
            made.append(path)
        return made


# ---------------------------------------------------------------- RESULTS markers

def update_results(b, sections, out, made):
    """print each section and put it between its markers in the file out
    ("<!-- bench/run:SECTION begin -->" .. "end", inside BEGIN .. END, added
    if missing): a later run of some sections (--only) replaces those and
    leaves the others. Beside bench/RESULTS.md, results-log/YYYY-MM.md gets
    every run whole, its commands included, and the page a link there"""
    here = os.path.dirname(os.path.abspath(out))
    logdir = os.path.join(here, "results-log")
    log = os.path.join(logdir, time.strftime("%Y-%m", time.gmtime()) + ".md") if os.path.isdir(logdir) else None
    logged = []
    old = open(out).read() if os.path.exists(out) else "# Results\n"
    if BEGIN not in old or END not in old:
        old = old.rstrip("\n") + "\n\n" + BEGIN + "\n" + END + "\n"

    def plots_line(mine, base):
        return ["Plots: " + ", ".join("[%s](%s)" % (os.path.basename(p), os.path.relpath(p, base)) for p in mine),
                ""] if mine else []

    for s in sections:
        lo, hi = b.cmd_range[s]
        body = b.sec[s][:2] + b.header(s, b.elapsed[s]) + b.sec[s][2:]  # after the section's title
        mine = [p for p in made if os.path.basename(p)[:-4] in b.sec_plots[s]]  # this section's plots
        cmds = ["<details><summary>Commands of this section (first %d)</summary>" % (hi - lo), "", "```"] + \
            b.commands[lo:hi] + ["```", "", "</details>", ""]
        print("\n".join(body + plots_line(mine, here) + cmds))
        if log:  # the page: the section up to the end of its first table
            logged.append("\n".join(body + plots_line(mine, logdir) + cmds))
            first = next((i for i, l in enumerate(body) if l.startswith("|")), len(body))
            last = next((i for i in range(first, len(body)) if not body[i].startswith("|")), len(body))
            page = body[:last] + [""] + plots_line(mine, here) + \
                ["Its other tables, its commands and every earlier run: [%s](%s)" % ((os.path.relpath(log, here),) * 2),
                 ""]
        else:
            page = body + plots_line(mine, here) + cmds
        text = "\n".join(page)
        sb, se = "<!-- bench/run:%s begin -->" % s, "<!-- bench/run:%s end -->" % s
        block = sb + "\n" + text + "\n" + se
        if sb in old and se in old:
            old = old[:old.index(sb)] + block + old[old.index(se) + len(se):]
        else:
            old = old[:old.index(END)] + block + "\n" + old[old.index(END):]
    with open(out, "w") as f:
        f.write(old)
    if log and logged:
        with open(log, "a") as f:
            f.write("\n\n" + "\n\n".join(logged) + "\n")
