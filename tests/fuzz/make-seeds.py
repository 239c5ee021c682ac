#!/usr/bin/env python3
"""Writes the seed corpora of tests/fuzz (committed; rerun after a change
of the input formats of fuzz-world.h, fuzz-control.c, fuzz-header.c,
fuzz-config.c or fuzz-json.c): one ordinary run per algorithm and job size
for the core fuzzers, every documented value for the configuration fuzzer,
hostile strings for the JSON writer."""
import os, sys

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus")

def write(name, i, data):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-%03d" % i), "wb") as f:
        f.write(bytes(data))

def run(algo, p, opt, drain):
    """a ring of primaries, everyone passive, control messages delivered,
    notified, passive again: an ordinary episode and a dormant root"""
    b = [algo, p - 1, opt]
    for r in range(p):
        b += [0, r, (r + 1) % p]          # send r -> r+1
    for _ in range(p):
        b += [1, 0, 0]                    # receive the oldest primary
    for rnd in range(3):
        for r in reversed(range(p)):
            b += [2, r]                   # passive
        b += drain
    for r in range(p):
        b += [4, r]                       # notified
    for r in reversed(range(p)):
        b += [2, r]
    b += drain
    return b

n = 0
for algo in range(9):
    for p, opt in ((1, 0), (2, 0), (3, 0x08), (5, 0x44), (8, 0x01)):
        extra = [2, 7, 1, 3] if opt & 0x40 else []   # small credits
        write("fuzz-control", n, run(algo, p, opt, [11]) [:3] + extra + run(algo, p, opt, [11])[3:])
        write("fuzz-header", n, run(algo, p, opt, [7, 0] * 24)[:3] + extra + run(algo, p, opt, [7, 0] * 24)[3:]
              + [9, 0, 0, 2, 0xA0, 0x00, 9, 0, 0, 9, 0xA4, 7, 7, 7, 7, 7, 7, 7, 7])
        n += 1

values = [
    (0, b"bcj"), (0, b"cda"), (0, b"nosuch"), (1, b"tag:77"), (1, b"exit:3"), (1, b"tag:-1"),
    (2, b"probe:4"), (2, b"spin:8"), (2, b"test"), (3, b"35.5"), (4, b"on"), (5, b"1,5-9,42"),
    (5, b"3,,4"), (6, b"1"), (7, b"kary:4"), (8, b"datatype"), (9, b"text"), (10, b"/tmp"),
    (11, b"group"), (12, b"5"), (13, b"0.5"), (14, b"2"), (15, b"4294967295"), (16, b"64"), (17, b"16"),
    (18, b"1048576"), (19, b"torus"), (20, b"2,2,2"), (20, b"2,,2"),
]
for i, (v, val) in enumerate(values):
    write("fuzz-config", i, bytes([v]) + val + b"\n")
write("fuzz-config", len(values), b"".join(bytes([v]) + val + b"\n" for v, val in values[::3]))

# fuzz-json: limit (2 bytes, 0xffff: none), fixed buffer size, a double, the string
import struct
strings = [b"mpirun -np 4 ./a.out", b"caf\xe9 /scratch/\xc3\xa9t\xc3\xa9", b"\"quoted\" back\\slash \x01\x1f\x7f",
           "\u20ac\U0001F600\u00e9".encode() * 8, b"\xed\xa0\x80\xc0\xaf\xf4\x90\x80\x80\xf0\x80\x80\x80",
           b"\xe2\x82", "x\u00e9".encode() * 600]
limits = [0xffff, 5, 0xffff, 7, 0xffff, 1, 1023]
numbers = [0.0, 1.5e-05, 123456789.0, -3.25, float("inf"), 1e300, 0.1]
for i, (st, lim, num) in enumerate(zip(strings, limits, numbers)):
    write("fuzz-json", i, struct.pack(">HB", lim, 40 + 9 * i) + struct.pack("<d", num) + st)
