/*
 * MPI_THREAD_MULTIPLE (README "Threads"; DESIGN.md §4 asked for at most
 * MPI_THREAD_SERIALIZED until tdshim was thread-safe).
 *
 * One lock serializes every access to tdshim's state. The generated
 * wrappers take it only when the program was granted MPI_THREAD_MULTIPLE
 * (tds_mt, set once at init before any other thread can call MPI), so the
 * single-threaded fast path pays one predictable branch and no atomic.
 *
 * No thread ever blocks inside MPI while holding it: under
 * MPI_THREAD_MULTIPLE every blocking call of the shim is a test loop
 * (TDS_LOOP_WAITS) whose turns let the other threads in (tds_mt_pause),
 * blocking collectives run unlocked, and the state a call keeps across
 * its turns is the calling thread's (tds_t: bounce buffer, blocking
 * receive, completion scratch). A test loop completes the program's
 * request under the lock, so a handle MPI frees is out of the request
 * table before any other thread can get the same handle value back.
 *
 * Passivity: a rank of several threads is passive when every thread that
 * uses MPI is idle by the notion (its last call found nothing, or it is
 * waiting for a receive), has neither sent nor received since, and was
 * seen idle after the last moment any other thread of the rank was busy.
 * The last condition is the rank's idle generation: a thread that turns
 * idle after being busy (it had not been idle, or it sent or received
 * since) may have woken another one through memory (handed it work, or
 * released it from a barrier after taking the notification), so it starts
 * a new generation, and an older idle poll of another thread no longer
 * counts: that thread must poll again (a polling loop does so at once, a
 * waiting receive on its next turn). A thread that left its poll loop
 * and stopped calling MPI (a worker computing, a thread the scheduler has
 * not run since the notification) thus keeps the rank busy, which is what
 * keeps a rank from being called passive while one of its threads still
 * works (tests/mpi/threads.sh, LATE_MS). Threads are counted from
 * their first point-to-point call: a thread that only calls collectives
 * (the main thread that joins its workers) is not. A thread the shim has not
 * seen yet cannot be counted: a rank whose first thread waits before the
 * others have made their first call would be passive too early, so
 * TDSHIM_THREADS=N makes a rank wait until N threads have called MPI.
 * Under TDSHIM_IDLE=pcontrol and api the program says so itself, for the
 * whole rank.
 */
#include "tds_mt.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>


static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int waiters;                 /* threads waiting for the lock (atomic) */
static pthread_key_t exit_key;      /* runs thread_exit when a registered thread ends */
static tds_thread_slot *threads;    /* registered threads (under the lock) */
static uint32_t nregistered;        /* ...how many (under the lock) */
static uint64_t idle_gen;           /* the rank's idle generation (under the lock) */

static void thread_exit(void *arg)
{
    tds_thread *t = arg;
    pthread_mutex_lock(&lock);
    for (tds_thread_slot **p = &threads; *p; p = &(*p)->next)
        if (*p == &t->me) {
            *p = t->me.next;
            nregistered--;
            break;
        }
    t->me.registered = 0;
    pthread_mutex_unlock(&lock);
    free(t->scratch);
    free(t->rq_found);
    free(t->rq_saved);
    free(t->st_scratch);
    free(t->brq.bounce);
    memset(t, 0, sizeof *t);
}

void tds_mt_init(void)
{
    if (pthread_key_create(&exit_key, thread_exit) != 0)
        tds_fatal("pthread_key_create failed");
    tds_mt = 1;
}

static inline void take(void)
{
    if (pthread_mutex_trylock(&lock) == 0)
        return;
    __atomic_add_fetch(&waiters, 1, __ATOMIC_RELAXED);
    pthread_mutex_lock(&lock);
    __atomic_sub_fetch(&waiters, 1, __ATOMIC_RELAXED);
}

/* A thread's first point-to-point call. If the rank is passive, tdshim
 * judged it so without this thread, which was working unseen (computing,
 * or not yet scheduled: TDSHIM_THREADS was not set to cover it): that is
 * tdshim's blind spot, not the program's violation, so the rank turns busy
 * as with any activity and the report counts a late thread and advises
 * TDSHIM_THREADS (report: thread_level.late_threads). Under pcontrol and
 * api the program speaks for the rank and threads are not counted. */
static void register_thread(void)
{
    tds_t.me.registered = 1;
    tds_t.me.next = threads;
    threads = &tds_t.me;
    if (++nregistered > tds.m.threads_max)
        tds.m.threads_max = nregistered;
    pthread_setspecific(exit_key, &tds_t);
    /* what a new thread did before its first call was not seen: the idle
     * notions measured side by side (cand_poll) judge the rank afresh, late
     * or not (under TDSHIM_THREADS the rank was not passive, but one
     * thread's empty polls could have made a notion judge it so) */
    tds.cand = 0;
    tds.spin_arm = 0;
    if (tds.on && !tds.core.active && tds.cf.idle != TDS_IDLE_PCONTROL && tds.cf.idle != TDS_IDLE_API) {
        tds.m.threads_late++;
        td_activity(&tds.core);
        tds_check_core();
    }
}

void tds_mt_lock_slow(void)
{
    take();
    if (__builtin_expect(!tds_t.me.registered, 0))
        register_thread();
}

void tds_mt_lock_coll(void)
{
    take();
}

void tds_mt_unlock_slow(void)
{
    pthread_mutex_unlock(&lock);
}

/* a turn of a waiting loop: let the other threads in; yield if one waits
 * (a mutex released and taken again at once is rarely handed over), and
 * on every turn once the wait is long (past its TDS_SPIN quick turns): the
 * program's other threads may need the core this one spins on, as Open
 * MPI's own waits yield on an oversubscribed node */
void tds_mt_pause(int long_wait)
{
    pthread_mutex_unlock(&lock);
    if (long_wait || __atomic_load_n(&waiters, __ATOMIC_RELAXED))
        sched_yield();
    take();
}

/* busy: not idle, or idle in an earlier generation than the rank's */
static int slot_busy(const tds_thread_slot *s)
{
    return !s->idle || s->work != s->work_idle || s->gen != idle_gen;
}

int tds_mt_all_idle(void)
{
    if (!tds_t.me.idle || tds_t.me.work != tds_t.me.work_idle)
        idle_gen++; /* busy until now: the others' earlier idleness may be stale */
    tds_t.me.idle = 1;
    tds_t.me.work_idle = tds_t.me.work;
    tds_t.me.gen = idle_gen;
    int n = 0;
    for (const tds_thread_slot *s = threads; s; s = s->next, n++)
        if (slot_busy(s))
            return 0;
    return n >= tds.cf.threads;
}

/* measure mode's idle notions side by side (tds_progress.c cand_poll): a
 * rank of several threads can be judged passive at one thread's empty poll
 * only while every other thread using MPI is idle (as tds_mt_all_idle,
 * without marking this one idle). Threads not yet seen are not waited for
 * (TDSHIM_THREADS): a thread's first MPI call resets the judgements
 * (register_thread), and one that has ended cannot send */
int tds_mt_others_idle(void)
{
    for (const tds_thread_slot *s = threads; s; s = s->next)
        if (s != &tds_t.me && slot_busy(s))
            return 0;
    return 1;
}

/* "; threads: 3 using MPI, 1 busy" (TDSHIM_VERBOSE's progress line and the
 * killed rank's line): why a rank of several threads is not passive */
void tds_mt_describe(char *buf, size_t len)
{
    int n = 0, busy = 0;
    for (const tds_thread_slot *s = threads; s; s = s->next, n++)
        busy += slot_busy(s);
    snprintf(buf, len, "; threads: %d using MPI, %d busy%s", n, busy,
             n < tds.cf.threads ? " (fewer than TDSHIM_THREADS)" : "");
}
