/*
 * adx-efficiency.c - how close the radix-2^64 ADX kernel (Sources/CRSAKitMontADX) runs to
 * this core's mulx peak, and the private-operation rate it gives. Built and run by
 * scripts/measure-adx-efficiency.sh against the tree's sources. A diagnostic, not a test:
 * results are not checked here (MontADXKernelTests and the known-answer digest do that).
 *
 *   adx-efficiency            the table below
 *   adx-efficiency crt BITS   one line for a BITS-bit two-prime key (BITS / 128 limbs per
 *                             prime), for the side-by-side runs against the anchors
 *
 * Prints, from process CPU time (CLOCK_PROCESS_CPUTIME_ID) on one core:
 *   - the clock, from a chain of dependent adds (one per cycle); not the TSC, which does
 *     not tick at core speed under boost;
 *   - the peak rate of independent mulx (8 per loop iteration);
 *   - the rate of the kernel's row step (mulx, adcx and adox with a load and a store) in
 *     rows of 16 that depend on each other as a product's rows do: the ceiling of any
 *     schoolbook form built of these steps, whatever the loop around them;
 *   - per prime size (16, 24, 32 limbs = 1024, 1536, 2048 bits): cycles per product and per
 *     squaring (dependent chains), their mulx counts (2 W^2; W (W - 1) / 2 + W + W^2), and
 *     the share of the mulx floor (count / peak per cycle) they reach;
 *   - rsakit_adx_powm with an exponent as long as the prime: cycles, the mulx count of its
 *     schedule (32-entry table, 5-bit windows over 64 L bits, one product leaving the
 *     Montgomery form), the floor and the share reached;
 *   - the private-operation rate of a key of twice the prime's size: "bare" = the two
 *     exponentiations (what ippcp does: no blinding, no check), "protected" = plus the
 *     blinding (r^e mod n and one product), the unblinding product, the CRT recombination
 *     product and the re-encryption check (m^e mod n), e = 65537, all on this kernel (what
 *     OpenSSL and rsakit do). GMP's share of the real path (c mod p, byte conversions) is not
 *     in it.
 */
#include "rsakit_mont_adx.h"
#include "rsakit_mont_adx_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Best of `runs` timings of body, in seconds per call of `calls`. */
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

/* The clock: a chain of dependent register adds (one per cycle), 8 per loop iteration.
 * Register, not immediate, adds: recent Intel cores fold chains of add-immediate at
 * rename and run them faster than one per cycle (that gave "12 GHz" here). */
static double measure_hz(void) {
    const long iterations = 100000000L;
    double best = 1e30;
    for (int r = 0; r < 3; r++) {
        long n = iterations;
        double t0 = cpu_seconds();
        __asm__ volatile(
            "mov $3, %%rdx\n\t"
            "1:\n\t"
            "add %%rdx, %%rax\n\tadd %%rdx, %%rax\n\tadd %%rdx, %%rax\n\tadd %%rdx, %%rax\n\t"
            "add %%rdx, %%rax\n\tadd %%rdx, %%rax\n\tadd %%rdx, %%rax\n\tadd %%rdx, %%rax\n\t"
            "dec %%rcx\n\tjnz 1b"
            : "+c"(n) : : "rax", "rdx", "cc");
        double t = cpu_seconds() - t0;
        best = t < best ? t : best;
    }
    return 8.0 * (double)iterations / best;
}

/* Independent mulx, 8 per iteration, in a loop of the assembler's own. */
static double mulx_peak(void) {
    const long iterations = 100000000L;
    double best = 1e30;
    for (int r = 0; r < 3; r++) {
        long n = iterations;
        double t0 = cpu_seconds();
        __asm__ volatile(
            "mov $0x9E3779B97F4A7C15, %%rdx\n\t"
            "1:\n\t"
            "mulx %%rdx, %%r8, %%r9\n\tmulx %%rdx, %%r10, %%r11\n\t"
            "mulx %%rdx, %%r8, %%r9\n\tmulx %%rdx, %%r10, %%r11\n\t"
            "mulx %%rdx, %%r8, %%r9\n\tmulx %%rdx, %%r10, %%r11\n\t"
            "mulx %%rdx, %%r8, %%r9\n\tmulx %%rdx, %%r10, %%r11\n\t"
            "dec %%rcx\n\tjnz 1b"
            : "+c"(n) : : "rdx", "r8", "r9", "r10", "r11", "cc");
        double t = cpu_seconds() - t0;
        best = t < best ? t : best;
    }
    return 8.0 * (double)iterations / best;
}

/* The practical ceiling of a schoolbook row on this core: rows of 16 steps of the kernel's
 * own form (mulx from memory, adcx from memory, adox, store) over a 64-word buffer, each
 * row one word above the last, as in a product. Steps per second. */
static double row_step_peak(void) {
    static uint64_t t[64 + 32], u[16];
    for (int i = 0; i < 16; i++) u[i] = 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1);
    const long rows = 20000000L;
    double best = 1e30;
    for (int r = 0; r < 3; r++) {
        long n = rows;
        double t0 = cpu_seconds();
#define STEP(j, hi, prev)                                         \
        "mulx " #j "*8(%%rsi), %%rax, " hi "\n\t"                   \
        "adcx " #j "*8(%%rdi), %%rax\n\t"                          \
        "adox " prev ", %%rax\n\t"                                  \
        "mov %%rax, " #j "*8(%%rdi)\n\t"
        __asm__ volatile(
            "mov $0x1234567890ABCDEF, %%rdx\n\t"
            "xor %%r10d, %%r10d\n\t"
            "1:\n\t"
            "lea (%[t],%%r10,8), %%rdi\n\t"
            "xor %%r8d, %%r8d\n\t"
            "xor %%r9d, %%r9d\n\t"
            STEP(0, "%%r9", "%%r8") STEP(1, "%%r8", "%%r9") STEP(2, "%%r9", "%%r8") STEP(3, "%%r8", "%%r9")
            STEP(4, "%%r9", "%%r8") STEP(5, "%%r8", "%%r9") STEP(6, "%%r9", "%%r8") STEP(7, "%%r8", "%%r9")
            STEP(8, "%%r9", "%%r8") STEP(9, "%%r8", "%%r9") STEP(10, "%%r9", "%%r8") STEP(11, "%%r8", "%%r9")
            STEP(12, "%%r9", "%%r8") STEP(13, "%%r8", "%%r9") STEP(14, "%%r9", "%%r8") STEP(15, "%%r8", "%%r9")
            "mov $0, %%eax\n\t"
            "adcx %%rax, %%r8\n\t"
            "adox %%rax, %%r8\n\t"
            "mov %%r8, 128(%%rdi)\n\t"
            "inc %%r10\n\t"
            "and $31, %%r10\n\t"
            "dec %%rcx\n\t"
            "jnz 1b"
            : "+c"(n) : "S"(u), [t] "r"(t) : "rax", "rdx", "rdi", "r8", "r9", "r10", "cc", "memory");
#undef STEP
        double t = cpu_seconds() - t0;
        best = t < best ? t : best;
    }
    return 16.0 * (double)rows / best;
}

static uint64_t next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static double mul_count(double w) { return 2 * w * w; }
static double sqr_count(double w) { return w * (w - 1) / 2 + w + w * w; }

/* The mulx count of rsakit_adx_powm at L limbs with an L-limb exponent. */
static double powm_count(size_t limbs) {
    const double w = (double)((limbs + 3) & ~(size_t)3);
    const size_t bits = 64 * limbs, first = bits % 5 == 0 ? 5 : bits % 5, windows = (bits - first) / 5;
    return (1 + 15 + (double)windows + 1) * mul_count(w) + (15 + 5 * (double)windows) * sqr_count(w);
}

struct crt_times {
    double powm, pub, mulmod; /* seconds: powm at L limbs, e = 65537 and mulmod at 2L limbs */
};

static struct crt_times measure_crt(size_t limbs, int runs) {
    uint64_t s = 0x2545F4914F6CDD1Dull ^ limbs;
    uint64_t n[64], n2[64], b[64], e[64], r[64];
    for (size_t i = 0; i < 2 * limbs; i++) n2[i] = next(&s);
    for (size_t i = 0; i < limbs; i++) n[i] = next(&s), b[i] = next(&s), e[i] = next(&s);
    n[0] |= 1, n[limbs - 1] |= (uint64_t)1 << 63;
    n2[0] |= 1, n2[2 * limbs - 1] |= (uint64_t)1 << 63;
    rsakit_adx_modulus *m = rsakit_adx_modulus_create(n, limbs);
    rsakit_adx_modulus *m2 = 2 * limbs <= RSAKIT_ADX_MAX_LIMBS ? rsakit_adx_modulus_create(n2, 2 * limbs) : NULL;
    struct crt_times t = {0, 0, 0};
    const long calls = (long)(60000 / (limbs * limbs)) + 1;
    t.powm = BEST(runs, calls, rsakit_adx_powm(m, r, b, e, limbs));
    if (m2 != NULL) {
        uint64_t b2[64], f[64];
        for (size_t i = 0; i < 2 * limbs; i++) b2[i] = next(&s), f[i] = next(&s);
        const uint64_t e65537 = 65537;
        t.pub = BEST(runs, 20 * calls, rsakit_adx_powm_public_exponent(m2, b2, b2, &e65537, 1, 17));
        t.mulmod = BEST(runs, 100 * calls, rsakit_adx_mulmod(m2, b2, b2, f));
    }
    rsakit_adx_modulus_destroy(m);
    rsakit_adx_modulus_destroy(m2);
    return t;
}

/* Bare: two exponentiations. Protected: plus 2 public-exponent powm and 3 products mod n. */
static void crt_rates(const struct crt_times *t, double *bare, double *prot) {
    *bare = 1 / (2 * t->powm);
    *prot = 1 / (2 * t->powm + 2 * t->pub + 3 * t->mulmod);
}

int main(int argc, char **argv) {
    if (!rsakit_adx_cpu_supported()) {
        printf("adx-efficiency: this CPU has no BMI2/ADX: nothing to measure\n");
        return 77;
    }
    if (argc == 3 && strcmp(argv[1], "crt") == 0) {
        const size_t bits = (size_t)strtoul(argv[2], NULL, 10), limbs = bits / 128;
        if (limbs < 1 || 2 * limbs > RSAKIT_ADX_MAX_LIMBS) {
            fprintf(stderr, "adx-efficiency: key size out of range\n");
            return 64;
        }
        struct crt_times t = measure_crt(limbs, 5);
        double bare, prot;
        crt_rates(&t, &bare, &prot);
        printf("adx bits=%zu powm_us=%.1f bare_ops_per_cpu_s=%.1f protected_ops_per_cpu_s=%.1f\n",
               bits, t.powm * 1e6, bare, prot);
        return 0;
    }
    const double hz = measure_hz(), peak = mulx_peak();
    printf("clock (dependent adds)       %.3f GHz\n", hz / 1e9);
    printf("peak mulx                    %.3f G/s = %.2f per cycle\n", peak / 1e9, peak / hz);
    const double steps = row_step_peak();
    printf("row steps (mulx+adcx+adox)   %.3f G/s = %.2f per cycle: the ceiling of this schoolbook form,\n"
           "                             %.0f%% of the mulx floor\n", steps / 1e9, steps / hz, 100 * steps / peak);
    const double per_cycle = peak / hz;
    printf("\n%-6s %-28s %12s %12s %9s\n", "limbs", "call", "mulx", "cycles", "of floor");
    static const size_t sizes[] = {16, 24, 32};
    for (size_t k = 0; k < 3; k++) {
        const size_t L = sizes[k];
        uint64_t s = 0x9E3779B97F4A7C15ull ^ L;
        uint64_t n[64], a[64], b[64], t[128];
        for (size_t i = 0; i < L; i++) n[i] = next(&s), a[i] = next(&s), b[i] = next(&s);
        n[0] |= 1, n[L - 1] |= (uint64_t)1 << 63;
        rsakit_adx_modulus *m = rsakit_adx_modulus_create(n, L);
        /* The modulus context's first fields are private; rebuild the parameters the
         * assembly reads from the same n (W = L here: 16, 24, 32 need no padding). */
        uint64_t inv = n[0];
        for (int i = 0; i < 5; i++) inv *= 2 - n[0] * inv;
        const struct rk_adx_kp kp = {n, 0 - inv, L, rk_adx_table(L)};
        const long calls = 2000000L / (long)(L * L);
        const double tm = BEST(5, calls, rk_adx_mul(a, a, b, &kp, t)) * hz;
        const double ts = BEST(5, calls, rk_adx_sqr(a, a, &kp, t)) * hz;
        printf("%-6zu %-28s %12.0f %12.0f %8.1f%%\n", L, "product (dependent)", mul_count((double)L), tm,
               100 * mul_count((double)L) / per_cycle / tm);
        printf("%-6zu %-28s %12.0f %12.0f %8.1f%%\n", L, "squaring (dependent)", sqr_count((double)L), ts,
               100 * sqr_count((double)L) / per_cycle / ts);
        struct crt_times ct = measure_crt(L, 5);
        const double cycles = ct.powm * hz, count = powm_count(L);
        printf("%-6zu %-28s %12.0f %12.0f %8.1f%%   (%.1f us; floor %.1f us)\n", L, "powm, exponent of L limbs",
               count, cycles, 100 * count / per_cycle / cycles, ct.powm * 1e6, count / peak * 1e6);
        double bare, prot;
        crt_rates(&ct, &bare, &prot);
        printf("%-6zu RSA-%zu private op: bare %.0f /s (2 x powm), protected %.0f /s (+ blinding, check: %.1f us)\n",
               L, 128 * L, bare, prot, (2 * ct.pub + 3 * ct.mulmod) * 1e6);
        rsakit_adx_modulus_destroy(m);
    }
    return 0;
}
