#!/usr/bin/env bash
# Every command in README.md and the guides (docs/*.md) runs: each page's ```sh blocks, with
# its hidden setup, as one bash script (scripts/guide-blocks.py says the page rules), against
# the built rsakit and PKCS#11 module, in a fresh folder with a fresh HOME, so the default store
# is a new one and nothing of the machine's is touched. docs/measurements/ is not run: it
# records runs on named machines, reproduced by the commands in BENCHMARKS.md.
#
#   scripts/check-guides.sh [PAGE...]     (default: README.md docs/*.md)
#
# A page fails on its first failing command: the block's file and line, and the page's output,
# are printed. A page runs in its own process group under a deadline, and whatever it started
# (a server) is killed when it ends. Exit status 1 when a page fails or breaks the rules.
# Needs the debug build (scripts/test.sh has made it; else run `swift build` first);
# RSAKIT_BIN_DIR names another folder holding rsakit and librsakit-pkcs11.so;
# RSAKIT_GUIDES_SHOW=1 prints each page's output, for a writer checking what a reader sees.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/bounded.sh
root=$(pwd)
bin=${RSAKIT_BIN_DIR:-$(swift build --show-bin-path)}
if [ ! -x "$bin/rsakit" ]; then
    echo "check-guides: error: $bin/rsakit is not built (swift build)" >&2
    exit 1
fi
if [ $# -gt 0 ]; then pages=("$@"); else pages=(README.md docs/*.md); fi
work=$(mktemp -d "${TMPDIR:-/tmp}/rsakit-guides.XXXXXX")
trap 'rm -rf "$work"' EXIT
began=$(date +%s)
status=0
ran=0
skipped=0
for page in "${pages[@]}"; do
    name=$(basename "$page" .md)
    dir="$work/$name"
    mkdir -p "$dir/home" "$dir/tmp" "$dir/run"
    chmod 700 "$dir/home"
    script="$dir/page.sh"
    {
        echo 'set -euo pipefail'
        echo '__block=start'
        echo 'trap '\''echo "check-guides: error: $__block: exit status $?" >&2'\'' ERR'
        python3 scripts/guide-blocks.py "$page" 2>"$dir/rules"
    } >"$script"
    rules=$?
    while read -r kind where reason; do
        case $kind in
            skip) echo "check-guides: skipped $where ($reason)"; skipped=$((skipped + 1)) ;;
            error) echo "check-guides: error: $where $reason" >&2; status=1 ;;
        esac
    done <"$dir/rules"
    [ "$rules" -eq 0 ] || continue
    blocks=$(grep -c '^__block=.*:' "$script" || true)
    [ "$blocks" -gt 0 ] || continue
    t0=$(date +%s)
    # The page's environment: the built tools first on PATH, a HOME of its own, no store or
    # agent of the caller's, and RSAKIT_SOURCE for fixtures in the tree.
    (
        cd "$dir/run"
        exec env -u RSAKIT_STORE -u RSAKIT_AGENT_SOCK -u XDG_DATA_HOME -u XDG_RUNTIME_DIR \
            -u SSH_AUTH_SOCK -u RSAKIT_PASSPHRASE \
            HOME="$dir/home" TMPDIR="$dir/tmp" PATH="$bin:$PATH" RSAKIT_SOURCE="$root" \
            RSAKIT_PKCS11_MODULE="$bin/librsakit-pkcs11.so" \
            setsid bash "$script"
    ) >"$dir/log" 2>&1 &
    pid=$!
    rc=0
    timeout_at=$(( $(date +%s) + 300 ))
    while kill -0 "$pid" 2>/dev/null; do
        if [ "$(date +%s)" -ge "$timeout_at" ]; then
            echo "check-guides: error: $page: still running after 300 s" >&2
            kill -- -"$pid" 2>/dev/null; rc=124; break
        fi
        sleep 0.2
    done
    [ "$rc" -ne 0 ] || { wait "$pid"; rc=$?; }
    # Whatever the page started and left running (a server in the background) ends with it.
    pkill -KILL -s "$pid" 2>/dev/null || true
    ran=$((ran + blocks))
    if [ "$rc" -ne 0 ]; then
        status=1
        echo "check-guides: error: $page failed (exit status $rc); its output:" >&2
        tail -n 40 "$dir/log" | sed 's/^/    /' >&2
    else
        echo "check-guides: $page: $blocks blocks ran ($(( $(date +%s) - t0 )) s)"
        [ -z "${RSAKIT_GUIDES_SHOW:-}" ] || sed 's/^/    /' "$dir/log"
    fi
done
echo "check-guides: $ran blocks in ${#pages[@]} pages, $skipped skipped, took $(( $(date +%s) - began )) s"
exit $status
