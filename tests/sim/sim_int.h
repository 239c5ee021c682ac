/*
 * What sim.c (the rank model, the oracle, the adversary, the run) and
 * sim_store.c (its storage: pools, the event heap, the FIFO channels) share;
 * private to tdsim.
 */
#ifndef SIM_INT_H
#define SIM_INT_H
#include "tdsim.h"

enum { R_POLL, R_BUSY, R_IDLE, R_BARRIER, R_SENDWAIT };
/* events at the same instant run in class order (ev_class, sim_schedule) */
enum { EV_ARRIVE, EV_TASK_END, EV_BARRIER, EV_ORACLE_PHASE, EV_POLL, EV_SENDWAIT_END, EV_FLICK_END };

/* sim.c: the first violation of a run, its kind and why (later ones ignored) */
void sim_violate(sim *s, int kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* sim_store.c: pools (no per-event malloc), the event heap, the channels */
int sim_grow(void **p, int32_t *cap, size_t elem);
int32_t sim_msg_alloc(sim *s);
void sim_msg_free(sim *s, int32_t i);
int32_t sim_tn_alloc(sim *s);
void sim_list_push(sim_tnode *tn, int32_t *head, int32_t *tail, int32_t i);
int32_t sim_list_pop(sim_tnode *tn, int32_t *head, int32_t *tail);
void sim_schedule(sim *s, double t, int kind, int32_t arg);
sim_ev sim_pop(sim *s);
double *sim_channel(sim *s, int src, int dst);

#endif
