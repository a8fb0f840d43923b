"""Configuration: one catalog description rendered for pyiceberg and for Spark, secrets kept out."""

from __future__ import annotations

from pathlib import Path

import pytest

from maintenance.catalogs import pyiceberg_properties
from maintenance.config import parse_config
from maintenance.errors import ConfigError
from maintenance.redact import redact_mapping
from maintenance.spark.session import spark_conf


def test_embedded_default_shares_one_sqlite_catalog(tmp_path: Path) -> None:
    config = parse_config({"home": str(tmp_path)}, source="t", base_dir=tmp_path)
    local = config.catalog("local")
    assert pyiceberg_properties(local)["uri"] == f"sqlite:///{tmp_path / 'catalog.db'}"
    conf = spark_conf(config)
    assert conf["spark.sql.catalog.local.type"] == "jdbc"
    assert conf["spark.sql.catalog.local.uri"] == f"jdbc:sqlite:{tmp_path / 'catalog.db'}"
    assert conf["spark.sql.catalog.local.warehouse"] == (tmp_path / "warehouse").as_uri()
    assert conf["spark.sql.catalog.local.jdbc.init-catalog-tables"] == "false"
    assert config.state_url == f"sqlite:///{tmp_path / 'state.db'}"


def test_rest_hive_glue_pass_through_with_secrets_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAKE_TOKEN", "tok-123-secret")
    raw = {
        "default_catalog": "lake",
        "catalogs": {
            "lake": {"type": "rest", "uri": "https://rest.example", "warehouse": "s3://b/w", "token": "${LAKE_TOKEN}",
                     "properties": {"s3.endpoint": "http://minio:9000"}, "spark": {"io-impl": "org.apache.iceberg.aws.s3.S3FileIO"},
                     "pyiceberg": {"py-io-impl": "pyiceberg.io.fsspec.FsspecFileIO"}},
            "hms": {"type": "hive", "uri": "thrift://hms:9083"},
            "aws": {"type": "glue", "warehouse": "s3://b/glue"},
        },
        "spark": {"master": "spark://master:7077", "packages": ["org.apache.iceberg:iceberg-aws-bundle:1.10.2"], "conf": {"spark.executor.memory": "8g"}},
    }
    config = parse_config(raw, source="t", base_dir=tmp_path)
    conf = spark_conf(config)
    assert conf["spark.master"] == "spark://master:7077"
    assert conf["spark.jars.packages"] == "org.apache.iceberg:iceberg-aws-bundle:1.10.2"
    assert conf["spark.executor.memory"] == "8g"
    assert conf["spark.sql.catalog.lake.type"] == "rest" and conf["spark.sql.catalog.lake.token"] == "tok-123-secret"
    assert conf["spark.sql.catalog.lake.s3.endpoint"] == "http://minio:9000"
    assert conf["spark.sql.catalog.lake.io-impl"] == "org.apache.iceberg.aws.s3.S3FileIO"
    assert "spark.sql.catalog.lake.py-io-impl" not in conf
    assert conf["spark.sql.catalog.hms.type"] == "hive" and conf["spark.sql.catalog.hms.uri"] == "thrift://hms:9083"
    assert conf["spark.sql.catalog.aws.type"] == "glue"
    props = pyiceberg_properties(config.catalog("lake"))
    assert props["token"] == "tok-123-secret" and props["py-io-impl"] == "pyiceberg.io.fsspec.FsspecFileIO" and "io-impl" not in props
    assert "tok-123-secret" not in str(redact_mapping(conf))


def test_numbers_may_come_from_the_environment(tmp_path, monkeypatch) -> None:
    """`${VAR}` leaves text; a typed value reads that text as the number it spells."""
    monkeypatch.setenv("ICEMAINT_TEST_PORT", "9555")
    monkeypatch.setenv("ICEMAINT_TEST_TTL", "7.5")
    monkeypatch.setenv("ICEMAINT_TEST_SMALL", "1048576")
    raw = {"daemon": {"metrics_port": "${ICEMAINT_TEST_PORT}", "max_concurrent_jobs": "${ICEMAINT_TEST_JOBS:-3}", "metrics_tables": "${ICEMAINT_TEST_SERIES:-0}"},
           "leases": {"ttl_seconds": "${ICEMAINT_TEST_TTL}"}, "health": {"small_file_bytes": "${ICEMAINT_TEST_SMALL}"}}
    config = parse_config(raw, source="t.yaml", base_dir=tmp_path)
    assert (config.daemon.metrics_port, config.daemon.max_concurrent_jobs, config.daemon.metrics_tables) == (9555, 3, 0)
    assert config.leases.ttl_seconds == 7.5 and config.health.small_file_bytes == 1048576
    monkeypatch.setenv("ICEMAINT_TEST_PORT", "ninety")
    with pytest.raises(ConfigError, match="metrics_port must be an integer"):
        parse_config(raw, source="t.yaml", base_dir=tmp_path)


def test_the_scan_reports_token_is_a_secret_of_some_length(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Readers' shared token: off by default, redacted wherever it would show, and refused
    when too short to be a secret (an error that does not repeat it)."""
    from maintenance.redact import redact_text

    assert parse_config({}, source="t.yaml", base_dir=tmp_path).daemon.scan_reports_token is None
    monkeypatch.setenv("ICEMAINT_TEST_READERS", "readers-token-0123456789")
    config = parse_config({"daemon": {"scan_reports_token": "${ICEMAINT_TEST_READERS}"}}, source="t.yaml", base_dir=tmp_path)
    assert config.daemon.scan_reports_token == "readers-token-0123456789"
    assert redact_text("sent readers-token-0123456789") == "sent ***"
    with pytest.raises(ConfigError, match="scan_reports_token must be at least 16 characters") as refused:
        parse_config({"daemon": {"scan_reports_token": "short-secret"}}, source="t.yaml", base_dir=tmp_path)
    assert "short-secret" not in str(refused.value)


def test_metadata_reads_per_catalog_default_by_type_and_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """How many tables an evaluation reads at once (schedule/overlap.py): 8, Hive and local-disk
    warehouses 1 (pyiceberg's Hive client shares one Thrift transport; local reads are CPU work
    under Python's lock), or the catalog entry's own number."""
    monkeypatch.setenv("ICEMAINT_TEST_READS", "16")
    raw = {"catalogs": {"lake": {"type": "rest", "uri": "https://rest.example"}, "hms": {"type": "hive", "uri": "thrift://hms:9083"},
                        "s3": {"type": "rest", "uri": "https://rest.example", "metadata_reads": "${ICEMAINT_TEST_READS}"},
                        "hms4": {"type": "hive", "uri": "thrift://hms:9083", "metadata_reads": 4},
                        "disk": {"type": "sql", "uri": "sqlite:///c.db", "warehouse": "/data/w"},
                        "bucket": {"type": "sql", "uri": "sqlite:///c.db", "warehouse": "s3://b/w"}}}
    config = parse_config(raw, source="t.yaml", base_dir=tmp_path)
    assert {name: c.metadata_reads for name, c in config.catalogs.items()} == {"lake": 8, "hms": 1, "s3": 16, "hms4": 4, "disk": 1, "bucket": 8}
    assert parse_config({}, source="t", base_dir=tmp_path).catalog("local").metadata_reads == 1
    assert "metadata_reads" not in pyiceberg_properties(config.catalog("s3"))
    for bad in (0, "many", 1000, True):
        raw["catalogs"]["lake"]["metadata_reads"] = bad
        with pytest.raises(ConfigError, match="catalogs.lake.metadata_reads' must be a whole number from 1 to 256"):
            parse_config(raw, source="t.yaml", base_dir=tmp_path)


def test_with_a_config_file_the_state_lives_beside_it_wherever_the_shell_stands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A config naming neither `home` nor `state.url`, loaded from another folder: its home
    (and so the state database) is `.icemaint` beside the file, not in the current folder;
    `$ICEMAINT_HOME` still wins, and the embedded default (no file) keeps the current folder."""
    from maintenance.config import load_config

    folder = tmp_path / "etc"
    folder.mkdir()
    config_file = folder / "icemaint.yaml"
    config_file.write_text("leases:\n  ttl_seconds: 30\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.delenv("ICEMAINT_HOME", raising=False)
    monkeypatch.delenv("ICEMAINT_CONFIG", raising=False)

    config = load_config(str(config_file))

    assert config.home == folder / ".icemaint"
    assert config.state_url == f"sqlite:///{folder / '.icemaint' / 'state.db'}"
    assert load_config(None).home == elsewhere / ".icemaint"
    monkeypatch.setenv("ICEMAINT_HOME", str(tmp_path / "home"))
    assert load_config(str(config_file)).home == tmp_path / "home"


def test_catalogs_with_s3_settings_get_s3_file_io_and_s3a_without_jars_in_the_config(tmp_path: Path) -> None:
    """S3 is one setting: pyiceberg's `s3.*` names become Iceberg's Java ones (`client.region`,
    `s3.path-style-access`) and `ResolvingFileIO` (s3:// and s3a:// to S3FileIO) for Spark's
    catalog, Hadoop's s3a gets the same endpoint and keys for the warehouse's bucket, and the
    pinned Iceberg, AWS bundle and s3a jars are on the session's classpath; what the user sets
    in `spark:` wins; a catalog without S3 settings gets none of it."""
    raw = {"home": str(tmp_path), "catalogs": {
        "lake": {"type": "sql", "uri": f"sqlite:///{tmp_path / 'c.db'}", "warehouse": "s3://lake/wh",
                 "properties": {"s3.endpoint": "http://127.0.0.1:9", "s3.region": "eu-west-1", "s3.force-virtual-addressing": False,
                                "s3.access-key-id": "AK", "s3.secret-access-key": "SK"}},
        "hms": {"type": "hive", "uri": "thrift://127.0.0.1:9", "warehouse": "s3a://other/wh", "properties": {"s3.endpoint": "http://127.0.0.1:8"},
                "spark": {"io-impl": "org.apache.iceberg.hadoop.HadoopFileIO"}},
        "files": {"type": "sql", "uri": f"sqlite:///{tmp_path / 'f.db'}", "warehouse": str(tmp_path / "wh")},
    }}
    conf = spark_conf(parse_config(raw, source="tests", base_dir=tmp_path))
    lake = {k.removeprefix("spark.sql.catalog.lake."): v for k, v in conf.items() if k.startswith("spark.sql.catalog.lake.")}
    assert lake["io-impl"] == "org.apache.iceberg.io.ResolvingFileIO" and lake["client.region"] == "eu-west-1"
    assert lake["s3.path-style-access"] == "true" and lake["s3.endpoint"] == "http://127.0.0.1:9" and lake["s3.secret-access-key"] == "SK"
    assert conf["spark.sql.catalog.hms.io-impl"] == "org.apache.iceberg.hadoop.HadoopFileIO"
    assert not any(k.startswith("spark.sql.catalog.files.") and ("s3" in k or k.endswith("io-impl")) for k in conf)
    assert conf["spark.hadoop.fs.s3a.bucket.lake.endpoint"] == "http://127.0.0.1:9" and conf["spark.hadoop.fs.s3a.bucket.lake.secret.key"] == "SK"
    assert conf["spark.hadoop.fs.s3a.bucket.other.endpoint"] == "http://127.0.0.1:8"
    jars = conf["spark.jars"].split(",")
    assert [Path(j).name for j in jars[:2]] == ["iceberg-spark-runtime-3.5_2.12-1.11.0.jar", "iceberg-aws-bundle-1.11.0.jar"]
    assert {"hadoop-aws-3.3.4.jar", "aws-java-sdk-bundle-1.12.262.jar"} <= {Path(j).name for j in jars}


def test_two_catalogs_on_one_bucket_must_give_s3a_the_same_settings(tmp_path: Path) -> None:
    """s3a has one endpoint and one key pair per bucket: catalogs that share a bucket and
    disagree fail as a configuration error naming both (not: the later one wins silently);
    catalogs that agree, or that are on different buckets, are fine."""
    def catalog(warehouse: str, endpoint: str) -> dict[str, object]:
        return {"type": "sql", "uri": f"sqlite:///{tmp_path / 'c.db'}", "warehouse": warehouse,
                "properties": {"s3.endpoint": endpoint, "s3.secret-access-key": "SK"}}

    agreeing = {"home": str(tmp_path), "catalogs": {"a": catalog("s3://lake/a", "http://127.0.0.1:9"), "b": catalog("s3://lake/b", "http://127.0.0.1:9"),
                                                    "c": catalog("s3://other/c", "http://127.0.0.1:8")}}
    assert spark_conf(parse_config(agreeing, source="tests", base_dir=tmp_path))["spark.hadoop.fs.s3a.bucket.other.endpoint"] == "http://127.0.0.1:8"
    disagreeing = {"home": str(tmp_path), "catalogs": {"a": catalog("s3://lake/a", "http://127.0.0.1:9"), "b": catalog("s3a://lake/b", "http://127.0.0.1:8")}}
    with pytest.raises(ConfigError, match="catalogs 'a' and 'b' give Hadoop's s3a different 'endpoint' for bucket 'lake'"):
        spark_conf(parse_config(disagreeing, source="tests", base_dir=tmp_path))


def test_a_budget_is_seconds_an_hour_as_a_number_or_a_duration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`daemon.budget`: 600 (a number, also from `${VAR}`) or 10m; none by default; 0 or a
    word is a ConfigError naming the key."""
    monkeypatch.setenv("ICEMAINT_TEST_BUDGET", "900")
    budget = lambda value: parse_config({"daemon": {"budget": value}}, source="t.yaml", base_dir=tmp_path).daemon.budget_s  # noqa: E731
    assert parse_config({}, source="t.yaml", base_dir=tmp_path).daemon.budget_s is None
    assert (budget(600), budget("10m"), budget("${ICEMAINT_TEST_BUDGET}"), budget("1.5h")) == (600.0, 600.0, 900.0, 5400.0)
    for bad in (0, "0", "soon", "-5m"):
        with pytest.raises(ConfigError, match="daemon.budget must be compute-seconds of job runs per hour"):
            budget(bad)


def test_a_budget_order_is_value_or_triggers(tmp_path: Path) -> None:
    order = lambda value: parse_config({"daemon": {"budget_order": value}}, source="t.yaml", base_dir=tmp_path).daemon.budget_order  # noqa: E731
    assert parse_config({}, source="t.yaml", base_dir=tmp_path).daemon.budget_order == "value"
    assert (order("value"), order("triggers")) == ("value", "triggers")
    with pytest.raises(ConfigError, match="daemon.budget_order must be one of value, triggers"):
        order("cheapest")
