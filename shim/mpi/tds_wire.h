/*
 * The wire (tds_wire.c): what tdshim puts around the program's bytes. The
 * header (tds_hdr.h) and its layouts, the header-free envelope, messages
 * of other jobs, the type cache and packing.
 */
#ifndef TDS_WIRE_H
#define TDS_WIRE_H

#include "tds_comm.h"
#include "tds_state.h"

/* out of line (tds_wire.c): for the inline paths below and the files above */
void __attribute__((noinline, cold)) tds_violation(int dest, int tag, MPI_Comm comm, size_t ub);
void __attribute__((noinline, cold)) tds_ignored_header(uint8_t *hdr, uint64_t *counter);
void __attribute__((noinline, cold)) tds_not_world(uint8_t *hdr, MPI_Comm comm, size_t ub);
uint8_t *__attribute__((noinline)) tds_rq_bounce_grow(tds_rq *q, size_t n);
size_t __attribute__((noinline)) tds_type_bytes_slow(int count, MPI_Datatype type, int *tsize, uint8_t *plain);
int __attribute__((noinline, cold)) tds_dtnull_ask(int recv);
MPI_Datatype tds_wire_type(const uint8_t *hdr, const void *buf, int count, MPI_Datatype type);
size_t __attribute__((noinline, cold)) tds_pack_big(uint8_t *out, const uint8_t *hdr, const void *buf,
                                                    int count, MPI_Datatype type, size_t ubytes, int plain);
MPI_Datatype tds_big_type(MPI_Count n, MPI_Datatype t);
uint8_t *__attribute__((noinline, cold)) tds_big_bounce(tds_rq *q, size_t n);
int tds_pack_any(const void *in, size_t count, MPI_Datatype type, void *out, size_t size, size_t *pos);
int tds_unpack_any(const void *in, size_t size, size_t *pos, void *out, size_t count, MPI_Datatype type);
int __attribute__((noinline)) tds_type_cache_set(MPI_Datatype type);

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
 * (tds_wire.c, issue 29). */
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
 * type, filling whole elements. Does what tds_recv_finish (tds_recv.c) does for it;
 * returns 0, having done nothing, for anything else. */

/* MPI-4.0 large counts of bytes (tds_wire.c, issue 29) */
#if defined(HAVE_MPI_TYPE_CONTIGUOUS_C) && defined(HAVE_MPI_PACK_C) && defined(HAVE_MPI_UNPACK_C) && \
    defined(HAVE_MPI_PACK_SIZE_C)
#define TDS_BIG_BYTES 1
#else
#define TDS_BIG_BYTES 0
#endif

/* a primary message of ub bytes to world rank w left (both send paths) */
static inline void count_send(int w, size_t ub)
{
    tds.sent_to[w]++;
    tds.m.prim_sent++;
    tds.m.prim_sent_bytes += ub; /* pb_bytes_sent: derived at finalize */
    tds_worked();
}

/* a message of the notification's envelope (header-free, TDSHIM_NOTIFY=tag) */
static inline int nenv_is(int dest, int tag, MPI_Comm comm, size_t ub)
{
    return __builtin_expect(tag == tds.nenv_tag, 0) && ub == 0 && comm == MPI_COMM_WORLD && dest == tds.rank;
}

/* Fill the header of a message to (dest, tag, comm): count it and get the
 * algorithm's piggyback. The message leaves at once: no algorithm holds a
 * send back (td_core.h; issue 26: tdshim never waits for another rank
 * except inside a call that waits natively for that same rank). */
static inline void make_header(uint8_t *hdr, int dest, int tag, MPI_Comm comm, size_t ubytes)
{
    int w = tds_wrank(comm, dest);
    if (__builtin_expect(w < 0, 0)) { /* with a header: only a rank that does not exist (MPI's error) */
        tds_not_world(hdr, comm, ubytes);
        return;
    }
    if (nenv_is(dest, tag, comm, ubytes)) /* header-free only: nenv_tag is -2 otherwise */
        tds_nenv_push(0);
    if (__builtin_expect(tds.cf.classify, 0) && tds_not_primary(tag, ubytes)) {
        tds_ignored_header(hdr, &tds.m.ignored_msgs);
        return;
    }
    hdr[0] = tds.core.hdr_out; /* the magic and the episode's stamp (td_engine.c) */
    td_primary_send(&tds.core, w, hdr + TDS_HDR_FIXED);
    if (__builtin_expect(tds.core.stats.violations != tds.viol_seen, 0))
        tds_violation(dest, tag, comm, ubytes);
    count_send(w, ubytes);
}


static inline uint8_t *rq_bounce(tds_rq *q, size_t n)
{
    return __builtin_expect(n <= q->bounce_cap, 1) ? q->bounce : tds_rq_bounce_grow(q, n);
}

/* The type cache: the last plain type (one handle comparison on the fast
 * path, inlined) and the one before it (tc_prev), so that a program whose
 * messages alternate between two types pays a swap here, not MPI's size
 * query or the general entry (bench/msgcount --alt). Only predefined types
 * are cached, because a freed derived type's handle may be reused; their
 * sizes are 1 to 8 bytes. Returns 0 (nothing changed) for another type. */
static inline __attribute__((always_inline)) void type_cache_put(MPI_Datatype type, int sz, unsigned cmax)
{
    tds_sent_bytes_fold(); /* the header-free sends' elements, of the type cached until now */
    tds.tc_prev = tds.tc_type;
    tds.tc_prev_size = tds.tc_size;
    tds.tc_prev_cmax = tds.tc_cmax;
    tds.tc_type = type;
    tds.tc_size = sz;
    tds.tc_cmax = cmax;
}
/* the two cached types change places (no call: what a miss of a flat
 * entry does most, with no register to save around it, nor a division) */
static inline __attribute__((always_inline)) void type_cache_swap(void)
{
    type_cache_put(tds.tc_prev, tds.tc_prev_size, tds.tc_prev_cmax);
}
/* a plain type the pair displaced, in tds.tc_more: it takes tc_type's
 * place, tc_prev takes its entry (no call either); 0: not there */
static inline __attribute__((always_inline)) int type_cache_more(MPI_Datatype type)
{
    for (int i = 0; i < tds.tc_nmore; i++)
        if (tds.tc_more[i].type == type) {
            struct tds_tc e = tds.tc_more[i];
            tds.tc_more[i] = (struct tds_tc){.type = tds.tc_prev, .size = tds.tc_prev_size, .cmax = tds.tc_prev_cmax};
            type_cache_put(e.type, e.size, e.cmax);
            return 1;
        }
    return 0;
}
static inline size_t type_bytes(int count, MPI_Datatype type, int *tsize, uint8_t *plain)
{
    if (__builtin_expect(type != tds.tc_type, 0))
        return tds_type_bytes_slow(count, type, tsize, plain);
    int sz = tds.tc_size;
    *plain = 1;
    *tsize = sz;
    return count > 0 ? (size_t)count * (size_t)sz : 0;
}

/* 1: pass the call through as written (type MPI_DATATYPE_NULL, which the library refuses) */
static inline int tds_dtnull_refused(MPI_Datatype type, int recv)
{
    return __builtin_expect(type == MPI_DATATYPE_NULL, 0) && tds_dtnull_ask(recv);
}

/* Does a send take the copy layout (header and packed data in one byte
 * buffer)? A derived type only while the message is small: a larger one
 * goes with the datatype layout, as its receive always does (recv_fields).
 * MPICH 4.0 (ch4:ucx) cannot receive a large contiguous message into a
 * non-contiguous struct type (MPI_ERR_TRUNCATE at rendezvous sizes; found by
 * tests/mpi/transparency.sh under TDSHIM_PIGGYBACK=copy). Outside Open MPI
 * the same holds for every type, since the receiver's type may be derived
 * where the sender's is not (a C MPI_INT sent to a Fortran MPI_INTEGER:
 * tests/mpi/fortran.sh), and it fails to receive some large messages of
 * derived types (a darray, a vector of 50 blocks: tests/diff) into the
 * struct type even when the sender used the same one. So outside Open MPI
 * every message is received packed (recv_copies), and sent packed unless
 * TDSHIM_PIGGYBACK=datatype asks for the struct type (told at init);
 * receives of derived types unpack into the program's buffer
 * (tds_recv_finish). */
#ifdef OPEN_MPI
#define TDS_BYTES_INTO_STRUCT 1 /* a large byte message fits a struct receive */
#else
#define TDS_BYTES_INTO_STRUCT 0
#endif

/* Does a receive outside Open MPI take the copy layout? Always, as
 * send_copies but whatever the layout asked: under
 * TDSHIM_PIGGYBACK=datatype the sends keep the struct type (no copy) and
 * the receives are packed still, since MPICH 4.0 fails to receive some
 * messages into the struct type even from a struct send: MPI_Bsend and
 * MPI_Ibsend of 40 to 300 elements of nested derived types, which MPICH
 * packs into the attached buffer and sends as bytes (MPI_ERR_TRUNCATE
 * where natively they arrive: tests/diff seeds 1 and 2 under MPICH). A
 * struct message is its packed bytes on the wire, as from MPI_BOTTOM
 * below. */
static inline int recv_copies(const void *buf, size_t ub)
{
    return ub == 0 || (buf != MPI_BOTTOM && (TDS_BIG_BYTES || ub <= TDS_WIRE_MAX));
}

/* Does a send take the copy layout? (above) */
static inline int send_copies(const void *buf, size_t ub, uint8_t plain)
{
    /* outside Open MPI every message is packed (recv_fields), but from
     * MPI_BOTTOM, which MPICH 4.0's MPI_Pack refuses (a null pointer):
     * such a message takes the struct type (small, in practice); so does
     * one of more than TDS_WIRE_MAX bytes without TDS_BIG_BYTES (with
     * Open MPI, tds.copy_max is no more). An empty message is its header
     * alone, whatever the buffer and type: in the struct type, a NULL
     * buffer (MPI_BOTTOM there) with a type of size 0 made MPICH 4.0 refuse
     * tdshim's call (MPI_ERR_BUFFER, issue 42), and MPI_DATATYPE_NULL
     * cannot be in a struct at all */
    if (!TDS_BYTES_INTO_STRUCT)
        return tds.copy_max != 0 ? recv_copies(buf, ub) : ub == 0;
    (void)buf;
    return ub <= tds.copy_max && (plain || ub <= TDS_COPY_MAX_DEFAULT);
}

/* header + packed data into out, which has room for TDS_HDR_MAX + ubytes:
 * the header is copied as a constant TDS_HDR_MAX bytes (two moves, no
 * call), the data then overwrites the tail from hdr_len */
static inline int pack_into(uint8_t *out, const uint8_t *hdr, const void *buf, int count, MPI_Datatype type,
                            size_t ubytes, MPI_Comm comm, int plain)
{
    int pos = tds.hdr_len;
    memcpy(out, hdr, TDS_HDR_MAX);
    if (ubytes && plain) {
        small_copy(out + pos, buf, ubytes);
        pos += (int)ubytes;
    } else if (ubytes) {
        PMPI_Pack(buf, count, type, out, (int)(tds.hdr_len + ubytes), &pos, comm);
    }
    return pos;
}

/* A nonblocking send MPI completed before returning. Open MPI (ob1)
 * returns its predefined empty request for a send it pushed out inline
 * (most small messages over shared memory): nothing of ours is needed at
 * completion then, so no request entry is made and Wait/Test pass
 * straight through. Other MPIs: never assumed (the entry is made). */
#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION >= 3 && OMPI_MAJOR_VERSION <= 5
extern struct ompi_request_t ompi_request_empty;
#define DONE_AT_ONCE(r) ((r) == (MPI_Request)&ompi_request_empty)
#else
#define DONE_AT_ONCE(r) 0
#endif

#endif
