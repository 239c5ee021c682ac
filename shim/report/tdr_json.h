/*
 * Text output that is safe in a signal handler (issue 26): a byte buffer,
 * hand-written integer and number formatting, and JSON strings that are
 * always valid UTF-8 (issue 27). Nothing here takes a lock: a growable
 * buffer calls realloc, a fixed one (storage reserved in advance, as the
 * partial report's at MPI_Init) never allocates, so only fixed buffers are
 * used in a signal handler. shim/report/tdr_record.c formats the JSON
 * reports with these; tests/fuzz/fuzz-json.c fuzzes tdr_json_str.
 */
#ifndef TDR_JSON_H
#define TDR_JSON_H

#include <stddef.h>
#include <stdint.h>

typedef struct tdr_buf {
    char *p;
    size_t len, cap;
    int oom;   /* out of memory (growable) or of room (fixed): the text is incomplete */
    int fixed; /* p is the caller's storage of cap bytes: never reallocated */
} tdr_buf;

/* a fixed buffer over storage of cap bytes */
static inline tdr_buf tdr_buf_fixed(char *storage, size_t cap)
{
    tdr_buf b = {storage, 0, cap, 0, 1};
    if (cap)
        storage[0] = '\0';
    return b;
}

/* appends n bytes; the text stays NUL-terminated */
void tdr_put(tdr_buf *b, const char *s, size_t n);
void tdr_puts(tdr_buf *b, const char *s);
void tdr_putu(tdr_buf *b, uint64_t v);
void tdr_puti(tdr_buf *b, int64_t v);
/* a JSON number with 9 significant digits (as %.9g), or null when not finite */
void tdr_putnum(tdr_buf *b, double v);
/* printf for the conversions %d %u %ld %lu %lld %llu %s %c %%, nothing else
 * (no width, no precision, no floating point): async-signal-safe */
void tdr_putf(tdr_buf *b, const char *fmt, ...);

/*
 * s[0..n) as a quoted JSON string that is valid UTF-8 whatever the bytes:
 * '"', '\\' and control characters escaped, each byte that does not begin a
 * well-formed UTF-8 sequence (RFC 3629: no overlong forms, surrogates or
 * code points above U+10FFFF) replaced by U+FFFD. When more than max bytes
 * of s would be taken, the string is cut before the first character that
 * does not fit (never inside one) and ends with U+2026 "…". Returns 1 when
 * cut, else 0.
 */
int tdr_json_str(tdr_buf *b, const char *s, size_t n, size_t max);

/* a short English name for errno e, without locale or locks ("error N" when unknown) */
void tdr_put_errno(tdr_buf *b, int e);

#endif
