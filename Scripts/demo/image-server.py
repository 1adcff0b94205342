#!/usr/bin/env python3
"""Bundled image server for `make demo`: Python stdlib only, loopback only.

Generates a small set of sample images (valid PNGs of different sizes, made in code so
nothing binary is shipped), plus the classic failure cases: an HTML error page served
with 200, a 404, and a redirect. Binds 127.0.0.1 on a free port, writes the port to
--port-file, counts requests per path, and serves until killed.
"""
import argparse
import http.server
import struct
import sys
import threading
import zlib

def png(width, height, seed):
    rows = b"".join(
        b"\x00" + b"".join(bytes(((x * 37 + seed * 53) & 255, (y * 29 + seed * 11) & 255, (seed * 97) & 255, 255))
                           for x in range(width))
        for y in range(height))
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b"")

IMAGES = {f"/images/photo-{i:02d}.png": png(16 + i * 8, 12 + i * 6, i) for i in range(12)}
HTML = b"<!doctype html><html><body><h1>Oops</h1><p>not an image</p></body></html>"
COUNTS = {}
LOCK = threading.Lock()

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        with LOCK:
            COUNTS[self.path] = COUNTS.get(self.path, 0) + 1
        if self.path in IMAGES:
            self.reply(200, IMAGES[self.path], "image/png")
        elif self.path == "/error-page.png":
            self.reply(200, HTML, "text/html")
        elif self.path == "/moved.png":
            self.send_response(302)
            self.send_header("Location", "/images/photo-00.png")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/stats":
            body = "".join(f"{n}\t{p}\n" for p, n in sorted(COUNTS.items())).encode()
            self.reply(200, body, "text/plain")
        else:
            self.reply(404, b"not found\n", "text/plain")

    def reply(self, status, body, kind):
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port-file", required=True)
    args = parser.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(args.port_file, "w") as f:
        f.write(str(server.server_address[1]))
    server.serve_forever()

if __name__ == "__main__":
    sys.exit(main())
