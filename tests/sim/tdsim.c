/*
 * tdsim command line: options, schedules, summaries, replay lines.
 * The simulation itself is in sim.c, the workloads in workload.c.
 */
#include "tdsim.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- distributions */

int sim_dist_parse(const char *s, sim_dist *d)
{
    char kind[16];
    double a = 0, b = 0;
    int n = sscanf(s, "%15[a-z]:%lf:%lf", kind, &a, &b);
    if (n < 2)
        return -1;
    if (!strcmp(kind, "const") && n == 2 && a >= 0)
        *d = (sim_dist){DIST_CONST, a, 0};
    else if (!strcmp(kind, "uniform") && n == 3 && a >= 0 && b >= a)
        *d = (sim_dist){DIST_UNIFORM, a, b};
    else if (!strcmp(kind, "exp") && n == 2 && a > 0)
        *d = (sim_dist){DIST_EXP, a, 0};
    else if (!strcmp(kind, "pareto") && n == 3 && a > 0 && b > 0)
        *d = (sim_dist){DIST_PARETO, a, b};
    else
        return -1;
    return 0;
}

double sim_dist_draw(const sim_dist *d, sim_rng *r)
{
    switch (d->kind) {
    case DIST_CONST: return d->a;
    case DIST_UNIFORM: return d->a + (d->b - d->a) * sim_unif(r);
    case DIST_EXP: return -d->a * log1p(-sim_unif(r));
    default: return d->a / pow(1.0 - sim_unif(r), 1.0 / d->b); /* Pareto(xm, alpha): heavy tail */
    }
}

void sim_dist_format(const sim_dist *d, char *buf, size_t len)
{
    switch (d->kind) {
    case DIST_CONST: snprintf(buf, len, "const:%g", d->a); break;
    case DIST_UNIFORM: snprintf(buf, len, "uniform:%g:%g", d->a, d->b); break;
    case DIST_EXP: snprintf(buf, len, "exp:%g", d->a); break;
    default: snprintf(buf, len, "pareto:%g:%g", d->a, d->b); break;
    }
}

/* ---------------------------------------------------------------- usage */

static void usage(FILE *f)
{
    fputs(
"usage: tdsim [options]\n"
"Deterministic discrete-event simulation of a termination-detection algorithm\n"
"of the tdshim core over P ranks, checked by a ground-truth oracle.\n"
"\n"
"  --algo NAME          algorithm (default bcj); see --list-algos\n"
"  --list-algos         print the algorithm names (not the broken variants), one a line\n"
"  --list-broken        print the deliberately broken variants (test builds only)\n"
"  --workload W         ring|tree|skrA|skrB|skrC|skrD|bcj5|spawn (default ring)\n"
"  --ranks N|A-B        ranks, or a range drawn per schedule (default 8)\n"
"  --seed S             seed of the first schedule (default 1); schedule i uses S+i\n"
"  --schedules N        runs, one per seed S..S+N-1 (default 1)\n"
"  --adversarial        per seed, pick random delay laws, tie-breaking, a primary held\n"
"                       back until a later event, bursts of re-activation of a rank\n"
"                       right after it sends a control message\n"
"  --nonfifo            control channels are not FIFO (default: FIFO per (src,dst))\n"
"  --pdelay D           primary message delay (default uniform:0.5:2)\n"
"  --cdelay D           control message delay (default uniform:0.5:2)\n"
"  --service D          task service time (default exp:1)\n"
"                       D = const:X | uniform:A:B | exp:MEAN | pareto:XM:ALPHA\n"
"  --send-at start|end  a task sends its messages when it starts or ends (default end)\n"
"  --on-notify poll|exit  single-phase: after the announcement the program keeps\n"
"                       polling (default; a second announcement is a violation)\n"
"                       or exits (gate_on_notify=1: no wave after the last one)\n"
"  --barrier active|passive  multi-phase: a rank blocked in the phase barrier is\n"
"                       active (default) or passive for the core (it calls\n"
"                       td_passive; leaving the barrier is td_activity)\n"
"  --leave collective|activity  multi-phase: a rank leaving the phase barrier calls\n"
"                       td_collective (default: the shim's blocking collectives;\n"
"                       at the root the algorithm's on_collective fails the wave\n"
"                       in progress, or the engine confirms the next proof) or\n"
"                       td_activity (activity that is no collective: a program's\n"
"                       own call, a rooted collective)\n"
"  --sendwait off|exact|received  a task that sent primaries ends in a completion\n"
"                       call waiting for its own sends (2 primary delays + a\n"
"                       service time: the rendezvous ack) before it polls again.\n"
"                       exact: the rank is active meanwhile (the passivity rule\n"
"                       of the shim, docs/internals.md 'The model'); received: the core is\n"
"                       told passive (the old shim, which kept a rank passive\n"
"                       after a receive completed inside the call). The oracle\n"
"                       counts the rank busy either way. Default off\n"
"  --busy-again N       up to N times per rank, an idle rank sees one long gap\n"
"                       between polls (td_unsure, as TDSHIM_IDLE=spin), or two\n"
"                       (td_busy), and stops polling for a service time;\n"
"                       it stays idle for the oracle. Default 0\n"
"  --finalized K        the last K ranks (at most P-1) are in MPI_Finalize from the\n"
"                       start (td_finalize): idle, no work, no barrier; they\n"
"                       take part in every episode. Default 0\n"
"  --misjudge K         1 in K polls of a rank with a task to run tell its core it\n"
"                       is passive while it works (TDSHIM_IDLE=spin's error: work\n"
"                       between polls shorter than the spin gap); it sends while\n"
"                       passive (contract violations) until a receive, or until a\n"
"                       later poll's second long gap calls td_busy. The oracle\n"
"                       counts false announcements (false_runs=, false_ann=;\n"
"                       caught_runs=: those in which a rank found evidence) and\n"
"                       still fails on core errors, liveness and ground truth.\n"
"                       Default 0 (off)\n"
"  --confirm on|off     confirm every proof with two count waves before announcing\n"
"                       (td_engine.c; TDSHIM_CONFIRM), default off\n"
"  --model M            des (default) or a step model of cda-credit-hpc.txt §V-B:\n"
"                       instant, local, load (sets delays, service and --send-at\n"
"                       unless given explicitly)\n"
"workload parameters:\n"
"  --p X                ring: continuation probability (q = 1-p), default 0.9\n"
"  --lambda X --lmin N --lmax N   tree generator (default 0.8, 3, 30)\n"
"  --tree-seed S        tree shape seed (default 0: drawn per schedule)\n"
"  --mapping rr|random  tree: task x on rank x mod P, or uniformly random (default rr)\n"
"  --tree-info          print the size and height of the tree and exit\n"
"  --depth N            skrA/skrB: divide-and-conquer depth (default 4)\n"
"  --phases N           skrB: divide-and-conquer phases (default 6), plus one phase\n"
"                       whose work stays on one rank (--local-tasks, default 5)\n"
"  --length N           skrC: chain length (default 20)\n"
"  --iters N            skrD: iterations (default 10)\n"
"  --gens N             spawn: generations (default 6)\n"
"algorithm parameters (td_cfg):\n"
"  --tree-arity K       spanning tree arity (default 2)\n"
"  --cda-init N --cda-con N --cda-wcon N --cda-borrow N\n"
"  --xulau-topo ring|mesh|torus|hypercube   --xulau-dims A,B,C\n"
"output:\n"
"  --per-run            one line per run (default: only with --schedules 1)\n"
"  --json               JSON objects instead of key=value lines\n"
"  --verbose            trace every event of the run (use with --schedules 1)\n"
"  --max-events N       cap on events per run (default 200000000); independently,\n"
"                       100000+1000*P events after true quiescence without an\n"
"                       announcement are a liveness violation\n"
"  --help               this text\n"
"On a violation tdsim prints one line 'VIOLATION <KIND>: ... replay: <command>'\n"
"and exits 1. Bad options exit 2.\n",
        f);
}

static int bad(const char *opt, const char *val, const char *accepted)
{
    fprintf(stderr, "tdsim: invalid value '%s' for %s (expected %s)\n", val ? val : "", opt, accepted);
    return 2;
}

static int parse_u64(const char *s, uint64_t *v, uint64_t lo, uint64_t hi)
{
    char *end;
    errno = 0;
    if (!s || !*s || *s == '-')
        return -1;
    unsigned long long x = strtoull(s, &end, 0);
    if (errno || *end || x < lo || x > hi)
        return -1;
    *v = x;
    return 0;
}
static int parse_int(const char *s, int *v, int lo, int hi)
{
    uint64_t x;
    if (parse_u64(s, &x, (uint64_t)lo, (uint64_t)hi))
        return -1;
    *v = (int)x;
    return 0;
}
static int parse_dbl(const char *s, double *v, double lo, double hi)
{
    char *end;
    if (!s || !*s)
        return -1;
    double x = strtod(s, &end);
    if (*end || !(x >= lo && x <= hi))
        return -1;
    *v = x;
    return 0;
}

/* ---------------------------------------------------------------- output */

typedef struct out { FILE *f; int json, n; } out;
static void o_begin(out *o, const char *what)
{
    o->n = 0;
    if (o->json)
        fprintf(o->f, "{\"record\":\"%s\"", what);
    else
        fputs(what, o->f);
}
static void o_str(out *o, const char *k, const char *v)
{
    if (o->json)
        fprintf(o->f, ",\"%s\":\"%s\"", k, v);
    else
        fprintf(o->f, " %s=%s", k, v);
}
static void o_u64(out *o, const char *k, uint64_t v)
{
    fprintf(o->f, o->json ? ",\"%s\":%llu" : " %s=%llu", k, (unsigned long long)v);
}
static void o_dbl(out *o, const char *k, double v)
{
    fprintf(o->f, o->json ? ",\"%s\":%.6g" : " %s=%.6g", k, v);
}
static void o_end(out *o) { fputs(o->json ? "}\n" : "\n", o->f); }

/* control messages by type name, "ctl.<name>"; engine and algorithm names do not clash
 * in practice, engine ones get no prefix beyond ctl. */
static void o_ctl(out *o, const td_ctx *c, const double ctl[2][TD_MAX_TYPES], int mean)
{
    char k[64];
    for (int e = 1; e >= 0; e--) {
        int nt = e ? TD_EM_NTYPES : c->algo->ntypes;
        for (int t = 0; t < nt; t++) {
            snprintf(k, sizeof k, "ctl.%s", td_type_name(c, e, t));
            if (mean)
                o_dbl(o, k, ctl[e ? 0 : 1][t]);
            else
                o_u64(o, k, (uint64_t)ctl[e ? 0 : 1][t]);
        }
    }
}

/* ---------------------------------------------------------------- main */

static void print_replay(FILE *f, int argc, char **argv, uint64_t seed)
{
    fputs(argv[0], f);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--seed") || !strcmp(a, "--schedules")) {
            i++;
            continue;
        }
        if (!strncmp(a, "--seed=", 7) || !strncmp(a, "--schedules=", 12) || !strcmp(a, "--per-run"))
            continue;
        fprintf(f, " %s", a);
    }
    fprintf(f, " --seed %llu --schedules 1", (unsigned long long)seed);
}

int main(int argc, char **argv)
{
    sim_opts o;
    memset(&o, 0, sizeof o);
    o.algo = td_algo_find("bcj");
    o.workload = WL_RING;
    o.pmin = o.pmax = 8;
    o.seed = 1;
    o.schedules = 1;
    o.model = MODEL_DES;
    o.p = 0.9;
    o.lambda = 0.8;
    o.lmin = 3;
    o.lmax = 30;
    o.depth = 4;
    o.phases = 6;
    o.local_tasks = 5;
    o.length = 20;
    o.iters = 10;
    o.gens = 6;
    o.max_events = 200000000;
    td_cfg_default(&o.cfg, 0, 1);
    int set_pd = 0, set_cd = 0, set_sv = 0, set_sa = 0, tree_info = 0;
    sim_dist_parse("uniform:0.5:2", &o.pdelay);
    sim_dist_parse("uniform:0.5:2", &o.cdelay);
    sim_dist_parse("exp:1", &o.service);

    for (int i = 1; i < argc; i++) {
        char *a = argv[i], *v = NULL, *eq;
        char name[64];
        if (strncmp(a, "--", 2)) {
            fprintf(stderr, "tdsim: unexpected argument '%s' (see --help)\n", a);
            return 2;
        }
        snprintf(name, sizeof name, "%s", a);
        if ((eq = strchr(name, '='))) {
            *eq = 0;
            v = a + (eq - name) + 1;
        }
        static const char *const flags[] = {"--help", "--list-algos", "--list-broken", "--adversarial", "--nonfifo",
                                            "--per-run", "--json", "--verbose", "--tree-info", NULL};
        int is_flag = 0;
        for (int k = 0; flags[k]; k++)
            is_flag |= !strcmp(name, flags[k]);
        if (is_flag && v) {
            fprintf(stderr, "tdsim: option %s takes no value\n", name);
            return 2;
        }
        if (!is_flag && !v) {
            if (i + 1 >= argc) {
                fprintf(stderr, "tdsim: option %s needs a value (see --help)\n", name);
                return 2;
            }
            v = argv[++i];
        }
        if (!strcmp(name, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(name, "--list-algos") || !strcmp(name, "--list-broken")) {
            unsigned want = !strcmp(name, "--list-broken") ? TD_ALGO_BROKEN : 0;
            for (const td_algo *const *al = td_algo_list(); *al; al++)
                if (((*al)->flags & (TD_ALGO_BROKEN | TD_ALGO_MODEL)) == want)
                    printf("%s\n", (*al)->name);
            return 0;
        } else if (!strcmp(name, "--algo")) {
            if (!(o.algo = td_algo_find(v))) {
                char names[256];
                td_algo_names(names, sizeof names);
                return bad(name, v, names);
            }
        } else if (!strcmp(name, "--workload")) {
            int w;
            for (w = 0; w < WL_N && strcmp(v, sim_workload_names[w]); w++)
                ;
            if (w == WL_N)
                return bad(name, v, "ring, tree, skrA, skrB, skrC, skrD, bcj5, spawn");
            o.workload = w;
        } else if (!strcmp(name, "--ranks")) {
            char *dash = strchr(v, '-');
            if (dash) {
                char lo[32];
                snprintf(lo, sizeof lo, "%.*s", (int)(dash - v), v);
                if (parse_int(lo, &o.pmin, 1, 1 << 30) || parse_int(dash + 1, &o.pmax, o.pmin, 1 << 30))
                    return bad(name, v, "N or A-B with 1 <= A <= B");
            } else if (parse_int(v, &o.pmin, 1, 1 << 30)) {
                return bad(name, v, "a rank count >= 1, or A-B");
            } else {
                o.pmax = o.pmin;
            }
        } else if (!strcmp(name, "--seed")) {
            if (parse_u64(v, &o.seed, 0, UINT64_MAX))
                return bad(name, v, "an unsigned integer");
        } else if (!strcmp(name, "--schedules")) {
            if (parse_u64(v, &o.schedules, 1, UINT64_MAX))
                return bad(name, v, "an integer >= 1");
        } else if (!strcmp(name, "--adversarial")) {
            o.adversarial = 1;
        } else if (!strcmp(name, "--nonfifo")) {
            o.nonfifo = 1;
        } else if (!strcmp(name, "--pdelay") || !strcmp(name, "--cdelay") || !strcmp(name, "--service")) {
            sim_dist *d = name[2] == 'p' ? &o.pdelay : name[2] == 'c' ? &o.cdelay : &o.service;
            if (sim_dist_parse(v, d))
                return bad(name, v, "const:X, uniform:A:B, exp:MEAN or pareto:XM:ALPHA");
            *(name[2] == 'p' ? &set_pd : name[2] == 'c' ? &set_cd : &set_sv) = 1;
        } else if (!strcmp(name, "--send-at")) {
            if (strcmp(v, "start") && strcmp(v, "end"))
                return bad(name, v, "start or end");
            o.send_at_start = !strcmp(v, "start");
            set_sa = 1;
        } else if (!strcmp(name, "--on-notify")) {
            if (strcmp(v, "poll") && strcmp(v, "exit"))
                return bad(name, v, "poll or exit");
            o.exit_on_notify = !strcmp(v, "exit");
        } else if (!strcmp(name, "--barrier")) {
            if (strcmp(v, "active") && strcmp(v, "passive"))
                return bad(name, v, "active or passive");
            o.barrier_passive = !strcmp(v, "passive");
        } else if (!strcmp(name, "--leave")) {
            if (strcmp(v, "collective") && strcmp(v, "activity"))
                return bad(name, v, "collective or activity");
            o.leave_activity = !strcmp(v, "activity");
        } else if (!strcmp(name, "--confirm")) {
            if (strcmp(v, "on") && strcmp(v, "off"))
                return bad(name, v, "on or off");
            o.cfg.confirm = !strcmp(v, "on");
        } else if (!strcmp(name, "--busy-again")) {
            if (parse_int(v, &o.busy_again, 0, 1 << 20))
                return bad(name, v, "an integer >= 0");
        } else if (!strcmp(name, "--finalized")) {
            if (parse_int(v, &o.finalized, 0, 1 << 20))
                return bad(name, v, "an integer >= 0");
        } else if (!strcmp(name, "--misjudge")) {
            if (parse_int(v, &o.misjudge, 0, 1 << 20))
                return bad(name, v, "an integer >= 0");
        } else if (!strcmp(name, "--sendwait")) {
            if (strcmp(v, "off") && strcmp(v, "exact") && strcmp(v, "received"))
                return bad(name, v, "off, exact or received");
            o.sendwait = !strcmp(v, "exact") ? 1 : !strcmp(v, "received") ? 2 : 0;
        } else if (!strcmp(name, "--model")) {
            static const char *const models[] = {"des", "instant", "local", "load"};
            int m;
            for (m = 0; m < 4 && strcmp(v, models[m]); m++)
                ;
            if (m == 4)
                return bad(name, v, "des, instant, local or load");
            o.model = m;
        } else if (!strcmp(name, "--p")) {
            if (parse_dbl(v, &o.p, 0, 0.999999999))
                return bad(name, v, "a probability in [0,1)");
        } else if (!strcmp(name, "--lambda")) {
            if (parse_dbl(v, &o.lambda, 0, 1))
                return bad(name, v, "a number in [0,1]");
        } else if (!strcmp(name, "--lmin")) {
            if (parse_int(v, &o.lmin, 1, 30))
                return bad(name, v, "1..30");
        } else if (!strcmp(name, "--lmax")) {
            if (parse_int(v, &o.lmax, 1, 1000))
                return bad(name, v, "1..1000");
        } else if (!strcmp(name, "--tree-seed")) {
            if (parse_u64(v, &o.tree_seed, 0, UINT64_MAX))
                return bad(name, v, "an unsigned integer");
        } else if (!strcmp(name, "--mapping")) {
            if (strcmp(v, "rr") && strcmp(v, "random"))
                return bad(name, v, "rr or random");
            o.mapping_random = !strcmp(v, "random");
        } else if (!strcmp(name, "--tree-info")) {
            tree_info = 1;
        } else if (!strcmp(name, "--depth")) {
            if (parse_int(v, &o.depth, 1, 24))
                return bad(name, v, "1..24");
        } else if (!strcmp(name, "--phases")) {
            if (parse_int(v, &o.phases, 1, 15))
                return bad(name, v, "1..15");
        } else if (!strcmp(name, "--local-tasks")) {
            if (parse_int(v, &o.local_tasks, 1, 1 << 30))
                return bad(name, v, "an integer >= 1");
        } else if (!strcmp(name, "--length")) {
            if (parse_int(v, &o.length, 1, 1 << 30))
                return bad(name, v, "an integer >= 1");
        } else if (!strcmp(name, "--iters")) {
            if (parse_int(v, &o.iters, 0, 1 << 30))
                return bad(name, v, "an integer >= 0");
        } else if (!strcmp(name, "--gens")) {
            if (parse_int(v, &o.gens, 0, 40))
                return bad(name, v, "0..40");
        } else if (!strcmp(name, "--tree-arity")) {
            if (parse_int(v, &o.cfg.tree_arity, 1, 1 << 20))
                return bad(name, v, "an integer >= 1");
        } else if (!strcmp(name, "--cda-init") || !strcmp(name, "--cda-con") || !strcmp(name, "--cda-wcon") ||
                   !strcmp(name, "--cda-borrow")) {
            uint64_t x;
            if (parse_u64(v, &x, 1, INT64_MAX))
                return bad(name, v, "an integer >= 1");
            int64_t *dst = !strcmp(name, "--cda-init") ? &o.cfg.cda_init : !strcmp(name, "--cda-con") ? &o.cfg.cda_con
                         : !strcmp(name, "--cda-wcon") ? &o.cfg.cda_wcon : &o.cfg.cda_borrow;
            *dst = (int64_t)x;
        } else if (!strcmp(name, "--xulau-topo")) {
            static const char *const topo[] = {"ring", "mesh", "torus", "hypercube"};
            int t;
            for (t = 0; t < 4 && strcmp(v, topo[t]); t++)
                ;
            if (t == 4)
                return bad(name, v, "ring, mesh, torus or hypercube");
            o.cfg.xulau_topo = t;
        } else if (!strcmp(name, "--xulau-dims")) {
            int d[3] = {0, 0, 0}, n = 0;
            char buf[64];
            snprintf(buf, sizeof buf, "%s", v);
            for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ","))
                if (n >= 3 || parse_int(tok, &d[n++], 1, 1 << 30))
                    return bad(name, v, "A[,B[,C]] positive integers");
            if (!n)
                return bad(name, v, "A[,B[,C]] positive integers");
            memcpy(o.cfg.xulau_dims, d, sizeof d);
        } else if (!strcmp(name, "--per-run")) {
            o.per_run = 1;
        } else if (!strcmp(name, "--json")) {
            o.json = 1;
        } else if (!strcmp(name, "--verbose")) {
            o.verbose = 1;
        } else if (!strcmp(name, "--max-events")) {
            if (parse_u64(v, &o.max_events, 1, UINT64_MAX))
                return bad(name, v, "an integer >= 1");
        } else {
            fprintf(stderr, "tdsim: unknown option %s (see --help)\n", name);
            return 2;
        }
    }
    if (!o.algo) {
        fprintf(stderr, "tdsim: no algorithm 'bcj' in this core\n");
        return 2;
    }
    if (o.lmin > o.lmax) {
        fprintf(stderr, "tdsim: --lmin %d exceeds --lmax %d\n", o.lmin, o.lmax);
        return 2;
    }
    /* Step models (cda-credit-hpc.txt §V-B) as event timings; see README-sim.md */
    if (o.model != MODEL_DES) {
        sim_dist unit = {DIST_CONST, 1, 0}, zero = {DIST_CONST, 0, 0};
        if (!set_sv)
            o.service = unit;
        if (!set_cd)
            o.cdelay = (sim_dist){DIST_UNIFORM, 0.001, 0.01}; /* control work fits in a step */
        if (!set_pd)
            o.pdelay = o.model == MODEL_LOCAL ? unit : zero;
        if (!set_sa)
            o.send_at_start = o.model == MODEL_INSTANT;
    }
    if (tree_info) {
        sim_workload w;
        memset(&w, 0, sizeof w);
        int64_t n = wl_tree_generate(&w, o.lambda, o.lmin, o.lmax, o.tree_seed ? o.tree_seed : 1);
        if (n < 0) {
            fprintf(stderr, "tdsim: tree too large\n");
            return 3;
        }
        int h = 0, leaves = 0;
        for (int64_t i = 0; i < n; i++) {
            h = w.level[i] + 1 > h ? w.level[i] + 1 : h;
            leaves += w.child[i] < 0;
        }
        printf("tree lambda=%g lmin=%d lmax=%d tree_seed=%llu tasks=%lld height=%d leaves=%d\n", o.lambda, o.lmin,
               o.lmax, (unsigned long long)(o.tree_seed ? o.tree_seed : 1), (long long)n, h, leaves);
        wl_free(&w);
        return 0;
    }

    out po = {stdout, o.json, 0};
    int per_run = o.per_run || o.schedules == 1;
    double sum_ctl = 0, sum_waves = 0, sum_delay = 0, sum_prim = 0, sum_tasks = 0;
    double sum_hops = 0, max_delay = 0, sum_eps = 0, sum_events = 0, sum_misj = 0;
    uint64_t max_hops = 0, false_runs = 0, false_ann = 0, caught_runs = 0;
    double ctl[2][TD_MAX_TYPES];
    memset(ctl, 0, sizeof ctl);
    td_ctx names; /* only for td_type_name */
    memset(&names, 0, sizeof names);
    names.algo = o.algo;
    for (uint64_t k = 0; k < o.schedules; k++) {
        uint64_t seed = o.seed + k;
        sim_result r;
        if (sim_run(&o, seed, &r, o.verbose ? stdout : NULL) != 0)
            return 3;
        if (r.violation == V_RESOURCE) {
            fprintf(stderr, "tdsim: %s (P=%d, seed %llu)\n", r.why, r.P, (unsigned long long)seed);
            return 3;
        }
        if (r.violation) {
            fflush(stdout);
            printf("VIOLATION %s: %s (algo %s, workload %s, P=%d, seed %llu); replay: ", sim_violation_name(r.violation),
                   r.why, o.algo->name, sim_workload_names[o.workload], r.P, (unsigned long long)seed);
            print_replay(stdout, argc, argv, seed);
            putchar('\n');
            return 1;
        }
        double rc[2][TD_MAX_TYPES];
        for (int e = 0; e < 2; e++)
            for (int t = 0; t < TD_MAX_TYPES; t++) {
                rc[e][t] = (double)r.ctl[e][t];
                ctl[e][t] += rc[e][t];
            }
        sum_ctl += (double)r.ctl_total;
        sum_waves += (double)r.waves;
        sum_delay += r.episodes ? r.delay_sum / (double)r.episodes : 0;
        sum_hops += r.episodes ? (double)r.hops_sum / (double)r.episodes : 0;
        sum_prim += (double)r.primaries;
        sum_tasks += (double)r.tasks;
        sum_eps += (double)r.episodes;
        sum_events += (double)r.events;
        sum_misj += (double)r.misjudged;
        false_runs += r.false_ann > 0;
        caught_runs += r.false_ann > 0 && r.evidence > 0;
        false_ann += r.false_ann;
        max_delay = r.delay_max > max_delay ? r.delay_max : max_delay;
        max_hops = r.hops_max > max_hops ? r.hops_max : max_hops;
        if (per_run) {
            o_begin(&po, "run");
            o_str(&po, "algo", o.algo->name);
            o_str(&po, "workload", sim_workload_names[o.workload]);
            o_u64(&po, "seed", seed);
            o_u64(&po, "ranks", (uint64_t)r.P);
            o_str(&po, "result", "ok");
            o_u64(&po, "tasks", r.tasks);
            o_u64(&po, "primaries", r.primaries);
            o_u64(&po, "episodes", r.episodes);
            o_u64(&po, "waves", r.waves);
            o_u64(&po, "ctl", r.ctl_total);
            o_ctl(&po, &names, (const double(*)[TD_MAX_TYPES])rc, 0);
            o_dbl(&po, "delay_max", r.delay_max);
            o_dbl(&po, "delay_mean", r.episodes ? r.delay_sum / (double)r.episodes : 0);
            o_u64(&po, "hops_max", r.hops_max);
            o_u64(&po, "events", r.events);
            o_dbl(&po, "end_time", r.end_time);
            if (o.misjudge) {
                o_u64(&po, "misjudged", r.misjudged);
                o_u64(&po, "false_ann", r.false_ann);
            }
            o_end(&po);
        }
    }
    double n = (double)o.schedules;
    for (int e = 0; e < 2; e++)
        for (int t = 0; t < TD_MAX_TYPES; t++)
            ctl[e][t] /= n;
    o_begin(&po, "summary");
    o_str(&po, "algo", o.algo->name);
    o_str(&po, "workload", sim_workload_names[o.workload]);
    char rs[32];
    if (o.pmin == o.pmax)
        snprintf(rs, sizeof rs, "%d", o.pmin);
    else
        snprintf(rs, sizeof rs, "%d-%d", o.pmin, o.pmax);
    o_str(&po, "ranks", rs);
    o_u64(&po, "seed", o.seed);
    o_u64(&po, "schedules", o.schedules);
    o_u64(&po, "violations", 0);
    o_dbl(&po, "tasks", sum_tasks / n);
    o_dbl(&po, "primaries", sum_prim / n);
    o_dbl(&po, "episodes", sum_eps / n);
    o_dbl(&po, "waves", sum_waves / n);
    o_dbl(&po, "ctl", sum_ctl / n);
    o_ctl(&po, &names, (const double(*)[TD_MAX_TYPES])ctl, 1);
    o_dbl(&po, "delay_mean", sum_delay / n);
    o_dbl(&po, "delay_max", max_delay);
    o_dbl(&po, "hops_mean", sum_hops / n);
    o_u64(&po, "hops_max", max_hops);
    o_dbl(&po, "events", sum_events / n);
    if (o.misjudge) { /* a mean, then totals over the schedules */
        o_dbl(&po, "misjudged", sum_misj / n);
        o_u64(&po, "false_runs", false_runs);
        o_u64(&po, "false_ann", false_ann);
        o_u64(&po, "caught_runs", caught_runs); /* false_runs in which a rank found evidence (td_engine.c) */
    }
    o_end(&po);
    return 0;
}
