"""The one Spark session of a process, configured from icemaint's config.

Every catalog of the config becomes a Spark catalog of the same name, so `local.demo.t`
means the same table to pyiceberg and to Spark. Spark is started only when a job
needs it: health and planning never pay for a JVM.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

import structlog

from maintenance import interrupts
from maintenance.config import CatalogConfig, Config
from maintenance.errors import ConfigError, SparkJobError, SparkStartError, UsageError
from maintenance.redact import holds_secret, is_remembered_secret, redact_mapping, redact_text
from maintenance.spark import class_archive, jit, py4j_lookups
from maintenance.spark.errors import java_error_message
from maintenance.spark.jars import S3A, SPARK, SPARK_RUNTIME, jar, jars_for
from maintenance.spark.java_helpers import new_helper
from maintenance.timeouts import spark_catalog_timeouts, spark_hive_timeouts

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = structlog.get_logger(__name__)

SYSTEM_SQLITE_JDBC = "/usr/share/java/sqlite-jdbc.jar"
_SPARK_CATALOG_TYPES = {"sql": "jdbc", "rest": "rest", "hive": "hive", "glue": "glue"}
_LOG4J_CONFIG = Path(__file__).with_name("log4j2.properties")

# Iceberg's worker pool (manifest reads when planning, manifest filtering and writing when
# committing) defaults to one thread per core. That work waits on storage, not on the
# CPU: on object stores each manifest is a request, and on local disks without Hadoop's
# native library each file created forks a `chmod`. Measured on 2 cores (median of 5, 1M
# events unpartitioned): CONVERT 0.65 -> 0.57 s, MERGE 2.60 -> 2.33 s.
MIN_ICEBERG_WORKER_THREADS = 8

_lock = threading.Lock()
_session: SparkSession | None = None
_start_failure: str | None = None  # why the last start failed, until a start succeeds


def iceberg_runtime_jar() -> str:
    """Apache Iceberg's Spark 3.5 runtime, as `make setup` fetched it (`spark/jars.py`)."""
    return jar(SPARK_RUNTIME)


def jdbc_properties(uri: str) -> dict[str, str]:
    """A SQLAlchemy URL (as pyiceberg's SqlCatalog takes it) as Iceberg's JdbcCatalog wants it."""
    parts = urlsplit(uri)
    dialect = parts.scheme.split("+", 1)[0]
    if dialect == "sqlite":
        path = unquote(uri.split(":///", 1)[1]) if ":///" in uri else ""
        if not path.startswith("/"):
            path = str(Path(path).resolve())
        # Several processes (CLI, daemons, writers) share the file: in WAL mode readers never
        # block a writer, and a writer waits for another instead of failing with SQLITE_BUSY.
        return {"uri": f"jdbc:sqlite:{path}", "jdbc.journal_mode": "WAL", "jdbc.busy_timeout": "30000"}
    if dialect in ("postgresql", "mysql", "mariadb"):
        jdbc_dialect = {"postgresql": "postgresql", "mysql": "mysql", "mariadb": "mariadb"}[dialect]
        props = {"uri": f"jdbc:{jdbc_dialect}://{parts.hostname}{':' + str(parts.port) if parts.port else ''}{parts.path}"}
        if parts.username:
            props["jdbc.user"] = unquote(parts.username)
        if parts.password:
            props["jdbc.password"] = unquote(parts.password)
        return props
    raise ConfigError(f"sql catalog uri '{parts.scheme}://…' is not supported by Spark's JDBC catalog")


def catalog_spark_conf(catalog: CatalogConfig) -> dict[str, str]:
    prefix = f"spark.sql.catalog.{catalog.name}"
    conf = {prefix: "org.apache.iceberg.spark.SparkCatalog", f"{prefix}.type": _SPARK_CATALOG_TYPES[catalog.type]}
    conf.update({f"{prefix}.{key}": value for key, value in java_catalog_properties(catalog).items()})
    return conf


def java_catalog_properties(catalog: CatalogConfig) -> dict[str, str]:
    """The properties Iceberg's Java catalog of `catalog` is initialised with (all but its
    type): Spark's catalog, and the Flink writer's (`workload/flink_writer.py`), which must
    reach the same tables the same way."""
    props: dict[str, str] = dict(catalog.properties)
    if catalog.type == "sql":
        assert catalog.uri is not None
        props.update(jdbc_properties(catalog.uri))
        # The schema with view support, as pyiceberg's SqlCatalog creates it.
        props.setdefault("jdbc.schema-version", "V1")
        # pyiceberg creates the catalog tables before Spark starts (see _start). Iceberg 1.10's
        # own creation check leaks a ResultSet (apache/iceberg #15462), which on SQLite pins
        # an old read snapshot on a pooled connection: every later commit from this process
        # then fails with SQLITE_BUSY_SNAPSHOT once another process has committed.
        props.setdefault("jdbc.init-catalog-tables", "false")
    elif catalog.uri:
        props["uri"] = catalog.uri
    if catalog.warehouse:
        props["warehouse"] = catalog.warehouse
    props.update(s3_file_io_properties(catalog))
    props.update(spark_catalog_timeouts(catalog.type, props.get("uri"), {**catalog.properties, **catalog.spark_properties}))
    # Other writers commit all the time: a cached table up to 30 s stale could plan a job on
    # old metadata. (Iceberg's own remove_orphan_files on a stale cached table deletes live
    # files: benchmarks/orphans.py shows it.) Loading metadata is cheap next to any job.
    props.setdefault("cache-enabled", "false")
    # Manifests never change once written: the job's scan tasks, its commit (which rewrites
    # the manifests holding the files it removes) and the verification of the parent all
    # read the same ones, so Iceberg's manifest cache in the FileIO makes one read of each
    # (bounded in memory: 100 MiB, 60 s; tests/suites/test_manifest_reads.py counts the opens).
    props.setdefault("io.manifest.cache-enabled", "true")
    props.update(catalog.spark_properties)
    return props


def spark_conf(config: Config) -> dict[str, str]:
    """Every Spark setting icemaint starts its session with (contains secrets: never log raw)."""
    jars = jars_for(SPARK)
    if any(c.type == "sql" and (c.uri or "").startswith("sqlite") for c in config.catalogs.values()):
        jars.append(SYSTEM_SQLITE_JDBC)
    if any(_s3_settings(c) for c in config.catalogs.values()):
        jars.extend(jars_for(S3A))  # Hadoop's s3a://, for tables whose paths say so
    jars.extend(config.spark.jars)
    spark_log = config.home / "logs" / "spark.log"
    java_options = f"-Dlog4j2.configurationFile={_LOG4J_CONFIG.as_uri()} -Dicemaint.spark.log={spark_log}"
    if "iceberg.worker.num-threads" not in config.spark.conf.get("spark.driver.extraJavaOptions", ""):
        java_options += f" -Diceberg.worker.num-threads={iceberg_worker_threads()}"
    conf: dict[str, str] = {
        "spark.master": config.spark.master,
        "spark.app.name": "icemaint",
        "spark.jars": ",".join(jars),
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "16",
        # Sorted and z-ordered rewrites cut rows into key ranges from a sample: Spark's 100
        # keys per range left files of 4,180 to 4,820 rows for 4,500 (7%); the sample is
        # keys only, a few hundred KiB at most.
        "spark.sql.execution.rangeExchange.sampleSizePerPartition": "1000",
        "spark.sql.session.timeZone": "UTC",
    }
    if config.spark.packages:
        conf["spark.jars.packages"] = ",".join(config.spark.packages)
    for catalog in config.catalogs.values():
        conf.update(catalog_spark_conf(catalog))
    if any(c.type == "hive" for c in config.catalogs.values()):
        conf.update(spark_hive_timeouts())
    conf.update(s3a_conf(config))
    conf.update(config.spark.conf)
    if "spark.jars" in config.spark.conf:
        conf["spark.jars"] = ",".join([*jars, config.spark.conf["spark.jars"]])
    users_options = config.spark.conf.get("spark.driver.extraJavaOptions", "")
    java_options += f" {class_archive.java_option(users_options)}"  # the JVM's classes mapped, not loaded: `spark/class_archive.py`
    java_options += f" {jit.java_option()}"  # C2 takes only what is really hot early: `spark/jit.py`
    conf["spark.driver.extraJavaOptions"] = f"{java_options} {users_options}".strip()
    return conf


# S3 is one setting: a catalog's pyiceberg `s3.*` properties configure Iceberg's S3FileIO
# (Spark's driver and, through the table it serialises, its executors) and Hadoop's s3a.
# Iceberg's Java S3FileIO takes the same keys but for these two, which pyiceberg spells its own way.
_S3_FILE_IO_ALIASES = {"s3.region": "client.region"}
# Resolves each path by its scheme: s3://, s3a://, s3n:// to S3FileIO, others (local files,
# hdfs://) to HadoopFileIO; what a REST catalog's client uses unless told otherwise.
RESOLVING_FILE_IO = "org.apache.iceberg.io.ResolvingFileIO"

# pyiceberg's (and Iceberg's) S3 properties -> Hadoop's s3a settings.
_S3A_KEYS = {
    "s3.endpoint": "endpoint",
    "s3.region": "endpoint.region",
    "s3.access-key-id": "access.key",
    "s3.secret-access-key": "secret.key",
    "s3.session-token": "session.token",
    "s3.path-style-access": "path.style.access",
}
# A store that cannot be reached fails within about half a minute (Hadoop's defaults retry
# for minutes: 20 SDK attempts, 7 s3a retries): connect in 5 s, 2 attempts, 1 retry.
S3A_BOUNDED = {
    "spark.hadoop.fs.s3a.connection.establish.timeout": "5000",
    "spark.hadoop.fs.s3a.attempts.maximum": "2",
    "spark.hadoop.fs.s3a.retry.limit": "1",
    "spark.hadoop.fs.s3a.retry.throttle.limit": "3",
}


def check_spark_settings(config: Config) -> None:
    """What Spark will be told of the catalogs, worked out without a JVM, so that a
    configuration Spark cannot take (a SQL catalog's database Iceberg's JDBC catalog does not
    support, two catalogs giving one bucket different s3a settings) is a ConfigError before
    any job (exit 2), not a failed job once Spark starts. Jars are not looked for: planning
    needs none."""
    for catalog in config.catalogs.values():
        catalog_spark_conf(catalog)
    s3a_conf(config)


def s3a_conf(config: Config) -> dict[str, str]:
    """Hadoop's `s3a` settings from each catalog's `s3.*` properties (endpoint, region,
    path-style access, credentials): for the warehouse's bucket when the catalog names one
    (`fs.s3a.bucket.<bucket>.*`, so catalogs on different stores do not collide), else for
    every bucket. `spark.conf` still overrides any of them. Nothing when no catalog has S3
    properties. s3a has one setting per bucket: two catalogs on one bucket that set it
    differently are a configuration error (either would win silently, by their order)."""
    conf: dict[str, str] = {}
    set_by: dict[str, str] = {}
    for catalog in config.catalogs.values():
        props = _s3_settings(catalog)
        settings = {key: props[name] for name, key in _S3A_KEYS.items() if props.get(name)}
        if _path_style(props):
            settings.setdefault("path.style.access", "true")
        if not settings:
            continue
        if settings.get("endpoint", "").startswith("http://"):
            settings["connection.ssl.enabled"] = "false"
        if "access.key" in settings:
            provider = "TemporaryAWSCredentialsProvider" if "session.token" in settings else "SimpleAWSCredentialsProvider"
            settings["aws.credentials.provider"] = f"org.apache.hadoop.fs.s3a.{provider}"
        bucket = _s3_bucket(catalog.warehouse)
        prefix = f"spark.hadoop.fs.s3a.bucket.{bucket}." if bucket else "spark.hadoop.fs.s3a."
        for key, value in settings.items():
            if conf.get(prefix + key, value) != value:
                raise ConfigError(f"catalogs {set_by[prefix + key]!r} and {catalog.name!r} give Hadoop's s3a different {key!r} for "
                                  f"{'bucket ' + repr(bucket) if bucket else 'every bucket'}: make them agree")
            conf[prefix + key], set_by[prefix + key] = value, catalog.name
        conf.update({"spark.hadoop.fs.s3.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem", **S3A_BOUNDED})
    return conf


def _s3_settings(catalog: CatalogConfig) -> dict[str, str]:
    """The catalog's `s3.*` properties, for Spark (its `spark:` section wins)."""
    props = {**catalog.properties, **catalog.spark_properties}
    return {key: str(value) for key, value in props.items() if key.startswith("s3.") and value not in (None, "")}


def _path_style(props: Mapping[str, str]) -> bool:
    """pyiceberg says `s3.force-virtual-addressing: false`, Iceberg's Java `s3.path-style-access: true`."""
    return str(props.get("s3.force-virtual-addressing", "")).lower() == "false" or str(props.get("s3.path-style-access", "")).lower() == "true"


def s3_file_io_properties(catalog: CatalogConfig) -> dict[str, str]:
    """What Iceberg's Java catalog needs on top of a catalog's pyiceberg-style `s3.*`
    properties to read and write through S3FileIO: the region and path-style access under
    their Java names, and a FileIO that sends s3:// paths to S3FileIO where the catalog's
    own default (HadoopFileIO, for SQL and Hive catalogs) would send them to Hadoop. Nothing
    the user set is overridden, nothing is added for a catalog without S3 settings."""
    props = _s3_settings(catalog)
    if not props:
        return {}
    given = {**catalog.properties, **catalog.spark_properties}
    java: dict[str, str] = {}
    for name, java_name in _S3_FILE_IO_ALIASES.items():
        if props.get(name) and java_name not in given:
            java[java_name] = props[name]
    if _path_style(props) and "s3.path-style-access" not in given:
        java["s3.path-style-access"] = "true"
    if "io-impl" not in given:
        java["io-impl"] = RESOLVING_FILE_IO
    return java


def _s3_bucket(warehouse: str | None) -> str | None:
    parts = urlsplit(warehouse or "")
    return parts.netloc or None if parts.scheme in ("s3", "s3a", "s3n") else None


def iceberg_worker_threads() -> int:
    """Threads of Iceberg's worker pool in the driver (`MIN_ICEBERG_WORKER_THREADS`, or one per core where there are more)."""
    return max(MIN_ICEBERG_WORKER_THREADS, os.cpu_count() or 1)


def get_spark(config: Config) -> SparkSession:
    """The process's Spark session, started on first use. A start that fails raises a
    SparkStartError in one line (a ConfigError stays one) and is remembered until a start
    succeeds (`spark_start_failure`)."""
    global _session, _start_failure
    with _lock:
        if _session is None or not _session_alive(_session):
            try:
                _session = _start(config)
            except ConfigError as exc:
                _start_failure = str(exc)
                raise
            except Exception as exc:
                _start_failure = str(exc) if isinstance(exc, SparkJobError) else java_error_message(exc)
                raise SparkStartError(_start_failure) from exc
            _start_failure = None
        make_active_in_this_thread(_session)
        return _session


def spark_start_failure() -> str | None:
    """Why Spark last failed to start in this process, or None once it has started (or never
    tried): the daemon learns from it that a job's Spark, not its table, failed."""
    return _start_failure


def make_active_in_this_thread(session: SparkSession) -> None:
    """Spark resolves settings through the JVM thread's active session. Only the thread that
    created the session has one; in another (a daemon worker) a catalog loaded for the
    first time reads an empty configuration: "spark.sql.catalog.default_cache_iceberg is
    not defined" when two MERGEs started at once."""
    session._jvm.org.apache.spark.sql.SparkSession.setActiveSession(session._jsparkSession)  # type: ignore[attr-defined]


def spark_running() -> bool:
    return _session is not None


def stop_spark() -> None:
    """Stop Spark (the daemon does this when idle, to give the memory back)."""
    global _session
    with _lock:
        if _session is not None:
            _session.stop()
            _session = None


def stop_jvm(timeout_s: float = 120.0) -> None:
    """Stop Spark, then its JVM, and wait until the JVM has exited: it exits when its stdin
    closes (PySpark's gateway server reads it to notice its Python is gone), and only at
    exit does it finish what it does then (the class archive, `spark/class_archive.py`)."""
    from pyspark import SparkContext

    stop_spark()
    gateway = SparkContext._gateway
    if gateway is None:
        return
    process = getattr(gateway, "proc", None)
    gateway.shutdown()
    SparkContext._gateway = SparkContext._jvm = None  # type: ignore[assignment]
    if process is not None:
        if process.stdin is not None:
            process.stdin.close()
        process.wait(timeout=timeout_s)


def _session_alive(session: SparkSession) -> bool:
    try:
        return not session.sparkContext._jsc.sc().isStopped()  # type: ignore[union-attr]
    except Exception:
        return False


def _start(config: Config) -> SparkSession:
    from pyspark.sql import SparkSession

    from maintenance.catalogs import get_catalog

    (config.home / "logs").mkdir(parents=True, exist_ok=True)
    for catalog in config.catalogs.values():
        if catalog.type == "sql":
            # Spark's JDBC catalog is told not to create its tables (Iceberg's creation check
            # leaks a ResultSet on SQLite): the embedded default's are made here when missing;
            # any other SQL catalog must have them, else this is a configuration error.
            get_catalog(config, catalog.name)
    conf = spark_conf(config)
    log.info("starting spark", master=config.spark.master, conf=redact_mapping(_catalog_keys(conf)))
    if config.spark.master.startswith("local") and "SPARK_LOCAL_IP" not in os.environ:
        # A local driver binds to loopback instead of guessing a public interface.
        os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    log.debug("py4j lookups kept", kept=py4j_lookups.install())  # `spark/py4j_lookups.py`: each name resolved once per JVM
    at_start, after_start = split_secrets(conf)
    builder = SparkSession.builder
    for key, value in at_start.items():
        builder = builder.config(key, value)
    with _environment_without_secrets():
        _launch_jvm(config, at_start)
        session = builder.getOrCreate()
    interrupts.reinstall()  # PySpark's SIGINT handler calls the JVM from inside the handler
    _apply_secrets(session, after_start)
    _local_disks_without_forks(session)
    _prompt_delete_loads(session)
    return session


def _launch_jvm(config: Config, at_start: Mapping[str, str]) -> None:
    """The driver's JVM, once per process, its stdout and stderr in `logs/spark-jvm.err` rather
    than the terminal (the JVM says why it cannot start on stdout): a JVM that cannot start (a heap too small, a bad option) is one line saying why,
    where PySpark says only JAVA_GATEWAY_EXITED and the cause is raw stderr. PySpark's own
    start (`SparkContext._ensure_initialized`) launches the gateway the same way, from the
    same settings, and uses one that is already there; a restarted session reuses the JVM."""
    from pyspark import SparkConf, SparkContext
    from pyspark.errors import PySparkRuntimeError
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None:
        return
    errors = config.home / "logs" / "spark-jvm.err"
    with errors.open("ab") as stderr:
        start = stderr.seek(0, os.SEEK_END)
        try:
            gateway = launch_gateway(SparkConf().setAll(list(at_start.items())), popen_kwargs={"stdout": stderr, "stderr": stderr})
        except PySparkRuntimeError as exc:
            raise SparkJobError(f"Spark's JVM did not start: {_jvm_start_error(errors, start)} (its output: {errors})") from exc
    SparkContext._gateway, SparkContext._jvm = gateway, gateway.jvm


def _jvm_start_error(errors: Path, start: int) -> str:
    """What a JVM that exited at start said: its last lines but the JVM's generic preface."""
    with errors.open("rb") as read:
        read.seek(start)
        lines = [line.strip() for line in read.read().decode(errors="replace").splitlines() if line.strip()]
    said = [line for line in lines if line != "Error occurred during initialization of VM"]
    return redact_text("; ".join(said[-2:])) if said else "it exited without a word"


def split_secrets(conf: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """The settings Spark starts with, and the secret ones it gets once it runs.

    PySpark starts its JVM with every setting as a `--conf` argument of `spark-submit`, which
    any user of the machine can read in the process list for as long as the JVM lives. So a
    setting that carries a secret (by its key's name or a secret value: credentials,
    passwords, S3 keys) and that Spark reads only after it started is held back: a catalog's
    (`spark.sql.catalog.*`: Spark builds a catalog when it is first used, from the session's
    SQL settings, which `_apply_secrets` sets before any) and Hadoop's (`spark.hadoop.*`:
    set in the driver's Hadoop configuration, which file reads and Iceberg's FileIO, on the
    driver and serialised to executors, copy). Any other secret setting cannot wait and
    stays at start: a warning names its key."""
    at_start, after_start = {}, {}
    for key, value in conf.items():
        if not holds_secret(key, value):
            at_start[key] = value
        elif key.startswith(("spark.sql.catalog.", "spark.hadoop.")):
            after_start[key] = value
        else:
            log.warning("a Spark setting holding a secret must be set at start: it is visible in the JVM's command line", key=key)
            at_start[key] = value
    return at_start, after_start


def _apply_secrets(session: SparkSession, settings: Mapping[str, str]) -> None:
    hadoop = session._jsc.hadoopConfiguration()  # type: ignore[attr-defined]
    for key, value in settings.items():
        if key.startswith("spark.hadoop."):
            hadoop.set(key.removeprefix("spark.hadoop."), value)
        else:
            session.conf.set(key, value)


@contextmanager
def _environment_without_secrets() -> Iterator[None]:
    """The JVM inherits this process's environment (its `/proc/PID/environ`): variables whose
    value is a secret the configuration read through `${VAR}` are left out of it."""
    hidden = {name: value for name, value in os.environ.items() if is_remembered_secret(value)}
    for name in hidden:
        del os.environ[name]
    try:
        yield
    finally:
        os.environ.update(hidden)


def _prompt_delete_loads(session: SparkSession) -> None:
    """Iceberg's merge-on-read reads in this JVM without a sleep of 10 ms per data file
    (`java/PromptDeleteLoads.java` says why, what it changes and what it cannot). In this
    JVM only: with `local` Spark that is every read; on a cluster, the executors' own JVMs
    keep Iceberg's pool as it is. Never fails the session: reads are only slower without it."""
    try:
        outcome = str(new_helper(session, "PromptDeleteLoads").install())
    except Exception as exc:  # noqa: BLE001 (an optimisation: its absence is logged, not fatal)
        outcome = f"not installed: {type(exc).__name__}"
    log.debug("prompt delete loads", outcome=outcome)


def _local_disks_without_forks(session: SparkSession) -> None:
    """Files written to local disks are created without forking a process. Without Hadoop's
    native library (no distribution ships it for pip installs) Hadoop's local file system
    forks a `chmod` for every file and folder it creates, and a second one for the `.crc`
    sidecar it writes beside each file.

    - No sidecars: only Hadoop's local file system itself reads them (object stores and HDFS
      never had them); those already written are still verified when read (CONVERT of 1M
      events, unpartitioned, median of 5 on 2 cores: 0.76 -> 0.65 s; forks 221 -> 109).
    - Permissions through java.nio (`java/NioLocalFileSystem.java`) in place of the raw file
      system inside the local one: the forks that were left (a MERGE commit of 1M events,
      unpartitioned, that rewrote 100 manifests: 345 -> 128 ms, medians of 7 on 2 cores).

    The local file system is one cached instance per JVM, shared by Spark's writers and
    Iceberg's FileIO, so changing it once here covers every local write."""
    jvm = session._jvm  # type: ignore[attr-defined]
    hadoop_conf = session._jsc.hadoopConfiguration()  # type: ignore[attr-defined]
    local = jvm.org.apache.hadoop.fs.FileSystem.getLocal(hadoop_conf)
    local.setWriteChecksum(False)
    raw = new_helper(session, "NioLocalFileSystem")
    raw.initialize(local.getRawFileSystem().getUri(), hadoop_conf)
    inner = jvm.org.apache.hadoop.fs.FilterFileSystem._java_lang_class.getDeclaredField("fs")  # protected, no setter
    inner.setAccessible(True)
    inner.set(local, raw)


def _catalog_keys(conf: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in conf.items() if k.startswith("spark.sql.catalog.")}


@contextmanager
def session_settings(session: SparkSession, settings: Mapping[str, str]) -> Iterator[None]:
    """Runtime Spark SQL settings for one job (a policy's `spark:`); the session's own come
    back afterwards. Settings that only take effect at start-up are refused in one line."""
    conf = session.conf
    previous: dict[str, str | None] = {}
    try:
        for key, value in settings.items():
            if not conf.isModifiable(key):
                raise UsageError(f"Spark setting {key} cannot change in a running session; set it in the config's spark.conf")
            previous[key] = conf.get(key, None)
            conf.set(key, value)
        yield
    finally:
        for key, value in previous.items():
            if value is None:
                conf.unset(key)
            else:
                conf.set(key, value)
