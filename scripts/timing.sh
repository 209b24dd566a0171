#!/usr/bin/env bash
# The timing test: the dudect-style harness Tests/TimingHarness in release mode,
# over RSAKit's decryptions, a whole `rsakit decrypt --raw` process and a planted leak.
#
#   scripts/timing.sh            the long run: 10^6 measurements per class per library
#                                target, 5,000 per class for the process target, --strict
#   scripts/timing.sh --smoke    the CI run (about 30 s after the build on a quiet machine, 70 s
#                                at load 4): 3,000 per class, 40,000 for the planted leak, 60
#                                per class for the process
#
# Fails (exit 1) when the planted leak (an early return on bad padding after the real
# private-key operation, in the harness) is not caught with |t| > 4.5, or when a target did
# not run or its inputs did not give their class's outcome. The long run also fails (exit 2)
# on a LEAK verdict: |t| > 4.5 between classes that the call's result does not tell apart.
# The smoke run only reports the real targets: at 3,000 per class a real difference may or
# may not show, and a CI failure on noise is worse than no check.
#
# Noise (2 shared cores): pinned to core 1 with taskset where it exists; classes interleaved
# in random order per measurement, so drift and other processes hit both alike; the first
# batch of every target warms up and sets the crop thresholds, then is thrown away; 100
# percentile crops drop preemptions and the blinding refresh; the TSC ticks at a constant
# rate (constant_tsc), whatever the core's frequency.
# The harness runs under timeout(1) (TIMING_DEADLINE seconds: 600 for the smoke run, 6 hours
# for the long one), so a hung `rsakit` child fails the run instead of stalling CI.
# Environment: TIMING_DEADLINE, TIMING_PER_CLASS, TIMING_PROCESS_PER_CLASS, TIMING_PLANTED_PER_CLASS, TIMING_TARGETS (comma-separated),
# TIMING_BITS (default 1024), TIMING_CLOCK (tsc or monotonic-raw), TIMING_LOG (default
# .build/timing/timing-long.log or timing-smoke.log).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=long
if [ "${1:-}" = --smoke ]; then mode=smoke; shift; fi
[ "$#" -eq 0 ] || { echo "usage: scripts/timing.sh [--smoke]" >&2; exit 64; }
if [ "$mode" = smoke ]; then
    per_class=${TIMING_PER_CLASS:-3000}; process_per_class=${TIMING_PROCESS_PER_CLASS:-60}; strict=()
    # The plant's margin: |t| about 11 at 5,000 per class on a quiet machine, 41 at 30,000,
    # but only 8 at 25,000 at load 4.3: the smoke run spends most of its time on it.
    planted_per_class=${TIMING_PLANTED_PER_CLASS:-40000}
    deadline=${TIMING_DEADLINE:-600}
else
    per_class=${TIMING_PER_CLASS:-1000000}; process_per_class=${TIMING_PROCESS_PER_CLASS:-5000}; strict=(--strict)
    planted_per_class=${TIMING_PLANTED_PER_CLASS:-$per_class}
    deadline=${TIMING_DEADLINE:-21600}
fi
# --static-swift-stdlib: the test run's one release build (scripts/constant-time.sh says why).
swift build -c release --static-swift-stdlib --product TimingHarness
swift build -c release --static-swift-stdlib --product rsakit
bin=$(swift build -c release --static-swift-stdlib --show-bin-path)
mkdir -p .build/timing
log=${TIMING_LOG:-.build/timing/timing-$mode.log}
pin=()
if command -v taskset >/dev/null 2>&1 && [ "$(nproc)" -gt 1 ] && taskset -c 1 true 2>/dev/null; then pin=(taskset -c 1); fi
targets=()
[ -z "${TIMING_TARGETS:-}" ] || targets=(--targets "$TIMING_TARGETS")
{
    echo "timing: mode=$mode date=$(date -u +%Y-%m-%dT%H:%M:%SZ) commit=$(git rev-parse --short HEAD 2>/dev/null || echo none) cpu=\"$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)\" cores=$(nproc) load=\"$(cut -d' ' -f1-3 /proc/loadavg)\" pinned=${pin[*]:-no}"
} | tee "$log"
start=$(date +%s)
set +e
timeout -k 30 "$deadline" "${pin[@]}" "$bin/TimingHarness" --per-class "$per_class" --process-per-class "$process_per_class" \
    --planted-per-class "$planted_per_class" \
    --bits "${TIMING_BITS:-1024}" --clock "${TIMING_CLOCK:-tsc}" --rsakit "$bin/rsakit" \
    "${targets[@]}" "${strict[@]}" 2>&1 | tee -a "$log"
rc=${PIPESTATUS[0]}
set -e
echo "timing: mode=$mode seconds=$(( $(date +%s) - start )) exit=$rc log=$log" | tee -a "$log"
summary=$(grep '^timing: summary' "$log" | tail -n 1 || true)
if [ -z "$summary" ]; then echo "timing: the harness gave no summary" >&2; exit 1; fi
targets_count=$(sed -E 's/.* targets=([0-9]+).*/\1/' <<<"$summary")
measured=$(sed -E 's/.* measured=([0-9]+).*/\1/' <<<"$summary")
if [ "$measured" != "$targets_count" ]; then echo "timing: only $measured of $targets_count targets ran" >&2; exit 1; fi
if [ -z "${TIMING_TARGETS:-}" ] && ! grep -q 'planted=caught' <<<"$summary"; then
    # The smoke run's measurements are few and the machine may be shared: a plant missed by
    # noise is measured once more, alone, with three times as many measurements (or
    # TIMING_PLANTED_RETRY_PER_CLASS). Missed twice fails; the long run never retries.
    if [ "$mode" = smoke ]; then
        retry_per_class=${TIMING_PLANTED_RETRY_PER_CLASS:-$(( 3 * planted_per_class ))}
        echo "timing: the planted leak was not caught at $planted_per_class per class; measuring it again, alone, at $retry_per_class" | tee -a "$log"
        set +e
        timeout -k 30 "$deadline" "${pin[@]}" "$bin/TimingHarness" --per-class "$per_class" --process-per-class "$process_per_class" \
            --planted-per-class "$retry_per_class" --bits "${TIMING_BITS:-1024}" --clock "${TIMING_CLOCK:-tsc}" \
            --rsakit "$bin/rsakit" --targets planted-early-return 2>&1 | tee -a "$log"
        set -e
        if grep '^timing: summary' "$log" | tail -n 1 | grep -q 'planted=caught'; then
            echo "timing: the planted leak was caught on the second measurement" | tee -a "$log"
            exit 0
        fi
    fi
    echo "timing: the planted leak was not caught" >&2; exit 1
fi
exit "$rc"
