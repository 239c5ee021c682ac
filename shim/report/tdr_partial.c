/*
 * A killed job: the report of one rank alone, written in the handler of a
 * killing signal (tdr.h, tdr_write_partial; SCHEMA.md, "Partial reports").
 *
 * This file, and what it calls in shim/report (tdr_record.c, tdr_json.c,
 * tdr_file.c), names no allocator and no stdio function:
 * tests/report/test-partial-symbols.sh checks the objects' symbols.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "tdr_writer.h"
#include "tdr_file.h"
#include "td_core.h"

#include <errno.h>
#include <unistd.h>

/* td_describe's first part, formatted without locks (td_describe and the
 * algorithms' describe use snprintf, which is not async-signal-safe) */
static void safe_state(buf *b, const td_ctx *c)
{
    if (!c) {
        tdr_puts(b, "no detection state");
        return;
    }
    tdr_putf(b, "episode %u: %s%s%s, primaries sent %llu received %llu, control sent %llu received %llu, waves %llu",
             (unsigned)c->episode + 1, c->finalized ? "finalized" : c->active ? "active" : "passive",
             c->dirty ? "" : ", no activity since the last announcement", c->dormant ? ", dormant" : "",
             (unsigned long long)c->sent, (unsigned long long)c->recvd,
             (unsigned long long)td_ctl_total(c->stats.ctl_sent), (unsigned long long)td_ctl_total(c->stats.ctl_recv),
             (unsigned long long)c->stats.waves);
    if (c->confirming)
        tdr_putf(b, "; confirmation wave %llu round %d, %d answers due", (unsigned long long)(c->conf_seq / 2),
                 (int)(c->conf_seq & 1) + 1, c->conf_wait);
    if (c->error)
        tdr_putf(b, "; stopped: %s", c->errmsg);
}

/*
 * Async-signal-safe (issue 26): only the storage reserved by tdr_run_id,
 * hand-written formatting (tdr_json.h) and open/write/fsync/rename
 * (tdr_file.h); no malloc, no stdio, no lock. The handler may have
 * interrupted the shim anywhere, so the counters may be mid-update: the
 * report is as good as the moment allows (SCHEMA.md, "Partial reports").
 */
int tdr_write_partial(tdr_rank *r, const struct td_ctx *core, const tdr_meta *meta, const char *why)
{
    if (!meta->want_json && !meta->want_text)
        return 0;
    tdr_ctx x = {.r = r, .core = core, .meta = meta, .rank = r->rank, .size = r->size, .partial_why = why,
             .sigsafe = 1};
    char state[512], name[TDR_NAME_MAX + 48], line[TDR_DIR_MAX + 1024];
    buf st = tdr_buf_fixed(state, sizeof state), nm = tdr_buf_fixed(name, sizeof name);
    buf msg = tdr_buf_fixed(line, sizeof line - 2);
    safe_state(&st, core);
    x.partial_state = state;
    r->t_end = tdr_now();
    for (int c = 0; c < TDR_NCAT; c++)
        x.total += r->t_cat[c];
    x.t0 = r->t0_rank0 > 0 ? r->t0_rank0 : r->t_init;
    x.cmdlen = tdr_read_cmdline(x.cmd, sizeof x.cmd);

    const char *parent = meta->report_dir && meta->report_dir[0] ? meta->report_dir : ".";
    mode_t dm = TDR_DMODE(meta->group_mode);
    tdr_putf(&nm, "tdshim-report-%s-partial-%ld-", r->run_stamp[0] ? r->run_stamp : "unknown", r->run_pid0);
    for (int i = 60; i >= 0; i -= 4)
        tdr_put(&nm, &"0123456789abcdef"[(r->run_token >> i) & 15], 1);
    size_t dirlen = nm.len;
    tdr_putf(&nm, "/rank-%d%d%d%d.json", x.rank / 1000 % 10, x.rank / 100 % 10, x.rank / 10 % 10, x.rank % 10);
    tdr_putf(&msg, "tdshim: rank %d: killed by %s (%s); ", x.rank, why, state);

    int e = 0, pfd = -1, dfd = -1;
    buf b = tdr_buf_fixed(r->sig_buf, r->sig_cap);
    if (!r->sig_buf || nm.oom) {
        e = ENOMEM;
    } else {
        tdr_json_rank(&b, &x);
        if (b.oom)
            e = ENOMEM;
    }
    name[dirlen] = '\0';
    if (!e && (pfd = tdr_parent_open(parent, dm, &e)) >= 0 && (dfd = tdr_dir_open(pfd, name, dm, 0, &e)) >= 0)
        tdr_file_put(dfd, name + dirlen + 1, b.p, b.len, TDR_FMODE(meta->group_mode), &e);
    tdr_close_fds(pfd, dfd);
    name[dirlen] = '/';
    if (!e) {
        tdr_putf(&msg, "partial report written: %s/%s", parent, name);
    } else {
        tdr_puts(&msg, "no partial report: ");
        if (e == ENOMEM)
            tdr_puts(&msg, "it does not fit the room reserved at MPI_Init");
        else
            tdr_put_why(&msg, e);
    }
    line[msg.len] = '\n';
    for (size_t off = 0, n = msg.len + 1; off < n;) {
        ssize_t w = write(2, line + off, n - off);
        if (w <= 0 && errno != EINTR)
            break;
        off += w > 0 ? (size_t)w : 0;
    }
    return e ? -1 : 0;
}
