/*
 * Callgrind's client requests for the benchmarks that count instructions
 * (msgcount, burst): run under callgrind --collect-atstart=no, only what
 * a program brackets with CALLGRIND_TOGGLE_COLLECT is counted, so the
 * waits (which tdshim turns into loops that spin as long as the other
 * ranks take) and start-up stay out. Without valgrind's header the macros
 * are no-ops and the programs still run.
 */
#ifndef BENCH_CGTOGGLE_H
#define BENCH_CGTOGGLE_H
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif
#ifndef CALLGRIND_TOGGLE_COLLECT
#define CALLGRIND_TOGGLE_COLLECT
#endif
#ifndef CALLGRIND_DUMP_STATS_AT
#define CALLGRIND_DUMP_STATS_AT(s) ((void)(s))
#endif
#endif
