/*
 * termdetect: a source-compatible implementation of the API of McLendon's
 * Asynchronous Termination Detection Module (Sandia, SAND 2005-3692 P;
 * papers/sandia-termdetect-guide.txt §5-7). Link with -ltermdetect; no
 * LD_PRELOAD needed. It is a driver of tdshim's algorithm core running the
 * `termdetect` algorithm (shim/core/termdetect.c), with control messages on
 * the communicator and tag given to termdetect_init().
 *
 * Usage (the guide's Algorithm 1):
 *
 *   struct termdetect_type zz;
 *   termdetect_init(&zz, 1, 7193, MPI_COMM_WORLD);
 *   do {
 *       while (there is local work) {
 *           do n_w units of work;  termdetect_update_workcount(&zz, n_w);
 *           send n_s messages;     termdetect_update_sendcount(&zz, n_s);
 *           receive n_r messages;  termdetect_update_rcvcount(&zz, n_r);
 *       }
 *       termdetect_process(&zz);
 *   } while (!termdetect_isterminated(&zz));
 *
 * "Local work" includes probing for the application's messages: a rank that
 * calls termdetect_process() declares that it has nothing to do until it
 * receives a message. termdetect_init() is collective over comm (it learns
 * which ranks take part). When termination is detected every outstanding
 * control send has completed, so the program may call MPI_Finalize.
 */
#ifndef TERMDETECT_H
#define TERMDETECT_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* §7.1: UP (0), DOWN (1), TERMINATE (2), ERROR (3) */
typedef enum state_type { UP = 0, DOWN = 1, TERMINATE = 2, ERROR = 3 } state_type;

/* position of this processor in the termination tree (§2) */
typedef enum proc_type { TD_PROC_ROOT = 0, TD_PROC_INTERNAL = 1, TD_PROC_LEAF = 2, TD_PROC_NONE = 3 } proc_type;

/* Figure 2 of the guide. The members mirror the module's state for
 * debugging; the functions below are the interface. */
struct termdetect_type {
    MPI_Comm comm;            /* MPI communicator group */
    int Active;               /* 1 if involved in termination, otherwise 0 */
    int nActiveProc;          /* # of active processors in termination */
    int ActiveRank;           /* processor rank in the active list */
    int isRoot;               /* 1 if this proc is the root of the tree */
    int PID;                  /* processor id (rank in comm) */
    int nProcs;               /* number of processors in the tree */
    int PID_Parent;           /* process id (in comm) of this node's parent, -1 at the root */
    int NumChildren[2];       /* process ids (in comm) of the children, -1 if absent */
    int UpMessagesLeft;       /* up messages still awaited in this iteration */
    proc_type pType;          /* node type in the tree */
    state_type State;         /* termination state */
    int localMsgSendCount;    /* sum of local messages sent */
    int localMsgRecvCount;    /* sum of local messages received */
    int localWorkCount;       /* sum of local work performed */
    int subTreeMsgSendCount;  /* sum of the subtree's sent messages (last report) */
    int subTreeMsgRecvCount;  /* sum of the subtree's received messages (last report) */
    int subTreeWorkCount;     /* sum of the subtree's work (last report) */
    int workCountLast;        /* root: work count at the previous iteration */
    int termTag;              /* MPI tag of the termination messages */
    /* tdshim's additions (what termdetect_printinfo shows; they outlive
     * the implementation state, which is freed at termination) */
    unsigned long long ctlSent, ctlRecv; /* control messages of this rank so far */
    unsigned long long iterations;       /* iterations (waves) this rank took part in */
    void *priv;               /* implementation state; do not touch */
};

void termdetect_init(struct termdetect_type *ZZ, int active_flag, int termTag, MPI_Comm comm);
void termdetect_update_sendcount(struct termdetect_type *ZZ, int _count);
void termdetect_update_rcvcount(struct termdetect_type *ZZ, int _count);
void termdetect_update_workcount(struct termdetect_type *ZZ, int _count);
void termdetect_process(struct termdetect_type *ZZ);
int termdetect_isterminated(struct termdetect_type *ZZ);
state_type termdetect_getstate(struct termdetect_type *ZZ);
void termdetect_printinfo(struct termdetect_type *ZZ);
void termdetect_printstatus(struct termdetect_type *ZZ);

/* Extensions (not in the guide). The guide's Algorithm 1 spells the
 * receive update termdetect_update_recvcount; both names are provided. */
void termdetect_update_recvcount(struct termdetect_type *ZZ, int _count);
/* Release the module's memory early (done automatically at termination). */
void termdetect_free(struct termdetect_type *ZZ);
/* The reason for State == ERROR, or "" */
const char *termdetect_error(const struct termdetect_type *ZZ);

#ifdef __cplusplus
}
#endif
#endif
