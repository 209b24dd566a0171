/*
 * rsakit_vector_ifma.c - the kernel (rsakit_vector_kernel.inc) over AVX-512 IFMA
 * intrinsics. Every function in this file carries the target attribute below (no
 * unsafeFlags, no global -mavx512*): the rest of the library stays runnable on any
 * x86-64, and the dispatch (rsakit_vector_dispatch.c) calls into this file only after
 * cpuid/xgetbv and the self-test say so. On other architectures the file is empty and
 * rk_ifma_compiled is 0.
 */
#include "rsakit_vector_internal.h"

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))

#include <immintrin.h>

const int rk_ifma_compiled = 1;
/* 0 when this file was compiled without optimisation: as a dependency of another package in
 * its debug build, where SwiftPM allows no flag to raise the level. The kernel is then many
 * times slower than GMP's path, and the dispatch does not choose it. */
#ifdef __OPTIMIZE__
const int rk_ifma_optimised = 1;
#else
const int rk_ifma_optimised = 0;
#endif

#pragma clang attribute push(__attribute__((target("avx512f,avx512ifma,avx512vl,avx512bw,avx512dq"))), apply_to = function)

typedef __m512i V;
typedef __mmask8 M8;

#define KFN(name) ifma_##name
#define KINLINE inline __attribute__((always_inline))

static inline V v_zero(void) { return _mm512_setzero_si512(); }
static inline V v_load(const uint64_t *p) { return _mm512_loadu_si512((const void *)p); }
static inline V v_loadu(const uint64_t *p) { return _mm512_loadu_si512((const void *)p); }
static inline void v_store(uint64_t *p, V x) { _mm512_storeu_si512((void *)p, x); }
static inline void v_storeu(uint64_t *p, V x) { _mm512_storeu_si512((void *)p, x); }
static inline V v_bcast(uint64_t u) { return _mm512_set1_epi64((long long)u); }
static inline V v_bcast0(V x) { return _mm512_broadcastq_epi64(_mm512_castsi512_si128(x)); }
static inline uint64_t v_lane0(V x) { return (uint64_t)_mm_cvtsi128_si64(_mm512_castsi512_si128(x)); }
static inline V v_idx(uint64_t a, uint64_t b, uint64_t c, uint64_t d,
                      uint64_t e, uint64_t f, uint64_t g, uint64_t h) {
    return _mm512_set_epi64((long long)h, (long long)g, (long long)f, (long long)e,
                            (long long)d, (long long)c, (long long)b, (long long)a);
}
static inline V v_madd_lo(V acc, V a, V b) { return _mm512_madd52lo_epu64(acc, a, b); }
static inline V v_madd_hi(V acc, V a, V b) { return _mm512_madd52hi_epu64(acc, a, b); }
static inline V v_add(V a, V b) { return _mm512_add_epi64(a, b); }
static inline V v_and(V a, V b) { return _mm512_and_si512(a, b); }
static inline V v_or(V a, V b) { return _mm512_or_si512(a, b); }
/* One vpternlogq; under MemorySanitizer, which checks that intrinsic's operands instead of
 * propagating their shadow (a false report on a secret table), the same as AND then OR. */
#if defined(__has_feature)
#if __has_feature(memory_sanitizer)
#define RK_MSAN 1
#endif
#endif
#ifdef RK_MSAN
static inline V v_or_and(V a, V m, V x) { return _mm512_or_si512(a, _mm512_and_si512(m, x)); }
#else
static inline V v_or_and(V a, V m, V x) { return _mm512_ternarylogic_epi64(a, m, x, 0xF8); }
#endif
static inline V v_srli52(V a) { return _mm512_srli_epi64(a, 52); }
static inline V v_slli1(V a) { return _mm512_slli_epi64(a, 1); }
static inline V v_maskz(M8 k, V a) { return _mm512_maskz_mov_epi64(k, a); }
static inline V v_mask_add(V src, M8 k, V a, V b) { return _mm512_mask_add_epi64(src, k, a, b); }
static inline V v_align1(V hi, V lo) { return _mm512_alignr_epi64(hi, lo, 1); }
static inline V v_align7(V hi, V lo) { return _mm512_alignr_epi64(hi, lo, 7); }
static inline V v_perm2(V a, V idx, V b) { return _mm512_permutex2var_epi64(a, idx, b); }
static inline M8 v_cmpgt(V a, V b) { return _mm512_cmpgt_epu64_mask(a, b); }
static inline M8 v_cmpeq(V a, V b) { return _mm512_cmpeq_epu64_mask(a, b); }
/* t |= (e[0] & masks[0]) | ... | (e[7 stride] & masks[7]), the eight entries' vectors `stride`
 * words apart (stride a compile-time constant), in two registers: each vector loaded and
 * ANDed with its mask broadcast from memory, ORed together, t read and written once. As
 * inline assembly, so that the compiler can neither hoist the scan's loads nor keep its
 * values in the registers that a squaring's accumulators need (written as intrinsics inside
 * sqr8_scan's rows, the squaring spilled). Under MemorySanitizer, which cannot follow a
 * secret through assembly, the kernel's own form over intrinsics; so too in an unoptimised
 * build (a package that depends on RSAKit builds it so in debug), where `stride` is no
 * compile-time constant and the "i" operands cannot be formed. */
#if !defined(RK_MSAN) && defined(__OPTIMIZE__)
#define RK_HAVE_SCAN_STEP8 1
#define RK_SCAN_ONE(u)                                   \
    "vmovdqu64 %c[d" #u "](%[e]), %[y]\n\t"              \
    "vpandq " #u "*8(%[m])%{1to8%}, %[y], %[y]\n\t"      \
    "vporq %[y], %[x], %[x]\n\t"
static inline void v_scan_step8(uint64_t *t, const uint64_t *e, const size_t stride, const uint64_t *masks) {
    V x, y;
    __asm__("vmovdqu64 (%[e]), %[x]\n\t"
            "vpandq (%[m])%{1to8%}, %[x], %[x]\n\t"
            RK_SCAN_ONE(1) RK_SCAN_ONE(2) RK_SCAN_ONE(3) RK_SCAN_ONE(4) RK_SCAN_ONE(5) RK_SCAN_ONE(6) RK_SCAN_ONE(7)
            "vporq %[t], %[x], %[x]\n\t"
            "vmovdqu64 %[x], %[t]"
            : [x] "=&v"(x), [y] "=&v"(y), [t] "+m"(*(V *)t)
            : [e] "r"(e), [m] "r"(masks),
              [d1] "i"(8 * stride), [d2] "i"(16 * stride), [d3] "i"(24 * stride), [d4] "i"(32 * stride),
              [d5] "i"(40 * stride), [d6] "i"(48 * stride), [d7] "i"(56 * stride),
              "m"(*(const uint64_t(*)[8 * 8 * stride])e), "m"(*(const uint64_t(*)[8])masks));
}
#undef RK_SCAN_ONE
#endif
/* Half width (ymm, AVX-512VL): the single-buffer dual product at N = 10 and 20. */
typedef __m256i V4;
static inline V4 v4_zero(void) { return _mm256_setzero_si256(); }
static inline V4 v4_load(const uint64_t *p) { return _mm256_loadu_si256((const void *)p); }
static inline void v4_store(uint64_t *p, V4 x) { _mm256_storeu_si256((void *)p, x); }
static inline V4 v4_bcast(uint64_t u) { return _mm256_set1_epi64x((long long)u); }
static inline V4 v4_bcast0(V4 x) { return _mm256_broadcastq_epi64(_mm256_castsi256_si128(x)); }
static inline V4 v4_madd_lo(V4 acc, V4 a, V4 b) { return _mm256_madd52lo_epu64(acc, a, b); }
static inline V4 v4_madd_hi(V4 acc, V4 a, V4 b) { return _mm256_madd52hi_epu64(acc, a, b); }
static inline V4 v4_add(V4 a, V4 b) { return _mm256_add_epi64(a, b); }
static inline V4 v4_and(V4 a, V4 b) { return _mm256_and_si256(a, b); }
static inline V4 v4_srli52(V4 a) { return _mm256_srli_epi64(a, 52); }
static inline V4 v4_mask_add(V4 src, M8 k, V4 a, V4 b) { return _mm256_mask_add_epi64(src, k, a, b); }
static inline V4 v4_align1(V4 hi, V4 lo) { return _mm256_alignr_epi64(hi, lo, 1); }
static inline V4 v4_align3(V4 hi, V4 lo) { return _mm256_alignr_epi64(hi, lo, 3); }
static inline M8 v4_cmpgt(V4 a, V4 b) { return _mm256_cmpgt_epu64_mask(a, b); }
static inline M8 v4_cmpeq(V4 a, V4 b) { return _mm256_cmpeq_epu64_mask(a, b); }
/* A scheduling barrier only: under MemorySanitizer, which counts an asm operand as a use
 * of a (poisoned, secret) value, it is left out. */
#ifdef RK_MSAN
#define v_pin(x) ((void)(x))
#else
#define v_pin(x) __asm__ volatile("" : "+v"(x))
#endif

#include "rsakit_vector_kernel.inc"

#pragma clang attribute pop

const rk_ops rk_ifma_ops = {
    .mul1 = ifma_mul1,
    .sqr1 = ifma_sqr1,
    .mul8 = ifma_mul8,
    .sqr8 = ifma_sqr8,
    .select = ifma_select,
    .mul1x2 = ifma_mul1x2,
    .sqr8_scan = ifma_sqr8_scan,
    .normalize = ifma_normalize,
};

#else

const int rk_ifma_compiled = 0;
const int rk_ifma_optimised = 0;
const rk_ops rk_ifma_ops = {0};

#endif
