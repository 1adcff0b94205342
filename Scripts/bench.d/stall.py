#!/usr/bin/env python3
"""Servers that never finish: how long sdfetch with no options takes on them.

Python 3 stdlib only; everything on 127.0.0.1, ports picked by the kernel.  For each kind
of server, a list of N URLs (2,000 by default) on that one host, fetched by sdfetch with
no options but a fresh --cache-dir; prints the wall time and the statuses.  Kinds:

  silent   accepts, reads the request, never answers
  head     sends its status line, then one header byte a second
  body     sends a head declaring 100,000 bytes, then one body byte a second

Target (sdfetch(1) MANY HOSTS): every run ends within two minutes, in time proportional
to the URLs over the lanes, not to the body's size.

    python3 Scripts/bench.d/stall.py --sdfetch .build/release/sdfetch [--urls 2000] [--kinds silent,head,body]
"""
import argparse
import collections
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time


def serve(kind, stop):
    """A server of `kind` on 127.0.0.1; returns its port.  Stops accepting once `stop` is set."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(('127.0.0.1', 0))
    listener.listen(1024)
    listener.settimeout(0.2)

    def answer(conn):
        try:
            conn.settimeout(5)
            conn.recv(65536)
            if kind == 'silent':
                stop.wait()
                return
            if kind == 'head':
                conn.sendall(b'HTTP/1.1 200 OK\r\n')
                drip = b'X-Slow: ' + b'a' * 4000 + b'\r\n'
            else:
                conn.sendall(b'HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 100000\r\n\r\n')
                drip = b'\x89' * 100000
            for byte in drip:
                if stop.wait(1.0):
                    return
                conn.sendall(bytes([byte]))
        except OSError:
            pass
        finally:
            conn.close()

    def accept():
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            threading.Thread(target=answer, args=(conn,), daemon=True).start()
        listener.close()

    threading.Thread(target=accept, daemon=True).start()
    return listener.getsockname()[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--sdfetch', required=True)
    ap.add_argument('--urls', type=int, default=2000)
    ap.add_argument('--kinds', default='silent,head,body')
    ap.add_argument('--cap', type=float, default=600, help='stop a run after this many seconds')
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix='sdfetch-stall-')
    try:
        for kind in [k for k in a.kinds.split(',') if k]:
            stop = threading.Event()
            port = serve(kind, stop)
            lst = os.path.join(work, '%s.txt' % kind)
            with open(lst, 'w') as f:
                f.writelines('http://127.0.0.1:%d/img/%d.png\n' % (port, k) for k in range(a.urls))
            cache = os.path.join(work, 'cache-%s' % kind)
            t0 = time.monotonic()
            p = subprocess.run([a.sdfetch, '--no-config', '--progress', 'never', '--cache-dir', cache, lst],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=a.cap)
            wall = time.monotonic() - t0
            stop.set()
            statuses = collections.Counter(line.split(b'\t', 1)[0].decode() for line in p.stdout.splitlines())
            closing = [l for l in p.stderr.decode('utf-8', 'replace').splitlines() if 'host' in l and 'down' in l][-1:]
            print('%-6s %d URLs: %.1f s, rc %d, %s%s' % (
                kind, a.urls, wall, p.returncode, ' '.join('%s=%d' % kv for kv in sorted(statuses.items())),
                ('; ' + closing[0]) if closing else ''))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
