#!/usr/bin/env python3
"""Writes the browser-quirk fixtures of Tests/SDFetchUnitTests/Fixtures, byte by byte.

Each file is a shape browsers display and a strict checker might refuse; the tests assert
that every verification level accepts it with the size below. Only the standard library
is used (struct, zlib), so the bytes are the same on every machine:

  gif-then-second-gif.gif  4x4 GIF89a with a transparent colour; right after its image's
                           data, instead of a trailer, a whole second GIF (screen 6x6, a
                           6x6 frame at 2,2 reaching past it). Browsers stop at the byte
                           that starts no block ('G') and show the first image.
  png-end-cut-short.png    6x4 RGB PNG whose image data is complete and whose IEND chunk
                           is cut after 6 of its 12 bytes.
  apng-zero-frames.png     5x3 RGBA PNG with an acTL declaring 0 frames before its IDAT:
                           no animation, shown as the still image.

Run from anywhere: python3 Scripts/make-quirk-fixtures.py [OUTPUT-DIR]
(Scripts/make-fixtures.sh runs it for the whole fixture set.)
"""
import struct
import sys
import zlib
from pathlib import Path


# MARK: - GIF (GIF89a specification, sections 17-27)

def lzw_single_colour(pixels, index):
    """LZW data (minimum code size 2) drawing `pixels` pixels of colour `index`.

    A clear code before every pixel keeps the dictionary empty and every code 3 bits wide:
    larger than real encoders write, and as valid for every decoder.
    """
    clear, end = 4, 5
    codes = [c for _ in range(pixels) for c in (clear, index)] + [end]
    bits, count, out = 0, 0, bytearray()
    for code in codes:  # least significant bit first
        bits |= code << count
        count += 3
        while count >= 8:
            out.append(bits & 0xFF)
            bits >>= 8
            count -= 8
    if count:
        out.append(bits & 0xFF)
    return bytes(out)


def sub_blocks(data):
    """Data sub-blocks of at most 255 bytes, then the block terminator."""
    return b"".join(bytes([len(data[i:i + 255])]) + data[i:i + 255] for i in range(0, len(data), 255)) + b"\x00"


def gif_image(left, top, width, height, colour):
    """Graphic control extension (colour 1 transparent), image descriptor and data."""
    control = b"\x21\xF9\x04\x01\x00\x00\x01\x00"
    descriptor = b"\x2C" + struct.pack("<HHHH", left, top, width, height) + b"\x00"
    return control + descriptor + b"\x02" + sub_blocks(lzw_single_colour(width * height, colour))


def gif_head(width, height):
    """Signature, logical screen with a two-colour global table (red, black)."""
    return b"GIF89a" + struct.pack("<HH", width, height) + b"\x80\x00\x00" + b"\xFF\x00\x00" + b"\x00\x00\x00"


def gif_then_second_gif():
    first = gif_head(4, 4) + gif_image(0, 0, 4, 4, 0)
    second = gif_head(6, 6) + gif_image(2, 2, 6, 6, 0) + b"\x3B"
    return first + second


# MARK: - PNG (PNG specification, sections 5 and 11; APNG specification for acTL)

def chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def png(width, height, colour_type, channels, before_data=b""):
    """An 8-bit PNG of black pixels: each row a filter byte 0 and zero samples."""
    header = struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0)
    rows = b"".join(b"\x00" + bytes(width * channels) for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + before_data
            + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))


def png_end_cut_short():
    return png(6, 4, colour_type=2, channels=3)[:-6]


def apng_zero_frames():
    control = chunk(b"acTL", struct.pack(">II", 0, 0))  # num_frames 0, num_plays 0
    return png(5, 3, colour_type=6, channels=4, before_data=control)


def main():
    default = Path(__file__).resolve().parent.parent / "Tests/SDFetchUnitTests/Fixtures"
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else default
    out.mkdir(parents=True, exist_ok=True)
    for name, data in [
        ("gif-then-second-gif.gif", gif_then_second_gif()),
        ("png-end-cut-short.png", png_end_cut_short()),
        ("apng-zero-frames.png", apng_zero_frames()),
    ]:
        (out / name).write_bytes(data)


if __name__ == "__main__":
    main()
