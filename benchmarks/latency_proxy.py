"""A forwarding TCP proxy that adds a fixed delay to every request: an object store's latency
in front of a local S3 server (moto), for the fleet benchmark.

    .venv/bin/python benchmarks/latency_proxy.py --target 127.0.0.1:9000 --delay-ms 20

Prints `listening <port>` once it accepts connections. On each connection, the first bytes
a client sends after the server last answered (a new HTTP request on a kept-alive
connection, or the first on a new one) wait `--delay-ms` before they are forwarded; the
rest of that request and every answer pass at once. So every request costs the delay once,
as a round trip to a distant store does, however large it is. It runs as a process of its
own so that its work never competes with the measured process for Python's lock.
"""

from __future__ import annotations

import argparse
import asyncio


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay_s: float, waiting: list[bool], is_request: bool) -> None:
    try:
        while data := await reader.read(65536):
            if is_request and waiting[0]:
                await asyncio.sleep(delay_s)
                waiting[0] = False
            elif not is_request:
                waiting[0] = True  # the server answered: the client's next bytes are a new request
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


async def _serve(target_host: str, target_port: int, delay_s: float, port: int) -> None:
    async def handle(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        try:
            server_reader, server_writer = await asyncio.open_connection(target_host, target_port)
        except OSError:
            client_writer.close()
            return
        waiting = [True]
        await asyncio.gather(_pipe(client_reader, server_writer, delay_s, waiting, True),
                             _pipe(server_reader, client_writer, delay_s, waiting, False))

    server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=256)
    print(f"listening {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", required=True, help="host:port of the server behind the proxy")
    parser.add_argument("--delay-ms", type=float, default=20.0)
    parser.add_argument("--port", type=int, default=0, help="where to listen (default: a free port, printed)")
    args = parser.parse_args()
    host, _, port = args.target.rpartition(":")
    asyncio.run(_serve(host, int(port), args.delay_ms / 1000, args.port))


if __name__ == "__main__":
    main()
