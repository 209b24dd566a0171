#!/usr/bin/env bash
# Build a library module (debug; RSAKit by default) and extract its public symbol graph with
# the toolchain's swift-symbolgraph-extract into OUTPUT-DIR (MODULE.symbols.json, plus
# MODULE@Other files for extensions of other modules' types). RSAKit re-exports its four
# layers (RSAKitCore, RSAKitPKI, RSAKitKeychain, RSAKitTLS), and their public symbols are in
# its graph, as `import RSAKit` shows them; a layer's graph holds its own symbols only. Used
# by scripts/docs.sh (a graph per module) and scripts/check-docs.sh (RSAKit's); writes
# nothing but OUTPUT-DIR and the build folder.
# Usage: scripts/symbol-graph.sh OUTPUT-DIR [MODULE]
set -euo pipefail
[ "$#" -eq 1 ] || [ "$#" -eq 2 ] || { echo "usage: scripts/symbol-graph.sh OUTPUT-DIR [MODULE]" >&2; exit 64; }
out=$1
module=${2:-RSAKit}
cd "$(dirname "$0")/.."
swift build --target "$module"
bin=$(swift build --show-bin-path)
rm -rf "$out" && mkdir -p "$out"
# RSAKit imports its C modules internally; the extractor still has to find their maps.
args=()
for map in Sources/*/module.modulemap "$bin"/*.build/module.modulemap; do
    [ -f "$map" ] && args+=(-Xcc "-fmodule-map-file=$map")
done
for include in Sources/*/include; do
    [ -d "$include" ] && args+=(-I "$include")
done
# p11-kit's header lives in its own folder (RSAKit/PKCS11Client imports CP11Kit).
for include in $(pkg-config --cflags-only-I p11-kit-1); do
    args+=(-Xcc "$include")
done
reexports=()
[ "$module" != RSAKit ] ||
    reexports=(-experimental-allowed-reexported-modules=RSAKitCore,RSAKitPKI,RSAKitKeychain,RSAKitTLS)
swift-symbolgraph-extract -module-name "$module" -target "$(uname -m)-unknown-linux-gnu" "${reexports[@]}" \
    -I "$bin/Modules" "${args[@]}" -minimum-access-level public -output-dir "$out"
