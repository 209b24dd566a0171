#!/usr/bin/env bash
# The ceiling the eight-lane IFMA kernel is measured against: this core's clock
# (a chain of dependent 64-bit adds, one per cycle) and its vpmadd52luq throughput on zmm
# registers (eight independent accumulators), both in process CPU time. A product of N
# digits costs 4N^2 + N multiply-adds (3N^2 + 2N for a square), so
#     kernel efficiency = multiply-adds per second of the kernel / the peak printed here.
# Usage: taskset -c 0 Benchmarks/scripts/ifma-peak.sh     (exit 77 without AVX-512 IFMA)
set -euo pipefail
grep -q avx512ifma /proc/cpuinfo || { echo "ifma-peak: this CPU has no AVX-512 IFMA" >&2; exit 77; }
CLANG="${CLANG:-/opt/swift/usr/bin/clang}"
command -v "$CLANG" >/dev/null 2>&1 || CLANG=clang
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/peak.c" <<'EOF'
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(void) {
    const long adds = 1000000000L;
    unsigned long x = 0;
    double t0 = cpu_seconds();
    for (long i = 0; i < adds; i++) {
        __asm__ volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0" : "+r"(x));
    }
    double clock_hz = 4.0 * (double)adds / (cpu_seconds() - t0);

    __m512i acc[8];
    for (int k = 0; k < 8; k++) acc[k] = _mm512_set1_epi64(k);
    __m512i a = _mm512_set1_epi64(12345), b = _mm512_set1_epi64(678910);
    const long rounds = 200000000L;
    t0 = cpu_seconds();
    for (long i = 0; i < rounds; i++) {
        for (int k = 0; k < 8; k++) acc[k] = _mm512_madd52lo_epu64(acc[k], a, b);
        __asm__ volatile("" : "+v"(a));
    }
    double madd_per_s = 8.0 * (double)rounds / (cpu_seconds() - t0);
    unsigned long sink = 0;
    for (int k = 0; k < 8; k++) sink += (unsigned long)_mm512_reduce_add_epi64(acc[k]);
    printf("ifma-peak clock_ghz=%.3f zmm_vpmadd52_per_s=%.3fe9 per_cycle=%.2f (sink %lu)\n",
           clock_hz / 1e9, madd_per_s / 1e9, madd_per_s / clock_hz, sink & 1);
    return 0;
}
EOF
"$CLANG" -O2 -mavx512f -mavx512ifma "$work/peak.c" -o "$work/peak"
"$work/peak"
