#!/usr/bin/env python3
# Prints the known-answer digest of Sources/CRSAKitMontADX (rk_adx_kat_digest), computed with
# Python's pow on the same xorshift inputs; it must equal KAT_DIGEST in rsakit_mont_adx.c.
M = (1 << 64) - 1
s = 0x9E3779B97F4A7C15
def nxt():
    global s
    s ^= (s << 13) & M; s ^= s >> 7; s ^= (s << 17) & M
    return s
def num(limbs): return sum(l << (64 * i) for i, l in enumerate(limbs))
def fold(d, v, count):
    for i in range(count):
        d = ((d ^ ((v >> (64 * i)) & M)) * 0x100000001B3) & M
    return d
d = 0xCBF29CE484222325
for limbs in (6, 9, 16, 24, 32):
    n = [nxt() for _ in range(limbs)]; n[0] |= 1; n[-1] |= 1 << 63
    base = [nxt() for _ in range(limbs)]; factor = [nxt() for _ in range(limbs)]
    e = [nxt(), nxt()]
    N, B, F, E = num(n), num(base), num(factor), num(e)
    d = fold(d, pow(B, E, N), limbs)
    d = fold(d, pow(B, 65537, N), limbs)
    d = fold(d, B * F % N, limbs)
print(hex(d))
