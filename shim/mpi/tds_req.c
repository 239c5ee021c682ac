/*
 * The request table (DESIGN.md §4): maps the handle the program holds to
 * tdshim's state for that operation (header, bounce buffer, the program's
 * buffer and datatype). Chained hash on the handle value. Entries and their
 * bounce buffers are recycled, so after warm-up a nonblocking send or
 * receive allocates nothing.
 */
#include "tds_comm.h"
#include "tds_req.h"

#include <stdlib.h>
#include <string.h>

void tds_rq_grow(void)
{
    unsigned n = tds.rq_mask ? 2 * (tds.rq_mask + 1) : 256;
    tds_rq **h = calloc(n, sizeof *h);
    if (!h)
        tds_fatal("out of memory for the request table");
    for (unsigned i = 0; tds.rq_hash && i <= tds.rq_mask; i++) {
        for (tds_rq *q = tds.rq_hash[i], *next; q; q = next) {
            next = q->next;
            unsigned b = tds_rq_hash(q->req) & (n - 1);
            q->next = h[b];
            if (h[b])
                h[b]->pprev = &q->next;
            h[b] = q;
            q->pprev = &h[b];
        }
    }
    free(tds.rq_hash);
    tds.rq_hash = h;
    tds.rq_mask = n - 1;
    tds.rq_limit = 2 * (size_t)n; /* chains of two on average */
}

/* the set of plain receives (tds_req.h): twice as large when live handles
 * fill a quarter of it */
void tds_hs_grow(void)
{
    tds_hset *h = &tds.hs;
    unsigned cap = h->slot ? h->mask + 1 : 0, ncap = cap ? 2 * cap : 64;
    tds_hslot *old = h->slot, *s = calloc(ncap, sizeof *s);
    if (!s)
        tds_fatal("out of memory for the receive set");
    h->slot = s;
    h->mask = ncap - 1;
    h->limit = ncap / 4;
    for (unsigned i = 0; i < cap; i++)
        if (old[i].k != TDS_HS_EMPTY) {
            unsigned j = tds_hs_home(old[i].k) & h->mask;
            while (s[j].k != TDS_HS_EMPTY)
                j = (j + 1) & h->mask;
            s[j] = old[i];
        }
    free(old);
}

void tds_hs_flush(void)
{
    tds_hset *h = &tds.hs;
    unsigned rn = h->rn;
    h->rn = 0;
    h->flushes++;
    for (unsigned i = 0; i < rn; i++)
        tds_hs_add(h->rk[i], h->rv[i]);
}

void tds_rq_drop_refs(tds_rq *q)
{
    if (q->cmap)
        tds_cmap_put(q->cmap);
    q->cmap = NULL;
    if (q->owns_type & TDS_OWN_TYPE)
        PMPI_Type_free(&q->type);
    if (q->owns_type & TDS_OWN_BIG) { /* kept for the next such message, the larger of two */
        if (q->bounce_cap > tds.big_spare_cap) {
            free(tds.big_spare);
            tds.big_spare = q->bounce;
            tds.big_spare_cap = q->bounce_cap;
        } else {
            free(q->bounce);
        }
        q->bounce = NULL;
        q->bounce_cap = 0;
    }
    if (q->cell) {
        q->cell->next = tds.cells;
        tds.cells = q->cell;
        q->cell = NULL;
        q->bounce = q->cell_bounce;
        q->bounce_cap = q->cell_cap;
    }
    q->owns_type = 0;
}

/* Entries of handle r, which MPI has just given to a new request: stale,
 * the requests they were are gone. MPI freed them without tdshim seeing it:
 * Open MPI 4.1 frees a request done in error when the call that completes
 * it returns the error (ompi_errhandler_request_invoke), a persistent one
 * too, whose entry tdshim keeps until MPI_Request_free (diffgen's
 * persistent receives that truncate; tests/mpi/lostreq.sh), and the
 * others of an array that completed in error with it (tds_complete.c,
 * lost_others). Left in the table, such an entry was what a lookup of the
 * reused handle could find (the table keeps the newest first only until
 * it grows), and its count kept the flat entries on their rare path. An
 * MPI_Isendrecv's entry (a generalized request, on tdshim's list of
 * pairs) is left to tds_pair.c. Out of line: never on a common path. */
void __attribute__((noinline, cold)) tds_rq_purge(MPI_Request r)
{
    if (!tds.rq_hash)
        return;
    for (tds_rq *q = tds.rq_hash[tds_rq_hash(r) & tds.rq_mask], *n; q; q = n) {
        n = q->next; /* before the release reuses the link */
        if (q->req == r && q->kind != TDS_RQ_PAIR) {
            tds_rq_unlink(q);
            tds_rq_release(q);
        }
    }
}

tds_rq *tds_rq_alloc(void)
{
    tds_rq *q = calloc(1, sizeof *q);
    if (!q)
        tds_fatal("out of memory for a request");
    return q;
}

/* A nonblocking send MPI completed at once may get a handle shared by
 * other sends: Open MPI 4.1 ob1 returns &ompi_request_empty for a send it
 * pushed out inline. Two live requests can only share a handle if both are
 * complete and stateless (MPI_Wait could not tell them apart otherwise),
 * so such a send needs nothing at completion: the caller recycles q at
 * once, and the table keeps one entry per handle (a completion call claims
 * it once, tds_complete.c). */
int tds_rq_insert_send(tds_rq *q)
{
    if (tds.rq_hash) {
        for (tds_rq *p = tds.rq_hash[tds_rq_hash(q->req) & tds.rq_mask]; p; p = p->next)
            if (p->req == q->req)
                return 0;
    }
    tds_rq_insert(q);
    return 1;
}

/* the slow path of tds_scratch (tds_req.h) */
void *tds_scratch_grow(size_t n)
{
    void *p = realloc(tds_t.scratch, n);
    if (!p)
        tds_fatal("out of memory for a %zu-byte message buffer", n);
    tds_t.scratch = p;
    tds_t.scratch_cap = n;
    return p;
}

/* room for the entries, statuses and saved handles of a completion call's request array */
int tds_ensure_rq_scratch(int n)
{
    if (n > tds_t.rq_found_cap) {
        tds_rq **f = realloc(tds_t.rq_found, (size_t)n * sizeof *f);
        if (f)
            tds_t.rq_found = f;
        MPI_Status *s = realloc(tds_t.st_scratch, (size_t)n * sizeof *s);
        if (s)
            tds_t.st_scratch = s;
        MPI_Request *h = realloc(tds_t.rq_saved, (size_t)n * sizeof *h);
        if (h)
            tds_t.rq_saved = h;
        if (!f || !s || !h)
            tds_fatal("out of memory for %d requests", n);
        tds_t.rq_found_cap = n;
    }
    return 0;
}
