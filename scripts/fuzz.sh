#!/usr/bin/env bash
# Build the libFuzzer harnesses (Fuzz/, a package of their own) and run one or all of them.
#
#   scripts/fuzz.sh [TARGET|all] [SECONDS]     default: all, 30 seconds each
#
# TARGET is a harness name (FuzzDER, FuzzPEM, FuzzKeyFile, FuzzContainer, FuzzStoreItem,
# FuzzArmor, FuzzCLIArguments, FuzzX509, FuzzPKCS12, FuzzAgentWire, FuzzSSHAgent, FuzzCRL, FuzzOCSP, FuzzPKCS11) or `all`. Each run starts from Fuzz/Corpus/TARGET (seeds made by
# Fuzz/make-seeds.py when the folder is missing: openssl keys in every format, the Wycheproof
# keys, containers for the fixed key, openssl certificates and PKCS#12 files, and every regression input under
# Tests/RSAKitTests/Fixtures/fuzz/TARGET/) and grows it; crashes, leaks and timeouts are written
# to .build/fuzz-artifacts/TARGET/ and make the script fail. One summary line per harness:
#   fuzz: FuzzDER runs=1234567 edges=308 features=1305 seconds=30 crashes=0
# Environment: FUZZ_CORPUS (corpus root, default Fuzz/Corpus), FUZZ_FLAGS (extra libFuzzer flags,
# e.g. "-runs=10000000" to stop at 10^7 executions), FUZZ_SKIP_BUILD=1, FUZZ_LOG=1 (append a
# row per harness to Fuzz/fuzz-log.tsv: the record of long runs, kept in the repository),
# FUZZ_INSTANCE=NAME (a second run of the same harness at the same time, on another core: it
# shares the corpus and writes its log and artifacts to .build/fuzz-artifacts/TARGET.NAME/).
#
#   scripts/fuzz.sh --merge [TARGET|all]    minimise Fuzz/Corpus/TARGET with -merge=1 (the kept
#                                           corpus: only inputs that add coverage stay)
#   scripts/fuzz.sh --totals                executions per harness summed over Fuzz/fuzz-log.tsv
#   scripts/fuzz.sh --smoke [SECONDS]       CI's run (default 20 s): every harness replays its
#                                           corpus (-runs=0); only the harnesses whose sources
#                                           changed since their last logged run also mutate
#                                           for SECONDS (see harness_sources below)
#
# The corpus under Fuzz/Corpus is kept in the repository, so each run starts where the last
# one stopped; a run replays every kept input first, then mutates for SECONDS. Every harness's
# long runs are logged in Fuzz/fuzz-log.tsv; CI mutates again only where the code changed
# since, which keeps its time to the replay for the rest.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
all=(FuzzDER FuzzPEM FuzzKeyFile FuzzContainer FuzzStoreItem FuzzArmor FuzzCLIArguments FuzzX509 FuzzPKCS12 FuzzAgentWire FuzzSSHAgent FuzzCRL FuzzOCSP FuzzPKCS11)
fuzz_log=$root/Fuzz/fuzz-log.tsv
log_header=$'date\tharness\tcommit\texecutions\tedges\tfeatures\tseconds\texec_per_second\tcrashes\tcorpus_files\tcommand'
mode=run
case "${1:-}" in
    --merge) mode=merge; shift ;;
    --smoke) mode=smoke; shift; set -- all "${1:-20}" ;;
    --totals)
        [ -f "$fuzz_log" ] || { echo "fuzz.sh: no log yet ($fuzz_log)"; exit 0; }
        awk -F'\t' 'NR > 1 { runs[$2] += $4; secs[$2] += $7; if ($9 > 0) bad[$2] += $9 }
            END { for (h in runs) printf "%-18s executions=%d seconds=%d crashes=%d%s\n", h, runs[h], secs[h], bad[h], (runs[h] >= 10000000 ? "  (10^7 reached)" : "") }' "$fuzz_log" | sort
        exit 0 ;;
esac
target=${1:-all}
seconds=${2:-30}
corpus_root=${FUZZ_CORPUS:-$root/Fuzz/Corpus}
local_root=${corpus_root%/}-local   # Wycheproof-derived seeds: read, never written or committed
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
# --smoke builds in debug mode: measured on a 2-core Xeon, all 13 harnesses from cold in 63 s
# against 171 s in release, while replaying every corpus takes 118 s against 64 s; CI's few
# seconds of mutation lose executions, not checks (ASan and every property are the same, and
# Swift's debug preconditions are on). Long runs keep the release build, as their log compares
# executions and coverage across runs.
config=release
[ "$mode" != smoke ] || config=debug
build_flags=(-c "$config" --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address -Xcc -fsanitize=address)
# One product at a time: a build of the whole Fuzz package also builds the rsakit executable
# (the dependency's product), whose main.swift does not compile in that mode (top-level code
# with libFuzzer's -parse-as-library), so `swift build` with no --product fails.
# The bin path is asked for once, not once per product (0.2 s per asking: a small saving; the
# build is the cost, measured above).
bin=$(swift build --package-path Fuzz "${build_flags[@]}" --show-bin-path)
if [ "${FUZZ_SKIP_BUILD:-0}" != 1 ]; then
    for t in "${targets[@]}"; do
        swift build --package-path Fuzz "${build_flags[@]}" --product "$t" 2>&1 \
            | grep -v "Cannot export local symbol '__asan_extra_spill_area'" || true
        [ "${PIPESTATUS[0]}" -eq 0 ] || { echo "fuzz.sh: build of $t failed" >&2; exit 1; }
        # The commit the binary was built from (with "+dirty" for uncommitted changes): the log
        # row names it, not the HEAD at the end of a run that may have moved meanwhile.
        built_at=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
        git diff --quiet HEAD -- Sources Fuzz/Sources Package.swift Fuzz/Package.swift 2>/dev/null || built_at="$built_at+dirty"
        echo "$built_at" > "$bin/$t.built-at"
    done
fi

for t in "${targets[@]}"; do
    if [ ! -d "$corpus_root/$t" ] || [ ! -d "$local_root/$t" ]; then
        python3 Fuzz/make-seeds.py "$corpus_root" "$local_root"   # writes every harness's seeds
        break
    fi
done

dictionary() {
    case "$1" in
        FuzzDER) echo der ;; FuzzPEM | FuzzKeyFile) echo pem ;; FuzzContainer) echo container ;;
        FuzzArmor) echo armor ;; FuzzStoreItem) echo store ;; FuzzCLIArguments) echo cli ;; FuzzAgentWire) echo agent ;; FuzzSSHAgent) echo ssh-agent ;; FuzzPKCS11) echo pkcs11 ;;
    esac
}

# What a harness runs and parses: a change to any of these since the harness's last logged run
# (the commit column of its latest row in Fuzz/fuzz-log.tsv) makes --smoke mutate it. Broad on
# purpose: a folder of a library layer rather than a file, and what every harness shares (the
# Fuzz manifest, FuzzSupport, the Fuzzing entry points, the errors, BigInt). Not the root
# Package.swift or the C shims' constant-time code, which change often and which no parser
# reads: every harness's replay runs them on every kept input anyway (FuzzContainer, the
# agent and the PKCS#11 module, which decrypt and sign, list the shims).
harness_sources() {
    local core=Sources/RSAKitCore pki=Sources/RSAKitPKI keychain=Sources/RSAKitKeychain
    echo Fuzz/Package.swift Fuzz/Sources/FuzzSupport "Fuzz/Sources/$1" \
        Sources/RSAKit/Fuzzing "$core/Errors" "$core/BigInt"
    local d
    d=$(dictionary "$1")
    [ -z "$d" ] || echo "Fuzz/Dictionaries/$d.dict"
    case "$1" in
        FuzzDER | FuzzPEM) echo "$core/Encoding" ;;
        FuzzKeyFile) echo "$core/Encoding $core/Keys $pki/KeyFiles Fuzz/Dictionaries/der.dict" ;;
        FuzzContainer) echo "$core/Messages $core/Padding $core/Primitives $core/Schemes $core/Keys $core/Hashing $core/Random $core/Concurrency Sources/CRSAKitShims Sources/CRSAKitVector Sources/CRSAKitVectorIFMA" ;;
        FuzzStoreItem) echo "$keychain/Keychain $keychain/Sodium $core/Encoding $core/ItemQueries" ;;
        FuzzArmor) echo "$core/Messages $core/Encoding" ;;
        FuzzCLIArguments) echo "Sources/_RSAKitCLI" ;;
        FuzzX509 | FuzzPKCS12 | FuzzCRL | FuzzOCSP)
            echo "$pki/X509 $core/Encoding $pki/GnuTLS $core/Keys $pki/Revocation $pki/HTTP $keychain/Keychain Fuzz/Dictionaries/der.dict Fuzz/Dictionaries/x509.dict Fuzz/Dictionaries/pkcs12.dict Fuzz/Dictionaries/pem.dict" ;;
        FuzzAgentWire) echo "$keychain/Agent $keychain/Keychain $keychain/Sodium $core/Encoding Sources/CRSAKitShims" ;;
        FuzzSSHAgent) echo "$keychain/Agent $keychain/Keychain $keychain/Sodium $core/Encoding $core/Keys $core/Schemes $core/Padding $core/Primitives Sources/CRSAKitShims" ;;
        FuzzPKCS11) echo "Sources/_RSAKitPKCS11 Sources/CRSAKitPKCS11 $keychain/Keychain $keychain/PKCS11Client $core/Encoding $core/Keys Sources/CRSAKitShims" ;;
    esac
}

# Prints why harness $1 must mutate in --smoke, or nothing when its sources are unchanged since
# its last logged run. A run logged from uncommitted code ("+dirty"), a commit this clone does
# not have, or no logged run at all count as changed.
changed_since_logged_run() {
    local last paths
    last=$(awk -F'\t' -v h="$1" 'NR > 1 && $2 == h { c = $3 } END { print c }' "$fuzz_log" 2>/dev/null || true)
    if [ -z "$last" ] || [ "$last" = unknown ]; then echo "no logged run"; return; fi
    case "$last" in *+dirty) echo "last logged run ($last) was of uncommitted code"; return ;; esac
    git cat-file -e "$last^{commit}" 2>/dev/null || { echo "last logged run's commit $last is not in this clone"; return; }
    # shellcheck disable=SC2046
    paths=$(git diff --name-only "$last" -- $(harness_sources "$1") | wc -l)
    [ "$paths" -eq 0 ] || echo "$paths of its source files changed since its last logged run ($last)"
}

# The Swift runtime's backtracer would catch the abort of a failed property first (and trips
# ASan while reading memory); libFuzzer's own handler reports and saves the input.
export SWIFT_BACKTRACE=enable=no

if [ "$mode" = merge ]; then
    for t in "${targets[@]}"; do
        corpus=$corpus_root/$t
        [ -d "$corpus" ] || continue
        mkdir -p "$artifacts_root"
        merged=$(mktemp -d "${TMPDIR:-/tmp}/rsakit-merge.XXXXXX")
        before=$(find "$corpus" -type f | wc -l)
        "$bin/$t" -merge=1 -timeout=10 -rss_limit_mb=2560 -max_len=8192 "$merged" "$corpus" >"$artifacts_root/$t-merge.log" 2>&1 \
            || { echo "fuzz.sh: merge of $t failed (log: $artifacts_root/$t-merge.log)" >&2; rm -rf "$merged"; exit 1; }
        rm -rf "$corpus" && mv "$merged" "$corpus" && chmod 0755 "$corpus"
        echo "fuzz: $t corpus merged: $before -> $(find "$corpus" -type f | wc -l) files, $(du -sk "$corpus" | cut -f1) KiB"
    done
    exit 0
fi
status=0
for t in "${targets[@]}"; do
    corpus=$corpus_root/$t
    artifacts=$artifacts_root/$t${FUZZ_INSTANCE:+.$FUZZ_INSTANCE}
    mkdir -p "$corpus" "$artifacts"
    dict=$root/Fuzz/Dictionaries/$(dictionary "$t").dict
    # Harnesses whose input mixes formats get several dictionaries, concatenated.
    parts=()
    case "$t" in
        FuzzKeyFile) parts=(pem der) ;; FuzzX509) parts=(der x509 pem) ;; FuzzPKCS12) parts=(der x509 pkcs12) ;;
        FuzzCRL) parts=(der x509 pem) ;;
        FuzzOCSP) parts=(der x509) ;;
    esac
    if [ "${#parts[@]}" -gt 0 ]; then
        dict=$artifacts/combined.dict
        : > "$dict"
        for part in "${parts[@]}"; do cat "Fuzz/Dictionaries/$part.dict" >> "$dict"; done
    fi
    log=$artifacts/last-run.log
    touch "$log.start"
    length=(-max_total_time="$seconds")
    if [ "$mode" = smoke ]; then
        why=$(changed_since_logged_run "$t")
        if [ -n "$why" ]; then
            echo "fuzz: $t mutates for $seconds s: $why"
        else
            length=(-runs=0)
            echo "fuzz: $t replays its corpus only: its sources are unchanged since its last logged run"
        fi
    fi
    # FuzzPKCS12 re-exports each distinct identity it meets at GnuTLS's 600,000 PBKDF2
    # iterations (about a second each, 64 per process): in --smoke only the first 4. Its debug
    # replay went from 69 s to 21 s (2-core Xeon, loaded), covering 4,828 edges instead of 4,849.
    reexports=64
    [ "$mode" != smoke ] || reexports=4
    start=$(date +%s)
    set +e
    # shellcheck disable=SC2086
    RSAKIT_FUZZ_REEXPORTS=$reexports "$bin/$t" "${length[@]}" -timeout=10 -rss_limit_mb=2560 -max_len=8192 \
        -print_final_stats=1 -dict="$dict" -artifact_prefix="$artifacts/" ${FUZZ_FLAGS:-} \
        "$corpus" "$local_root/$t" >"$log" 2>&1
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
    if [ "${FUZZ_LOG:-0}" = 1 ] && [ "$mode" = run ]; then   # the log holds long runs, not --smoke replays
        [ -f "$fuzz_log" ] || echo "$log_header" > "$fuzz_log"
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$t" \
            "$(cat "$bin/$t.built-at" 2>/dev/null || echo unknown)" "${runs:-0}" "${edges:-0}" "${features:-0}" "$elapsed" \
            "$(( ${runs:-0} / (elapsed > 0 ? elapsed : 1) ))" "$crashes" "$(find "$corpus" -type f | wc -l)" \
            "${FUZZ_INSTANCE:+FUZZ_INSTANCE=$FUZZ_INSTANCE }FUZZ_FLAGS='${FUZZ_FLAGS:-}' scripts/fuzz.sh $t $seconds" >> "$fuzz_log"
    fi
    if [ "$rc" -ne 0 ]; then
        status=1
        grep -E 'PROPERTY FAILED|ERROR: (Address|Leak)Sanitizer|SUMMARY|Test unit written|ALARM|deadly signal' "$log" | head -n 8 | sed 's/^/  /'
        echo "  full log: $log"
    fi
done
exit "$status"
