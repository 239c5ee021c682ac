/* The test programs' clocks (tests/mpi/worktag.c, idlesleep.c,
 * busyreuse.c): this thread's CPU time and the wall clock in seconds, CPU
 * time used on purpose, and a sleep that spares the CPU. */
#ifndef TDS_TEST_TCLOCK_H
#define TDS_TEST_TCLOCK_H
#include <time.h>

static inline double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline double wall_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* use s seconds of this thread's CPU time */
static inline void use_cpu(double s)
{
    double t0 = cpu_now();
    while (cpu_now() - t0 < s)
        ;
}

static inline void sleep_us(long us)
{
    struct timespec t = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&t, &t) != 0)
        ;
}
#endif
