/*
 * The poll clock (tds_state.h, tds_pnow): the TSC's anchor and rate,
 * measured across MPI_Init and again every TDS_PCLOCK_WINDOW of polling.
 * Needs nothing of the library but tdr_now (tests/mpi/test-pclock.c
 * compiles it alone).
 */
#include "tds_state.h"

/* the poll clock (tds_state.h, tds_pnow) */
tds_pclock_t tds_pclock;
#ifdef TDS_PCLOCK_TSC
#include <cpuid.h>

/* a rate some CPU could have */
static int pclock_sane(double hz)
{
    return hz > 1e8 && hz < 1e11;
}

/* tdr_now and the TSC at one moment: the TSC read between two clock
 * reads, the tightest of four tries (a try the thread was descheduled in
 * is wide), the clock the middle of that bracket */
static double pclock_pair(uint64_t *c)
{
    double best = 1e30, t = 0.0;
    for (int i = 0; i < 4; i++) {
        double a = tdr_now();
        uint64_t k = tds_rdtsc();
        double b = tdr_now();
        if (b - a < best) {
            best = b - a;
            t = 0.5 * (a + b);
            *c = k;
        }
    }
    return t;
}

/* anchored at (t0, tsc0); the next measurement of the rate after twice the
 * time the last one took, at most TDS_PCLOCK_WINDOW: a rate measured over
 * a span L is off by about the clock's error over L, which over the next
 * window (2 L) moves the clock by twice that error at the next anchor */
static void pclock_set(double t0, uint64_t tsc0, double s_per_tick, double span)
{
    double w = 2.0 * span < TDS_PCLOCK_WINDOW ? 2.0 * span : TDS_PCLOCK_WINDOW;
    __atomic_store(&tds_pclock.t0, &t0, __ATOMIC_RELAXED);
    __atomic_store(&tds_pclock.s_per_tick, &s_per_tick, __ATOMIC_RELAXED);
    __atomic_store_n(&tds_pclock.tsc0, tsc0, __ATOMIC_RELAXED);
    __atomic_store_n(&tds_pclock.win, (uint64_t)(w / s_per_tick), __ATOMIC_RELAXED);
}

/* a window past the anchor (or the TSC behind it, or not calibrated):
 * the rate over the window if it looks right, a new anchor */
double tds_pnow_anchor(uint64_t c)
{
    double t0, k;
    __atomic_load(&tds_pclock.s_per_tick, &k, __ATOMIC_RELAXED);
    if (k <= 0.0)
        return tdr_now();
    __atomic_load(&tds_pclock.t0, &t0, __ATOMIC_RELAXED);
    double now = pclock_pair(&c);
    int64_t d = (int64_t)(c - __atomic_load_n(&tds_pclock.tsc0, __ATOMIC_RELAXED));
    double span = now - t0;
    if (d > 0 && span > 0.0 && pclock_sane((double)d / span))
        k = span / (double)d;
    else
        span = 0.0; /* the TSC went back, or jumped: measured again from here, over a short window first */
    pclock_set(now, c, k, span > 1e-3 ? span : 1e-3);
    return now;
}
#endif

void tds_pclock_anchor(void)
{
#ifdef TDS_PCLOCK_TSC
    unsigned a, b, c, d;
    tds_pclock.s_per_tick = 0.0;
    tds_pclock.win = 0;
    tds_pclock.tsc0 = 0;
    /* an invariant TSC ticks at one rate in every power state and on every
     * core (CPUID 0x80000007, EDX bit 8; Linux's nonstop_tsc): else none */
    if (!__get_cpuid(0x80000007, &a, &b, &c, &d) || !(d & (1u << 8)))
        return;
    uint64_t k = 0;
    tds_pclock.t0 = pclock_pair(&k);
    tds_pclock.tsc0 = k;
#endif
}

void tds_pclock_calibrate(void)
{
#ifdef TDS_PCLOCK_TSC
    if (tds_pclock.tsc0 == 0 || tds_pclock.s_per_tick > 0.0)
        return;
    double t;
    uint64_t k = 0;
    do { /* MPI_Init takes longer than 2 ms: no wait, as a rule */
        t = pclock_pair(&k);
    } while (t - tds_pclock.t0 < 2e-3 && t >= tds_pclock.t0);
    double span = t - tds_pclock.t0, hz = (double)(int64_t)(k - tds_pclock.tsc0) / span;
    /* a rate no CPU has says the TSC is not what CPUID claims: tdr_now */
    if (pclock_sane(hz))
        pclock_set(t, k, 1.0 / hz, span);
#endif
}
