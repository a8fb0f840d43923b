"""A forwarding TCP proxy that adds a fixed delay to every HTTP request and counts them by
kind: an object store's (or a catalog's) latency in front of a local server, with the
requests a job made, for the benchmarks.

    .venv/bin/python benchmarks/latency_proxy.py --target 127.0.0.1:9000 --delay-ms 20 [--counts FILE]

Prints `listening <port>` once it accepts connections. On each connection, a request starts
where the client's bytes begin with an HTTP request line (`GET /bucket/key?... HTTP/1.1`)
after the server last answered (a new request on a kept-alive connection, or the first on
a new one); that first chunk waits `--delay-ms` before it is forwarded, the rest of the
request and every answer pass at once. So every request costs the delay once, as a round
trip to a distant store does, however large it is. (A body sent after a `100 Continue` is
not a request line, so it neither waits nor counts.)

With `--counts`, the totals by kind are written to FILE as JSON, at most every 0.1 s and at
exit: S3's kinds are GET (an object read), HEAD, LIST (a bucket listing: `list-type` or
`prefix` in the query of a request to the bucket), PUT (including multipart parts), POST
(multipart starts and completions, bulk deletes: `?delete`), DELETE; other HTTP servers'
requests (a REST catalog's) count under their method. It runs as a process of its own so
that its work never competes with the measured process for Python's lock.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
from collections import Counter
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

METHODS = (b"GET ", b"HEAD ", b"PUT ", b"POST ", b"DELETE ", b"OPTIONS ", b"PATCH ")


def request_kind(request_line: bytes) -> str:
    """GET, HEAD, LIST, PUT, POST, DELETE (or another method) for one request line."""
    parts = request_line.split(b" ")
    method = parts[0].decode("ascii", "replace")
    target = parts[1].decode("utf-8", "replace") if len(parts) > 1 else "/"
    url = urlsplit(target)
    query = parse_qs(url.query, keep_blank_values=True)
    if method == "GET" and ("list-type" in query or "prefix" in query or "delimiter" in query) and url.path.strip("/").count("/") == 0:
        return "LIST"
    if method == "POST" and "delete" in query:
        return "DELETE"
    return method


class Counts:
    def __init__(self, path: str | None) -> None:
        self.path = Path(path) if path else None
        self.by_kind: Counter[str] = Counter()
        self.dirty = False

    def add(self, kind: str) -> None:
        self.by_kind[kind] += 1
        self.dirty = True

    def write(self) -> None:
        if self.path is None or not self.dirty:
            return
        partial = self.path.with_name(f".{self.path.name}.part")
        partial.write_text(json.dumps(dict(self.by_kind)))
        os.replace(partial, self.path)
        self.dirty = False

    async def keep_writing(self) -> None:
        while True:
            await asyncio.sleep(0.1)
            self.write()


def _request_start(data: bytes) -> bytes | None:
    """The request line when `data` begins a request."""
    if not data.startswith(METHODS):
        return None
    line = data.split(b"\r\n", 1)[0]
    return line if b" HTTP/1." in line else None


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay_s: float, waiting: list[bool], is_request: bool,
                counts: Counts) -> None:
    try:
        while data := await reader.read(65536):
            if is_request and waiting[0]:
                line = _request_start(data)
                if line is not None:
                    counts.add(request_kind(line))
                    if delay_s:
                        await asyncio.sleep(delay_s)
                    waiting[0] = False
            elif not is_request:
                waiting[0] = True  # the server answered: the client's next request line is a new request
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


async def _serve(target_host: str, target_port: int, delay_s: float, port: int, counts: Counts) -> None:
    async def handle(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        try:
            server_reader, server_writer = await asyncio.open_connection(target_host, target_port)
        except OSError:
            client_writer.close()
            return
        waiting = [True]
        await asyncio.gather(_pipe(client_reader, server_writer, delay_s, waiting, True, counts),
                             _pipe(server_reader, client_writer, delay_s, waiting, False, counts))

    server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=256)
    print(f"listening {server.sockets[0].getsockname()[1]}", flush=True)
    writing = asyncio.ensure_future(counts.keep_writing())
    loop = asyncio.get_running_loop()
    stop = loop.create_future()
    loop.add_signal_handler(signal.SIGTERM, lambda: stop.done() or stop.set_result(None))
    async with server:
        await stop
    writing.cancel()
    counts.write()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", required=True, help="host:port of the server behind the proxy")
    parser.add_argument("--delay-ms", type=float, default=20.0)
    parser.add_argument("--port", type=int, default=0, help="where to listen (default: a free port, printed)")
    parser.add_argument("--counts", help="write the requests by kind to this JSON file")
    args = parser.parse_args()
    host, _, port = args.target.rpartition(":")
    asyncio.run(_serve(host, int(port), args.delay_ms / 1000, args.port, Counts(args.counts)))


if __name__ == "__main__":
    main()
