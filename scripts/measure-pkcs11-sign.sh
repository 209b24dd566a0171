#!/usr/bin/env bash
# scripts/measure-pkcs11-sign.sh [RUNS]: time `pkcs11-tool --sign` through the PKCS#11 module
# against `rsakit sign`, the same 2048-bit key of a fresh store, the same 1000-byte message,
# SHA256-RSA-PKCS (RSASSA-PKCS1-v1_5 with SHA-256), one signature per process, RUNS processes
# each (default 30) after 3 warm-up runs, alternating (docs/mutual-tls.md, "Using the keychain from curl,
# ssh and browsers" has figures). Release builds as scripts/install.sh makes them: rsakit with
# --static-swift-stdlib, the module with the runtime linked in (Package.swift); or installed
# ones: RSAKIT_BIN=PATH/bin/rsakit RSAKIT_MODULE=PATH/lib/pkcs11/librsakit-pkcs11.so skip the build.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-30}"
for tool in pkcs11-tool python3; do
    command -v "$tool" >/dev/null 2>&1 || { echo "measure-pkcs11-sign: $tool is not installed" >&2; exit 1; }
done
if [ -z "${RSAKIT_BIN:-}" ] || [ -z "${RSAKIT_MODULE:-}" ]; then
    swift build -c release --product rsakit --static-swift-stdlib
    swift build -c release --product rsakit-pkcs11
    bin=$(swift build -c release --show-bin-path)
fi
rsakit="${RSAKIT_BIN:-$bin/rsakit}"
module="${RSAKIT_MODULE:-$bin/librsakit-pkcs11.so}"
work=$(mktemp -d "${TMPDIR:-/tmp}/rsakit-p11-measure.XXXXXX")
trap 'rm -rf "$work"' EXIT
export RSAKIT_STORE="$work/store"
"$rsakit" genpair -t bench -q >/dev/null
head -c 1000 /dev/urandom > "$work/message"
# Both signatures are checked once before timing (PKCS#1 v1.5 is deterministic: same bytes).
pkcs11-tool --module "$module" --sign -m SHA256-RSA-PKCS --label bench -i "$work/message" -o "$work/p11.sig" 2>/dev/null
"$rsakit" sign -t bench -i "$work/message" -o "$work/rsakit.sig"
cmp "$work/p11.sig" "$work/rsakit.sig"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
# The third command is pkcs11-tool's own start-up and exit with p11-kit's small trust module
# (no signature): what any module pays in this client, beyond the module's control.
trust_module=$(compgen -G '/usr/lib/*/pkcs11/p11-kit-trust.so' | head -n 1 || true)
# Paired runs: the commands alternate (A B C, A B C, ...) so that the machine's load, which
# changes by the second on a shared machine, falls on all of them alike; each process's
# wall time (perf_counter around spawn and wait) and CPU time (wait4's rusage) are kept, and
# the median of the per-round ratios is printed, as RSAKitBenchmarks does for its cli case.
python3 - "$runs" "$module" "$rsakit" "$work" "$trust_module" <<'PY'
import os, statistics, subprocess, sys, time
runs, module, rsakit, work, trust = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
commands = {
    "pkcs11-tool --sign (module)": ["pkcs11-tool", "--module", module, "--sign", "-m", "SHA256-RSA-PKCS",
                                    "--label", "bench", "-i", f"{work}/message", "-o", f"{work}/p11.sig"],
    "rsakit sign": [rsakit, "sign", "-t", "bench", "-i", f"{work}/message", "-o", f"{work}/rsakit.sig"],
}
if trust:
    commands["pkcs11-tool -L (p11-kit-trust)"] = ["pkcs11-tool", "--module", trust, "-L"]
def run(argv):
    began = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - began
    if status != 0:
        sys.exit(f"{' '.join(argv)} failed")
    return wall * 1000, (usage.ru_utime + usage.ru_stime) * 1000
for argv in commands.values():          # warm-up
    for _ in range(3): run(argv)
times = {name: [] for name in commands}
for _ in range(runs):
    for name, argv in commands.items():
        times[name].append(run(argv))
for name, samples in times.items():
    walls, cpus = [w for w, _ in samples], [c for _, c in samples]
    print(f"{name:32s} wall median {statistics.median(walls):6.2f} ms (p10 {sorted(walls)[len(walls) // 10]:.2f}, "
          f"p90 {sorted(walls)[len(walls) * 9 // 10]:.2f})  CPU median {statistics.median(cpus):6.2f} ms  ({runs} runs)")
p11, cli = times["pkcs11-tool --sign (module)"], times["rsakit sign"]
wall_ratio = statistics.median(a[0] / b[0] for a, b in zip(p11, cli))
cpu_ratio = statistics.median(a[1] / b[1] for a, b in zip(p11, cli))
print(f"ratio pkcs11-tool --sign / rsakit sign, median of {runs} paired rounds: wall {wall_ratio:.2f}, CPU {cpu_ratio:.2f}")
if trust:
    base = times["pkcs11-tool -L (p11-kit-trust)"]
    wall_net = statistics.median((a[0] - c[0]) / b[0] for a, b, c in zip(p11, cli, base))
    cpu_net = statistics.median((a[1] - c[1]) / b[1] for a, b, c in zip(p11, cli, base))
    print(f"the same with pkcs11-tool's own start-up (the p11-kit-trust run of the round) subtracted: wall {wall_net:.2f}, CPU {cpu_net:.2f}")
PY
