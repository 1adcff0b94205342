#!/bin/sh
# Builds sdfetch_VERSION_ARCH.deb in the current directory from `make install` staged under
# /usr. The binary carries the Swift runtime (--static-swift-stdlib), so Depends names only
# the C libraries it links: libcurl4, libpng16-16, libjpeg62-turbo, libgif7 (and libc6,
# libstdc++6, libgcc-s1, which the static Swift runtime needs).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
make -C "$root" install DESTDIR="$stage" PREFIX=/usr
version=$("$stage/usr/bin/sdfetch" --version | head -n 1 | cut -d ' ' -f 2)
arch=$(dpkg --print-architecture)
mkdir -p "$stage/DEBIAN"
cat > "$stage/DEBIAN/control" <<CONTROL
Package: sdfetch
Version: $version
Section: web
Priority: optional
Architecture: $arch
Maintainer: sdfetch maintainers <sdfetch@localhost>
Depends: libc6, libstdc++6, libgcc-s1, libcurl4, libpng16-16, libjpeg62-turbo, libgif7
Description: batch image fetcher with a verified, de-duplicated disk cache
 Reads lists of image URLs, downloads each unique URL once, verifies the bytes
 are a real image and keeps them in a disk cache, with per-host politeness,
 retries, a failed-URL blacklist and sharding across job runners.
CONTROL
dpkg-deb --root-owner-group --build "$stage" "sdfetch_${version}_${arch}.deb"
