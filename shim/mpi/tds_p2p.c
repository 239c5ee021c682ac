/*
 * Point-to-point bodies: sends, receives, probes and the transparent
 * piggyback (DESIGN.md §4).
 *
 * Wire layout of every message the program sends: [header | user data],
 * header = TDS_HDR_FIXED bytes + the algorithm's piggyback. Each side picks
 * its own layout from its own size (the bytes on the wire are the same):
 *   - copy: header and MPI_Pack'ed data in one bounce buffer, as MPI_BYTE;
 *   - datatype: a struct type over MPI_BOTTOM {header, user buffer}, no copy.
 * The receiver posts header + its capacity, so a message too long for the
 * program's buffer is truncated exactly when it would be without tdshim,
 * and the status is fixed to the user's byte count (MPI_Status_set_elements_x
 * with MPI_BYTE), so MPI_Get_count/Get_elements answer as natively.
 */
#include "tds.h"
#include "tds_bodies.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "td_algo.h"

enum { MODE_STD = 0, MODE_B, MODE_S, MODE_R };
typedef int (*tds_bsend_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
typedef int (*tds_nbsend_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
/* the next layer's functions (tds_bodies.h), resolved at load time */
static tds_bsend_fn *const blocking_send[4] = {&tds_real_Send, &tds_real_Bsend, &tds_real_Ssend, &tds_real_Rsend};
static tds_nbsend_fn *const nb_send[4] = {&tds_real_Isend, &tds_real_Ibsend, &tds_real_Issend, &tds_real_Irsend};
static tds_nbsend_fn *const persistent_send[4] = {&tds_real_Send_init, &tds_real_Bsend_init, &tds_real_Ssend_init,
                                                  &tds_real_Rsend_init};


/* ---------------------------------------------------------------- header */

/* a contract violation: counted by tag for the report's advice, and the
 * first one of this rank warned, with what identifies the send in the
 * program (tag, destination, size; the call site with TDSHIM_CALLSITES) */
static void __attribute__((noinline, cold)) violation(int dest, int tag, MPI_Comm comm, size_t ub)
{
    tds.viol_seen = tds.core.stats.violations;
    tdr_violation_add(&tds.m, tag, ub);
    if (tds.warned_violation)
        return;
    tds.warned_violation = 1;
    char to[MPI_MAX_OBJECT_NAME + 96];
    tds_describe_rank(to, sizeof to, comm, dest);
    fprintf(stderr,
            "tdshim: rank %d: a primary message (tag %d, to %s, %zu bytes) was sent while the rank was "
            "passive: a contract violation (see TDSHIM_IDLE, TDSHIM_IGNORE_TAGS%s); detection may be unsound: "
            "an announcement this makes premature is marked unsafe in the report. Counted in the report; "
            "warned once.\n",
            tds.rank, tag, to, ub, tds.m.sites ? " and the call sites in the report" : ", TDSHIM_CALLSITES");
}

static void __attribute__((noinline, cold)) ignored_header(uint8_t *hdr, uint64_t *counter)
{
    /* still carries a header: a receiver with MPI_ANY_TAG posts the same
     * layout for every message */
    hdr[0] = TDS_HDR_MAGIC | TDS_HF_IGNORED;
    memset(hdr + TDS_HDR_FIXED, 0, tds.cf.algo->pb_size);
    if (counter)
        (*counter)++;
}

/* ---------------------------------------------------------------- other jobs
 * README "Other jobs": on a foreign communicator (tds.h, tds_comm_foreign)
 * a message is not primary. It goes out and comes in exactly as the
 * program wrote it, header-free whatever the algorithm, on both ends (each
 * decides from the communicator's membership, which both see alike, so a
 * receive with MPI_ANY_SOURCE is decided by its communicator too); the
 * algorithm never sees it, and it is counted apart. A message received from
 * another job is activity (new input from outside the job, like a
 * collective): the rank is active, and a new episode follows. */
void tds_xjob_sent(size_t ub)
{
    tds.m.xjob_sent++;
    tds.m.xjob_sent_bytes += ub;
}

void tds_xjob_recv(size_t ub)
{
    tds.m.xjob_recv++;
    tds.m.xjob_recv_bytes += ub;
    td_activity(&tds.core);
    tds_worked();
}

/* a send to a rank without a world rank of ours: another job's (counted
 * apart), or no rank at all (MPI reports the error; nothing counted) */
static void __attribute__((noinline, cold)) not_world(uint8_t *hdr, MPI_Comm comm, size_t ub)
{
    if (tds_comm_foreign(comm))
        tds_xjob_sent(ub);
    ignored_header(hdr, NULL);
}

/* a primary message of ub bytes to world rank w left (both send paths) */
static inline void count_send(int w, size_t ub)
{
    tds.sent_to[w]++;
    tds.m.prim_sent++;
    tds.m.prim_sent_bytes += ub; /* pb_bytes_sent: derived at finalize */
    tds_worked();
}

/* ---------------------------------------------------------------- header-free mode
 * DESIGN.md §4 "Header-free mode": under an algorithm that piggybacks
 * nothing and never holds a send (skr, fourcounter, termdetect, none) the
 * messages go out as the program wrote them, and what the header's flags
 * said is derived from the envelope on the receiving side, with the same
 * predicates as on the sending side: a message on an ignored tag (or empty
 * under TDSHIM_IGNORE_EMPTY) is not primary, anything else is. The one
 * envelope that needs more is the notification's (empty, from self, tag N,
 * MPI_COMM_WORLD), which the program may use as well: MPI receives the
 * messages of one envelope in the order they were sent (non-overtaking,
 * MPI 4.0 §3.5), so the rank remembers where among them each notification
 * was sent and tells it by its place when it is received. */

static int __attribute__((noinline, cold)) nenv_grow(void)
{
    size_t cap = tds.nenv_cap ? 2 * tds.nenv_cap : 16;
    uint64_t *v = realloc(tds.nenv_notes, cap * sizeof *v);
    if (!v)
        return -1;
    tds.nenv_notes = v;
    tds.nenv_cap = cap;
    return 0;
}

/* a message of the notification's envelope leaves this rank (to itself) */
void tds_nenv_push(int notification)
{
    if (notification) {
        if (tds.nenv_head && tds.nenv_head == tds.nenv_n) /* all taken: start over */
            tds.nenv_head = tds.nenv_n = 0;
        if (tds.nenv_n == tds.nenv_cap && nenv_grow())
            tds_fatal("out of memory recording a notification");
        tds.nenv_notes[tds.nenv_n++] = tds.nenv_sent;
    }
    tds.nenv_sent++;
}

/* a message of that envelope was received: is it a notification? */
static int nenv_take(void)
{
    uint64_t k = tds.nenv_recv++;
    if (tds.nenv_head < tds.nenv_n && tds.nenv_notes[tds.nenv_head] == k) {
        tds.nenv_head++;
        return 1;
    }
    return 0;
}

static inline int nenv_is(int dest, int tag, MPI_Comm comm, size_t ub)
{
    return __builtin_expect(tag == tds.nenv_tag, 0) && ub == 0 && comm == MPI_COMM_WORLD && dest == tds.rank;
}

int tds_env_kind(int source, int tag, size_t bytes, MPI_Comm comm)
{
    if (nenv_is(source, tag, comm, bytes) && nenv_take())
        return TDS_HK_NOTIFY;
    if (__builtin_expect(tds.cf.nignore != 0 || tds.cf.ignore_empty, 0) &&
        (tds_tag_ignored(tag) || (tds.cf.ignore_empty && bytes == 0)))
        return TDS_HK_IGNORED;
    return TDS_HK_PRIMARY;
}

/* Fill the header of a message to (dest, tag, comm): count it and get the
 * algorithm's piggyback. The message leaves at once: no algorithm holds a
 * send back (td_core.h; issue 26: tdshim never waits for another rank
 * except inside a call that waits natively for that same rank). */
static inline void make_header(uint8_t *hdr, int dest, int tag, MPI_Comm comm, size_t ubytes)
{
    int w = tds_wrank(comm, dest);
    if (__builtin_expect(w < 0, 0)) { /* with a header: only a rank that does not exist (MPI's error) */
        not_world(hdr, comm, ubytes);
        return;
    }
    if (nenv_is(dest, tag, comm, ubytes)) /* header-free only: nenv_tag is -2 otherwise */
        tds_nenv_push(0);
    if (__builtin_expect(tds.cf.nignore != 0 || tds.cf.ignore_empty, 0) &&
        (tds_tag_ignored(tag) || (tds.cf.ignore_empty && ubytes == 0))) {
        ignored_header(hdr, &tds.m.ignored_msgs);
        return;
    }
    hdr[0] = tds.core.hdr_out; /* the magic and the episode's stamp (td_engine.c) */
    td_primary_send(&tds.core, w, hdr + TDS_HDR_FIXED);
    if (__builtin_expect(tds.core.stats.violations != tds.viol_seen, 0))
        violation(dest, tag, comm, ubytes);
    count_send(w, ubytes);
}


/* bounce buffer of a request: header + packed data */
static uint8_t *__attribute__((noinline)) rq_bounce_grow(tds_rq *q, size_t n)
{
    void *p = realloc(q->bounce, n);
    if (!p)
        tds_fatal("out of memory for a %zu-byte message buffer", n);
    q->bounce = p;
    q->bounce_cap = n;
    return p;
}

static inline uint8_t *rq_bounce(tds_rq *q, size_t n)
{
    return __builtin_expect(n <= q->bounce_cap, 1) ? q->bounce : rq_bounce_grow(q, n);
}

/* the bounce buffer of a message of more than TDS_WIRE_MAX bytes: the
 * spare one if large enough (tds_rq_drop_refs keeps it), given back
 * with the entry (TDS_OWN_BIG) */
static uint8_t *__attribute__((noinline, cold)) big_bounce(tds_rq *q, size_t n)
{
    q->owns_type |= TDS_OWN_BIG;
    if (n > q->bounce_cap && tds.big_spare_cap >= n) {
        free(q->bounce);
        q->bounce = tds.big_spare;
        q->bounce_cap = tds.big_spare_cap;
        tds.big_spare = NULL;
        tds.big_spare_cap = 0;
    }
    return rq_bounce(q, n);
}

/* the struct type {hdr_len bytes at hdr, count x type at buf} over MPI_BOTTOM */
static MPI_Datatype wire_type(const uint8_t *hdr, const void *buf, int count, MPI_Datatype type)
{
    int len[2] = {tds.hdr_len, count};
    MPI_Aint disp[2];
    MPI_Datatype types[2] = {MPI_BYTE, type}, t;
    PMPI_Get_address(hdr, &disp[0]);
    PMPI_Get_address(buf, &disp[1]);
    if (PMPI_Type_create_struct(2, len, disp, types, &t) != MPI_SUCCESS || PMPI_Type_commit(&t) != MPI_SUCCESS)
        tds_fatal("cannot build the piggyback datatype");
    return t;
}

/* Predefined types whose data is `count * size` contiguous bytes: packing
 * them is a memcpy, cheaper than a call to MPI_Pack for small messages
 * (the common case of the copy layout). A handle comparison, no MPI call. */
static int plain_type(MPI_Datatype t)
{
    return t == MPI_BYTE || t == MPI_CHAR || t == MPI_INT || t == MPI_DOUBLE || t == MPI_UNSIGNED_CHAR ||
           t == MPI_SIGNED_CHAR || t == MPI_LONG || t == MPI_UNSIGNED || t == MPI_UNSIGNED_LONG ||
           t == MPI_FLOAT || t == MPI_LONG_LONG || t == MPI_UNSIGNED_LONG_LONG || t == MPI_SHORT ||
           t == MPI_UNSIGNED_SHORT || t == MPI_INT8_T || t == MPI_INT16_T || t == MPI_INT32_T ||
           t == MPI_INT64_T || t == MPI_UINT8_T || t == MPI_UINT16_T || t == MPI_UINT32_T || t == MPI_UINT64_T ||
           t == MPI_PACKED;
}

/* Messages of more than TDS_WIRE_MAX bytes (issue 29: MPI-4.0 large
 * counts, which tds_count_int turns into one element of a contiguous type,
 * and int counts of large types). Outside Open MPI they take the copy
 * layout like every message, the bounce buffer posted as one element of a
 * contiguous type of bytes (big_type), which needs the MPI-4.0 large-count
 * datatype functions (without them, the struct layout), and freed with its
 * request (TDS_OWN_BIG). Sent in the struct layout, a 2 GiB message took
 * MPICH 4.0 (ch4:ucx) 3 to 13 s against 0.3 s natively: UCX moves a
 * non-contiguous type in fragments; in the copy layout about 1 s (the
 * bounce buffer's page faults and copy, tests/mpi/bigcount.sh). */
#if defined(HAVE_MPI_TYPE_CONTIGUOUS_C) && defined(HAVE_MPI_PACK_C) && defined(HAVE_MPI_UNPACK_C) && \
    defined(HAVE_MPI_PACK_SIZE_C)
#define TDS_BIG_BYTES 1

/* one element of n x t: a large count as an int count of 1 */
static MPI_Datatype big_type(MPI_Count n, MPI_Datatype t)
{
    MPI_Datatype b = MPI_DATATYPE_NULL;
    if (PMPI_Type_contiguous_c(n, t, &b) == MPI_SUCCESS && PMPI_Type_commit(&b) != MPI_SUCCESS)
        PMPI_Type_free(&b);
    return b;
}

int tds_count_int(MPI_Count n, MPI_Datatype *type, MPI_Datatype *big)
{
    if (n < INT_MIN)
        return -1; /* MPI's error, as natively */
    *big = big_type(n, *type);
    if (*big == MPI_DATATYPE_NULL)
        return -1; /* not a valid type: MPI's error */
    *type = *big;
    return 1;
}
#else
#define TDS_BIG_BYTES 0
static MPI_Datatype big_type(MPI_Count n, MPI_Datatype t)
{
    (void)n, (void)t;
    tds_fatal("a message of more than INT_MAX bytes in the copy layout"); /* recv_fields: never */
}

/* an MPI-4.0 library without MPI_Type_contiguous_c: not met yet */
int tds_count_int(MPI_Count n, MPI_Datatype *type, MPI_Datatype *big)
{
    (void)type, (void)big;
    if (n < INT_MIN)
        return -1;
    tds_fatal("a large-count call of %lld elements: this MPI library has no MPI_Type_contiguous_c; stopping",
              (long long)n);
}
#endif

/* MPI_Pack and MPI_Unpack of any size (on tds.self, errors returned) */
static int pack_any(const void *in, size_t count, MPI_Datatype type, void *out, size_t size, size_t *pos)
{
    if (count <= INT_MAX && size <= INT_MAX) {
        int p = (int)*pos, rc = PMPI_Pack(in, (int)count, type, out, (int)size, &p, tds.self);
        *pos = (size_t)p;
        return rc;
    }
#if TDS_BIG_BYTES
    MPI_Count p = (MPI_Count)*pos;
    int rc = PMPI_Pack_c(in, (MPI_Count)count, type, out, (MPI_Count)size, &p, tds.self);
    *pos = (size_t)p;
    return rc;
#else
    return MPI_ERR_COUNT;
#endif
}
static int unpack_any(const void *in, size_t size, size_t *pos, void *out, size_t count, MPI_Datatype type)
{
    if (count <= INT_MAX && size <= INT_MAX) {
        int p = (int)*pos, rc = PMPI_Unpack(in, (int)size, &p, out, (int)count, type, tds.self);
        *pos = (size_t)p;
        return rc;
    }
#if TDS_BIG_BYTES
    MPI_Count p = (MPI_Count)*pos;
    int rc = PMPI_Unpack_c(in, (MPI_Count)size, &p, out, (MPI_Count)count, type, tds.self);
    *pos = (size_t)p;
    return rc;
#else
    return MPI_ERR_COUNT;
#endif
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
static int __attribute__((noinline)) type_cache_set(MPI_Datatype type)
{
    if (type == tds.tc_prev) { /* never tc_type here: the callers checked */
        type_cache_swap();
        return 1;
    }
    if (!plain_type(type))
        return 0;
    MPI_Count sz = 0;
    PMPI_Type_size_x(type, &sz);
    type_cache_put(type, (int)sz, (unsigned)(TDS_CELL_DATA / sz));
    return 1;
}

/* Size of a type, and whether it is plain (then cached) */
static size_t __attribute__((noinline)) type_bytes_slow(int count, MPI_Datatype type, int *tsize, uint8_t *plain)
{
    MPI_Count sz = 0; /* a type of more than INT_MAX bytes: an MPI-4.0 large count (tds_count_int) */
    *plain = (uint8_t)type_cache_set(type);
    if (*plain)
        sz = tds.tc_size;
    else if (type != MPI_DATATYPE_NULL) /* a count-0 message of it: no data (tds_dtnull_refused) */
        PMPI_Type_size_x(type, &sz);
    *tsize = sz > INT_MAX ? INT_MAX : (int)sz; /* such a type's receive asks again (unpack_derived) */
    return count > 0 && sz > 0 ? (size_t)count * (size_t)sz : 0;
}

static inline size_t type_bytes(int count, MPI_Datatype type, int *tsize, uint8_t *plain)
{
    if (__builtin_expect(type != tds.tc_type, 0))
        return type_bytes_slow(count, type, tsize, plain);
    int sz = tds.tc_size;
    *plain = 1;
    *tsize = sz;
    return count > 0 ? (size_t)count * (size_t)sz : 0;
}

/* A count-0 message of MPI_DATATYPE_NULL: MPICH 4.0 takes it (an empty
 * message), Open MPI 4.1 refuses it (MPI_ERR_TYPE, raised on the
 * communicator). Asked of the library once, on tds.self, the first time a
 * program uses it (never on a fast path: the type cache never holds it);
 * where the library refuses, the program's call goes to MPI as written
 * (its error, its handler, nothing counted), where it takes it, tdshim
 * sends and receives an empty message (no size query of the type, which
 * failed fatally: issue 42). recv: the receive side's answer. */
static int __attribute__((noinline, cold)) dtnull_ask(int recv)
{
    if (!tds.dtnull) {
        MPI_Request r;
        int tag = 0, bits = 1;
        if (PMPI_Isend(NULL, 0, MPI_DATATYPE_NULL, 0, tag, tds.self, &r) == MPI_SUCCESS) {
            bits |= 2;
            PMPI_Recv(NULL, 0, MPI_BYTE, 0, tag, tds.self, MPI_STATUS_IGNORE);
            PMPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        if (PMPI_Irecv(NULL, 0, MPI_DATATYPE_NULL, 0, tag, tds.self, &r) == MPI_SUCCESS) {
            bits |= 4;
            PMPI_Send(NULL, 0, MPI_BYTE, 0, tag, tds.self);
            PMPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        tds.dtnull = (uint8_t)bits;
    }
    return !(tds.dtnull & (recv ? 4 : 2));
}
/* 1: pass the call through as written (type MPI_DATATYPE_NULL, which the library refuses) */
static inline int tds_dtnull_refused(MPI_Datatype type, int recv)
{
    return __builtin_expect(type == MPI_DATATYPE_NULL, 0) && dtnull_ask(recv);
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
 * every message is packed, on both sides, unless TDSHIM_PIGGYBACK=datatype
 * asks otherwise (warned at init); receives of derived types unpack into
 * the program's buffer (recv_finish). */
#ifdef OPEN_MPI
#define TDS_BYTES_INTO_STRUCT 1 /* a large byte message fits a struct receive */
#else
#define TDS_BYTES_INTO_STRUCT 0
#endif
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
        return ub == 0 || (tds.copy_max != 0 && buf != MPI_BOTTOM && (TDS_BIG_BYTES || ub <= TDS_WIRE_MAX));
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

/* pack_into for a message of more than TDS_WIRE_MAX bytes: its size */
static size_t __attribute__((noinline, cold)) pack_big(uint8_t *out, const uint8_t *hdr, const void *buf,
                                                       int count, MPI_Datatype type, size_t ubytes, int plain)
{
    size_t pos = (size_t)tds.hdr_len;
    memcpy(out, hdr, TDS_HDR_MAX);
    if (plain) {
        memcpy(out + pos, buf, ubytes);
        return pos + ubytes;
    }
    pack_any(buf, (size_t)count, type, out, pos + ubytes, &pos);
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

/* ---------------------------------------------------------------- sends */

/* The blocking send of a message with its header. Under
 * MPI_THREAD_MULTIPLE it is the nonblocking form completed by a loop that
 * lets the other threads in (tds_mt.c) and keeps answering control
 * messages. */
static int __attribute__((noinline)) send_wire_loop(int mode, const void *b, int n, MPI_Datatype t, int dest,
                                                    int tag, MPI_Comm comm)
{
    MPI_Request r;
    int rc = (*nb_send[mode])(b, n, t, dest, tag, comm, &r), done = 0;
    if (rc != MPI_SUCCESS)
        return rc;
    tds_wait w = tds_wait_begin(0);
    while ((rc = PMPI_Test(&r, &done, MPI_STATUS_IGNORE)) == MPI_SUCCESS && !done)
        tds_wait_step(&w);
    return rc;
}
static inline int send_wire(int mode, const void *b, int n, MPI_Datatype t, int dest, int tag, MPI_Comm comm)
{
    if (!TDS_LOOP_WAITS())
        return (*blocking_send[mode])(b, n, t, dest, tag, comm);
    return send_wire_loop(mode, b, n, t, dest, tag, comm);
}

/*
 * The send of almost every small message, kept flat and apart from the
 * general path below (its frame and spills cost as much as the work):
 * the predefined type seen last, copy layout, no ignored tags, no call
 * sites, not the sampled call of the report's timer, and a rank whose
 * algorithm has nothing to record but the count (td_primary_send's own
 * fast case: active, dirty, piggyback kept in pb_out). Returns 1 with
 * *rc set, or 0,
 * having done nothing, for the general path to take over. The message
 * rate's budget is a few tens of instructions per message.
 */
static void __attribute__((noinline)) send_keep(tds_rq *q, MPI_Request r, size_t ub);
static inline __attribute__((always_inline)) int send_fast(int mode, const void *buf, int count, MPI_Datatype type,
                                                           int dest, int tag, MPI_Comm comm, MPI_Request *req, int *rc)
{
    td_ctx *c = &tds.core;
    size_t ub = count > 0 ? (size_t)count * (size_t)tds.tc_size : 0;
    if (!(type == tds.tc_type && ub - tds.fast_min < tds.fast_lim && tds.tleft > 1 && dest >= 0 &&
          (c->active & c->dirty & c->pb_static)))
        return 0;
    int w = tds_wrank(comm, dest);
    if (__builtin_expect(w < 0, 0))
        return 0;
    uint8_t *b = tds_scratch(TDS_HDR_MAX + ub);
    b[0] = tds.core.hdr_out;
    td_primary_send(c, w, b + TDS_HDR_FIXED); /* its fast case, checked above */
    small_copy(b + tds.hdr_len, buf, ub);
    count_send(w, ub);
    tds.m.n_cat[TDR_CAT_SEND]++; /* what tds_tstop counts; the time is sampled on the general path */
    tds.tleft--;
    int n = tds.hdr_len + (int)ub;
    if (!req) {
        *rc = send_wire(mode, b, n, MPI_BYTE, dest, tag, comm);
        return 1;
    }
    MPI_Request r;
    *rc = (*nb_send[mode])(b, n, MPI_BYTE, dest, tag, comm, &r);
    if (*rc == MPI_SUCCESS) {
        *req = r;
        if (!DONE_AT_ONCE(r))
            send_keep(tds_rq_new(), r, ub);
    }
    return 1;
}

/* A message to another job, or to no rank at all (MPI's error), with a
 * header: it goes as the program wrote it, counted apart (tds_xjob_sent).
 * req NULL: blocking (through send_wire, which keeps answering control
 * messages where an algorithm needs it). */
static int __attribute__((noinline, cold)) send_as_written(int mode, const void *buf, int count, MPI_Datatype type,
                                                           int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    if (tds_comm_foreign(comm)) {
        int tsize;
        uint8_t plain;
        tds_xjob_sent(type_bytes(count, type, &tsize, &plain));
    }
    if (!req)
        return send_wire(mode, buf, count, type, dest, tag, comm);
    return (*nb_send[mode])(buf, count, type, dest, tag, comm, req);
}

static int send_post(int mode, int persistent, const void *buf, int count, MPI_Datatype type, int dest, int tag,
                     MPI_Comm comm, MPI_Request *req);

/* the general blocking send (send_fast declined) */
static int __attribute__((noinline)) send_blocking(int mode, const void *buf, int count, MPI_Datatype type,
                                                  int dest, int tag, MPI_Comm comm)
{
    if (dest == MPI_PROC_NULL || tds_dtnull_refused(type, 0))
        return (*blocking_send[mode])(buf, count, type, dest, tag, comm);
    if (__builtin_expect(tds_wrank(comm, dest) < 0, 0))
        return send_as_written(mode, buf, count, type, dest, tag, comm, NULL);
    double t0 = tds_tstart();
    int tsize, rc;
    uint8_t plain;
    size_t ub = type_bytes(count, type, &tsize, &plain);
    if (__builtin_expect(ub > TDS_WIRE_MAX, 0) && send_copies(buf, ub, plain)) {
        /* a bounce buffer of its own (send_post), not the scratch buffer,
         * which is kept; the send's own completion call (not passive) */
        MPI_Request r;
        tds_tstop(TDR_CAT_SEND, t0);
        rc = send_post(mode, 0, buf, count, type, dest, tag, comm, &r);
        return rc == MPI_SUCCESS ? tds_body_Wait(&r, MPI_STATUS_IGNORE) : rc;
    }
    uint8_t hdr[TDS_HDR_MAX];
    make_header(hdr, dest, tag, comm, ub);
    double dt;
    if (send_copies(buf, ub, plain)) {
        uint8_t *b = tds_scratch(TDS_HDR_MAX + ub);
        int n = pack_into(b, hdr, buf, count, type, ub, comm, plain);
        dt = tds_tstop(TDR_CAT_SEND, t0);
        rc = send_wire(mode, b, n, MPI_BYTE, dest, tag, comm);
    } else {
        MPI_Datatype t = wire_type(hdr, buf, count, type);
        dt = tds_tstop(TDR_CAT_SEND, t0);
        rc = send_wire(mode, MPI_BOTTOM, 1, t, dest, tag, comm);
        PMPI_Type_free(&t);
    }
    if (tds.m.sites)
        tdr_site_record(&tds.m, TDR_SITE_SEND, dt);
    return rc;
}

/* A nonblocking send in the copy layout still in flight: its entry takes
 * the scratch buffer over (swapped with the entry's old bounce buffer, no
 * copy and no allocation after warm-up). */
static void send_keep(tds_rq *q, MPI_Request r, size_t ub)
{
    void *old = q->bounce;
    size_t oldcap = q->bounce_cap;
    q->bounce = tds_t.scratch;
    q->bounce_cap = tds_t.scratch_cap;
    tds_t.scratch = old;
    tds_t.scratch_cap = oldcap;
    q->kind = TDS_RQ_SEND;
    q->copy = 1;
    q->plain = 1;
    q->ubytes = ub;
    q->req = r;
    q->active = 1;
    if (!tds_rq_insert_send(q))
        tds_rq_release(q); /* complete already, under a shared handle */
}

/* Nonblocking send in the copy layout: packed into the scratch buffer and
 * posted; only a send still in flight gets an entry, which then takes the
 * scratch buffer over (swapped with the entry's old bounce buffer, no copy
 * and no allocation after warm-up). */
static inline __attribute__((always_inline)) int send_post_copy(int mode, const void *buf, int count,
                                                                MPI_Datatype type, int dest, int tag,
                                                                MPI_Comm comm, MPI_Request *req, size_t ub,
                                                                uint8_t plain, double t0)
{
    uint8_t hdr[TDS_HDR_MAX];
    make_header(hdr, dest, tag, comm, ub);
    uint8_t *b = tds_scratch(TDS_HDR_MAX + ub);
    int n = pack_into(b, hdr, buf, count, type, ub, comm, plain);
    MPI_Request r;
    double paused = tds_tpause(t0);
    int rc = (*nb_send[mode])(b, n, MPI_BYTE, dest, tag, comm, &r);
    t0 = tds_tresume(t0, paused);
    if (rc != MPI_SUCCESS)
        return rc;
    *req = r;
    if (!DONE_AT_ONCE(r))
        send_keep(tds_rq_new(), r, ub);
    double dt = tds_tstop(TDR_CAT_SEND, t0);
    if (tds.m.sites)
        tdr_site_record(&tds.m, TDR_SITE_SEND, dt);
    return MPI_SUCCESS;
}

/* post a send (persistent: create it) and enter it in the request table */
static int __attribute__((noinline)) send_post(int mode, int persistent, const void *buf, int count,
                                              MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    int rc;
    if (dest == MPI_PROC_NULL || tds_dtnull_refused(type, 0))
        return (*(persistent ? persistent_send : nb_send)[mode])(buf, count, type, dest, tag, comm, req);
    int foreign = tds_wrank(comm, dest) < 0;
    if (__builtin_expect(foreign && !persistent, 0))
        return send_as_written(mode, buf, count, type, dest, tag, comm, req);
    double t0 = tds_tstart();
    if (!persistent) {
        int tsize;
        uint8_t plain;
        size_t ub = type_bytes(count, type, &tsize, &plain);
        if (ub <= TDS_WIRE_MAX && send_copies(buf, ub, plain))
            return send_post_copy(mode, buf, count, type, dest, tag, comm, req, ub, plain, t0);
    }
    tds_rq *q = tds_rq_new();
    q->kind = TDS_RQ_SEND;
    q->persistent = (uint8_t)persistent;
    if (persistent) { /* what every Start re-packs (tds_send_start) */
        q->buf = (void *)buf;
        q->count = count;
        q->type = type;
        q->peer = dest;
        q->tag = tag;
        q->comm = comm;
        q->sendmode = mode;
    }
    q->ubytes = type_bytes(count, type, &q->tsize, &q->plain);
    /* persistent: each Start counts it (tds_send_start), decided now (the
     * program may free the communicator before it starts the request) */
    q->foreign = !foreign ? 0 : tds_comm_foreign(comm) ? 1 : 2;
    q->copy = !tds.nohdr && !foreign && send_copies(buf, q->ubytes, q->plain);
    MPI_Datatype big = MPI_DATATYPE_NULL;
    if (__builtin_expect(q->copy && q->ubytes > TDS_WIRE_MAX, 0)) {
        /* its bounce buffer goes with it (TDS_OWN_BIG) */
        q->cmap = NULL;
        q->owns_type = 0;
        big_bounce(q, TDS_HDR_MAX + q->ubytes);
        big = big_type((MPI_Count)(tds.hdr_len + q->ubytes), MPI_BYTE);
    }
    if (persistent && q->copy && !q->plain && q->ubytes) {
        /* every Start packs in the program's type, which the program may
         * free after this call (MPI allows it; MPICH 4.0 aborted in
         * MPI_Pack, issue 42): a duplicate of tdshim's, freed with q */
        PMPI_Type_dup(type, &q->type);
        q->owns_type |= TDS_OWN_TYPE;
    }
    if (!persistent) /* persistent: at every Start */
        make_header(q->hdr, dest, tag, comm, q->ubytes);
    if (tds.nohdr || foreign) { /* only persistent sends come here so; Start counts them */
        double paused = tds_tpause(t0);
        rc = (*persistent_send[mode])(buf, count, type, dest, tag, comm, &q->req);
        t0 = tds_tresume(t0, paused);
    } else if (__builtin_expect(big != MPI_DATATYPE_NULL, 0)) {
        uint8_t *b = rq_bounce(q, TDS_HDR_MAX + q->ubytes);
        if (!persistent)
            pack_big(b, q->hdr, buf, count, type, q->ubytes, q->plain);
        double paused = tds_tpause(t0);
        rc = (*(persistent ? persistent_send : nb_send)[mode])(b, 1, big, dest, tag, comm, &q->req);
        t0 = tds_tresume(t0, paused);
        PMPI_Type_free(&big);
    } else if (q->copy) {
        uint8_t *b = rq_bounce(q, TDS_HDR_MAX + q->ubytes);
        int n = persistent ? (int)(tds.hdr_len + q->ubytes)
                           : pack_into(b, q->hdr, buf, count, type, q->ubytes, comm, q->plain);
        double paused = tds_tpause(t0);
        rc = (*(persistent ? persistent_send : nb_send)[mode])(b, n, MPI_BYTE, dest, tag, comm, &q->req);
        t0 = tds_tresume(t0, paused);
    } else {
        MPI_Datatype t = wire_type(q->hdr, buf, count, type);
        double paused = tds_tpause(t0);
        rc = (*(persistent ? persistent_send : nb_send)[mode])(MPI_BOTTOM, 1, t, dest, tag, comm, &q->req);
        t0 = tds_tresume(t0, paused);
        PMPI_Type_free(&t);
    }
    if (rc != MPI_SUCCESS) {
        tds_rq_release(q);
        return rc;
    }
    q->active = !persistent;
    *req = q->req;
    if (persistent)
        tds_rq_insert(q);
    else if (!tds_rq_insert_send(q))
        tds_rq_release(q); /* complete already, under a shared handle */
    double dt = tds_tstop(TDR_CAT_SEND, t0);
    if (tds.m.sites && !persistent)
        tdr_site_record(&tds.m, TDR_SITE_SEND, dt);
    return MPI_SUCCESS;
}

/* MPI_Start of a persistent send: a new message, so a new header */
void tds_send_start(tds_rq *q)
{
    if (__builtin_expect(q->foreign, 0)) { /* as written; 2: no such rank */
        if (q->foreign == 1)
            tds_xjob_sent(q->ubytes);
        q->active = 1;
        return;
    }
    make_header(q->hdr, q->peer, q->tag, q->comm, q->ubytes);
    if (__builtin_expect(q->owns_type & TDS_OWN_BIG, 0))
        pack_big(q->bounce, q->hdr, q->buf, q->count, q->type, q->ubytes, q->plain);
    else if (q->copy)
        pack_into(q->bounce, q->hdr, q->buf, q->count, q->type, q->ubytes, q->comm, q->plain);
    q->active = 1;
}

/* Header-free: the program's message as it wrote it, counted (the
 * algorithm piggybacks nothing). No request entry: the send has no buffer
 * of tdshim's to keep. */
static void __attribute__((noinline)) count_nohdr(int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    double t0 = tds_tstart();
    int tsize;
    uint8_t plain, hdr[TDS_HDR_MAX];
    make_header(hdr, dest, tag, comm, type_bytes(count, type, &tsize, &plain));
    double dt = tds_tstop(TDR_CAT_SEND, t0);
    if (__builtin_expect(tds.m.sites != NULL, 0))
        tdr_site_record(&tds.m, TDR_SITE_SEND, dt);
}
static inline __attribute__((always_inline)) int send_nohdr(int mode, const void *buf, int count,
                                                            MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                                                            MPI_Request *req)
{
    /* almost every message: send_fast's case (the type seen last, an
     * active rank with nothing to record but the count), no tag to look at */
    td_ctx *c = &tds.core;
    int w;
    if (__builtin_expect(type == tds.tc_type && tag != tds.nenv_tag && !tds.nh_slow && dest >= 0 &&
                             tds.tleft > 1 && (c->active & c->dirty & c->pb_static) &&
                             (w = tds_wrank(comm, dest)) >= 0,
                         1)) {
        td_primary_send(c, w, NULL); /* its fast case, checked above */
        count_send(w, count > 0 ? (size_t)count * (size_t)tds.tc_size : 0);
        tds.m.n_cat[TDR_CAT_SEND]++; /* what tds_tstop counts; the time is sampled in count_nohdr */
        tds.tleft--;
    } else if (dest != MPI_PROC_NULL && !tds_dtnull_refused(type, 0)) {
        count_nohdr(count, type, dest, tag, comm);
    }
    if (!req)
        return send_wire(mode, buf, count, type, dest, tag, comm);
    return (*nb_send[mode])(buf, count, type, dest, tag, comm, req);
}

/* Each entry point tries send_fast inline (the mode a constant, the PMPI
 * call a direct one) and hands anything else to the general path; a
 * header-free job takes send_nohdr instead. The entry point itself only
 * chooses, so both of its paths are sibling calls (a jump, no frame of
 * its own: its prologue cost as much as the header-free send's work). */
#define SEND_PATHS(Name, mode, bparam)                                                                            \
    static int __attribute__((noinline)) nohdr_##Name(const void *bparam, int count, MPI_Datatype datatype,       \
                                                      int dest, int tag, MPI_Comm comm)                            \
    {                                                                                                             \
        return send_nohdr(mode, bparam, count, datatype, dest, tag, comm, NULL);                                  \
    }                                                                                                             \
    static int __attribute__((noinline)) hdr_##Name(const void *bparam, int count, MPI_Datatype datatype,         \
                                                    int dest, int tag, MPI_Comm comm)                              \
    {                                                                                                             \
        int rc;                                                                                                   \
        if (send_fast(mode, bparam, count, datatype, dest, tag, comm, NULL, &rc))                                 \
            return rc;                                                                                            \
        return send_blocking(mode, bparam, count, datatype, dest, tag, comm);                                     \
    }                                                                                                             \
    int tds_body_##Name(const void *bparam, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)   \
    {                                                                                                             \
        if (tds.nohdr)                                                                                            \
            return nohdr_##Name(bparam, count, datatype, dest, tag, comm);                                        \
        return hdr_##Name(bparam, count, datatype, dest, tag, comm);                                              \
    }
#define ISEND_PATHS(IName, mode)                                                                                  \
    static int __attribute__((noinline)) nohdr_##IName(const void *buf, int count, MPI_Datatype datatype,         \
                                                       int dest, int tag, MPI_Comm comm, MPI_Request *request)    \
    {                                                                                                             \
        return send_nohdr(mode, buf, count, datatype, dest, tag, comm, request);                                  \
    }                                                                                                             \
    static int __attribute__((noinline)) hdr_##IName(const void *buf, int count, MPI_Datatype datatype,           \
                                                     int dest, int tag, MPI_Comm comm, MPI_Request *request)      \
    {                                                                                                             \
        int rc;                                                                                                   \
        if (send_fast(mode, buf, count, datatype, dest, tag, comm, request, &rc))                                 \
            return rc;                                                                                            \
        return send_post(mode, 0, buf, count, datatype, dest, tag, comm, request);                                \
    }                                                                                                             \
    int tds_body_##IName(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,     \
                         MPI_Request *request)                                                                    \
    {                                                                                                             \
        if (tds.nohdr)                                                                                            \
            return nohdr_##IName(buf, count, datatype, dest, tag, comm, request);                                 \
        return hdr_##IName(buf, count, datatype, dest, tag, comm, request);                                       \
    }
#define SEND_BODIES(Name, IName, mode)                                                                            \
    SEND_PATHS(Name, mode, buf)                                                                                   \
    ISEND_PATHS(IName, mode)                                                                                      \
    int tds_body_##Name##_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,              \
                               MPI_Comm comm, MPI_Request *request)                                               \
    {                                                                                                             \
        return send_post(mode, 1, buf, count, datatype, dest, tag, comm, request);                                \
    }

SEND_BODIES(Send, Isend, MODE_STD)
SEND_BODIES(Bsend, Ibsend, MODE_B)
SEND_BODIES(Ssend, Issend, MODE_S)
/* Rsend's prototype names its buffer ibuf in Open MPI's mpi.h */
SEND_PATHS(Rsend, MODE_R, ibuf)
ISEND_PATHS(Irsend, MODE_R)
int tds_body_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                        MPI_Request *request)
{
    return send_post(MODE_R, 1, buf, count, datatype, dest, tag, comm, request);
}

/* Buffered sends carry tds.hdr_len more bytes than the program sized its
 * buffer for; attach a larger buffer instead, with room for one header per
 * message that can possibly fit (each needs at least MPI_BSEND_OVERHEAD). */
/* the next layer's attach of n bytes: the MPI-4.0 form when the program
 * called it or an int cannot say n (only where the library has it:
 * buffer_attach) */
static int attach(void *buffer, MPI_Count n, int large)
{
    if (large || n > INT_MAX)
        return PMPI_Buffer_attach_c(buffer, n);
    return PMPI_Buffer_attach(buffer, (int)n);
}

/* MPI_Buffer_attach and MPI_Buffer_attach_c (large) */
static int buffer_attach(void *buffer, MPI_Count size, int large)
{
    if (tds.bsend_ours || tds.nohdr || size < 0) /* MPI's own error: already attached; header-free: no extra bytes */
        return attach(buffer, size, large);
    size_t extra = ((size_t)size / MPI_BSEND_OVERHEAD + 1) * (size_t)(tds.hdr_len + 16);
    /* an int-sized buffer that the headers take over INT_MAX: MPI-4.0's
     * form where the library has it, else the program's buffer as it is */
    int fits = (size_t)size + extra <= INT_MAX || large || tds_real_Buffer_attach_c;
    void *ours = fits ? malloc((size_t)size + extra) : NULL;
    if (!ours)
        return attach(buffer, size, large);
    int rc = attach(ours, (MPI_Count)((size_t)size + extra), large);
    if (rc != MPI_SUCCESS) {
        free(ours);
        return rc;
    }
    tds.bsend_ours = ours;
    tds.bsend_user = buffer;
    tds.bsend_user_size = size;
    return rc;
}

/* MPI_Buffer_detach and MPI_Buffer_detach_c (large; *size an int otherwise) */
static int buffer_detach(void *buffer, void *size, int large)
{
    int rc;
    void *p = NULL;
    MPI_Count n = 0;
    if (!tds.bsend_ours) {
        if (large)
            return PMPI_Buffer_detach_c(buffer, size);
        return PMPI_Buffer_detach(buffer, size);
    }
    if (tds_real_Buffer_detach_c) {
        rc = PMPI_Buffer_detach_c(&p, &n);
    } else {
        int in = 0;
        rc = PMPI_Buffer_detach(&p, &in);
    }
    if (rc != MPI_SUCCESS)
        return rc;
    free(tds.bsend_ours);
    tds.bsend_ours = NULL;
    *(void **)buffer = tds.bsend_user;
    if (large)
        *(MPI_Count *)size = tds.bsend_user_size;
    else /* attached with the MPI-4.0 form: MPI-4.0 says MPI_UNDEFINED where it does not fit */
        *(int *)size = tds.bsend_user_size > INT_MAX ? MPI_UNDEFINED : (int)tds.bsend_user_size;
    return rc;
}

int tds_body_Buffer_attach(void *buffer, int size)
{
    return buffer_attach(buffer, size, 0);
}
int tds_body_Buffer_detach(void *buffer, int *size)
{
    return buffer_detach(buffer, size, 0);
}
int tds_body_Buffer_attach_c(void *buffer, MPI_Count size)
{
    return buffer_attach(buffer, size, 1);
}
int tds_body_Buffer_detach_c(void *buffer, MPI_Count *size)
{
    return buffer_detach(buffer, size, 1);
}

/* ---------------------------------------------------------------- receives */

/* what recv_finish and tds_recv_fast read of a receive */
static inline void recv_fields(tds_rq *q, void *buf, MPI_Datatype type, MPI_Comm comm, size_t ub, int tsize,
                               uint8_t plain)
{
    q->kind = TDS_RQ_RECV;
    q->buf = buf;
    q->type = type;
    q->comm = comm;
    q->ubytes = ub;
    q->tsize = tsize;
    q->plain = plain;
    /* the world ranks of the communicator must survive MPI_Comm_free while
     * the receive is pending (tds_rq_drop_refs lets go); another job's
     * messages come in as written, into the program's buffer */
    q->foreign = 0;
    if (__builtin_expect(comm != MPI_COMM_WORLD, 0)) { /* q is fresh: no map held yet */
        q->cmap = tds_cmap_get(comm);
        q->foreign = (uint8_t)q->cmap[TDS_MAP_FOREIGN];
    }
    /* A derived receive type always takes the datatype layout: in a
     * contiguous bounce buffer, Open MPI 4.1.4's single-copy path (vader
     * CMA) writes a truncated rendezvous message whole, past the buffer
     * (natively it does so only into contiguous receive buffers; found by
     * tests/diff). Its struct type also keeps the program's type alive if
     * the program frees it while the receive is pending. */
    q->copy = !tds.nohdr && !q->foreign &&
              (TDS_BYTES_INTO_STRUCT ? ub <= tds.copy_max && plain : send_copies(buf, ub, plain));
    if (!TDS_BYTES_INTO_STRUCT && q->copy && !plain && ub) {
        /* unpacked at completion: the program may free its type before */
        PMPI_Type_dup(type, &q->type);
        q->owns_type = TDS_OWN_TYPE;
    }
}

/* recv_fields for the flat fast paths of tds_body_Irecv: a predefined
 * contiguous type whose layout they chose (copy: the bounce buffer, or the
 * program's buffer in header-free mode); on MPI_COMM_WORLD (the common
 * case) only the fields recv_finish reads, without recv_fields' layout
 * choice and communicator map (issue 28: tests/perf/icount.sh) */
static inline __attribute__((always_inline)) void recv_fields_fast(tds_rq *q, void *buf, MPI_Datatype type,
                                                                   MPI_Comm comm, size_t ub, uint8_t copy)
{
    if (__builtin_expect(comm != MPI_COMM_WORLD, 0)) {
        recv_fields(q, buf, type, comm, ub, tds.tc_size, 1);
        q->copy = copy;
        return;
    }
    q->kind = TDS_RQ_RECV;
    q->buf = buf;
    q->type = type;
    q->comm = comm;
    q->ubytes = ub;
    q->tsize = tds.tc_size;
    q->plain = 1; /* q->foreign is 0 from tds_rq_new */
    q->copy = copy;
}

/* prepare q for a receive into (buf, count, type) and return what to post;
 * only what recv_finish reads is stored (inlined: the fast path of every
 * receive) */
static inline __attribute__((always_inline)) void recv_layout(tds_rq *q, void *buf, int count, MPI_Datatype type,
                                                              MPI_Comm comm, void **wbuf, int *wcount,
                                                              MPI_Datatype *wtype)
{
    int tsize;
    uint8_t plain;
    size_t ub = type_bytes(count, type, &tsize, &plain);
    recv_fields(q, buf, type, comm, ub, tsize, plain);
    if (tds.nohdr || q->foreign) { /* the program's own buffer (layout_done frees nothing) */
        *wbuf = buf;
        *wcount = count;
        *wtype = type;
    } else if (q->copy) {
        *wcount = (int)(tds.hdr_len + q->ubytes);
        *wtype = MPI_BYTE;
        if (__builtin_expect(q->ubytes > TDS_WIRE_MAX, 0)) { /* layout_done frees the type */
            big_bounce(q, TDS_HDR_MAX + q->ubytes);
            *wcount = 1;
            *wtype = big_type((MPI_Count)(tds.hdr_len + q->ubytes), MPI_BYTE);
        }
        *wbuf = rq_bounce(q, TDS_HDR_MAX + q->ubytes);
        *(uint8_t *)q->bounce = 0; /* no header until MPI writes one (MPICH writes nothing when it truncates) */
    } else {
        q->hdr[0] = 0;
        *wbuf = MPI_BOTTOM;
        *wcount = 1;
        *wtype = wire_type(q->hdr, buf, count, type);
    }
}

static void layout_done(tds_rq *q, MPI_Datatype *wtype)
{
    if (!tds.nohdr && !q->foreign && (!q->copy || *wtype != MPI_BYTE))
        PMPI_Type_free(wtype);
}

/* A completed receive (or a probe) without tdshim's header, not a
 * truncated one (lost_header counts those: MPICH 4.0 over UCX writes nothing
 * of a truncated message, its status giving the size of the whole wire
 * message): a message from a rank not under tdshim, which MPI_Init's
 * agreement cannot see. Never fatal (README "Limitations"):
 * warned once; the status keeps MPI's error and gets the program's size
 * (the wire size less the header, as natively); the buffer is what MPI
 * left; the message is not counted, so detection may not complete (never
 * early). */
static void __attribute__((noinline, cold)) no_header(MPI_Status *st, size_t bytes, MPI_Comm comm)
{
    tds.m.nohdr_msgs++;
    if (!tds.warned_trunc) {
        tds.warned_trunc = 1;
        char from[MPI_MAX_OBJECT_NAME + 96];
        tds_describe_rank(from, sizeof from, comm, st->MPI_SOURCE);
        fprintf(stderr, "tdshim: rank %d: a %zu-byte message from %s (tag %d) reached the program without "
                        "tdshim's header: from a rank not under tdshim with the same TDSHIM_ALGO; it is not "
                        "counted and detection may not complete; "
                        "warned once\n",
                tds.rank, bytes, from, st->MPI_TAG);
    }
    if (bytes >= (size_t)tds.hdr_len)
        tds_st_set_bytes(st, bytes - (size_t)tds.hdr_len);
}

/* A receive completed on a message without tdshim's header. Truncated (more
 * bytes than the receive posted: MPICH 4.0 over UCX writes nothing of such
 * a message and its status has the whole wire size), it is a message of
 * ours whose header MPI dropped: a primary counted as received, its
 * piggyback lost (td_primary_recv_lost; issue 42: left uncounted, it left
 * the rank passive, so its next send was a false contract violation, and
 * the report's unreceived count wrong), or a message of an ignored tag.
 * Else it came from a rank not under tdshim (no_header): not counted, but a
 * completed receive all the same, activity. */
static void __attribute__((noinline, cold)) lost_header(tds_rq *q, MPI_Status *st, size_t bytes)
{
    MPI_Comm comm = q->cmap && q->cmap[TDS_MAP_DEAD] ? MPI_COMM_NULL : q->comm;
    if (bytes <= (size_t)tds.hdr_len + q->ubytes) {
        no_header(st, bytes, comm);
        tds_activity();
        return;
    }
    size_t ub = bytes - (size_t)tds.hdr_len;
    tds_st_set_bytes(st, ub);
    if (tds_env_kind(st->MPI_SOURCE, st->MPI_TAG, ub, comm) == TDS_HK_IGNORED) {
        tds.m.ignored_msgs++;
        return;
    }
    td_primary_recv_lost(&tds.core, tds_q_wrank(q, st->MPI_SOURCE)); /* as recv_finish */
    if (tds.core.error)
        tds_core_failed();
    tds.m.prim_recv++;
    tds.m.prim_recv_bytes += ub;
    tds_worked();
}

void tds_core_failed(void)
{
    tds_check_core();
}

/* A receive into a derived type, packed (outside Open MPI only, see
 * send_copies; a truncated message arrives without a header there, see
 * no_header): its n bytes are unpacked with the program's type (a duplicate
 * of it), so only bytes the type describes are written. A message whose
 * last element arrives in part (a send type other than the receive's) gets
 * it as natively, where MPI writes the basic elements that arrived whole
 * (unpacking whole elements only left it unwritten: MPICH's DTPools tests,
 * "expected 0 at ..., but found -1"; tests/diff's cases 700000). MPICH's
 * MPI_Unpack does exactly that with the part of an element, and says how
 * many bytes it took: fewer than arrived means the message ends inside a
 * basic element of the receive type, a type signature mismatch, which
 * MPICH reports natively as MPI_ERR_TRUNCATE: so does tdshim (returned,
 * tds_recv_err; tests/mpi/mpi4.sh). An MPI_Unpack that refuses part of an
 * element (an error, returned on tds.self) gets the element packed from
 * the receive buffer, overwritten in front with what arrived and unpacked
 * back. */
static int __attribute__((noinline)) unpack_derived(tds_rq *q, size_t n)
{
    const uint8_t *in = q->bounce + tds.hdr_len;
    size_t ts = (size_t)q->tsize;
    if (ts == INT_MAX) { /* perhaps more (type_bytes_slow): an MPI-4.0 large count */
        MPI_Count sz = 0;
        PMPI_Type_size_x(q->type, &sz);
        ts = (size_t)sz;
    }
    size_t whole = n / ts, part = n - whole * ts, pos = 0;
    unpack_any(in, n, &pos, q->buf, whole, q->type);
    if (!part)
        return MPI_SUCCESS;
    MPI_Count lb, extent;
    PMPI_Type_get_extent_x(q->type, &lb, &extent);
    uint8_t *el = (uint8_t *)q->buf + (MPI_Aint)whole * (MPI_Aint)extent;
    pos = 0;
    if (unpack_any(in + whole * ts, part, &pos, el, 1, q->type) == MPI_SUCCESS)
        return pos == part ? MPI_SUCCESS : MPI_ERR_TRUNCATE;
    uint8_t *tmp = malloc(ts);
    if (!tmp)
        tds_fatal("out of memory for a %zu-byte element", ts);
    pos = 0;
    pack_any(el, 1, q->type, tmp, ts, &pos);
    memcpy(tmp, in + whole * ts, part);
    pos = 0;
    unpack_any(tmp, ts, &pos, el, 1, q->type);
    free(tmp);
    return MPI_SUCCESS;
}

/* A receive completed: count it (once), unpack, and fix the status to the
 * program's view. Cancelled receives are not counted (DESIGN.md §1). */
static void __attribute__((noinline)) recv_finish(tds_rq *q, MPI_Status *st)
{
    if (tds_st_cancelled(st)) {
        tds.m.cancelled_recvs++;
        return;
    }
    double t0 = tds_tstart();
    size_t bytes = tds_st_bytes(st);
    if (__builtin_expect(q->foreign, 0)) { /* another job's: the status is MPI's, untouched */
        tds_xjob_recv(bytes);
        tds_tstop(TDR_CAT_RECV, t0);
        return;
    }
    const uint8_t *hdr = q->copy ? q->bounce : q->hdr; /* header-free: q->hdr, of which nothing is read */
    int kind = tds.nohdr ? tds_env_kind(st->MPI_SOURCE, st->MPI_TAG, bytes, q->comm)
                         : tds_hdr_kind(hdr, bytes, (size_t)tds.hdr_len);
    if (__builtin_expect(kind == TDS_HK_NONE, 0)) {
        lost_header(q, st, bytes);
        tds_tstop(TDR_CAT_RECV, t0);
        return;
    }
    size_t ub = bytes - (size_t)tds.hdr_len;
    if (kind == TDS_HK_NOTIFY) {
        tds.m.notifications++;
        td_notified(&tds.core);
        tds_t.me.work++; /* the thread that took the notification is active, as the rank is */
    } else if (kind == TDS_HK_IGNORED) {
        tds.m.ignored_msgs++;
    } else {
        int src = tds_q_wrank(q, st->MPI_SOURCE);
        if (!tds.nohdr && hdr[0] != tds.core.hdr_in) /* stamped with another episode (td_engine.c) */
            td_stamp_seen(&tds.core, src, st->MPI_TAG, hdr[0]);
        td_primary_recv(&tds.core, src, hdr + TDS_HDR_FIXED);
        if (tds.core.error)
            tds_core_failed();
        tds.m.prim_recv++;
        tds.m.prim_recv_bytes += ub; /* pb_bytes_recv: derived at finalize */
        tds_worked();
    }
    /* a truncated message (MPI_ERR_TRUNCATE; the status has its whole size,
     * as natively): MPI wrote only the receive's capacity */
    size_t n = ub < q->ubytes ? ub : q->ubytes;
    if (q->copy && n && q->plain && q->tsize == 1) {
        small_copy(q->buf, q->bounce + tds.hdr_len, n); /* bytes: the common case */
    } else if (q->copy && n && q->plain) {
        /* a plain type: its data is contiguous, a partial element included
         * (count MPI_UNDEFINED: natively its bytes land in the buffer too) */
        memcpy(q->buf, q->bounce + tds.hdr_len, n);
    } else if (q->copy && n && q->tsize > 0) {
        tds_t.recv_err = unpack_derived(q, n);
    }
    if (!tds.nohdr) /* header-free: the status is MPI's, untouched */
        tds_st_set_bytes(st, ub);
    tds_tstop(TDR_CAT_RECV, t0);
}

/* a probed message that is no work for the idle notion: on an ignored tag,
 * or empty under TDSHIM_IGNORE_EMPTY (st already fixed to the user's count;
 * MPI_STATUS_IGNORE: unknown, counted as found) */
static int probe_ignorable(const MPI_Status *st)
{
    if (st == MPI_STATUS_IGNORE || (!tds.cf.nignore && !tds.cf.ignore_empty))
        return 0;
    return tds_tag_ignored(st->MPI_TAG) || (tds.cf.ignore_empty && tds_st_bytes(st) == 0);
}

/* the program's view of a probed message: its own byte count, and not
 * cancelled (MPI's definition: MPICH 4.0's probes leave the flag as they
 * found it, so a program's uninitialised status showed a cancelled probe,
 * issue 26) */
static void __attribute__((noinline, cold)) probe_armed(const MPI_Status *st, MPI_Comm comm)
{
    /* a probe that finds the notification's envelope: the program saw it
     * and may leave its loop before it receives it (td_engine.c, send-after) */
    if (tds.cf.notify == TDS_NOTIFY_TAG && st->MPI_TAG == tds.cf.notify_tag && st->MPI_SOURCE == tds.rank &&
        comm == MPI_COMM_WORLD)
        td_saw_notification(&tds.core);
}
/* inline: a found MPI_Iprobe's (the armed core's check and a missing
 * header out of line) */
static inline __attribute__((always_inline)) void fix_probe_status(MPI_Status *st, MPI_Comm comm)
{
    if (st == MPI_STATUS_IGNORE || st->MPI_SOURCE == MPI_PROC_NULL)
        return;
    if (__builtin_expect(tds.core.armed, 0))
        probe_armed(st, comm);
    tds_st_set_uncancelled(st);
    if (tds.nohdr || tds_comm_foreign(comm))
        return;
    size_t bytes = tds_st_bytes(st);
    if (bytes < (size_t)tds.hdr_len)
        no_header(st, bytes, comm);
    else
        tds_st_set_bytes(st, bytes - (size_t)tds.hdr_len);
}

/* a receive finished by MPI_Request_get_status completes again: the
 * program's view of its message as then, and MPI_ERROR as MPI left it in
 * this call (the one field a later call may treat differently) */
static void saved_status(const tds_rq *q, MPI_Status *st)
{
    int err = st->MPI_ERROR;
    *st = q->saved;
    st->MPI_ERROR = err;
}

/* MPI_Request_get_status: the receive is finished now, once; later
 * completion calls return the same status */
void tds_finish_early(tds_rq *q, MPI_Status *st)
{
    if (q->kind != TDS_RQ_RECV || (q->persistent && !q->active))
        return;
    if (__builtin_expect(q->part != 0, 0)) { /* partitioned: the status stays MPI's (tds_part_done) */
        if (!q->finished)
            tds_part_done(q, st);
        q->finished = 1;
        return;
    }
    if (!q->finished) {
        recv_finish(q, st);
        q->finished = 1;
        q->saved = *st;
    } else {
        saved_status(q, st);
    }
}

void tds_complete_slow(tds_rq *q, MPI_Status *st)
{
    if (q->persistent && !q->active)
        return; /* inactive persistent request: MPI returned an empty status */
    if (__builtin_expect(q->part != 0, 0)) { /* partitioned: the program's status is MPI's (tds_part_done) */
        if (!q->finished)
            tds_part_done(q, st);
        q->finished = q->active = 0;
        return;
    }
    if (q->kind == TDS_RQ_RECV) {
        if (q->finished)
            saved_status(q, st); /* finished by MPI_Request_get_status already */
        else
            recv_finish(q, st);
    } else {
        if (tds_st_cancelled(st) && !tds.warned_cancel && !q->foreign) {
            /* the core has no way to take a counted message back: the
             * algorithm will wait for a message that never arrives */
            tds.warned_cancel = 1;
            fprintf(stderr, "tdshim: rank %d: a send was cancelled; termination detection counted it and "
                            "may never announce\n", tds.rank);
        }
    }
    q->finished = 0;
    if (q->persistent) {
        q->active = 0;
        return;
    }
    tds_rq_unlink(q);
    tds_rq_release(q);
}

/* Blocking receive: a polling loop, so a rank waiting here is passive and
 * keeps the protocol progressing (DESIGN.md §1). */
static inline __attribute__((always_inline)) int wait_recv(tds_rq *q, MPI_Request *r, MPI_Status *status,
                                                           int passive)
{
    MPI_Status st;
    tds_status_seed(&st, status);
    int done = 0, rc;
    tds_wait w = tds_wait_begin(passive);
    while ((rc = PMPI_Test(r, &done, &st)) == MPI_SUCCESS && !done)
        tds_wait_step(&w);
    if (done && !tds_recv_fast(q, &st)) { /* also on truncation: the message was consumed */
        recv_finish(q, &st);
        rc = tds_recv_err(rc);
    }
    tds_status_out(status, &st);
    return rc;
}

/* the entry of blocking receives (tds_t.brq) is reused, never released: it
 * gives back the communicator's map it took (recv_fields) when the call
 * ends, so the next receive on MPI_COMM_WORLD finds none */
static inline void brq_done(tds_rq *q)
{
    if (__builtin_expect(q->cmap != NULL || q->owns_type, 0))
        tds_rq_drop_refs(q);
}

int tds_body_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                  MPI_Status *status)
{
    if (source == MPI_PROC_NULL || tds_dtnull_refused(datatype, 1))
        return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
    tds_rq *q = &tds_t.brq;
    void *wbuf;
    int wcount;
    MPI_Datatype wtype;
    MPI_Request r;
    recv_layout(q, buf, count, datatype, comm, &wbuf, &wcount, &wtype);
    int rc = PMPI_Irecv(wbuf, wcount, wtype, source, tag, comm, &r);
    layout_done(q, &wtype);
    if (rc == MPI_SUCCESS) {
        tds_t.brq_wait = &r; /* TDSHIM_NOTIFY=exit while waiting cancels it (exit_now) */
        rc = wait_recv(q, &r, status, 1);
        tds_t.brq_wait = NULL;
    }
    brq_done(q);
    return rc;
}

/* the receive of q was posted with result rc: enter it, or give it back */
static inline int recv_posted(tds_rq *q, int rc, int persistent, MPI_Request *request)
{
    if (__builtin_expect(rc != MPI_SUCCESS, 0)) {
        tds_rq_release(q);
        return rc;
    }
    q->active = !persistent;
    tds_rq_insert(q);
    *request = q->req;
    return MPI_SUCCESS;
}

static inline __attribute__((always_inline)) int recv_post(int persistent, void *buf, int count, MPI_Datatype datatype, int source, int tag,
                     MPI_Comm comm, MPI_Message *message, MPI_Request *request)
{
    tds_rq *q = tds_rq_new();
    void *wbuf;
    int wcount, rc;
    MPI_Datatype wtype;
    recv_layout(q, buf, count, datatype, comm, &wbuf, &wcount, &wtype);
    q->persistent = (uint8_t)persistent;
    q->tag = tag; /* the idle notions' scope (tds_poll_scope) */
    if (message)
        rc = PMPI_Imrecv(wbuf, wcount, wtype, message, &q->req);
    else if (persistent)
        rc = PMPI_Recv_init(wbuf, wcount, wtype, source, tag, comm, &q->req);
    else
        rc = PMPI_Irecv(wbuf, wcount, wtype, source, tag, comm, &q->req);
    layout_done(q, &wtype);
    return recv_posted(q, rc, persistent, request);
}

static int __attribute__((noinline)) irecv_general(void *buf, int count, MPI_Datatype datatype, int source,
                                                   int tag, MPI_Comm comm, MPI_Request *request)
{
    if (source == MPI_PROC_NULL || tds_dtnull_refused(datatype, 1))
        return PMPI_Irecv(buf, count, datatype, source, tag, comm, request);
    return recv_post(0, buf, count, datatype, source, tag, comm, NULL, request);
}

/* The receive of almost every small message, flat like send_fast: the
 * copy layout of the type seen last into a recycled entry whose bounce
 * buffer is large enough (recv_post's case, without its layout choice);
 * anything else out of line. */
int tds_body_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                   MPI_Request *request)
{
    size_t ub = count > 0 ? (size_t)count * (size_t)tds.tc_size : 0;
    tds_rq *q = tds.rq_free;
    if (tds.nohdr) { /* into the program's buffer: only the entry to find at completion */
        if (__builtin_expect(q == NULL || source == MPI_PROC_NULL, 0))
            return irecv_general(buf, count, datatype, source, tag, comm, request);
        q = tds_rq_new();
        recv_fields_fast(q, buf, datatype, comm, ub, 0);
        q->tag = tag;
        int rc = PMPI_Irecv(buf, count, datatype, source, tag, comm, &q->req);
        return recv_posted(q, rc, 0, request);
    }
    if (__builtin_expect(comm != MPI_COMM_WORLD, 0) && tds_comm_foreign(comm))
        return irecv_general(buf, count, datatype, source, tag, comm, request);
    if (!(datatype == tds.tc_type && ub <= tds.copy_max && q && source != MPI_PROC_NULL &&
          TDS_HDR_MAX + ub <= q->bounce_cap))
        return irecv_general(buf, count, datatype, source, tag, comm, request);
    q = tds_rq_new();
    recv_fields_fast(q, buf, datatype, comm, ub, 1);
    q->tag = tag;
    *(uint8_t *)q->bounce = 0; /* see recv_layout */
    int rc = PMPI_Irecv(q->bounce, tds.hdr_len + (int)ub, MPI_BYTE, source, tag, comm, &q->req);
    return recv_posted(q, rc, 0, request);
}

/* ------------------------------------------------ flat entries (issue 28)
 * The entry points MPI_Send, MPI_Isend, MPI_Recv and MPI_Irecv jump through
 * a pointer (gen_wrappers.py, kind `fast`). While tds.fast (single-threaded
 * use, no PMPI tool after tdshim) in header-free mode with nothing to look
 * at per message (tds.nh_slow: ignored tags, empty messages, call sites),
 * they are the functions below: each checks the common case in a few
 * compares and, for anything else, hands the call unchanged to the general
 * entry (tds_wrap_<Name>: re-entry guard, lock, tds_body_<Name>) by a tail
 * call. Neither keeps a frame of its own on the send side (the count is
 * made in registers, then a tail call into MPI); the receives keep no
 * request entry (tds_hset). The re-entry guard is read, never written: a
 * flat entry holds no state across the MPI call it makes, and only the
 * general entries make calls that may come back (a tool's wrapper, the
 * MPI library's own use of MPI_*: those still pass straight through).
 * Counting is what send_nohdr and tds_recv_fast_nohdr do (DESIGN.md §4,
 * header-free mode); the sampled call of the timer, an inactive or clean
 * core (td_primary_send's slow case), a derived type, the notification's
 * envelope, a communicator other than MPI_COMM_WORLD, its last copy seen
 * (tds.fcomm, tds_flat_comm) and the last other intracommunicator of this
 * job's processes seen (tds.xcomm: its sends through FLAT_XSEND), or
 * MPI_PROC_NULL take the general entry (through FLAT_MISS, where a
 * predefined type other than the cached one enters the type cache and the
 * flat entry runs again).
 */
/* (the communicator is checked first, on its own: see FLAT_XSEND) */
static inline __attribute__((always_inline)) int flat_send_ok(int count, MPI_Datatype type, int dest, int tag,
                                                              int ntag)
{
    const td_ctx *c = &tds.core;
    return __builtin_expect(type == tds.tc_type && (unsigned)dest < (unsigned)tds.size && count >= 0 &&
                                (!ntag || tag != tds.nenv_tag) && (c->active & c->dirty) && !tds_inside,
                            1);
}
/* the sample countdown, last of the checks (tleft >= 1): 0 when this call
 * is the timed one, which the general entry makes (tleft back at 1) */
static inline __attribute__((always_inline)) int flat_untimed(void)
{
    if (__builtin_expect(--tds.tleft != 0, 1))
        return 1;
    tds.tleft = 1;
    return 0;
}
/* count_send without tds_worked: a single-threaded rank's idle notions see
 * its sends and receives by their counts (tds_init.c, poll_run) */
static inline __attribute__((always_inline)) void flat_count(int dest, size_t ub)
{
    tds.sent_to[(unsigned)dest]++; /* 0 <= dest < size (checked): zero-extended in place, no register */
    tds.m.prim_sent++;
    tds.m.prim_sent_bytes += ub;
    tds.m.n_cat[TDR_CAT_SEND]++; /* what tds_tstop counts; the time is sampled on the general path */
}
/* header-free: the elements, not the bytes (count >= 0, of the cached
 * type: tds.tc_elems, tds_sent_bytes_fold) */
static inline __attribute__((always_inline)) void flat_count_send(int dest, int count)
{
    tds.core.sent++; /* td_primary_send's fast case: pb_static, no piggyback (tds_fast_select) */
    tds.sent_to[(unsigned)dest]++;
    tds.m.prim_sent++;
    tds.tc_elems += (unsigned)count;
    tds.m.n_cat[TDR_CAT_SEND]++;
}
/* ntag: TDSHIM_NOTIFY=tag:N header-free, whose notifications share an
 * envelope with the program's messages (tds.nenv_tag): a variant with
 * that check, the others without it */
/* FLAT_MISS: what a flat entry hands on when its checks fail. ENTRY_miss:
 * the other type cached (type_cache_swap, no call, so no frame) and the
 * flat entry again; else ENTRY_other (FLAT_OTHER, or the entry's own
 * function): another plain type taken into the cache (type_cache_set) and
 * the flat entry again, or the general entry. After a change the type is
 * the cached one, so the flat entry cannot come back here for it. */
#define FLAT_MISS(ENTRY, OTHER, PARAMS, ARGS)                                                                        \
    static int ENTRY PARAMS;                                                                                         \
    static int OTHER PARAMS;                                                                                         \
    static int __attribute__((noinline)) ENTRY##_miss PARAMS                                                        \
    {                                                                                                                \
        if (datatype == tds.tc_prev && datatype != tds.tc_type) {                                                    \
            type_cache_swap();                                                                                       \
            return ENTRY ARGS;                                                                                       \
        }                                                                                                            \
        return OTHER ARGS;                                                                                           \
    }
#define FLAT_OTHER(NAME, ENTRY, PARAMS, ARGS)                                                                        \
    FLAT_MISS(ENTRY, ENTRY##_other, PARAMS, ARGS)                                                                    \
    static int __attribute__((noinline, cold)) ENTRY##_other PARAMS                                                 \
    {                                                                                                                \
        if (datatype != tds.tc_type && type_cache_set(datatype))                                                     \
            return ENTRY ARGS;                                                                                       \
        return tds_wrap_##NAME ARGS;                                                                                 \
    }
/* FLAT_XSEND: a flat entry's send on a communicator that is neither
 * MPI_COMM_WORLD nor its copy: on tds.xcomm, the destination's world rank
 * (dest < xn: no other is translated, xn = 0 once it is freed) is what the
 * counts take (W), and the entry's checks and work follow as for
 * MPI_COMM_WORLD (a notification's envelope is on MPI_COMM_WORLD only: no
 * tag to check here); anything else is the general entry's. A miss goes to
 * the entry's own ENTRY_miss, whose flat entry comes back here. */
#define FLAT_XSEND(NAME, ENTRY, PARAMS, ARGS, BODY)                                                                 \
    static int __attribute__((noinline)) ENTRY##_x PARAMS                                                           \
    {                                                                                                                \
        if (__builtin_expect(comm != tds.xcomm || (unsigned)dest >= tds.xn, 0))                                      \
            return tds_wrap_##NAME ARGS;                                                                             \
        int w = tds.xmap[dest];                                                                                      \
        BODY                                                                                                         \
    }
/* a plain flat send to world rank W, from ENTRY (its miss: ENTRY_miss) */
#define FLAT_PLAIN_SEND(ENTRY, W, NTAG, CALL, ARGS)                                                                  \
    if (!flat_send_ok(count, datatype, W, tag, NTAG) || !flat_untimed())                                             \
        return ENTRY##_miss ARGS;                                                                                    \
    flat_count_send(W, count);                                                                                       \
    return CALL ARGS;
#define FLAT_SENDS(SUFFIX, NTAG)                                                                                     \
    FLAT_OTHER(Send, flat_Send##SUFFIX,                                                                               \
              (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm),                 \
              (buf, count, datatype, dest, tag, comm))                                                               \
    FLAT_XSEND(Send, flat_Send##SUFFIX,                                                                               \
              (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm),                 \
              (buf, count, datatype, dest, tag, comm),                                                               \
              {FLAT_PLAIN_SEND(flat_Send##SUFFIX, w, 0, PMPI_Send, (buf, count, datatype, dest, tag, comm))})        \
    static int flat_Send##SUFFIX(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,               \
                                 MPI_Comm comm)                                                                      \
    {                                                                                                                \
        if (__builtin_expect(!tds_flat_comm(comm), 0))                                                               \
            return flat_Send##SUFFIX##_x(buf, count, datatype, dest, tag, comm);                                     \
        FLAT_PLAIN_SEND(flat_Send##SUFFIX, dest, NTAG, PMPI_Send, (buf, count, datatype, dest, tag, comm))           \
    }                                                                                                                \
    FLAT_OTHER(Isend, flat_Isend##SUFFIX,                                                                             \
              (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,                  \
               MPI_Request *request),                                                                                \
              (buf, count, datatype, dest, tag, comm, request))                                                      \
    FLAT_XSEND(Isend, flat_Isend##SUFFIX,                                                                             \
              (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,                  \
               MPI_Request *request),                                                                                \
              (buf, count, datatype, dest, tag, comm, request),                                                      \
              {FLAT_PLAIN_SEND(flat_Isend##SUFFIX, w, 0, PMPI_Isend,                                                 \
                               (buf, count, datatype, dest, tag, comm, request))})                                   \
    static int flat_Isend##SUFFIX(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,              \
                                  MPI_Comm comm, MPI_Request *request)                                               \
    {                                                                                                                \
        if (__builtin_expect(!tds_flat_comm(comm), 0))                                                               \
            return flat_Isend##SUFFIX##_x(buf, count, datatype, dest, tag, comm, request);                           \
        FLAT_PLAIN_SEND(flat_Isend##SUFFIX, dest, NTAG, PMPI_Isend, (buf, count, datatype, dest, tag, comm, request))\
    }
FLAT_SENDS(, 0)
FLAT_SENDS(_ntag, 1)

/* A flat receive was posted: its handle goes to the end of the ring
 * (tds_hset), inline in the entries. What is not that common case comes
 * here: MPI failed (the cell back to the free list), the request table is
 * not empty (a stale entry may share the handle), or the ring is full. */
static int __attribute__((noinline, cold)) flat_post_failed(int rc)
{
    tds_cell *c = tds.keep_cell;
    if (c) {
        c->next = tds.cells;
        tds.cells = c;
    }
    return rc;
}
/* MPI gave a new receive a handle that an entry of the table still has:
 * the entry is stale (MPI freed its request without the program's
 * MPI_Request_free: Open MPI 4.1 does so to a persistent receive whose
 * MPI_Wait reports an error, found by tests/diff). A live request of
 * ours never shares a handle with a receive, so the entry goes; left in
 * the table, it would be found first when the receive completes. */
static int __attribute__((noinline)) flat_post_rare(int rc, MPI_Request *request)
{
    if (rc != MPI_SUCCESS)
        return flat_post_failed(rc);
    for (tds_rq *q; (q = tds_rq_lookup(*request)) != NULL;) { /* one per failed wait: all stale */
        tds_rq_unlink(q);
        tds_rq_release(q);
    }
    tds_hs_post(*request, tds.keep_cell); /* a full ring goes into the slots first */
    return MPI_SUCCESS;
}

static int flat_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                      MPI_Request *request)
{
    if (__builtin_expect(!tds_flat_comm_rx(comm) || source == MPI_PROC_NULL || tds_inside, 0))
        return tds_wrap_Irecv(buf, count, datatype, source, tag, comm, request);
    int rc = PMPI_Irecv(buf, count, datatype, source, tag, comm, request);
    unsigned rn = tds.hs.rn;
    if (__builtin_expect(rc != MPI_SUCCESS || tds.rq_count != 0 || rn == TDS_HS_RING, 0))
        return flat_post_rare(rc, request); /* keep_cell: NULL, header-free */
    tds.hs.rk[rn] = *request; /* tds_hs_post, the ring not full; header-free: no cell (rv stays NULL) */
    tds.hs.rn = rn + 1;
    return MPI_SUCCESS;
}

/* a flat blocking receive whose message had not arrived: wait as
 * tds_body_Recv does (wait_recv: passive while waiting, the protocol kept
 * going, TDSHIM_NOTIFY=exit may cancel it); wire NULL: header-free */
static int __attribute__((noinline)) flat_recv_wait(MPI_Request *r, MPI_Status *st, const uint8_t *wire, void *buf,
                                                    size_t ub)
{
    tds_inside = 1;
    int done = 0, rc;
    tds_wait w = tds_wait_begin(1);
    tds_t.brq_wait = r;
    while ((rc = PMPI_Test(r, &done, st)) == MPI_SUCCESS && !done)
        tds_wait_step(&w);
    tds_t.brq_wait = NULL;
    if (done && wire)
        tds_wire_done(wire, buf, ub, tds.tc_size, st);
    else if (done)
        tds_plain_done(st);
    tds_inside = 0;
    return rc;
}

/* tds_plain_done for a blocking receive whose message was there at once:
 * nothing can have cancelled it (the program holds no request; only a
 * wait, flat_recv_wait, lets TDSHIM_NOTIFY=exit cancel one), the core has
 * no on_recv (tds_fast_select), and the notification's envelope is looked
 * at only where it can be a program's message (ntag) */
static void __attribute__((noinline, cold)) flat_recv_wake(void)
{
    td_recv_activity(&tds.core);
    if (tds.core.error != 0)
        tds_core_failed();
}
static inline __attribute__((always_inline)) void flat_recv_count(MPI_Status *st, int ntag)
{
    if (__builtin_expect((ntag && st->MPI_TAG == tds.nenv_tag) || !flat_untimed(), 0)) {
        tds_plain_slow(st); /* the timed call (tleft left at 1), or the envelope */
        return;
    }
    tds.core.recvd++;
    if (__builtin_expect(!(tds.core.active & tds.core.dirty), 0))
        flat_recv_wake();
    tds.m.n_cat[TDR_CAT_RECV]++;
    tds.m.prim_recv++;
    tds.m.prim_recv_bytes += tds_st_bytes(st);
}
#define FLAT_RECV(SUFFIX, NTAG)                                                                                      \
    static int flat_Recv##SUFFIX(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,   \
                                 MPI_Status *status)                                                                 \
    {                                                                                                                \
        if (__builtin_expect(!tds_flat_comm_rx(comm) || source == MPI_PROC_NULL || tds_inside, 0))                  \
            return tds_wrap_Recv(buf, count, datatype, source, tag, comm, status);                                   \
        MPI_Request r;                                                                                               \
        MPI_Status st;                                                                                               \
        tds_status_seed(&st, status);                                                                                \
        int done = 0, rc = PMPI_Irecv(buf, count, datatype, source, tag, comm, &r);                                  \
        if (__builtin_expect(rc != MPI_SUCCESS, 0))                                                                  \
            return rc;                                                                                               \
        rc = PMPI_Test(&r, &done, &st);                                                                              \
        if (__builtin_expect(done, 1))                                                                               \
            flat_recv_count(&st, NTAG);                                                                              \
        else if (rc == MPI_SUCCESS)                                                                                  \
            rc = flat_recv_wait(&r, &st, NULL, NULL, 0);                                                             \
        tds_status_out(status, &st);                                                                                 \
        return rc;                                                                                                   \
    }
FLAT_RECV(, 0)
FLAT_RECV(_ntag, 1)

/* With a header (pb_static algorithms, copy layout, messages of at most
 * TDS_CELL_DATA bytes: send_fast's case): a send goes out of one buffer of
 * the rank's (tds.fsend, single-threaded), as send_fast's out of the
 * scratch buffer; a receive lands in a cell (tds.h), the blocking one in
 * the blocking receive's bounce buffer (tds_t.brq). */
#define TDS_FSEND (TDS_HDR_MAX + TDS_CELL_DATA)
/* the count fits a cell (no multiplication before the checks; a negative
 * one does not) */
static inline __attribute__((always_inline)) int flat_hdr_ok(int count, MPI_Datatype type, int dest)
{
    const td_ctx *c = &tds.core;
    return __builtin_expect(type == tds.tc_type && (unsigned)dest < (unsigned)tds.size &&
                                (unsigned)count <= tds.tc_cmax && (c->active & c->dirty) && !tds_inside &&
                                flat_untimed(),
                            1);
}
static inline __attribute__((always_inline)) uint8_t *flat_hdr_fill(const void *buf, int dest, size_t ub)
{
    uint8_t *b = tds.fsend;
    b[0] = tds.core.hdr_out;
    /* td_primary_send's fast case (flat_hdr_ok, pb_static): the
     * piggyback is pb_out, copied whole (the data overwrites the rest) */
    memcpy(b + TDS_HDR_FIXED, tds.core.pb_out, TD_PB_MAX);
    tds.core.sent++;
    cell_copy(b + tds.hdr_len, buf, ub);
    flat_count(dest, ub);
    return b;
}

FLAT_OTHER(Send, flat_hdr_Send, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm),
          (buf, count, datatype, dest, tag, comm))
/* the flat send with a header to world rank w (dest in comm) */
#define FLAT_HDR_SEND(W)                                                                                             \
    if (!flat_hdr_ok(count, datatype, W))                                                                            \
        return flat_hdr_Send_miss(buf, count, datatype, dest, tag, comm);                                           \
    size_t ub = (size_t)(unsigned)count * (size_t)(unsigned)tds.tc_size;                                            \
    uint8_t *b = flat_hdr_fill(buf, W, ub);                                                                          \
    return PMPI_Send(b, tds.hdr_len + (int)ub, MPI_BYTE, dest, tag, comm);
FLAT_XSEND(Send, flat_hdr_Send, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm),
           (buf, count, datatype, dest, tag, comm), { FLAT_HDR_SEND(w) })
static int flat_hdr_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    if (__builtin_expect(!tds_flat_comm(comm), 0))
        return flat_hdr_Send_x(buf, count, datatype, dest, tag, comm);
    FLAT_HDR_SEND(dest)
}

/* MPI still reads tds.fsend (a send not complete at once): the buffer goes
 * with an entry (send_keep), the entry's old bounce buffer becomes tds.fsend */
static void __attribute__((noinline, cold)) flat_keep(MPI_Request r)
{
    void *s = tds_t.scratch;
    size_t sc = tds_t.scratch_cap;
    tds_t.scratch = tds.fsend;
    tds_t.scratch_cap = TDS_FSEND;
    send_keep(tds_rq_new(), r, tds.keep_ub);
    void *n = tds_t.scratch;
    if (tds_t.scratch_cap < TDS_FSEND && !(n = realloc(n, TDS_FSEND)))
        tds_fatal("out of memory for a %d-byte message buffer", TDS_FSEND);
    tds.fsend = n;
    tds_t.scratch = s;
    tds_t.scratch_cap = sc;
}

FLAT_OTHER(Isend, flat_hdr_Isend,
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request),
          (buf, count, datatype, dest, tag, comm, request))
#define FLAT_HDR_ISEND(W)                                                                                            \
    if (!flat_hdr_ok(count, datatype, W))                                                                            \
        return flat_hdr_Isend_miss(buf, count, datatype, dest, tag, comm, request);                                 \
    size_t ub = (size_t)(unsigned)count * (size_t)(unsigned)tds.tc_size;                                            \
    uint8_t *b = flat_hdr_fill(buf, W, ub);                                                                          \
    tds.keep_ub = ub; /* for flat_keep: only the request is kept across the call */                                  \
    int rc = PMPI_Isend(b, tds.hdr_len + (int)ub, MPI_BYTE, dest, tag, comm, request);                              \
    if (__builtin_expect(rc == MPI_SUCCESS && !DONE_AT_ONCE(*request), 0))                                           \
        flat_keep(*request);                                                                                         \
    return rc;
FLAT_XSEND(Isend, flat_hdr_Isend,
           (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request),
           (buf, count, datatype, dest, tag, comm, request), { FLAT_HDR_ISEND(w) })
static int flat_hdr_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                          MPI_Request *request)
{
    if (__builtin_expect(!tds_flat_comm(comm), 0))
        return flat_hdr_Isend_x(buf, count, datatype, dest, tag, comm, request);
    FLAT_HDR_ISEND(dest)
}

/* the free list ran dry: 64 more cells (never freed: at most as many as
 * the receives a rank has had pending at once, plus 64) */
static void __attribute__((noinline, cold)) cell_refill(void)
{
    tds_cell *c = calloc(64, sizeof *c);
    if (!c)
        return;
    for (int i = 0; i < 63; i++)
        c[i].next = &c[i + 1];
    tds.cells = c;
}

/* the free list ran dry: 64 more cells, or another plain type, then as
 * flat_hdr_Irecv (out of memory, or anything but its common case: the
 * general path) */
FLAT_MISS(flat_hdr_Irecv, flat_hdr_irecv_other,
          (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request),
          (buf, count, datatype, source, tag, comm, request))
static int __attribute__((noinline, cold)) flat_hdr_irecv_other(void *buf, int count, MPI_Datatype datatype,
                                                                int source, int tag, MPI_Comm comm,
                                                                MPI_Request *request)
{
    if (!tds.cells)
        cell_refill();
    if (datatype != tds.tc_type)
        type_cache_set(datatype);
    if (!tds.cells || !tds_flat_comm_rx(comm) || source == MPI_PROC_NULL || datatype != tds.tc_type ||
        (unsigned)count > tds.tc_cmax || buf == MPI_BOTTOM || tds_inside)
        return tds_wrap_Irecv(buf, count, datatype, source, tag, comm, request);
    return flat_hdr_Irecv(buf, count, datatype, source, tag, comm, request);
}
/* a flat receive with a header: a cell from the free list, MPI's receive
 * into it, its handle and cell at the end of the ring (tds_hs_post) */
static int flat_hdr_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                          MPI_Request *request)
{
    tds_cell *c = tds.cells;
    /* the count fits a cell (no multiplication here; a negative one does not) */
    if (__builtin_expect(!tds_flat_comm_rx(comm) || source == MPI_PROC_NULL || datatype != tds.tc_type ||
                             (unsigned)count > tds.tc_cmax || buf == MPI_BOTTOM || tds_inside || !c,
                         0))
        return flat_hdr_Irecv_miss(buf, count, datatype, source, tag, comm, request);
    int tsize = tds.tc_size;
    size_t ub = (size_t)(unsigned)count * (size_t)tsize;
    tds.cells = c->next;
    c->buf = buf;
    c->ub = ub;
    c->tsize = tsize;
    c->wire[0] = 0; /* no header until MPI writes one (recv_layout) */
    int rc = PMPI_Irecv(c->wire, tds.hdr_len + (int)ub, MPI_BYTE, source, tag, comm, request);
    unsigned rn = tds.hs.rn;
    if (__builtin_expect(rc != MPI_SUCCESS || tds.rq_count != 0 || rn == TDS_HS_RING, 0)) {
        tds.keep_cell = c;
        return flat_post_rare(rc, request);
    }
    tds.hs.rk[rn] = *request; /* tds_hs_post, the ring not full */
    tds.hs.rv[rn] = c;
    tds.hs.rn = rn + 1;
    return MPI_SUCCESS;
}

FLAT_OTHER(Recv, flat_hdr_Recv,
          (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status *status),
          (buf, count, datatype, source, tag, comm, status))
static int flat_hdr_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                         MPI_Status *status)
{
    uint8_t *w = tds_t.brq.bounce; /* TDS_FSEND bytes at least (tds_fast_select) */
    if (__builtin_expect(!tds_flat_comm_rx(comm) || source == MPI_PROC_NULL || datatype != tds.tc_type ||
                             (unsigned)count > tds.tc_cmax || tds_t.brq.bounce_cap < TDS_FSEND || buf == MPI_BOTTOM ||
                             tds_inside,
                         0))
        return flat_hdr_Recv_miss(buf, count, datatype, source, tag, comm, status);
    size_t ub = (size_t)(unsigned)count * (size_t)(unsigned)tds.tc_size;
    MPI_Request r;
    MPI_Status st;
    tds_status_seed(&st, status);
    w[0] = 0;
    int done = 0, rc = PMPI_Irecv(w, tds.hdr_len + (int)ub, MPI_BYTE, source, tag, comm, &r);
    if (__builtin_expect(rc != MPI_SUCCESS, 0))
        return rc;
    rc = PMPI_Test(&r, &done, &st);
    if (__builtin_expect(done, 1))
        tds_wire_done(w, buf, ub, tds.tc_size, &st);
    else if (rc == MPI_SUCCESS)
        rc = flat_recv_wait(&r, &st, w, buf, ub);
    tds_status_out(status, &st);
    return rc;
}

/* a flat receive with a header that is not tds_wire_done's case:
 * recv_finish, on an entry describing it */
void tds_cell_slow(const uint8_t *wire, void *buf, size_t cub, int tsize, MPI_Status *st)
{
    tds_rq q;
    memset(&q, 0, sizeof q);
    q.kind = TDS_RQ_RECV;
    q.copy = q.plain = 1;
    q.bounce = (void *)wire;
    q.buf = buf;
    q.ubytes = cub;
    q.tsize = tsize;
    q.type = MPI_BYTE;
    q.comm = tds_flat_rx_comm(); /* a warning's, no_header: nothing else looks at it with a header */
    recv_finish(&q, st);
}

/* what recv_finish needs of a plain receive */
static tds_rq plain_rq;

void tds_plain_slow(MPI_Status *st)
{
    recv_finish(&plain_rq, st);
}

tds_rq *tds_hs_promote(long slot, MPI_Request r)
{
    tds_cell *c = tds.hs.slot[slot].v;
    tds_hs_drop(slot);
    tds_rq *q = tds_rq_new();
    recv_fields(q, NULL, MPI_BYTE, MPI_COMM_WORLD, 0, 1, 1);
    q->comm = tds_flat_rx_comm(); /* after recv_fields: no map is looked up (the source is never translated) */
    if (c) { /* the entry reads the cell MPI writes into; its own bounce buffer waits (tds_rq_drop_refs) */
        q->buf = c->buf;
        q->ubytes = c->ub;
        q->tsize = c->tsize;
        q->copy = 1;
        q->cell = c;
        q->cell_bounce = q->bounce;
        q->cell_cap = q->bounce_cap;
        q->bounce = c->wire;
        q->bounce_cap = sizeof c->wire;
    }
    q->req = r;
    q->active = 1;
    tds_rq_insert(q);
    return q;
}

void tds_fast_select(void)
{
    int on = tds.on && tds.fast && tds.core.pb_static;
    int flat = on && tds.nohdr && !tds.nh_slow && tds.core.pb_size == 0 && !tds.core.on_recv;
    /* with a header: send_fast's conditions (no ignored tags, no call
     * sites: fast_lim), and the copy layout for receives of a cell's size */
    int hdr = on && !tds.nohdr && tds.fast_lim && !tds.fast_min && tds.copy_max >= TDS_CELL_DATA &&
              td_recv_many_ok(&tds.core); /* a window's piggybacks to one call (tds_batch) */
    if (hdr && !tds.fsend && !(tds.fsend = malloc(TDS_FSEND)))
        hdr = 0;
    if (flat)
        recv_fields(&plain_rq, NULL, MPI_BYTE, MPI_COMM_WORLD, 0, 1, 1);
    if (hdr && !tds.cells)
        cell_refill();
    if (hdr) /* flat_hdr_Recv's wire buffer: a cell's bytes at least */
        (void)rq_bounce(&tds_t.brq, TDS_FSEND);
    int ntag = tds.nenv_tag >= 0;
    tds_ep_Send = flat ? (ntag ? flat_Send_ntag : flat_Send) : hdr ? flat_hdr_Send : tds_wrap_Send;
    tds_ep_Isend = flat ? (ntag ? flat_Isend_ntag : flat_Isend) : hdr ? flat_hdr_Isend : tds_wrap_Isend;
    /* a flat receive keeps no tag, which test and spin need to tell a
     * busy rank's poll from an idle one when the scope can exclude a
     * receive (tds_poll_scope; test_missed): those receives go general */
    int rx = !(tds_scoped() && (tds.cf.idle == TDS_IDLE_TEST || tds.cf.idle == TDS_IDLE_SPIN));
    tds_ep_Recv = flat ? (ntag ? flat_Recv_ntag : flat_Recv) : hdr ? flat_hdr_Recv : tds_wrap_Recv;
    tds_ep_Irecv = flat && rx ? flat_Irecv : hdr && rx ? flat_hdr_Irecv : tds_wrap_Irecv;
}

int tds_body_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                       MPI_Request *request)
{
    if (source == MPI_PROC_NULL || tds_dtnull_refused(datatype, 1))
        return PMPI_Recv_init(buf, count, datatype, source, tag, comm, request);
    return recv_post(1, buf, count, datatype, source, tag, comm, NULL, request);
}

/* The communicator of a matched message is not in MPI_Message, and the
 * receive needs it (world rank of the source): Mprobe/Improbe record it. */
static void mprobed_add(MPI_Message m, MPI_Comm comm)
{
    if (tds.nmprobed == tds.capmprobed) {
        int cap = tds.capmprobed ? 2 * tds.capmprobed : 8;
        struct tds_mprobed *v = realloc(tds.mprobed, (size_t)cap * sizeof *v);
        if (!v)
            tds_fatal("out of memory recording a matched message");
        tds.mprobed = v;
        tds.capmprobed = cap;
    }
    tds.mprobed[tds.nmprobed].msg = m;
    tds.mprobed[tds.nmprobed++].comm = comm;
}

static MPI_Comm mprobed_take(MPI_Message m)
{
    for (int i = 0; i < tds.nmprobed; i++) {
        if (tds.mprobed[i].msg == m) {
            MPI_Comm c = tds.mprobed[i].comm;
            tds.mprobed[i] = tds.mprobed[--tds.nmprobed];
            return c;
        }
    }
    tds_fatal("MPI_Mrecv/MPI_Imrecv of a message that MPI_Mprobe/MPI_Improbe did not return");
}

int tds_body_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Status *status)
{
    if (*message == MPI_MESSAGE_NO_PROC || *message == MPI_MESSAGE_NULL || tds_dtnull_refused(type, 1))
        return PMPI_Mrecv(buf, count, type, message, status);
    MPI_Request r;
    tds_rq *q = &tds_t.brq;
    void *wbuf;
    int wcount;
    MPI_Datatype wtype;
    recv_layout(q, buf, count, type, mprobed_take(*message), &wbuf, &wcount, &wtype);
    int rc = PMPI_Imrecv(wbuf, wcount, wtype, message, &r);
    layout_done(q, &wtype);
    if (rc == MPI_SUCCESS)
        rc = wait_recv(q, &r, status, 0); /* the message is already matched: no waiting for it */
    brq_done(q);
    return rc;
}

int tds_body_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Request *request)
{
    if (*message == MPI_MESSAGE_NO_PROC || *message == MPI_MESSAGE_NULL || tds_dtnull_refused(type, 1))
        return PMPI_Imrecv(buf, count, type, message, request);
    return recv_post(0, buf, count, type, MPI_ANY_SOURCE, MPI_ANY_TAG, mprobed_take(*message), message, request);
}

/* ---------------------------------------------------------------- probes */

/* what MPI_Iprobe does after MPI's call: the program's view of the
 * message, and the idle notion's turn (last: a tail call) */
static inline __attribute__((always_inline)) int iprobe_after(int rc, int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    if (rc != MPI_SUCCESS || source == MPI_PROC_NULL)
        return rc;
    int found = *flag; /* read once: fix_probe_status writes the status */
    if (found)
        fix_probe_status(status, comm);
    return tds_probe_poll_rc(tag, comm, status, found && !probe_ignorable(status), rc);
}
/* with tds_poll_enter's work or call sites: out of the common case's way
 * (its frame and clock reads) */
static int __attribute__((noinline, cold)) iprobe_timed(int source, int tag, MPI_Comm comm, int *flag,
                                                        MPI_Status *status)
{
    tds_poll_enter();
    double t0 = tds.m.sites ? tdr_now() : 0.0;
    int rc = PMPI_Iprobe(source, tag, comm, flag, status);
    if (rc != MPI_SUCCESS || source == MPI_PROC_NULL)
        return rc;
    iprobe_after(rc, source, tag, comm, flag, status);
    if (tds.m.sites)
        tdr_site_record(&tds.m, TDR_SITE_POLL, tdr_now() - t0);
    return rc;
}
int tds_body_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    if (__builtin_expect(tds_poll_enter_needed() || tds.m.sites, 0))
        return iprobe_timed(source, tag, comm, flag, status);
    return iprobe_after(PMPI_Iprobe(source, tag, comm, flag, status), source, tag, comm, flag, status);
}

int tds_body_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status)
{
    tds_poll_enter();
    double t0 = tds.m.sites ? tdr_now() : 0.0;
    MPI_Status st;
    tds_status_seed(&st, status);
    int rc = PMPI_Improbe(source, tag, comm, flag, message, &st);
    if (rc != MPI_SUCCESS || source == MPI_PROC_NULL) {
        tds_status_out(status, &st);
        return rc;
    }
    if (*flag) {
        fix_probe_status(&st, comm);
        mprobed_add(*message, comm);
    }
    tds_status_out(status, &st);
    tds_probe_poll_rc(tag, comm, &st, *flag && !probe_ignorable(&st), rc);
    if (tds.m.sites)
        tdr_site_record(&tds.m, TDR_SITE_POLL, tdr_now() - t0);
    return rc;
}

int tds_body_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    if (source == MPI_PROC_NULL)
        return PMPI_Probe(source, tag, comm, status);
    MPI_Status st;
    tds_status_seed(&st, status);
    int flag = 0, rc;
    tds_wait w = tds_wait_begin(1);
    while ((rc = PMPI_Iprobe(source, tag, comm, &flag, &st)) == MPI_SUCCESS && !flag)
        tds_wait_step(&w);
    if (flag)
        fix_probe_status(&st, comm);
    tds_status_out(status, &st);
    return rc;
}

int tds_body_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    if (source == MPI_PROC_NULL)
        return PMPI_Mprobe(source, tag, comm, message, status);
    MPI_Status st;
    tds_status_seed(&st, status);
    int flag = 0, rc;
    tds_wait w = tds_wait_begin(1);
    while ((rc = PMPI_Improbe(source, tag, comm, &flag, message, &st)) == MPI_SUCCESS && !flag)
        tds_wait_step(&w);
    if (flag) {
        fix_probe_status(&st, comm);
        mprobed_add(*message, comm);
    }
    tds_status_out(status, &st);
    return rc;
}

/* ---------------------------------------------------------------- combined */

int tds_body_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                      void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                      MPI_Status *status)
{
    MPI_Request sr;
    int rc = tds_body_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &sr);
    if (rc != MPI_SUCCESS)
        return rc;
    int rrc = tds_body_Recv(recvbuf, recvcount, recvtype, source, recvtag, comm, status);
    rc = tds_body_Wait(&sr, MPI_STATUS_IGNORE);
    return rrc != MPI_SUCCESS ? rrc : rc;
}

/* The data of a send-replace packed into q's bounce buffer, to be sent as
 * (q->bounce, *n, *t): MPI_PACKED, or for more than INT_MAX bytes (an
 * MPI-4.0 large count) one element of a contiguous type of them, which
 * the caller frees (*t != MPI_PACKED). */
static int pack_replace(tds_rq *q, const void *buf, int count, MPI_Datatype type, int *n, MPI_Datatype *t)
{
    size_t size, pos = 0;
    int rc;
    *t = MPI_PACKED;
#if TDS_BIG_BYTES
    MPI_Count psize = 0;
    rc = PMPI_Pack_size_c(count, type, tds.self, &psize);
#else
    int psize = 0;
    rc = PMPI_Pack_size(count, type, tds.self, &psize);
#endif
    if (rc != MPI_SUCCESS)
        return rc;
    size = psize > 0 ? (size_t)psize : 1;
    rc = pack_any(buf, (size_t)count, type, size > TDS_WIRE_MAX ? big_bounce(q, size) : rq_bounce(q, size), size,
                  &pos);
    *n = (int)pos;
    *t = MPI_PACKED;
    if (rc == MPI_SUCCESS && pos > INT_MAX) {
        *n = 1;
        *t = big_type((MPI_Count)pos, MPI_PACKED);
    }
    return rc;
}

/* the outgoing data is packed first (a copy is unavoidable: the receive
 * overwrites the buffer), then the exchange is a Sendrecv */
int tds_body_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
                              int recvtag, MPI_Comm comm, MPI_Status *status)
{
    int n;
    MPI_Datatype t;
    tds_rq *q = tds_rq_new();
    q->owns_type = 0;
    q->cmap = NULL;
    int rc = pack_replace(q, buf, count, datatype, &n, &t);
    if (rc == MPI_SUCCESS)
        rc = tds_body_Sendrecv(q->bounce, n, t, dest, sendtag, buf, count, datatype, source, recvtag, comm, status);
    if (t != MPI_PACKED)
        PMPI_Type_free(&t);
    tds_rq_release(q);
    return rc;
}

/* ------------------------------------------------- MPI_Isendrecv (MPI-4.0) */

/*
 * "Pairs": MPI_Isendrecv and MPI_Isendrecv_replace are tdshim's own
 * MPI_Irecv and MPI_Isend (the receive posted first, as MPICH does; each
 * counted, with its header, as any other) under one generalized request
 * (MPI_Grequest_start), the handle the program holds. tds_pairs_progress,
 * run by every completion call (tds_poll_enter) and every turn of a
 * waiting loop (tds_wait_step) while a pair is pending, tests the two with
 * tdshim's completion (the receive is counted there, once) and completes
 * the generalized request when both have; the program's Wait/Test then
 * get the receive's status (as the program sees it) from pair_query. A
 * blocking completion call on a pair is a waiting loop, passive as one on
 * a receive (tds_complete.c, pending_recv); a pair the program frees
 * before it completes is finished as an orphan. Cancelling a pair does
 * not cancel it (MPI_Test_cancelled says so).
 */
static int pair_query(void *extra, MPI_Status *st)
{
    *st = ((tds_rq *)extra)->saved;
    return MPI_SUCCESS;
}
static int pair_free(void *extra)
{
    (void)extra;
    return MPI_SUCCESS;
}
static int pair_cancel(void *extra, int complete)
{
    (void)extra, (void)complete;
    return MPI_SUCCESS;
}

/* one of a pair's requests: 1 once it has completed (and been finished) */
static int pair_part_done(MPI_Request *r, MPI_Status *st)
{
    if (*r == MPI_REQUEST_NULL)
        return 1;
    tds_rq *q = tds_rq_find(*r);
    int flag = 0;
    PMPI_Test(r, &flag, st);
    if (flag && q) {
        tds_complete(q, st);
        tds_recv_err(0); /* not told (README "Limitations") */
    }
    return flag;
}

void tds_pairs_progress(void)
{
    if (tds.in_pairs)
        return; /* reached again from a completion below */
    tds.in_pairs = 1;
    for (tds_rq **p = &tds.pairs; *p;) {
        tds_rq *q = *p;
        MPI_Status st;
        int rdone = pair_part_done(&q->rreq, &q->saved), sdone = pair_part_done(&q->inner, &st);
        if (!rdone || !sdone) {
            p = &q->dnext;
            continue;
        }
        *p = q->dnext;
        tds.npairs--;
        tds.nheld--;
        PMPI_Grequest_complete(q->req);
    }
    tds.in_pairs = 0;
}

/* sbuf: the data to send (for _replace, packed in the entry's bounce buffer) */
static int pair_post(tds_rq *q, const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                     int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Request *request)
{
    q->kind = TDS_RQ_PAIR;
    q->cmap = NULL;
    q->owns_type &= TDS_OWN_BIG; /* a large send-replace's bounce buffer (pack_replace) */
    q->inner = q->rreq = MPI_REQUEST_NULL;
    int rc = tds_body_Irecv(rbuf, rcount, rtype, source, rtag, comm, &q->rreq);
    if (rc == MPI_SUCCESS) {
        rc = tds_body_Isend(sbuf, scount, stype, dest, stag, comm, &q->inner);
        if (rc != MPI_SUCCESS) { /* as natively: nothing stays posted (a cancelled receive is not counted) */
            tds_body_Cancel(&q->rreq);
            tds_body_Wait(&q->rreq, MPI_STATUS_IGNORE);
        }
    }
    if (rc == MPI_SUCCESS)
        rc = PMPI_Grequest_start(pair_query, pair_free, pair_cancel, q, &q->req);
    if (rc != MPI_SUCCESS) {
        tds_rq_release(q);
        return rc;
    }
    PMPI_Status_set_elements(&q->saved, MPI_BYTE, 0);
    tds_rq_insert(q);
    q->dnext = tds.pairs;
    tds.pairs = q;
    tds.npairs++;
    tds.nheld++;
    *request = q->req;
    return MPI_SUCCESS;
}

int tds_body_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                       void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                       MPI_Request *request)
{
    return pair_post(tds_rq_new(), sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                     source, recvtag, comm, request);
}

/* the data to send is packed first (as tds_body_Sendrecv_replace does), into
 * the entry's bounce buffer, which lives until the pair completes */
int tds_body_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
                               int recvtag, MPI_Comm comm, MPI_Request *request)
{
    int n;
    MPI_Datatype t = MPI_PACKED;
    tds_rq *q = tds_rq_new();
    q->owns_type = 0;
    q->cmap = NULL;
    int rc = pack_replace(q, buf, count, datatype, &n, &t);
    if (rc == MPI_SUCCESS)
        rc = pair_post(q, q->bounce, n, t, dest, sendtag, buf, count, datatype, source, recvtag, comm, request);
    else
        tds_rq_release(q);
    if (t != MPI_PACKED)
        PMPI_Type_free(&t); /* the send holds it */
    return rc;
}

/* ------------------------------------- partitioned communication (MPI-4.0) */

/*
 * A partitioned message is one primary message (DESIGN.md §1), counted
 * once per round: sent when MPI_Start begins the round (the partitions
 * follow as the program readies them: counting at the start only keeps
 * the message in transit longer, never shorter), received when the
 * receive request completes (every partition arrived; MPI_Parrived on the
 * way passes through and counts nothing). MPI moves the partitions from
 * the program's buffer itself, so the message cannot carry tdshim's header
 * inline. Header-free (README "Header-free mode"), nothing more is needed:
 * the receiver derives everything from the envelope, as for any message.
 *
 * With a header (bcj, cda, hcda, edod, xulau; any algorithm under
 * TDSHIM_PIGGYBACK=copy or datatype) each partitioned request of the
 * program gets a companion: a partitioned request of tdshim's, 1 partition
 * of hdr_len bytes (q->hdr), same peer, tag and communicator, initialized
 * in the same call right after the program's. MPI-4.0 §4.2.1 (MPI_PSEND_INIT)
 * and §4.3 ("Order"): partitioned initialization calls match only
 * partitioned initialization calls, in the order they are made for a
 * (communicator, source, tag) (MPI_PRECV_INIT takes no wildcards). The
 * k-th init of each side to the other is then the program's j-th request
 * on both sides or the companion of its j-th on both: the program's
 * matching is untouched and each companion meets its request's companion,
 * whatever the partition counts (tests/mpi/partitioned.sh: two requests
 * per peer and tag each way, other partition counts on each side). Per
 * round:
 *  - MPI_Start(all) of the send: the header is made (tds_send_start:
 *    counted, the algorithm's piggyback), the companion started and its
 *    one partition readied at once, before the program can ready any of
 *    its own (tds_part_start);
 *  - MPI_Start(all) of the receive: the companion is started too;
 *  - completion of the receive (every Wait/Test call, Request_get_status):
 *    its companion is completed (it was readied at the sender's Start, so
 *    it is on its way: a few bytes) and its header taken by recv_finish
 *    exactly as an ordinary message's (tds_part_done);
 *  - completion of the send: its companion is completed too.
 * MPI_Request_free of the program's (inactive: freeing an active one is
 * erroneous, MPI-4.0 §4.2.1) frees the companion (tds_part_free).
 *
 * The program's status of a partitioned receive is MPI's, untouched, in
 * both modes (no header in the message): MPICH 4.0.2's
 * MPI_Request_get_status on one that has completed writes no source, tag
 * nor count (0), and its Wait/Test calls do; so tdshim finishes it on a
 * status of its own (the source and tag it was initialized with, the
 * bytes it describes) and never replays one (saved_status).
 * q->part: 1 a partitioned request, 2 one with a companion (`inner`);
 * 0 in every other entry, free ones too.
 */
static void __attribute__((noinline, cold)) part_failed(const char *what, int rc)
{
    char s[MPI_MAX_ERROR_STRING];
    int n = 0;
    PMPI_Error_string(rc, s, &n);
    tds_fatal("rank %d: %s of the header companion of a partitioned request failed: %s", tds.rank, what, s);
}

/* the companion of q, the program's partitioned request just made */
static int part_companion(tds_rq *q, int send, int peer, int tag, MPI_Comm comm)
{
    int rc = send ? PMPI_Psend_init(q->hdr, 1, tds.hdr_len, MPI_BYTE, peer, tag, comm, MPI_INFO_NULL, &q->inner)
                  : PMPI_Precv_init(q->hdr, 1, tds.hdr_len, MPI_BYTE, peer, tag, comm, MPI_INFO_NULL, &q->inner);
    if (rc != MPI_SUCCESS) {
        PMPI_Request_free(&q->req);
        return rc;
    }
    q->part = 2;
    return MPI_SUCCESS;
}

/* MPI_Start of q (tds_complete.c start_one, after its header was made) */
void tds_part_start(tds_rq *q)
{
    int rc = PMPI_Start(&q->inner);
    if (rc == MPI_SUCCESS && q->kind == TDS_RQ_SEND)
        rc = PMPI_Pready(0, q->inner);
    if (rc != MPI_SUCCESS)
        part_failed("MPI_Start", rc);
}

/* q completed (st: the program's status, left as MPI wrote it): its
 * companion too, and a receive is finished on a status of tdshim's */
void tds_part_done(tds_rq *q, MPI_Status *st)
{
    if (q->part == 2) {
        int rc = PMPI_Wait(&q->inner, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            part_failed("completion", rc);
    }
    if (q->kind != TDS_RQ_RECV)
        return;
    MPI_Status hs = *st;
    hs.MPI_SOURCE = q->peer;
    hs.MPI_TAG = q->tag;
    tds_st_set_bytes(&hs, q->ubytes + (q->part == 2 ? (size_t)tds.hdr_len : 0));
    recv_finish(q, &hs);
}

/* the program frees q: its companion goes too (waited for first, should
 * the program free an active request, which MPI forbids) */
void tds_part_free(tds_rq *q)
{
    if (q->part == 2) {
        PMPI_Wait(&q->inner, MPI_STATUS_IGNORE);
        PMPI_Request_free(&q->inner);
    }
    q->part = 0;
}

/* the user bytes of a partitioned message (partitions x count x size) */
static size_t partitioned_bytes(int partitions, MPI_Count count, MPI_Datatype type, int *tsize, uint8_t *plain)
{
    size_t one = type_bytes(1, type, tsize, plain);
    return partitions > 0 && count > 0 ? (size_t)partitions * (size_t)count * one : 0;
}

int tds_body_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                        MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    tds_rq *q = tds_rq_new();
    int rc = PMPI_Psend_init(buf, partitions, count, datatype, dest, tag, comm, info, &q->req);
    if (rc != MPI_SUCCESS || dest == MPI_PROC_NULL) {
        if (rc == MPI_SUCCESS)
            *request = q->req;
        tds_rq_release(q);
        return rc;
    }
    /* as an ordinary persistent send (send_post): to another job's rank,
     * as written and no companion */
    int foreign = tds_wrank(comm, dest) < 0;
    q->foreign = !foreign ? 0 : tds_comm_foreign(comm) ? 1 : 2;
    q->part = 1;
    if (!tds.nohdr && !foreign && (rc = part_companion(q, 1, dest, tag, comm)) != MPI_SUCCESS) {
        q->part = 0;
        tds_rq_release(q);
        return rc;
    }
    q->kind = TDS_RQ_SEND;
    q->persistent = 1;
    q->copy = 0;
    q->buf = (void *)buf;
    q->type = datatype;
    q->peer = dest;
    q->tag = tag;
    q->comm = comm;
    q->ubytes = partitioned_bytes(partitions, count, datatype, &q->tsize, &q->plain);
    tds_rq_insert(q);
    *request = q->req;
    return MPI_SUCCESS;
}

int tds_body_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                        MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    if (source == MPI_PROC_NULL)
        return PMPI_Precv_init(buf, partitions, count, datatype, source, tag, comm, info, request);
    tds_rq *q = tds_rq_new();
    int tsize;
    uint8_t plain;
    size_t ub = partitioned_bytes(partitions, count, datatype, &tsize, &plain);
    /* the data lands in the program's buffer, MPI's doing: never a bounce
     * buffer (copy 0; "plain" so that recv_fields duplicates no type) */
    recv_fields(q, buf, datatype, comm, ub, tsize, 1);
    q->copy = 0;
    q->persistent = 1;
    q->peer = source;
    q->tag = tag;
    int rc = PMPI_Precv_init(buf, partitions, count, datatype, source, tag, comm, info, &q->req);
    if (rc == MPI_SUCCESS && !tds.nohdr && !q->foreign)
        rc = part_companion(q, 0, source, tag, comm);
    else if (rc == MPI_SUCCESS)
        q->part = 1;
    if (rc != MPI_SUCCESS)
        q->part = 0;
    return recv_posted(q, rc, 1, request);
}
