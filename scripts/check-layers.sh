#!/usr/bin/env bash
# The layers' boundaries hold: an import of a higher layer, or of a C library a layer does not
# declare, fails the build. In a scratch copy of the package (the tree is never touched), each
# case below adds one such import to one file and builds that file's target with
# `--explicit-target-dependency-import-check=error` (the flag scripts/test.sh builds with); the
# build must fail and name the module. The copy builds cold, so each failure comes from the
# compiler ("no such module") or from SwiftPM's check ("imports another target ... without
# declaring it a dependency"); either names the import. About 40-60 s (two emit-module passes
# of RSAKitCore and one of RSAKitPKI, no full build).
# Usage: scripts/check-layers.sh
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d "${TMPDIR:-/tmp}/rsakit-layers.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp -R Package.swift Sources Tests Benchmarks "$work/"
status=0
# case TARGET FILE IMPORT: FILE (under Sources/TARGET) gets `import IMPORT` on its first line.
refuse() {
    local target=$1 file=Sources/$1/$2 module=$3 log="$work/build.log"
    cp "$work/$file" "$work/saved.swift"
    { echo "import $module"; cat "$work/saved.swift"; } > "$work/$file"
    if swift build --package-path "$work" --target "$target" --explicit-target-dependency-import-check=error >"$log" 2>&1; then
        echo "check-layers: error: $target built with \`import $module\` in $file" >&2
        status=1
    elif grep -qE "no such module '$module'|imports another target \($module\)|circular dependency between modules '$target' and '$module'" "$log"; then
        echo "check-layers: $target refuses \`import $module\` ($(grep -oE "no such module '$module'|imports another target \($module\)[^.]*|circular dependency[^\n]*" "$log" | head -n 1))"
    else
        echo "check-layers: error: $target with \`import $module\` failed for another reason:" >&2
        grep -E "error" "$log" | head -n 5 >&2
        status=1
    fi
    cp "$work/saved.swift" "$work/$file"
}
refuse RSAKitCore Random/RandomSource.swift RSAKitPKI
refuse RSAKitCore Random/RandomSource.swift CGnuTLS
refuse RSAKitCore Random/RandomSource.swift CSodium
refuse RSAKitPKI X509/X509Certificate.swift RSAKitKeychain
refuse RSAKitKeychain Keychain/RSAKeyStore.swift RSAKitTLS
exit "$status"
