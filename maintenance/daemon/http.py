"""The daemon's HTTP endpoint: `/metrics` for Prometheus, the probes, and the read-only
status page (`maintenance/ui/`) on `/`, `/table` and `/leases`.

Two probes because they answer different questions: `/livez` whether this process still
works (restarting it would help), `/readyz` whether what it depends on works (restarting
it would not: a state database outage must not restart every daemon's pod). `/healthz`
answers as `/readyz`, as it did before the two existed.

Each request is answered in its own thread, never the scheduler's: a slow page cannot hold
up an evaluation, a job or a probe. `icemaint ui` serves the same page with no metrics.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

if TYPE_CHECKING:
    from maintenance.ui.pages import StatusPages

TEXT = "text/plain; charset=utf-8"


Probe = Callable[[], tuple[bool, str]]


def serve(host: str, port: int, registry: CollectorRegistry | None = None, healthy: Probe | None = None,
          pages: StatusPages | None = None, alive: Probe | None = None) -> ThreadingHTTPServer:
    """Start serving in a daemon thread; returns the server (its real port in server_address).
    Without a registry there is no `/metrics`; without `healthy`, `/readyz` and `/healthz`
    always answer 200, without `alive`, `/livez` does; without `pages`, no status page."""
    probes = {"/livez": alive, "/readyz": healthy, "/healthz": healthy}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            path, _, query = self.path.partition("?")
            if path == "/metrics" and registry is not None:
                self._send(200, generate_latest(registry), CONTENT_TYPE_LATEST)
            elif path in probes:
                probe = probes[path]
                ok, text = probe() if probe is not None else (True, "ok")
                self._send(200 if ok else 503, (text + "\n").encode(), TEXT)
            elif pages is not None and path != "/favicon.ico":
                response = pages.handle(path, query)  # an unknown path gets the page's own "not found"
                self._send(response.status, response.body, response.content_type, response.headers)
            else:
                self._send(404, b"not found\n", TEXT)

        def _send(self, code: int, body: bytes, content_type: str, headers: tuple[tuple[str, str], ...] = ()) -> None:
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # probes every few seconds: not worth a log line
            pass

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="icemaint-http", daemon=True).start()
    return server
