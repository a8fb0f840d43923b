"""The daemon's HTTP server as clients meet it: real requests on raw sockets to a real
server, in its own process where its stderr is read (what an operator's terminal shows)."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from maintenance.daemon.http import IDLE_TIMEOUT_S, serve

# A server with a /metrics of a few MB: a client leaving mid-answer meets a write, not a finished one.
SERVER = """
import sys, time
from prometheus_client import CollectorRegistry, Gauge
from maintenance.daemon.http import serve
registry = CollectorRegistry()
gauge = Gauge("icemaint_test_rows", "many rows", ["table"], registry=registry)
for i in range(60000):
    gauge.labels(table=f"catalog.namespace.table_{i:06d}").set(i)
server = serve("127.0.0.1", 0, registry=registry)
print(server.server_address[1], flush=True)
time.sleep(600)
"""


@pytest.fixture()
def server_process(tmp_path: Path) -> Iterator[tuple[int, subprocess.Popen[bytes], Path]]:
    stderr = tmp_path / "stderr.txt"
    with stderr.open("wb") as err:
        process = subprocess.Popen([sys.executable, "-c", SERVER], stdout=subprocess.PIPE, stderr=err, env=os.environ.copy())
    assert process.stdout is not None
    port = int(process.stdout.readline())
    yield port, process, stderr
    process.kill()
    process.wait()


def reset(sock: socket.socket) -> None:
    """Close with an RST, as a killed client or a timed-out probe does."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def test_head_answers_like_get_without_a_body() -> None:
    server = serve("127.0.0.1", 0)
    try:
        port = server.server_address[1]
        answers = {}
        for method in ("GET", "HEAD"):
            with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
                sock.sendall(f"{method} /livez HTTP/1.0\r\nHost: x\r\n\r\n".encode())
                data = b""
                while chunk := sock.recv(65536):
                    data += chunk
            answers[method] = data.partition(b"\r\n\r\n")
        head, _, body = answers["HEAD"]
        assert head.startswith(b"HTTP/1.0 200"), head
        assert body == b""
        assert b"Content-Length: 3" in head  # the length GET's body has: "ok\n"
        assert answers["GET"][2] == b"ok\n"
    finally:
        server.shutdown()


def test_a_client_that_sends_nothing_is_dropped_after_the_idle_timeout() -> None:
    server = serve("127.0.0.1", 0)  # the default timeout, IDLE_TIMEOUT_S
    try:
        threads = threading.active_count()
        with socket.create_connection(("127.0.0.1", server.server_address[1]), timeout=IDLE_TIMEOUT_S + 10) as sock:
            started = time.monotonic()
            assert sock.recv(1024) == b""  # the server closed it (a timeout here raises)
            assert time.monotonic() - started < IDLE_TIMEOUT_S + 5
        time.sleep(0.5)
        assert threading.active_count() <= threads  # and its thread ended
    finally:
        server.shutdown()


@pytest.mark.process
def test_clients_that_leave_print_no_traceback(server_process: tuple[int, subprocess.Popen[bytes], Path]) -> None:
    port, process, stderr = server_process
    for _ in range(3):  # leaves mid-request: the server's read meets ECONNRESET
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        sock.sendall(b"GET /metr")
        time.sleep(0.2)
        reset(sock)
    for _ in range(3):  # leaves mid-answer: the server's write meets EPIPE or ECONNRESET
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
        sock.recv(100)
        reset(sock)
    time.sleep(2)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:  # and it still serves
        sock.sendall(b"GET /livez HTTP/1.0\r\n\r\n")
        assert sock.recv(1024).startswith(b"HTTP/1.0 200")
    assert process.poll() is None
    text = stderr.read_text()
    assert "Traceback" not in text and "BrokenPipeError" not in text and "ConnectionResetError" not in text, text
