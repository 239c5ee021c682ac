/*
 * The set of flat receives (shim/mpi/tds_req.h, tds_hset; issue 28): linear
 * probing with backward-shift deletion, grown at a quarter full. Random
 * adds and takes, checked after every operation against a plain array:
 * every live handle is found with its value, a taken one is not, and the
 * count agrees. Half the handles come in through the ring (tds_hs_post),
 * which a look-up empties into the slots. Keys: random 64-bit values, and arithmetic progressions
 * (Open MPI's requests come from a free list with a fixed stride; MPICH's
 * are small integers with a kind in the high bits), so chains form and
 * wrap around the end of the table. Deleting without the shift (an empty
 * slot in the middle of a chain) loses the handles behind it: that is
 * what the "found" checks catch.
 *
 * Compiled with the library's own sources (tds_req.c for tds_hs_grow); no
 * MPI call is made.
 */
#include "tds_req.h"

#include <stdlib.h>

#include "../tap.h"

tds_state tds;
__thread tds_thread tds_t __attribute__((tls_model("initial-exec")));
__thread int tds_inside __attribute__((tls_model("initial-exec")));

/* what tds_req.c needs of the rest of the library */
void tds_cmap_put(int *map)
{
    (void)map;
}
void tds_fatal(const char *fmt, ...)
{
    (void)fmt;
    printf("Bail out! tds_fatal\n");
    exit(1);
}

#define N 4096
static uintptr_t keys[N];
static tds_cell *vals[N];
static int live[N];

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* every key: found iff live, with its value */
static int consistent(int nkeys, unsigned nlive)
{
    if (tds.hs.n + tds.hs.rn != nlive)
        return 0;
    for (int i = 0; i < nkeys; i++) {
        long s = tds_hs_find((MPI_Request)keys[i]);
        if (live[i] ? s < 0 || tds.hs.slot[s].v != vals[i] : s >= 0)
            return 0;
    }
    return 1;
}

static int run(const char *what, int nkeys, int maxlive, long ops)
{
    memset(&tds.hs, 0, sizeof tds.hs);
    memset(live, 0, sizeof live);
    unsigned nlive = 0;
    long bad = 0, takes = 0;
    for (long op = 0; op < ops && !bad; op++) {
        int i = (int)(next() % (uint64_t)nkeys);
        if (!live[i] && nlive < (unsigned)maxlive) {
            vals[i] = (tds_cell *)(uintptr_t)(next() | 1);
            if (next() & 1) /* a flat receive's post: the ring, emptied into the slots by a find or when full */
                tds_hs_post((MPI_Request)keys[i], vals[i]);
            else
                tds_hs_add((MPI_Request)keys[i], vals[i]);
            live[i] = 1;
            nlive++;
        } else {
            tds_cell *v = NULL;
            int got = tds_hs_take((MPI_Request)keys[i], &v);
            if (got != live[i] || (got && v != vals[i]))
                bad++;
            takes += got;
            nlive -= (unsigned)got;
            live[i] = 0;
        }
        if ((op < 20000 || op % 97 == 0) && !consistent(nkeys, nlive))
            bad++;
    }
    tap_ok(!bad && consistent(nkeys, nlive), "%s: %ld operations (%ld takes), up to %d live, table of %u: consistent",
           what, ops, takes, maxlive, tds.hs.mask + 1);
    free(tds.hs.slot);
    return 0;
}

int main(void)
{
    tap_plan(4);
    /* MPI_Request is a pointer in Open MPI, an int in MPICH: keys must
     * stay distinct once converted */
    int wide = sizeof(MPI_Request) >= sizeof(uintptr_t);
    for (int i = 0; i < N; i++) { /* scattered, distinct and nonzero: (i + 1) C mod a prime */
        uint32_t lo = (uint32_t)((uint64_t)(i + 1) * 2654435761u % 4294967291u);
        keys[i] = wide ? (uintptr_t)(next() << 32 | lo) : (uintptr_t)lo;
    }
    run("random keys", N, 1000, 400000);
    for (int i = 0; i < N; i++) /* Open MPI 4.1's request stride */
        keys[i] = (wide ? 0x55da2f70d000ull : 0x2f70d000ull) + 0x300ull * (uintptr_t)i;
    run("a free list's stride", N, 64, 400000);
    for (int i = 0; i < N; i++)
        keys[i] = (uintptr_t)(0xac000000u | (unsigned)i); /* MPICH request handles */
    run("MPICH-style handles", N, 3000, 400000);
    for (int i = 0; i < 256; i++) /* the same low bits: only high bits differ */
        keys[i] = ((uintptr_t)i << (wide ? 40 : 20)) | 8;
    run("keys differing in high bits only", 256, 200, 200000);
    return tap_done();
}
