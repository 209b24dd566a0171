#!/usr/bin/env bash
# The browser check of the documentation site that scripts/docs.sh builds (scripts/test.sh
# runs it in its "docs check" stage, on the site scripts/check-docs.sh --site built).
#
# Serves SITE (default .build/site) with `python3 -m http.server` on 127.0.0.1, on a port the
# kernel picks (a static DocC site does not work from file://), then (scripts/check-site.py):
#  1. Links, without a browser: every page of the site's own (the landing page, the guide and
#     man indexes, every rendered guide and man page) is fetched and its same-origin href and
#     src each answer 200; every page in DocC's navigator index (reference/index/index.json)
#     answers 200 for its HTML and its data JSON, and so does the data JSON of every page that
#     any of them links (the "references" of each page's JSON: the links DocC renders).
#  2. In headless Chromium (Debian's chromium through Debian's chromedriver and Selenium from
#     PyPI; `--headless=new`, and `--no-sandbox` as root): the landing page, DocC's merged
#     landing page, RSAKit's page, five symbol pages (RSAPrivateKey, RSAKeyStore, RSATrust,
#     RSATLSConnection, RSAError, one from each layer's archive), one guide (docs/testing.md, its
#     first heading as the title) and one man page.
#     Each must show its expected title (on DocC's pages, the title element its JavaScript
#     renders from the page's data JSON: the check waits up to 30 s for it), log no console
#     error (the browser log at SEVERE, through goog:loggingPrefs), load every same-origin
#     resource with status 200 (a DocC page at least one data JSON), and every same-origin
#     link in the rendered DOM must answer 200.
# The site is served at the root, so it must be built with the default base path (no
# $RSAKIT_SITE_BASE_PATH).
# The browser part is skipped, saying so, only when Chromium cannot start at all (not
# installed, or the driver cannot open a session); the link part runs regardless.
#
# Exit status 1 when a check fails (each failure on a line "check-site: error: ..."), 64 for a
# usage error. About 20 s on a loaded 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$#" -le 1 ] || { echo "usage: scripts/check-site.sh [SITE]" >&2; exit 64; }
site=${1:-.build/site}
[ -d "$site" ] || { echo "check-site: error: no site at $site (scripts/docs.sh builds it)" >&2; exit 1; }
began=$(date +%s)
# Selenium comes from PyPI for the python3 on PATH (scripts/install-deps.sh); without it the
# check fails (after the link part), since installing it is install-deps.sh's job.
status=0
python3 scripts/check-site.py "$site" || status=$?
echo "check-site: took $(( $(date +%s) - began )) s"
exit "$status"
