/*
 * tdshim.h: the optional application API of tdshim (DESIGN.md §2).
 *
 * A program never needs this header: LD_PRELOAD=libtdshim.so gives
 * termination detection to an unmodified program. These calls are for
 * programs that want to ask or tell tdshim something:
 *
 *   tdshim_set_passive()  with TDSHIM_IDLE=api, the program says "I have
 *                         nothing to do until a message arrives" (the rank
 *                         becomes passive and drives detection). Ignored
 *                         under the other idle notions.
 *   tdshim_terminated()   number of quiescent points (episodes) this rank
 *                         has learned of so far; 0 before the first.
 *   tdshim_version()      "0.1.0"
 *
 * Linking without the library. The functions are declared weak, so a
 * program calling them links and runs whether libtdshim.so is preloaded or
 * not: without tdshim their address is NULL. Call them through the
 * TDSHIM_* macros below, which check for that and fall back to a no-op
 * (set_passive), 0 (terminated) and NULL (version):
 *
 *     #include <tdshim.h>
 *     ...
 *     if (!work_left) TDSHIM_SET_PASSIVE();
 *     printf("episodes: %d\n", TDSHIM_TERMINATED());
 *
 * Build with the normal compiler flags (-I$(includedir)); no -ltdshim is
 * needed. When the program runs with LD_PRELOAD=libtdshim.so, the dynamic
 * linker resolves the weak references to the library's definitions. A
 * program may also link with -ltdshim directly instead of preloading it.
 */
#ifndef TDSHIM_H
#define TDSHIM_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && !defined(TDSHIM_BUILDING)
#define TDSHIM_WEAK __attribute__((weak))
#else
#define TDSHIM_WEAK
#endif

TDSHIM_WEAK void tdshim_set_passive(void);
TDSHIM_WEAK int tdshim_terminated(void);
TDSHIM_WEAK const char *tdshim_version(void);

#define TDSHIM_SET_PASSIVE() ((tdshim_set_passive) ? tdshim_set_passive() : (void)0)
#define TDSHIM_TERMINATED() ((tdshim_terminated) ? tdshim_terminated() : 0)
#define TDSHIM_VERSION() ((tdshim_version) ? tdshim_version() : (const char *)0)

#ifdef __cplusplus
}
#endif
#endif
