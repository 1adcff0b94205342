#!/usr/bin/env bash
# Regenerates the verification fixtures in Tests/SDFetchUnitTests/Fixtures from Debian tools.
#
# Each fixture is a tiny real file named by the case it covers; the tests assert their
# exact dimensions, so the sizes below are part of the contract. Broken variants
# (truncated, bad CRC, bomb headers) are made inside the tests from these good bytes.
# Encoder output may differ byte for byte between tool versions; dimensions do not.
#
# Needs (Debian 12): imagemagick webp libtiff-tools libjpeg-turbo-progs libheif-examples
# libavif-bin libjxl-tools. /usr/bin/convert is used by full path: a stand-in `convert`
# may sit earlier on PATH.
set -euo pipefail

out="$(cd "$(dirname "$0")/.." && pwd)/Tests/SDFetchUnitTests/Fixtures"
mkdir -p "$out"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
im=/usr/bin/convert

if [[ "${1:-}" == "--install" ]]; then
    apt-get install -y imagemagick webp libtiff-tools libjpeg-turbo-progs libheif-examples libavif-bin libjxl-tools
fi

# PNG: 3x2, 8-bit RGBA, half-transparent red (colour type 6), no ancillary chunks.
"$im" -size 3x2 xc:'rgba(255,0,0,0.5)' -strip -define png:exclude-chunks=all PNG32:"$out/tiny-rgba.png"

# JPEG: a 17x9 gradient (odd sizes exercise partial MCUs), baseline and progressive.
"$im" -size 17x9 gradient:red-blue -strip ppm:"$tmp/gradient.ppm"
cjpeg -quality 80 -baseline "$tmp/gradient.ppm" > "$out/baseline.jpg"
cjpeg -quality 80 -progressive "$tmp/gradient.ppm" > "$out/progressive.jpg"

# JPEG: the baseline re-coded with arithmetic coding (SOF9), and a 64x48 image with a
# restart marker after every MCU (12 MCUs: RST0-RST7, then round again).
jpegtran -arithmetic "$out/baseline.jpg" > "$out/arithmetic.jpg"
python3 -c 'import sys; w, h = 64, 48; sys.stdout.buffer.write(b"P6 %d %d 255\n" % (w, h) + bytes((x * 4, y * 5, (x + y) * 2) [c] for y in range(h) for x in range(w) for c in range(3)))' \
    > "$tmp/restarts.ppm"
cjpeg -quality 80 -restart 1B "$tmp/restarts.ppm" > "$out/restarts.jpg"

# GIF: two 5x4 frames (red, blue), looping animation.
"$im" -delay 10 -size 5x4 xc:red xc:blue -loop 0 "$out/two-frames.gif"

# WebP: the three first-chunk kinds. 7x5 lossy (VP8), 9x3 lossless (VP8L), and 6x4 lossy
# with alpha, which cwebp writes as extended (VP8X).
"$im" -size 7x5 gradient:green-yellow -strip PNG24:"$tmp/webp.png"
cwebp -quiet -q 50 "$tmp/webp.png" -o "$out/tiny.webp"
"$im" -size 9x3 xc:purple -strip PNG24:"$tmp/webp-lossless.png"
cwebp -quiet -lossless "$tmp/webp-lossless.png" -o "$out/tiny-lossless.webp"
"$im" -size 6x4 xc:'rgba(0,0,255,0.5)' -strip PNG32:"$tmp/webp-alpha.png"
cwebp -quiet -q 50 -alpha_q 50 "$tmp/webp-alpha.png" -o "$out/tiny-alpha.webp"

# BMP: 6x3, BITMAPINFOHEADER (BMP3).
"$im" -size 6x3 xc:green -strip BMP3:"$out/tiny.bmp"

# TIFF: 4x7 uncompressed, little-endian ("II") and big-endian ("MM").
"$im" -size 4x7 xc:white -strip -compress none -endian LSB "$out/tiny.tiff"
"$im" -size 4x7 xc:white -strip -compress none -endian MSB "$out/tiny-msb.tiff"

# ICO: one 16x16 image.
"$im" -size 16x16 xc:orange -strip "$out/tiny.ico"

# HEIC, AVIF, JPEG XL: 8x6 each from one PNG.
"$im" -size 8x6 gradient:white-black -strip PNG24:"$tmp/modern.png"
heif-enc -q 30 "$tmp/modern.png" -o "$out/tiny.heic" > /dev/null
avifenc --min 40 --max 50 "$tmp/modern.png" "$out/tiny.avif" > /dev/null
cjxl "$tmp/modern.png" "$out/tiny.jxl" -d 2 --quiet > /dev/null 2>&1
cjxl "$tmp/modern.png" "$out/tiny-container.jxl" -d 2 --container=1 --quiet > /dev/null 2>&1

# SVG: a prolog, a comment and a doctype before the root, 24x12 declared in px.
cat > "$out/tiny.svg" <<'SVG'
<?xml version="1.0" encoding="UTF-8"?>
<!-- tiny.svg: fixture for the SVG text sniff -->
<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">
<svg xmlns="http://www.w3.org/2000/svg" width="24px" height="12" viewBox="0 0 48 24">
  <rect width="48" height="24" fill="teal"/>
</svg>
SVG

# SVG with a UTF-8 BOM and only a viewBox (30x20).
printf '\xef\xbb\xbf<svg viewBox="0 0 30 20" xmlns="http://www.w3.org/2000/svg"><circle r="5"/></svg>\n' \
    > "$out/viewbox.svg"

# PDF: the smallest well-formed one-page document, written by hand.
cat > "$out/tiny.pdf" <<'PDF'
%PDF-1.4
1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj
2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj
3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 72 72] >> endobj
trailer << /Root 1 0 R >>
%%EOF
PDF

# HTML error page that embeds an inline <svg>: must be not-an-image.
cat > "$out/error-page.html" <<'HTML'
<!DOCTYPE html>
<html><head><title>404 Not Found</title></head>
<body><svg width="10" height="10"><rect width="10" height="10"/></svg><h1>Not Found</h1></body>
</html>
HTML

# Browser quirks written byte by byte (a GIF followed by a second GIF, a PNG whose IEND is
# cut short, an APNG declaring 0 frames): see the script for each shape.
python3 "$(dirname "$0")/make-quirk-fixtures.py" "$out"

ls -l "$out"
