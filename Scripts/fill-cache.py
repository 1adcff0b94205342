#!/usr/bin/env python3
"""Fills an sdfetch cache directory with N synthetic entries, for measuring warm runs and
`clean` (Scripts/bench.d/RESULTS.md). Writes on-disk format 2 (SDFetchCore.docc, OnDiskFormat) directly, so
100,000 entries take seconds instead of a real fetch run:

  FORMAT                "sdfetch cache format 2"
  entries/ab/<digest>   the image bytes (a 1x1 PNG), mtime = the stamp (whole seconds)
  index/ab              one put line per entry: LF, FNV-1a-64 check in hex, SP, payload, LF

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


def fnv1a64(data):
    value = 0xcbf29ce484222325
    for byte in data:
        value = ((value ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return value


def put_line(digest, stamp, stored, used, body, sha, etag, url):
    payload = "\t".join(["P", digest, str(stamp), str(stored), str(used), str(len(body)), "png", "1", "1",
                         sha, etag, "", url]).encode()
    return b"\n" + b"%016x " % fnv1a64(payload) + payload + b"\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dir")
    parser.add_argument("count", type=int)
    parser.add_argument("--list", help="also write the URLs, one a line, to this file")
    parser.add_argument("--expired", type=float, default=0.0, help="fraction stored 30 days ago")
    parser.add_argument("--port", type=int, default=9)
    args = parser.parse_args()

    for sub in ("entries", "index", "tmp", "failed", "locks"):
        os.makedirs(os.path.join(args.dir, sub), exist_ok=True)
    with open(os.path.join(args.dir, "FORMAT"), "w") as f:
        f.write('sdfetch cache format 2\nsee README.md, "Cache format", of sdfetch\n')
    now = time.time_ns()
    body = png_1x1(7)
    sha = hashlib.sha256(body).hexdigest()
    urls = []
    buckets = {}
    expired_every = int(1 / args.expired) if args.expired > 0 else 0
    for index in range(args.count):
        url = f"http://127.0.0.1:{args.port}/bench/{index}.png"
        urls.append(url)
        digest = hashlib.sha256(url.encode()).digest()[:16].hex()
        shard = os.path.join(args.dir, "entries", digest[:2])
        if digest[:2] not in buckets:
            os.makedirs(shard, exist_ok=True)
            buckets[digest[:2]] = []
        stored = now - 30 * 86400 * 10**9 if expired_every and index % expired_every == 0 else now - index * 10**6
        stamp = stored // 10**9
        path = os.path.join(shard, digest)
        with open(path, "wb") as f:
            f.write(body)
        os.utime(path, ns=(stamp * 10**9, stamp * 10**9))
        buckets[digest[:2]].append(put_line(digest, stamp, stored, stored + 1000, body, sha, f'"e{index}"', url))
    for shard, lines in buckets.items():
        with open(os.path.join(args.dir, "index", shard), "wb") as f:
            f.write(b"".join(lines))
    if args.list:
        with open(args.list, "w") as f:
            f.write("\n".join(urls) + "\n")


if __name__ == "__main__":
    main()
