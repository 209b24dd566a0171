#!/usr/bin/env bash
# Build the libFuzzer harnesses (Fuzz/, a package of their own) and run one or all of them.
#
#   scripts/fuzz.sh [TARGET|all] [SECONDS]     default: all, 30 seconds each
#
# TARGET is a harness name (FuzzDER, FuzzPEM, FuzzKeyFile, FuzzContainer, FuzzStoreItem,
# FuzzArmor, FuzzCLIArguments, FuzzX509, FuzzPKCS12) or `all`. Each run starts from Fuzz/Corpus/TARGET (seeds made by
# Fuzz/make-seeds.py when the folder is missing: openssl keys in every format, the Wycheproof
# keys, containers for the fixed key, openssl certificates and PKCS#12 files, and every regression input under
# Tests/RSAKitTests/Fixtures/fuzz/TARGET/) and grows it; crashes, leaks and timeouts are written
# to .build/fuzz-artifacts/TARGET/ and make the script fail. One summary line per harness:
#   fuzz: FuzzDER runs=1234567 edges=308 features=1305 seconds=30 crashes=0
# Environment: FUZZ_CORPUS (corpus root, default Fuzz/Corpus), FUZZ_FLAGS (extra libFuzzer flags,
# e.g. "-runs=10000000" to stop at 10^7 executions), FUZZ_SKIP_BUILD=1.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
all=(FuzzDER FuzzPEM FuzzKeyFile FuzzContainer FuzzStoreItem FuzzArmor FuzzCLIArguments FuzzX509 FuzzPKCS12)
target=${1:-all}
seconds=${2:-30}
corpus_root=${FUZZ_CORPUS:-$root/Fuzz/Corpus}
artifacts_root=$root/.build/fuzz-artifacts
if [ "$target" = all ]; then targets=("${all[@]}"); else targets=("$target"); fi
for t in "${targets[@]}"; do
    [[ " ${all[*]} " == *" $t "* ]] || { echo "fuzz.sh: unknown target '$t' (one of: ${all[*]} all)" >&2; exit 64; }
done

# libFuzzer and AddressSanitizer on every module of the harness, RSAKit and its C shims included.
# NOTE: not `--sanitize=fuzzer --sanitize=address`: SwiftPM 6.3.1 passes them to swiftc as two
# `-sanitize=` flags in no fixed order, and swiftc keeps only the last one, so about half the
# builds came out without coverage instrumentation in the Swift code (libFuzzer then reports
# ~110 counters, the C shims', instead of ~16000). `--sanitize=fuzzer` still tells SwiftPM to
# let libFuzzer supply `main`; the one combined swiftc flag and -fsanitize=address for clang
# give both sanitizers everywhere.
build_flags=(-c release --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address -Xcc -fsanitize=address)
# One product at a time: a build of the whole Fuzz package also builds the rsakit executable
# (the dependency's product), whose main.swift does not compile in that mode (top-level code
# with libFuzzer's -parse-as-library), so `swift build` with no --product fails.
if [ "${FUZZ_SKIP_BUILD:-0}" != 1 ]; then
    for t in "${targets[@]}"; do
        swift build --package-path Fuzz "${build_flags[@]}" --product "$t" 2>&1 \
            | grep -v "Cannot export local symbol '__asan_extra_spill_area'" || true
        [ "${PIPESTATUS[0]}" -eq 0 ] || { echo "fuzz.sh: build of $t failed" >&2; exit 1; }
    done
fi
bin=$(swift build --package-path Fuzz "${build_flags[@]}" --show-bin-path)

for t in "${targets[@]}"; do
    if [ ! -d "$corpus_root/$t" ]; then
        python3 Fuzz/make-seeds.py "$corpus_root"   # writes every harness's seeds
        break
    fi
done

dictionary() {
    case "$1" in
        FuzzDER) echo der ;; FuzzPEM | FuzzKeyFile) echo pem ;; FuzzContainer) echo container ;;
        FuzzArmor) echo armor ;; FuzzStoreItem) echo store ;; FuzzCLIArguments) echo cli ;;
    esac
}

# The Swift runtime's backtracer would catch the abort of a failed property first (and trips
# ASan while reading memory); libFuzzer's own handler reports and saves the input.
export SWIFT_BACKTRACE=enable=no
status=0
for t in "${targets[@]}"; do
    corpus=$corpus_root/$t
    artifacts=$artifacts_root/$t
    mkdir -p "$corpus" "$artifacts"
    dict=$root/Fuzz/Dictionaries/$(dictionary "$t").dict
    # Harnesses whose input mixes formats get several dictionaries, concatenated.
    parts=()
    case "$t" in
        FuzzKeyFile) parts=(pem der) ;; FuzzX509) parts=(der x509 pem) ;; FuzzPKCS12) parts=(der x509 pkcs12) ;;
    esac
    if [ "${#parts[@]}" -gt 0 ]; then
        dict=$artifacts/combined.dict
        : > "$dict"
        for part in "${parts[@]}"; do cat "Fuzz/Dictionaries/$part.dict" >> "$dict"; done
    fi
    log=$artifacts/last-run.log
    touch "$log.start"
    start=$(date +%s)
    set +e
    # shellcheck disable=SC2086
    "$bin/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2560 -max_len=8192 \
        -print_final_stats=1 -dict="$dict" -artifact_prefix="$artifacts/" ${FUZZ_FLAGS:-} \
        "$corpus" >"$log" 2>&1
    rc=$?
    set -e
    elapsed=$(( $(date +%s) - start ))
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    last=$(grep -E '^#[0-9]+' "$log" | tail -n 1 || true)
    edges=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$last")
    features=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$last")
    crashes=$(find "$artifacts" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) -newer "$log.start" 2>/dev/null | wc -l || true)
    [ "$rc" -eq 0 ] || crashes=$(( crashes > 0 ? crashes : 1 ))
    echo "fuzz: $t runs=${runs:-0} edges=${edges:-0} features=${features:-0} seconds=$elapsed crashes=$crashes"
    if [ "$rc" -ne 0 ]; then
        status=1
        grep -E 'PROPERTY FAILED|ERROR: (Address|Leak)Sanitizer|SUMMARY|Test unit written|ALARM|deadly signal' "$log" | head -n 8 | sed 's/^/  /'
        echo "  full log: $log"
    fi
done
exit "$status"
