/* Report files created safely (tdr_file.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "tdr_file.h"
#include "tdr_json.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h> /* renameat */
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_CLOEXEC)

int tdr_parent_open(const char *path, mode_t dmode, int *err)
{
    char tmp[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof tmp) {
        *err = ENAMETOOLONG;
        return -1;
    }
    memcpy(tmp, path, n + 1);
    /* the missing components: mkdir -p */
    for (size_t i = 1; i <= n; i++)
        if (tmp[i] == '/' || tmp[i] == '\0') {
            char c = tmp[i];
            tmp[i] = '\0';
            if (mkdir(tmp, dmode) != 0 && errno != EEXIST) {
                *err = errno;
                return -1;
            }
            tmp[i] = c;
        }
    /* the user's own path: symbolic links in it are the user's choice */
    int fd = open(path, DIR_FLAGS);
    if (fd < 0) {
        *err = errno;
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode)) {
        *err = ENOTDIR;
        close(fd);
        return -1;
    }
    if (st.st_uid != geteuid() && st.st_uid != 0 && !(st.st_mode & S_ISVTX)) {
        *err = EPERM;
        close(fd);
        return -1;
    }
    return fd;
}

int tdr_dir_open(int pfd, const char *name, mode_t dmode, int excl, int *err)
{
    if (mkdirat(pfd, name, dmode) != 0 && (errno != EEXIST || excl)) {
        *err = errno;
        return -1;
    }
    int fd = openat(pfd, name, DIR_FLAGS | O_NOFOLLOW);
    if (fd < 0) {
        *err = errno == ELOOP || errno == ENOTDIR ? EPERM : errno;
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022)) {
        *err = EPERM;
        close(fd);
        return -1;
    }
    return fd;
}

int tdr_file_put(int dfd, const char *name, const char *data, size_t len, mode_t fmode, int *err)
{
    char tmpname[300];
    tdr_buf t = tdr_buf_fixed(tmpname, sizeof tmpname);
    tdr_putf(&t, ".%s.tmp.%ld", name, (long)getpid());
    if (t.oom) {
        *err = ENAMETOOLONG;
        return -1;
    }
    int fd = openat(dfd, tmpname, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, fmode);
    if (fd < 0) {
        *err = errno;
        return -1;
    }
    /* a file-size limit (ulimit -f): EFBIG, not death by SIGXFSZ */
    struct sigaction ign, old;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    int restore = sigaction(SIGXFSZ, &ign, &old) == 0;
    int e = 0;
    for (size_t off = 0; off < len && !e;) {
        ssize_t w = write(fd, data + off, len - off);
        if (w > 0)
            off += (size_t)w;
        else if (w < 0 && errno != EINTR)
            e = errno;
        else if (w == 0)
            e = EIO;
    }
    if (!e && fsync(fd) != 0 && errno != EINVAL)
        e = errno;
    if (close(fd) != 0 && !e && errno != EINTR)
        e = errno;
    if (restore)
        sigaction(SIGXFSZ, &old, NULL);
    if (!e && renameat(dfd, tmpname, dfd, name) != 0)
        e = errno;
    if (e) {
        unlinkat(dfd, tmpname, 0);
        *err = e;
        return -1;
    }
    return 0;
}

void tdr_close_fds(int pfd, int dfd)
{
    if (dfd >= 0)
        close(dfd);
    if (pfd >= 0)
        close(pfd);
}

void tdr_put_why(tdr_buf *w, int e)
{
    if (e == EPERM)
        tdr_puts(w, "exists and is not ours (another user's, a symbolic link, or writable by others)");
    else
        tdr_put_errno(w, e);
}
