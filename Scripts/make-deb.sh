#!/bin/sh
# Builds sdfetch_VERSION_ARCH.deb in the current directory from what `make install` stages
# under /usr (the binary stripped on install). What Debian policy asks of a binary package,
# and `lintian sdfetch_*.deb` checks:
# - Depends from dpkg-shlibdeps: every shared library the binary links (libcurl, libpng,
#   libjpeg, giflib, libwebp, libavif, hiredis, zlib, and libc, libstdc++, libgcc for the static Swift runtime), at
#   the versions its symbols need, so a library added later cannot be forgotten;
# - Installed-Size from the staged files; folders 0755, files 0644, the binary 0755;
# - /usr/share/doc/sdfetch/copyright from the top-level LICENSE (MIT when there is none yet),
#   a changelog, and the manual page, both compressed with gzip -9n.
#
# Usage: Scripts/make-deb.sh     (or `make deb`)
#   SDFETCH_STAGE=DIR SDFETCH_VERSION=V Scripts/make-deb.sh
#       packages a tree already staged under DIR/usr instead of building one (the tests);
#   DEBFULLNAME, DEBEMAIL name the maintainer, as for Debian's own tools.
set -eu
umask 022
root=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d)
if [ -n "${SDFETCH_STAGE:-}" ]; then
    stage=$SDFETCH_STAGE
    trap 'rm -rf "$scratch"' EXIT
else
    stage=$(mktemp -d)
    trap 'rm -rf "$stage" "$scratch"' EXIT
    make -C "$root" install DESTDIR="$stage" PREFIX=/usr
fi
# mktemp -d makes 0700: the package's root folder would unpack as drwx------.
chmod 0755 "$stage"
version=${SDFETCH_VERSION:-$("$stage/usr/bin/sdfetch" --version | head -n 1 | cut -d ' ' -f 2)}
arch=$(dpkg --print-architecture)
maintainer="${DEBFULLNAME:-sdfetch maintainers} <${DEBEMAIL:-sdfetch@example.org}>"

doc="$stage/usr/share/doc/sdfetch"
install -d "$doc"
gzip -9n "$stage/usr/share/man/man1/sdfetch.1"

# Machine-readable copyright (DEP-5). The license text comes from LICENSE when the tree has
# one; its "Copyright" line names the holders.
{
    echo "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
    echo "Upstream-Name: sdfetch"
    echo
    echo "Files: *"
    holders=""
    if [ -f "$root/LICENSE" ]; then
        holders=$(grep -m 1 -i '^ *copyright' "$root/LICENSE" | sed 's/^ *[Cc]opyright *\((c)\|©\)\? *//') || true
    fi
    echo "Copyright: ${holders:-$(date -u +%Y) sdfetch contributors}"
    if [ ! -f "$root/LICENSE" ] || grep -q 'Permission is hereby granted, free of charge' "$root/LICENSE"; then
        echo "License: MIT"
    else
        echo "License: custom"
    fi
    if [ -f "$root/LICENSE" ]; then
        # The text without its title ("MIT License") and copyright lines, which the fields
        # above carry, and without the blank lines they leave; continuation lines start
        # with a space, an empty line is written " .".
        awk 'NR == 1 && /License$/ { next }
             /^ *[Cc]opyright/ { next }
             /^ *$/ { blank = started; next }
             { if (blank) print ""; blank = 0; started = 1; print }' "$root/LICENSE" | sed 's/^$/./; s/^/ /'
    else
        sed 's/^$/./; s/^/ /' <<'MIT'
Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
MIT
    fi
} > "$doc/copyright"

# A native package's changelog: one entry for this build (the project's history is git's).
{
    echo "sdfetch ($version) unstable; urgency=medium"
    echo
    echo "  * Built from the sdfetch source tree$(git -C "$root" rev-parse --short HEAD 2>/dev/null | sed 's/^/ at /')."
    echo
    echo " -- $maintainer  $(date -R)"
} | gzip -9n > "$doc/changelog.gz"

# dpkg-shlibdeps reads debian/control from the folder it runs in; a minimal one will do. The
# DEBIAN folder first: without it, it cannot tell where the binary's RPATH $ORIGIN points.
install -d "$stage/DEBIAN"
mkdir -p "$scratch/debian"
printf 'Source: sdfetch\n\nPackage: sdfetch\nArchitecture: any\n' > "$scratch/debian/control"
depends=$(cd "$scratch" && dpkg-shlibdeps -O "$stage/usr/bin/sdfetch" | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "make-deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
installed_size=$(du -s -k "$stage/usr" | cut -f 1)

(cd "$stage" && find usr -type f -print0 | sort -z | xargs -0 md5sum) > "$stage/DEBIAN/md5sums"
cat > "$stage/DEBIAN/control" <<CONTROL
Package: sdfetch
Version: $version
Section: web
Priority: optional
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $installed_size
Depends: $depends
Description: batch image fetcher with a verified, de-duplicated disk cache
 Reads lists of image URLs, downloads each unique URL once, verifies the bytes
 are a real image and keeps them in a disk cache, with per-host politeness,
 retries, a failed-URL blacklist and sharding across job runners.
CONTROL
chmod 0644 "$stage/DEBIAN/control" "$stage/DEBIAN/md5sums"
dpkg-deb --root-owner-group --build "$stage" "sdfetch_${version}_${arch}.deb"
