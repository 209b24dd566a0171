#!/usr/bin/env bash
# Build the documentation site: one folder of static files, to serve as it is (a static site
# does not work from file://; scripts/check-site.sh serves it on 127.0.0.1 and checks it in
# headless Chromium).
#
#   index.html      the landing page, linking the three parts below (site.css is its style)
#   reference/      the library reference: a static DocC site, one archive per module merged
#                   with the toolchain's `docc merge`. RSAKit's archive is its catalog
#                   (Sources/RSAKit/RSAKit.docc, the articles) over RSAKit's symbol graph, which
#                   holds every layer's symbols as `import RSAKit` shows them; RSAKitCore,
#                   RSAKitPKI, RSAKitKeychain and RSAKitTLS each have an archive of their own
#                   symbols, for a package that depends on one layer. Built lowest layer first,
#                   each against the archives below it (--dependency), so a declaration names
#                   a lower layer's type as a link. A doc comment's ``Name`` link to another
#                   layer's symbol resolves only in RSAKit's archive: docc resolves a bare name
#                   within its own archive, and an upward link (Core naming RSAKeyStore) has no
#                   archive to point at yet; in a layer's archive such a name shows as code,
#                   unlinked (the count is printed). The pages are at
#                   reference/documentation/<module>/, the merged landing page at
#                   reference/documentation/.
#   man/            the man pages (`rsakit help --man-pages`) in HTML by mandoc, one page each,
#                   cross references linked, and man/index.html listing them
#   guides/         every docs/**/*.md in HTML (scripts/site-pages.py, Python-Markdown), with
#                   links between guides rewritten from .md to .html, and guides/index.html;
#                   files/ holds what the guides link outside docs/ (README.md rendered, other
#                   files copied)
#
# The toolchain's own docc and swift-symbolgraph-extract (scripts/symbol-graph.sh), no plugin;
# Debian's mandoc and python3-markdown (scripts/install-deps.sh installs them).
#
# Output: $RSAKIT_DOCS_OUTPUT (default .build/site), replaced whole (a folder that is not a
# site this script built is refused). $RSAKIT_SITE_BASE_PATH is the path the site is served
# under (default: the server's root; "rsakit" for https://host/rsakit/): DocC writes it into
# every page. Further arguments go to every `docc convert`. Nothing is written into the
# source tree: docc, mandoc and the renderer write into a temporary folder (checked by
# scripts/check-docs.sh, which compares `git status --porcelain --ignored` before and after a
# run). About 90 s on a loaded 2-core machine once rsakit is built.
set -euo pipefail
cd "$(dirname "$0")/.."
began=$(date +%s)
out=${RSAKIT_DOCS_OUTPUT:-.build/site}
base=${RSAKIT_SITE_BASE_PATH:-}
base=${base#/}
base=${base%/}
reference_base=${base:+$base/}reference
marker=.rsakit-docs-site
if [ -e "$out" ] && [ -n "$(ls -A "$out")" ] && [ ! -f "$out/$marker" ]; then
    echo "docs: error: $out is not empty and not a site scripts/docs.sh built; not replacing it" >&2
    exit 1
fi
for tool in docc mandoc; do
    command -v "$tool" >/dev/null 2>&1 ||
        { echo "docs: error: $tool is not on PATH (scripts/install-deps.sh)" >&2; exit 1; }
done
# Debian's python3-markdown is for the system Python, which may not be the first python3 on PATH.
python=""
for candidate in python3 /usr/bin/python3; do
    if "$candidate" -c 'import markdown' >/dev/null 2>&1; then python=$candidate; break; fi
done
[ -n "$python" ] || { echo "docs: error: no python3 with the markdown module (Debian python3-markdown)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/rsakit-docs.XXXXXX")
trap 'rm -rf "$work"' EXIT
site=$work/site
mkdir -p "$site" "$work/archives" "$work/man"

# The command (its man pages) and, with it, every library module.
swift build --product rsakit
bin=$(swift build --show-bin-path)

# 1. The library reference.
layers=(RSAKitCore RSAKitPKI RSAKitKeychain RSAKitTLS)
archives=()
dependencies=()
convert() { # MODULE CATALOG ARGUMENTS...
    local module=$1 catalog=$2
    shift 2
    scripts/symbol-graph.sh "$work/graphs/$module" "$module"
    docc convert "$catalog" --additional-symbol-graph-dir "$work/graphs/$module" \
        --fallback-display-name "$module" --fallback-bundle-identifier "org.rsakit.$module" \
        --transform-for-static-hosting --hosting-base-path "$reference_base" \
        --output-path "$work/archives/$module.doccarchive" "$@" >"$work/docc-$module.log" 2>&1 ||
        { cat "$work/docc-$module.log"; echo "docs: error: docc convert failed for $module" >&2; return 1; }
    archives+=("$work/archives/$module.doccarchive")
}
for layer in "${layers[@]}"; do
    "$python" scripts/site-pages.py catalog "$layer" "$work/catalogs"
    convert "$layer" "$work/catalogs/$layer.docc" --enable-experimental-external-link-support "${dependencies[@]}" "$@"
    dependencies+=(--dependency "$work/archives/$layer.doccarchive")
    unlinked=$(grep -c "doesn't exist at" "$work/docc-$layer.log" || true)
    echo "docs: $layer: $unlinked doc-comment links to another layer left unlinked"
done
# RSAKit last, its log printed whole: scripts/check-docs.sh fails on any link in it that does
# not resolve, and on any warning about the catalog's articles.
convert RSAKit Sources/RSAKit/RSAKit.docc "$@"
cat "$work/docc-RSAKit.log"
docc merge "${archives[@]}" --synthesized-landing-page-name "rsakit" \
    --synthesized-landing-page-kind "Library reference" \
    --synthesized-landing-page-topics-style list --output-path "$work/merged.doccarchive"
mv "$work/merged.doccarchive" "$site/reference"

# 2. The man pages, then 3. the guides (which link man pages), then the landing page.
"$bin/rsakit" help --man-pages "$work/man"
"$python" scripts/site-pages.py man "$work/man" "$site"
"$python" scripts/site-pages.py guides . "$site"
"$python" scripts/site-pages.py landing "$site"
touch "$site/$marker"

rm -rf "$out"
mkdir -p "$(dirname "$out")"
mv "$site" "$out"
echo "documentation site: $out (open it through a web server: scripts/check-site.sh; took $(( $(date +%s) - began )) s)"
