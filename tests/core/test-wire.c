/* Control-message wire format: round trips and rejection of malformed input. */
#include "tap.h"
#include "td_core.h"

#include <string.h>

int main(void)
{
    tap_plan(14);
    td_msg m = {.algo = 3, .type = 2, .flags = TD_MF_DIRTY | TD_MF_INF, .episode = 0xfeedbeef,
                .seq = 0x0123456789abcdefull, .a = -1, .b = INT64_MIN, .c = INT64_MAX};
    uint8_t w[TD_WIRE_SIZE], w2[TD_WIRE_SIZE];
    td_msg d;
    char why[128];
    td_wire_encode(&m, w);
    tap_ok(w[0] == TD_WIRE_MAGIC && w[1] == TD_WIRE_VERSION, "header carries magic and version");
    tap_ok(td_wire_decode(w, sizeof w, &d, why, sizeof why) == TD_OK, "decode of an encoded message succeeds");
    tap_ok(d.algo == m.algo && d.type == m.type && d.flags == m.flags && d.episode == m.episode &&
               d.seq == m.seq && d.a == m.a && d.b == m.b && d.c == m.c,
           "round trip preserves every field, extremes included");
    td_wire_encode(&d, w2);
    tap_ok(!memcmp(w, w2, sizeof w), "re-encoding is byte-identical");
    tap_ok(w[8] == 0xef && w[11] == 0xfe, "integers are little-endian on the wire");

    tap_ok(td_wire_decode(w, sizeof w - 1, &d, why, sizeof why) == TD_EWIRE && strstr(why, "length"),
           "short message rejected: %s", why);
    tap_ok(td_wire_decode(NULL, 0, &d, why, sizeof why) == TD_EWIRE, "NULL buffer rejected");
    memcpy(w2, w, sizeof w); w2[0] ^= 0xff;
    tap_ok(td_wire_decode(w2, sizeof w2, &d, why, sizeof why) == TD_EWIRE && strstr(why, "magic"), "bad magic rejected: %s", why);
    memcpy(w2, w, sizeof w); w2[1] = TD_WIRE_VERSION + 1;
    tap_ok(td_wire_decode(w2, sizeof w2, &d, why, sizeof why) == TD_EWIRE && strstr(why, "version"), "future version rejected: %s", why);
    memcpy(w2, w, sizeof w); w2[4] = 0x80;
    tap_ok(td_wire_decode(w2, sizeof w2, &d, why, sizeof why) == TD_EWIRE && strstr(why, "flag"), "undefined flags rejected: %s", why);
    memcpy(w2, w, sizeof w); w2[5] = 1;
    tap_ok(td_wire_decode(w2, sizeof w2, &d, why, sizeof why) == TD_EWIRE && strstr(why, "reserved"), "reserved byte 5 rejected");
    memcpy(w2, w, sizeof w); w2[7] = 1;
    tap_ok(td_wire_decode(w2, sizeof w2, &d, why, sizeof why) == TD_EWIRE, "reserved bytes 6-7 rejected");
    memcpy(w2, w, sizeof w); w2[13] = 1;
    tap_ok(td_wire_decode(w2, sizeof w2, &d, why, sizeof why) == TD_EWIRE, "reserved bytes 12-15 rejected");
    tap_ok(td_wire_decode(w, sizeof w, &d, NULL, 0) == TD_OK, "decode works without an error buffer");
    return tap_done();
}
