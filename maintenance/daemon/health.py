"""What the daemon depends on and whether each works now: the state database, every
catalog, the policies, Spark. `/healthz` answers 503 while any of them fails and says which;
`icemaint_dependency_up` shows each one."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import structlog

log = structlog.get_logger(__name__)
STATE = "state"
SPARK = "spark"
POLICIES = "policies"


def catalog(name: str) -> str:
    return f"catalog:{name}"


@dataclass
class Status:
    up: bool
    detail: str
    since: float  # wall clock of the last change


class Dependencies:
    """Each dependency's last known status, changed by whoever last used it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._status: dict[str, Status] = {}

    def up(self, name: str, detail: str = "ok") -> None:
        with self._lock:
            previous = self._status.get(name)
            if previous is None or not previous.up:
                if previous is not None:
                    log.info("dependency works again", dependency=name)
                self._status[name] = Status(True, detail, time.time())
            else:
                previous.detail = detail

    def down(self, name: str, detail: str) -> None:
        """Record a failure; logged once per change (in one line), not on every retry."""
        with self._lock:
            previous = self._status.get(name)
            if previous is None or previous.up:
                log.warning("dependency failing", dependency=name, error=detail)
                self._status[name] = Status(False, detail, time.time())
            else:
                previous.detail = detail

    def failing(self) -> dict[str, Status]:
        with self._lock:
            return {name: status for name, status in self._status.items() if not status.up}

    def snapshot(self) -> dict[str, Status]:
        with self._lock:
            return dict(self._status)
