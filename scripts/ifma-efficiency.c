/*
 * ifma-efficiency.c - how close the eight-lane IFMA kernel runs to this core's multiply-add
 * peak. Built and run by scripts/measure-ifma-efficiency.sh against the tree's
 * Sources/CRSAKitVector, with the IFMA target's flags. Not a test and not a benchmark of
 * rsakit against a peer: a diagnostic that says how much of an exponentiation's time is the
 * vpmadd52 instructions it must issue and how much is everything else.
 *
 * Prints, from process CPU time (CLOCK_PROCESS_CPUTIME_ID) on one core:
 *   - the peak rate of independent vpmadd52luq on zmm and on ymm (12 chains each);
 *   - the clock, from a chain of dependent scalar adds (one per cycle);
 *   - per size class N (10, 20, 30, 40 digits): cycles per eight-lane squaring, squaring with
 *     a quarter table scan, and product, each as a chain of dependent calls; two squaring
 *     chains alternated (p and q interleaved); their vpmadd52 counts (3N^2 + 2N, 4N^2 + N)
 *     and the share of the zmm peak they reach;
 *   - rsakit_vec_powm8 with an exponent as long as the modulus: its vpmadd52 count, counted
 *     from the driver's schedule (table of 32 entries, 5-bit windows), and the share of peak.
 * The inputs are fixed pseudo-random numbers; results are not checked here (VectorKernelTests
 * and the known-answer digest do that).
 */
#include "rsakit_vector_internal.h"

#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Best of `runs` timings of fn, in seconds per call of `calls`. */
#define BEST(runs, calls, body)                                          \
    ({                                                                   \
        double best_ = 1e30;                                             \
        for (int run_ = 0; run_ < (runs); run_++) {                      \
            double t0_ = cpu_seconds();                                  \
            for (long call_ = 0; call_ < (calls); call_++) {             \
                body;                                                    \
            }                                                            \
            double t_ = (cpu_seconds() - t0_) / (double)(calls);         \
            best_ = t_ < best_ ? t_ : best_;                             \
        }                                                                \
        best_;                                                           \
    })

__attribute__((target("avx512f,avx512ifma,avx512vl")))
static double peak_zmm(long iterations) {
    __m512i acc[12], b = _mm512_set1_epi64(12345), c = _mm512_set1_epi64(678);
    for (int i = 0; i < 12; i++) {
        acc[i] = _mm512_set1_epi64(i);
    }
    double t0 = cpu_seconds();
    for (long k = 0; k < iterations; k++) {
        for (int i = 0; i < 12; i++) {
            acc[i] = _mm512_madd52lo_epu64(acc[i], b, c);
        }
        __asm__ volatile("" : "+v"(acc[0]), "+v"(acc[1]), "+v"(acc[2]), "+v"(acc[3]), "+v"(acc[4]), "+v"(acc[5]),
                         "+v"(acc[6]), "+v"(acc[7]), "+v"(acc[8]), "+v"(acc[9]), "+v"(acc[10]), "+v"(acc[11]));
    }
    return (double)iterations * 12 / (cpu_seconds() - t0);
}

__attribute__((target("avx512f,avx512ifma,avx512vl")))
static double peak_ymm(long iterations) {
    __m256i acc[12], b = _mm256_set1_epi64x(12345), c = _mm256_set1_epi64x(678);
    for (int i = 0; i < 12; i++) {
        acc[i] = _mm256_set1_epi64x(i);
    }
    double t0 = cpu_seconds();
    for (long k = 0; k < iterations; k++) {
        for (int i = 0; i < 12; i++) {
            acc[i] = _mm256_madd52lo_epu64(acc[i], b, c);
        }
        __asm__ volatile("" : "+v"(acc[0]), "+v"(acc[1]), "+v"(acc[2]), "+v"(acc[3]), "+v"(acc[4]), "+v"(acc[5]),
                         "+v"(acc[6]), "+v"(acc[7]), "+v"(acc[8]), "+v"(acc[9]), "+v"(acc[10]), "+v"(acc[11]));
    }
    return (double)iterations * 12 / (cpu_seconds() - t0);
}

static double clock_hz(long iterations) {
    long x = 0;
    double t0 = cpu_seconds();
    for (long k = 0; k < iterations; k++) {
        __asm__ volatile("add $1, %0" : "+r"(x));
    }
    return (double)iterations / (cpu_seconds() - t0);
}

static uint64_t next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

int main(void) {
    if (!rsakit_vec_cpu_has_ifma()) {
        printf("ifma-efficiency: this CPU has no AVX-512 IFMA: nothing to measure\n");
        return 77;
    }
    const double hz = clock_hz(400000000L);
    const double zmm = peak_zmm(50000000L), ymm = peak_ymm(50000000L);
    printf("clock (dependent adds)       %.3f GHz\n", hz / 1e9);
    printf("peak vpmadd52 zmm            %.3f G/s = %.2f per cycle\n", zmm / 1e9, zmm / hz);
    printf("peak vpmadd52 ymm            %.3f G/s = %.2f per cycle (%.2f zmm-equivalents)\n",
           ymm / 1e9, ymm / hz, ymm / hz / 2);
    printf("\n%-4s %-26s %10s %10s %9s\n", "N", "eight-lane call (dependent)", "vpmadd52", "cycles", "of peak");

    const rk_ops *ops = &rk_ifma_ops;
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    for (size_t limbs = 8; limbs <= 32; limbs += 8) {
        uint64_t n[32], e[32], base[8 * 32], out[8 * 32];
        for (size_t i = 0; i < limbs; i++) {
            n[i] = next(&seed);
            e[i] = next(&seed);
        }
        n[0] |= 1;
        n[limbs - 1] |= 1ULL << 63;
        for (size_t i = 0; i < 8 * limbs; i++) {
            base[i] = next(&seed);
        }
        for (size_t l = 0; l < 8; l++) {
            base[l * limbs + limbs - 1] >>= 1; /* below n */
        }
        rsakit_vec_modulus *m = rsakit_vec_modulus_create(n, limbs);
        const size_t N = rsakit_vec_modulus_digits(m), W = 8 * N;
        uint64_t *a = aligned_alloc(64, W * 8), *b = aligned_alloc(64, W * 8), *t = aligned_alloc(64, W * 8);
        uint64_t *table = aligned_alloc(64, 32 * W * 8);
        for (size_t i = 0; i < W; i++) {
            a[i] = next(&seed) & ((1ULL << 52) - 1);
            b[i] = next(&seed) & ((1ULL << 52) - 1);
        }
        for (size_t i = 0; i < 32 * W; i++) {
            table[i] = next(&seed);
        }
        const long calls = 80000000L / (long)(N * N);
        const double sqr = BEST(7, calls, ops->sqr8(a, a, m));
        const double scan = BEST(7, calls, ops->sqr8_scan(a, a, m, t, table, 11, (unsigned)(call_ & 3)));
        const double mul = BEST(7, calls, ops->mul8(a, a, b, m));
        const double alt = BEST(7, calls / 2, (ops->sqr8(a, a, m), ops->sqr8(b, b, m))) / 2;
        const double sq_madds = (double)(3 * N * N + 2 * N), mul_madds = (double)(4 * N * N + N);
        struct {
            const char *what;
            double seconds, madds;
        } rows[] = {
            {"squaring", sqr, sq_madds},
            {"squaring + quarter scan", scan, sq_madds},
            {"product", mul, mul_madds},
            {"squaring, two chains alt.", alt, sq_madds},
        };
        for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
            double cycles = rows[r].seconds * hz;
            printf("%-4zu %-26s %10.0f %10.0f %8.1f%%\n", N, rows[r].what, rows[r].madds, cycles,
                   100.0 * rows[r].madds / (cycles * zmm / hz));
        }
        /* The driver's schedule for 64 limbs bits of exponent: entries 0 and 1 by products,
         * 2..31 by 15 squarings and 15 products; the top window by a scan; each further window
         * 5 squarings (4 with a quarter scan) and a product; one product out of the domain. */
        const size_t bits = 64 * limbs, windows = (bits + 4) / 5;
        const double madds = (15.0 + 5.0 * (double)(windows - 1)) * sq_madds +
                             (2.0 + 15.0 + (double)(windows - 1) + 1.0) * mul_madds;
        const double powm = BEST(5, 8000000L / (long)(limbs * limbs * limbs),
                                 rsakit_vec_powm8(RSAKIT_VEC_IMPL_IFMA, m, out, base, e, limbs));
        printf("%-4zu %-26s %10.0f %10.0f %8.1f%%   (%.1f us; at peak %.1f us)\n", N, "powm8, exponent of n's size",
               madds, powm * hz, 100.0 * madds / (powm * zmm), powm * 1e6, madds / zmm * 1e6);
        free(a);
        free(b);
        free(t);
        free(table);
        rsakit_vec_modulus_destroy(m);
    }
    return 0;
}
