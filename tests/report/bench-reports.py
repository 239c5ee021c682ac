#!/usr/bin/env python3
"""The cost of tdshim's reports, for bench/RESULTS.md "## Reports".

Runs bench/pingpong (2 ranks, 8-byte messages) under tdshim in three
variants, alternating run by run (the order rotates every repetition so
drift hits all alike):
  none       TDSHIM_REPORT=none       (counters and timers still run: they are
                                        always on; nothing is gathered or written)
  reports    TDSHIM_REPORT=text,json  (the default)
  callsites  default + TDSHIM_CALLSITES=10 (libunwind on every send and poll)
and prints, per variant, the median and the minimum over repetitions of the
job's wall time (mpirun start to exit) and of pingpong's own one-way
latency, with the ratios to `none`.

usage: tests/report/bench-reports.py BUILDDIR [--reps N]
"""
import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("builddir")
    ap.add_argument("--reps", type=int, default=15)
    args = ap.parse_args()
    b = os.path.abspath(args.builddir)
    lib = os.path.join(b, "shim/.libs/libtdshim.so")
    prog = os.path.join(b, "bench/pingpong")
    for f in (lib, prog):
        if not os.path.exists(f):
            sys.exit(f"bench-reports: {f} missing: build it first (make; make bench/pingpong)")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    for k in list(env):
        if k.startswith("TDSHIM_"):
            del env[k]
    variants = [("none", {"TDSHIM_REPORT": "none"}), ("reports", {}), ("callsites", {"TDSHIM_CALLSITES": "10"})]
    wall = {v: [] for v, _ in variants}
    lat = {v: [] for v, _ in variants}
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(args.reps):
            order = variants[rep % 3:] + variants[:rep % 3]
            for name, extra in order:
                cmd = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", "2", "-x", "LD_PRELOAD=" + lib,
                       "-x", "TDSHIM_NOTIFY=none", "-x", "TDSHIM_REPORT_DIR=" + tmp]
                for k, v in extra.items():
                    cmd += ["-x", f"{k}={v}"]
                cmd += [prog, "--min", "8", "--max", "8", "--iters", "2000", "--reps", "11"]
                t0 = time.monotonic()
                p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                t1 = time.monotonic()
                if p.returncode != 0:
                    sys.exit(f"bench-reports: {' '.join(cmd)} failed:\n{p.stderr[-2000:]}")
                m = re.search(r"^pingpong 8 (\S+)", p.stdout, re.M)
                wall[name].append(t1 - t0)
                lat[name].append(float(m.group(1)))
    base_w, base_l = statistics.median(wall["none"]), statistics.median(lat["none"])
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.node()}, {os.cpu_count()} cores, "
          f"{args.reps} repetitions per variant, alternating")
    print(f"command: tests/report/bench-reports.py BUILDDIR --reps {args.reps} "
          "(bench/pingpong --min 8 --max 8 --iters 2000 --reps 11, 2 ranks)\n")
    # on a shared, loaded machine the minimum is the steadier estimate of
    # the intrinsic cost; the median shows what a typical run saw
    min_w, min_l = min(wall["none"]), min(lat["none"])
    print("| variant | job wall time (s): median / min | ratio to none: median / min "
          "| 8-byte one-way latency (us): median / min | ratio to none: median / min |")
    print("|---|---|---|---|---|")
    for name, _ in variants:
        w, l = statistics.median(wall[name]), statistics.median(lat[name])
        mw, ml = min(wall[name]), min(lat[name])
        print(f"| {name} | {w:.3f} / {mw:.3f} | {w / base_w:.3f} / {mw / min_w:.3f} "
              f"| {l:.2f} / {ml:.2f} | {l / base_l:.3f} / {ml / min_l:.3f} |")
    print(f"\nload average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
