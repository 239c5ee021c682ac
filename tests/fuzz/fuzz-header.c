/*
 * libFuzzer target: the receive path's piggyback header. Every received
 * primary is classified by tds_hdr_kind (shim/mpi/tds_hdr.h, the code the
 * shim runs) and, as tds_recv_finish (tds_recv.c) does, a primary's piggyback bytes go to
 * the algorithm's on_recv (td_primary_recv): any bytes at all, next to the
 * genuine ones of the primaries the ranks send and the control messages
 * that keep the protocol going. A header the sender never wrote (a stale
 * BCJ stamp, a CDA credit of INT64_MIN, a stamp from the far future) must
 * leave the rank with an error message or a sane state, never a crash or
 * undefined behaviour. The shim's inline fast path (tds_recv_fast) must
 * accept only what tds_hdr_kind calls a primary, and any episode stamp
 * must be harmless (td_stamp_seen).
 */
#include "fuzz-world.h"

#include "tds_hdr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    fz_world *w = fz_new(&in);
    if (!w)
        return 0;
    size_t hdr_len = TDS_HDR_FIXED + w->a->pb_size;
    for (int r = 0; r < w->n; r++)
        td_stamp_base(&w->c[r], TDS_HDR_MAGIC); /* as tds_init.c */
    for (int ev = 0; in.n && ev < 4096; ev++) {
        unsigned op = fz_u8(&in) % 10;
        if (op < 7) {
            fz_program_event(w, op, &in);
        } else if (op == 7) {
            if (w->nq)
                fz_deliver_ctl(w, fz_u8(&in) % w->nq, &in, 0);
        } else { /* a message off the wire: 0..16 bytes, any header */
            int dst = (int)(fz_u8(&in) % (unsigned)w->n), src = (int)(fz_u8(&in) % (unsigned)w->n);
            uint8_t b[TDS_HDR_MAX + 8];
            size_t bytes = fz_u8(&in) % (sizeof b + 1);
            for (size_t k = 0; k < bytes; k++)
                b[k] = (uint8_t)fz_u8(&in);
            if (op == 9 && bytes) /* mostly well-formed: the magic, flags and piggyback from the input */
                b[0] = (uint8_t)(TDS_HDR_MAGIC | (b[0] & ~TDS_HDR_MAGIC_MASK));
            int kind = tds_hdr_kind(b, bytes, hdr_len);
            int fast = bytes >= hdr_len && bytes > 0 && b[0] == w->c[dst].hdr_in; /* tds_recv_fast's test */
            if (fast && kind != TDS_HK_PRIMARY)
                fz_bug("the fast path would take a message that is no primary", w, dst);
            if (w->fin[dst])
                continue;
            if (kind == TDS_HK_PRIMARY) {
                if (b[0] != w->c[dst].hdr_in) /* any stamp (tds_recv_finish) */
                    td_stamp_seen(&w->c[dst], src, 0, b[0]);
                td_primary_recv(&w->c[dst], src, b + TDS_HDR_FIXED);
            }
            else if (kind == TDS_HK_NOTIFY)
                td_notified(&w->c[dst]);
            fz_check(w, dst, 0);
        }
    }
    fz_fini(w);
    return 0;
}
