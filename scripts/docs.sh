#!/usr/bin/env bash
# Build RSAKit's DocC documentation without the swift-docc plugin (which cannot be fetched
# here): extract the symbol graph of the built module with the toolchain's
# swift-symbolgraph-extract, then run the toolchain's `docc convert` on
# Sources/RSAKit/RSAKit.docc. Output: .build/docs/RSAKit.doccarchive. Where the plugin exists,
# `swift package generate-documentation --target RSAKit` does the same.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --target RSAKit
bin=$(swift build --show-bin-path)
graphs=.build/docs/symbol-graphs
rm -rf "$graphs" && mkdir -p "$graphs"
args=()
for map in Sources/*/module.modulemap "$bin"/*.build/module.modulemap; do
    [ -f "$map" ] && args+=(-Xcc "-fmodule-map-file=$map")
done
for include in Sources/*/include; do
    [ -d "$include" ] && args+=(-I "$include")
done
swift-symbolgraph-extract -module-name RSAKit -target "$(uname -m)-unknown-linux-gnu" \
    -I "$bin/Modules" "${args[@]}" -minimum-access-level public -output-dir "$graphs"
docc convert Sources/RSAKit/RSAKit.docc --additional-symbol-graph-dir "$graphs" \
    --fallback-display-name RSAKit --fallback-bundle-identifier org.rsakit.RSAKit \
    --output-path .build/docs/RSAKit.doccarchive "$@"
echo "documentation: .build/docs/RSAKit.doccarchive"
