#!/usr/bin/env python3
"""Writes the fuzz targets' seeds into DIR/TARGET (Scripts/fuzz.sh): for VerifyFuzzer the
hostile inputs of DecodeBudgetTests (a PNG inflate bomb, JPEG scan and memory bombs) and the
browser quirks of BrowserQuirkTests; for the others well-formed files of each on-disk and
input format with the hostile shapes the tests forge (a row of bare delimiters, a wide
header, a forged table header, out-of-range times), each behind the target's mode byte
(Fuzz/*/main.swift); for ResizeFuzzer the image fixtures and small canvas bombs (as
CanvasBombs in SDFetchTestSupport builds them), for ResponseHeadFuzzer response heads with
every field it reads. All small enough for fuzz.sh's -max_len.
Usage: Scripts/fuzz-seeds.py DIR (standard library only)."""
import gzip
import os
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


def image_seeds():
    return {
        "png-inflate-bomb.png": png(1, 1, 4 << 20),
        "png-interlaced.png": png(13, 11, adam7_bytes(13, 11), interlace=1),
        "png-bad-ancillary-crc.png": png(5, 3, 3 * 16, between=chunk(b"tEXt", b"a\0b", flip=7), after=b"junk"),
        "png-apng-zero-frames.png": png(5, 3, 3 * 16, between=chunk(b"acTL", b"\0" * 8)),
        "jpeg-scan-bomb.jpg": jpeg_scan_bomb(2000, 2000, 300),
        "jpeg-memory-bomb.jpg": jpeg_scan_bomb(2000, 2000, 1, components=10),
    }


def fnv1a64(data):
    value = 0xCBF29CE484222325
    for byte in data:
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return value


def index_line(payload):
    """One index line, both newlines included (IndexRecord: LF CHECK SP PAYLOAD LF)."""
    return b"\n" + b"%016x" % fnv1a64(payload) + b" " + payload + b"\n"


def put(digest, url, stored=1_700_000_000 * 10**9, used=None, size=68, width=b"4", height=b"4"):
    fields = [b"P", digest, b"1", str(stored).encode(), str(used or stored).encode(), str(size).encode(),
              b"png", width, height, b"ab" * 32, b"\"v1\"", b"Wed, 21 Oct 2015 07:28:00 GMT", url]
    return b"\t".join(fields)


def use(digest, used):
    return b"\t".join([b"U", digest, str(used).encode()])


def table(items):
    """A bucket file with a table (IndexTable.file): items are (digest hex, payload, used)."""
    items = sorted(items)
    blocks = (len(items) + 7) // 8
    lines_start = 32 + 24 * blocks
    end = lines_start + 64 * blocks + sum(len(payload) + 19 + 2 for _, payload, _ in items)
    out = b"sdfetch-table-3\n" + struct.pack(">qq", len(items), end)
    offset = lines_start
    for index, (digest, payload, _) in enumerate(items):
        if index % 8 == 0:
            out += bytes.fromhex(digest.decode()) + struct.pack(">q", offset)
            offset += 64
        offset += len(payload) + 19 + 2
    for start in range(0, len(items), 8):
        block = items[start:start + 8]
        out += b"".join(struct.pack(">q", block[i][2] if i < len(block) else 0) for i in range(8))
        out += b"".join(index_line(payload) for _, payload, _ in block)
    return out


def line_table(items):
    """The same in the layout compaction writes now (sdfetch-table-4): 16 lines a fence
    row with each line's length and digest tag, each line after its use slot."""
    items = sorted(items)
    rows = (len(items) + 15) // 16
    lines_start = 32 + 72 * rows
    lines = [index_line(payload) for _, payload, _ in items]
    end = lines_start + sum(8 + len(line) for line in lines)
    out = b"sdfetch-table-4\n" + struct.pack(">qq", len(items), end)
    offset = lines_start
    for start in range(0, len(items), 16):
        row = list(zip(items[start:start + 16], lines[start:start + 16]))
        out += bytes.fromhex(row[0][0][0].decode()) + struct.pack(">q", offset)
        lengths = [len(line) - 2 for _, line in row] + [0] * (16 - len(row))
        out += b"".join(struct.pack(">H", length) for length in lengths)
        out += bytes(bytes.fromhex(item[0].decode())[-1] for item, _ in row) + b"\0" * (16 - len(row))
        offset += sum(8 + len(line) for _, line in row)
    for (_, _, used), line in zip(items, lines):
        out += struct.pack(">q", used) + line
    return out


def index_seeds():
    digests = [b"%032x" % (i * 0x0123456789ABCDEF0123 + 7) for i in range(12)]
    log = b"".join(index_line(put(d, b"http://h/%d.png" % i)) for i, d in enumerate(digests[:4]))
    log += index_line(use(digests[0], 1_800_000_000 * 10**9)) + b"\n0123 torn"
    tabled = table([(d, put(d, b"http://h/t%d.png" % i), 1_750_000_000 * 10**9) for i, d in enumerate(digests)])
    lined = line_table([(d, put(d, b"http://h/l%d.png" % i), 1_750_000_000 * 10**9) for i, d in enumerate(digests)])
    forged = b"sdfetch-table-3\n" + struct.pack(">qq", 1 << 40, 1 << 45) + b"\0" * 48
    far = index_line(put(digests[5], b"http://h/far.png", stored=2**63 - 1, used=-(2**63)))
    return {
        "log": b"\0" + log,
        "log-fix-checks": b"\1" + log.replace(b"P\t", b"P\t", 1),
        "table-and-tail": b"\0" + tabled + log,
        "table-large-held": b"\6" + tabled + log,
        "lines-table-and-tail": b"\0" + lined + log,
        "lines-table-large-held": b"\6" + lined + log,
        "lines-forged-header": b"\2" + b"sdfetch-table-4\n" + forged[16:],
        "forged-header": b"\2" + forged,
        "times-out-of-range": b"\1" + far,
    }


def failure_record(url, nanoseconds, kind, detail):
    return b"\n".join([b"sdfetch-failure 1", url, nanoseconds, kind, detail, b"end", b""])


def failure_seeds():
    return {
        "http-404": failure_record(b"http://h/a.png", b"1700000000000000000", b"http-404", b"server answered 404"),
        "opted-out": failure_record(b"http://u:***@h/b.png", b"1700000000123456789", b"opted-out", b"noai"),
        "time-max": failure_record(b"http://h/c.png", b"9223372036854775807", b"not-an-image", b"x"),
        "time-min": failure_record(b"http://h/c.png", b"-9223372036854775808", b"corrupt-image", b""),
        # hosts/ records share the layout: the fuzzer reads every input as both.
        "host-timeout": b"\n".join([b"sdfetch-host-down 2", b"https://h:8443", b"1700000000000000000", b"timeout",
                                     b"no answer within the timeout after connecting (no data for 1 s)", b"end", b""]),
        "host-dns": b"\n".join([b"sdfetch-host-down 2", b"http://[::1]", b"1700000000000000000", b"dns",
                                 b"its name does not resolve (x)", b"end", b""]),
    }


def format_seeds():
    return {
        "current": b"\0sdfetch cache format 4\nsee README.md\n",
        "previous": b"\0sdfetch cache format 3\n",
        "future": b"\0sdfetch cache format 99\n",
        "garbage": b"\0\xff\xfe\x00format",
        "missing-with-entries": b"\1",
    }


def table_seeds():
    csv = (b"\xef\xbb\xbfsku,url,caption,sha256\r\nA1,http://h/a.png,\"red, \"\"large\"\"\r\nline\",\r\n\r\n"
           b"B2, http://h/b.png ,plain," + b"0" * 64 + b"\nC3,http://h/c.png,\"never closed\n")
    tsv = b"caption\turl\tlabel\n\"12\" vinyl\thttp://h/a.png\t1\nnone\thttp://h/b.png\t2\nshort\n"
    jsonl = (b'{"url": "http://h/a.png", "id": 7, "tags": ["x", {"y": null}], "c": "caf\\u00e9 \\ud83d\\ude00"}\n'
             b'{"id": 8}\n[1]\n{"url":"http://h/b.png","a":1,"a":-1.5e3,"sha256":"' + b"F" * 64 + b'"}\n')
    lines = b"\xef\xbb\xbf# comment\r\nhttp://h/a.png\r\n   \n\thttp://h/b%ff.png  \n"
    # Mode byte: bits 0-1 format (lines, csv, tsv, jsonl), 2-3 transport, 4-7 log2 of the chunk.
    def mode(fmt, transport=0, chunk=15):
        return bytes([fmt | transport << 2 | chunk << 4])
    return {
        "csv": mode(1) + csv,
        "csv-1-byte-chunks": mode(1, chunk=0) + csv,
        "csv-gzip": mode(1, transport=1) + gzip.compress(csv, mtime=0),
        "csv-gzipped-here": mode(1, transport=2, chunk=6) + csv,
        "csv-commas": mode(1, transport=1) + gzip.compress(b"url,caption\nhttp://h/a.png" + b"," * 300_000 + b"\n", mtime=0),
        "csv-wide-header": mode(1) + b"url" + b"".join(b",c%d" % i for i in range(5000)) + b"\nhttp://h/a.png\n",
        "tsv": mode(2) + tsv,
        "tsv-gzip": mode(2, transport=1) + gzip.compress(tsv, mtime=0),
        "jsonl": mode(3) + jsonl,
        "jsonl-members": mode(3) + b'{"url":"http://h/a.png"' + b"".join(b',"m%d":%d' % (i, i) for i in range(5000)) + b"}\n",
        "jsonl-deep": mode(3) + b'{"url":"http://h/a.png","d":' + b"[" * 70 + b"]" * 70 + b"}\n",
        "lines": mode(0) + lines,
        "lines-gzip": mode(0, transport=1) + gzip.compress(lines, mtime=0),
    }


def config_seeds():
    config = (b"# sdfetch config\n\ufeffmax-age = 7d\n--retries = 3\nheader = \"X-Token: abc\"\njson\n"
              b"json = false\nper-host = 8\nmax-size = 10G\nproxy = http://u:p@127.0.0.1:3128\n")
    config = config.replace(b"\\ufeff", "\ufeff".encode())
    arguments = [b"-j", b"32", b"--max-bytes", b"50M", b"--timeout", b"2.5", b"--shard", b"3/8", b"--input-format",
                 b"csv", b"--url-column", b"link", b"--name", b"{host}/{path}", b"list.csv"]
    return {
        "config": b"\0" + config,
        "config-bad-line": b"\0" + b"max-age 7d\nunknown-option = 1\n",
        # Not UTF-8: Foundation's String(contentsOfFile:) leaked its buffer on such a file.
        "config-not-utf8": b"\0" + b"json\n\xff\xfe = 1\n",
        "arguments": b"\1" + b"\0".join(arguments),
        "clean-arguments": b"\1" + b"\0".join([b"clean", b"--max-age", b"30d", b"--max-size", b"1G", b"--dry-run"]),
    }


def url_seeds():
    urls = [b"http://h/a.png", b"HTTPS://User:Secret@Example.COM:443/p/../a b.png?q=%ff#frag",
            b"http://[::1]:8080/x\\y?src=http://u:ONE@origin/a.png", b"http://h/\xe7\x94\xbb\xff.png",
            b"https://xn--bcher-kva.example/%2e%2e/", b"http://1.2.3.4:0/", b"http://h:99999/", b"ftp://h/a"]
    return {"url-%d" % i: url for i, url in enumerate(urls)}


def gif_canvas(width, height):
    """A GIF89a screen of width x height around one 1x1 frame (CanvasBombs.gif)."""
    return (b"GIF89a" + struct.pack("<HH", width, height) + b"\x80\0\0" + b"\0\0\0\xff\xff\xff"
            + b"\x21\xf9\x04\0\0\0\0\0" + b"\x2c\0\0\0\0\x01\0\x01\0\0" + b"\x02\x02\x4c\x01\0\x3b")


def webp_chunk(tag, data):
    return tag + struct.pack("<I", len(data)) + data + (b"\0" if len(data) % 2 else b"")


def riff(chunks):
    body = b"WEBP" + b"".join(chunks)
    return b"RIFF" + struct.pack("<I", len(body)) + body


def one_colour_vp8l(width, height):
    """Lossless, five one-symbol prefix codes: no pixel costs a bit (CanvasBombs)."""
    bits = [(0x2F, 8), (width - 1, 14), (height - 1, 14), (0, 1), (0, 3), (0, 1), (0, 1), (0, 1)]
    for symbol in (0, 255, 0, 255, 0):
        bits += [(1, 1), (0, 1), (0, 1), (symbol, 1)] if symbol < 2 else [(1, 1), (0, 1), (1, 1), (symbol, 8)]
    value = sum(v << shift for (v, _), shift in zip(bits, [sum(c for _, c in bits[:i]) for i in range(len(bits))]))
    return value.to_bytes((sum(c for _, c in bits) + 7) // 8, "little")


def animated_webp(width, height, frame=(1, 1), offset=(0, 0)):
    u24 = lambda v: struct.pack("<I", v)[:3]
    vp8x = b"\x02\0\0\0" + u24(width - 1) + u24(height - 1)
    anmf = (u24(offset[0] // 2) + u24(offset[1] // 2) + u24(frame[0] - 1) + u24(frame[1] - 1) + u24(100) + b"\0"
            + webp_chunk(b"VP8L", one_colour_vp8l(*frame)))
    return riff([webp_chunk(b"VP8X", vp8x), webp_chunk(b"ANIM", bytes(6)), webp_chunk(b"ANMF", anmf)])


def resize_seeds():
    """The fixtures and canvas bombs behind ResizeFuzzer's three parameter bytes: mode and
    format, size - 1, quality (Fuzz/ResizeFuzzer/main.swift)."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    images = {"gif-canvas": gif_canvas(1000, 1000), "webp-canvas": animated_webp(1000, 1000, (3, 5), (10, 20)),
              "webp-lossless": riff([webp_chunk(b"VP8L", one_colour_vp8l(1000, 700))])}
    for folder in ("Tests/sdfetchTests/Fixtures", "Tests/SDFetchUnitTests/Fixtures"):
        for name in sorted(os.listdir(os.path.join(root, folder))):
            if name.rsplit(".", 1)[-1] in ("jpg", "png", "gif", "webp"):
                with open(os.path.join(root, folder, name), "rb") as f:
                    images[name] = f.read()
    seeds = {}
    for name, image in images.items():
        for parameters in (b"\x00\x3f\x50", b"\x08\x1f\x10", b"\x04\x07\x60"):  # longer/jpeg, crop/webp, none/png
            seeds[f"{name}-{parameters[0]}"] = parameters + image
    return seeds


def response_head_seeds():
    heads = {
        "ok": b"HTTP/1.1 200 OK\r\nContent-Length: 68\r\nETag: \"a\"\r\nLast-Modified: Tue, 15 Nov 1994 08:12:31 GMT\r\n"
              b"Content-Digest: sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:, md5=:x:\r\n\r\n",
        "redirect-then-ok": b"HTTP/1.1 301 Moved\r\nLocation: /b\r\nContent-Encoding: zstd\r\n\r\n"
                            b"HTTP/2 200\r\nrepr-digest: sha-256=:AAAA:\r\nx-robots-tag: otherbot: noai, noimageai\r\n\r\n",
        "retry": b"HTTP/1.1 429 Too Many\r\nRetry-After: 120\r\n\r\nHTTP/1.1 503 Busy\r\n"
                 b"Retry-After: Wed, 21 Oct 2015 07:28:00 GMT\r\n\r\n",
        "codings": b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip, br\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
        "transfer-zstd": b"HTTP/1.1 200 OK\r\ntransfer-encoding: zstd , Chunked\r\n\r\n",
        "chunked": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Robots-Tag: noai\r\n\r\n",
    }
    return heads
def counters_seeds():
    def usage(inode, length, entries, total, oldest=1, stored_from=0, stored_to=0):
        fields = [inode, length, entries, total, oldest, stored_from, stored_to]
        return b"sdfetch-usage 2\n" + b"".join(b"%d\n" % f for f in fields) + b"end\n"
    real = usage(1234, 4096, 3, 9000, 1_700_000_000_000_000_000, 1_700_000_000_000_000_000, 1_700_000_100_000_000_000)
    return {
        "one": b"\0" + real,
        "several": b"\0" + b"\0".join([real, usage(7, 300, 1, 1 << 35), usage(0, 0, 0, 0)]),
        # A forged petabyte for a bucket with no entries, and the largest claims in every bucket.
        "forged-empty": b"\1" + usage(0, 0, 0, 1 << 50),
        "forged-every-bucket": b"\1" + usage(9, 1 << 40, 1 << 24, 1 << 59),
    }


def key_query_seeds():
    return {
        "signed-s3": b"X-Amz-*\nExpires\0https://b.s3.amazonaws.com/a.png?X-Amz-Signature=ab&x-amz-date=1&v=2",
        "cloudfront": b"Signature\nKey-Pair-Id\nPolicy\0https://d.cloudfront.net/a.png?Policy=p&Signature=s&Key-Pair-Id=k",
        "classes": b"[a-c]?\n*\0http://h/a.png?ab=1&&=2&b&zz=3#f",
        "password": b"sig\0http://u:secret@h/a.png?sig=1&keep=%41",
    }


def exif_seeds():
    """A selector byte (0 JPEG, 1 WebP, 2 PNG; Fuzz/ExifFuzzer/main.swift), then a file whose
    EXIF says orientation 6, in each container and in both byte orders."""
    def tiff(little, orientation=6):
        order = "<" if little else ">"
        head = (b"II" if little else b"MM") + struct.pack(order + "HI", 42, 8)
        return head + struct.pack(order + "H", 1) + struct.pack(order + "HHII", 0x0112, 3, 1, orientation << (0 if little else 16)) + b"\0" * 4
    def jpeg(payload):
        exif = b"Exif\0\0" + payload
        return b"\xff\xd8\xff\xe1" + struct.pack(">H", len(exif) + 2) + exif + b"\xff\xda\0\x02\xff\xd9"
    def webp(payload):
        body = b"WEBP" + b"EXIF" + struct.pack("<I", len(payload)) + payload + (b"\0" if len(payload) % 2 else b"")
        return b"RIFF" + struct.pack("<I", len(body)) + body
    png_file = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 3, 2, 8, 2, 0, 0, 0)) + chunk(b"eXIf", tiff(False)) + chunk(b"IEND", b"")
    return {
        "jpeg-little": b"\0" + jpeg(tiff(True)),
        "jpeg-big": b"\0" + jpeg(tiff(False, 8)),
        "webp": b"\1" + webp(tiff(True, 5)),
        "png": b"\2" + png_file,
    }


def main(directory):
    targets = {
        "VerifyFuzzer": image_seeds(),
        "IndexFuzzer": index_seeds(),
        "FailureRecordFuzzer": failure_seeds(),
        "CacheFormatFuzzer": format_seeds(),
        "TableInputFuzzer": table_seeds(),
        "ConfigFuzzer": config_seeds(),
        "URLFuzzer": url_seeds(),
        "ResizeFuzzer": resize_seeds(),
        "ResponseHeadFuzzer": response_head_seeds(),
        "CacheCountersFuzzer": counters_seeds(),
        "KeyQueryFilterFuzzer": key_query_seeds(),
        "ExifFuzzer": exif_seeds(),
    }
    for target, seeds in targets.items():
        os.makedirs(f"{directory}/{target}", exist_ok=True)
        for name, data in seeds.items():
            with open(f"{directory}/{target}/seed-{name}", "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main(sys.argv[1])
