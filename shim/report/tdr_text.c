/*
 * printf into a growable buffer, for rank 0's text summary and the advice
 * (tdr_writer.h). Not async-signal-safe (vsnprintf, malloc): the partial
 * report never uses it.
 */
#include "tdr_writer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void tdr_bprintf(buf *b, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = 1;
        return;
    }
    if ((size_t)n < sizeof small) {
        tdr_put(b, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->oom = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    tdr_put(b, big, (size_t)n);
    free(big);
}
