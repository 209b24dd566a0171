#!/usr/bin/env bash
# The test command: install missing system packages, then build and run the whole test suite
# with the long cases enabled (RSAKIT_LONG_TESTS=1). .ci/run calls exactly this script.
set -euo pipefail
cd "$(dirname "$0")/.."
# Every step says how long it took against its budget, and the steps that can hang run under
# a deadline (scripts/bounded.sh): a hang fails its step and names the test, well inside CI's
# 90 minutes.
source scripts/bounded.sh
# The time budget (docs/testing.md): seconds per stage on the slowest machine CI has run on
# (2 AMD EPYC Zen 1 cores, no AVX-512), and 45 minutes for the whole run, which leaves CI's
# 90-minute limit room for the stages still to come and for a loaded machine. Over budget is
# a warning, never a failure: a loaded machine must not turn a correct change red. A stage
# added here gets a budget in the same commit, with its measured cost in the message.
declare -A budget=(
    ["install-deps"]=30
    ["format"]=30
    ["build"]=180
    ["tests"]=950
    ["examples"]=180
    ["layers"]=60
    ["docs check"]=200
    ["constant-time"]=250
    ["ifma checks"]=90
    ["adx checks"]=60
    ["benchmark smoke run"]=120
    ["debian package"]=120
    ["fuzz smoke run"]=450
    ["timing smoke run"]=150
    ["sanitizers"]=650
)
run_budget=2700
began=$(date +%s)
step_began=$began
stage_names=()
stage_seconds=()
step_done() {
    local now took
    now=$(date +%s)
    took=$(( now - step_began ))
    stage_names+=("$1")
    stage_seconds+=("$took")
    echo "ci: $1 took $took s (budget ${budget[$1]:-none} s; total $(( now - began )) s)"
    step_began=$now
}
# The table of stages against their budgets; a loud warning naming the stages over budget
# when the whole run took longer than run_budget. Prints only: the exit status is the tests'.
budget_report() {
    local total i name took limit mark over=()
    total=$(( $(date +%s) - began ))
    printf 'ci: %-22s %8s %8s\n' "stage" "seconds" "budget"
    for i in "${!stage_names[@]}"; do
        name=${stage_names[$i]}
        took=${stage_seconds[$i]}
        limit=${budget[$name]:-0}
        mark=""
        if [ "$took" -gt "$limit" ]; then
            mark="  OVER"
            over+=("$name ($took s, budget $limit s)")
        fi
        printf 'ci: %-22s %8d %8d%s\n' "$name" "$took" "$limit" "$mark"
    done
    printf 'ci: %-22s %8d %8d\n' "total" "$total" "$run_budget"
    if [ "$total" -gt "$run_budget" ]; then
        echo "ci: ################################################################################"
        echo "ci: WARNING: this run took $total s, over the $run_budget s budget (CI's limit is 5400 s)."
        if [ "${#over[@]}" -gt 0 ]; then
            for i in "${over[@]}"; do echo "ci: WARNING: over budget: $i"; done
        else
            echo "ci: WARNING: no single stage is over its budget: the machine is slower or busier than the budgets assume."
        fi
        echo "ci: ################################################################################"
    fi
}

scripts/install-deps.sh
step_done "install-deps"
export RSAKIT_LONG_TESTS="${RSAKIT_LONG_TESTS:-1}"

# The import check: a target that imports a target of this package it does not declare fails
# the build, so the layers (ARCHITECTURE.md) cannot reach upward. It costs nothing measurable.
swift build --build-tests --explicit-target-dependency-import-check=error
# The PKCS#11 module, which CLIPKCS11Tests load into pkcs11-tool, p11tool, gnutls-cli and ssh.
swift build --product rsakit-pkcs11
step_done "build"
mkdir -p .build
log=.build/rsakit-test.log
result_line=""
status=0
# The layout of every Swift file (swift format, .swift-format) and the 120-column limit:
# scripts/check-format.sh, about 5 s. A finding fails the run, after the tests still ran.
bash scripts/check-format.sh || status=$?
step_done "format"
# About 7 minutes here; the deadline is four times that.
bounded_shown 1800 "$log" swift test --skip-build --disable-swift-testing || status=$?
step_done "tests"

# One plain summary line from XCTest's closing "Executed N tests, with ... failures" line.
summary=$(grep -E "^[[:space:]]*Executed [0-9]+ tests?, with" "$log" | tail -n 1 || true)
if [ -n "$summary" ]; then
    executed=$(sed -E 's/.*Executed ([0-9]+) tests?.*/\1/' <<<"$summary")
    failures=$(sed -E 's/.* ([0-9]+) failures? \(.*/\1/' <<<"$summary")
    skipped=0
    if grep -qE "[0-9]+ tests? skipped" <<<"$summary"; then
        skipped=$(sed -E 's/.* ([0-9]+) tests? skipped.*/\1/' <<<"$summary")
    fi
    result_line="tests: $((executed - failures - skipped)) passed, $failures failed, $skipped skipped"
    echo "$result_line"
fi

# The Examples/ package: a Swift 6 app that does the six steps of docs/library.md's "Using RSAKit
# from Swift" and the server flow, built as a dependent package builds RSAKit: by version, from
# a fresh tagged clone of this tree (SwiftPM refuses unsafe build flags there), and one small
# program per layer product (the engine's linking no library of a higher layer). A cold debug
# build of RSAKit, then the runs: 59 s on a 2-core Xeon with IFMA.
if [ "$status" -eq 0 ]; then
    bash scripts/examples.sh || status=$?
    step_done "examples"
fi

# The layers refuse an upward import, or an undeclared C library (scripts/check-layers.sh,
# in a scratch copy: 16 s on a 2-core Xeon with IFMA).
if [ "$status" -eq 0 ]; then
    bash scripts/check-layers.sh || status=$?
    step_done "layers"
fi

# The documentation check: every public type in a Topics section of the DocC
# catalog, every ```swift snippet of README.md, docs/ and the catalog compiled against the built
# RSAKit (Swift 6, warnings as errors), and scripts/docs.sh building the documentation site
# (the DocC reference, the man pages, the guides) without writing into the source tree, with
# every doc link resolved; then the site served on 127.0.0.1 and opened in headless Chromium
# (scripts/check-site.sh: titles rendered, no console error, no broken internal link); then
# every command of README.md and the guides in docs/ runs against the built rsakit
# (scripts/check-guides.sh: each page in a fresh folder and HOME).
if [ "$status" -eq 0 ]; then
    bash scripts/check-docs.sh --site .build/site || status=$?
    [ "$status" -ne 0 ] || bash scripts/check-site.sh .build/site || status=$?
    bash scripts/check-guides.sh || status=$?
    step_done "docs check"
fi

# The constant-time check on the release build (valgrind memcheck; skips without valgrind). It
# makes the run's one release build (--static-swift-stdlib), which the benchmark, Debian
# package and timing stages reuse: 106 s of a clean-clone run on a 2-core Xeon.
if [ "$status" -eq 0 ]; then
    scripts/constant-time.sh || status=$?
    step_done "constant-time"
fi

# The AVX-512 IFMA kernel: no zmm spill in any kernel (about 5 s), and the kernels
# under MemorySanitizer with secrets poisoned (about 25 s; the IFMA kernel itself runs only
# where the CPU has it, and the script says so elsewhere); the efficiency harness
# (scripts/measure-ifma-efficiency.sh) is built, not run, so that it keeps compiling.
if [ "$status" -eq 0 ]; then
    bash scripts/check-ifma-spills.sh || status=$?
    bash scripts/msan-ifma.sh || status=$?
    bash scripts/measure-ifma-efficiency.sh --build-only || status=$?
    step_done "ifma checks"
fi

# The radix-2^64 ADX kernel: valgrind over the release build with secrets marked undefined and
# its two planted controls (about 6 s; skips without valgrind or on a CPU without BMI2/ADX,
# and says so), the C targets compiled for aarch64 against Debian's arm64 headers (about 15 s;
# fails, never skips, when it cannot run), the efficiency harness built, not run, and the
# checked-in assembly compared with what its generator writes.
if [ "$status" -eq 0 ]; then
    if ! python3 scripts/gen-mont-adx-asm.py | cmp -s - Sources/CRSAKitMontADX/rsakit_mont_adx_x86_64.S; then
        echo "ci: Sources/CRSAKitMontADX/rsakit_mont_adx_x86_64.S is not what scripts/gen-mont-adx-asm.py writes" >&2
        status=1
    fi
    bash scripts/constant-time-adx.sh || status=$?
    bash scripts/check-aarch64.sh || status=$?
    bash scripts/measure-adx-efficiency.sh --build-only || status=$?
    step_done "adx checks"
fi

# Benchmark smoke run (BENCHMARKS.md): every case at every key size, briefly, in release mode.
# Its figures are indicative only and speed is never asserted: it fails only when the
# benchmark itself fails (a wrong result, a missing key). Skipped when the tests failed.
if [ "$status" -eq 0 ]; then
    # The release rsakit beside the benchmark, for its cli case (whole processes vs openssl).
    # --static-swift-stdlib: the same release build as the Debian package's and the timing
    # harness's (scripts/constant-time.sh says why).
    # (swift run takes no --static-swift-stdlib: build, then run the binary.)
    swift build -c release --static-swift-stdlib --product rsakit || status=$?
    swift build -c release --static-swift-stdlib --product RSAKitBenchmarks || status=$?
    if [ "$status" -eq 0 ]; then
        "$(swift build -c release --static-swift-stdlib --show-bin-path)/RSAKitBenchmarks" --quick || status=$?
    fi
    step_done "benchmark smoke run"
fi
# The Debian package: built with the static binary, man pages and completions,
# checked by lintian, installed into a scratch root and purged (scripts/test-deb.sh); with
# RSAKIT_DEB_SYSTEM_TEST=1 (.ci/run, on a throw-away machine, as root) also with the real
# dpkg -i / man rsakit / dpkg --purge. It reuses the release build the stages above made
# (every release build here has --static-swift-stdlib), so it compiles nothing new.
if [ "$status" -eq 0 ]; then
    deb=$(bash scripts/package-deb.sh) || status=$?
    if [ "$status" -eq 0 ]; then
        bash scripts/test-deb.sh "$deb" || status=$?
        if [ "${RSAKIT_DEB_SYSTEM_TEST:-0}" = 1 ] && [ "$status" -eq 0 ]; then
            bash scripts/test-deb.sh --system "$deb" || status=$?
        fi
    fi
    # install.sh under another prefix writes nothing outside it (the same build; about 10 s).
    [ "$status" -ne 0 ] || bash scripts/test-install.sh || status=$?
    step_done "debian package"
fi
# Proof under attack: the fuzz harnesses, the timing harness's smoke run, then the sanitizers.
# RSAKIT_SKIP_HARDENING=1 skips all three (for a quick local run). The long runs of each
# (scripts/fuzz.sh all 30, scripts/timing.sh, scripts/sanitizers.sh --full) are in docs/testing.md.
if [ "$status" -eq 0 ] && [ "${RSAKIT_SKIP_HARDENING:-0}" != 1 ]; then
    # Every harness replays its committed corpus; only those whose sources changed since their
    # last logged long run (Fuzz/fuzz-log.tsv) also mutate, for RSAKIT_FUZZ_SECONDS each.
    scripts/fuzz.sh --smoke "${RSAKIT_FUZZ_SECONDS:-20}" || status=$?
    step_done "fuzz smoke run"
    # The timing smoke run: the dudect-style harness briefly over every target (about 35 s
    # after its release build); it fails only when its planted leak is not caught or a target
    # did not run, and reports the real targets without asserting.
    scripts/timing.sh --smoke || status=$?
    step_done "timing smoke run"
    # AddressSanitizer with UBSan on the C code in one build, and ThreadSanitizer, each over
    # the tests where it finds things (scripts/sanitizers.sh says which, and why).
    scripts/sanitizers.sh || status=$?
    step_done "sanitizers"
fi
budget_report
# The test summary again, as the last line.
[ -z "$result_line" ] || echo "$result_line"
exit "$status"
