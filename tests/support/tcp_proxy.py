"""A loopback TCP forwarder the tests can switch off and on, to take a real database away, or
make hang: `hang()` keeps every connection open and forwards nothing more (new ones are
accepted and never answered), as a stalled server, proxy or load balancer does; `hang_on(marker)`
does so once a client sends bytes holding `marker` (a statement naming a table), so a client
hangs after it connected rather than while connecting."""

from __future__ import annotations

import socket
import threading


class TcpProxy:
    def __init__(self, target_port: int, target_host: str = "127.0.0.1") -> None:
        self.target = (target_host, target_port)
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        self.port = probe.getsockname()[1]
        probe.close()
        self._server: socket.socket | None = None
        self._connections: list[socket.socket] = []
        self._lock = threading.Lock()
        self._hung = threading.Event()
        self._stopped = threading.Event()
        self._marker: bytes | None = None

    def hang(self) -> None:
        """Forward nothing more, on any connection, and answer no new one; the sockets stay open."""
        self._hung.set()

    def hang_on(self, marker: bytes) -> None:
        """Hang (as `hang`) as soon as a client sends `marker`, which is not forwarded."""
        self._marker = marker

    def start(self) -> None:
        self._hung.clear()
        self._stopped.clear()
        server = socket.socket()
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", self.port))
        server.listen(32)
        self._server = server
        threading.Thread(target=self._accept, args=(server,), daemon=True).start()

    def stop(self) -> None:
        """Refuse new connections and cut the open ones, like a database going down."""
        self._stopped.set()
        if self._server is not None:
            try:
                self._server.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked in accept()
            except OSError:
                pass
            self._server.close()
            self._server = None
        with self._lock:
            for conn in self._connections:
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                conn.close()
            self._connections.clear()

    def _accept(self, server: socket.socket) -> None:
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return
            if self._hung.is_set():
                with self._lock:
                    self._connections.append(client)  # accepted, never answered
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)  # the 5 s were for connecting: an idle connection stays up
            with self._lock:
                self._connections += [client, upstream]
            for a, b, from_client in ((client, upstream, True), (upstream, client, False)):
                threading.Thread(target=self._pipe, args=(a, b, from_client), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket, from_client: bool) -> None:
        try:
            while data := source.recv(65536):
                if from_client and self._marker is not None and self._marker in data:
                    self._hung.set()
                if self._hung.is_set():
                    self._stopped.wait()  # holds the connection open, forwarding nothing, until stop()
                    return
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
