/*
 * Report files created safely (issue 27, DESIGN.md §7 "Do no harm"): every
 * directory and file tdshim creates is created exclusively, reached through
 * a directory descriptor that was checked to be ours, never through a
 * symbolic link, with private modes by default (TDSHIM_REPORT_MODE).
 * Every function is async-signal-safe (only open/openat, mkdirat, fstat,
 * write, fsync, renameat, unlinkat, close and sigaction), so the partial
 * report of a signalled rank uses them too. Errors are returned as errno
 * values, never printed: the callers print one warning.
 */
#ifndef TDR_FILE_H
#define TDR_FILE_H

#include <stddef.h>
#include <sys/types.h>

#include "tdr_json.h"

/* TDSHIM_REPORT_MODE: private (files 0600, directories 0700) or group (0640, 0750) */
#define TDR_FMODE(group) ((mode_t)((group) ? 0640 : 0600))
#define TDR_DMODE(group) ((mode_t)((group) ? 0750 : 0700))

/*
 * Opens the parent directory path (TDSHIM_REPORT_DIR), creating missing
 * components with mode dmode. It is where the report directory will be
 * created, so it must be a directory owned by this user or by root, or a
 * sticky one (/tmp, shared scratch): in another user's directory that
 * user could replace our entry. Returns a descriptor, or -1 with *err set
 * (ENOTDIR, EPERM for a directory of another user that is not sticky).
 */
int tdr_parent_open(const char *path, mode_t dmode, int *err);

/*
 * The directory name in parent pfd, made with mkdirat (dmode) when absent;
 * with excl, one that exists is refused (EEXIST), else it is accepted only
 * when ours: a real directory (not a symbolic link), owned by the
 * effective user, not writable by group or others. Returns a descriptor,
 * or -1 with *err set (EEXIST; EPERM when it exists and is not ours).
 */
int tdr_dir_open(int pfd, const char *name, mode_t dmode, int excl, int *err);

/*
 * Writes data as name in directory dfd: to a new temporary file
 * (O_CREAT|O_EXCL|O_NOFOLLOW, mode fmode) that is written, fsync'ed and
 * renamed, so a reader never sees half a file. SIGXFSZ is ignored during
 * the write (a file-size limit makes it fail with EFBIG instead of killing
 * the process). On failure the temporary file is removed. Returns 0, or -1
 * with *err set.
 */
int tdr_file_put(int dfd, const char *name, const char *data, size_t len, mode_t fmode, int *err);

/* closes the directory's and its parent's descriptors (-1: none) */
void tdr_close_fds(int pfd, int dfd);

/* why a report directory or file could not be used (err from the calls
 * above), for the one warning */
void tdr_put_why(tdr_buf *w, int e);

#endif
