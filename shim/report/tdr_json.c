/* Lock-free text output and UTF-8-safe JSON strings (tdr_json.h). */
#include "tdr_json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void tdr_put(tdr_buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n >= b->cap) {
        if (b->fixed) {
            b->oom = 1;
            return;
        }
        size_t cap = b->cap ? b->cap : 4096;
        while (cap <= b->len + n)
            cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void tdr_puts(tdr_buf *b, const char *s) { tdr_put(b, s, strlen(s)); }

void tdr_putu(tdr_buf *b, uint64_t v)
{
    char d[24];
    int i = (int)sizeof d;
    do
        d[--i] = (char)('0' + v % 10);
    while (v /= 10);
    tdr_put(b, d + i, sizeof d - (size_t)i);
}

void tdr_puti(tdr_buf *b, int64_t v)
{
    if (v < 0) {
        tdr_put(b, "-", 1);
        tdr_putu(b, (uint64_t)0 - (uint64_t)v);
    } else {
        tdr_putu(b, (uint64_t)v);
    }
}

/* 9 significant digits: the mantissa scaled into [1e8, 1e9) by powers of
 * ten (each multiplication exact to about 1e-16, far below the 9th digit),
 * rounded, trailing zeros dropped; fixed notation for exponents -4..8, as
 * %.9g does, else d.dddde+XX */
void tdr_putnum(tdr_buf *b, double v)
{
    if (v != v || v - v != 0) { /* NaN or infinite */
        tdr_puts(b, "null");
        return;
    }
    if (v == 0) {
        tdr_put(b, "0", 1);
        return;
    }
    if (v < 0) {
        tdr_put(b, "-", 1);
        v = -v;
    }
    int e = 8; /* v = m * 10^(e - 8) with m in [1e8, 1e9) */
    double m = v;
    while (m >= 1e9) {
        m /= 10;
        e++;
    }
    while (m < 1e8) {
        m *= 10;
        e--;
    }
    uint64_t digits = (uint64_t)(m + 0.5);
    if (digits >= 1000000000u) {
        digits /= 10;
        e++;
    }
    char d[9];
    for (int i = 8; i >= 0; i--, digits /= 10)
        d[i] = (char)('0' + digits % 10);
    int nd = 9;
    while (nd > 1 && d[nd - 1] == '0')
        nd--;
    if (e >= -4 && e < 9) {
        if (e < 0) {
            tdr_put(b, "0.", 2);
            for (int i = -1; i > e; i--)
                tdr_put(b, "0", 1);
            tdr_put(b, d, (size_t)nd);
        } else {
            tdr_put(b, d, (size_t)(e + 1 < nd ? e + 1 : nd));
            for (int i = nd; i < e + 1; i++)
                tdr_put(b, "0", 1);
            if (nd > e + 1) {
                tdr_put(b, ".", 1);
                tdr_put(b, d + e + 1, (size_t)(nd - e - 1));
            }
        }
    } else {
        tdr_put(b, d, 1);
        if (nd > 1) {
            tdr_put(b, ".", 1);
            tdr_put(b, d + 1, (size_t)nd - 1);
        }
        tdr_put(b, e < 0 ? "e-" : "e+", 2);
        int a = e < 0 ? -e : e;
        if (a < 10)
            tdr_put(b, "0", 1);
        tdr_putu(b, (uint64_t)a);
    }
}

void tdr_putf(tdr_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    for (const char *f = fmt; *f; f++) {
        const char *lit = f;
        while (*f && *f != '%')
            f++;
        tdr_put(b, lit, (size_t)(f - lit));
        if (!*f)
            break;
        int longs = 0;
        while (*++f == 'l')
            longs++;
        switch (*f) {
        case 'd':
            tdr_puti(b, longs == 0 ? va_arg(ap, int) : longs == 1 ? va_arg(ap, long) : va_arg(ap, long long));
            break;
        case 'u':
            tdr_putu(b, longs == 0   ? va_arg(ap, unsigned)
                        : longs == 1 ? va_arg(ap, unsigned long)
                                     : va_arg(ap, unsigned long long));
            break;
        case 's': {
            const char *s = va_arg(ap, const char *);
            tdr_puts(b, s ? s : "(null)");
            break;
        }
        case 'c': {
            char c = (char)va_arg(ap, int);
            tdr_put(b, &c, 1);
            break;
        }
        case '%':
            tdr_put(b, "%", 1);
            break;
        default: /* not supported: a mistake in the format, shown as is */
            tdr_put(b, "%?", 2);
            if (!*f)
                f--;
            break;
        }
    }
    va_end(ap);
}

/* the length of the well-formed UTF-8 sequence at s (n bytes left), 0 if none (RFC 3629 table 3.7) */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    size_t k;
    unsigned lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf)
        k = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        k = 3;
        if (c == 0xe0)
            lo = 0xa0;
        else if (c == 0xed)
            hi = 0x9f; /* no surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        k = 4;
        if (c == 0xf0)
            lo = 0x90;
        else if (c == 0xf4)
            hi = 0x8f; /* nothing above U+10FFFF */
    } else
        return 0;
    if (n < k || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < k; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return k;
}

int tdr_json_str(tdr_buf *b, const char *str, size_t n, size_t max)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)str;
    int cut = 0;
    tdr_put(b, "\"", 1);
    for (size_t i = 0; s && i < n;) {
        size_t k = utf8_len(s + i, n - i);
        size_t take = k ? k : 1;
        if (i + take > max) {
            cut = 1;
            break;
        }
        if (!k) {
            tdr_put(b, "\xef\xbf\xbd", 3); /* U+FFFD */
        } else if (s[i] == '"' || s[i] == '\\') {
            char e[2] = {'\\', (char)s[i]};
            tdr_put(b, e, 2);
        } else if (s[i] < 0x20) {
            char e[6] = {'\\', 'u', '0', '0', hex[s[i] >> 4], hex[s[i] & 15]};
            tdr_put(b, e, 6);
        } else {
            tdr_put(b, (const char *)s + i, k);
        }
        i += take;
    }
    if (cut)
        tdr_put(b, "\xe2\x80\xa6", 3); /* U+2026 */
    tdr_put(b, "\"", 1);
    return cut;
}

void tdr_put_errno(tdr_buf *b, int e)
{
    static const struct {
        int e;
        const char *s;
    } names[] = {
        {ENOSPC, "No space left on device"}, {EFBIG, "File too large"}, {EACCES, "Permission denied"},
        {EPERM, "Operation not permitted"}, {EEXIST, "File exists"}, {ENOENT, "No such file or directory"},
        {ENOTDIR, "Not a directory"}, {ELOOP, "Too many levels of symbolic links"},
        {EROFS, "Read-only file system"}, {EDQUOT, "Disk quota exceeded"}, {EIO, "Input/output error"},
        {ENAMETOOLONG, "File name too long"}, {ENOMEM, "Cannot allocate memory"},
        {EMFILE, "Too many open files"}, {EINTR, "Interrupted system call"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].e == e) {
            tdr_puts(b, names[i].s);
            return;
        }
    tdr_puts(b, "error ");
    tdr_puti(b, e);
}
