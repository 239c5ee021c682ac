/*
 * Life cycle and detection machinery of the PMPI layer: MPI_Init /
 * MPI_Finalize, the control transport on the private communicator, the
 * passive/progress logic (DESIGN.md §1) and notification.
 *
 * Cost rule: nothing here runs on a busy rank's fast path. The private
 * communicator is only polled where the rank waits: empty polls, blocking
 * loops and finalize (Charm++ QD: control work costs a busy
 * processor nothing).
 */
#include "config.h"
#include "tds_comm.h"
#include "tds_complete.h"
#include "tds_flat.h"
#include "tds_pair.h"
#include "tds_preload.h"
#include "tds_progress.h"
#include "tds_req.h"
#include "tds_send.h"
#include "tds_wire.h"
#include "tds_bodies.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------- reports */

static tdr_meta report_meta(void)
{
    return (tdr_meta){.version = PACKAGE_VERSION,
                      .algo = tds.cf.algo->name,
                      .config = tds.cf.kv,
                      .nconfig = TDS_ENV_N,
                      .report_dir = tds.cf.report_dir,
                      .want_json = tds.cf.want_json,
                      .want_text = tds.cf.want_text,
                      .callsites_top = tds.cf.callsites,
                      .group_mode = tds.cf.report_group,
                      .stamped = !tds.nohdr};
}

/* A killed job (mpirun sends SIGTERM to every rank; Ctrl-C is SIGINT) gets
 * each rank's report so far, marked partial, with what detection was
 * waiting for (SCHEMA.md, "Partial reports"); then the signal does what
 * it would have done. Only a signal whose disposition was the default at
 * MPI_Init is caught: a program's own handler is left alone.
 *
 * The handler is async-signal-safe (DESIGN.md §7, issue 26): the rank may
 * be signalled inside malloc, stdio or MPI, holding their locks, so it
 * only formats into the room tdr_run_id reserved and calls open/write/
 * fsync/rename (tdr_write_partial). A forked child of the rank (fork,
 * system, popen) inherits the handler but is not the rank: it dies of the
 * signal at once, without a report or a word. */
static struct sigaction old_term, old_int;
static atomic_int killed; /* 1: a handler is writing the report, 2: done (lock-free: async-signal-safe) */

static void on_kill(int sig)
{
    int saved = errno;
    if (atomic_exchange(&killed, 1) != 0) {
        /* a second signal, taken by another thread while the first one's
         * handler writes (the launcher's SIGTERM after ours): dying now
         * would cut that report short, so wait for it, up to 0.8 s */
        struct timespec ts = {0, 10000000};
        for (int i = 0; i < 80 && atomic_load(&killed) != 2; i++)
            nanosleep(&ts, NULL);
    } else {
        if ((long)getpid() == tds.m.init_pid && tds.on) {
            tdr_meta meta = report_meta();
            tds_sent_bytes_fold(); /* arithmetic only */
            tdr_write_partial(&tds.m, &tds.core, &meta, sig == SIGTERM ? "SIGTERM" : "SIGINT");
        }
        atomic_store(&killed, 2);
    }
    sigaction(sig, sig == SIGTERM ? &old_term : &old_int, NULL);
    errno = saved;
    raise(sig); /* delivered when the handler returns (the signal is blocked in it) */
}

static void catch_kill(void)
{
    struct sigaction sa, cur;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_kill;
    sigemptyset(&sa.sa_mask);
    /* one report: SIGINT waits while SIGTERM's handler runs, and the reverse */
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaddset(&sa.sa_mask, SIGINT);
    if (sigaction(SIGTERM, NULL, &cur) == 0 && cur.sa_handler == SIG_DFL && !(cur.sa_flags & SA_SIGINFO))
        sigaction(SIGTERM, &sa, &old_term);
    if (sigaction(SIGINT, NULL, &cur) == 0 && cur.sa_handler == SIG_DFL && !(cur.sa_flags & SA_SIGINFO))
        sigaction(SIGINT, &sa, &old_int);
}

/* ---------------------------------------------------------------- init */

/* header-free (DESIGN.md §4; README "Header-free mode"): the algorithm
 * piggybacks nothing, so every flag of the header
 * can be derived from the envelope on the receiving side */
static int want_nohdr(const tds_config *cf)
{
    return cf->piggyback == TDS_PB_NONE ||
           (cf->piggyback == TDS_PB_AUTO && cf->algo->pb_size == 0);
}

/* What the receivers of a header-free job must agree on with the senders
 * (the predicates of tds_env_kind): a hash, 0 with a header. */
/* FNV-1a over the low `bytes` bytes of x */
static uint32_t fnv_mix(uint32_t h, uint64_t x, int bytes)
{
    for (int k = 0; k < bytes; k++)
        h = (h ^ (uint32_t)((x >> (8 * k)) & 0xffu)) * 16777619u;
    return h;
}

static int wire_key(const tds_config *cf)
{
    if (!want_nohdr(cf))
        return 0;
    uint32_t h = 2166136261u; /* FNV-1a over the values that decide a message's kind */
    int v[4] = {cf->ignore_empty, cf->notify == TDS_NOTIFY_TAG ? cf->notify_tag : -2, cf->nignore, cf->nshort};
    for (int i = 0; i < 4 + 2 * cf->nignore; i++) {
        uint32_t x = (uint32_t)(i < 4 ? v[i] : i % 2 ? cf->ignore[(i - 4) / 2].hi : cf->ignore[(i - 4) / 2].lo);
        h = fnv_mix(h, x, 4);
    }
    for (int i = 0; i < cf->nshort; i++) {
        h = fnv_mix(h, (uint32_t)cf->shorts[i].lo, 4);
        h = fnv_mix(h, (uint32_t)cf->shorts[i].hi, 4);
    }
    return 1 + (int)(h & 0x3fffffffu);
}

/* What shapes the control protocol beyond the algorithm itself: the
 * spanning tree, a credit algorithm's constants (rank 0 sums everyone's
 * initial credit from its own), xulau's overlay. Ranks that disagree would
 * send control messages the others cannot place (core errors, a hang), so
 * every rank must set them alike. TDSHIM_CONFIRM may differ: it only
 * decides whether rank 0 confirms (xulau: how long a rank's own window is,
 * safe either way). */
static int shape_key(const tds_config *cf)
{
    const td_cfg *g = &cf->cfg;
    int64_t v[9] = {g->tree_arity};
    int n = 1;
    if (cf->algo->flags & TD_ALGO_CREDIT) {
        v[n++] = g->cda_init;
        v[n++] = g->cda_con;
        v[n++] = g->cda_wcon;
        v[n++] = g->cda_borrow;
    }
    if (cf->algo->flags & TD_ALGO_OVERLAY) {
        v[n++] = g->xulau_topo;
        for (int i = 0; i < 3; i++)
            v[n++] = g->xulau_dims[i];
    }
    uint32_t h = 2166136261u;
    for (int i = 0; i < n; i++)
        h = fnv_mix(h, (uint64_t)v[i], 8);
    return 1 + (int)(h & 0x3fffffffu);
}

/* Validate the configuration on every rank and agree: the lowest rank with
 * a bad value prints its one line (rank 0 when the environment is the same
 * everywhere) and every rank leaves with status 2 (DESIGN.md §5). The
 * agreement is a collective on MPI_COMM_WORLD, so the launch check comes
 * first (tds_preload.c): 0 when some rank is not under tdshim and this
 * one must step aside (TDSHIM_MIXED=native). Rank 0 first warns of
 * TDSHIM_* variables nobody reads (not fatal). */
static int configure_or_exit(void)
{
    int *tag_ub = NULL, flag = 0;
    char err[512] = "";
    /* a misspelt variable would silently leave its default: say so once,
     * before any bad value's line (the misspelling may explain it) */
    if (tds.rank == 0)
        tds_config_unknown(stderr);
    PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    int bad = tds_config_parse(&tds.cf, flag ? *tag_ub : 32767, err, sizeof err) != 0;
    if (!bad && tds.cf.callsites && tdr_sites_init(&tds.m, tds.cf.callsites) < 0) {
        snprintf(err, sizeof err,
                 "tdshim: %s='%d' is invalid: accepted values are 0 (this tdshim was built without libunwind)",
                 tds_env_docs[TDS_ENV_CALLSITES].name, tds.cf.callsites);
        bad = 1;
    }
    if (!tds_preload_check())
        return 0;
    int mine[2] = {bad ? tds.rank : tds.size, 0}, first[2];
    /* every rank must run the same algorithm: the header length and the
     * control protocol depend on it */
    int key = bad ? 0 : wire_key(&tds.cf), shape = bad ? 0 : shape_key(&tds.cf);
    int id[6] = {bad ? 0 : tds.cf.algo->id, bad ? 0 : -(int)tds.cf.algo->id, key, -key, shape, -shape}, ids[6];
    PMPI_Allreduce(mine, first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    PMPI_Allreduce(id, ids, 6, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (first[0] == tds.size && ids[0] != -ids[1]) {
        if (tds.rank == 0)
            fprintf(stderr, "tdshim: TDSHIM_ALGO differs between ranks: every rank must run the same algorithm\n");
        first[0] = -1;
    } else if (first[0] == tds.size && ids[2] != -ids[3]) {
        if (tds.rank == 0)
            fprintf(stderr, "tdshim: TDSHIM_PIGGYBACK, TDSHIM_IGNORE_TAGS, TDSHIM_IGNORE_EMPTY, TDSHIM_IGNORE_SHORT or TDSHIM_NOTIFY differ "
                            "between ranks: header-free messages (docs/internals.md, \"Header-free mode\") are classified by "
                            "the receiver, so every rank must set them alike\n");
        first[0] = -1;
    } else if (first[0] == tds.size && ids[4] != -ids[5]) {
        if (tds.rank == 0)
            fprintf(stderr, "tdshim: TDSHIM_TREE%s between ranks: the control protocol's %s must be the same on "
                            "every rank\n",
                    tds.cf.algo->flags & TD_ALGO_CREDIT      ? ", TDSHIM_CDA_INIT, _CON, _WCON or _BORROW differ"
                    : tds.cf.algo->flags & TD_ALGO_OVERLAY ? ", TDSHIM_XULAU_TOPO or TDSHIM_XULAU_DIMS differ"
                                                             : " differs",
                    tds.cf.algo->flags & TD_ALGO_CREDIT      ? "tree and credit"
                    : tds.cf.algo->flags & TD_ALGO_OVERLAY ? "tree and overlay"
                                                             : "spanning tree");
        first[0] = -1;
    } else if (first[0] < tds.size && tds.rank == first[0]) {
        fprintf(stderr, "%s\n", err);
    }
    if (first[0] != tds.size) {
        fflush(stderr);
        tds_preload_unpublish();
        PMPI_Finalize();
        exit(2);
    }
    return 1;
}

/* the hook of progress for the held work (tds.held_work, tds.nheld): the
 * core's request for the control channel, pairs and orphans */
static void tds_held_progress(void)
{
    tds_want_poll_run();
    if (tds.npairs)
        tds_pairs_progress();
    if (tds.orphans)
        tds_reap_orphans();
}

/* an eager limit v (bytes) for tds_eager_near, if it is one and there is room */
static void eager_add(unsigned long long v)
{
    for (int i = 0; i < tds.neager; i++)
        if (tds.eager_lim[i] == v) /* a synonym's, or another BTL's with the same limit */
            return;
    if (v >= 64 && v <= ((unsigned long long)1 << 30) &&
        tds.neager < (int)(sizeof tds.eager_lim / sizeof tds.eager_lim[0]))
        tds.eager_lim[tds.neager++] = (size_t)v;
}
/* UCX's rendezvous threshold, which no MPI publishes (Open MPI's pml ucx,
 * MPICH's ch4:ucx): set by the user, a message of fewer bytes goes eagerly
 * (UCX_RNDV_THRESH=6000: 5,999 bytes, measured under both, tests/mpi/eagerx.sh).
 * UCX's memory units: a number with an optional k, m or g and b, or auto
 * and inf (nothing to add); a list "name:value,..." gives each value.
 * Anything else is ignored, as UCX would refuse it. */
static void eager_env(const char *var)
{
    const char *s = getenv(var);
    while (s && *s) {
        const char *colon = strchr(s, ':'), *comma = strchr(s, ',');
        if (colon && (!comma || colon < comma))
            s = colon + 1;
        char *end;
        unsigned long long v = 0;
        if (*s >= '0' && *s <= '9') {
            errno = 0;
            v = strtoull(s, &end, 10);
            int shift = 0;
            switch (*end) {
            case 'k': case 'K': shift = 10; end++; break;
            case 'm': case 'M': shift = 20; end++; break;
            case 'g': case 'G': shift = 30; end++; break;
            default: break;
            }
            if (*end == 'b' || *end == 'B')
                end++;
            if (errno == 0 && (*end == 0 || *end == ',') && v <= ((unsigned long long)1 << 30) >> shift)
                eager_add(v << shift);
        }
        s = strchr(s, ',');
        if (s)
            s++;
    }
}

/* Open MPI's own variables (btl_<name>_eager_limit), read through its
 * MCA variable API, which ompi_info uses: libopen-pal's
 * mca_base_var_get_count and mca_base_var_dump, unchanged since Open MPI
 * 1.7, found by dlsym. MPI_T would give the same values, but Open MPI's
 * MPI_T_init_thread registers every component of every framework first
 * (opal_info_register_project_frameworks: each one dlopened), where
 * MPI_Init opened only those it selects. On Debian 12 that loads
 * libinfinipath (the psm and ofi MTLs) whose constructor sleeps: MPI_T
 * took 0.21 s of every rank's MPI_Init, 0.028 s natively, and a
 * StarPU-MPI run of 0.2 s took 0.6 s (tests/mpi/initcost.sh; the limit
 * read: tests/mpi/eagerx-mca.sh). The
 * variables registered by then are those of the components MPI_Init
 * opened: every BTL it may use. One line per variable,
 * "mca:btl:vader:param:btl_vader_eager_limit:value:4096"
 * (MCA_BASE_VAR_DUMP_PARSABLE, 1); a line of another shape is skipped.
 * 0 where the API is not there (MPI_T is read instead). */
static void eager_line(const char *line)
{
    const char *p = strstr(line, ":param:"), *v = strstr(line, ":value:");
    if (strncmp(line, "mca:", 4) != 0 || !p || !v || v < p)
        return;
    p += 7;
    size_t len = (size_t)(v - p);
    char name[128];
    if (len <= 12 || len >= sizeof name)
        return;
    memcpy(name, p, len);
    name[len] = 0;
    if (strchr(name, ':') || strcmp(name + len - 12, "_eager_limit") != 0 || strstr(name, "rndv"))
        return;
    v += 7;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (*v >= '0' && *v <= '9' && errno == 0 && *end == 0)
        eager_add(x);
}
static int eager_ompi(void)
{
    int (*count)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "mca_base_var_get_count");
    int (*dump)(int, char ***, int) = (int (*)(int, char ***, int))dlsym(RTLD_DEFAULT, "mca_base_var_dump");
    if (!count || !dump)
        return 0;
    int n = count();
    for (int i = 0; i < n; i++) {
        char **out = NULL;
        if (dump(i, &out, 1) != 0 || !out)
            continue;
        if (out[0])
            eager_line(out[0]);
        for (char **l = out; *l; l++)
            free(*l);
        free(out);
    }
    return 1;
}

/* The eager limits MPI publishes (Open MPI's btl_<name>_eager_limit, read
 * as above; MPICH's ..._EAGER_MAX_MSG_SIZE, MPI_T control variables), for
 * tds_eager_near beside the powers of two (tds_send.c, "eager sends"). Read
 * once here; a variable that cannot be read is skipped. Header-free: no
 * send changes size, none is near (eager_lo the largest size). */
static void eager_init(void)
{
    tds.eager_lo = SIZE_MAX;
    tds.detach_reap = 16;
    if (tds.nohdr)
        return;
    int prov, n = 0, vlen = 0;
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    if (PMPI_Get_library_version(version, &vlen) != MPI_SUCCESS)
        vlen = 0;
    version[vlen < MPI_MAX_LIBRARY_VERSION_STRING ? vlen : MPI_MAX_LIBRARY_VERSION_STRING - 1] = 0;
    int ch3 = strstr(version, "ch3") != NULL, ch4 = strstr(version, "ch4") != NULL;
    tds.eager_src = "MPI_T";
    if (strstr(version, "Open MPI") && eager_ompi()) {
        tds.eager_src = "Open MPI's MCA variables";
        goto done;
    }
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &prov) != MPI_SUCCESS)
        goto done;
    if (MPI_T_cvar_get_num(&n) != MPI_SUCCESS)
        n = 0;
    for (int i = 0; i < n; i++) {
        char name[256], desc[8];
        int nl = sizeof name, dl = sizeof desc, verb, bind, scope, count;
        MPI_Datatype dt;
        MPI_T_enum en;
        if (MPI_T_cvar_get_info(i, name, &nl, &verb, &dt, &en, desc, &dl, &bind, &scope) != MPI_SUCCESS ||
            bind != MPI_T_BIND_NO_OBJECT)
            continue;
        size_t len = strlen(name);
        int ompi = len > 12 && !strcmp(name + len - 12, "_eager_limit") && !strstr(name, "rndv");
        /* MPICH publishes both devices' variables: only the one in use */
        int mpich = strstr(name, "EAGER_MAX_MSG_SIZE") != NULL &&
                    (strstr(name, "_CH3_") ? ch3 : strstr(name, "_CH4_") ? ch4 : 1);
        if (!ompi && !mpich)
            continue;
        MPI_T_cvar_handle h;
        if (MPI_T_cvar_handle_alloc(i, NULL, &h, &count) != MPI_SUCCESS)
            continue;
        unsigned long long v = 0;
        union { int i; unsigned u; unsigned long ul; unsigned long long ull; long l; long long ll; } x;
        int ok = count == 1 && MPI_T_cvar_read(h, &x) == MPI_SUCCESS;
        if (!ok)
            ;
        else if (dt == MPI_INT)
            v = x.i > 0 ? (unsigned long long)x.i : 0;
        else if (dt == MPI_UNSIGNED)
            v = x.u;
        else if (dt == MPI_UNSIGNED_LONG)
            v = x.ul;
        else if (dt == MPI_UNSIGNED_LONG_LONG)
            v = x.ull;
        else if (dt == MPI_LONG)
            v = x.l > 0 ? (unsigned long long)x.l : 0;
        else if (dt == MPI_LONG_LONG)
            v = x.ll > 0 ? (unsigned long long)x.ll : 0;
        MPI_T_cvar_handle_free(&h);
        eager_add(v);
    }
    MPI_T_finalize();
done:
    tds.neager_mpit = tds.neager;
    eager_env("UCX_RNDV_THRESH");
    tds.eager_lo = tds_eager_floor() - 1;
}

/* MPI_Finalize, every rank there: the sends tds_send_eager returned early
 * complete once their receivers have them, which every receive the program
 * made has done by now; one whose message the program never received
 * (natively left in its receiver's queue) is left to MPI. */
static void eager_finish(void)
{
    double deadline = tdr_now() + 2.0;
    while (tds.ndetached && tdr_now() < deadline)
        tds_reap_orphans();
    if (tds.ndetached && tds.cf.verbose)
        fprintf(stderr, "tdshim: rank %d: %d sends returned early (primary.sent_early) never completed: "
                        "their messages were not received\n",
                tds.rank, tds.ndetached);
}

/* TDSHIM_NOTIFY=exit: the hook tds_poll_control ends the program by (tds.exit_now) */
static void exit_now(void);

/* Measure mode: may the baseline of the advice's "it worked" be read
 * when a rank spin judges passive finds a message (tds_progress.c
 * tds_spin_found), instead of every TDSHIM_SPIN_GAP / 2 of its polling? It
 * is exact less the time the rank was descheduled between its last empty
 * poll and the find, which is rare on a node with no more of this job's
 * ranks than online CPUs, and common on an oversubscribed one (4 ranks on
 * 2 cores: a message often arrives while its receiver waits for a core,
 * found at its first poll after): there the CPU clock is read as before.
 * The report gives the same count (node_census): on an oversubscribed node
 * the time in tdshim holds waits for a core (Open MPI yields it inside
 * tdshim's own calls into MPI), which the summary line says. */
static uint8_t spin_clock(void)
{
    return tds.m.node_ranks > 0 && tds.m.node_cpus > 0 && tds.m.node_ranks <= tds.m.node_cpus;
}

/* this job's ranks on this rank's node and its online CPUs (0: unknown),
 * for spin_clock and the report: a collective on the private
 * communicator, at MPI_Init where the clocks are synchronised anyway */
static void node_census(void)
{
    MPI_Comm node;
    int n = 0;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    tds.m.node_cpus = cpus > 0 && cpus < INT_MAX ? (int)cpus : 0;
    if (PMPI_Comm_split_type(tds.ctl, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS)
        return;
    if (PMPI_Comm_size(node, &n) == MPI_SUCCESS && n > 0)
        tds.m.node_ranks = n;
    PMPI_Comm_free(&node);
}

static void setup(int required, int provided)
{
    PMPI_Comm_rank(MPI_COMM_WORLD, &tds.rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &tds.size);
    tds.m.rank = tds.rank;
    tds.m.size = tds.size;
    tds.m.t_init = tdr_now();
    tds_pclock_calibrate();
    tds.m.thread_requested = required;
    tds.m.thread_provided = provided;
    if (!configure_or_exit()) { /* not every rank is under tdshim: every call passes through */
        tds_config_free(&tds.cf);
        return;
    }

    PMPI_Comm_dup(MPI_COMM_WORLD, &tds.ctl);
    PMPI_Comm_set_name(tds.ctl, "tdshim control");
    PMPI_Comm_dup(MPI_COMM_SELF, &tds.self);
    PMPI_Comm_set_errhandler(tds.self, MPI_ERRORS_RETURN);
    tds_comm_init();
    tds.cf.cfg.rank = tds.rank;
    tds.cf.cfg.size = tds.size;
    tds.cf.cfg.gate_on_notify = tds.cf.notify == TDS_NOTIFY_TAG; /* see td_engine.c */
    /* the work of the layers above progress, which it runs through these */
    tds.held_work = tds_held_progress;
    tds.reap_orphans = tds_reap_orphans;
    tds.exit_now = exit_now;
    td_io io = {.user = NULL, .send = tds_ctl_send, .announce = tds_announce, .want_poll = tds_want_poll_held};
    int rc = td_ctx_init(&tds.core, tds.cf.algo, &tds.cf.cfg, &io);
    if (rc != TD_OK)
        tds_fatal("cannot start algorithm %s: %s %s", tds.cf.algo->name, td_strerror(rc), tds.core.errmsg);
    td_stamp_base(&tds.core, TDS_HDR_MAGIC); /* the header byte of a primary: magic, stamp (td_engine.c) */
    /* header-free (DESIGN.md §4 "Header-free mode"): the algorithm
     * piggybacks nothing and cannot hold a send, so every flag of the
     * header can be derived from the envelope on the receiving side */
    tds.nohdr = want_nohdr(&tds.cf);
    tds.hdr_len = tds.nohdr ? 0 : TDS_HDR_FIXED + tds.cf.algo->pb_size;
    tds.nenv_tag = tds.nohdr && tds.cf.notify == TDS_NOTIFY_TAG ? tds.cf.notify_tag : -2;
    tds.fcomm = tds.fcomm_rx = MPI_COMM_WORLD; /* no copy of it seen yet (cmap_of) */
    tds.xcomm = tds.xcomm_rx = MPI_COMM_WORLD;
    tds.nh_slow = tds.cf.classify || tds.m.sites;
    tds.tc_type = MPI_BYTE; /* the type cache of tds_wire.h starts valid */
    tds.tc_size = 1;
    tds.tc_cmax = TDS_CELL_DATA;
    tds.tc_prev = MPI_BYTE; /* the one before: a valid type too */
    tds.tc_prev_size = 1;
    tds.tc_prev_cmax = TDS_CELL_DATA;
    /* The first timed call of the sampled fast paths (tds_tstart: one in
     * TDS_TSAMPLE, weighted by TDS_TSAMPLE) falls at a uniform place among
     * the first TDS_TSAMPLE, which keeps the estimate unbiased. It was the
     * first call, the coldest (first touches of tdshim's buffers and of
     * MPI's), and weighted by 1024 it made up most of a short run's time
     * in tdshim: work_steal --work-us 0 at 2 ranks (5 ms, 730 sends a
     * rank) reported 1.9-3.5 ms of send time on rank 0 in 5 runs of 5,
     * against 48-281 us with every call timed (TDSHIM_CALLSITES). */
    uint64_t z = (uint64_t)getpid() * 0x9E3779B97F4A7C15ull ^ (uint64_t)tds.rank << 32 ^ (uint64_t)(tdr_now() * 1e9);
    z ^= z >> 31;
    z *= 0xBF58476D1CE4E5B9ull;
    z ^= z >> 29;
    tds.tleft = tds.m.sites ? 1 : 1 + (unsigned)(z % TDS_TSAMPLE); /* with call sites every call is timed */
    tds.copy_max = tds.cf.piggyback == TDS_PB_COPY       ? TDS_WIRE_MAX
                   : tds.cf.piggyback == TDS_PB_DATATYPE ? 0
                                                         : TDS_COPY_MAX_DEFAULT;
    /* send_fast (tds_send.h) serves copy-layout messages when nothing else
     * is asked of a send: no ignored tags to look up, no call sites */
    tds.fast_lim = tds.cf.nignore || tds.m.sites || tds.nohdr ? 0 : tds.copy_max + 1;
    /* sends near an eager limit take the general path (tds_send_eager) */
    eager_init();
    if (tds.fast_lim > tds.eager_lo + 1)
        tds.fast_lim = tds.eager_lo + 1;
#ifndef OPEN_MPI
    if (tds.cf.piggyback == TDS_PB_DATATYPE && tds.rank == 0)
        fprintf(stderr, "tdshim: TDSHIM_PIGGYBACK=datatype outside Open MPI: sends take the struct datatype, "
                        "receives are packed (MPICH 4.0 cannot receive some messages into the struct datatype; "
                        "docs/internals.md, \"MPICH\")\n");
    /* outside Open MPI no byte message above TDS_COPY_MAX_DEFAULT: it may
     * meet a struct receive it does not fit (send_copies, tds_wire.h) */
    if (tds.fast_lim > TDS_COPY_MAX_DEFAULT + 1)
        tds.fast_lim = TDS_COPY_MAX_DEFAULT + 1;
#endif
    /* TDSHIM_IGNORE_EMPTY, TDSHIM_IGNORE_SHORT: sends of up to that many
     * bytes take the general path (tds_not_primary) */
    tds.fast_min = !tds.fast_lim ? 0 : tds.cf.nshort ? (size_t)tds.cf.short_max + 1 : tds.cf.ignore_empty ? 1 : 0;
    if (tds.fast_min >= tds.fast_lim)
        tds.fast_lim = 0; /* every send general; fast_min keeps the flat receives off */
    else
        tds.fast_lim -= tds.fast_min;
    /* 'none' counts only: it never announces, so finalize must not wait */
    tds.detects = strcmp(tds.cf.algo->name, "none") != 0;
    tds.sent_to = calloc((size_t)tds.size, sizeof *tds.sent_to);
    tds.ctl_sent_to = calloc((size_t)tds.size, sizeof *tds.ctl_sent_to);
    if (!tds.sent_to || !tds.ctl_sent_to)
        tds_fatal("out of memory");
    tds.found_tag = -1;
    node_census();
    if (tds.cf.notify == TDS_NOTIFY_NONE)
        tds.spin_find = spin_clock();
    tds.m.init_pid = (long)getpid(); /* the rank; a forked child is not (on_kill, MPI_Finalize) */
    /* one time base for every rank's detection times (report) */
    if (tdr_clock_sync(&tds.m, tds.ctl) != 0 && tds.cf.verbose)
        fprintf(stderr, "tdshim: rank %d: clock synchronisation failed; times are local\n", tds.rank);
    if (tds.cf.want_text || tds.cf.want_json) {
        tdr_run_id(&tds.m, tds.ctl);
        catch_kill();
    }
    tds.t_progress = tds.m.t_init;
    if (provided == MPI_THREAD_MULTIPLE)
        tds_mt_init();
    tds.on = 1;
    /* a PMPI tool preloaded after tdshim: every MPI_* call goes to it first
     * (the slow path), and tdshim does its work when that tool calls PMPI_* */
    tds.fast = !tds_mt && !tds_stacked;
    tds_fast_select();
    if (tds.cf.verbose && tds.rank == 0)
        fprintf(stderr, "tdshim %s: algorithm %s, %d ranks, header %d bytes%s\n", PACKAGE_VERSION,
                tds.cf.algo->name, tds.size, tds.hdr_len, tds.nohdr ? " (header-free)" : "");
    if (tds.cf.verbose && tds.rank == 0 && !tds.nohdr) {
        char lims[2][128] = {"", ""};
        size_t at[2] = {0, 0};
        for (int i = 0; i < tds.neager; i++) {
            int k = i >= tds.neager_mpit;
            if (at[k] < sizeof lims[k])
                at[k] += (size_t)snprintf(lims[k] + at[k], sizeof lims[k] - at[k], " %zu", tds.eager_lim[i]);
        }
        fprintf(stderr, "tdshim: standard sends of more than %zu bytes near an eager limit return early (%s:%s%s; "
                        "UCX_RNDV_THRESH:%s%s; powers of two to 16 KiB)\n",
                tds.eager_lo, tds.eager_src, at[0] ? "" : " none", lims[0], at[1] ? "" : " none", lims[1]);
    }
    if (tds.cf.verbose && tds.rank == 0 && tds_stacked)
        fprintf(stderr, "tdshim: a PMPI tool is preloaded after tdshim (%s): its MPI_* wrappers see every call first, "
                "tdshim observes them at its PMPI_* entry points\n", tds_stacked_lib);
}

int tds_body_Init(int *argc, char ***argv)
{
    tds_pclock_anchor();
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) {
        int provided = MPI_THREAD_SINGLE;
        PMPI_Query_thread(&provided);
        setup(MPI_THREAD_SINGLE, provided);
    }
    return rc;
}

/* The program gets the thread level MPI grants: under
 * MPI_THREAD_MULTIPLE the wrappers serialize on one lock (tds_mt.c) */
int tds_body_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    tds_pclock_anchor();
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        setup(required, *provided);
    return rc;
}

/* ---------------------------------------------------------------- finalize */

/* wait for a request on the private communicator, keeping the protocol
 * going (other ranks may still need this rank's answers) */
static void wait_progressing(MPI_Request *r, double deadline)
{
    tds_wait w = tds_wait_begin(0);
    for (;;) {
        int done = 0;
        PMPI_Test(r, &done, MPI_STATUS_IGNORE);
        if (done || (deadline > 0 && tdr_now() > deadline))
            return;
        tds_wait_step(&w);
    }
}

/* Primaries still queued at this rank at MPI_Finalize (sent to it, never
 * received): found by probing MPI_COMM_WORLD once every rank is in
 * MPI_Finalize, received (discarded) to reach the next one, and counted
 * per tag for the report. Notifications the program did not consume and
 * messages on ignored tags are not primaries; messages on other
 * communicators, or matched by a receive the program never completed, are
 * only in the count (tdr_rank.unreceived). */
static void unreceived_tags(void)
{
    for (int k = 0; k < 1000000; k++) {
        int flag = 0, n = 0;
        MPI_Status st;
        PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        if (!flag)
            return;
        PMPI_Get_count(&st, MPI_BYTE, &n);
        uint8_t *b = tds_scratch((size_t)(n > 0 ? n : 1));
        PMPI_Recv(b, n, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int kind = tds.nohdr ? tds_env_kind(st.MPI_SOURCE, st.MPI_TAG, n < 0 ? 0 : (size_t)n, MPI_COMM_WORLD)
                             : tds_hdr_kind(b, (size_t)n, (size_t)tds.hdr_len);
        if (n < 0 || kind != TDS_HK_PRIMARY)
            continue;
        tdr_unreceived_add(&tds.m, st.MPI_TAG, (uint64_t)(n - tds.hdr_len));
    }
}

/* DESIGN.md §1 "Finalize": passive for good; finish the current episode
 * (bounded by TDSHIM_FINALIZE_TIMEOUT once every rank is here), count the
 * primaries sent to this rank that it never received, write the reports. */
/* Control messages still in flight to this rank at MPI_Finalize (sent
 * after its last turn of the protocol, which no one needs any more) are
 * received and dropped, so that none is left unmatched: MPICH over UCX
 * prints a warning on the program's stdout for each one. Every rank has
 * stopped sending them (the reduction that counted them is behind every
 * rank), so "to_me" is final; a deadline keeps a miscount from hanging. */
static void drain_control(uint64_t to_me)
{
    double deadline = tdr_now() + 2.0;
    while (tds.ctl_seen < to_me && tdr_now() < deadline) {
        uint8_t wire[TD_WIRE_SIZE];
        int src;
        if (tds_ctl_take(wire, &src))
            tds.ctl_seen++; /* dropped unread: not in the report's received counts */
    }
}

static void finish(void)
{
    tds.m.t_end = tdr_now();
    tds_enter(TDR_CAT_FINALIZE);
    if (tds.orphans)
        tds_reap_orphans(); /* receives the program freed may have completed */
    /* entering MPI_Finalize is an active rank's last busy->idle transition:
     * an episode closed here has a LastPassive and a Latency (report) */
    if (tds.core.active)
        tds.m.t_last_passive = tdr_now();
    td_finalize(&tds.core);
    tds_check_core();
    if (tds.detects) {
        /* 1: every rank reaches finalize (ranks still running need our
         * answers meanwhile); the all-reduce of the primary counts is that
         * barrier. Once every rank is here nothing can be sent any more:
         * the counts are final. */
        uint64_t mine[2] = {tds.m.prim_sent, tds.m.prim_recv}, all[2] = {0, 0};
        MPI_Request all_here;
        PMPI_Iallreduce(mine, all, 2, MPI_UINT64_T, MPI_SUM, tds.ctl, &all_here);
        tds_enter(TDR_CAT_WAIT); /* a control message served meanwhile is timed as such */
        wait_progressing(&all_here, 0);
        tds_leave();
        /* 2: with every primary received, the job is quiescent and the
         * algorithm proves it within its bound: the episode ends with an
         * announcement, or was already announced with no activity since
         * (dirty is only cleared by an announcement). With primaries left
         * unreceived it can never be proven (they stay in transit): the
         * episode closes at once, and the report lists them. */
        if (all[0] == all[1]) {
            double deadline = tdr_now() + tds.cf.finalize_timeout;
            tds_wait w = tds_wait_begin(0);
            while (tds.core.dirty && tdr_now() < deadline)
                tds_wait_step(&w);
            if (tds.core.dirty && tds.rank == 0)
                fprintf(stderr, "tdshim: termination not proven within TDSHIM_FINALIZE_TIMEOUT=%gs at MPI_Finalize "
                                "although every primary message was received (see the report)\n",
                        tds.cf.finalize_timeout);
        }
        /* 3: every rank learns every announcement made: a TERM still in
         * flight when its rank finished step 2 is awaited here, so an
         * episode is in every rank's report or in none (the barrier that
         * closes finalize carries the greatest episode learned) */
        uint32_t ep = td_episode(&tds.core), maxep = 0;
        MPI_Request all_done;
        PMPI_Iallreduce(&ep, &maxep, 1, MPI_UINT32_T, MPI_MAX, tds.ctl, &all_done);
        wait_progressing(&all_done, 0);
        double deadline = tdr_now() + 2.0;
        tds_wait w = tds_wait_begin(0);
        while (td_episode(&tds.core) < maxep && !tds.core.error && tdr_now() < deadline)
            tds_wait_step(&w);
    }
    unreceived_tags();
    /* what every rank sent to this one: primary messages (those never
     * received are reported) and control messages */
    uint64_t *sent = malloc(2 * (size_t)tds.size * sizeof *sent), to_me[2] = {0, 0};
    if (!sent)
        tds_fatal("out of memory at MPI_Finalize");
    for (int i = 0; i < tds.size; i++) {
        sent[2 * i] = tds.sent_to[i];
        sent[2 * i + 1] = tds.ctl_sent_to[i];
    }
    PMPI_Reduce_scatter_block(sent, to_me, 2, MPI_UINT64_T, MPI_SUM, tds.ctl);
    free(sent);
    if (tds.ndetached)
        eager_finish();
    drain_control(to_me[1]);
    tds.m.unreceived = to_me[0] > tds.m.prim_recv ? to_me[0] - tds.m.prim_recv : 0;
    if (tds.m.unreceived && tds.cf.verbose)
        fprintf(stderr, "tdshim: rank %d: %llu primary messages sent to this rank were never received\n", tds.rank,
                (unsigned long long)tds.m.unreceived);
    for (int i = 0; i < tds.nslots; i++) {
        if (tds.slots[i]->req != MPI_REQUEST_NULL) {
            int done = 0;
            PMPI_Test(&tds.slots[i]->req, &done, MPI_STATUS_IGNORE);
            if (!done)
                PMPI_Request_free(&tds.slots[i]->req);
        }
        free(tds.slots[i]);
    }
    free(tds.slots);
    tds.slots = NULL;
    tds.nslots = 0;
    tds.ctl_busy = 0;
    tds_leave();
    tds.on = tds.fast = 0; /* the report writer's MPI calls must not be counted */
    tds_fast_select();
    tds_sent_bytes_fold();
    /* every primary carries exactly one header: derived here, not summed
     * on the fast paths */
    tds.m.pb_bytes_sent = tds.m.prim_sent * (uint64_t)tds.hdr_len;
    tds.m.pb_bytes_recv = tds.m.prim_recv * (uint64_t)tds.hdr_len;
    if (tds.cf.want_text || tds.cf.want_json) {
        tdr_meta meta = report_meta();
        tdr_write_reports(&tds.m, &tds.core, &meta, tds.ctl);
    }
    tdr_rank_free(&tds.m);
    tds_ctl_cancel(); /* the standing control receive: nothing more can come */
    PMPI_Comm_free(&tds.ctl);
    PMPI_Comm_free(&tds.self);
    PMPI_Comm_free_keyval(&tds.comm_keyval);
    td_ctx_fini(&tds.core);
    tds_config_free(&tds.cf);
}

int tds_body_Finalize(void)
{
    /* a forked child of the rank (it has the rank's memory) is not the rank: no report */
    if (tds.on && (long)getpid() == tds.m.init_pid) {
        tds_inside = 1;
        tds_lock();
        finish();
        tds_unlock();
        tds_inside = 0;
    }
    tds_preload_unpublish();
    return PMPI_Finalize();
}

/* TDSHIM_NOTIFY=exit[:code]: the one place the library ends the program
 * (from tds_poll_control: inside a call, holding the lock) */
static void exit_now(void)
{
    tds.pending_exit = 0;
    tds_inside = 1;
    /* the program's blocking receive in progress (MPICH over UCX warns on
     * stdout of a receive left pending at MPI_Finalize) */
    if (tds_t.brq_wait && *tds_t.brq_wait != MPI_REQUEST_NULL) {
        PMPI_Cancel(tds_t.brq_wait);
        PMPI_Wait(tds_t.brq_wait, MPI_STATUS_IGNORE);
    }
    if (tds.on)
        finish();
    tds_unlock();
    tds_preload_unpublish();
    PMPI_Finalize();
    exit(tds.cf.exit_code);
}

