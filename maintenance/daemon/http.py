"""The daemon's HTTP endpoint: `/metrics` for Prometheus, the probes, and the read-only
status page (`maintenance/ui/`) on `/`, `/table` and `/leases`.

Two probes because they answer different questions: `/livez` whether this process still
works (restarting it would help), `/readyz` whether what it depends on works (restarting
it would not: a state database outage must not restart every daemon's pod). `/healthz`
answers as `/readyz`, as it did before the two existed.

Each request is answered in its own thread, never the scheduler's: a slow page cannot hold
up an evaluation, a job or a probe. `icemaint ui` serves the same page with no metrics.

`POST` reaches only the doors it is given (`posts`: a path and what takes the body, with
the request's `Authorization` header): the daemon's is readers' scan reports
(`readers/endpoint.py`). A body must say its length and be at most `MAX_POST_BODY`; the
connection is closed after a refused one.

`HEAD` answers as `GET` without the body (load balancers and uptime checkers send it). A
connection that sends nothing for `IDLE_TIMEOUT_S` is dropped, so an idle client cannot
hold a thread forever. A client that leaves mid-answer (a closed tab, a probe's timeout) is
ordinary: logged at debug, never a traceback on stderr; any other error of a request goes
to the log, not to http.server's bare traceback.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING

import structlog
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

if TYPE_CHECKING:
    from maintenance.ui.pages import StatusPages

log = structlog.get_logger(__name__)

TEXT = "text/plain; charset=utf-8"
IDLE_TIMEOUT_S = 5.0  # a request's line and headers come in one packet; 5 s is ample, even across an ocean
CLIENT_LEFT = (ConnectionError, TimeoutError)  # BrokenPipeError, ConnectionResetError, ConnectionAbortedError: the client went


Probe = Callable[[], tuple[bool, str]]
PostDoor = Callable[[bytes, "str | None"], tuple[int, str]]  # (body, Authorization) -> (status, one line)
MAX_POST_BODY = 8 * 2**20


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        """socketserver prints a traceback to stderr; a client leaving is no error at all."""
        import sys

        exc = sys.exc_info()[1]
        if isinstance(exc, CLIENT_LEFT):
            log.debug("http: client left", client=str(client_address), error=type(exc).__name__)
        else:
            log.exception("http: request failed", client=str(client_address))


def serve(host: str, port: int, registry: CollectorRegistry | None = None, healthy: Probe | None = None,
          pages: StatusPages | None = None, alive: Probe | None = None,
          idle_timeout_s: float = IDLE_TIMEOUT_S, posts: Mapping[str, PostDoor] | None = None) -> ThreadingHTTPServer:
    """Start serving in a daemon thread; returns the server (its real port in server_address).
    Without a registry there is no `/metrics`; without `healthy`, `/readyz` and `/healthz`
    always answer 200, without `alive`, `/livez` does; without `pages`, no status page;
    `posts`: the paths that take a POST."""
    probes = {"/livez": alive, "/readyz": healthy, "/healthz": healthy}

    class Handler(BaseHTTPRequestHandler):
        timeout = idle_timeout_s  # StreamRequestHandler sets it on the socket: a silent client is dropped

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            self._answer(with_body=True)

        def do_HEAD(self) -> None:  # noqa: N802 (http.server's name)
            self._answer(with_body=False)

        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            door = (posts or {}).get(self.path.partition("?")[0])
            length = self.headers.get("Content-Length", "")
            if door is None:
                self.close_connection = True
                self._send(404, b"not found\n", TEXT)
            elif not length.isdigit():
                self.close_connection = True
                self._send(411, b"a POST must say its Content-Length\n", TEXT)
            elif int(length) > MAX_POST_BODY:
                self.close_connection = True
                self._send(413, f"a body of at most {MAX_POST_BODY} bytes\n".encode(), TEXT)
            else:
                status, text = door(self.rfile.read(int(length)), self.headers.get("Authorization"))
                self._send(status, (text + "\n").encode(), TEXT)

        def _answer(self, *, with_body: bool) -> None:
            path, _, query = self.path.partition("?")
            if path == "/metrics" and registry is not None:
                self._send(200, generate_latest(registry), CONTENT_TYPE_LATEST, with_body=with_body)
            elif path in probes:
                probe = probes[path]
                ok, text = probe() if probe is not None else (True, "ok")
                self._send(200 if ok else 503, (text + "\n").encode(), TEXT, with_body=with_body)
            elif pages is not None and path != "/favicon.ico":
                response = pages.handle(path, query)  # an unknown path gets the page's own "not found"
                self._send(response.status, response.body, response.content_type, response.headers, with_body=with_body)
            else:
                self._send(404, b"not found\n", TEXT, with_body=with_body)

        def _send(self, code: int, body: bytes, content_type: str, headers: tuple[tuple[str, str], ...] = (), *,
                  with_body: bool = True) -> None:
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))  # HEAD too: the length GET's body would have
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            if with_body:
                self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # probes every few seconds: not worth a log line
            pass

    server = _Server((host, port), Handler)
    threading.Thread(target=server.serve_forever, name="icemaint-http", daemon=True).start()
    return server
