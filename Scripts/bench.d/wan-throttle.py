#!/usr/bin/env python3
"""The throttling host of Scripts/bench's wan case (python3 stdlib only).

Usage: wan-throttle.py SOCKET RETRY_AFTER

nginx proxies the throttling host's requests here over the unix socket SOCKET (HTTP/1.1,
keep-alive).  The first request for each path is answered `429 Too Many Requests` with
`Retry-After: RETRY_AFTER` (seconds); every later request for that path gets a 200 with
`X-Accel-Redirect: /_file/PATH`, so nginx itself serves the file.  SIGHUP forgets the paths
seen (the bench sends it before every cell); SIGTERM stops the server.
"""
import asyncio
import signal
import sys


def main():
    path, retry_after = sys.argv[1], sys.argv[2]
    seen = set()

    async def serve(reader, writer):
        try:
            while True:
                head = await reader.readuntil(b'\r\n\r\n')
                target = head.split(b' ', 2)[1].decode('latin-1')
                if target in seen:
                    answer = ('HTTP/1.1 200 OK\r\nX-Accel-Redirect: /_file%s\r\n'
                              'Content-Length: 0\r\n\r\n' % target)
                else:
                    seen.add(target)
                    answer = ('HTTP/1.1 429 Too Many Requests\r\nRetry-After: %s\r\n'
                              'Content-Type: text/plain\r\nContent-Length: 5\r\n\r\nslow\n' % retry_after)
                writer.write(answer.encode('latin-1'))
                await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, IndexError):
            pass
        finally:
            writer.close()

    async def run():
        loop = asyncio.get_running_loop()
        stop = loop.create_future()
        loop.add_signal_handler(signal.SIGHUP, seen.clear)
        loop.add_signal_handler(signal.SIGTERM, stop.set_result, None)
        server = await asyncio.start_unix_server(serve, path)
        async with server:
            await stop

    asyncio.run(run())


if __name__ == '__main__':
    main()
