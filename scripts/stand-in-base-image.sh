#!/usr/bin/env bash
# Make the Dockerfile's base image, python:3.11-slim, available to podman on a machine
# that reaches no container registry: bootstrap an equivalent Debian bookworm with
# Python 3.11 from the apt mirror this machine already uses, and import it under the
# official name. Runs only when the image is missing (it takes a few minutes).
#
# Where outbound HTTPS is re-signed by a local CA that the host trusts (the bundle
# PIP_CERT names), the bundle goes into the stand-in and SSL_CERT_FILE, PIP_CERT and
# NODE_EXTRA_CA_CERTS point to it, so pip and npm work inside `podman build`. That is
# a property of this machine, so it lives in the stand-in, never in the Dockerfile.
set -euo pipefail

IMAGE="${BASE_IMAGE:-docker.io/library/python:3.11-slim}"
SUITE="${BASE_SUITE:-bookworm}"

if podman image exists "$IMAGE"; then
  exit 0
fi
if [[ "$(id -u)" -ne 0 ]]; then
  echo "The container tests need $IMAGE, and building its stand-in (debootstrap) needs root." >&2
  exit 1
fi

# The Debian mirror apt is configured with (never a hard-coded host).
MIRROR="$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' \
  | awk -v suite="$SUITE" '$2 == suite && $1 !~ /security/ {print $1; exit}')"
if [[ -z "$MIRROR" ]]; then
  echo "No apt source for Debian $SUITE is configured; cannot bootstrap $IMAGE." >&2
  exit 1
fi

ROOTFS="$(mktemp -d /var/tmp/stand-in-rootfs.XXXXXX)"
trap 'rm -rf "$ROOTFS"' EXIT
echo "Bootstrapping a stand-in for $IMAGE (Debian $SUITE with Python 3) from $MIRROR"
debootstrap --variant=minbase --include=python3,python3-venv,python3-pip,ca-certificates \
  "$SUITE" "$ROOTFS" "$MIRROR" >"$ROOTFS.log" 2>&1 || {
  tail -n 40 "$ROOTFS.log" >&2
  exit 1
}
rm -f "$ROOTFS.log"
ln -sf /usr/bin/python3 "$ROOTFS/usr/local/bin/python"
rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/*

changes=(--change 'CMD ["python3"]' --change 'ENV LANG=C.UTF-8')
HOST_CA="${PIP_CERT:-}"
if [[ -n "$HOST_CA" && -f "$HOST_CA" ]]; then
  install -D -m 0644 "$HOST_CA" "$ROOTFS/usr/local/share/host-ca/ca-bundle.crt"
  bundle=/usr/local/share/host-ca/ca-bundle.crt
  changes+=(--change "ENV SSL_CERT_FILE=$bundle" --change "ENV PIP_CERT=$bundle"
            --change "ENV NODE_EXTRA_CA_CERTS=$bundle")
fi
tar -C "$ROOTFS" -c . | podman import --quiet "${changes[@]}" - "$IMAGE" >/dev/null
echo "Imported $IMAGE"
