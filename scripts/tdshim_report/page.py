"""The self-contained HTML page of a run (or of two): the summary first, then
each section of the text with its tables as <table>s, the plots (PNG data:
URIs) after the first run's header. No script, no external resource (a CSP
says so too); every string from a report escaped."""
import base64
import html

from .doc import Line
from .tables import summary

STYLE = ("body{font-family:sans-serif;margin:2em;max-width:110em}"
         "table{border-collapse:collapse;margin:.4em 0 1em;font-size:13px}"
         "th,td{border:1px solid #ddd;padding:.15em .5em;vertical-align:top}"
         "thead th{background:#f0f0f0}th.k{text-align:left;background:#f6f6f6;font-weight:normal}"
         "td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
         "p{margin:.3em 0;max-width:80em}"
         "figure{margin:1em 0}figcaption{font-size:13px;color:#333;max-width:60em}"
         "img{max-width:100%;border:1px solid #ddd}")


def table_html(t):
    e = html.escape
    out = ["<table>"]
    if t.kind == "facts":
        for cells, _ in t.rows:
            out.append(f"<tr><th scope=\"row\" class=\"k\">{e(cells[0])}</th><td>{e(cells[1])}</td></tr>")
    else:
        cls = [" class=\"n\"" if a == ">" else "" for _, a in t.cols]
        if t.head:
            out.append("<thead><tr>" + "".join(f"<th scope=\"col\">{e(c)}</th>" for c in t.head[0])
                       + "</tr></thead>")
        out.append("<tbody>")
        for cells, _ in t.rows:
            out.append("<tr>" + "".join(f"<td{k}>{e(c.strip())}</td>" for c, k in zip(cells, cls)) + "</tr>")
        out.append("</tbody>")
    out.append("</table>")
    return "\n".join(out)


def summary_html(runs):
    e = html.escape
    out = ["<h2>Summary</h2>", "<table>"]
    if len(runs) == 2:
        out.append("<thead><tr><th></th>" + "".join(f"<th scope=\"col\">{'AB'[i]}: {e(r.label)}</th>"
                                                  for i, r in enumerate(runs)) + "</tr></thead>")
    for label, values in summary(runs):
        out.append(f"<tr><th scope=\"row\" class=\"k\">{e(label)}</th>" + "".join(f"<td>{e(v)}</td>" for v in values)
                   + "</tr>")
    out.append("</table>")
    return out


def html_page(runs, doc, figs):
    """runs: the Runs; doc: their Document (tables.document); figs: [(name, png bytes, caption)]"""
    e = html.escape
    title = "tdshim report: " + " vs ".join(r.label for r in runs)
    parts = [
        "<!DOCTYPE html>", "<html lang=\"en\"><head><meta charset=\"utf-8\">",
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; "
        "style-src 'unsafe-inline'\">",
        f"<title>{e(title)}</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>{e(title)}</h1>",
    ]
    parts += summary_html(runs)
    figures = []
    if figs:
        figures.append("<h2>Plots</h2>")
        for name, png, caption in figs:
            figures.append(f"<figure><img alt=\"{e(name)}\" src=\"data:image/png;base64,"
                           f"{base64.b64encode(png).decode()}\"><figcaption><b>{e(name)}</b>: {e(caption)}"
                           f"</figcaption></figure>")
    for s in doc.sections:
        if figures and not s.banner and s.title != "Header":
            parts += figures   # the plots after the (first) header, before the tables
            figures = []
        parts.append(f"<h2>{e(s.title)}</h2>")
        for it in s.items:
            parts.append(f"<p>{e(it.text)}</p>" if isinstance(it, Line) else table_html(it))
    parts += figures
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
