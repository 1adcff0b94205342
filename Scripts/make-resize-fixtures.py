#!/usr/bin/env python3
"""Regenerates the resize and WebP fixtures in Tests/sdfetchTests/Fixtures.

The tests decode sdfetch's resized copies and look at real pixels, so the pictures are
simple on purpose: vertical bands (columns 0-99 red, 100-299 green, 300-399 blue) on a
400x200 canvas, whose every mode has a known answer (a centre crop is all green), and a
quadrant (the top-left 150x100 of 300x200 red, the rest blue) stored with EXIF
orientation 6, upright only when turned. Broken variants (truncated, corrupt) are made in
the tests from these good bytes.

Needs Pillow with WebP (pip install pillow; its wheels bundle libwebp), img2webp
(Debian's webp) for the animation and avifenc (Debian's libavif-bin) for the AVIF files:
the bands, the bands with alpha, and the quadrant stored with an `irot` of three quarter
turns anticlockwise (Exif 6's turn, so it shows as quadrant-exif6.jpg does). Usage: Scripts/make-resize-fixtures.py
"""
import os
import struct
import subprocess
import sys
import tempfile

from PIL import Image

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "sdfetchTests", "Fixtures")
RED, GREEN, BLUE = (255, 0, 0), (0, 255, 0), (0, 0, 255)


def bands(mode="RGB", transparent_right=False):
    image = Image.new(mode, (400, 200))
    for x in range(400):
        colour = RED if x < 100 else GREEN if x < 300 else BLUE
        alpha = 0 if transparent_right and x >= 300 else 255
        for y in range(200):
            image.putpixel((x, y), colour + ((alpha,) if mode == "RGBA" else ()))
    return image


def exif_orientation(value):
    """An APP1 Exif payload: a little-endian TIFF header and IFD0 holding tag 0x0112."""
    tiff = b"II*\x00" + struct.pack("<I", 8) + struct.pack("<H", 1)
    tiff += struct.pack("<HHIHH", 0x0112, 3, 1, value, 0) + struct.pack("<I", 0)
    return b"Exif\x00\x00" + tiff


def main():
    os.makedirs(OUT, exist_ok=True)
    image = bands()
    image.save(os.path.join(OUT, "bands.jpg"), quality=95, subsampling=0)
    image.save(os.path.join(OUT, "bands.webp"), quality=90)
    image.save(os.path.join(OUT, "bands-lossless.webp"), lossless=True)
    bands("RGBA", transparent_right=True).save(os.path.join(OUT, "bands-alpha.png"))
    bands("RGBA", transparent_right=True).save(os.path.join(OUT, "bands-alpha.webp"), quality=90)

    # GIF: the bands, then an all-black second frame the copy must not show.
    black = Image.new("RGB", (400, 200))
    image.save(os.path.join(OUT, "bands.gif"), save_all=True, append_images=[black], duration=100, loop=0)

    quadrant = Image.new("RGB", (300, 200), BLUE)
    quadrant.paste(RED, (0, 0, 150, 100))
    quadrant.save(os.path.join(OUT, "quadrant-exif6.jpg"), quality=95, exif=exif_orientation(6))

    # A photo-sized JPEG (smooth, so small) for shrink-on-load: 23 MB of RGB at full scale.
    gradient = Image.linear_gradient("L").resize((3200, 2400)).convert("RGB")
    gradient.save(os.path.join(OUT, "large-gradient.jpg"), quality=30)

    # Animated WebP, two 400x200 frames, made with img2webp from Debian's webp.
    with tempfile.TemporaryDirectory() as scratch:
        first, second = os.path.join(scratch, "1.png"), os.path.join(scratch, "2.png")
        image.save(first)
        black.save(second)
        subprocess.run(
            ["img2webp", "-loop", "0", "-lossy", "-q", "80", "-d", "100", first, second, "-o",
             os.path.join(OUT, "animated.webp")], check=True, stdout=subprocess.DEVNULL)
        for name, picture, extra in [("bands", image, []), ("bands-alpha", bands("RGBA", transparent_right=True), []),
                                     ("quadrant-irot3", quadrant, ["--irot", "3"])]:
            source = os.path.join(scratch, name + ".png")
            picture.save(source)
            subprocess.run(
                ["avifenc", "-s", "8", "--min", "8", "--max", "16", "-y", "444"] + extra + [source, os.path.join(OUT, name + ".avif")],
                check=True, stdout=subprocess.DEVNULL)
    for name in sorted(os.listdir(OUT)):
        print(f"{os.path.getsize(os.path.join(OUT, name)):8d}  {name}")


if __name__ == "__main__":
    sys.exit(main())
