/*
 * libFuzzer target: the control-message decoder (td_wire_decode) and every
 * algorithm's on_control behind td_control, driven through a whole job of
 * 1..8 ranks (fuzz-world.h). Control messages are delivered in any order,
 * dropped, mutated in place or forged well-formed with any field values,
 * or replaced by raw bytes of any length, between primaries and polls.
 * A malformed or unexpected message must give an error with a message
 * (the shim prints it and marks the report), never a crash, an
 * out-of-bounds access or undefined behaviour.
 */
#include "fuzz-world.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    fz_world *w = fz_new(&in);
    if (!w)
        return 0;
    for (int ev = 0; in.n && ev < 4096; ev++) {
        unsigned op = fz_u8(&in) % 12;
        if (op < 7) {
            fz_program_event(w, op, &in);
        } else if (op <= 8) { /* a genuine message, intact (7) or mutated (8) */
            if (w->nq)
                fz_deliver_ctl(w, fz_u8(&in) % w->nq, &in, op == 8);
        } else if (op == 9) {
            fz_forge(w, &in);
        } else if (op == 10) { /* raw bytes of any length */
            int dst = (int)(fz_u8(&in) % (unsigned)w->n), src = (int)(fz_u8(&in) % (unsigned)w->n);
            uint8_t raw[64];
            size_t len = fz_u8(&in) % sizeof raw;
            for (size_t k = 0; k < len; k++)
                raw[k] = (uint8_t)fz_u8(&in);
            char why[120] = "";
            td_msg m;
            if (td_wire_decode(raw, len, &m, why, sizeof why) != TD_OK && !why[0])
                fz_bug("td_wire_decode failed without a reason", w, dst);
            fz_check(w, dst, td_control(&w->c[dst], src, raw, len));
        } else { /* drain: queued messages in order, at most 64 (waves may go on) */
            for (int k = 0; k < 64 && w->nq; k++)
                fz_deliver_ctl(w, 0, &in, 0);
        }
    }
    fz_fini(w);
    return 0;
}
