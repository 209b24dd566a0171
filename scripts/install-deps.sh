#!/usr/bin/env bash
# Install what rsakit needs on a Debian machine, only where it is missing:
# pkg-config, GMP (libgmp-dev), Nettle (nettle-dev), GnuTLS (libgnutls28-dev), libsodium (libsodium-dev), libcurl
# (libcurl4-gnutls-dev: HTTP for OCSP), the openssl CLI
# (interop tests), certtool (gnutls-bin, PKCS#12 interop tests), curl (mutual TLS interop tests) and valgrind (the
# constant-time harness under memcheck; also provides valgrind/memcheck.h); for the manual pages, completion and
# the Debian package: groff (man page checks), man-db, zsh and fish (completion tests), dpkg-dev (dpkg-shlibdeps)
# and lintian; and for the PKCS#11 module:
# p11-kit's header (libp11-kit-dev) and p11-kit, and the clients its tests drive: pkcs11-tool
# (opensc), p11tool and gnutls-cli (gnutls-bin), ssh and sshd (openssh-client, openssh-server), and
# OpenSSL's pkcs11 engine for curl (libengine-pkcs11-openssl), NSS's certutil, modutil and tstclnt
# (libnss3-tools); for keys on a token: SoftHSM2 (softhsm2: softhsm2-util and
# /usr/lib/softhsm/libsofthsm2.so, a token directory per test); pinentry-tty (the agent's pinentry
# dialog, driven through a pseudo-terminal by the tests); for keys in the TPM: tpm2-tss's headers at build time
# (libtss2-dev; its libraries are loaded with dlopen only by TPM keys) and swtpm (swtpm, swtpm-tools: a software
# TPM per test on 127.0.0.1; tpm2-tools for the test that loads a key's blobs without rsakit, the benchmark's
# peer and users' diagnostics); for the documentation site
# (scripts/docs.sh, scripts/check-site.sh): mandoc (man pages in HTML), python3-markdown (the
# guides), chromium and chromium-driver (the browser check), and Selenium from PyPI for the
# python3 on PATH (with pip: python3-pip when it has none).
set -euo pipefail
need=()
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
pkg-config --exists gmp 2>/dev/null || need+=(libgmp-dev)
pkg-config --exists nettle 2>/dev/null || need+=(nettle-dev)
pkg-config --exists libsodium 2>/dev/null || need+=(libsodium-dev)
pkg-config --exists gnutls 2>/dev/null || need+=(libgnutls28-dev)
pkg-config --exists libcurl 2>/dev/null || need+=(libcurl4-gnutls-dev)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
command -v certtool >/dev/null 2>&1 || need+=(gnutls-bin)
command -v curl >/dev/null 2>&1 || need+=(curl)
command -v valgrind >/dev/null 2>&1 || need+=(valgrind)
command -v groff >/dev/null 2>&1 || need+=(groff-base)
command -v man >/dev/null 2>&1 || need+=(man-db)
command -v zsh >/dev/null 2>&1 || need+=(zsh)
command -v fish >/dev/null 2>&1 || need+=(fish)
command -v dpkg-shlibdeps >/dev/null 2>&1 || need+=(dpkg-dev)
command -v lintian >/dev/null 2>&1 || need+=(lintian)
pkg-config --exists p11-kit-1 2>/dev/null || need+=(libp11-kit-dev)
command -v p11-kit >/dev/null 2>&1 || need+=(p11-kit)
command -v pkcs11-tool >/dev/null 2>&1 || need+=(opensc)
{ command -v softhsm2-util && [ -f /usr/lib/softhsm/libsofthsm2.so ]; } >/dev/null 2>&1 || need+=(softhsm2)
{ command -v p11tool && command -v gnutls-cli; } >/dev/null 2>&1 || need+=(gnutls-bin)
pkg-config --exists tss2-esys tss2-tctildr tss2-mu tss2-rc 2>/dev/null || need+=(libtss2-dev)
command -v swtpm >/dev/null 2>&1 || need+=(swtpm)
command -v swtpm_setup >/dev/null 2>&1 || need+=(swtpm-tools)
command -v tpm2_getcap >/dev/null 2>&1 || need+=(tpm2-tools)
{ command -v ssh && command -v ssh-keygen; } >/dev/null 2>&1 || need+=(openssh-client)
[ -x /usr/sbin/sshd ] || command -v sshd >/dev/null 2>&1 || need+=(openssh-server)
# pinentry-tty: the agent's passphrase dialog without a terminal, tested with GnuPG's real program.
[ -x /usr/bin/pinentry-tty ] || need+=(pinentry-tty)
# nginx: the HTTPS client's redirect, HTTP/2 and status tests start one on 127.0.0.1 with a config of their own.
[ -x /usr/sbin/nginx ] || command -v nginx >/dev/null 2>&1 || need+=(nginx)
# jq: the guides' JSON examples (docs/scripting.md, docs/certificates.md, run by check-guides.sh).
command -v jq >/dev/null 2>&1 || need+=(jq)
compgen -G '/usr/lib/*/engines-3/pkcs11.so' >/dev/null || need+=(libengine-pkcs11-openssl)
{ command -v certutil && command -v modutil && command -v tstclnt; } >/dev/null 2>&1 || need+=(libnss3-tools)
command -v mandoc >/dev/null 2>&1 || need+=(mandoc)
# Debian's python3-markdown serves /usr/bin/python3, which scripts/docs.sh falls back to.
{ python3 -c 'import markdown' || /usr/bin/python3 -c 'import markdown'; } >/dev/null 2>&1 || need+=(python3-markdown)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need+=(chromium-driver)
python3 -c 'import selenium' >/dev/null 2>&1 || python3 -m pip --version >/dev/null 2>&1 || need+=(python3-pip)
# scripts/check-aarch64.sh compiles the C targets for aarch64 against Debian's arm64 libc and
# GMP headers (a foreign architecture, so dpkg must know arm64 before apt-get update).
arm64=0
[ -f /usr/aarch64-linux-gnu/include/stdio.h ] || { need+=(libc6-dev-arm64-cross); arm64=1; }
[ -f /usr/include/aarch64-linux-gnu/gmp.h ] || { need+=(libgmp-dev:arm64); arm64=1; }
if [ "${#need[@]}" -gt 0 ]; then
    echo "rsakit: installing ${need[*]}" >&2
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    export DEBIAN_FRONTEND=noninteractive
    [ "$arm64" -eq 0 ] || $SUDO dpkg --add-architecture arm64
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq "${need[@]}"
fi
# Selenium, which drives the browser check, from PyPI (Debian's chromedriver, never a driver or
# browser it would download). A system Python marked externally managed takes it anyway: the
# check needs that interpreter, and CI's machine is thrown away afterwards.
if ! python3 -c 'import selenium' >/dev/null 2>&1; then
    pip_flags=(--quiet)
    managed='import os, sys, sysconfig
sys.exit(not os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")))'
    python3 -c "$managed" && pip_flags+=(--break-system-packages)
    [ -w "$(python3 -c 'import sysconfig; print(sysconfig.get_path("purelib"))')" ] || pip_flags+=(--user)
    echo "rsakit: installing selenium from PyPI for $(command -v python3)" >&2
    python3 -m pip install "${pip_flags[@]}" 'selenium>=4.10,<5'
fi
command -v swift >/dev/null 2>&1 || { echo "rsakit: swift is not on PATH (Swift 6 toolchain needed)" >&2; exit 1; }
