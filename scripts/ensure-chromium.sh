#!/usr/bin/env bash
# The browser tests drive Debian's Chromium; install it when missing and we are root.
set -euo pipefail
CHROMIUM="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [[ -x "$CHROMIUM" ]]; then
  exit 0
fi
if [[ "$(id -u)" -eq 0 ]]; then
  echo "Chromium is missing: installing Debian's chromium package..."
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium
  exit 0
fi
echo "Chromium is missing at $CHROMIUM and this user cannot install it. Run:" >&2
echo "  sudo apt-get update && sudo apt-get install -y chromium" >&2
exit 1
