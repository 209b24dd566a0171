/*
 * rsakit_timing_clock.h - the two clocks of the timing harness (Tests/TimingHarness).
 * Test-only: never linked into RSAKit.
 */
#ifndef RSAKIT_TIMING_CLOCK_H
#define RSAKIT_TIMING_CLOCK_H

#include <stdint.h>

/* The time stamp counter before a timed region: LFENCE; RDTSC, so that the read is not
 * hoisted above earlier instructions. On a CPU without a usable TSC (not x86-64), the
 * CLOCK_MONOTONIC_RAW nanoseconds instead. */
uint64_t rsakit_timing_tsc_begin(void);

/* The time stamp counter after a timed region: RDTSCP; LFENCE (RDTSCP waits for the timed
 * instructions to finish, LFENCE keeps later ones out). */
uint64_t rsakit_timing_tsc_end(void);

/* 1 when the two functions above read the TSC, 0 when they fall back to nanoseconds. */
int rsakit_timing_has_tsc(void);

/* clock_gettime(CLOCK_MONOTONIC_RAW) in nanoseconds (the vDSO: no system call). */
uint64_t rsakit_timing_monotonic_raw_ns(void);

#endif
