#!/usr/bin/env bash
# Build RSAKit's DocC documentation without the swift-docc plugin (which cannot be fetched
# here): extract the symbol graph of the built module with the toolchain's
# swift-symbolgraph-extract (scripts/symbol-graph.sh), then run the toolchain's `docc convert`
# on Sources/RSAKit/RSAKit.docc. Where the plugin exists,
# `swift package generate-documentation --target RSAKit` does the same.
#
# Output: $RSAKIT_DOCS_OUTPUT (default .build/docs) holds symbol-graphs/ and
# RSAKit.doccarchive. Nothing is written into the source tree: docc builds in a temporary
# folder of its own and moves the archive to --output-path (checked by scripts/check-docs.sh,
# which compares `git status --porcelain --ignored` before and after a run). Further
# arguments go to `docc convert`.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${RSAKIT_DOCS_OUTPUT:-.build/docs}
scripts/symbol-graph.sh "$out/symbol-graphs"
docc convert Sources/RSAKit/RSAKit.docc --additional-symbol-graph-dir "$out/symbol-graphs" \
    --fallback-display-name RSAKit --fallback-bundle-identifier org.rsakit.RSAKit \
    --output-path "$out/RSAKit.doccarchive" "$@"
echo "documentation: $out/RSAKit.doccarchive"
