"""Waiting out a state database that is down: exponential backoff with jitter.

The daemon must survive the database going away and come back by itself; a one-off CLI
command instead reports the outage in one line (exit 1) and stops.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from typing import TypeVar

import structlog

from maintenance.state.database import StateUnavailableError

log = structlog.get_logger(__name__)
T = TypeVar("T")


class Stopped(Exception):
    """Asked to stop while waiting for the state database."""


def retry_while_unavailable(call: Callable[[], T], *, stop: threading.Event, initial_s: float = 1.0, max_s: float = 60.0) -> T:
    """Call until the state database answers; sleeps 1, 2, 4 … max_s seconds (±20%) between tries."""
    delay = initial_s
    attempt = 1
    while True:
        try:
            return call()
        except StateUnavailableError as exc:
            wait = delay * random.uniform(0.8, 1.2)
            log.warning("state database unavailable, retrying", attempt=attempt, retry_in_s=round(wait, 2), error=str(exc))
            if stop.wait(wait):
                raise Stopped("stopped while waiting for the state database") from exc
            delay = min(max_s, delay * 2)
            attempt += 1
