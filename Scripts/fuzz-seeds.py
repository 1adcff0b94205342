#!/usr/bin/env python3
"""Writes the fuzzer's extra seeds into DIR: the hostile inputs of DecodeBudgetTests (a PNG
inflate bomb, JPEG scan and memory bombs) and the browser quirks of BrowserQuirkTests, small enough for
fuzz.sh's -max_len. Usage: Scripts/fuzz-seeds.py DIR (standard library only)."""
import struct
import sys
import zlib


def chunk(kind, data, flip=0):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", (zlib.crc32(body) ^ flip) & 0xFFFFFFFF)


def png(width, height, raw, interlace=0, between=b"", after=b""):
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, interlace)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + between
            + chunk(b"IDAT", zlib.compress(b"\0" * raw, 9)) + chunk(b"IEND", b"") + after)


def adam7_bytes(width, height):
    """Filtered data size of an interlaced 8-bit RGB image: the seven passes' rows."""
    total = 0
    for x0, y0, dx, dy in ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)):
        columns, rows = (width - x0 + dx - 1) // dx, (height - y0 + dy - 1) // dy
        if columns > 0 and rows > 0:
            total += rows * (1 + 3 * columns)
    return total


def segment(marker, payload):
    return bytes([0xFF, marker]) + struct.pack(">H", len(payload) + 2) + payload


def jpeg_scan_bomb(width, height, scans, components=1):
    """Progressive, one AC table whose only code (1 bit) is an EOB run of 32767 blocks."""
    out = b"\xff\xd8" + segment(0xDB, b"\0" + b"\1" * 64)
    frame = struct.pack(">BHHB", 8, height, width, components)
    frame += b"".join(bytes([i + 1, 0x11, 0]) for i in range(components))
    out += segment(0xC2, frame) + segment(0xC4, b"\x10\x01" + b"\0" * 15 + b"\xe0")
    blocks = ((width + 7) // 8) * ((height + 7) // 8)
    bits = "".join("0" + "1" * 14 for _ in range((blocks + 32766) // 32767))
    bits += "1" * (-len(bits) % 8)
    data = b""
    for i in range(0, len(bits), 8):
        byte = int(bits[i:i + 8], 2)
        data += bytes([byte]) + (b"\0" if byte == 0xFF else b"")
    for _ in range(scans):
        out += segment(0xDA, b"\x01\x01\x00\x01\x3f\x00") + data
    return out + b"\xff\xd9"


def main(directory):
    seeds = {
        "png-inflate-bomb.png": png(1, 1, 4 << 20),
        "png-interlaced.png": png(13, 11, adam7_bytes(13, 11), interlace=1),
        "png-bad-ancillary-crc.png": png(5, 3, 3 * 16, between=chunk(b"tEXt", b"a\0b", flip=7), after=b"junk"),
        "png-apng-zero-frames.png": png(5, 3, 3 * 16, between=chunk(b"acTL", b"\0" * 8)),
        "jpeg-scan-bomb.jpg": jpeg_scan_bomb(2000, 2000, 300),
        "jpeg-memory-bomb.jpg": jpeg_scan_bomb(2000, 2000, 1, components=10),
    }
    for name, data in seeds.items():
        with open(f"{directory}/{name}", "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main(sys.argv[1])
