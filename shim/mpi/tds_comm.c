/*
 * Communicators (tds_comm.h): the world ranks of the program's
 * communicators, their cached maps (kept as an attribute, freed with the
 * communicator), other jobs' communicators, and the ignored tags.
 */
#include "tds_comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* Attribute callback: the communicator is freed, drop its map (and the
 * one-entry cache, whose handle may be reused by a new communicator). A
 * receive still pending on it keeps the map (MPI lets a program free a
 * communicator with operations pending): the last tds_cmap_put frees it. */
static int map_delete(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    int *map = attr;
    if (tds.last_map == map) {
        tds.last_comm = MPI_COMM_NULL;
        tds.last_map = NULL;
    }
    if (comm == tds_probed_get(comm)) /* the same: a probed message on it is no message on the next one */
        tds_probed_set(comm, (MPI_Comm)0);
    if (comm == tds.fcomm) /* its handle may be reused by a communicator of another group */
        tds.fcomm = tds.fcomm_rx = MPI_COMM_WORLD;
    if (comm == tds.xcomm) { /* the same; and xmap is about to be freed */
        tds.xcomm = tds.xcomm_rx = MPI_COMM_WORLD;
        tds.xmap = NULL;
        tds.xn = 0;
    }
    if (map[TDS_MAP_REFS])
        map[TDS_MAP_DEAD] = 1;
    else
        free(map);
    return MPI_SUCCESS;
}

static int *cmap_of(MPI_Comm comm);

int *tds_cmap_get(MPI_Comm comm)
{
    int *map = cmap_of(comm);
    map[TDS_MAP_REFS]++;
    return map;
}

void tds_cmap_put(int *map)
{
    if (--map[TDS_MAP_REFS] == 0 && map[TDS_MAP_DEAD])
        free(map);
}

/* does group g hold a process outside MPI_COMM_WORLD (another job's)?
 * ranks: g's world ranks (MPI_UNDEFINED for such a process), or NULL */
static int group_foreign(MPI_Group g, MPI_Group world, int *ranks)
{
    int n, foreign = 0;
    PMPI_Group_size(g, &n);
    int *idx = malloc((size_t)n * sizeof *idx), *w = ranks ? ranks : malloc((size_t)n * sizeof *w);
    if (!idx || !w)
        tds_fatal("out of memory caching a communicator's ranks");
    for (int i = 0; i < n; i++)
        idx[i] = i;
    PMPI_Group_translate_ranks(g, n, idx, world, w);
    for (int i = 0; i < n; i++)
        foreign |= w[i] == MPI_UNDEFINED;
    free(idx);
    if (w != ranks)
        free(w);
    return foreign;
}

/* The map of a communicator, cached as its attribute: the world ranks of
 * its group (the remote group of an intercommunicator, where sources and
 * destinations live), and whether it holds a process of another job
 * (spawned, connected, joined) in either group. Such a communicator is
 * foreign (README "Other jobs"): its messages travel as the program wrote
 * them, uncounted, and its map holds MPI_UNDEFINED for every rank, so no
 * rank of it ever reaches an algorithm or a per-rank array. Both ends of
 * such a message see the same membership, so they decide alike. */
static int *cmap_of(MPI_Comm comm)
{
    if (comm == tds.last_comm)
        return tds.last_map;
    int *map, found = 0;
    PMPI_Comm_get_attr(comm, tds.comm_keyval, &map, &found);
    if (!found) {
        int inter = 0, n;
        MPI_Group g, world;
        PMPI_Comm_test_inter(comm, &inter);
        if (inter)
            PMPI_Comm_remote_group(comm, &g);
        else
            PMPI_Comm_group(comm, &g);
        PMPI_Group_size(g, &n);
        /* references from pending receives, freed flag, foreign, n, then the world ranks */
        map = malloc((size_t)(n + TDS_MAP_RANKS) * sizeof *map);
        if (!map)
            tds_fatal("out of memory caching a communicator's ranks");
        PMPI_Comm_group(MPI_COMM_WORLD, &world);
        int foreign = group_foreign(g, world, map + TDS_MAP_RANKS);
        if (inter && !foreign) { /* the local group too: a merged one may hold another job's processes */
            MPI_Group lg;
            PMPI_Comm_group(comm, &lg);
            foreign = group_foreign(lg, world, NULL);
            PMPI_Group_free(&lg);
        }
        for (int i = 0; foreign && i < n; i++)
            map[TDS_MAP_RANKS + i] = MPI_UNDEFINED;
        /* MPI_COMM_WORLD's group in its order, an intracommunicator: a copy
         * of it (1); another intracommunicator of this job's processes (2) */
        int world_copy = !inter && !foreign && n == tds.size;
        for (int i = 0; world_copy && i < n; i++)
            world_copy = map[TDS_MAP_RANKS + i] == i;
        if (!world_copy && !inter && !foreign)
            world_copy = 2;
        map[TDS_MAP_REFS] = map[TDS_MAP_DEAD] = 0;
        map[TDS_MAP_FOREIGN] = foreign;
        map[TDS_MAP_WORLD] = world_copy;
        map[TDS_MAP_N] = n;
        PMPI_Group_free(&g);
        PMPI_Group_free(&world);
        PMPI_Comm_set_attr(comm, tds.comm_keyval, map);
    }
    tds.last_comm = comm;
    tds.last_map = map;
    if (map[TDS_MAP_WORLD] == 1) { /* its messages may take the flat entries from now on */
        tds.fcomm = comm;
        tds.fcomm_rx = tds.nenv_tag < 0 ? comm : MPI_COMM_WORLD;
    } else if (map[TDS_MAP_WORLD] == 2) { /* the same, its ranks translated */
        tds.xcomm = comm;
        tds.xmap = map + TDS_MAP_RANKS;
        tds.xn = (unsigned)map[TDS_MAP_N];
        /* receives: only for a core that ignores their sources (flat
         * receives give on_recv the source as MPI_COMM_WORLD's rank) */
        if (tds.nenv_tag < 0 && td_recv_many_ok(&tds.core)) {
            tds.xcomm_rx = comm;
            tds.x_seen = 1;
        }
    }
    return map;
}

/* world rank of `rank` in comm, total: MPI_UNDEFINED (negative) for a rank
 * outside the communicator (MPI's error to report) and for every rank of a
 * foreign communicator */
int tds_world_rank(MPI_Comm comm, int rank)
{
    if (comm == MPI_COMM_WORLD)
        return rank;
    int *map = cmap_of(comm);
    return (unsigned)rank < (unsigned)map[TDS_MAP_N] ? map[TDS_MAP_RANKS + rank] : MPI_UNDEFINED;
}

int tds_comm_foreign_slow(MPI_Comm comm)
{
    return cmap_of(comm)[TDS_MAP_FOREIGN];
}

/* "rank R of MPI_COMM_WORLD", or "rank r of communicator NAME (world rank
 * W)", for warnings: the program knows its communicators by name if it
 * named them (MPI_Comm_set_name), else by their rank within them */
void tds_describe_rank(char *buf, size_t len, MPI_Comm comm, int rank)
{
    if (comm == MPI_COMM_WORLD || comm == MPI_COMM_NULL) {
        /* MPI_COMM_NULL: the receive's communicator is freed by now, or a
         * flat receive's, which is not recorded (tds.x_seen) */
        snprintf(buf, len, "rank %d of %s", rank,
                 comm == MPI_COMM_NULL ? "the receive's communicator" : "MPI_COMM_WORLD");
        return;
    }
    char name[MPI_MAX_OBJECT_NAME] = "";
    int nl = 0, w = tds_world_rank(comm, rank);
    PMPI_Comm_get_name(comm, name, &nl);
    if (w >= 0)
        snprintf(buf, len, "rank %d of communicator %s%s%s (world rank %d)", rank, nl ? "'" : "",
                 nl ? name : "(unnamed)", nl ? "'" : "", w);
    else
        snprintf(buf, len, "rank %d of communicator %s%s%s (%s)", rank, nl ? "'" : "", nl ? name : "(unnamed)",
                 nl ? "'" : "", tds_comm_foreign(comm) ? "another job" : "no such rank");
}

int tds_short_ignored(int tag, size_t bytes)
{
    for (int i = 0; i < tds.cf.nshort; i++) {
        if (tag < tds.cf.shorts[i].lo)
            return 0;
        if (tag == tds.cf.shorts[i].lo)
            return bytes <= (size_t)tds.cf.shorts[i].hi;
    }
    return 0;
}


/* at init: the attribute that frees a communicator's map with it */
void tds_comm_init(void)
{
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, map_delete, &tds.comm_keyval, NULL);
}
