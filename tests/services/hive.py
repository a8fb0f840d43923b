"""A Hive Metastore for the tests, from the jars pyspark ships (Hive 2.3.9, Derby, DataNucleus).

Hive 2.3 creates its transaction and lock tables (NEXT_LOCK_ID, HIVE_LOCKS, ...) only when
a lock request reaches a metastore started with `-Dhive.in.test=true`, and in that mode it
rejects the locks Iceberg's catalogs take ("operationType=UNSET"). So it starts twice on
the same Derby database:
1. with `-Dhive.in.test=true`; one throwaway table is created through Iceberg's Hive
   catalog (pyiceberg's) and committed to: that lock request creates the lock tables
   (and is itself refused);
2. stopped, and started again without the flag; a commit to the throwaway table must now
   take its lock and succeed, then the table is dropped.

The metastore's Hadoop configuration (a core-site.xml on its classpath) reaches the S3
server: it creates the folders of databases and tables whose location is on s3a://.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from tests.services.jars import pyspark_jars_dir, s3a_jars
from tests.services.process import ServiceError, ServiceProcess, free_port

BOOTSTRAP_NAMESPACE = "icemaint_bootstrap"


@dataclass
class HiveMetastore:
    process: ServiceProcess
    uri: str  # thrift://127.0.0.1:<port>
    startup_s: float  # both phases and the bootstrap, end to end
    phase_s: tuple[float, float]  # each start until the port accepted connections

    def stop(self) -> None:
        self.process.stop()


def start_hive(folder: Path, *, hadoop: dict[str, str], timeout: float = 180.0) -> HiveMetastore:
    started = time.monotonic()
    folder.mkdir(parents=True, exist_ok=True)
    conf_dir = folder / "conf"
    conf_dir.mkdir(exist_ok=True)
    (conf_dir / "core-site.xml").write_text(_site_xml(hadoop))
    port = free_port()
    uri = f"thrift://127.0.0.1:{port}"

    first = _metastore(folder, conf_dir, port, in_test=True, name="hive-metastore-bootstrap")
    try:
        first_s = first.wait_for_port(port, timeout)
        _create_lock_tables(uri, folder)
    finally:
        first.stop()

    second = _metastore(folder, conf_dir, port, in_test=False, name="hive-metastore")
    try:
        second_s = second.wait_for_port(port, timeout)
        _check_locks_and_clean_up(uri)
    except BaseException:
        second.stop()
        raise
    return HiveMetastore(process=second, uri=uri, startup_s=time.monotonic() - started, phase_s=(first_s, second_s))


def _metastore(folder: Path, conf_dir: Path, port: int, *, in_test: bool, name: str) -> ServiceProcess:
    java = shutil.which("java") or "java"
    classpath = os.pathsep.join([str(conf_dir), str(pyspark_jars_dir() / "*"), *s3a_jars()])
    args = [
        java,
        "-Xmx512m",
        "-cp",
        classpath,
        "-Dhive.async.log.enabled=false",
        f"-Dhive.log.dir={folder / 'logs'}",
        f"-Dderby.stream.error.file={folder / 'derby.log'}",
        f"-Djavax.jdo.option.ConnectionURL=jdbc:derby:;databaseName={folder / 'metastore_db'};create=true",
        "-Ddatanucleus.schema.autoCreateAll=true",
        "-Dhive.metastore.schema.verification=false",
        f"-Dhive.metastore.warehouse.dir={(folder / 'wh').as_uri()}",
        # Iceberg rewrites the Hive columns on every schema change; let it.
        "-Dhive.metastore.disallow.incompatible.col.type.changes=false",
    ]
    if in_test:
        args.append("-Dhive.in.test=true")
    args += ["org.apache.hadoop.hive.metastore.HiveMetaStore", "-p", str(port)]
    return ServiceProcess(name, args, folder)


def _catalog(uri: str):  # type: ignore[no-untyped-def]
    from pyiceberg.catalog import load_catalog

    return load_catalog("hive-bootstrap", type="hive", uri=uri, **{"lock-check-retries": "2"})


def _throwaway_schema():  # type: ignore[no-untyped-def]
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField

    return Schema(NestedField(1, "x", LongType(), required=False))


def _create_lock_tables(uri: str, folder: Path) -> None:
    """Create a throwaway table and commit to it: the commit's lock request creates Hive's
    lock tables in test mode (and is refused there, which is expected)."""
    catalog = _catalog(uri)
    location = (folder / "bootstrap").as_uri()
    with contextlib.suppress(Exception):
        catalog.create_namespace(BOOTSTRAP_NAMESPACE, {"location": location})
    table = catalog.create_table(f"{BOOTSTRAP_NAMESPACE}.locks", _throwaway_schema(), location=f"{location}/locks")
    with contextlib.suppress(Exception):  # refused in test mode: "operationType=UNSET"
        table.transaction().set_properties({"icemaint.bootstrap": "1"}).commit_transaction()


def _check_locks_and_clean_up(uri: str) -> None:
    catalog = _catalog(uri)
    table = catalog.load_table(f"{BOOTSTRAP_NAMESPACE}.locks")
    try:
        table.transaction().set_properties({"icemaint.bootstrap": "2"}).commit_transaction()
    except Exception as exc:
        raise ServiceError(f"the Hive Metastore refuses Iceberg's locks after the bootstrap: {exc}") from exc
    catalog.drop_table(f"{BOOTSTRAP_NAMESPACE}.locks")
    catalog.drop_namespace(BOOTSTRAP_NAMESPACE)


def _site_xml(settings: dict[str, str]) -> str:
    props = "".join(f"  <property><name>{escape(k)}</name><value>{escape(v)}</value></property>\n" for k, v in sorted(settings.items()))
    return f'<?xml version="1.0"?>\n<configuration>\n{props}</configuration>\n'
