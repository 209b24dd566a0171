#!/usr/bin/env bash
# scripts/measure-tpm.sh [BLOCKS] [RUNS]: how fast a key in a TPM is, measured on swtpm, a
# SOFTWARE TPM (libtpms on this machine's CPU, reached over TCP): a real TPM chip is slower
# (about 5 to 50 RSA-2048 private operations a second) and a firmware TPM somewhere between.
# docs/tpm.md ("Speed") has the figures this prints.
#
# It starts `swtpm socket --tpm2` on two free ports of 127.0.0.1 with its state in a temporary
# folder (never a /dev/tpm* device), makes keys with `rsakit genpair --tpm`, and times, as wall
# time of whole rsakit processes (median of RUNS, default 5, after one warm-up):
#   - key generation, 2048 and 3072 bits (TPM2_Create under the SRK, and for a signing key the
#     PSS probe);
#   - private operations in one session: decrypting an rsakit container of BLOCKS blocks
#     (default 200), with a PKCS#1 v1.5 decryption key and an OAEP (SHA-256) one; rate = blocks /
#     (time - the time of a 1-block container), so process start and the TPM session's set-up
#     (SRK, salted session, key load) are left out;
#   - one `rsakit sign` (PKCS#1 v1.5 and PSS) with a signing key, start to exit: what a user
#     waits per signature;
#   - Apple's format, 1 MiB: one private operation whatever the size;
#   - the same container decrypted with a key held in the store (rsakit's engine), for the ratio.
# RSAKIT_BIN=PATH uses that rsakit; else a release build as scripts/install.sh makes it.
set -euo pipefail
cd "$(dirname "$0")/.."
blocks="${1:-200}"
runs="${2:-5}"
for tool in swtpm python3; do
    command -v "$tool" >/dev/null 2>&1 || { echo "measure-tpm: $tool is not installed (scripts/install-deps.sh)" >&2; exit 1; }
done
if [ -z "${RSAKIT_BIN:-}" ]; then
    swift build -c release --product rsakit --static-swift-stdlib
    bin=$(swift build -c release --show-bin-path)
fi
rsakit="${RSAKIT_BIN:-$bin/rsakit}"
work=$(mktemp -d "${TMPDIR:-/tmp}/rsakit-tpm-measure.XXXXXX")
pid=""
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
mkdir "$work/state"
# tpm2-tss's swtpm TCTI takes the control channel to be the next port.
port=$(python3 -c 'import socket
for _ in range(50):
    a = socket.socket(); a.bind(("127.0.0.1", 0)); p = a.getsockname()[1]
    b = socket.socket()
    try:
        b.bind(("127.0.0.1", p + 1)); print(p); break
    except OSError: pass
    finally: a.close(); b.close()')
swtpm socket --tpm2 --tpmstate dir="$work/state" --server type=tcp,port="$port",bindaddr=127.0.0.1 \
    --ctrl type=tcp,port=$((port + 1)),bindaddr=127.0.0.1 --flags not-need-init,startup-clear &
pid=$!
sleep 0.5
export RSAKIT_STORE="$work/store" RSAKIT_TPM_TCTI="swtpm:host=127.0.0.1,port=$port"
echo "software TPM: swtpm $(swtpm --version | head -n 1 | sed 's/.*version \([0-9.]*\).*/\1/'), TCTI $RSAKIT_TPM_TCTI"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(nproc) cores; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$rsakit" "$work" "$blocks" "$runs" <<'PY'
import os, statistics, subprocess, sys, time
rsakit, work, blocks, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
def run(args, quiet=True):
    began = time.perf_counter()
    done = subprocess.run([rsakit] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if done.returncode != 0:
        sys.exit(f"rsakit {' '.join(args)}: {done.stderr.decode()}")
    return time.perf_counter() - began
def median(args, n=runs):
    run(args)
    return statistics.median(run(args) for _ in range(n))
def line(name, value, unit):
    print(f"software TPM  {name:<44} {value:10.1f} {unit}")
# Key generation (each makes a new key; the tags differ).
for bits in (2048, 3072):
    times = [run(["genpair", "--tpm", "--bits", str(bits), "--tag", f"g{bits}-{i}"]) for i in range(runs)]
    line(f"genpair --tpm --bits {bits}", statistics.median(times) * 1000, "ms")
times = [run(["genpair", "--tpm", "--usage", "sign", "--tag", f"gs-{i}"]) for i in range(runs)]
line("genpair --tpm --usage sign (with the PSS probe)", statistics.median(times) * 1000, "ms")
# One key per usage: each TPM key decrypts one scheme, or signs.
run(["genpair", "--tpm", "--tag", "k"])
run(["genpair", "--tpm", "--padding", "pkcs1", "--tag", "kp"])
run(["genpair", "--tpm", "--usage", "sign", "--tag", "ks"])
run(["genpair", "--tag", "mem"])
# Containers of 1 and BLOCKS blocks (188 payload bytes a block for PKCS#1 v1.5 at 2048 bits).
for padding, per_block, tpm in (("pkcs1", 188, "kp"), ("oaep", 256 - 2 * 32 - 2 - 57, "k")):
    for count in (1, blocks):
        with open(f"{work}/p{count}", "wb") as f:
            f.write(os.urandom(per_block * count))
        for tag in (tpm, "mem"):
            run(["encrypt", "--tag", tag, "--padding", padding, "--oaep-hash", "sha256", "--in", f"{work}/p{count}",
                 "--out", f"{work}/{tag}-{padding}-{count}.rsa"] if padding == "oaep" else
                ["encrypt", "--tag", tag, "--in", f"{work}/p{count}", "--out", f"{work}/{tag}-{padding}-{count}.rsa"])
    rates = {}
    for tag in (tpm, "mem"):
        one = median(["decrypt", "--tag", tag, "--in", f"{work}/{tag}-{padding}-1.rsa", "--out", f"{work}/out"])
        many = median(["decrypt", "--tag", tag, "--in", f"{work}/{tag}-{padding}-{blocks}.rsa", "--out", f"{work}/out"])
        rates[tag] = (blocks - 1) / max(many - one, 1e-9)
    line(f"RSA-2048 decrypt, {padding}, one session", rates[tpm], "ops/s")
    print(f"store key     {'RSA-2048 decrypt, ' + padding + ', rsakit engine':<44} {rates['mem']:10.1f} ops/s"
          f"   (engine / software TPM = {rates['mem'] / rates[tpm]:.0f}x)")
with open(f"{work}/msg", "wb") as f:
    f.write(os.urandom(1000))
line("rsakit sign (PKCS#1 v1.5), whole command", median(["sign", "--tag", "ks", "--in", f"{work}/msg", "--out", f"{work}/s"]) * 1000, "ms")
line("rsakit sign --scheme pss, whole command", median(["sign", "--tag", "ks", "--scheme", "pss", "--in", f"{work}/msg", "--out", f"{work}/s"]) * 1000, "ms")
with open(f"{work}/mib", "wb") as f:
    f.write(os.urandom(1 << 20))
run(["encrypt", "--tag", "k", "--format", "apple-aesgcm", "--in", f"{work}/mib", "--out", f"{work}/mib.apple"])
run(["encrypt", "--tag", "kp", "--in", f"{work}/mib", "--out", f"{work}/mib.rsa"])
line("decrypt 1 MiB, --format apple-aesgcm (1 op)", median(["decrypt", "--tag", "k", "--format", "apple-aesgcm", "--in", f"{work}/mib.apple", "--out", f"{work}/out"]) * 1000, "ms")
line("decrypt 1 MiB, PKCS#1 v1.5 container (5578 ops)", run(["decrypt", "--tag", "kp", "--in", f"{work}/mib.rsa", "--out", f"{work}/out"]) * 1000, "ms")
PY
