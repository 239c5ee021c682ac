/*
 * The wire (tds_wire.h; DESIGN.md §4): what tdshim puts around the
 * program's bytes.
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
 * Here: header kinds and contract violations, other jobs' messages, the
 * header-free envelope, bounce buffers, the type cache, packing.
 */
#include "tds_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- header */

/* a contract violation: counted by tag for the report's advice, and the
 * first one of this rank warned, with what identifies the send in the
 * program (tag, destination, size; the call site with TDSHIM_CALLSITES) */
void __attribute__((noinline, cold)) tds_violation(int dest, int tag, MPI_Comm comm, size_t ub)
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

void __attribute__((noinline, cold)) tds_ignored_header(uint8_t *hdr, uint64_t *counter)
{
    /* still carries a header: a receiver with MPI_ANY_TAG posts the same
     * layout for every message */
    hdr[0] = TDS_HDR_MAGIC | TDS_HF_IGNORED;
    memset(hdr + TDS_HDR_FIXED, 0, tds.cf.algo->pb_size);
    if (counter)
        (*counter)++;
}

/* ---------------------------------------------------------------- other jobs
 * README "Other jobs": on a foreign communicator (tds_comm.h, tds_comm_foreign)
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
void __attribute__((noinline, cold)) tds_not_world(uint8_t *hdr, MPI_Comm comm, size_t ub)
{
    if (tds_comm_foreign(comm))
        tds_xjob_sent(ub);
    tds_ignored_header(hdr, NULL);
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

int tds_env_kind(int source, int tag, size_t bytes, MPI_Comm comm)
{
    if (nenv_is(source, tag, comm, bytes) && nenv_take())
        return TDS_HK_NOTIFY;
    if (__builtin_expect(tds.cf.classify, 0) && tds_not_primary(tag, bytes))
        return TDS_HK_IGNORED;
    return TDS_HK_PRIMARY;
}

/* bounce buffer of a request: header + packed data */
uint8_t *__attribute__((noinline)) tds_rq_bounce_grow(tds_rq *q, size_t n)
{
    void *p = realloc(q->bounce, n);
    if (!p)
        tds_fatal("out of memory for a %zu-byte message buffer", n);
    q->bounce = p;
    q->bounce_cap = n;
    return p;
}

/* the bounce buffer of a message of more than TDS_WIRE_MAX bytes: the
 * spare one if large enough (tds_rq_drop_refs keeps it), given back
 * with the entry (TDS_OWN_BIG) */
uint8_t *__attribute__((noinline, cold)) tds_big_bounce(tds_rq *q, size_t n)
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

/* the struct type {hdr_len bytes at hdr, count x type at buf} over
 * MPI_BOTTOM; {hdr_len bytes at hdr} alone where count x type holds no
 * data. A zero-size type at NULL or MPI_BOTTOM puts the struct's lower
 * bound at address 0 while its data, the header, is one contiguous block:
 * Open MPI 4.1.4's pml ucx then takes the type for a contiguous one at the
 * buffer's address and writes the header to address 0 (a SIGSEGV in
 * ucp_eager_only_handler; natively the same struct crashes it too, and a
 * zero-size receive at NULL does not: tests/diff/diffgen's issue-42 cases) */
MPI_Datatype tds_wire_type(const uint8_t *hdr, const void *buf, int count, MPI_Datatype type)
{
    int len[2] = {tds.hdr_len, count}, tsize = 0;
    MPI_Aint disp[2];
    MPI_Datatype types[2] = {MPI_BYTE, type}, t;
    PMPI_Get_address(hdr, &disp[0]);
    PMPI_Get_address(buf, &disp[1]);
    int n = count == 0 || (PMPI_Type_size(type, &tsize) == MPI_SUCCESS && tsize == 0) ? 1 : 2;
    if (PMPI_Type_create_struct(n, len, disp, types, &t) != MPI_SUCCESS || PMPI_Type_commit(&t) != MPI_SUCCESS)
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
 * contiguous type of bytes (tds_big_type), which needs the MPI-4.0 large-count
 * datatype functions (without them, the struct layout), and freed with its
 * request (TDS_OWN_BIG). Sent in the struct layout, a 2 GiB message took
 * MPICH 4.0 (ch4:ucx) 3 to 13 s against 0.3 s natively: UCX moves a
 * non-contiguous type in fragments; in the copy layout about 1 s (the
 * bounce buffer's page faults and copy, tests/mpi/bigcount.sh). */
#if TDS_BIG_BYTES

/* one element of n x t: a large count as an int count of 1 */
MPI_Datatype tds_big_type(MPI_Count n, MPI_Datatype t)
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
    *big = tds_big_type(n, *type);
    if (*big == MPI_DATATYPE_NULL)
        return -1; /* not a valid type: MPI's error */
    *type = *big;
    return 1;
}
#else
MPI_Datatype tds_big_type(MPI_Count n, MPI_Datatype t)
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
int tds_pack_any(const void *in, size_t count, MPI_Datatype type, void *out, size_t size, size_t *pos)
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
int tds_unpack_any(const void *in, size_t size, size_t *pos, void *out, size_t count, MPI_Datatype type)
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

/* A plain type that is neither of the two cached takes tc_type's place;
 * tc_type becomes tc_prev, and tc_prev goes to tds.tc_more, where a type
 * the pair displaced is found again without plain_type's comparisons with
 * every predefined type and MPI's size query: a program of three types
 * (examples/work_steal: MPI_INT requests, MPI_INT64_T work, MPI_BYTE "no
 * work" replies) cycles through the pair at nearly every message
 * (tests/perf/icount.sh nbalt3: 196 instructions of libtdshim a message
 * sent, 30 more of MPI's, before tc_more). Once tc_more is full a new
 * type replaces its entries in turn. The flat entries' misses look there
 * first, with no call (tds_flat.c FLAT_MISS). */
int __attribute__((noinline)) tds_type_cache_set(MPI_Datatype type)
{
    if (type == tds.tc_prev) { /* never tc_type here: the callers checked */
        type_cache_swap();
        return 1;
    }
    if (type_cache_more(type))
        return 1;
    if (!plain_type(type))
        return 0;
    MPI_Count sz = 0;
    PMPI_Type_size_x(type, &sz);
    int i = tds.tc_nmore < TDS_TC_MORE ? tds.tc_nmore++ : tds.tc_next++ % TDS_TC_MORE;
    tds.tc_more[i] = (struct tds_tc){.type = tds.tc_prev, .size = tds.tc_prev_size, .cmax = tds.tc_prev_cmax};
    type_cache_put(type, (int)sz, (unsigned)(TDS_CELL_DATA / sz));
    return 1;
}

/* Size of a type, and whether it is plain (then cached) */
size_t __attribute__((noinline)) tds_type_bytes_slow(int count, MPI_Datatype type, int *tsize, uint8_t *plain)
{
    MPI_Count sz = 0; /* a type of more than INT_MAX bytes: an MPI-4.0 large count (tds_count_int) */
    *plain = (uint8_t)tds_type_cache_set(type);
    if (*plain)
        sz = tds.tc_size;
    else if (type != MPI_DATATYPE_NULL) /* a count-0 message of it: no data (tds_dtnull_refused) */
        PMPI_Type_size_x(type, &sz);
    *tsize = sz > INT_MAX ? INT_MAX : (int)sz; /* such a type's receive asks again (unpack_derived) */
    return count > 0 && sz > 0 ? (size_t)count * (size_t)sz : 0;
}

/* A count-0 message of MPI_DATATYPE_NULL: MPICH 4.0 takes it (an empty
 * message), Open MPI 4.1 refuses it (MPI_ERR_TYPE, raised on the
 * communicator). Asked of the library once, on tds.self, the first time a
 * program uses it (never on a fast path: the type cache never holds it);
 * where the library refuses, the program's call goes to MPI as written
 * (its error, its handler, nothing counted), where it takes it, tdshim
 * sends and receives an empty message (no size query of the type, which
 * failed fatally: issue 42). recv: the receive side's answer. */
int __attribute__((noinline, cold)) tds_dtnull_ask(int recv)
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
/* pack_into for a message of more than TDS_WIRE_MAX bytes: its size */
size_t __attribute__((noinline, cold)) tds_pack_big(uint8_t *out, const uint8_t *hdr, const void *buf,
                                                    int count, MPI_Datatype type, size_t ubytes, int plain)
{
    size_t pos = (size_t)tds.hdr_len;
    memcpy(out, hdr, TDS_HDR_MAX);
    if (plain) {
        memcpy(out + pos, buf, ubytes);
        return pos + ubytes;
    }
    tds_pack_any(buf, (size_t)count, type, out, pos + ubytes, &pos);
    return pos;
}
