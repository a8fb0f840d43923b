"""The daemon's door for scan reports (`readers/endpoint.py`) behind its real HTTP server
(`daemon/http.py`), with a real state database: what is taken is stored, and every refusal
is one line with its status, nothing stored."""

from __future__ import annotations

import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from maintenance.daemon.http import MAX_POST_BODY, serve
from maintenance.readers.endpoint import PATH, ScanReportEndpoint
from maintenance.state.database import ensure_schema, make_engine
from maintenance.state.store import StateStore
from tests.support.scan_reports import REPORT, batch

TOKEN = "a-shared-secret-of-readers"


@pytest.fixture()
def door(tmp_path: Path) -> Iterator[tuple[str, StateStore, list[tuple[str, int]]]]:
    engine = make_engine(f"sqlite:///{tmp_path / 'state.db'}")
    ensure_schema(engine)
    state, counted = StateStore.on(engine), []
    endpoint = ScanReportEndpoint(TOKEN, "local", {"local", "lake"}, lambda: state, counted=lambda outcome, n: counted.append((outcome, n)))
    server = serve("127.0.0.1", 0, posts={PATH: endpoint.receive})
    yield f"http://127.0.0.1:{server.server_address[1]}", state, counted
    server.shutdown()
    engine.dispose()


def post(url: str, body: bytes, token: str | None = TOKEN) -> tuple[int, str]:
    request = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/json"})
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode()


def test_a_batch_is_stored(door: tuple[str, StateStore, list[tuple[str, int]]]) -> None:
    url, store, counted = door

    assert post(url + PATH, batch([REPORT, REPORT, {**REPORT, "table-name": "r.sales.returns"}])) == (200, "taken 3\n")

    found = store.scans.summaries()
    assert {t: s.scans for t, s in found.items()} == {"lake.sales.orders": 2, "lake.sales.returns": 1}
    assert found["lake.sales.orders"].data_files == 4 and found["lake.sales.orders"].planning_ms == 2.5
    assert counted == [("taken", 3)]


@pytest.mark.parametrize(("token", "body", "status", "said"), [
    (None, batch([REPORT]), 401, "unauthorized"),
    ("a-shared-secret-of-readerz", batch([REPORT]), 401, "unauthorized"),
    (TOKEN, b"[1, 2", 400, "the body is not JSON"),
    (TOKEN, batch([REPORT], catalog="elsewhere"), 400, "catalog 'elsewhere' is not one of icemaint's (lake, local)"),
])
def test_a_refused_batch_stores_nothing(door: tuple[str, StateStore, list[tuple[str, int]]], token: str | None, body: bytes,
                                        status: int, said: str) -> None:
    url, store, _ = door

    answer = post(url + PATH, body, token)

    assert answer[0] == status and said in answer[1] and answer[1].count("\n") == 1
    assert TOKEN not in answer[1]
    assert store.scans.summaries() == {}


def test_a_body_too_large_or_without_length_is_refused_unread(door: tuple[str, StateStore, list[tuple[str, int]]]) -> None:
    url, store, _ = door
    port = int(url.rsplit(":", 1)[1])
    for head, status in ((f"Content-Length: {MAX_POST_BODY + 1}\r\n", b"413"), ("", b"411")):
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(f"POST {PATH} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n{head}\r\n".encode())
            assert sock.recv(100).split(b" ")[1] == status
    assert post(url + "/v1/elsewhere", batch([REPORT]))[0] == 404
    assert store.scans.summaries() == {}


def test_a_state_database_that_cannot_be_reached_answers_503(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]  # nothing listens there once it is closed
    unreachable = StateStore.on(make_engine(f"postgresql://postgres@127.0.0.1:{closed}/test"))
    endpoint = ScanReportEndpoint(TOKEN, "local", {"local"}, lambda: unreachable)

    status, said = endpoint.receive(batch([REPORT], catalog=None), f"Bearer {TOKEN}")

    assert status == 503 and said.startswith("state database unreachable")
