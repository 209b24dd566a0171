#!/usr/bin/env bash
# The formatting check: every Swift file in the tree as `swift format` (the toolchain's) lays it
# out under .swift-format, and no Swift line past 120 characters. Two kinds of comment line may
# run longer, since breaking them would break what they say: a Markdown table row in a doc
# comment, and a line whose overflow is one unbreakable token (a DocC symbol link).
#
#   scripts/check-format.sh          check (exit 1 on a finding, each on its own line)
#   scripts/check-format.sh --fix    rewrite the files in place with swift format, then check
#
# About 10-20 s on 2 cores; needs no build.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.swift' ':!Fuzz/Corpus')
if [ "${1:-}" = "--fix" ]; then
    swift format format -i --configuration .swift-format "${files[@]}"
fi
status=0
if ! swift format lint --strict --configuration .swift-format "${files[@]}" 2>"${TMPDIR:-/tmp}/rsakit-format.$$"; then
    sed 's/^/check-format: /' "${TMPDIR:-/tmp}/rsakit-format.$$" | head -n 50 >&2
    echo "check-format: error: not as swift format lays it out (scripts/check-format.sh --fix rewrites it)" >&2
    status=1
fi
rm -f "${TMPDIR:-/tmp}/rsakit-format.$$"
python3 - "${files[@]}" <<'PY' || status=1
import re, sys
limit, bad = 120, 0
for path in sys.argv[1:]:
    for number, line in enumerate(open(path, encoding="utf-8").read().split("\n"), 1):
        if len(line) <= limit:
            continue
        text = line.strip()
        if text.startswith("//"):
            body = text.lstrip("/").strip()
            if body.startswith("|") or max(len(token) for token in body.split()) > 60:
                continue
        print(f"check-format: error: {path}:{number}: {len(line)} characters (at most {limit})", file=sys.stderr)
        bad += 1
sys.exit(1 if bad else 0)
PY
exit $status
