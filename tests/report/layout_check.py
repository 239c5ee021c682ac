#!/usr/bin/env python3
"""layout_check.py LAYOUT_JSON [MIN_EPISODE_PANELS]: checks what
`tdshim-report --layout-json` says of each figure (matplotlib
get_window_extent of every drawn text, pixels): no two texts overlap, every
text lies inside the figure, and each episode panel's window (last
busy->idle .. last detection) spans at least half the panel's width.
Prints one line per problem and a summary; exit 1 on any problem."""
import json
import sys

layout = json.load(open(sys.argv[1]))
want_panels = int(sys.argv[2]) if len(sys.argv) > 2 else 0
problems, texts, panels = [], 0, 0
for name, fig in sorted(layout.items()):
    w, h = fig["size"]
    boxes = fig["texts"]
    texts += len(boxes)
    for i, a in enumerate(boxes):
        x0, y0, x1, y1 = a["bbox"]
        if x0 < -0.5 or y0 < -0.5 or x1 > w + 0.5 or y1 > h + 0.5:
            problems.append(f"{name}: {a['text']!r} outside the {w}x{h} figure: {a['bbox']}")
        for b in boxes[i + 1:]:
            u0, v0, u1, v1 = b["bbox"]
            if x0 < u1 and u0 < x1 and y0 < v1 and v0 < y1:
                problems.append(f"{name}: {a['text']!r} overlaps {b['text']!r}")
    for p in fig["panels"]:
        panels += 1
        frac = (p["window_x"][1] - p["window_x"][0]) / (p["axes_x"][1] - p["axes_x"][0])
        if frac < 0.5:
            problems.append(f"{name}: episode {p['episode']}'s window spans {frac:.2f} of its panel")
if panels < want_panels:
    problems.append(f"{panels} episode panels, expected at least {want_panels}")
for p in problems[:50]:
    print(p)
print(f"{len(layout)} figures, {texts} texts, {panels} episode panels, {len(problems)} problems")
sys.exit(1 if problems else 0)
