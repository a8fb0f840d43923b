"""Many tables' metadata reads at once, a bounded number per catalog.

Evaluating a table reads its metadata file, its manifest list and its manifests: on an
object store each is a request of 10-50 ms, so one table after another spends a cycle
waiting on the network, not the CPU. `in_order` runs a per-table function for every table
with at most `CatalogConfig.metadata_reads` of one catalog's tables in flight (the bound
keeps a daemon from flooding a catalog server or a bucket), and hands the results back in
the order the tables were given, so what a cycle records (problems, health, decisions
before ranking) does not depend on which read came back first.

A catalog whose bound is 1 is read on the calling thread, exactly as before there was any
overlap (the default for Hive and for local warehouses: `config.default_metadata_reads`). An exception a function lets out (a state database gone, a bad policy) is raised
here, in table order, and the reads not yet started are cancelled.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from maintenance.catalogs import TableRef

Result = TypeVar("Result")


def in_order(refs: Sequence[TableRef], bound_of: Callable[[str], int], work: Callable[[TableRef], Result]) -> list[Result]:
    """`work(ref)` for every ref, at most `bound_of(catalog)` at once per catalog, results in
    the order of `refs`."""
    pools: dict[str, ThreadPoolExecutor] = {}
    futures: list[Future[Result] | TableRef] = []
    try:
        for ref in refs:
            bound = max(1, bound_of(ref.catalog))
            if bound == 1:
                futures.append(ref)  # read on this thread, in turn
                continue
            pool = pools.get(ref.catalog)
            if pool is None:
                pool = pools[ref.catalog] = ThreadPoolExecutor(max_workers=bound, thread_name_prefix=f"metadata-{ref.catalog}")
            futures.append(pool.submit(work, ref))
        return [work(item) if isinstance(item, TableRef) else item.result() for item in futures]
    finally:
        for pool in pools.values():
            pool.shutdown(wait=True, cancel_futures=True)
