#!/usr/bin/env bash
# NIST PKITS (Public Key Interoperability Test Suite) as the judge of `rsakit trust evaluate`,
# with `openssl verify` and GnuTLS's `certtool --verify` run on the same inputs beside it.
#
# Usage: scripts/pkits.sh [--vectors WHEEL|DIR] [--tsv FILE] [--json FILE] [--verify-date DATE]
#                         [--no-openssl] [--no-certtool] [--only PATTERN]
#
#   --vectors WHEEL|DIR  pyca's cryptography_vectors wheel (.whl), or a folder: the unpacked wheel,
#                        its x509/PKITS_data, or any folder holding certs/ and crls/ (also $PKITS_VECTORS).
#                        Default: the newest wheel cached in ${XDG_CACHE_HOME:-~/.cache}/rsakit-pkits,
#                        else `python3 -m pip download cryptography_vectors --no-deps` into that cache.
#                        A wheel is unpacked (x509/PKITS_data/ only) into the cache, never the repository.
#   --tsv FILE           also write one row per test (tab-separated, with a header line).
#   --json FILE          also write the rows as a JSON array (needs jq).
#   --verify-date DATE   RFC 3339 date of the evaluation (default 2020-06-15T12:00:00Z: the suite's
#                        certificates run 2010-01-01 to 2030-12-31, its newest CRLs start 2011-01-01).
#   --no-openssl, --no-certtool   skip a peer (each is skipped anyway when not installed).
#   --only PATTERN       run only the end-entity files whose name matches the glob PATTERN.
#   RSAKIT_BIN           the rsakit binary to judge; default: `swift build --product rsakit` in this
#                        checkout, then $(swift build --show-bin-path)/rsakit.
#
# Exit status: 0 when the suite ran (whatever the agreement: read the table), 1 on the script's own
# errors (no data, a build that fails, a file name not mapped to a section), 64 on a usage error.
#
# The inputs of every test (as PKITS means them: every CA certificate and CRL of the suite is
# available, the trust anchor is the only anchor, revocation is checked and a missing CRL fails):
#   rsakit trust evaluate EE --chain cas.pem --anchor anchor.pem --anchors-only --crl crls.pem
#          --revocation crl --require-revocation --no-network --verify-date DATE --json --store EMPTY
#     (--require-revocation is what makes a certificate without a current CRL a failure, see
#      Sources/RSAKitPKI/Revocation/RevocationChecker.swift; without it 4.4.1 Missing CRL passes with a
#      warning. --store names a folder that does not exist, so no store is opened.)
#   openssl verify -crl_check_all -extended_crl -CAfile anchor.pem -untrusted cas.pem -CRLfile crls.pem -attime EPOCH EE
#     (no -x509_strict: it adds profile checks beyond RFC 5280's path validation, e.g. it refuses
#      the non-critical basicConstraints of 4.6.4, a valid path; no -policy_check: rsakit has no
#      policy inputs either.)
#   certtool --verify --load-ca-certificate anchor.pem --load-crl crls.pem --infile EE+cas.pem
#     (certtool has no verify date: it checks at the current time, inside the suite's validity until
#      2030; GnuTLS sorts the chain out of the bundle, taking the first issuer by name, and does not
#      require a CRL, so its results on 4.4.1 and on same-named CAs (4.5) are not a fair comparison.)
#
# Sections: the PKITS document (NIST, PKITS v1.0.1) numbers its path tests 4.S.N and names the
# end-entity file after the test: "4.1.2 Invalid CA Signature Test2" is InvalidCASignatureTest2EE.crt.
# N is the number in the file name; S comes from the file name's stem (the name without
# Valid/Invalid, TestN and EE.crt), mapped in section_of below:
#   4.1  signature verification        CertificatePath (4.1.1), CASignature, EESignature, DSASignatures,
#                                      DSAParameterInheritance, DSASignature
#   4.2  validity periods              CA/EEnotBeforeDate, CA/EEnotAfterDate, pre2000UTC..., GeneralizedTimenot...
#   4.3  verifying name chaining       NameChaining*, NameUIDs, RFC3280*AttributeTypes, UTF8String*, Rollover...
#   4.4  basic certificate revocation  MissingCRL, RevokedCA, RevokedEE, BadCRL*, WrongCRL, TwoCRLs, Unknown
#                                      CRL(Entry)Extension, Old/pre2000/GeneralizedTimeCRLnextUpdate,
#                                      Negative/LongSerialNumber, SeparateCertificateandCRLKeys
#   4.5  paths with self-issued certs  BasicSelfIssued*
#   4.6  verifying basic constraints   MissingbasicConstraints, cAFalse, basicConstraintsNotCritical,
#                                      pathLenConstraint, SelfIssuedpathLenConstraint
#   4.7  key usage                     keyUsage*
#   4.8  certificate policies          AllCertificates*, DifferentPolicies, OverlappingPolicies, AnyPolicy,
#                                      UserNoticeQualifier, CPSPointerQualifier (4.8.1 has no file of its
#                                      own: it is ValidCertificatePathTest1EE under four policy sets)
#   4.9  require explicit policy       requireExplicitPolicy, SelfIssuedrequireExplicitPolicy
#   4.10 policy mappings               PolicyMapping, MappingFromanyPolicy, MappingToanyPolicy
#   4.11 inhibit policy mapping        inhibitPolicyMapping, SelfIssuedinhibitPolicyMapping
#   4.12 inhibit any policy            inhibitAnyPolicy, SelfIssuedinhibitAnyPolicy
#   4.13 name constraints              DN/RFC822/DNandRFC822/DNS/URInameConstraints
#   4.14 distribution points           distributionPoint, NoissuingDistributionPoint, onlyContains*,
#                                      onlySomeReasons, IDPwithindirectCRL, cRLIssuer
#   4.15 delta-CRLs                    deltaCRLIndicatorNoBase, deltaCRL
#   4.16 private certificate extensions Unknown(Not)CriticalCertificateExtension
# Sections 4.8-4.12 test policy processing under initial policy sets, initial-explicit-policy and
# the inhibit flags (RFC 5280 §6.1.1 c, e-g). rsakit has no such inputs, so these sections are
# reported as "n/a (policy inputs)": their files are still run and counted against the outcome
# the file name gives (the outcome under PKITS's default settings), for information only.
set -euo pipefail

usage() {
    sed -n '5,21p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 64
}
help() {
    sed -n '5,23p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
}
die() { echo "pkits.sh: error: $*" >&2; exit 1; }

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$script_dir/.." && pwd)
vectors=${PKITS_VECTORS:-}
tsv_out=""
json_out=""
verify_date="2020-06-15T12:00:00Z"
use_openssl=1
use_certtool=1
only="*"

while [ $# -gt 0 ]; do
    case "$1" in
        --vectors) [ $# -ge 2 ] || usage; vectors=$2; shift 2 ;;
        --tsv) [ $# -ge 2 ] || usage; tsv_out=$2; shift 2 ;;
        --json) [ $# -ge 2 ] || usage; json_out=$2; shift 2 ;;
        --verify-date) [ $# -ge 2 ] || usage; verify_date=$2; shift 2 ;;
        --no-openssl) use_openssl=0; shift ;;
        --no-certtool) use_certtool=0; shift ;;
        --only) [ $# -ge 2 ] || usage; only=$2; shift 2 ;;
        -h|--help) help ;;
        *) echo "pkits.sh: unknown argument '$1'" >&2; usage ;;
    esac
done
if [ -n "$json_out" ] && ! command -v jq >/dev/null; then die "--json needs jq"; fi
command -v openssl >/dev/null || use_openssl=0
command -v certtool >/dev/null || use_certtool=0
# openssl converts the suite's DER files to PEM bundles even when it is not judged.
command -v openssl >/dev/null || die "openssl is needed to convert the suite's DER files"

cache="${XDG_CACHE_HOME:-$HOME/.cache}/rsakit-pkits"

# --- the data ------------------------------------------------------------------------------
# Unpack x509/PKITS_data/ of a wheel into the cache (once per wheel); print the folder.
unpack_wheel() {
    local wheel=$1 dest
    dest="$cache/$(basename "$wheel" .whl)"
    if [ ! -d "$dest/cryptography_vectors/x509/PKITS_data/certs" ]; then
        mkdir -p "$dest"
        if command -v unzip >/dev/null; then
            unzip -q -o "$wheel" 'cryptography_vectors/x509/PKITS_data/*' -d "$dest" >&2 \
                || die "cannot unpack $wheel"
        else
            python3 - "$wheel" "$dest" <<'EOF' || die "cannot unpack $wheel"
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    z.extractall(sys.argv[2], [n for n in z.namelist() if n.startswith("cryptography_vectors/x509/PKITS_data/")])
EOF
        fi
    fi
    echo "$dest/cryptography_vectors/x509/PKITS_data"
}

if [ -z "$vectors" ]; then
    mkdir -p "$cache"
    vectors=$(find "$cache" -maxdepth 1 -name 'cryptography_vectors-*.whl' | sort -V | tail -n 1)
    if [ -z "$vectors" ]; then
        echo "pkits.sh: downloading cryptography_vectors (PyPI) into $cache" >&2
        python3 -m pip download cryptography_vectors --no-deps -d "$cache" >&2 || die "pip download failed"
        vectors=$(find "$cache" -maxdepth 1 -name 'cryptography_vectors-*.whl' | sort -V | tail -n 1)
        [ -n "$vectors" ] || die "pip download left no cryptography_vectors wheel in $cache"
    fi
fi
if [ -f "$vectors" ]; then
    data=$(unpack_wheel "$vectors")
elif [ -d "$vectors/certs" ] && [ -d "$vectors/crls" ]; then
    data=$vectors
elif [ -d "$vectors/x509/PKITS_data" ]; then
    data=$vectors/x509/PKITS_data
elif [ -d "$vectors/cryptography_vectors/x509/PKITS_data" ]; then
    data=$vectors/cryptography_vectors/x509/PKITS_data
else
    die "no PKITS data (certs/ and crls/) in '$vectors'"
fi
data=$(cd "$data" && pwd)
case "$data/" in "$repo"/*) die "the PKITS data must not live inside the repository ($data)" ;; esac
[ -f "$data/certs/TrustAnchorRootCertificate.crt" ] || die "no TrustAnchorRootCertificate.crt in $data/certs"
source_name=$(basename "$vectors")

# --- rsakit --------------------------------------------------------------------------------
if [ -n "${RSAKIT_BIN:-}" ]; then
    rsakit=$RSAKIT_BIN
else
    (cd "$repo" && swift build --product rsakit >&2) || die "swift build failed"
    rsakit="$(cd "$repo" && swift build --show-bin-path)/rsakit"
fi
[ -x "$rsakit" ] || die "no rsakit binary at $rsakit"
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git -C "$repo" status --porcelain --untracked-files=no 2>/dev/null)" ]; then commit="$commit+changes"; fi

# --- the inputs ----------------------------------------------------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/rsakit-pkits.XXXXXX")
trap 'rm -rf "$work"' EXIT
store="$work/no-store"      # never created: rsakit opens no store
export RSAKIT_STORE="$store"
openssl x509 -inform DER -in "$data/certs/TrustAnchorRootCertificate.crt" -out "$work/anchor.pem"
: >"$work/cas.pem"
ca_count=0
for f in "$data"/certs/*.crt; do
    case "$(basename "$f")" in
        *EE.crt|TrustAnchorRootCertificate.crt) ;;
        *) openssl x509 -inform DER -in "$f" >>"$work/cas.pem"; ca_count=$((ca_count + 1)) ;;
    esac
done
: >"$work/crls.pem"
crl_count=0
for f in "$data"/crls/*.crl; do
    openssl crl -inform DER -in "$f" >>"$work/crls.pem"; crl_count=$((crl_count + 1))
done
epoch=$(date -u -d "$verify_date" +%s) || die "cannot read --verify-date '$verify_date'"

# The PKITS section of an end-entity file's stem (see the table at the top).
section_of() {
    case "$1" in
        CertificatePath|CASignature|EESignature|DSASignatures|DSAParameterInheritance|DSASignature) echo 4.1 ;;
        CAnotBeforeDate|EEnotBeforeDate|pre2000UTCnotBeforeDate|GeneralizedTimenotBeforeDate) echo 4.2 ;;
        CAnotAfterDate|EEnotAfterDate|pre2000UTCEEnotAfterDate|GeneralizedTimenotAfterDate) echo 4.2 ;;
        NameChaining|NameChainingOrder|NameChainingWhitespace|NameChainingCapitalization|NameUIDs) echo 4.3 ;;
        RFC3280MandatoryAttributeTypes|RFC3280OptionalAttributeTypes|UTF8StringEncodedNames) echo 4.3 ;;
        RolloverfromPrintableStringtoUTF8String|UTF8StringCaseInsensitiveMatch) echo 4.3 ;;
        MissingCRL|RevokedCA|RevokedEE|BadCRLSignature|BadCRLIssuerName|WrongCRL|TwoCRLs) echo 4.4 ;;
        UnknownCRLEntryExtension|UnknownCRLExtension|OldCRLnextUpdate|pre2000CRLnextUpdate) echo 4.4 ;;
        GeneralizedTimeCRLnextUpdate|NegativeSerialNumber|LongSerialNumber|SeparateCertificateandCRLKeys) echo 4.4 ;;
        BasicSelfIssuedOldWithNew|BasicSelfIssuedNewWithOld|BasicSelfIssuedCRLSigningKey) echo 4.5 ;;
        MissingbasicConstraints|cAFalse|basicConstraintsNotCritical|pathLenConstraint) echo 4.6 ;;
        SelfIssuedpathLenConstraint) echo 4.6 ;;
        keyUsage*) echo 4.7 ;;
        AllCertificatesNoPolicies|AllCertificatesSamePolicies|AllCertificatesanyPolicy|DifferentPolicies) echo 4.8 ;;
        OverlappingPolicies|AnyPolicy|UserNoticeQualifier|CPSPointerQualifier) echo 4.8 ;;
        requireExplicitPolicy|SelfIssuedrequireExplicitPolicy) echo 4.9 ;;
        PolicyMapping|MappingFromanyPolicy|MappingToanyPolicy) echo 4.10 ;;
        inhibitPolicyMapping|SelfIssuedinhibitPolicyMapping) echo 4.11 ;;
        inhibitAnyPolicy|SelfIssuedinhibitAnyPolicy) echo 4.12 ;;
        DNnameConstraints|RFC822nameConstraints|DNandRFC822nameConstraints|DNSnameConstraints|URInameConstraints) echo 4.13 ;;
        distributionPoint|NoissuingDistributionPoint|onlyContainsUserCerts|onlyContainsCACerts) echo 4.14 ;;
        onlyContainsAttributeCerts|onlySomeReasons|IDPwithindirectCRL|cRLIssuer) echo 4.14 ;;
        deltaCRLIndicatorNoBase|deltaCRL) echo 4.15 ;;
        UnknownNotCriticalCertificateExtension|UnknownCriticalCertificateExtension) echo 4.16 ;;
        *) return 1 ;;
    esac
}
section_title() {
    case "$1" in
        4.1) echo "signature verification" ;; 4.2) echo "validity periods" ;; 4.3) echo "verifying name chaining" ;;
        4.4) echo "basic certificate revocation" ;; 4.5) echo "verifying paths with self-issued certificates" ;;
        4.6) echo "verifying basic constraints" ;; 4.7) echo "key usage" ;; 4.8) echo "certificate policies" ;;
        4.9) echo "require explicit policy" ;; 4.10) echo "policy mappings" ;; 4.11) echo "inhibit policy mapping" ;;
        4.12) echo "inhibit any policy" ;; 4.13) echo "name constraints" ;; 4.14) echo "distribution points" ;;
        4.15) echo "delta-CRLs" ;; 4.16) echo "private certificate extensions" ;;
    esac
}
# Whether a result agrees with the expected one ("-": the tool was not run; "n/a": no expectation).
agree() {
    if [ "$1" = - ]; then echo -; elif [ "$expected" = n/a ]; then echo n/a
    elif [ "$1" = "$expected" ]; then echo yes; else echo no; fi
}
clean() { tr '\t\n' '  ' | sed 's/  */ /g; s/ $//'; }

# --- the run -------------------------------------------------------------------------------
rows="$work/rows.tsv"
: >"$rows"
count=0
for ee in "$data"/certs/*EE.crt; do
    file=$(basename "$ee")
    # shellcheck disable=SC2254 # --only is a glob on purpose
    case "$file" in $only) ;; *) continue ;; esac
    case "$file" in
        Valid*) expected=valid; rest=${file#Valid} ;;
        Invalid*) expected=invalid; rest=${file#Invalid} ;;
        # Twenty policy tests of 4.8 (and 4.12.3) have no Valid/Invalid prefix: their outcome
        # depends on the initial policy set. They are run and counted, not judged.
        *) expected=n/a; rest=$file ;;
    esac
    rest=${rest%EE.crt}
    number=${rest##*Test}
    stem=${rest%Test"$number"}
    section=$(section_of "$stem") || die "no PKITS section for $file (stem '$stem'): extend section_of"
    id="$section.$number"

    set +e
    out=$("$rsakit" trust evaluate "$ee" --chain "$work/cas.pem" --anchor "$work/anchor.pem" --anchors-only \
        --crl "$work/crls.pem" --revocation crl --require-revocation --no-network \
        --verify-date "$verify_date" --json --store "$store" 2>"$work/rsakit.err")
    status=$?
    set -e
    case $status in
        0) rsakit_result=valid; rsakit_reason=$(jq -r '.result' <<<"$out" 2>/dev/null || echo trusted) ;;
        65) rsakit_result=invalid
            rsakit_reason=$(jq -r '[.failures[] | "\(.reason) at \(.certificateIndex): \(.message)"] | join("; ")' <<<"$out" 2>/dev/null \
                || grep -o '"message" : "[^"]*"' <<<"$out" | tr '\n' ';')
            if [ -z "$rsakit_reason" ]; then rsakit_reason=$(clean <"$work/rsakit.err"); fi ;;
        *) rsakit_result="error($status)"; rsakit_reason=$(clean <"$work/rsakit.err") ;;
    esac

    openssl_result=-; openssl_reason=""
    if [ "$use_openssl" = 1 ]; then
        set +e
        openssl_out=$(openssl verify -crl_check_all -extended_crl -CAfile "$work/anchor.pem" -untrusted "$work/cas.pem" \
            -CRLfile "$work/crls.pem" -attime "$epoch" <(openssl x509 -inform DER -in "$ee") 2>&1)
        status=$?
        set -e
        if [ $status = 0 ]; then openssl_result=valid; else openssl_result=invalid
            openssl_reason=$(grep -m 1 '^error' <<<"$openssl_out" | clean || true); fi
    fi

    certtool_result=-; certtool_reason=""
    if [ "$use_certtool" = 1 ]; then
        { openssl x509 -inform DER -in "$ee"; cat "$work/cas.pem"; } >"$work/chain.pem"
        set +e
        certtool_out=$(certtool --verify --load-ca-certificate "$work/anchor.pem" --load-crl "$work/crls.pem" \
            --infile "$work/chain.pem" 2>&1)
        status=$?
        set -e
        if [ $status = 0 ]; then certtool_result=valid; else certtool_result=invalid
            certtool_reason=$(grep -m 1 -i -E 'not verified|error' <<<"$certtool_out" | clean || true); fi
    fi

    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$section" "$file" "$expected" \
        "$rsakit_result" "$(agree "$rsakit_result")" "$openssl_result" "$(agree "$openssl_result")" \
        "$certtool_result" "$(agree "$certtool_result")" "$(clean <<<"$rsakit_reason")" "$(clean <<<"$openssl_reason")" \
        "$(clean <<<"$certtool_reason")" >>"$rows"
    count=$((count + 1))
done
[ "$count" -gt 0 ] || die "no end-entity file matched '$only' in $data/certs"
sort -t . -k 2,2n -k 3,3n "$rows" -o "$rows"

# --- the report ----------------------------------------------------------------------------
header="id	section	file	expected	rsakit	rsakit_agrees	openssl	openssl_agrees	certtool	certtool_agrees	rsakit_reason	openssl_reason	certtool_reason"
if [ -n "$tsv_out" ]; then { echo "$header"; cat "$rows"; } >"$tsv_out"; fi
if [ -n "$json_out" ]; then
    { echo "$header"; cat "$rows"; } | jq -R -s '
        split("\n") | map(select(length > 0) | split("\t")) | .[0] as $h | .[1:]
        | map([$h, .] | transpose | map({(.[0]): .[1]}) | add)' >"$json_out"
fi

peers="openssl $(openssl version | awk '{print $2}')"
if [ "$use_certtool" = 1 ]; then peers="$peers, certtool $(certtool --version | head -n 1 | awk '{print $NF}')"; fi
echo "NIST PKITS from $source_name ($ca_count CA certificates, $crl_count CRLs), verify date $verify_date"
echo "rsakit $commit ($rsakit), $(date -u +%Y-%m-%dT%H:%M:%SZ); peers: $peers"
echo
echo "| section | tests | judged | rsakit agrees | openssl agrees | certtool agrees |"
echo "|---|---:|---:|---:|---:|---:|"
awk -F '\t' -v titles="$(for s in 4.1 4.2 4.3 4.4 4.5 4.6 4.7 4.8 4.9 4.10 4.11 4.12 4.13 4.14 4.15 4.16; do printf '%s=%s;' "$s" "$(section_title "$s")"; done)" '
    BEGIN { n = split(titles, t, ";"); for (i = 1; i < n; i++) { split(t[i], kv, "="); title[kv[1]] = kv[2]; order[i] = kv[1] } }
    { tests[$2]++; if ($4 != "n/a") judged[$2]++; if ($6 == "yes") r[$2]++; if ($8 == "yes") o[$2]++; if ($10 == "yes") c[$2]++
      if ($8 != "-") hasO = 1; if ($10 != "-") hasC = 1 }
    function cell(x, s, has) { return has ? (x[s] + 0) : "-" }
    END {
        for (i = 1; i < n; i++) { s = order[i]; if (!(s in tests)) continue
            policy = (s == "4.8" || s == "4.9" || s == "4.10" || s == "4.11" || s == "4.12")
            note = policy ? " (n/a: policy inputs; file-name outcome)" : ""
            printf "| %s %s%s | %d | %d | %d | %s | %s |\n", s, title[s], note, tests[s], judged[s] + 0, r[s] + 0, cell(o, s, hasO), cell(c, s, hasC)
            T += tests[s]; J += judged[s]; R += r[s]; O += o[s]; C += c[s]
            if (!policy) { T2 += tests[s]; J2 += judged[s]; R2 += r[s]; O2 += o[s]; C2 += c[s] } }
        printf "| all but 4.8-4.12 | %d | %d | %d | %s | %s |\n", T2, J2, R2, hasO ? O2 + 0 : "-", hasC ? C2 + 0 : "-"
        printf "| all | %d | %d | %d | %s | %s |\n", T, J, R, hasO ? O + 0 : "-", hasC ? C + 0 : "-"
    }' "$rows"
echo
echo "rsakit's disagreements with the expected outcome (id, file, expected: rsakit's reason):"
awk -F '\t' '$6 == "no" {
        p = ($2 == "4.8" || $2 == "4.9" || $2 == "4.10" || $2 == "4.11" || $2 == "4.12") ? " [policy section]" : ""
        printf "  %s %s, expected %s, rsakit %s%s: %s\n", $1, $3, $4, $5, p, $11 }' "$rows"
exit 0
