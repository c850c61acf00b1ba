#!/usr/bin/env bash
# The tests need Debian's Chromium (browser tests), redis-server and PostgreSQL (scale-out
# and storage tests; Debian keeps PostgreSQL's server programs in /usr/lib/postgresql), and
# podman with runc and debootstrap (container tests: build and run the image; bootstrap
# its base image where no registry is reachable), Java for the W3C Nu HTML checker,
# Dovecot (the IMAP server of the bounce mailbox tests; /usr/sbin, outside PATH) and
# libfaketime (the release-day test moves a running server's clock): install whichever is
# missing as root.
set -euo pipefail
CHROMIUM="${CHROMIUM_PATH:-/usr/bin/chromium}"
export PATH="$PATH:/usr/sbin:/sbin"  # runc and debootstrap live there
missing=()
[[ -x "$CHROMIUM" ]] || missing+=(chromium)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
command -v java >/dev/null 2>&1 || missing+=(default-jre-headless)
[[ -x /usr/sbin/dovecot ]] || missing+=(dovecot-imapd)
compgen -G "/usr/lib/*/faketime/libfaketime.so.1" >/dev/null || missing+=(libfaketime)
for tool in podman runc debootstrap; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
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
