/* Control-message wire format: see td_core.h for the layout. */
#include "td_core.h"

#include <stdio.h>
#include <string.h>

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v) { put16(p, (uint16_t)v); put16(p + 2, (uint16_t)(v >> 16)); }
static void put64(uint8_t *p, uint64_t v) { put32(p, (uint32_t)v); put32(p + 4, (uint32_t)(v >> 32)); }
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t get32(const uint8_t *p) { return get16(p) | (uint32_t)get16(p + 2) << 16; }
static uint64_t get64(const uint8_t *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }

void td_wire_encode(const td_msg *m, uint8_t out[TD_WIRE_SIZE])
{
    memset(out, 0, TD_WIRE_SIZE);
    out[0] = TD_WIRE_MAGIC;
    out[1] = TD_WIRE_VERSION;
    out[2] = m->algo;
    out[3] = m->type;
    out[4] = m->flags;
    put32(out + 8, m->episode);
    put64(out + 16, m->seq);
    put64(out + 24, (uint64_t)m->a);
    put64(out + 32, (uint64_t)m->b);
    put64(out + 40, (uint64_t)m->c);
}

static int bad(char *why, size_t whylen, const char *what, unsigned v)
{
    if (why && whylen)
        snprintf(why, whylen, "malformed control message: %s (0x%x)", what, v);
    return TD_EWIRE;
}

int td_wire_decode(const uint8_t *buf, size_t len, td_msg *m, char *why, size_t whylen)
{
    if (!buf || len != TD_WIRE_SIZE)
        return bad(why, whylen, "wrong length", (unsigned)len);
    if (buf[0] != TD_WIRE_MAGIC)
        return bad(why, whylen, "bad magic", buf[0]);
    if (buf[1] != TD_WIRE_VERSION)
        return bad(why, whylen, "unsupported version", buf[1]);
    if (buf[4] & ~TD_MF_ALL)
        return bad(why, whylen, "undefined flag bits", buf[4]);
    if (buf[5] || get16(buf + 6) || get32(buf + 12))
        return bad(why, whylen, "reserved bytes not zero", buf[5]);
    m->algo = buf[2];
    m->type = buf[3];
    m->flags = buf[4];
    m->episode = get32(buf + 8);
    m->seq = get64(buf + 16);
    m->a = (int64_t)get64(buf + 24);
    m->b = (int64_t)get64(buf + 32);
    m->c = (int64_t)get64(buf + 40);
    return TD_OK;
}
