/*
 * rsakit_vector_emulated.c - the kernel (rsakit_vector_kernel.inc) over a scalar model of
 * each AVX-512 operation it uses, lane by lane, with the instructions' exact semantics
 * (vpmadd52luq/huq read the low 52 bits of each source; additions wrap mod 2^64).
 * For tests on CPUs without IFMA; never selected by the dispatch.
 */
#include "rsakit_vector_internal.h"

#include <string.h>

typedef struct { uint64_t l[8]; } V;
typedef struct { uint64_t l[4]; } V4;
typedef uint8_t M8;

#define KFN(name) emu_##name
#define KINLINE inline __attribute__((always_inline))

/* Each operation once, over `lanes` lanes (8 for V, 4 for V4). */
static inline void lanes_madd(uint64_t *acc, const uint64_t *a, const uint64_t *b, int lanes, int high) {
    for (int i = 0; i < lanes; i++) {
        unsigned __int128 p = (unsigned __int128)(a[i] & RK_MASK52) * (b[i] & RK_MASK52);
        acc[i] += high ? (uint64_t)(p >> 52) : (uint64_t)p & RK_MASK52;
    }
}
static inline void lanes_mask_add(uint64_t *src, M8 k, const uint64_t *a, const uint64_t *b, int lanes) {
    for (int i = 0; i < lanes; i++) {
        uint64_t sel = 0 - (uint64_t)((k >> i) & 1);
        src[i] = ((a[i] + b[i]) & sel) | (src[i] & ~sel);
    }
}
/* valignq: (hi:lo) as 2 x lanes lanes, shifted right by `count` lanes, the low `lanes` kept. */
static inline void lanes_alignr(uint64_t *r, const uint64_t *hi, const uint64_t *lo, int count, int lanes) {
    uint64_t c[16];
    memcpy(c, lo, (size_t)lanes * sizeof(uint64_t));
    memcpy(c + lanes, hi, (size_t)lanes * sizeof(uint64_t));
    memcpy(r, c + count, (size_t)lanes * sizeof(uint64_t));
}
static inline M8 lanes_cmp(const uint64_t *a, const uint64_t *b, int lanes, int equal) {
    M8 k = 0;
    for (int i = 0; i < lanes; i++) k |= (M8)((equal ? a[i] == b[i] : a[i] > b[i]) << i);
    return k;
}

static inline V v_zero(void) { V r; memset(&r, 0, sizeof r); return r; }
static inline V v_load(const uint64_t *p) { V r; memcpy(r.l, p, sizeof r.l); return r; }
static inline V v_loadu(const uint64_t *p) { return v_load(p); }
static inline void v_store(uint64_t *p, V x) { memcpy(p, x.l, sizeof x.l); }
static inline void v_storeu(uint64_t *p, V x) { v_store(p, x); }
static inline V v_bcast(uint64_t u) { V r; for (int i = 0; i < 8; i++) r.l[i] = u; return r; }
static inline uint64_t v_lane0(V x) { return x.l[0]; }
static inline V v_bcast0(V x) { return v_bcast(x.l[0]); }
static inline V v_idx(uint64_t a, uint64_t b, uint64_t c, uint64_t d,
                      uint64_t e, uint64_t f, uint64_t g, uint64_t h) {
    V r = {{a, b, c, d, e, f, g, h}};
    return r;
}
static inline V v_madd_lo(V acc, V a, V b) { lanes_madd(acc.l, a.l, b.l, 8, 0); return acc; }
static inline V v_madd_hi(V acc, V a, V b) { lanes_madd(acc.l, a.l, b.l, 8, 1); return acc; }
static inline V v_add(V a, V b) { for (int i = 0; i < 8; i++) a.l[i] += b.l[i]; return a; }
static inline V v_and(V a, V b) { for (int i = 0; i < 8; i++) a.l[i] &= b.l[i]; return a; }
static inline V v_or(V a, V b) { for (int i = 0; i < 8; i++) a.l[i] |= b.l[i]; return a; }
static inline V v_or_and(V a, V m, V x) { for (int i = 0; i < 8; i++) a.l[i] |= m.l[i] & x.l[i]; return a; }
static inline V v_srli52(V a) { for (int i = 0; i < 8; i++) a.l[i] >>= 52; return a; }
static inline V v_slli1(V a) { for (int i = 0; i < 8; i++) a.l[i] <<= 1; return a; }
static inline V v_maskz(M8 k, V a) {
    for (int i = 0; i < 8; i++) a.l[i] &= 0 - (uint64_t)((k >> i) & 1);
    return a;
}
static inline V v_mask_add(V src, M8 k, V a, V b) { lanes_mask_add(src.l, k, a.l, b.l, 8); return src; }
static inline V v_align1(V hi, V lo) { V r; lanes_alignr(r.l, hi.l, lo.l, 1, 8); return r; }
static inline V v_align7(V hi, V lo) { V r; lanes_alignr(r.l, hi.l, lo.l, 7, 8); return r; }
static inline V v_perm2(V a, V idx, V b) {
    V r;
    for (int i = 0; i < 8; i++) {
        uint64_t j = idx.l[i] & 15;
        r.l[i] = j < 8 ? a.l[j] : b.l[j - 8];
    }
    return r;
}
static inline M8 v_cmpgt(V a, V b) { return lanes_cmp(a.l, b.l, 8, 0); }
static inline M8 v_cmpeq(V a, V b) { return lanes_cmp(a.l, b.l, 8, 1); }

static inline V4 v4_zero(void) { V4 r; memset(&r, 0, sizeof r); return r; }
static inline V4 v4_load(const uint64_t *p) { V4 r; memcpy(r.l, p, sizeof r.l); return r; }
static inline void v4_store(uint64_t *p, V4 x) { memcpy(p, x.l, sizeof x.l); }
static inline V4 v4_bcast(uint64_t u) { V4 r; for (int i = 0; i < 4; i++) r.l[i] = u; return r; }
static inline V4 v4_bcast0(V4 x) { return v4_bcast(x.l[0]); }
static inline V4 v4_madd_lo(V4 acc, V4 a, V4 b) { lanes_madd(acc.l, a.l, b.l, 4, 0); return acc; }
static inline V4 v4_madd_hi(V4 acc, V4 a, V4 b) { lanes_madd(acc.l, a.l, b.l, 4, 1); return acc; }
static inline V4 v4_add(V4 a, V4 b) { for (int i = 0; i < 4; i++) a.l[i] += b.l[i]; return a; }
static inline V4 v4_and(V4 a, V4 b) { for (int i = 0; i < 4; i++) a.l[i] &= b.l[i]; return a; }
static inline V4 v4_srli52(V4 a) { for (int i = 0; i < 4; i++) a.l[i] >>= 52; return a; }
static inline V4 v4_mask_add(V4 src, M8 k, V4 a, V4 b) { lanes_mask_add(src.l, k, a.l, b.l, 4); return src; }
static inline V4 v4_align1(V4 hi, V4 lo) { V4 r; lanes_alignr(r.l, hi.l, lo.l, 1, 4); return r; }
static inline V4 v4_align3(V4 hi, V4 lo) { V4 r; lanes_alignr(r.l, hi.l, lo.l, 3, 4); return r; }
static inline M8 v4_cmpgt(V4 a, V4 b) { return lanes_cmp(a.l, b.l, 4, 0); }
static inline M8 v4_cmpeq(V4 a, V4 b) { return lanes_cmp(a.l, b.l, 4, 1); }

#define v_pin(x) ((void)(x))

#include "rsakit_vector_kernel.inc"

const rk_ops rk_emulated_ops = {
    .mul1 = emu_mul1,
    .sqr1 = emu_sqr1,
    .mul8 = emu_mul8,
    .sqr8 = emu_sqr8,
    .select = emu_select,
    .mul1x2 = emu_mul1x2,
    .sqr8_scan = emu_sqr8_scan,
    .normalize = emu_normalize,
};
