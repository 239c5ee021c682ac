"""Limits, the tool's error, and the escaping of strings that come from reports."""
import json
import re

SCHEMA = "tdshim-report/1"
CATEGORIES = ["send", "recv", "progress", "control", "finalize"]
MAX_FILE = 64 << 20      # bytes in one rank file (a report with call sites is ~100 KiB)
MAX_RANKS = 1 << 24      # size, rank and number of rank files
MAX_TIME = 1e9           # |seconds| in any time field (~31 years)
MAX_NUMBER = 1e18        # |any number|: sums, ratios and plot limits stay finite
RANK_FILE = "rank-*.json"


class ReportError(Exception):
    pass


# ---------------------------------------------------------------- escaping

# C0, DEL, C1, line/paragraph separators and the bidirectional overrides
# (which reorder what a terminal or browser shows)
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def esc(s):
    """s with every control character written as \\xNN or \\uNNNN"""
    s = str(s)
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                        else f"\\u{ord(m.group()):04x}", s)


def show(v, n=40):
    """a value for an error message: escaped and short"""
    r = esc(json.dumps(v) if not isinstance(v, str) else repr(v))
    return r if len(r) <= n else r[:n] + "..."


def escape_doc(v):
    """a report document with every string (keys too) escaped, so no later
    print, plot label or HTML page can carry a raw control character"""
    if isinstance(v, str):
        return esc(v)
    if isinstance(v, list):
        return [escape_doc(x) for x in v]
    if isinstance(v, dict):
        return {esc(k): escape_doc(x) for k, x in v.items()}
    return v
