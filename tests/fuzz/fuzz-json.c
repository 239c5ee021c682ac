/*
 * libFuzzer target of the report's JSON writer (shim/report/tdr_json.c,
 * issue 27): tdr_json_str on any bytes and any length limit, in a growable
 * and in a fixed buffer, and tdr_putnum on any double.
 *
 * Input: byte 0 and 1 pick the limit (max bytes of the string taken), byte
 * 2 the fixed buffer's size, bytes 3..10 a double; the rest is the string.
 *
 * What must hold: the output is valid UTF-8 (checked by a decoder written
 * apart from the writer's), one JSON string that parses back (RFC 8259:
 * escapes, no raw control character) into exactly the input with each
 * byte that does not begin a well-formed sequence replaced by U+FFFD, cut
 * before the first character beyond the limit and then ending with U+2026,
 * and the return value says whether it was cut. A fixed buffer never
 * overflows and holds a prefix of the same text, flagged when short. A
 * number is "null" or parses (strtod) to the double within 9 digits.
 */
#include "tdr_json.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c)                                                                                       \
    do {                                                                                               \
        if (!(c)) {                                                                                    \
            fprintf(stderr, "fuzz-json: %s:%d: %s\n", __FILE__, __LINE__, #c);                         \
            abort();                                                                                   \
        }                                                                                              \
    } while (0)

/* one code point from s (n bytes), *len its length; -1 if ill-formed: by
 * value ranges (shortest form, no surrogates, <= U+10FFFF) */
static long decode(const unsigned char *s, size_t n, size_t *len)
{
    unsigned c = s[0];
    size_t k = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
    if (!k || k > n)
        return -1;
    long cp = k == 1 ? (long)c : k == 2 ? (long)(c & 0x1f) : k == 3 ? (long)(c & 0x0f) : (long)(c & 0x07);
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return -1;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    static const long min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[k] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return -1;
    *len = k;
    return cp;
}

/* the expected code points of the decoded string; returns their count, *cut */
static size_t expect(const unsigned char *s, size_t n, size_t max, long *out, int *cut)
{
    size_t i = 0, m = 0;
    *cut = 0;
    while (i < n) {
        size_t k = 1;
        long cp = decode(s + i, n - i, &k);
        if (cp < 0)
            cp = 0xfffd, k = 1;
        if (i + k > max) {
            *cut = 1;
            break;
        }
        out[m++] = cp;
        i += k;
    }
    if (*cut)
        out[m++] = 0x2026;
    return m;
}

static int hexval(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* parses the JSON string t (len bytes, the whole text) into code points; returns their count */
static size_t parse(const unsigned char *t, size_t len, long *out)
{
    CHECK(len >= 2 && t[0] == '"' && t[len - 1] == '"');
    size_t i = 1, m = 0;
    while (i < len - 1) {
        if (t[i] == '\\') {
            CHECK(i + 1 < len - 1);
            unsigned char e = t[i + 1];
            const char *simple = strchr("\"\\/bfnrt", e);
            if (e && simple) {
                static const char map[] = "\"\\/\b\f\n\r\t";
                out[m++] = map[simple - "\"\\/bfnrt"];
                i += 2;
                continue;
            }
            CHECK(e == 'u' && i + 6 <= len - 1);
            long cp = 0;
            for (int k = 0; k < 4; k++) {
                int h = hexval(t[i + 2 + k]);
                CHECK(h >= 0);
                cp = cp * 16 + h;
            }
            CHECK(cp < 0xd800 || cp > 0xdfff); /* the writer never needs surrogate pairs */
            out[m++] = cp;
            i += 6;
            continue;
        }
        CHECK(t[i] >= 0x20 && t[i] != '"'); /* raw control characters and quotes are not JSON */
        size_t k = 0;
        long cp = decode(t + i, len - 1 - i, &k);
        CHECK(cp >= 0); /* valid UTF-8 */
        out[m++] = cp;
        i += k;
    }
    return m;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 11)
        return 0;
    size_t max = (size_t)data[0] << 8 | data[1];
    if (max == 0xffff)
        max = (size_t)-1;
    size_t fixcap = data[2];
    double v;
    memcpy(&v, data + 3, sizeof v);
    const unsigned char *s = data + 11;
    size_t n = size - 11;

    tdr_buf b = {0};
    int cut = tdr_json_str(&b, (const char *)s, n, max);
    CHECK(!b.oom && b.p && b.p[b.len] == '\0');
    long *want = malloc((n + 2) * sizeof *want), *got = malloc((b.len + 1) * sizeof *got);
    CHECK(want && got);
    int wcut;
    size_t nw = expect(s, n, max, want, &wcut);
    size_t ng = parse((const unsigned char *)b.p, b.len, got);
    CHECK(cut == wcut);
    CHECK(ng == nw && memcmp(got, want, nw * sizeof *want) == 0);

    /* a fixed buffer: never beyond its storage, a prefix of the same text */
    char *store = malloc(fixcap + 1);
    CHECK(store);
    tdr_buf f = tdr_buf_fixed(store, fixcap);
    tdr_json_str(&f, (const char *)s, n, max);
    CHECK(f.len <= b.len && (fixcap == 0 || f.len < fixcap) && memcmp(f.p, b.p, f.len) == 0);
    CHECK(f.oom == (b.len >= fixcap));

    /* numbers */
    tdr_buf nb = {0};
    tdr_putnum(&nb, v);
    CHECK(nb.p && !nb.oom);
    if (!isfinite(v)) {
        CHECK(strcmp(nb.p, "null") == 0);
    } else {
        char *end;
        double back = strtod(nb.p, &end);
        CHECK(*end == '\0' && nb.p[0] != '.' && nb.p[0] != '+');
        CHECK(back == v || fabs(back - v) <= 1e-8 * fabs(v) || (fabs(v) < 1e-300 && fabs(back - v) < 1e-300));
    }
    free(nb.p);
    free(store);
    free(want);
    free(got);
    free(b.p);
    return 0;
}
