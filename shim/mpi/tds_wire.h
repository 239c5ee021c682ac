/*
 * The wire (tds_wire.c): what tdshim puts around the program's bytes. The
 * header (tds_hdr.h) and its layouts, the header-free envelope, messages
 * of other jobs, the type cache and packing.
 */
#ifndef TDS_WIRE_H
#define TDS_WIRE_H

#include "tds_comm.h"
#include "tds_state.h"

/* ---- piggyback header: tds_hdr.h (DESIGN.md §4) ---- */

/* Messages up to this many user bytes are copied into a bounce buffer;
 * larger ones go through a struct datatype (no copy). Measured with
 * tests/mpi/pbsize (2 ranks, Open MPI 4.1.4 vader, 2-core VM, best of 5):
 * round trip copy/datatype 2.21/2.92 us at 2 KiB, 5.74/4.39 at 4 KiB,
 * 8.55/6.53 at 8 KiB: copying wins up to 2 KiB, the datatype above. */
#define TDS_COPY_MAX_DEFAULT 2048

/* The most user bytes a message may have for tdshim's copy layout to post it
 * as an int count of MPI_BYTE (header included). A larger one (an MPI-4.0
 * large count, or an int count of a large type) goes with the struct layout
 * when tdshim sends it; received in the copy layout (MPICH), its bounce
 * buffer is posted as one element of a contiguous type of bytes
 * (tds_p2p.c, issue 29). */
#define TDS_WIRE_MAX ((size_t)INT_MAX - TDS_HDR_MAX)


void tds_xjob_sent(size_t ub);
void tds_xjob_recv(size_t ub);
/* header-free mode: the kind (TDS_HK_*) of a received message from its
 * envelope (source rank in comm, tag, bytes), as its header would say */
int tds_env_kind(int source, int tag, size_t bytes, MPI_Comm comm);
void tds_nenv_push(int notification);

/* memcpy for the small messages of the fast paths: up to 16 bytes as two
 * overlapping word moves, inline (a call to memcpy costs more than the copy) */
static inline void small_copy(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (n >= 8 && n <= 16) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &b, 8);
    } else if (n >= 4 && n < 8) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &b, 4);
    } else if (n < 4) {
        for (size_t i = 0; i < n; i++)
            d[i] = s[i];
    } else {
        memcpy(d, s, n);
    }
}

/* small_copy for the flat entries' messages, of at most TDS_CELL_DATA
 * bytes: no call to memcpy above 16 bytes (a call costs the entries a
 * frame of saved registers on every message), 8-byte words with the last
 * one overlapping */
static inline __attribute__((always_inline)) void cell_copy(void *dst, const void *src, size_t n)
{
    if (__builtin_expect(n > 16, 0)) {
        unsigned char *d = dst;
        const unsigned char *s = src;
        uint64_t w;
        for (size_t i = 0; i + 8 < n; i += 8) {
            memcpy(&w, s + i, 8);
            memcpy(d + i, &w, 8);
        }
        memcpy(&w, s + n - 8, 8);
        memcpy(d + n - 8, &w, 8);
        return;
    }
    small_copy(dst, src, n);
}

/* The receive of almost every message, inline and without a frame of its
 * own: a primary message in the copy layout, into a predefined contiguous
 * type, filling whole elements. Does what recv_finish (tds_p2p.c) does for it;
 * returns 0, having done nothing, for anything else. */

#endif
