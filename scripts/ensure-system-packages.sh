#!/usr/bin/env bash
# The tests need Debian's Chromium (browser tests) and redis-server (scale-out tests):
# install whichever is missing when we are root.
set -euo pipefail
CHROMIUM="${CHROMIUM_PATH:-/usr/bin/chromium}"
missing=()
[[ -x "$CHROMIUM" ]] || missing+=(chromium)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi
if [[ "$(id -u)" -eq 0 ]]; then
  echo "Installing missing Debian packages: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
  exit 0
fi
echo "Missing ${missing[*]} and this user cannot install them. Run:" >&2
echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
exit 1
