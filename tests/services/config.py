"""The icemaint config the catalog matrix runs with, written as a user would write it.

One YAML file names every catalog:
- `sql_local`: the SQL catalog on local files (the embedded default's kind);
- `rest_s3`: SeaweedFS's Iceberg REST catalog, tables on its S3 (the server decides where);
- `hive_s3`: a Hive Metastore, tables on S3 under an `s3a://` warehouse, read and written
  through Hadoop's s3a (`io-impl: HadoopFileIO`): the path for tables whose paths say s3a;
- `sql_s3`: the SQL catalog, tables on S3 under an `s3://` warehouse.

S3 is one setting: a catalog's `s3.*` properties (pyiceberg's names) configure pyiceberg,
Iceberg's S3FileIO in Spark and Hadoop's s3a alike; no jars, no `io-impl` and no
`spark.hadoop.*` in the config (but the one `io-impl` that picks s3a for `hive_s3`). The
REST catalog's `credential` is the S3 key pair, as SeaweedFS takes it. Credentials come
from the environment (`${VAR}`), as secrets should.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.services.s3 import ACCESS_KEY, REGION, SECRET_KEY, S3Server

BUCKET = "icemaint-matrix"
HIVE_WAREHOUSE = f"s3a://{BUCKET}/hive"
SQL_S3_WAREHOUSE = f"s3://{BUCKET}/sql"
# The environment the CLI runs with: the config file names these variables, never the values.
CREDENTIALS_ENV = {"ICEMAINT_TEST_S3_ACCESS_KEY": ACCESS_KEY, "ICEMAINT_TEST_S3_SECRET_KEY": SECRET_KEY}
CATALOGS = ("sql_local", "rest_s3", "hive_s3", "sql_s3")
HADOOP_FILE_IO = "org.apache.iceberg.hadoop.HadoopFileIO"


def s3_properties(s3: S3Server) -> dict[str, Any]:
    return {
        "s3.endpoint": s3.endpoint,
        "s3.access-key-id": "${ICEMAINT_TEST_S3_ACCESS_KEY}",
        "s3.secret-access-key": "${ICEMAINT_TEST_S3_SECRET_KEY}",
        "s3.region": REGION,
        "s3.force-virtual-addressing": False,  # path-style: http://endpoint/bucket/key
    }


def rest_catalog(s3: S3Server) -> dict[str, Any]:
    """A REST catalog as its users configure it: uri, warehouse, credential and s3.*."""
    return {"type": "rest", "uri": s3.rest_uri, "warehouse": s3.warehouse,
            "credential": "${ICEMAINT_TEST_S3_ACCESS_KEY}:${ICEMAINT_TEST_S3_SECRET_KEY}", "properties": s3_properties(s3)}


def matrix_config(folder: Path, *, s3: S3Server, hive_uri: str, policies: Path | None = None, state_url: str | None = None) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "home": str(folder / "home"),
        "default_catalog": "sql_local",
        "catalogs": {
            "sql_local": {"type": "sql", "uri": f"sqlite:///{folder / 'catalog.db'}", "warehouse": str(folder / "warehouse")},
            "rest_s3": rest_catalog(s3),
            "hive_s3": {"type": "hive", "uri": hive_uri, "warehouse": HIVE_WAREHOUSE, "properties": s3_properties(s3),
                        "spark": {"io-impl": HADOOP_FILE_IO}},
            "sql_s3": {"type": "sql", "uri": f"sqlite:///{folder / 'catalog-s3.db'}", "warehouse": f"{SQL_S3_WAREHOUSE}/{folder.name}",
                       "properties": s3_properties(s3)},
        },
        "state": {"url": state_url or f"sqlite:///{folder / 'state.db'}"},
    }
    if policies is not None:
        raw["policies"] = str(policies)
    return raw


def make_sql_catalogs(raw: dict[str, Any]) -> None:
    """The SQL catalogs' tables, as their writers (Spark's JDBC catalog, pyiceberg) make them
    before icemaint is pointed at them: icemaint makes none in a database it did not make."""
    from pyiceberg.catalog.sql import SqlCatalog

    for name, entry in raw["catalogs"].items():
        if entry["type"] == "sql":
            SqlCatalog(name, uri=entry["uri"], warehouse=entry["warehouse"]).engine.dispose()


def write_config(path: Path, raw: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path
