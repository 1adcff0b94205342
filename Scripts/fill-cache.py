#!/usr/bin/env python3
"""Fills an sdfetch cache directory with N synthetic entries, for measuring warm runs and
`clean` (SPEC "Performance"). Writes the on-disk format documented in
Sources/SDFetchCore/Cache/DiskCache.swift and CacheEntry.swift directly, so 100,000 entries
take seconds instead of a real fetch run:

  entries/ab/<digest>   body (a 1x1 PNG), mtime = access time (LRU), extended attributes
                        user.sdfetch.entry  = the 31-byte binary summary (EntrySummary.swift)
                        user.sdfetch.origin = "sdfetch-origin 1" line record (URL, ETag, Last-Modified)

<digest> is the first 16 bytes of SHA-256 over the URL's key text, in hex; `ab` its first
byte. URLs are http://127.0.0.1:9/bench/N.png (port 9, "discard": nothing answers, so a
request sent by mistake shows up as a `connect` failure instead of a hit).

usage: fill-cache.py DIR COUNT [--list FILE] [--expired FRACTION] [--port P]
"""
import argparse, hashlib, os, struct, time, zlib


def png_1x1(seed):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = bytes([0, seed & 0xFF, 0, 0, 255])
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dir")
    parser.add_argument("count", type=int)
    parser.add_argument("--list", help="also write the URLs, one a line, to this file")
    parser.add_argument("--expired", type=float, default=0.0, help="fraction stored 30 days ago")
    parser.add_argument("--port", type=int, default=9)
    args = parser.parse_args()

    for sub in ("entries", "tmp", "failed", "locks"):
        os.makedirs(os.path.join(args.dir, sub), exist_ok=True)
    now = time.time_ns()
    body = png_1x1(7)
    urls = []
    made_shards = set()
    expired_every = int(1 / args.expired) if args.expired > 0 else 0
    for index in range(args.count):
        url = f"http://127.0.0.1:{args.port}/bench/{index}.png"
        urls.append(url)
        digest = hashlib.sha256(url.encode()).digest()[:16].hex()
        shard = os.path.join(args.dir, "entries", digest[:2])
        if shard not in made_shards:
            os.makedirs(shard, exist_ok=True)
            made_shards.add(shard)
        stored = now - 30 * 86400 * 10**9 if expired_every and index % expired_every == 0 else now - index * 10**6
        accessed = stored + 1000
        origin = f"sdfetch-origin 1\n{url}\n\"e{index}\"\n\nend\n".encode()
        summary = struct.pack("<B4sqqIIH", 1, b"png", stored, len(body), 1, 1, len(origin))
        body_path = os.path.join(shard, digest)
        with open(body_path, "wb") as f:
            f.write(body)
            os.setxattr(f.fileno(), "user.sdfetch.entry", summary)
            os.setxattr(f.fileno(), "user.sdfetch.origin", origin)
        os.utime(body_path, ns=(accessed, accessed))
    if args.list:
        with open(args.list, "w") as f:
            f.write("\n".join(urls) + "\n")


if __name__ == "__main__":
    main()
