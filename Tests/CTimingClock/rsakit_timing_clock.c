/* The clocks of the timing harness; see include/rsakit_timing_clock.h. */
#include "rsakit_timing_clock.h"

#include <time.h>

uint64_t rsakit_timing_monotonic_raw_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC_RAW, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

#if defined(__x86_64__)
uint64_t rsakit_timing_tsc_begin(void) {
    uint32_t lo, hi;
    __asm__ volatile("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) : : "memory");
    return ((uint64_t)hi << 32) | lo;
}

uint64_t rsakit_timing_tsc_end(void) {
    uint32_t lo, hi, aux;
    __asm__ volatile("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux) : : "memory");
    (void)aux;
    return ((uint64_t)hi << 32) | lo;
}

int rsakit_timing_has_tsc(void) { return 1; }
#else
uint64_t rsakit_timing_tsc_begin(void) { return rsakit_timing_monotonic_raw_ns(); }
uint64_t rsakit_timing_tsc_end(void) { return rsakit_timing_monotonic_raw_ns(); }
int rsakit_timing_has_tsc(void) { return 0; }
#endif
