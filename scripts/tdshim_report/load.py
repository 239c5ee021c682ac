"""Reading a run: rank files opened without following a symbolic link or
blocking, bounded, checked (validate) and escaped; the run directory found
in a TDSHIM_REPORT_DIR parent only if it is the caller's; Run, the ranks'
documents with what the tables, the plots and bench/run derive from them
(the episodes, the control messages by type)."""
import errno
import fnmatch
import json
import os
import stat
import sys

from .common import MAX_FILE, MAX_RANKS, RANK_FILE, ReportError, esc, escape_doc
from .validate import Bad, check_doc


def _reject_constant(name):
    raise ValueError(f"{name} is not a JSON number")


def read_json(dirfd, name, shown):
    """one rank file: opened relative to the run's directory without following
    a symbolic link or blocking (a FIFO in place of a rank file), regular,
    at most MAX_FILE bytes, bytes that are not UTF-8 replaced (and said)"""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_NOCTTY | os.O_CLOEXEC,
                     dir_fd=dirfd)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise ReportError(f"{shown}: is a symbolic link; rank files are read only as regular files")
        raise ReportError(f"{shown}: {e.strerror}")
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = ("a FIFO" if stat.S_ISFIFO(st.st_mode) else "a directory" if stat.S_ISDIR(st.st_mode)
                    else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
                    else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file")
            raise ReportError(f"{shown}: is {kind}, not a regular file; not read")
        if st.st_size > MAX_FILE:
            raise ReportError(f"{shown}: {st.st_size} bytes, more than the {MAX_FILE} a report may have")
        chunks, n = [], 0
        while n <= MAX_FILE:
            b = os.read(fd, min(1 << 20, MAX_FILE + 1 - n))
            if not b:
                break
            chunks.append(b)
            n += len(b)
        if n > MAX_FILE:
            raise ReportError(f"{shown}: more than the {MAX_FILE} bytes a report may have")
    except OSError as e:
        raise ReportError(f"{shown}: {e.strerror}")
    finally:
        os.close(fd)
    data = b"".join(chunks)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        print(f"tdshim-report: {shown}: bytes that are not UTF-8 (first at offset {e.start}) "
              f"read as U+FFFD", file=sys.stderr)
        text = data.decode("utf-8", errors="replace")
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise ReportError(f"{shown}: (top level): nested deeper than this tool reads; not a tdshim report")
    except ValueError as e:   # JSONDecodeError (line, column), or an integer of too many digits
        raise ReportError(f"{shown}: not JSON: {esc(e)}")


def open_dir(path, follow=True, dir_fd=None):
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    return os.open(path, flags, dir_fd=dir_fd)


def owner_name(uid):
    try:
        import pwd
        return pwd.getpwuid(uid).pw_name
    except (KeyError, ImportError):
        return str(uid)


def rank_files(fd):
    names = [n for n in os.listdir(fd) if fnmatch.fnmatchcase(n, RANK_FILE)]
    return sorted(names)


def find_report_dir(path):
    """(directory fd, shown path): path itself if it holds rank files, else
    its newest tdshim-report-* child (TDSHIM_REPORT_DIR is the parent of one
    directory per run) if that run is ours: in a shared parent another user
    could make the newest run, so theirs is read only when named."""
    try:
        fd = open_dir(path)
    except OSError as e:
        raise ReportError(f"{esc(path)}: {e.strerror}")
    try:
        if rank_files(fd):
            return fd, path
        runs = []
        for n in os.listdir(fd):
            if not fnmatch.fnmatchcase(n, "tdshim-report-*"):
                continue
            try:
                st = os.stat(n, dir_fd=fd, follow_symlinks=False)
                if not stat.S_ISDIR(st.st_mode):
                    continue
                cfd = open_dir(n, follow=False, dir_fd=fd)
            except OSError:
                continue
            try:
                if rank_files(cfd):
                    runs.append((st.st_mtime, n, st.st_uid))
            finally:
                os.close(cfd)
    except OSError as e:
        os.close(fd)
        raise ReportError(f"{esc(path)}: {e.strerror}")
    if not runs:
        os.close(fd)
        raise ReportError(f"{esc(path)}: no {RANK_FILE} files and no tdshim-report-* directory with any")
    _, newest, uid = max(runs)
    shown = os.path.join(path, newest)
    if uid != os.geteuid():
        os.close(fd)
        raise ReportError(f"{esc(path)}: its newest run {esc(newest)} belongs to {esc(owner_name(uid))}, not to you; "
                          f"name a run directory to read it (tdshim-report {esc(shown)})")
    if len(runs) > 1:
        print(f"tdshim-report: {esc(path)} holds {len(runs)} runs; using the newest, {esc(shown)}",
              file=sys.stderr)
    try:
        cfd = open_dir(newest, follow=False, dir_fd=fd)
    except OSError as e:
        raise ReportError(f"{esc(shown)}: {e.strerror}")
    finally:
        os.close(fd)
    return cfd, shown


def first_missing(present, size, n=20):
    """the first n ranks below size missing from the sorted list present,
    without building range(size)"""
    out, want = [], 0
    for r in present + [size]:
        while want < r and len(out) < n:
            out.append(want)
            want += 1
        want = r + 1
        if len(out) >= n:
            break
    return out


class Run:
    def __init__(self, path):
        fd, self.dir = find_report_dir(path)
        self.ranks = []
        try:
            names = rank_files(fd)
            if len(names) > MAX_RANKS:
                raise ReportError(f"{esc(self.dir)}: {len(names)} rank files, more than {MAX_RANKS}")
            seen = {}
            for n in names:
                shown = os.path.join(self.dir, n)
                doc = read_json(fd, n, esc(shown))
                try:
                    check_doc(doc)
                    if self.ranks and doc["size"] != self.ranks[0]["size"]:
                        raise Bad("size", f"{doc['size']}, but {seen[self.ranks[0]['rank']]} says "
                                          f"{self.ranks[0]['size']}")
                    if doc["rank"] in seen:
                        raise Bad("rank", f"{doc['rank']} again (also in {seen[doc['rank']]})")
                except Bad as e:
                    raise ReportError(f"{esc(shown)}: {e}")
                seen[doc["rank"]] = n
                self.ranks.append(escape_doc(doc))
        finally:
            os.close(fd)
        self.dir = esc(self.dir)
        self.ranks.sort(key=lambda d: d["rank"])
        self.size = self.ranks[0]["size"]
        missing = first_missing([d["rank"] for d in self.ranks], self.size)
        if missing:
            print(f"tdshim-report: {self.dir}: no report from rank(s) {missing}"
                  f"{' and more' if self.size - len(self.ranks) > len(missing) else ''}; tables cover the others",
                  file=sys.stderr)
        self.head = self.ranks[0]
        self.label = f"{self.head['algorithm']} ({os.path.basename(os.path.normpath(self.dir))})"

    def column(self, fn):
        return [fn(d) for d in self.ranks]

    def episodes(self):
        """per episode: ranks, last passive, first/last detection (aligned),
        global latency, Idle2End per rank"""
        eps, whys = {}, {}
        for d in self.ranks:
            for e in d["episodes"]:
                eps.setdefault(e["episode"], []).append(e)
                if e.get("unsafe_why"):
                    whys.setdefault(e["episode"], []).append((d["rank"], e["unsafe_why"]))
        out = []
        for k in sorted(eps):
            es = eps[k]
            det = [e["t_detect_s"] for e in es if e["t_detect_s"] is not None]
            fd = min(det) if det else None
            lps = [e["t_last_passive_s"] for e in es if e["t_last_passive_s"] is not None]
            # as summary.txt: transitions after the first detection are Late, not LastPassive
            lp = [t for t in lps if fd is None or t <= fd]
            i2e = [e["idle2end_s"] for e in es if e["idle2end_s"] is not None]
            out.append({
                "episode": k, "ranks": len(es),
                "last_passive": max(lp) if lp else None,
                "first_detect": fd,
                "last_detect": max(det) if det else None,
                "latency": max(det) - max(lp) if lp and det else None,
                "i2e": i2e,
                "late": len(lps) - len(lp),
                "unsafe": any(e.get("unsafe") for e in es),
                # the kinds of evidence, and each rank's first in words (absent before 2026-11-27)
                "evidence": sorted({k for e in es for k in e.get("unsafe_evidence", [])}),
                "why": whys.get(k, []),
            })
        return out

    def episodes_learned(self):
        """the most episodes a rank learned of: a rank lists the first 1024
        and the last 4096 (episodes_omitted, since 2026-12-02)"""
        return max(len(d["episodes"]) + d.get("episodes_omitted", 0) for d in self.ranks)

    def control_types(self):
        names = []
        for d in self.ranks:
            for t in d["control"]["by_type"]:
                key = ("engine " if t["engine"] else "") + t["name"]
                if key not in names:
                    names.append(key)
        return names

    def control_by_type(self, d, direction="sent"):
        return {("engine " if t["engine"] else "") + t["name"]: t[direction] for t in d["control"]["by_type"]}

