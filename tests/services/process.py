"""A service the tests start themselves: a child process with its log in a folder.

Each service writes stdout and stderr to `<folder>/<name>.log`. Starting waits for a ready
condition (a port that accepts connections, or text the process prints) and fails with
the log's tail; stopping sends SIGTERM, then SIGKILL after a grace period.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path


class ServiceError(RuntimeError):
    """A service did not start (its log's tail is in the message)."""


def free_port() -> int:
    """A TCP port free right now on 127.0.0.1 (for servers that cannot bind port 0 themselves)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


class ServiceProcess:
    """One running child process; `log` holds everything it printed."""

    def __init__(self, name: str, args: Sequence[str], folder: Path, *, env: Mapping[str, str] | None = None, cwd: Path | None = None) -> None:
        self.name = name
        self.args = [str(a) for a in args]
        self.log = folder / f"{name}.log"
        folder.mkdir(parents=True, exist_ok=True)
        self._log_file = self.log.open("ab")
        self._log_file.write(f"$ {' '.join(self.args)}\n".encode())
        self._log_file.flush()
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            self.args,
            stdin=subprocess.DEVNULL,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            cwd=str(cwd or folder),
            env={**os.environ, **(env or {})},
            start_new_session=True,  # a Ctrl-C in the terminal reaches pytest, which stops us in order
        )

    def wait_until(self, ready: Callable[[], bool], timeout: float, what: str) -> float:
        """Poll `ready` until it holds; returns the seconds since start. Fails if the process exits."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready():
                return time.monotonic() - self.started
            if self.proc.poll() is not None:
                raise ServiceError(f"{self.name} exited with {self.proc.returncode} before {what}; log {self.log}:\n{self.tail()}")
            time.sleep(0.2)
        raise ServiceError(f"{self.name} not {what} after {timeout:.0f}s; log {self.log}:\n{self.tail()}")

    def wait_for_port(self, port: int, timeout: float) -> float:
        return self.wait_until(lambda: port_open(port), timeout, f"listening on port {port}")

    def wait_for_match(self, pattern: str, timeout: float) -> re.Match[str]:
        """The first match of `pattern` anywhere in the log (for lines behind a timestamp)."""
        found: list[re.Match[str]] = []

        def ready() -> bool:
            match = re.search(pattern, self.log.read_text(errors="replace"))
            if match:
                found.append(match)
            return match is not None

        self.wait_until(ready, timeout, f"printing {pattern!r}")
        return found[0]

    def tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def running(self) -> bool:
        return self.proc.poll() is None

    def stop(self, grace: float = 15.0) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=grace)
        self._log_file.close()
