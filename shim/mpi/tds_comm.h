/*
 * Communicators (tds_comm.c): world ranks, the cached maps of the program's
 * communicators, other jobs' communicators, the flat entries' ones.
 */
#ifndef TDS_COMM_H
#define TDS_COMM_H

#include "tds_state.h"

/* comm (remote group for intercomms) -> world; total: MPI_UNDEFINED (< 0)
 * for a rank outside comm and for every rank of a foreign communicator */
int tds_world_rank(MPI_Comm comm, int rank);
/* the cached map of a communicator: ints [refs, freed, foreign, n, world ranks...] */
enum { TDS_MAP_REFS = 0, TDS_MAP_DEAD, TDS_MAP_FOREIGN, TDS_MAP_WORLD, TDS_MAP_N, TDS_MAP_RANKS };
/* the flat entries' communicators (tds_flat.c): MPI_COMM_WORLD, or a copy of it (tds.fcomm); sends on
 * tds.xcomm take flat entries of their own (the destination translated), receives the same ones (a flat
 * receive's source is never looked up: tds_fast_select's cores ignore it) */
static inline int tds_flat_comm(MPI_Comm comm) { return comm == MPI_COMM_WORLD || comm == tds.fcomm; }
static inline int tds_flat_comm_rx(MPI_Comm comm)
{
    return comm == MPI_COMM_WORLD || comm == tds.fcomm_rx || comm == tds.xcomm_rx;
}
/* the communicator a flat receive's entry (tds_cell_slow, tds_hs_promote)
 * names: MPI_COMM_WORLD while no flat receive can have been on xcomm, else
 * none (MPI_COMM_NULL: a source is then named as "of the receive's
 * communicator" in a warning, and never translated) */
static inline MPI_Comm tds_flat_rx_comm(void)
{
    return tds.x_seen ? MPI_COMM_NULL : MPI_COMM_WORLD;
}
/* Other jobs (README "Other jobs"): a communicator holding a process
 * outside MPI_COMM_WORLD (spawned, connected, joined, or built from such a
 * communicator) is foreign. Its messages are not primary: they travel as
 * the program wrote them (no header, nothing held), on both ends, which
 * both see the same membership; they are counted apart (report
 * primary.other_jobs), and a receive of one is activity. */
int tds_comm_foreign_slow(MPI_Comm comm);
static inline int tds_comm_foreign(MPI_Comm comm)
{
    return comm != MPI_COMM_WORLD && tds_comm_foreign_slow(comm);
}
/* "rank r of communicator 'name' (world rank w)" for warnings
 * (MPI_COMM_NULL: of a communicator the program has freed) */
void tds_describe_rank(char *buf, size_t len, MPI_Comm comm, int rank);
/* a message to or from another job (ub user bytes) */
int *tds_cmap_get(MPI_Comm comm); /* a reference that outlives MPI_Comm_free */
void tds_cmap_put(int *map);
/* the same, with MPI_COMM_WORLD (the common case) answered without a call */
/* the world rank of a completed receive's source (the communicator may be freed by now) */
static inline int tds_q_wrank(const tds_rq *q, int src)
{
    if (__builtin_expect(q->cmap == NULL, 1))
        return src;
    return (unsigned)src < (unsigned)q->cmap[TDS_MAP_N] ? q->cmap[TDS_MAP_RANKS + src] : MPI_UNDEFINED;
}
static inline int tds_wrank(MPI_Comm comm, int rank)
{
    if (__builtin_expect(comm == MPI_COMM_WORLD, 1)) /* a rank outside it is MPI's error, never an index */
        return (unsigned)rank < (unsigned)tds.size ? rank : MPI_UNDEFINED;
    return tds_world_rank(comm, rank);
}
/* a tag of TDSHIM_IGNORE_TAGS (its ranges sorted); inline: a busy rank's
 * poll on an ignored tag asks it every time (tds_poll_scope), and with an
 * ignored tag every message is classified by it (tds_not_primary). The
 * tags below 64, the ones programs use, are bits (tds_config ignore_low):
 * the walk cost a flat receive 10-14 instructions at each of its post and
 * completion (issue 37) */
static inline int tds_tag_ignored(int tag)
{
    if (__builtin_expect((unsigned)tag < 64, 1))
        return (int)(tds.cf.ignore_low >> tag) & 1;
    for (int i = 0; i < tds.cf.nignore; i++) {
        if (tag < tds.cf.ignore[i].lo)
            return 0;
        if (tag <= tds.cf.ignore[i].hi)
            return 1;
    }
    return 0;
}
int tds_short_ignored(int tag, size_t bytes);
/* A message that is not primary (neither counted nor checked): on a tag of
 * TDSHIM_IGNORE_TAGS, empty under TDSHIM_IGNORE_EMPTY, or at most BYTES
 * long on a tag of TDSHIM_IGNORE_SHORT. Callers test tds.cf.classify
 * first, so a run without any of them pays one load. Sender and receiver
 * decide alike: the user's bytes and the tag. */
static inline int tds_not_primary(int tag, size_t bytes)
{
    return tds_tag_ignored(tag) || (tds.cf.ignore_empty && bytes == 0) ||
           (tds.cf.nshort && tds_short_ignored(tag, bytes));
}
void tds_comm_init(void); /* at init: maps freed with their communicators */

#endif
