/*
 * The termdetect API (include/termdetect.h) over MPI: a third driver of the
 * algorithm core, next to the PMPI shim and the simulator. It owns one
 * td_ctx running the `termdetect` algorithm over the participating ranks of
 * the caller's communicator, carries control messages on the caller's tag,
 * and maps the guide's calls onto the driver interface (td_core.h):
 *   update_* counts      -> td_activity + td_primary_send/recv (active)
 *   termdetect_process() -> receive control messages, td_passive
 *   isterminated()       -> an announcement was learned
 * The engine is gated on notification (gate_on_notify) and never notified:
 * the guide's programs stop at the first termination, so no control message
 * of a later episode is ever sent.
 */
#include "termdetect.h"

#include "td_algo.h"
#include "td_termdetect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pending {
    MPI_Request req;
    struct pending *next;
    uint8_t wire[TD_WIRE_SIZE];
} pending;

typedef struct tdapi {
    td_ctx ctx;
    MPI_Comm comm;
    int tag;
    int *world_of;   /* active index -> rank in comm */
    int *index_of;   /* rank in comm -> active index, -1 if not taking part */
    pending *sends;  /* control sends not yet completed */
    int mpi_failed;
    char err[200];
} tdapi;

static tdapi *api(struct termdetect_type *ZZ) { return ZZ ? (tdapi *)ZZ->priv : NULL; }

static void set_error(struct termdetect_type *ZZ, tdapi *a, const char *what)
{
    if (!a->err[0])
        snprintf(a->err, sizeof a->err, "termdetect: %s", what);
    ZZ->State = ERROR;
}

static void io_send(void *user, int dest, const uint8_t *wire)
{
    tdapi *a = user;
    pending *p = malloc(sizeof *p);
    if (!p) {
        a->mpi_failed = 1;
        return;
    }
    memcpy(p->wire, wire, TD_WIRE_SIZE);
    if (MPI_Isend(p->wire, TD_WIRE_SIZE, MPI_BYTE, a->world_of[dest], a->tag, a->comm, &p->req) != MPI_SUCCESS) {
        free(p);
        a->mpi_failed = 1;
        return;
    }
    p->next = a->sends;
    a->sends = p;
}

/* complete finished sends; with wait, all of them */
static int reap(tdapi *a, int wait)
{
    pending **pp = &a->sends;
    while (*pp) {
        pending *p = *pp;
        int done = 0;
        int rc = wait ? MPI_Wait(&p->req, MPI_STATUS_IGNORE) : MPI_Test(&p->req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return -1;
        if (wait || done) {
            *pp = p->next;
            free(p);
        } else {
            pp = &p->next;
        }
    }
    return 0;
}

static void release(tdapi *a)
{
    if (!a)
        return;
    reap(a, 1);
    td_ctx_fini(&a->ctx);
    free(a->world_of);
    free(a->index_of);
    free(a);
}

static void mirror(struct termdetect_type *ZZ, tdapi *a)
{
    ZZ->ctlSent = td_ctl_total(a->ctx.stats.ctl_sent);
    ZZ->ctlRecv = td_ctl_total(a->ctx.stats.ctl_recv);
    ZZ->iterations = a->ctx.stats.waves;
    int st = td_termdetect_state(&a->ctx);
    if (ZZ->State != ERROR)
        ZZ->State = st == 2 ? TERMINATE : st == 1 ? DOWN : UP;
}

void termdetect_init(struct termdetect_type *ZZ, int active_flag, int termTag, MPI_Comm comm)
{
    memset(ZZ, 0, sizeof *ZZ);
    ZZ->comm = comm;
    ZZ->termTag = termTag;
    ZZ->Active = active_flag ? 1 : 0;
    ZZ->PID_Parent = ZZ->NumChildren[0] = ZZ->NumChildren[1] = -1;
    ZZ->ActiveRank = -1;
    ZZ->pType = TD_PROC_NONE;
    ZZ->State = UP;
    int n;
    if (MPI_Comm_rank(comm, &ZZ->PID) != MPI_SUCCESS || MPI_Comm_size(comm, &n) != MPI_SUCCESS) {
        ZZ->State = ERROR;
        return;
    }
    tdapi *a = calloc(1, sizeof *a);
    int *flags = malloc((size_t)n * sizeof *flags);
    if (a) {
        a->world_of = malloc((size_t)n * sizeof *a->world_of);
        a->index_of = malloc((size_t)n * sizeof *a->index_of);
    }
    /* collective: every rank of comm learns who takes part (§6.1) */
    int mine = ZZ->Active;
    int rc = MPI_Allgather(&mine, 1, MPI_INT, flags ? flags : &mine, flags ? 1 : 0, MPI_INT, comm);
    if (!a || !flags || !a->world_of || !a->index_of || rc != MPI_SUCCESS) {
        free(flags);
        release(a);
        ZZ->State = ERROR;
        return;
    }
    a->comm = comm;
    a->tag = termTag;
    for (int r = 0; r < n; r++) {
        a->index_of[r] = flags[r] ? ZZ->nActiveProc : -1;
        if (flags[r])
            a->world_of[ZZ->nActiveProc++] = r;
    }
    free(flags);
    ZZ->nProcs = ZZ->nActiveProc;
    if (!ZZ->Active) {
        release(a);
        return;
    }
    ZZ->ActiveRank = a->index_of[ZZ->PID];
    td_cfg cfg;
    td_cfg_default(&cfg, ZZ->ActiveRank, ZZ->nActiveProc);
    cfg.tree_arity = 2; /* §2: a binary tree */
    cfg.gate_on_notify = 1;
    td_io io = {.user = a, .send = io_send, .announce = NULL};
    if (td_ctx_init(&a->ctx, td_algo_find("termdetect"), &cfg, &io) != TD_OK) {
        release(a);
        ZZ->State = ERROR;
        return;
    }
    ZZ->priv = a;
    const td_tree *t = &a->ctx.tree;
    ZZ->isRoot = t->parent < 0;
    ZZ->pType = t->parent < 0 ? TD_PROC_ROOT : t->nchildren ? TD_PROC_INTERNAL : TD_PROC_LEAF;
    ZZ->PID_Parent = t->parent < 0 ? -1 : a->world_of[t->parent];
    for (int i = 0; i < t->nchildren && i < 2; i++)
        ZZ->NumChildren[i] = a->world_of[t->first_child + i];
    ZZ->UpMessagesLeft = t->nchildren;
}

static tdapi *active_api(struct termdetect_type *ZZ, int count)
{
    tdapi *a = api(ZZ);
    if (!a || ZZ->State == ERROR || ZZ->State == TERMINATE)
        return NULL;
    if (count < 0) {
        set_error(ZZ, a, "negative count passed to an update function");
        return NULL;
    }
    td_activity(&a->ctx); /* counting work or messages: this rank is busy */
    return a;
}

void termdetect_update_sendcount(struct termdetect_type *ZZ, int _count)
{
    tdapi *a = active_api(ZZ, _count);
    if (!a)
        return;
    for (int i = 0; i < _count; i++)
        td_primary_send(&a->ctx, 0, NULL); /* destinations do not matter to counting algorithms */
    ZZ->localMsgSendCount += _count;
}

void termdetect_update_rcvcount(struct termdetect_type *ZZ, int _count)
{
    tdapi *a = active_api(ZZ, _count);
    if (!a)
        return;
    for (int i = 0; i < _count; i++)
        td_primary_recv(&a->ctx, 0, NULL);
    ZZ->localMsgRecvCount += _count;
}

void termdetect_update_recvcount(struct termdetect_type *ZZ, int _count) { termdetect_update_rcvcount(ZZ, _count); }

void termdetect_update_workcount(struct termdetect_type *ZZ, int _count)
{
    tdapi *a = active_api(ZZ, _count);
    if (!a)
        return;
    td_termdetect_add_work(&a->ctx, _count);
    ZZ->localWorkCount += _count;
}

/* §6.5: one step of the termination tree. */
void termdetect_process(struct termdetect_type *ZZ)
{
    tdapi *a = api(ZZ);
    if (!a || ZZ->State == ERROR || ZZ->State == TERMINATE)
        return;
    if (reap(a, 0) != 0)
        a->mpi_failed = 1;
    for (;;) {
        int flag = 0;
        MPI_Status st;
        if (MPI_Iprobe(MPI_ANY_SOURCE, a->tag, a->comm, &flag, &st) != MPI_SUCCESS) {
            a->mpi_failed = 1;
            break;
        }
        if (!flag)
            break;
        uint8_t wire[TD_WIRE_SIZE];
        int len = 0;
        MPI_Get_count(&st, MPI_BYTE, &len);
        if (len != TD_WIRE_SIZE) {
            /* consume it, so that it is not left pending at MPI_Finalize */
            void *junk = malloc(len > 0 ? (size_t)len : 1);
            if (junk)
                MPI_Recv(junk, len, MPI_BYTE, st.MPI_SOURCE, a->tag, a->comm, MPI_STATUS_IGNORE);
            free(junk);
            set_error(ZZ, a, "a message of the wrong size on the termination tag (is the tag also used by the program?)");
            return;
        }
        if (MPI_Recv(wire, TD_WIRE_SIZE, MPI_BYTE, st.MPI_SOURCE, a->tag, a->comm, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            a->mpi_failed = 1;
            break;
        }
        int src = a->index_of[st.MPI_SOURCE];
        if (src < 0) {
            set_error(ZZ, a, "a message on the termination tag from a rank that does not take part");
            return;
        }
        if (td_control(&a->ctx, src, wire, sizeof wire) < 0)
            break; /* reported below from ctx.errmsg */
    }
    if (!a->ctx.error)
        td_passive(&a->ctx); /* the caller has nothing left to do (Algorithm 1) */
    if (a->ctx.error) {
        set_error(ZZ, a, a->ctx.errmsg);
        return;
    }
    if (a->mpi_failed) {
        set_error(ZZ, a, "an MPI call failed");
        return;
    }
    mirror(ZZ, a);
    if (td_episode(&a->ctx) >= 1) {
        ZZ->State = TERMINATE;
        /* the terminate forwards to the children must complete before the
         * program may finalize; the children are polling, so they do */
        termdetect_free(ZZ);
    }
}

int termdetect_isterminated(struct termdetect_type *ZZ)
{
    if (!ZZ)
        return 0;
    if (!ZZ->Active)
        return 1; /* a rank that does not take part has nothing to wait for */
    return ZZ->State == TERMINATE;
}

state_type termdetect_getstate(struct termdetect_type *ZZ) { return ZZ ? ZZ->State : ERROR; }

void termdetect_free(struct termdetect_type *ZZ)
{
    tdapi *a = api(ZZ);
    if (!a)
        return;
    ZZ->priv = NULL;
    release(a);
}

const char *termdetect_error(const struct termdetect_type *ZZ)
{
    const tdapi *a = ZZ ? (const tdapi *)ZZ->priv : NULL;
    return a && ZZ->State == ERROR ? a->err : "";
}

static const char *state_name(state_type s)
{
    switch (s) {
    case UP: return "UP";
    case DOWN: return "DOWN";
    case TERMINATE: return "TERMINATE";
    case ERROR: return "ERROR";
    }
    return "?";
}

static const char *ptype_name(proc_type p)
{
    switch (p) {
    case TD_PROC_ROOT: return "root";
    case TD_PROC_INTERNAL: return "internal";
    case TD_PROC_LEAF: return "leaf";
    case TD_PROC_NONE: return "not taking part";
    }
    return "?";
}

/* §7.2 */
void termdetect_printinfo(struct termdetect_type *ZZ)
{
    printf("termdetect[%d]: active %d (index %d of %d), %s, parent %d, children %d %d, tag %d\n"
           "termdetect[%d]: state %s, sent %d, received %d, work %d, control sent %llu received %llu, iterations %llu\n",
           ZZ->PID, ZZ->Active, ZZ->ActiveRank, ZZ->nActiveProc, ptype_name(ZZ->pType), ZZ->PID_Parent,
           ZZ->NumChildren[0], ZZ->NumChildren[1], ZZ->termTag, ZZ->PID, state_name(ZZ->State),
           ZZ->localMsgSendCount, ZZ->localMsgRecvCount, ZZ->localWorkCount,
           ZZ->ctlSent, ZZ->ctlRecv, ZZ->iterations);
    fflush(stdout);
}

/* §7.3 */
void termdetect_printstatus(struct termdetect_type *ZZ)
{
    printf("termdetect[%d]: %s%s%s\n", ZZ->PID, state_name(ZZ->State), ZZ->State == ERROR ? ": " : "",
           termdetect_error(ZZ));
    fflush(stdout);
}
