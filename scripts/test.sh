#!/usr/bin/env bash
# The test command: install missing system packages, then run the whole test suite with the
# long cases enabled. .ci/run calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
export RSAKIT_LONG_TESTS="${RSAKIT_LONG_TESTS:-1}"
swift build --build-tests
swift test --skip-build
