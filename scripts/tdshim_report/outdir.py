"""Where the tool writes (plots, --html, --layout-json): only directories the
user owns, reached through no other user's symbolic link, each file created
under a random name with O_EXCL|O_NOFOLLOW and renamed into place."""
import os
import secrets
import stat

from .common import ReportError, esc
from .load import open_dir, owner_name


def foreign_link(path):
    """the first symbolic link on path (every component) that neither we nor
    root own, or None: the rule of Linux's fs.protected_symlinks, for every
    directory, so another user's link (in /tmp, a shared scratch) never
    chooses where we write, while our own links (~/scratch -> /lustre/...) do"""
    cur = os.sep
    for part in os.path.abspath(path).split(os.sep):
        if not part:
            continue
        cur = os.path.join(cur, part)
        try:
            st = os.lstat(cur)
        except OSError:
            return None   # not there yet: mkdir or open will say
        if stat.S_ISLNK(st.st_mode) and st.st_uid not in (0, os.geteuid()):
            return cur, st.st_uid
    return None


class OutDir:
    """A directory we write into: one we own, reached through no other
    user's symbolic link. Each file is created under a random name with
    O_CREAT|O_EXCL|O_NOFOLLOW relative to the directory's descriptor and
    renamed over its final name, so a symbolic link planted at that name is
    replaced, never followed. path None: a new ./tdshim-plots-XXXXXXXX
    (mode 0700, created exclusively)."""

    def __init__(self, path, create=True):
        if path is None:
            for _ in range(100):
                path = os.path.abspath(f"tdshim-plots-{secrets.token_hex(4)}")
                try:
                    os.mkdir(path, 0o700)
                    break
                except FileExistsError:
                    continue
                except OSError as e:
                    raise ReportError(f"cannot create a plot directory in {esc(os.getcwd())}: {e.strerror} "
                                      f"(give one with -o DIR, or --no-plots)")
        path = os.path.normpath(path)   # "link/" would follow link even with O_NOFOLLOW
        self.refuse_foreign_link(path)
        if create:
            try:
                os.mkdir(path, 0o700)
            except FileExistsError:
                pass
            except OSError as e:
                raise ReportError(f"{esc(path)}: cannot create: {e.strerror}")
        self.path = path
        try:
            self.fd = open_dir(path)
        except OSError as e:
            raise ReportError(f"{esc(path)}: {e.strerror}; not written")
        st = os.fstat(self.fd)
        try:
            self.refuse_foreign_link(path)   # checked before, then swapped?
        except ReportError:
            os.close(self.fd)
            raise
        if st.st_uid != os.geteuid():
            os.close(self.fd)
            raise ReportError(f"{esc(path)}: belongs to {esc(owner_name(st.st_uid))}, not to you; not written "
                              f"(tdshim-report writes only into directories you own)")

    @staticmethod
    def refuse_foreign_link(path):
        link = foreign_link(path)
        if link:
            raise ReportError(f"{esc(path)}: {esc(link[0])} is a symbolic link of {esc(owner_name(link[1]))}; "
                              f"not followed, not written (tdshim-report writes only through your own links)")

    def write(self, name, fill):
        tmp = f".{name}.{secrets.token_hex(6)}.tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644,
                         dir_fd=self.fd)
        except OSError as e:
            raise ReportError(f"{esc(os.path.join(self.path, name))}: cannot create: {e.strerror}")
        try:
            with os.fdopen(fd, "wb") as f:
                fill(f)
            os.rename(tmp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except OSError as e:
            try:
                os.unlink(tmp, dir_fd=self.fd)
            except OSError:
                pass
            raise ReportError(f"{esc(os.path.join(self.path, name))}: cannot write: {e.strerror}")
        return os.path.join(self.path, name)

    def close(self):
        os.close(self.fd)

