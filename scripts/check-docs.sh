#!/usr/bin/env bash
# The documentation check; scripts/test.sh runs it as a step of its own.
#
#  1. Topics: every public top-level type of RSAKit (struct, class, enum, protocol, actor,
#     typealias), read from the symbol graph of the built module, is linked as ``Name`` in a
#     `## Topics` section of the DocC catalog (RSAKit.md or an article). A missing type is
#     named.
#  2. Snippets: every ```swift block of README.md, docs/*.md and the catalog's articles compiles
#     against the built RSAKit in Swift 6 language mode with -warnings-as-errors, pasted as
#     top-level code into a main.swift of its own (one swiftc -c per block, against
#     .build/<config>/Modules: RSAKit is not built again). A `#sourceLocation` line makes the
#     compiler's messages name the Markdown file and line. A block that cannot stand alone
#     (a fragment of Package.swift) is marked by the line `<!-- snippet: skip REASON -->`
#     right before its fence, and is listed with its reason on every run; shell sessions and
#     output use another fence language (```sh, ```text or none) and are not compiled.
#  3. docs.sh: where `docc` is on PATH, scripts/docs.sh builds the documentation site in a
#     temporary folder (or in DIR with --site DIR, kept for scripts/check-site.sh);
#     `git status --porcelain --ignored` must be the same before and after (nothing written
#     into the repository but the build folder), the site must hold its three parts, and docc
#     must report no link of RSAKit's archive (the catalog over every layer's symbols) that it
#     cannot resolve (or that is ambiguous) and no warning about the catalog's articles.
#  4. References: the tree names no tracker entry (the word issue followed by its number): a
#     reader of the repository has no such tracker, so a comment or a doc says the reason.
#
# Exit status 1 when any check fails, each failure on a line starting "check-docs: error:".
# About 15-30 s once RSAKit is built (the time is printed at the end; 17-27 s measured on a
# 2-core machine shared with two other builds).
# Usage: scripts/check-docs.sh [--site DIR]
set -euo pipefail
site=""
if [ "$#" -eq 2 ] && [ "$1" = --site ]; then
    site=$(realpath -m "$2")
elif [ "$#" -ne 0 ]; then
    echo "usage: scripts/check-docs.sh [--site DIR]" >&2
    exit 64
fi
cd "$(dirname "$0")/.."
began=$(date +%s)
catalog=Sources/RSAKit/RSAKit.docc
work=$(mktemp -d "${TMPDIR:-/tmp}/rsakit-check-docs.XXXXXX")
trap 'rm -rf "$work"' EXIT
status=0
fail() { echo "check-docs: error: $*" >&2; status=1; }

# 4. Tracker references, first: it needs no build. Every tracked file counts, Package.swift,
# Examples, Fuzz, Benchmarks, BENCHMARKS.md and CHANGELOG.md included.
if refs=$(git grep -nIiE '\bissues? #?[0-9]+' -- .); then
    while IFS= read -r line; do fail "a tracker reference; say the reason instead: $line"; done <<<"$refs"
fi

# The symbol graph (builds RSAKit first when needed).
scripts/symbol-graph.sh "$work/symbol-graphs" >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }
bin=$(swift build --show-bin-path)

# 1. Every public top-level type in some Topics section. The symbol graph is one line of
# JSON whose symbols start "kind", "identifier", "pathComponents": a type at top level has
# one path component.
grep -oE '"kind":\{"identifier":"swift\.(struct|class|enum|protocol|actor|typealias)"[^}]*\},"identifier":\{[^}]*\},"pathComponents":\["[^"]+"\]' \
        "$work/symbol-graphs/RSAKit.symbols.json" |
    sed -E 's/.*"pathComponents":\["([^"]+)"\]$/\1/' | sort -u >"$work/types.txt"
if ! grep -qx RSAPublicKey "$work/types.txt"; then
    fail "no public types read from the symbol graph (has its format changed?)"
    exit 1
fi
# ``Name`` and ``Name-swift.struct`` links (not ``Name/member``) between a "## Topics" line
# and the next level-2 heading or the end of the file.
awk '
    FNR == 1 { topics = 0 }
    /^## / { topics = ($0 ~ /^## Topics[[:space:]]*$/); next }
    topics {
        line = $0
        while (match(line, /``[A-Za-z_][A-Za-z0-9_]*(-[A-Za-z0-9_.]+)?``/)) {
            name = substr(line, RSTART + 2, RLENGTH - 4)
            sub(/-.*/, "", name)
            print name
            line = substr(line, RSTART + RLENGTH)
        }
    }
' "$catalog"/*.md | sort -u >"$work/linked.txt"
types=$(wc -l <"$work/types.txt")
missing=0
while read -r name; do
    fail "$name is public but not linked as \`\`$name\`\` in a Topics section of $catalog"
    missing=$((missing + 1))
done < <(comm -23 "$work/types.txt" "$work/linked.txt")
echo "check-docs: topics: $((types - missing)) of $types public top-level types linked"

# 2. Every swift snippet compiles. The awk script writes one folder per block (main.swift)
# and lists "folder<TAB>file<TAB>line" in blocks.txt, skipped blocks in skipped.txt.
mkdir -p "$work/snippets"
awk -v out="$work/snippets" '
    FNR == 1 {
        if (inside) printf "%s\n", previous_file > (out "/unterminated.txt")
        previous = ""; inside = 0; previous_file = FILENAME
    }
    !inside && /^[[:space:]]*```swift[[:space:]]*$/ {
        skip = ""
        if (previous ~ /^<!-- snippet: skip/) {
            skip = previous
            sub(/^<!-- snippet: skip[[:space:]]*/, "", skip)
            sub(/[[:space:]]*-->[[:space:]]*$/, "", skip)
            if (skip == "") skip = "-"
        }
        inside = 1; count++; start = FNR + 1
        if (skip != "") {
            printf "%s\t%d\t%s\n", FILENAME, FNR, skip > (out "/skipped.txt")
            file = "/dev/null"
        } else {
            dir = sprintf("%s/%03d", out, count)
            system("mkdir -p " dir)
            file = dir "/main.swift"
            printf "#sourceLocation(file: \"%s\", line: %d)\n", FILENAME, start > file
            printf "%03d\t%s\t%d\n", count, FILENAME, FNR > (out "/blocks.txt")
        }
        next
    }
    inside && /^[[:space:]]*```[[:space:]]*$/ { inside = 0; if (file != "/dev/null") close(file); previous = $0; next }
    inside { if (file != "/dev/null") print > file; next }
    /[^[:space:]]/ { previous = $0 }
    END { if (inside) printf "%s\n", FILENAME > (out "/unterminated.txt") }
' README.md docs/*.md "$catalog"/*.md
if [ -f "$work/snippets/unterminated.txt" ]; then
    while read -r file; do fail "$file: a \`\`\`swift block is not closed"; done <"$work/snippets/unterminated.txt"
fi
skipped=0
if [ -f "$work/snippets/skipped.txt" ]; then
    while IFS=$'\t' read -r file line reason; do
        if [ "$reason" = "-" ]; then
            fail "$file:$line: <!-- snippet: skip --> needs a reason"
        else
            echo "check-docs: skipped $file:$line ($reason)"
        fi
        skipped=$((skipped + 1))
    done <"$work/snippets/skipped.txt"
fi
compile_args=(-swift-version 6 -warnings-as-errors -module-name Snippet
              -module-cache-path "$work/module-cache" -I "$bin/Modules")
for map in "$PWD"/Sources/*/module.modulemap "$bin"/*.build/module.modulemap; do
    [ -f "$map" ] && compile_args+=(-Xcc "-fmodule-map-file=$map")
done
for include in "$PWD"/Sources/*/include; do
    [ -d "$include" ] && compile_args+=(-Xcc -I -Xcc "$include")
done
# p11-kit's header folder (RSAKit imports CP11Kit).
for include in $(pkg-config --cflags-only-I p11-kit-1); do
    compile_args+=(-Xcc "$include")
done
compiled=0
broken=0
if [ -f "$work/snippets/blocks.txt" ]; then
    while IFS=$'\t' read -r number file line; do
        dir="$work/snippets/$number"
        if swiftc "${compile_args[@]}" -c "$dir/main.swift" -o "$dir/main.o" >"$dir/log" 2>&1; then
            compiled=$((compiled + 1))
        else
            fail "$file:$line: this swift snippet does not compile:"
            sed 's/^/    /' "$dir/log" >&2
            broken=$((broken + 1))
        fi
    done <"$work/snippets/blocks.txt"
fi
echo "check-docs: snippets: $compiled compiled, $broken failed, $skipped skipped"

# 3. docs.sh writes nothing into the repository, and docc resolves every link.
if ! git rev-parse --git-dir >/dev/null 2>&1; then
    echo "check-docs: not a git checkout: scripts/docs.sh not checked"
elif command -v docc >/dev/null 2>&1; then
    git status --porcelain --ignored >"$work/status-before.txt"
    site=${site:-$work/docs}
    if ! RSAKIT_DOCS_OUTPUT="$site" scripts/docs.sh >"$work/docs.log" 2>&1; then
        fail "scripts/docs.sh failed:"
        tail -n 30 "$work/docs.log" >&2
    fi
    git status --porcelain --ignored >"$work/status-after.txt"
    repository="repository unchanged"
    if ! diff -u "$work/status-before.txt" "$work/status-after.txt" >"$work/status.diff"; then
        fail "scripts/docs.sh wrote into the repository (git status --porcelain --ignored before and after):"
        cat "$work/status.diff" >&2
        repository="REPOSITORY CHANGED"
    fi
    archive="site built"
    for part in index.html reference/index/index.json reference/documentation/rsakit/index.html \
            man/index.html guides/index.html; do
        [ -f "$site/$part" ] || { fail "scripts/docs.sh made no $part in the site"; archive="SITE INCOMPLETE"; }
    done
    # A warning's location follows on a "-->" line: a file of the catalog ("Trust.md:12:3")
    # or a source file ("../X509/RSATrust.swift:40:9").
    awk '
        /^warning: / { warning = $0; next }
        warning != "" && /^[[:space:]]*-->/ {
            location = $0; sub(/^[[:space:]]*-->[[:space:]]*/, "", location)
            if (warning ~ /doesn.t exist at|is ambiguous at/ || location ~ /\.md:/) print location ": " warning
            warning = ""
        }
    ' "$work/docs.log" >"$work/docc-warnings.txt"
    while read -r warning; do fail "docc: $warning"; done <"$work/docc-warnings.txt"
    echo "check-docs: docs.sh: $archive, $repository, $(wc -l <"$work/docc-warnings.txt") link or article warnings"
else
    echo "check-docs: docc is not on PATH: scripts/docs.sh not checked"
fi

echo "check-docs: took $(( $(date +%s) - began )) s"
exit "$status"
