/*
 * The launch check (DESIGN.md §7 "Do no harm": a job where only some
 * ranks are preloaded ends in bounded time). A rank not under tdshim runs
 * none of its code, so tdshim cannot ask it anything over MPI: every
 * message or collective on MPI_COMM_WORLD may be matched by that rank's
 * program (a receive with MPI_ANY_TAG, a collective of its own), and
 * MPI_Comm_dup is itself a collective it never joins (MPI_Init hung there
 * before this check). The check therefore speaks only to the MPI name
 * service (MPI_Publish_name / MPI_Lookup_name: local calls answered by the
 * launcher, mpirun's data server under Open MPI, mpiexec's under hydra),
 * which the program's ranks cannot see unless they look for tdshim's names:
 *
 *  - every rank under tdshim publishes "<prefix>r<rank>";
 *  - rank 0 looks the others up until TDSHIM_MIXED_TIMEOUT (T) has passed
 *    since it published, then publishes the verdict "<prefix>v": "ok" if it
 *    found every rank, else "mixed";
 *  - every other rank waits up to 2T for the verdict. Without one, rank 0
 *    published nothing yet: the rank withdraws its own name, then looks for
 *    rank 0's once more. Found: rank 0 is under tdshim and will give a
 *    verdict, so the rank publishes again and waits for it. Not found:
 *    rank 0 is not under tdshim (or has not reached its check), and as it
 *    publishes its name before it looks anyone up, it cannot find this
 *    rank's any more: its verdict, if it ever gives one, is "mixed" too.
 * So the ranks under tdshim all reach the same verdict (the name server
 * serialises the calls). "ok" is the only one on which tdshim starts;
 * "mixed" stops the job with one line naming the ranks not under tdshim
 * (TDSHIM_MIXED=stop), or lets every call through unchanged, with one
 * warning (TDSHIM_MIXED=native): a rank without tdshim sends without
 * headers, so a rank with it must not expect them.
 *
 * Costs at MPI_Init: one publish and about one look-up per rank (rank 0:
 * one per rank), a few milliseconds; T only when a rank is missing. Where
 * the launcher has no name service (the publish fails), the check cannot
 * be made and tdshim starts as before (TDSHIM_VERBOSE says so).
 */
#include "config.h"
#include "tds_preload.h"
#include "tds_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* one poll period of the name service: a look-up is a round trip to the
 * launcher, and P ranks polling it without a pause would slow rank 0's */
static void pause_ms(void)
{
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
}

static void name_of(char *name, size_t len, int rank)
{
    if (rank < 0)
        snprintf(name, len, "%sv", tds.pl_prefix);
    else
        snprintf(name, len, "%sr%d", tds.pl_prefix, rank);
}

/* rank -1: the verdict */
static int publish(int rank, const char *value)
{
    char name[160];
    name_of(name, sizeof name, rank);
    return PMPI_Publish_name(name, MPI_INFO_NULL, value) == MPI_SUCCESS;
}

static void unpublish(int rank, const char *value)
{
    char name[160];
    name_of(name, sizeof name, rank);
    PMPI_Unpublish_name(name, MPI_INFO_NULL, value);
}

static int lookup(int rank, char *value)
{
    char name[160];
    name_of(name, sizeof name, rank);
    return PMPI_Lookup_name(name, MPI_INFO_NULL, value) == MPI_SUCCESS;
}

/* poll for a name until the deadline (0: one look-up) */
static int lookup_until(int rank, char *value, double deadline)
{
    for (;;) {
        if (lookup(rank, value))
            return 1;
        if (tdr_now() >= deadline)
            return 0;
        pause_ms();
    }
}

/* "1, 3-5, 9" of the ranks with miss[r] set, cut to the buffer */
static void rank_list(const uint8_t *miss, char *out, size_t len)
{
    size_t n = 0;
    out[0] = '\0';
    for (int r = 0; r < tds.size && n + 32 < len; r++) {
        if (!miss[r])
            continue;
        int e = r;
        while (e + 1 < tds.size && miss[e + 1])
            e++;
        n += (size_t)snprintf(out + n, len - n, e > r ? "%s%d-%d" : "%s%d", n ? ", " : "", r, e);
        r = e;
    }
    if (n + 32 >= len)
        snprintf(out + n, len - n, ", ...");
}

/* The one line of a mixed job, from one rank: rank 0 when it is under
 * tdshim, else the lowest rank under tdshim that a look-up pass found. */
static void tell_mixed(const uint8_t *miss, int nmiss)
{
    char list[300];
    rank_list(miss, list, sizeof list);
    fprintf(stderr,
            "tdshim: rank%s %s of %d %s not under tdshim (LD_PRELOAD missing: an MPMD launch, or a wrapper that "
            "drops it): %s\n",
            nmiss > 1 ? "s" : "", list, tds.size, nmiss > 1 ? "are" : "is",
            tds.cf.mixed_native ? "tdshim steps aside and the job runs natively (TDSHIM_MIXED=native)"
                                : "stopping the job (TDSHIM_MIXED=stop; TDSHIM_MIXED=native runs it natively)");
    fflush(stderr);
}

/* one look-up of every other rank: who is not under tdshim; 1 if this
 * rank is the lowest one that is */
static int survey(uint8_t *miss, int *nmiss)
{
    char v[MPI_MAX_PORT_NAME];
    int lowest = 1;
    *nmiss = 0;
    for (int r = 0; r < tds.size; r++) {
        miss[r] = r != tds.rank && !lookup(r, v);
        *nmiss += miss[r];
        if (r < tds.rank && !miss[r])
            lowest = 0;
    }
    return lowest;
}

/* rank 0: every other rank's name, until T after its own was published */
static int decide(uint8_t *miss, int *nmiss, double t0)
{
    char v[MPI_MAX_PORT_NAME];
    *nmiss = 0;
    for (int r = 1; r < tds.size; r++) {
        miss[r] = !lookup_until(r, v, t0 + tds.cf.mixed_timeout);
        *nmiss += miss[r];
    }
    /* withdrawn at MPI_Finalize if "ok" (every rank has read it by then:
     * MPI_Init's agreement follows); "mixed" stays with the launcher, where
     * a late rank may still look for it */
    tds.pl_verdict = publish(-1, *nmiss ? "mixed" : "ok") && !*nmiss;
    return *nmiss == 0;
}

/* the other ranks: rank 0's verdict (see the top of the file) */
static int await_verdict(uint8_t *miss, int *nmiss, int *tell, double t0)
{
    char v[MPI_MAX_PORT_NAME];
    if (!lookup_until(-1, v, t0 + 2 * tds.cf.mixed_timeout)) {
        *tell = survey(miss, nmiss);
        unpublish(tds.rank, "1");
        tds.pl_mine = 0;
        if (!lookup(0, v))
            return 0; /* rank 0 will not find this rank: no "ok" can come */
        tds.pl_mine = publish(tds.rank, "1");
        /* rank 0 is under tdshim: its verdict comes within T of its own
         * start; the bound is for a rank 0 that died meanwhile */
        if (!lookup_until(-1, v, tdr_now() + 10 * tds.cf.mixed_timeout + 10))
            tds_fatal("rank 0 is under tdshim but gave no verdict on the launch within %g s",
                      10 * tds.cf.mixed_timeout + 10);
    }
    *tell = 0;
    return strcmp(v, "ok") == 0;
}

int tds_preload_check(void)
{
    if (tds.size == 1 || tds.cf.mixed_timeout <= 0)
        return 1;
    /* names unique to the job where a name server outlives it (ompi-server;
     * Open MPI's namespace, the same on every rank) */
    const char *ns = getenv("PMIX_NAMESPACE");
    snprintf(tds.pl_prefix, sizeof tds.pl_prefix, "tdshim.%.40s.%d.", ns ? ns : "", tds.size);
    /* a name not found is an error of the call, not of the program: the
     * handlers of MPI_COMM_WORLD and MPI_COMM_SELF (which MPI-3 and MPI-4
     * name for calls without a handle) return it for the check's time */
    MPI_Errhandler eh_world, eh_self;
    PMPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh_world);
    PMPI_Comm_get_errhandler(MPI_COMM_SELF, &eh_self);
    PMPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    PMPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    uint8_t *miss = calloc((size_t)tds.size, 1);
    if (!miss)
        tds_fatal("out of memory");
    int ok = 1, nmiss = 0, tell = 0;
    double t0 = tdr_now();
    tds.pl_mine = publish(tds.rank, "1");
    if (!tds.pl_mine) {
        if (tds.cf.verbose && tds.rank == 0)
            fprintf(stderr, "tdshim: no MPI name service (MPI_Publish_name failed): cannot check that every rank "
                            "is under tdshim\n");
    } else if (tds.rank == 0) {
        ok = decide(miss, &nmiss, t0);
        tell = !ok;
    } else {
        ok = await_verdict(miss, &nmiss, &tell, t0);
    }
    PMPI_Comm_set_errhandler(MPI_COMM_WORLD, eh_world);
    PMPI_Comm_set_errhandler(MPI_COMM_SELF, eh_self);
    PMPI_Errhandler_free(&eh_world);
    PMPI_Errhandler_free(&eh_self);
    if (tell)
        tell_mixed(miss, nmiss);
    free(miss);
    if (ok)
        return 1;
    if (tds.cf.mixed_native)
        return 0;
    /* stop: the rank that told ends the job; the others give it time to
     * (so its line is the one seen), then end it themselves. The teller
     * waits too, briefly: an abort can tear the launcher's output
     * forwarding down before it has read the line from the pipe (Hydra
     * lost it in 1 run of 4 without this pause) */
    double until = tdr_now() + (tell ? 0.5 : 5.0);
    while (tdr_now() < until)
        pause_ms();
    PMPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

void tds_preload_unpublish(void)
{
    if (!tds.pl_mine && !tds.pl_verdict)
        return;
    MPI_Errhandler eh;
    PMPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    PMPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (tds.pl_mine)
        unpublish(tds.rank, "1");
    if (tds.pl_verdict)
        unpublish(-1, "ok");
    tds.pl_mine = tds.pl_verdict = 0;
    PMPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
    PMPI_Errhandler_free(&eh);
}
