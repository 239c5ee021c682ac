"""The PNG figures (matplotlib, imported only here and only when plots are
asked for): overhead per rank, control messages by type, the detection
timeline with one panel per episode, and run A against run B; what
--layout-json says of them for tests/report/layout_check.py."""
import io
import sys

from .common import CATEGORIES
from .tables import fmt

CAPTIONS = {
    "overhead": "seconds each rank spent inside tdshim, stacked by category (left axis: seconds; right axis: "
                "% of the job's wall time, given in the title); look for a rank or a category that stands out",
    "control": "control messages each rank sent, by type; look for one rank (often the root of a wave) "
               "sending far more than the others",
    "timeline": "top: each rank from MPI_Init to MPI_Finalize with the episodes shaded; below, one panel per "
                "episode from its last busy->idle to its last detection: per rank o = went idle, x = learned "
                "of termination; the gap between the last o and the last x is the detection latency",
    "compare": "time in tdshim per rank as % of its wall time, run A beside run B; look for the algorithm "
               "with the lower bars",
}
MAX_EPISODE_PANELS = 4


def text_boxes(fig):
    """every visible, non-empty text of a drawn figure with its pixel box
    (tick labels only where a tick is drawn)"""
    renderer = fig.canvas.get_renderer()
    texts = list(fig.texts)
    for ax in fig.axes:
        texts += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label,
                  ax.xaxis.offsetText, ax.yaxis.offsetText] + list(ax.texts)
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            tol = (hi - lo) * 1e-9
            texts += [t for loc, t in zip(axis.get_majorticklocs(), axis.get_majorticklabels())
                      if lo - tol <= loc <= hi + tol]
        leg = ax.get_legend()
        if leg is not None:
            texts += list(leg.get_texts()) + [leg.get_title()]
    for leg in getattr(fig, "legends", []):
        texts += list(leg.get_texts()) + [leg.get_title()]
    out, seen = [], set()
    for t in texts:
        if id(t) in seen or not t.get_visible() or not t.get_text().strip():
            continue
        seen.add(id(t))
        b = t.get_window_extent(renderer)
        out.append({"text": t.get_text(), "bbox": [b.x0, b.y0, b.x1, b.y1]})
    return out


def plot_figures(runs):
    """[(name, figure, caption, panels)], or None without matplotlib; panels
    describe the episode windows (pixels) for --layout-json"""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import MaxNLocator
    except ImportError:
        print("tdshim-report: matplotlib is not available (Debian: python3-matplotlib); "
              "no plots written, the tables above are the text fallback", file=sys.stderr)
        return None
    figs = []
    for run, sfx in zip(runs, ["", "-vs"]):
        figs.append((f"overhead{sfx}", overhead_figure(plt, MaxNLocator, run), CAPTIONS["overhead"], []))
        figs.append((f"control{sfx}", control_figure(plt, MaxNLocator, run), CAPTIONS["control"], []))
        fig, panels = timeline_figure(plt, MaxNLocator, run)
        figs.append((f"timeline{sfx}", fig, CAPTIONS["timeline"], panels))
    if len(runs) == 2:
        a, b = runs
        fig, ax = plt.subplots(figsize=(8, 4))
        w = 0.4
        ax.bar([d["rank"] - w / 2 for d in a.ranks], [d["tdshim_time"]["percent_of_wall"] or 0 for d in a.ranks],
               w, label=f"A {a.label}")
        ax.bar([d["rank"] + w / 2 for d in b.ranks], [d["tdshim_time"]["percent_of_wall"] or 0 for d in b.ranks],
               w, label=f"B {b.label}")
        ax.set_xlabel("rank")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel("time in tdshim (% of wall)")
        ax.set_title(f"overhead: A {a.label} vs B {b.label}", fontsize=10)
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
        fig.tight_layout()
        figs.append(("compare", fig, CAPTIONS["compare"], []))
    return figs


def rank_ticks(ax, ranks, labels=None):
    """one tick per rank while they fit, else integer ticks"""
    from matplotlib.ticker import MaxNLocator
    if len(ranks) <= 24:
        ax.set_xticks(ranks)
        if labels:
            ax.set_xticklabels(labels, fontsize=7)
    else:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def overhead_figure(plt, MaxNLocator, run):
    ranks = [d["rank"] for d in run.ranks]
    fig, ax = plt.subplots(figsize=(min(max(7, 0.8 * len(ranks) + 4), 24), 4.5))
    bottom = [0.0] * len(ranks)
    for c in CATEGORIES:
        vals = [d["tdshim_time"]["categories"][c]["seconds"] for d in run.ranks]
        ax.bar(ranks, vals, bottom=bottom, label=c)
        bottom = [x + y for x, y in zip(bottom, vals)]
    job = max(d["wall_s"] for d in run.ranks)
    worst = max(run.ranks, key=lambda d: d["tdshim_time"]["total_s"])
    # under each rank: its seconds in tdshim and % of its own wall time
    rank_ticks(ax, ranks, [f"{d['rank']}\n{d['tdshim_time']['total_s']:.3g} s\n"
                           f"{fmt(d['tdshim_time']['percent_of_wall'], '.2f')}%" for d in run.ranks])
    ax.set_xlabel("rank (seconds in tdshim, % of the rank's wall time)")
    ax.set_ylabel("time in tdshim (s)")
    if job > 0:
        sec = ax.secondary_yaxis("right", functions=(lambda s: s / job * 100, lambda p: p * job / 100))
        sec.set_ylabel(f"% of the job's wall time ({job:.3f} s)")
    ax.set_ylim(0, max(max(bottom) * 1.1, 1e-9))
    ax.set_title(f"time in tdshim by category; job wall time {job:.3f} s (longest rank), most in tdshim: "
                 f"rank {worst['rank']}, {worst['tdshim_time']['total_s']:.3g} s\n{run.label}", fontsize=9)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.12, 1.0))
    fig.tight_layout()
    return fig


def control_figure(plt, MaxNLocator, run):
    ranks = [d["rank"] for d in run.ranks]
    fig, ax = plt.subplots(figsize=(min(max(7, 0.4 * len(ranks) + 4), 24), 4))
    bottom = [0] * len(ranks)
    for name in run.control_types():
        vals = [run.control_by_type(d).get(name, 0) for d in run.ranks]
        if any(vals):
            ax.bar(ranks, vals, bottom=bottom, label=name)
            bottom = [x + y for x, y in zip(bottom, vals)]
    ax.set_xlabel("rank")
    rank_ticks(ax, ranks)
    ax.set_ylabel("control messages sent")
    ax.set_title(f"control messages per rank by type\n{run.label}", fontsize=10)
    if any(bottom):
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


def timeline_figure(plt, MaxNLocator, run):
    """an overview of the whole run, then one panel per episode (at most
    MAX_EPISODE_PANELS) zoomed on last busy->idle .. last detection: in the
    overview the episodes are a few pixels at the end of the run. Labels go
    into tick labels, titles and a legend, never beside markers, so they
    cannot collide."""
    ranks = [d["rank"] for d in run.ranks]
    eps = [e for e in run.episodes() if e["last_detect"] is not None]
    shown = eps[:MAX_EPISODE_PANELS]
    scale = min(1.0, 32 / len(ranks))   # markers and bars thinner beyond 32 ranks
    per = min(max(1.6, 0.22 * len(ranks) + 1.0), 5.0)  # inches per panel; beyond ~18 ranks, fewer ticks
    fig, axes = plt.subplots(1 + len(shown), 1, figsize=(10, per * (1 + len(shown)) + 0.6), squeeze=False)
    axes = [a[0] for a in axes]
    ax = axes[0]
    for d in run.ranks:
        ax.hlines(d["rank"], d["t_init_s"] or 0, d["t_finalize_s"] or 0, color="0.7", linewidth=5 * scale,
                  label="MPI_Init .. MPI_Finalize" if d is run.ranks[0] else None)
    colours = ["tab:orange", "tab:green", "tab:purple", "tab:brown"]
    for i, e in enumerate(shown):
        lo = e["last_passive"] if e["last_passive"] is not None else e["first_detect"]
        ax.axvspan(lo, e["last_detect"], color=colours[i], alpha=0.5, label=f"episode {e['episode']}")
    ax.set_xlabel("seconds since rank 0's MPI_Init (aligned clocks)")
    ax.set_ylabel("rank")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True, nbins=min(len(ranks), 8)))
    more = f" (the first {len(shown)} below)" if len(eps) > len(shown) else ""
    ax.set_title(f"detection timeline, whole run: {len(eps)} episode(s){more}\n{run.label}", fontsize=10)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    panels = []
    for i, (e, ax) in enumerate(zip(shown, axes[1:])):
        k = e["episode"]
        lo = e["last_passive"] if e["last_passive"] is not None else e["first_detect"]
        hi = e["last_detect"]
        span = hi - lo if hi > lo else 1e-6
        pad = 0.05 * span
        ms = lambda t: (t - lo) * 1e3
        waves = {}
        marks = {"o": ([], []), "<": ([], []), ">": ([], []), "x": ([], [])}   # one artist per kind
        for d in run.ranks:
            r = d["rank"]
            waves[r] = d["detection"]["waves"]
            for pe in d["episodes"]:
                if pe["episode"] != k:
                    continue
                lp, det = pe["t_last_passive_s"], pe["t_detect_s"]
                if lp is not None:  # before or after the panel: a triangle at its edge
                    x = min(max(lp, lo - pad), hi + pad)
                    m = marks["<" if lp < x else ">" if lp > x else "o"]
                    m[0].append(ms(x))
                    m[1].append(r)
                if det is not None:
                    marks["x"][0].append(ms(det))
                    marks["x"][1].append(r)
        for m in "o<>":   # an empty unclipped line would break tight_layout
            if marks[m][0]:
                ax.plot(*marks[m], m, color="tab:blue", markersize=max(2, 7 * scale), clip_on=False)
        ax.plot(*marks["x"], "x", color="tab:red", markersize=max(2, 8 * scale),
                markeredgewidth=max(0.5, 2 * scale))
        ax.set_xlim(ms(lo - pad), ms(hi + pad))
        ax.axvspan(0, ms(hi), color=colours[i], alpha=0.15)
        ax.set_ylim(min(ranks) - 0.6, max(ranks) + 0.6)
        if len(ranks) <= 16:
            ax.set_yticks(ranks)
            ax.set_yticklabels([f"{r} ({waves[r]} waves)" for r in ranks], fontsize=7)
        else:
            ax.yaxis.set_major_locator(MaxNLocator(integer=True, nbins=8))
        ax.xaxis.set_major_locator(MaxNLocator(nbins=6))
        ax.set_ylabel("rank")
        ax.set_xlabel(f"ms after the last busy->idle of episode {k} (t = {lo:.6f} s)")
        lat = e["latency"]
        ax.set_title(f"episode {k}: latency {fmt(lat * 1e3 if lat is not None else None, '.3f')} ms "
                     f"(last busy->idle to last detection), {e['ranks']} ranks"
                     f"{', ' + str(e['late']) + ' late' if e['late'] else ''}{', UNSAFE' if e['unsafe'] else ''}",
                     fontsize=9)
        if i == 0:
            ax.plot([], [], "o", color="tab:blue", label="rank's last busy->idle")
            ax.plot([], [], "<", color="tab:blue", label="... earlier (later: >), off the panel")
            ax.plot([], [], "x", color="tab:red", label="rank learned termination")
            ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
        panels.append({"episode": k, "axes": ax, "window": (0.0, ms(hi))})
    fig.tight_layout()
    return fig, panels


def layout(fig, panels):
    """what the layout test checks: text boxes and episode windows in pixels"""
    fig.canvas.draw()
    w, h = fig.canvas.get_width_height()
    out = {"size": [w, h], "texts": text_boxes(fig), "panels": []}
    for p in panels:
        ax = p["axes"]
        bb = ax.get_window_extent()
        x0 = ax.transData.transform((p["window"][0], 0))[0]
        x1 = ax.transData.transform((p["window"][1], 0))[0]
        out["panels"].append({"episode": p["episode"], "axes_x": [bb.x0, bb.x1], "window_x": [x0, x1]})
    return out


def png_bytes(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return buf.getvalue()

