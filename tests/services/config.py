"""The icemaint config the catalog matrix runs with, written as a user would write it.

One YAML file names every catalog:
- `sql_local`: the SQL catalog on local files (the embedded default's kind);
- `hive_s3`: a Hive Metastore, tables on S3 under an `s3a://` warehouse;
- `rest_s3`: a REST catalog, tables on S3 under an `s3://` warehouse (the server decides).

S3 is reached the way the README tells users to: catalog `properties:` (to both pyiceberg
and Spark) carry pyiceberg's `s3.*` settings; the catalog's `spark:` section picks Iceberg's
HadoopFileIO for Spark; `spark.jars` adds hadoop-aws and the AWS SDK bundle; `spark.conf`
carries Hadoop's `spark.hadoop.fs.s3a.*` settings. Credentials come from the environment
(`${VAR}`), as secrets should.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.services.s3 import (
    ACCESS_KEY,
    REGION,
    SECRET_KEY,
    S3Server,
    hadoop_s3a_settings,
)

BUCKET = "icemaint-matrix"
HIVE_WAREHOUSE = f"s3a://{BUCKET}/hive"
REST_WAREHOUSE = f"s3://{BUCKET}/rest"
# The environment the CLI runs with: the config file names these variables, never the values.
CREDENTIALS_ENV = {"ICEMAINT_TEST_S3_ACCESS_KEY": ACCESS_KEY, "ICEMAINT_TEST_S3_SECRET_KEY": SECRET_KEY}
CATALOGS = ("sql_local", "hive_s3", "rest_s3")


def matrix_config(folder: Path, *, s3: S3Server, hive_uri: str, rest_uri: str, s3_jars: list[str], policies: Path | None = None, state_url: str | None = None) -> dict[str, Any]:
    s3_properties = {
        "s3.endpoint": s3.endpoint,
        "s3.access-key-id": "${ICEMAINT_TEST_S3_ACCESS_KEY}",
        "s3.secret-access-key": "${ICEMAINT_TEST_S3_SECRET_KEY}",
        "s3.region": REGION,
        "s3.force-virtual-addressing": False,  # path-style: http://endpoint/bucket/key
    }
    spark_catalog = {"io-impl": "org.apache.iceberg.hadoop.HadoopFileIO"}
    hadoop = {f"spark.hadoop.{k}": v for k, v in hadoop_s3a_settings(s3).items()}
    hadoop["spark.hadoop.fs.s3a.access.key"] = "${ICEMAINT_TEST_S3_ACCESS_KEY}"
    hadoop["spark.hadoop.fs.s3a.secret.key"] = "${ICEMAINT_TEST_S3_SECRET_KEY}"
    raw: dict[str, Any] = {
        "home": str(folder / "home"),
        "default_catalog": "sql_local",
        "catalogs": {
            "sql_local": {"type": "sql", "uri": f"sqlite:///{folder / 'catalog.db'}", "warehouse": str(folder / "warehouse")},
            "hive_s3": {"type": "hive", "uri": hive_uri, "warehouse": HIVE_WAREHOUSE, "properties": dict(s3_properties), "spark": dict(spark_catalog)},
            "rest_s3": {"type": "rest", "uri": rest_uri, "properties": dict(s3_properties), "spark": dict(spark_catalog)},
        },
        "state": {"url": state_url or f"sqlite:///{folder / 'state.db'}"},
        "spark": {"jars": list(s3_jars), "conf": hadoop},
    }
    if policies is not None:
        raw["policies"] = str(policies)
    return raw


def write_config(path: Path, raw: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path
