/* Shared plumbing of the example programs; see ex_common.h. */
#include "ex_common.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- randomness ------------------------------------------------------- */

static uint64_t splitmix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A pure function of its arguments, so any rank can ask "what happens to
 * task a at step b" without having seen the task: that is what lets every
 * rank compute the ground truth (and its --native-stop count) alone. */
uint64_t ex_hash(uint64_t seed, uint64_t a, uint64_t b)
{
    return splitmix(seed ^ splitmix(a ^ splitmix(b + 0x632be59bd9b4e019ull)));
}

double ex_unif(uint64_t seed, uint64_t a, uint64_t b)
{
    return (double)(ex_hash(seed, a, b) >> 11) * 0x1.0p-53;
}

/* ---- options ---------------------------------------------------------- */

static void usage(const ex_ctx *x, const char *what, const ex_opt *opts, size_t n)
{
    printf("usage: %s [options]\n\n%s\n(defaults: --work-us %g, %s sends)\n\noptions:\n", x->name, what,
           x->o.work_us, x->o.nonblocking ? "nonblocking" : "blocking");
    for (size_t i = 0; i < n; i++) {
        char lhs[48];
        snprintf(lhs, sizeof lhs, "--%s%s", opts[i].name,
                 opts[i].type == EX_FLAG ? "" : opts[i].type == EX_STR ? " WORD" : " N");
        printf("  %-22s %s\n", lhs, opts[i].help);
    }
    printf("  %-22s %s\n", "--help", "this text");
    printf("\nRank 0 prints one line 'RESULT example=... ok' (or FAIL; exit status 1).\n"
           "Without --native-stop the program ends only when a message with the done\n"
           "tag arrives, e.g. under tdshim: tdshim-run --notify tag:%d -np 4 %s\n",
           x->o.done_tag, x->name);
}

static int parse_value(const ex_opt *op, const char *s, char *why, size_t whylen)
{
    char *end;
    errno = 0;
    if (op->type == EX_STR) { /* the program checks the word */
        *(const char **)op->ptr = s;
        return 0;
    }
    if (op->type == EX_U64) {
        if (*s == '-') {
            snprintf(why, whylen, "must be a non-negative integer");
            return -1;
        }
        unsigned long long v = strtoull(s, &end, 0);
        if (errno || end == s || *end) {
            snprintf(why, whylen, "not an integer");
            return -1;
        }
        *(uint64_t *)op->ptr = v;
        return 0;
    }
    double v = strtod(s, &end);
    if (errno || end == s || *end) {
        snprintf(why, whylen, "not a number");
        return -1;
    }
    if (op->type == EX_INT && v != (double)(long long)v) {
        snprintf(why, whylen, "not an integer");
        return -1;
    }
    if (v < op->min || v > op->max) {
        snprintf(why, whylen, "out of range [%.10g, %.10g]", op->min, op->max);
        return -1;
    }
    if (op->type == EX_INT)
        *(int *)op->ptr = (int)v;
    else
        *(double *)op->ptr = v;
    return 0;
}

int ex_init(ex_ctx *x, const char *name, const char *what, int argc, char **argv,
            const ex_opt *extra, size_t nextra, int default_nb, double default_work_us)
{
    memset(x, 0, sizeof *x);
    x->name = name;
    MPI_Comm_rank(MPI_COMM_WORLD, &x->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &x->size);
    x->o.done_tag = EX_DEFAULT_DONE_TAG;
    x->o.seed = 1;
    x->o.nonblocking = default_nb;
    x->o.work_us = default_work_us;
    x->o.linger_ms = 20;
    x->o.expect_notify = -2;
    int blocking = 0;

    int tag_ub = 32767, *ubp, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ubp, &flag);
    if (flag)
        tag_ub = *ubp;

    const ex_opt common[] = {
        {"done-tag", EX_INT, &x->o.done_tag, EX_MAX_WORK_TAG + 1, tag_ub,
         "tag of the 'done' message that ends a phase (default 999; must exceed 99)"},
        {"seed", EX_U64, &x->o.seed, 0, 0, "seed of the workload (default 1)"},
        {"work-us", EX_DOUBLE, &x->o.work_us, 0, 1e7, "CPU time per task in microseconds (default given above)"},
        {"native-stop", EX_FLAG, &x->o.native_stop, 0, 0,
         "stop by the message count computed from the seed (no done message needed)"},
        {"nonblocking", EX_FLAG, &x->o.nonblocking, 0, 0, "use MPI_Isend and MPI_Irecv+MPI_Test"},
        {"blocking", EX_FLAG, &blocking, 0, 0, "use MPI_Send and MPI_Recv"},
        {"linger-ms", EX_INT, &x->o.linger_ms, 0, 60000,
         "after each phase keep polling this long; any message then is an error (default 20)"},
        {"verbose", EX_FLAG, &x->o.verbose, 0, 0, "every rank says on stderr when and how each phase ends"},
        {"coll-reps", EX_INT, &x->o.coll_reps, 0, 1000000,
         "at the end, time N MPI_Allreduce and N MPI_Ibarrier (+MPI_Test) calls and add their medians and\n"
         "                         the detection latency (largest first and last notification, and the last\n"
         "                         one summed over the phases: --native-stop's own stop too) to the RESULT\n"
         "                         line (bench/run; default 0: off)"},
        {"expect-notify", EX_INT, &x->o.expect_notify, -1, 1000,
         "done messages each rank must see (default: one per phase, 0 with --native-stop; -1: any)"},
    };
    size_t ncommon = sizeof common / sizeof common[0], n = nextra + ncommon;
    ex_opt *all = malloc(n * sizeof *all);
    if (!all)
        return -1;
    memcpy(all, extra, nextra * sizeof *all);
    memcpy(all + nextra, common, sizeof common);

    int rc = 0;
    char why[96] = "";
    const char *bad = NULL;
    for (int i = 1; i < argc && rc == 0; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            if (x->rank == 0)
                usage(x, what, all, n);
            rc = 1;
            break;
        }
        const ex_opt *op = NULL;
        const char *val = NULL;
        if (!strncmp(a, "--", 2)) {
            size_t len = strcspn(a + 2, "=");
            for (size_t k = 0; k < n; k++)
                if (strlen(all[k].name) == len && !strncmp(all[k].name, a + 2, len))
                    op = &all[k];
            if (a[2 + len] == '=')
                val = a + 3 + len;
        }
        if (!op) {
            bad = a;
            snprintf(why, sizeof why, "unknown option (try --help)");
            rc = -1;
        } else if (op->type == EX_FLAG) {
            if (val) {
                bad = a;
                snprintf(why, sizeof why, "takes no value");
                rc = -1;
            } else {
                *(int *)op->ptr = 1;
            }
        } else {
            if (!val && i + 1 < argc)
                val = argv[++i];
            if (!val) {
                bad = a;
                snprintf(why, sizeof why, "needs a value");
                rc = -1;
            } else if (parse_value(op, val, why, sizeof why) != 0) {
                bad = a;
                rc = -1;
            }
        }
    }
    if (rc == 0 && blocking)
        x->o.nonblocking = 0;
    /* time= in the RESULT line is the slowest rank's run from here: the
     * number the static/dynamic run-time ratio of bench/run compares */
    MPI_Barrier(MPI_COMM_WORLD);
    x->t0 = MPI_Wtime();
    if (rc < 0 && x->rank == 0)
        fprintf(stderr, "%s: %s: %s\n", name, bad, why);
    free(all);
    return rc;
}

void ex_fini(ex_ctx *x)
{
    for (size_t i = 0; i < x->nout; i++)
        free(x->out[i].buf);
    free(x->out);
    free(x->reqs);
    x->out = NULL;
    x->reqs = NULL;
}

/* ---- sends ------------------------------------------------------------ */

/* Reaps completed Isends (freeing their payloads) and compacts the table. */
static int reap(ex_ctx *x, int wait)
{
    if (x->nout == 0)
        return 0;
    int rc = wait ? MPI_Waitall((int)x->nout, x->reqs, MPI_STATUSES_IGNORE)
                  : MPI_Testall((int)x->nout, x->reqs, &(int){0}, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < x->nout; i++) {
        if (x->reqs[i] == MPI_REQUEST_NULL) {
            free(x->out[i].buf);
            continue;
        }
        if (k != i) {
            x->reqs[k] = x->reqs[i];
            x->out[k] = x->out[i];
        }
        k++;
    }
    x->nout = k;
    return 0;
}

int ex_send(ex_ctx *x, const int64_t *buf, int nwords, int dest, int tag)
{
    x->sent++;
    /* a blocking send to oneself may never return (MPI need not buffer it:
     * MPICH does not), so that one is always nonblocking */
    if (!x->o.nonblocking && dest != x->rank)
        return MPI_Send(buf, nwords, MPI_INT64_T, dest, tag, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
    if (x->nout == x->capout) {
        size_t cap = x->capout ? 2 * x->capout : 64;
        ex_out *o = realloc(x->out, cap * sizeof *o);
        if (!o)
            return -1;
        x->out = o;
        MPI_Request *r = realloc(x->reqs, cap * sizeof *r);
        if (!r)
            return -1;
        x->reqs = r;
        x->capout = cap;
    }
    /* MPI owns the payload until the Isend completes, so each payload is a
     * separate allocation: growing the tables above never moves it. */
    ex_out *o = &x->out[x->nout];
    o->buf = malloc(EX_MSG_WORDS * sizeof *o->buf);
    if (!o->buf)
        return -1;
    memcpy(o->buf, buf, (size_t)nwords * sizeof *buf);
    if (MPI_Isend(o->buf, nwords, MPI_INT64_T, dest, tag, MPI_COMM_WORLD, &x->reqs[x->nout]) !=
        MPI_SUCCESS)
        return -1;
    x->nout++;
    return 0;
}

/* ---- phases ----------------------------------------------------------- */

void ex_phase_begin(ex_ctx *x, uint64_t expect_recv)
{
    x->expect_recv = expect_recv;
    x->phase_recv = 0;
    x->tasks0 = x->tasks;
    x->recvd0 = x->recvd;
    x->phases++;
}

int ex_phase_check(ex_ctx *x, uint64_t my_tasks, uint64_t my_recv)
{
    int ok = ex_phase_end(x) == 0;
    uint64_t tasks = x->tasks - x->tasks0, recvd = x->recvd - x->recvd0;
    if (tasks != my_tasks || recvd != my_recv) {
        fprintf(stderr, "%s: rank %d phase %d: %llu tasks (expected %llu), %llu messages (expected %llu)\n",
                x->name, x->rank, x->phases, (unsigned long long)tasks, (unsigned long long)my_tasks,
                (unsigned long long)recvd, (unsigned long long)my_recv);
        ok = 0;
    }
    return ok;
}

int ex_next(ex_ctx *x, MPI_Status *st)
{
    for (;;) {
        if (x->o.native_stop && x->phase_recv >= x->expect_recv)
            return EX_STOP;
        int flag = 0;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, st);
        if (!flag) {
            if (x->nout)
                reap(x, 0);
            continue;
        }
        if (st->MPI_TAG == x->o.done_tag) {
            MPI_Recv(NULL, 0, MPI_BYTE, st->MPI_SOURCE, st->MPI_TAG, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            x->notifications++;
            return EX_DONE;
        }
        return EX_WORK;
    }
}

int ex_recv(ex_ctx *x, const MPI_Status *st, int64_t *buf, int *nwords)
{
    MPI_Status rs;
    if (x->o.nonblocking) {
        MPI_Request r;
        int done = 0;
        if (MPI_Irecv(buf, EX_MSG_WORDS, MPI_INT64_T, st->MPI_SOURCE, st->MPI_TAG, MPI_COMM_WORLD,
                      &r) != MPI_SUCCESS)
            return -1;
        while (!done)
            if (MPI_Test(&r, &done, &rs) != MPI_SUCCESS)
                return -1;
    } else if (MPI_Recv(buf, EX_MSG_WORDS, MPI_INT64_T, st->MPI_SOURCE, st->MPI_TAG,
                        MPI_COMM_WORLD, &rs) != MPI_SUCCESS) {
        return -1;
    }
    MPI_Get_count(&rs, MPI_INT64_T, nwords);
    x->recvd++;
    x->phase_recv++;
    return 0;
}

int ex_phase_end(ex_ctx *x)
{
    if (x->o.verbose)
        fprintf(stderr, "%s: rank %d: phase %d ended at %.6f s: %llu messages, %llu tasks so far, %d done message(s)\n",
                x->name, x->rank, x->phases, MPI_Wtime() - x->t0, (unsigned long long)x->phase_recv,
                (unsigned long long)x->tasks, x->notifications);
    if (reap(x, 1) != 0)
        return -1;
    /* A correct detector has nothing more to say about this quiescent
     * point (DESIGN.md §1: a program that keeps polling after a
     * notification is not notified again), and no work can be in flight:
     * whatever arrives now is a duplicate notification or a message the
     * detector overlooked. */
    double until = MPI_Wtime() + x->o.linger_ms * 1e-3;
    while (MPI_Wtime() < until) {
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        if (!flag)
            continue;
        int bytes = 0;
        MPI_Get_count(&st, MPI_BYTE, &bytes);
        char *sink = malloc(bytes > 0 ? (size_t)bytes : 1);
        if (!sink)
            return -1;
        MPI_Recv(sink, bytes, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        free(sink);
        x->stray++;
        if (st.MPI_TAG == x->o.done_tag)
            x->notifications++;
        fprintf(stderr, "%s: rank %d: unexpected message (source %d, tag %d) after phase %d ended\n",
                x->name, x->rank, st.MPI_SOURCE, st.MPI_TAG, x->phases);
    }
    return 0;
}

/* Work is CPU time spent by this thread (not wall time): on an
 * oversubscribed node a task descheduled half-way still costs its CPU time,
 * as real computation would, and a poll loop that was descheduled is not
 * mistaken for work (TDSHIM_IDLE=spin measures the gaps between polls in
 * CPU time too). */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void ex_spin_us(double us)
{
    if (us <= 0)
        return;
    double until = cpu_now() + us * 1e-6;
    while (cpu_now() < until)
        ;
}

void ex_work(const ex_ctx *x)
{
    ex_spin_us(x->o.work_us);
}

/* ---- common clock ----------------------------------------------------- */

#define EX_CLOCK_TAG (EX_MAX_WORK_TAG - 1)

void ex_clock_sync(ex_ctx *x)
{
    int *g = NULL, flag = 0;
    x->clock_off = x->clock_err = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &g, &flag);
    if ((flag && g && *g) || x->size == 1)
        return;
    /* rank 0 sends its time t1, the peer answers with its time t2; rank 0
     * reads t3: peer offset = t2 - (t1 + t3) / 2, error <= (t3 - t1) / 2 */
    for (int r = 1; r < x->size; r++) {
        double best_rtt = 1e30, best_off = 0;
        for (int k = 0; k < 5; k++) {
            if (x->rank == 0) {
                double t1 = MPI_Wtime(), t2;
                MPI_Send(&t1, 1, MPI_DOUBLE, r, EX_CLOCK_TAG, MPI_COMM_WORLD);
                MPI_Recv(&t2, 1, MPI_DOUBLE, r, EX_CLOCK_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                double t3 = MPI_Wtime();
                if (t3 - t1 < best_rtt) {
                    best_rtt = t3 - t1;
                    best_off = t2 - (t1 + t3) / 2;
                }
            } else if (x->rank == r) {
                double t1, t2;
                MPI_Recv(&t1, 1, MPI_DOUBLE, 0, EX_CLOCK_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                t2 = MPI_Wtime();
                MPI_Send(&t2, 1, MPI_DOUBLE, 0, EX_CLOCK_TAG, MPI_COMM_WORLD);
            }
        }
        if (x->rank == 0) {
            double v[2] = {best_off, best_rtt / 2};
            MPI_Send(v, 2, MPI_DOUBLE, r, EX_CLOCK_TAG, MPI_COMM_WORLD);
        } else if (x->rank == r) {
            double v[2];
            MPI_Recv(v, 2, MPI_DOUBLE, 0, EX_CLOCK_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            x->clock_off = v[0];
            x->clock_err = v[1];
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int ex_timeline_check(ex_ctx *x, double t_idle, double t_notify)
{
    double in[4] = {t_idle, t_notify >= 0 ? -t_notify : -1e300, x->clock_err, t_notify}, out[4];
    MPI_Allreduce(in, out, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double last_idle = out[0], first_notify = -out[1], err = 2 * out[2], last_notify = out[3];
    if (t_notify < 0 && first_notify > 1e299)
        return 1; /* nobody was notified (--native-stop) */
    if (first_notify - last_idle > x->lat_max)
        x->lat_max = first_notify - last_idle;
    if (last_notify - last_idle > x->lat_all_max)
        x->lat_all_max = last_notify - last_idle;
    if (last_notify > last_idle)
        x->lat_all_sum += last_notify - last_idle;
    if (first_notify + err >= last_idle)
        return 1;
    x->early++;
    if (x->rank == 0)
        fprintf(stderr, "%s: phase %d: a rank was notified %.6f s before the last rank ran out of work\n",
                x->name, x->phases, last_idle - first_notify);
    return 0;
}

int ex_phase_total(ex_ctx *x, uint64_t mine, uint64_t expect, const char *what)
{
    uint64_t all = 0;
    int ok = 1;
    MPI_Allreduce(&mine, &all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (all != expect) {
        if (x->rank == 0)
            fprintf(stderr, "%s: phase %d: %llu %s, the tree has %llu\n", x->name, x->phases,
                    (unsigned long long)all, what, (unsigned long long)expect);
        ok = 0;
    }
    if (!x->o.native_stop && x->notifications != x->phases && x->o.expect_notify == -2) {
        fprintf(stderr, "%s: rank %d: %d done message(s) by the end of phase %d\n", x->name, x->rank,
                x->notifications, x->phases);
        ok = 0;
    }
    return ok;
}

/* ---- a random tree ------------------------------------------------------ */

ex_node ex_tree_root(const ex_tree *t)
{
    return (ex_node){ex_hash(t->seed, 0, 0), 0};
}

int ex_tree_nchildren(const ex_tree *t, const ex_node *v)
{
    if (v->depth == 0)
        return t->root_children;
    if (v->depth >= t->max_depth)
        return 0;
    return ex_unif(t->seed, v->id, 1) < t->q ? t->branch : 0;
}

ex_node ex_tree_child(const ex_tree *t, const ex_node *v, int i)
{
    return (ex_node){ex_hash(t->seed, v->id, 100 + (uint64_t)i), v->depth + 1};
}

int ex_stack_push(ex_stack *s, ex_node v)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 1024;
        ex_node *b = realloc(s->v, cap * sizeof *b);
        if (!b)
            return -1;
        s->v = b;
        s->cap = cap;
    }
    s->v[s->n++] = v;
    return 0;
}

int ex_stack_give(ex_stack *s, size_t give, int dest, int tag)
{
    int64_t *buf = malloc(2 * give * sizeof *buf);
    if (!buf)
        return -1;
    for (size_t i = 0; i < give; i++) {
        buf[2 * i] = (int64_t)s->v[i].id;
        buf[2 * i + 1] = s->v[i].depth;
    }
    memmove(s->v, s->v + give, (s->n - give) * sizeof *s->v);
    s->n -= give;
    int rc = MPI_Send(buf, (int)(2 * give), MPI_INT64_T, dest, tag, MPI_COMM_WORLD);
    free(buf);
    return rc == MPI_SUCCESS ? 0 : -1;
}

int ex_stack_take(ex_stack *s, const int64_t *buf, int words)
{
    for (int i = 0; i + 1 < words; i += 2)
        if (ex_stack_push(s, (ex_node){(uint64_t)buf[i], buf[i + 1]}) != 0)
            return -1;
    return 0;
}

int ex_tree_expand(const ex_tree *t, ex_stack *s, ex_node *v)
{
    *v = s->v[--s->n];
    int k = ex_tree_nchildren(t, v);
    for (int i = 0; i < k; i++)
        if (ex_stack_push(s, ex_tree_child(t, v, i)) != 0)
            return -1;
    return 0;
}

uint64_t ex_tree_size(const ex_tree *t)
{
    ex_stack s = {0};
    ex_node v;
    uint64_t count = 0;
    if (ex_stack_push(&s, ex_tree_root(t)) != 0)
        return 0;
    while (s.n) {
        count++;
        if (ex_tree_expand(t, &s, &v) != 0) {
            count = 0;
            break;
        }
    }
    free(s.v);
    return count;
}

int ex_tree_phase(ex_ctx *x, ex_tree *t, ex_stack *s, int p, uint64_t salt, uint64_t *expect)
{
    t->seed = ex_hash(x->o.seed, (uint64_t)p, salt);
    *expect = ex_tree_size(t);
    ex_phase_begin(x, 0);
    s->n = 0;
    return x->rank == p % x->size ? ex_stack_push(s, ex_tree_root(t)) : 0;
}

int ex_tell_others(const ex_ctx *x, int value, int tag)
{
    for (int r = 0; r < x->size; r++)
        if (r != x->rank && MPI_Send(&value, 1, MPI_INT, r, tag, MPI_COMM_WORLD) != MPI_SUCCESS)
            return -1;
    return 0;
}

int ex_victim(const ex_ctx *x, uint64_t k)
{
    int v = (int)(ex_hash(x->o.seed ^ 0x5bd1e995, (uint64_t)x->rank, k) % (uint64_t)(x->size - 1));
    return v >= x->rank ? v + 1 : v;
}

/* ---- Safra ---------------------------------------------------------------- */

int ex_safra_pass(const ex_ctx *x, ex_safra *s, int tag_token, int tag_stop)
{
    int P = x->size;
    if (x->rank == 0) {
        if (s->token_out && !s->have_token)
            return 0;
        if (s->token_out && !s->token[1] && !s->black && s->token[0] + s->count == 0) {
            for (int r = 1; r < P; r++)
                if (MPI_Send(NULL, 0, MPI_BYTE, r, tag_stop, MPI_COMM_WORLD) != MPI_SUCCESS)
                    return -1;
            return 1;
        }
        s->token[0] = 0;
        s->token[1] = 0;
    } else {
        if (!s->have_token)
            return 0;
        s->token[0] += s->count;
        s->token[1] |= s->black;
    }
    s->black = 0;
    s->have_token = 0;
    s->token_out = 1;
    return MPI_Send(s->token, 2, MPI_INT64_T, (x->rank + 1) % P, tag_token, MPI_COMM_WORLD) == MPI_SUCCESS
               ? 0
               : -1;
}

/* ---- collectives beside the detection (bench/run) ---------------------- */

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The medians over n calls of MPI_Allreduce (one double) and of
 * MPI_Ibarrier completed by an MPI_Test loop, each the slowest rank's: what
 * a hand-written collective termination check costs on these ranks. */
static void coll_latency(int n, double *allreduce_us, double *ibarrier_us)
{
    double *t = malloc(2 * (size_t)n * sizeof *t), v = 1, w;
    if (!t) {
        *allreduce_us = *ibarrier_us = -1;
        return;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < n; i++) {
        double t0 = MPI_Wtime();
        MPI_Allreduce(&v, &w, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        t[i] = MPI_Wtime() - t0;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < n; i++) {
        MPI_Request r;
        int done = 0;
        double t0 = MPI_Wtime();
        MPI_Ibarrier(MPI_COMM_WORLD, &r);
        while (!done)
            MPI_Test(&r, &done, MPI_STATUS_IGNORE);
        t[n + i] = MPI_Wtime() - t0;
    }
    qsort(t, (size_t)n, sizeof *t, cmp_dbl);
    qsort(t + n, (size_t)n, sizeof *t, cmp_dbl);
    double med[2] = {t[n / 2] * 1e6, t[n + n / 2] * 1e6}, out[2];
    MPI_Allreduce(med, out, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    *allreduce_us = out[0];
    *ibarrier_us = out[1];
    free(t);
}

/* ---- verdict ---------------------------------------------------------- */

int ex_result(ex_ctx *x, int local_ok, uint64_t tasks_expected, const char *extra)
{
    double elapsed = MPI_Wtime() - x->t0, r_elapsed;
    int expect = x->o.expect_notify;
    if (expect == -2)
        expect = x->o.native_stop ? 0 : x->phases;
    /* in: ok, stray, notifications; reduced with MIN/MAX/SUM as needed */
    int okmin = local_ok, nmin = x->notifications, nmax = x->notifications, stray = x->stray;
    uint64_t tasks = x->tasks, msgs = x->recvd;
    int r_ok, r_nmin, r_nmax, r_stray;
    uint64_t r_tasks, r_msgs;
    MPI_Allreduce(&okmin, &r_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&nmin, &r_nmin, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&nmax, &r_nmax, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&stray, &r_stray, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&tasks, &r_tasks, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&msgs, &r_msgs, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&elapsed, &r_elapsed, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

    int ok = r_ok && r_stray == 0 && r_tasks == tasks_expected &&
             (expect < 0 || (r_nmin == expect && r_nmax == expect));
    char coll[160] = "";
    if (x->o.coll_reps > 0) {
        double ar, ib;
        coll_latency(x->o.coll_reps, &ar, &ib);
        snprintf(coll, sizeof coll,
                 " detect_first_us=%.2f detect_all_us=%.2f detect_sum_us=%.1f allreduce_us=%.2f ibarrier_us=%.2f",
                 x->lat_max * 1e6, x->lat_all_max * 1e6, x->lat_all_sum * 1e6, ar, ib);
    }
    if (x->rank == 0) {
        char notes[48];
        if (r_nmin == r_nmax)
            snprintf(notes, sizeof notes, "%d", r_nmin);
        else
            snprintf(notes, sizeof notes, "%d..%d", r_nmin, r_nmax);
        printf("RESULT example=%s ranks=%d tasks=%" PRIu64 " expected=%" PRIu64
               " messages=%" PRIu64 " phases=%d notifications=%s stray=%d time=%.6f%s%s%s %s\n",
               x->name, x->size, r_tasks, tasks_expected, r_msgs, x->phases, notes, r_stray, r_elapsed,
               extra && *extra ? " " : "", extra ? extra : "", coll, ok ? "ok" : "FAIL");
        if (!ok) {
            if (!r_ok)
                fprintf(stderr, "%s: a rank's own check failed (see above)\n", x->name);
            if (r_tasks != tasks_expected)
                fprintf(stderr, "%s: executed %" PRIu64 " tasks, the seed says %" PRIu64 "\n",
                        x->name, r_tasks, tasks_expected);
            if (expect >= 0 && (r_nmin != expect || r_nmax != expect))
                fprintf(stderr, "%s: each rank must see %d done message(s), saw %s\n", x->name,
                        expect, notes);
        }
        fflush(stdout);
    }
    return ok ? 0 : 1;
}
