/*
 * The piggyback header of every primary message (DESIGN.md §4), apart from
 * MPI so that its decoding can be fuzzed (tests/fuzz/fuzz-header.c) with
 * the code the shim runs.
 */
#ifndef TDS_HDR_H
#define TDS_HDR_H

#include <stddef.h>
#include <stdint.h>

#include "td_core.h"

/* ---- piggyback header (DESIGN.md §4) ----
 * Every message the program sends starts with one fixed byte, the
 * magic/version in its high 6 bits and the flags in its low 2, followed
 * by the algorithm's pb_size bytes. The piggyback length does not travel:
 * it is the same on every rank because every rank runs the same algorithm
 * (checked at init), and the magic changes with the layout.
 * Why one byte: Open MPI 4.1.4's shared-memory path (vader) is ~0.1 us
 * slower one way from 11 bytes of message on (measured with bench/pingpong
 * on the 2-core VM: 0.34-0.36 us at 8-10 B, 0.43-0.45 us at 11-14 B). With
 * BCJ's 1-byte piggyback an 8-byte message goes out as 8 + 2 = 10 bytes,
 * on the fast side; a 2-byte fixed header would make it 11.
 * Bits 2-3 are the stamp of the sender's episode (TD_STAMP_MASK, td_core.h;
 * why, in td_engine.c "Premature announcements"): the magic keeps the high
 * 4 bits. A message without this header (a rank not under tdshim) is
 * caught by the magic with probability 15/16 per message (63/64 with 6
 * bits), and (15/16)^n over n messages: the magic is not what keeps a
 * job with ranks not under tdshim right (init's check of every rank is,
 * tds_preload.c), it is a second line, and a program's message that passes
 * it is reported as no worse than before (a primary counted where there is
 * none: the report's unreceived counts show it). 2 bits of the magic were
 * the cheapest place for the stamp: no wire byte more (an 8-byte message
 * stays under 11 bytes with bcj, above) and the fast paths write and
 * compare the byte they wrote and compared before. */
#define TDS_HDR_MAGIC 0xA0      /* bump on layout change; 0xB4 (& 0xFC) was the 6-bit magic, 0xB1 the 4-byte header */
#define TDS_HDR_MAGIC_MASK 0xF0 /* the bits of byte 0 that hold the magic */
_Static_assert((TDS_HDR_MAGIC_MASK & TD_STAMP_MASK) == 0 && (TD_STAMP_MASK & 3) == 0,
               "the stamp bits are neither the magic's nor the flags'");
#define TDS_HDR_FIXED 1
#define TDS_HDR_MAX (TDS_HDR_FIXED + TD_PB_MAX)
enum { TDS_HF_IGNORED = 0x01, TDS_HF_NOTIFY = 0x02 }; /* low bits of byte 0 */

/* What a received message of `bytes` wire bytes starting with b is, with
 * headers of hdr_len bytes (TDS_HDR_FIXED + the algorithm's pb_size).
 * b[0] is read only if bytes > 0. TDS_HK_NONE: shorter than a header or
 * without the magic (a rank not under tdshim, or another algorithm). */
enum { TDS_HK_NONE = 0, TDS_HK_PRIMARY, TDS_HK_IGNORED, TDS_HK_NOTIFY };
static inline int tds_hdr_kind(const uint8_t *b, size_t bytes, size_t hdr_len)
{
    if (bytes < hdr_len || bytes == 0 || (b[0] & TDS_HDR_MAGIC_MASK) != TDS_HDR_MAGIC)
        return TDS_HK_NONE;
    if (b[0] & TDS_HF_NOTIFY)
        return TDS_HK_NOTIFY;
    return (b[0] & TDS_HF_IGNORED) ? TDS_HK_IGNORED : TDS_HK_PRIMARY;
}

#endif
