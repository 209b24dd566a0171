#!/usr/bin/env bash
# Build and run Examples/ (issue 16's proof): a separate Swift 6 package that depends on
# RSAKit by path and does the six steps of an app. Needs what README.md says: the Swift
# toolchain, the apt packages of scripts/install-deps.sh, and openssl (for step 6's key).
# Takes about 1-2 minutes (a debug build of RSAKit inside Examples/.build, then the run).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d "${TMPDIR:-/tmp}/rsakit-examples.XXXXXX")
trap 'rm -rf "$work"' EXIT
export XDG_DATA_HOME="$work/xdg"   # the per-application store location, kept inside $work
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$work/genpkey.pem" 2>/dev/null
# Clang's module cache does not notice headers added to an umbrella folder (a C shim header
# new since the last build): start it afresh, a few seconds.
rm -rf Examples/.build/*/debug/ModuleCache
swift build --package-path Examples -Xswiftc -warnings-as-errors
"$(swift build --package-path Examples --show-bin-path)/SixSteps" "$work" "$work/genpkey.pem"
