# Sourced by scripts/test.sh and scripts/sanitizers.sh: run a test step under a deadline, so
# a hang fails that step in bounded time and names what hung, instead of running CI past its
# 90-minute limit with nothing said (stop 18's CI ended that way inside the TSan step).
#
#   bounded SECONDS LOG command...        output appended to LOG only
#   bounded_shown SECONDS LOG command...  output to LOG (truncated first) and to stdout
#
# Runs `command...` under timeout(1) in its own process group and returns its status. On
# expiry it kills the whole group (TERM, then KILL 30 s later), prints the XCTest case that had
# started and not finished, the last lines of LOG and the processes left, and returns 124.

bounded() {
    local seconds=$1 log=$2 rc=0
    shift 2
    timeout -k 30 "$seconds" "$@" >>"$log" 2>&1 || rc=$?
    bounded_report "$rc" "$seconds" "$log" "$@"
}

bounded_shown() {
    local seconds=$1 log=$2
    shift 2
    timeout -k 30 "$seconds" "$@" 2>&1 | tee "$log"
    bounded_report "${PIPESTATUS[0]}" "$seconds" "$log" "$@"
}

bounded_report() {
    local rc=$1 seconds=$2 log=$3
    shift 3
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        echo "TIMED OUT after $seconds s: $*"
        local started
        started=$(grep -E "^Test Case '.*' started" "$log" | tail -n 1 | sed -E "s/^Test Case '([^']*)'.*/\1/")
        if [ -n "$started" ] && ! grep -qE "^Test Case '$started' (passed|failed|skipped)" "$log"; then
            echo "  the test case running then: $started"
        fi
        echo "  last lines of $log:"
        tail -n 15 "$log" | sed 's/^/    /'
        echo "  processes still running:"
        ps -eo pid,ppid,etimes,args --forest | grep -E "xctest|rsakit|openssl|StoreStress|swift-test" | grep -v grep | head -n 20 | cut -c1-220 | sed 's/^/    /' || true
        return 124
    fi
    return "$rc"
}
