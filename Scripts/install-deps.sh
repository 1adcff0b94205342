#!/usr/bin/env bash
# Installs the Debian packages sdfetch needs to build, test and demo, only when absent.
# Idempotent: a second run installs nothing. Uses sudo when not root.
# Usage: Scripts/install-deps.sh [extra-package ...]
set -euo pipefail

# libssl-dev: libcrypto's headers, for SHA-256 (libcurl4-openssl-dev pulls it in today).
# parallel: the scale-out test runs GNU parallel with several shards on one cache;
# zip, unzip, rsync: the cache portability tests; webp (cwebp, img2webp): the WebP fixtures;
# nginx, redis-server: the TLS tests and the remote cache tests (WebDAV PUT, Redis, on loopback);
# libavif-bin (avifenc): the AVIF fixtures.
packages=(libcurl4-openssl-dev libssl-dev libpng-dev libjpeg62-turbo-dev libgif-dev libwebp-dev libavif-dev zlib1g-dev
    libhiredis-dev pkg-config python3 zip unzip rsync parallel webp libavif-bin nginx redis-server "$@")

missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$package")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all packages present (${packages[*]})"
    exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
    as_root=()
elif command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)
else
    echo "install-deps: need root or sudo to install: ${missing[*]}" >&2
    exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Package lists may be absent on a fresh machine or too old for the pinned versions:
# update once, then retry.
if ! "${as_root[@]}" apt-get install -y --no-install-recommends "${missing[@]}"; then
    echo "install-deps: running apt-get update first"
    "${as_root[@]}" apt-get update
    "${as_root[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi
echo "install-deps: done"
