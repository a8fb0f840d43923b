"""icemaint's configuration: one YAML file describes each catalog once.

Both pyiceberg (metadata, planning, health) and Spark (the heavy jobs) are configured
from the same catalog entry, so they can never disagree about where a table lives.
With no file at all, the embedded default keeps everything under `$ICEMAINT_HOME`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from maintenance.errors import ConfigError
from maintenance.redact import is_secret_key, remember_secret, url_password

DEFAULT_HOME = ".icemaint"
DEFAULT_CATALOG = "local"
# The shipped policies: inside an installed package (pyproject.toml maps the repository's
# policies/ to maintenance/policies), else the repository's policies/ (a checkout, editable).
_PACKAGED_POLICIES = Path(str(resources.files("maintenance").joinpath("policies")))
REPO_POLICIES = _PACKAGED_POLICIES if _PACKAGED_POLICIES.is_dir() else Path(__file__).resolve().parent.parent / "policies"
CATALOG_TYPES = ("sql", "rest", "hive", "glue")
# Keys of a catalog entry that icemaint itself interprets; the rest pass through.
_CATALOG_OWN_KEYS = {"type", "uri", "warehouse", "properties", "spark", "pyiceberg", "metadata_reads"}
# How many of a catalog's tables an evaluation reads at once (`schedule/overlap.py`): reads
# from an object store wait on the network, so 8 overlap. Reads from a local disk are CPU
# work under Python's lock, which overlapping only contends for (1,000 tables: 8.3 s at 8,
# 5.9 s at 1, docs/benchmarks.md), and pyiceberg's Hive catalog shares one Thrift transport
# between calls: both read one table at a time unless the catalog entry says otherwise.
METADATA_READS = 8
MIN_TOKEN = 16  # characters of a shared secret readers send (`daemon.scan_reports_token`)
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True)
class CatalogConfig:
    """One catalog, as both pyiceberg and Spark will see it."""

    name: str
    type: str
    uri: str | None = None
    warehouse: str | None = None
    properties: Mapping[str, str] = field(default_factory=dict)
    spark_properties: Mapping[str, str] = field(default_factory=dict)
    pyiceberg_properties: Mapping[str, str] = field(default_factory=dict)
    metadata_reads: int = METADATA_READS  # tables whose metadata an evaluation reads at once
    # icemaint's own (the embedded default's `local`): the one SQL catalog whose tables it makes
    # when they are missing; in any other database only a writer of tables asks (`catalogs.py`)
    embedded: bool = False


@dataclass(frozen=True)
class SparkConfig:
    master: str = "local[*]"
    jars: tuple[str, ...] = ()
    packages: tuple[str, ...] = ()
    conf: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class HealthConfig:
    small_file_bytes: int = 32 * 1024 * 1024


@dataclass(frozen=True)
class LeaseConfig:
    """A job's lease lives ttl_seconds past its last heartbeat (one every ttl/3)."""

    ttl_seconds: float = 120.0


BUDGET_ORDERS = ("value", "triggers")  # `daemon.budget_order`'s words; `schedule/budget.py` spends by them


@dataclass(frozen=True)
class DaemonConfig:
    """How the scheduler runs: see README, Deployment."""

    interval_s: float = 60.0  # between evaluations of every table
    max_concurrent_jobs: int = 2  # across tables; one job per table at any time
    spark_idle_s: float = 300.0  # stop Spark after this long without a job
    shutdown_grace_s: float = 120.0  # on SIGTERM, let a running job finish this long, then cancel it
    metrics_port: int = 9464  # Prometheus /metrics and /healthz; 0 turns it off
    metrics_host: str = "0.0.0.0"
    metrics_tables: int = 100  # per-table metric series for at most this many tables (daemon/metrics.py); 0: none
    # readers' scan reports are taken on the HTTP port only with this secret (`readers/endpoint.py`)
    scan_reports_token: str | None = None
    # compute-seconds of job runs per hour (`run/compute.py`); due jobs beyond it wait, the best value first (`schedule/budget.py`); None: no budget
    budget_s: float | None = None
    budget_order: str = "value"  # one of BUDGET_ORDERS: by readers' value, or the planner's order (`schedule/budget.py`)


@dataclass(frozen=True)
class Config:
    home: Path
    default_catalog: str
    catalogs: Mapping[str, CatalogConfig]
    state_url: str
    spark: SparkConfig
    policies_dir: Path
    health: HealthConfig
    leases: LeaseConfig
    source: str  # the file it came from, or "embedded default"
    daemon: DaemonConfig = DaemonConfig()

    def catalog(self, name: str) -> CatalogConfig:
        from maintenance.errors import UnknownCatalogError

        try:
            return self.catalogs[name]
        except KeyError:
            known = ", ".join(sorted(self.catalogs)) or "none"
            raise UnknownCatalogError(f"unknown catalog '{name}' (configured: {known})") from None


def home_from_env(base_dir: Path | None = None) -> Path:
    """`$ICEMAINT_HOME`, else `.icemaint` in `base_dir`: the config file's folder when there is
    a file, so the state (leases, run history) of every command run with that config is the
    same wherever the shell stands (a cron job elsewhere must see the daemon's leases); the
    current folder only for the embedded default, which has no file."""
    configured = os.environ.get("ICEMAINT_HOME")
    if configured:
        return Path(configured).expanduser().resolve()
    return ((base_dir or Path.cwd()) / DEFAULT_HOME).resolve()


def find_config_path(explicit: str | None) -> Path | None:
    """--config, else $ICEMAINT_CONFIG, else ./icemaint.yaml if present, else None."""
    if explicit:
        return Path(explicit)
    env = os.environ.get("ICEMAINT_CONFIG")
    if env:
        return Path(env)
    local = Path("icemaint.yaml")
    return local if local.is_file() else None


def load_config(explicit_path: str | None = None) -> Config:
    path = find_config_path(explicit_path)
    if path is None:
        return embedded_default()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start} cannot be decoded)") from None
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ConfigError(f"{path}{where}: {problem}") from None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: the config must be a mapping, not {type(raw).__name__}")
    return parse_config(raw, source=str(path), base_dir=path.resolve().parent)


def embedded_default() -> Config:
    return parse_config({}, source="embedded default", base_dir=Path.cwd())


def parse_config(raw: Mapping[str, Any], *, source: str, base_dir: Path) -> Config:
    raw = _interpolate_env(raw, source)
    _reject_unknown(raw, {"home", "default_catalog", "catalogs", "state", "spark", "policies", "health", "leases", "daemon"}, source, "top level")
    home = Path(_text(raw["home"], source, "home")).expanduser() if raw.get("home") else home_from_env(base_dir)
    if not home.is_absolute():
        home = (base_dir / home).resolve()

    catalogs_raw = raw.get("catalogs")
    if catalogs_raw is None:
        catalogs = {DEFAULT_CATALOG: _embedded_catalog(home)}
    elif not isinstance(catalogs_raw, dict) or not catalogs_raw:
        raise ConfigError(f"{source}: 'catalogs' must be a non-empty mapping of name to catalog")
    else:
        catalogs = {str(name): _parse_catalog(str(name), entry, source, home) for name, entry in catalogs_raw.items()}

    default_catalog = _text(raw.get("default_catalog") or (DEFAULT_CATALOG if DEFAULT_CATALOG in catalogs else next(iter(catalogs))), source, "default_catalog")
    if default_catalog not in catalogs:
        raise ConfigError(f"{source}: default_catalog names no configured catalog (configured: {', '.join(sorted(catalogs))})")

    state = raw.get("state") or {}
    if not isinstance(state, dict):
        raise ConfigError(f"{source}: 'state' must be a mapping with a 'url'")
    _reject_unknown(state, {"url"}, source, "state")
    state_url = _url(state["url"], source, "state.url") if state.get("url") else f"sqlite:///{home / 'state.db'}"

    policies = Path(_text(raw["policies"], source, "policies")) if raw.get("policies") else REPO_POLICIES
    if not policies.is_absolute():
        policies = (base_dir / policies).resolve()

    return Config(
        home=home,
        default_catalog=default_catalog,
        catalogs=catalogs,
        state_url=state_url,
        spark=_parse_spark(raw.get("spark") or {}, source),
        policies_dir=policies,
        health=_parse_health(raw.get("health") or {}, source),
        leases=_parse_leases(raw.get("leases") or {}, source),
        source=source,
        daemon=_parse_daemon(raw.get("daemon") or {}, source),
    )


def _embedded_catalog(home: Path) -> CatalogConfig:
    return CatalogConfig(
        name=DEFAULT_CATALOG,
        type="sql",
        uri=f"sqlite:///{home / 'catalog.db'}",
        warehouse=(home / "warehouse").as_uri(),
        metadata_reads=default_metadata_reads("sql", (home / "warehouse").as_uri()),
        embedded=True,
    )


def _parse_catalog(name: str, entry: Any, source: str, home: Path) -> CatalogConfig:
    where = f"{source}: catalog '{name}'"
    if not isinstance(entry, dict):
        raise ConfigError(f"{where} must be a mapping")
    ctype = _text(entry.get("type", ""), source, f"catalogs.{name}.type").lower()
    if ctype not in CATALOG_TYPES:
        raise ConfigError(f"{where}: type must be one of {', '.join(CATALOG_TYPES)}")
    if ctype in ("sql", "rest") and not entry.get("uri"):
        raise ConfigError(f"{where}: a {ctype} catalog needs a 'uri'")
    for key in ("properties", "spark", "pyiceberg"):
        if entry.get(key) is not None and not isinstance(entry.get(key), dict):
            raise ConfigError(f"{where}: '{key}' must be a mapping")
    passthrough = {str(k): _text(v, source, f"catalogs.{name}.{k}") for k, v in entry.items() if k not in _CATALOG_OWN_KEYS}
    properties = {**passthrough, **_properties(entry.get("properties"), source, f"catalogs.{name}.properties")}
    warehouse = _text(entry["warehouse"], source, f"catalogs.{name}.warehouse") if entry.get("warehouse") else None
    if warehouse and ctype == "sql" and "://" not in warehouse:
        warehouse = Path(warehouse).expanduser().resolve().as_uri()
    return CatalogConfig(
        name=name,
        type=ctype,
        uri=_url(entry["uri"], source, f"catalogs.{name}.uri") if entry.get("uri") else None,
        warehouse=warehouse,
        properties=properties,
        spark_properties=_properties(entry.get("spark"), source, f"catalogs.{name}.spark"),
        pyiceberg_properties=_properties(entry.get("pyiceberg"), source, f"catalogs.{name}.pyiceberg"),
        metadata_reads=_metadata_reads(entry.get("metadata_reads"), ctype, warehouse, source, f"catalogs.{name}.metadata_reads"),
    )


def default_metadata_reads(ctype: str, warehouse: str | None) -> int:
    """A catalog's `metadata_reads` when its entry names none (`METADATA_READS`)."""
    on_local_disk = bool(warehouse) and (warehouse.startswith("file:") or "://" not in warehouse)  # type: ignore[union-attr]
    return 1 if ctype == "hive" or on_local_disk else METADATA_READS


def _metadata_reads(value: Any, ctype: str, warehouse: str | None, source: str, key: str) -> int:
    if value is None:
        return default_metadata_reads(ctype, warehouse)
    if isinstance(value, str) and value.strip().isdigit():  # from an environment reference
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 256:
        raise ConfigError(f"{source}: '{key}' must be a whole number from 1 to 256")
    return value


def _parse_spark(raw: Any, source: str) -> SparkConfig:
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: 'spark' must be a mapping")
    _reject_unknown(raw, {"master", "jars", "packages", "conf"}, source, "spark")
    conf = raw.get("conf") or {}
    if not isinstance(conf, dict):
        raise ConfigError(f"{source}: 'spark.conf' must be a mapping")
    return SparkConfig(
        master=_text(raw.get("master") or "local[*]", source, "spark.master"),
        jars=tuple(_string_list(raw.get("jars"), source, "spark.jars")),
        packages=tuple(_string_list(raw.get("packages"), source, "spark.packages")),
        conf=_properties(conf, source, "spark.conf"),
    )


def _parse_health(raw: Any, source: str) -> HealthConfig:
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: 'health' must be a mapping")
    _reject_unknown(raw, {"small_file_bytes"}, source, "health")
    value = _number(raw.get("small_file_bytes", HealthConfig.small_file_bytes))
    if not isinstance(value, int) or value <= 0:
        raise ConfigError(f"{source}: health.small_file_bytes must be a positive integer")
    return HealthConfig(small_file_bytes=value)


def _parse_leases(raw: Any, source: str) -> LeaseConfig:
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: 'leases' must be a mapping")
    _reject_unknown(raw, {"ttl_seconds"}, source, "leases")
    value = _number(raw.get("ttl_seconds", LeaseConfig.ttl_seconds))
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ConfigError(f"{source}: leases.ttl_seconds must be a positive number")
    return LeaseConfig(ttl_seconds=float(value))


def _parse_daemon(raw: Any, source: str) -> DaemonConfig:
    from maintenance.durations import parse_budget, parse_duration
    from maintenance.errors import UsageError

    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: 'daemon' must be a mapping")
    keys = {"interval": "interval_s", "spark_idle": "spark_idle_s", "shutdown_grace": "shutdown_grace_s"}
    _reject_unknown(raw, {*keys, "budget", "budget_order", "max_concurrent_jobs", "metrics_port", "metrics_host", "metrics_tables", "scan_reports_token"}, source, "daemon")
    values: dict[str, Any] = {}
    for key, attr in keys.items():
        if key in raw:
            try:
                values[attr] = parse_duration(raw[key])
            except UsageError:
                raise ConfigError(f"{source}: daemon.{key} must be a duration with a unit, such as 90s, 30m or 12h") from None
    if raw.get("budget") is not None:
        try:
            values["budget_s"] = parse_budget(raw["budget"])
        except UsageError:
            raise ConfigError(f"{source}: daemon.budget must be compute-seconds of job runs per hour, such as 600 or 10m") from None
    if raw.get("budget_order") is not None:
        if raw["budget_order"] not in BUDGET_ORDERS:
            raise ConfigError(f"{source}: daemon.budget_order must be one of {', '.join(BUDGET_ORDERS)}")
        values["budget_order"] = raw["budget_order"]
    for key, low in (("max_concurrent_jobs", 1), ("metrics_port", 0), ("metrics_tables", 0)):
        if key in raw:
            value = _number(raw[key])
            if isinstance(value, bool) or not isinstance(value, int) or value < low or value > 65535:
                raise ConfigError(f"{source}: daemon.{key} must be an integer of at least {low}")
            values[key] = value
    if "metrics_host" in raw:
        values["metrics_host"] = _text(raw["metrics_host"], source, "daemon.metrics_host")
    if raw.get("scan_reports_token") is not None:
        token = _text(raw["scan_reports_token"], source, "daemon.scan_reports_token")
        if len(token) < MIN_TOKEN:
            raise ConfigError(f"{source}: daemon.scan_reports_token must be at least {MIN_TOKEN} characters")
        values["scan_reports_token"] = token
    return DaemonConfig(**values)


def _number(value: Any) -> Any:
    """A number written as text, as `${VAR}` leaves it after substitution (`"9464"`), is the
    number; anything else is returned as it is, for the caller's own check."""
    if isinstance(value, str):
        text = value.strip()
        for kind in (int, float):
            try:
                return kind(text)
            except ValueError:
                continue
    return value


def _string_list(value: Any, source: str, key: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, list):
        raise ConfigError(f"{source}: '{key}' must be a list of strings")
    return [_text(v, source, key) for v in value]


def _text(value: Any, source: str, key: str) -> str:
    """A scalar setting as text; a list or mapping where one is expected is an error that
    names the key and never the value (it may hold a secret from the environment)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    raise ConfigError(f"{source}: {key} must be a string, not a {_kind(value)}")


def _properties(raw: Any, source: str, key: str) -> dict[str, str]:
    return {str(k): _text(v, source, f"{key}.{k}") for k, v in (raw or {}).items()}


def _url(value: Any, source: str, key: str) -> str:
    """A URL whose port, when it has one, is a number (said without repeating the URL)."""
    from urllib.parse import urlsplit

    text = _text(value, source, key)
    try:
        urlsplit(text).port
    except ValueError:
        raise ConfigError(f"{source}: {key} is not a valid URL: its port is not a number from 0 to 65535") from None
    return text


def _kind(value: Any) -> str:
    return {dict: "mapping", list: "list"}.get(type(value), type(value).__name__)


def _reject_unknown(raw: Mapping[str, Any], allowed: set[str], source: str, where: str) -> None:
    unknown = sorted(set(map(str, raw)) - allowed)
    if unknown:
        raise ConfigError(f"{source}: unknown key '{unknown[0]}' at {where} (allowed: {', '.join(sorted(allowed))})")


def _interpolate_env(value: Any, source: str, key: str = "") -> Any:
    """Replace ${VAR} and ${VAR:-default} so secrets can stay in the environment. Secrets are
    remembered for redaction (`redact.remember_secret`): the value of a key named like one,
    what a variable named like one brought in, and passwords in URLs."""
    if isinstance(value, dict):
        return {k: _interpolate_env(v, source, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_interpolate_env(v, source, key) for v in value]
    if isinstance(value, str):

        def substitute(match: re.Match[str]) -> str:
            name, default = match.group(1), match.group(2)
            if name in os.environ:
                found = os.environ[name]
            elif default is not None:
                found = default
            else:
                raise ConfigError(f"{source}: environment variable {name} is not set")
            if is_secret_key(name):
                remember_secret(found)
            return found

        text = _ENV_REF.sub(substitute, value)
        if is_secret_key(key):
            remember_secret(text)
        password = url_password(text)
        if password is not None:
            remember_secret(password)
        return text
    return value
