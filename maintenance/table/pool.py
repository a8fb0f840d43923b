"""The one thread pool for metadata reads (manifests, metadata versions): I/O-bound work
that pyiceberg does in Python, so a handful of threads hide the storage's latency."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")
READERS = 8
_PREFIX = "icemaint-metadata"
_pool = ThreadPoolExecutor(max_workers=READERS, thread_name_prefix=_PREFIX)


def parallel_map(function: Callable[[T], R], items: Iterable[T]) -> list[R]:
    """`function` over `items` on the shared pool, results in order; inline for one item, and
    inline inside a pool thread (a nested map on a full pool would wait on itself)."""
    items = list(items)
    if len(items) <= 1 or threading.current_thread().name.startswith(_PREFIX):
        return [function(item) for item in items]
    return list(_pool.map(function, items))
