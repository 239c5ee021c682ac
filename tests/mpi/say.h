/* A rank's transcript (tests/mpi/transparency.c, mpi4.c): say() appends a
 * formatted line to out; the program gathers the ranks' transcripts and
 * rank 0 prints them in rank order. */
#ifndef TDS_TEST_SAY_H
#define TDS_TEST_SAY_H
#include <stdarg.h>
#include <stdio.h>

static char out[1 << 16];
static size_t outn;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out + outn, sizeof out - outn, fmt, ap);
    va_end(ap);
    if (n > 0 && outn + (size_t)n < sizeof out)
        outn += (size_t)n;
}
#endif
