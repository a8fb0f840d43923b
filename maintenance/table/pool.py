"""The one thread pool for reads of table files in Python (manifests, metadata versions,
CONVERT's key columns): on object stores each read waits on a request, so a handful of
threads hide the storage's latency.

Files on a local disk are read in the calling thread instead: there the reads are CPU
work, most of it under the GIL (Avro decoding, each file's Python around Arrow's reader),
and threads only take turns at it. Measured on 2 cores, files in the page cache: the key
column of 400 small Parquet files in 0.18 s in one thread, 0.25 s on the pool; 100
manifests in 0.068 s against 0.091 s."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from maintenance.table.paths import is_local

T = TypeVar("T")
R = TypeVar("R")
READERS = 8
_PREFIX = "icemaint-metadata"
_pool = ThreadPoolExecutor(max_workers=READERS, thread_name_prefix=_PREFIX)


def parallel_map(function: Callable[[T], R], items: Iterable[T], path: Callable[[T], str] | None = None) -> list[R]:
    """`function` over `items` on the shared pool, results in order; inline for one item,
    inside a pool thread (a nested map on a full pool would wait on itself), and when every
    item's file (`path`, where given) is on a local disk."""
    items = list(items)
    if _inline(items, path):
        return [function(item) for item in items]
    return list(_pool.map(function, items))


def parallel_iter(function: Callable[[T], R], items: Iterable[T], path: Callable[[T], str] | None = None) -> Iterator[R]:
    """`parallel_map`, its results yielded in order as they come, with at most twice the
    pool's size read ahead: the caller holds a few results at a time, never all (the
    content paths of every manifest of a table of millions of files)."""
    items = list(items)
    if _inline(items, path):
        yield from (function(item) for item in items)
        return
    waiting = iter(items)
    in_flight: deque[Future[R]] = deque(_pool.submit(function, item) for item, _ in zip(waiting, range(2 * READERS)))
    while in_flight:
        result = in_flight.popleft().result()
        following = next(waiting, _DONE)
        if following is not _DONE:
            in_flight.append(_pool.submit(function, following))  # type: ignore[arg-type]
        yield result


_DONE = object()


def _inline(items: list[T], path: Callable[[T], str] | None) -> bool:
    """One item, a call from a pool thread (a nested map on a full pool would wait on
    itself), or every item's file on a local disk."""
    in_pool = threading.current_thread().name.startswith(_PREFIX)
    return len(items) <= 1 or in_pool or (path is not None and all(is_local(path(item)) for item in items))
