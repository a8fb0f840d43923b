"""One run of the native peer, nimtable's iceberg-compaction, as its users run it: a Python
process in the peer's own venv (`make peer`: .venv-peer) that opens the REST catalog and
compacts one table.

    .venv-peer/bin/python benchmarks/native_peer_job.py < SETTINGS_JSON

The settings (catalog uri, warehouse, S3 endpoint and keys, table, strategy, target size)
come on stdin, so no key is on any command line. Prints one JSON object: seconds to import
the library, to open the catalog, and for `Compaction.run()` itself (the peer's warm
time, beside icemaint's job in a started session), what it compacted, and this process's
bytes read and written through every file and socket (`/proc/self/io`: the object store's
and the catalog's traffic; a single process, so no child escapes the count).
It imports nothing of icemaint's: the peer's venv has no icemaint.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def main() -> None:
    began = time.perf_counter()
    settings = json.loads(sys.stdin.read())
    from iceberg_compaction import Compaction, CompactionConfig, RestCatalog, RetryConfig

    imported = time.perf_counter()
    catalog = RestCatalog("bench", uri=settings["uri"], warehouse=settings["warehouse"], properties=settings["properties"])
    opened = time.perf_counter()
    config = CompactionConfig(strategy=settings["strategy"], target_file_size_bytes=settings["target_file_size_bytes"],
                              small_file_threshold_bytes=settings["small_file_threshold_bytes"])
    result = Compaction(catalog, settings["table"], config, retry_config=RetryConfig(max_retries=5)).run()
    ran = time.perf_counter()
    io = dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())
    print(json.dumps({
        "import_s": imported - began, "catalog_s": opened - imported, "run_s": ran - opened,
        "input_files": result.input_files_count if result else 0, "output_files": result.output_files_count if result else 0,
        "input_bytes": result.input_bytes_total if result else 0, "output_bytes": result.output_bytes_total if result else 0,
        "read_bytes": int(io["rchar"]), "written_bytes": int(io["wchar"]),
    }))


if __name__ == "__main__":
    main()
