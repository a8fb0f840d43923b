"""No secret in any output, ever: secrets planted through `${VAR}` in every config field that
can hold one, then every output and log file of failing and succeeding runs searched for them.

Failing runs: a wrongly typed key in every section of the config (some of them holding a
secret themselves), each run as a user would (`icemaint --config ... plan`): exit 2, one
line on stderr naming the key, and no secret anywhere. Succeeding runs: a table written,
its health, a plan, a verified job and a dry run, with logging at debug on stderr.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from sqlalchemy import create_engine
from sqlalchemy import text as sql
from sqlalchemy.engine import make_url

from tests.conftest import POSTGRES_ADMIN_URL, new_state_url
from tests.support.cli import assert_one_line_error
from tests.support.paths import REPO
from tests.support.proc_tree import run_watching

POSTGRES_JDBC = Path("/usr/share/java/postgresql.jar")  # Debian's libpostgresql-jdbc-java
SECRETS = {name: f"Sekr1t-{name}-{uuid.uuid4().hex[:12]}" for name in ("CATCRED", "CAT_TOKEN", "S3SECRET", "S3KEYID", "SPARKPW", "PYTOKEN", "STATEPW", "S3A_SECRET", "CATPW")}


@pytest.fixture(scope="module")
def state_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A PostgreSQL state database (trust authentication: the planted password is sent and ignored)."""
    for url in new_state_url("postgresql", tmp_path_factory.mktemp("state")):
        yield url.replace("postgres@", "postgres:${STATEPW}@", 1)


def secret_config(home: Path, state_url: str) -> dict:  # type: ignore[type-arg]
    return {
        "home": str(home),
        "catalogs": {
            "local": {
                "type": "sql",
                "uri": f"sqlite:///{home / 'catalog.db'}",
                "warehouse": str(home / "warehouse"),
                "credential": "${CATCRED}",
                "token": "${CAT_TOKEN}",
                "properties": {"s3.secret-access-key": "${S3SECRET}", "s3.access-key-id": "${S3KEYID}"},
                "spark": {"rest.auth.basic.password": "${SPARKPW}"},
                "pyiceberg": {"oauth2-server-token": "${PYTOKEN}"},
            }
        },
        "state": {"url": state_url},
        "spark": {"master": "local[2]", "conf": {"spark.hadoop.fs.s3a.secret.key": "${S3A_SECRET}"}},
        "leases": {"ttl_seconds": 30},
    }


def run(config_path: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **SECRETS, "ICEMAINT_HOME": str(home)}
    env.pop("ICEMAINT_CONFIG", None)
    return subprocess.run([sys.executable, "-m", "maintenance", "--config", str(config_path), *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.slow  # a Spark job through the CLI: make test-integration runs it
def test_no_secret_in_any_process_command_line_or_environment_during_a_job(tmp_path: Path, state_url: str) -> None:
    """A verified MERGE as a user runs it (Spark's JVM started, catalog, S3 and JDBC secrets
    in the config): /proc/*/cmdline of the whole process tree, and the environment of every
    process below the CLI, polled while it runs, hold none of them."""
    assert_no_secret_in_process_listings_during_a_merge(tmp_path, secret_config(tmp_path, state_url))


@pytest.fixture
def catalog_role(tmp_path: Path) -> Iterator[str]:
    """A PostgreSQL database for a SQL catalog, owned by a login role of its own with a
    password (trust authentication on 127.0.0.1 accepts any: the password is still sent, and
    passed to Spark's JDBC catalog as its `jdbc.password`); the catalog's uri, password `${CATPW}`."""
    role = f"icemaint_cat_{uuid.uuid4().hex[:8]}"
    admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sql(f"CREATE ROLE {role} LOGIN PASSWORD '{SECRETS['CATPW']}'"))
    try:
        for url in new_state_url("postgresql", tmp_path):
            database = make_url(url).database
            with admin.connect() as conn:
                conn.execute(sql(f"ALTER DATABASE {database} OWNER TO {role}"))
            yield make_url(url).set(username=role, password=None).render_as_string().replace(f"{role}@", f"{role}:${{CATPW}}@", 1)
    finally:
        with admin.connect() as conn:
            conn.execute(sql(f"DROP ROLE IF EXISTS {role}"))
        admin.dispose()


@pytest.mark.slow  # a Spark job through the CLI: make test-integration runs it
def test_no_jdbc_catalog_password_in_any_process_listing_during_a_job(tmp_path: Path, state_url: str, catalog_role: str) -> None:
    """The same on a SQL catalog on PostgreSQL whose uri holds a password: Spark's JDBC
    catalog gets it as `jdbc.password`, which must reach the JVM neither as a `--conf` on its
    command line nor through its environment."""
    assert POSTGRES_JDBC.exists(), f"{POSTGRES_JDBC} is missing: scripts/setup-databases.sh installs it (make setup)"
    raw = secret_config(tmp_path, state_url)
    raw["catalogs"]["local"]["uri"] = catalog_role
    raw["spark"]["jars"] = [str(POSTGRES_JDBC)]  # as a user names the driver of their catalog's database
    assert_no_secret_in_process_listings_during_a_merge(tmp_path, raw)


def assert_no_secret_in_process_listings_during_a_merge(home: Path, raw: dict) -> None:  # type: ignore[type-arg]
    """A table written, then a verified MERGE on it watched: no secret in any command line of
    the whole process tree, nor in the environment of a process below the CLI."""
    config_path = home / "icemaint.yaml"
    config_path.write_text(yaml.safe_dump(raw))
    made = run(config_path, home, "workload", "cdc", "demo.orders", "--rows", "400", "--commits", "3", "--json")
    assert made.returncode == 0, made.stderr[-2000:]
    env = {**os.environ, **SECRETS, "ICEMAINT_HOME": str(home)}
    env.pop("ICEMAINT_CONFIG", None)
    seen_jvm = False
    found: set[str] = set()

    def watch(pid: int, below: list[int]) -> None:
        nonlocal seen_jvm
        seen_jvm = seen_jvm or any(b"java" in (Path("/proc") / str(p) / "cmdline").read_bytes() for p in below if (Path("/proc") / str(p)).exists())
        found.update(secrets_in_process_listings_once(pid, below, raw))

    returncode, out, err = run_watching([sys.executable, "-m", "maintenance", "--config", str(config_path), "merge", "demo.orders", "--json"], env, REPO, watch)
    assert returncode == 0, err[-2000:]
    assert json.loads(out)["status"] == "committed", out
    assert seen_jvm, "the job's JVM was never seen: the scan proved nothing"
    assert sorted(found) == [], sorted(found)


def secrets_in_process_listings_once(pid: int, below: list[int], raw: dict) -> set[str]:  # type: ignore[type-arg]
    """Any secret in the command line of `pid` or a process below it, and any secret the
    configuration `raw` reads (`${VAR}`) in the environment of a process below it. (`pid`'s own
    environment is what the caller gave it; a variable the configuration never names is the
    user's environment, which the JVM may need, e.g. for AWS's default credentials chain.)"""
    text_of_config = json.dumps(raw)
    configured = {name: value for name, value in SECRETS.items() if f"${{{name}}}" in text_of_config}
    found: set[str] = set()
    for process in [pid, *below]:
        own_environment = process == pid or is_fork_not_yet_exec(process, pid)
        for name, secrets in [("cmdline", SECRETS), *([] if own_environment else [("environ", configured)])]:
            try:
                text_read = (Path("/proc") / str(process) / name).read_bytes().decode(errors="replace")
            except OSError:
                continue
            found.update(f"{secret} in /proc/{process}/{name}" for secret, value in secrets.items() if value in text_read)
    return found


def is_fork_not_yet_exec(process: int, parent: int) -> bool:
    """A child `parent` forked that has not yet called exec (Python's Popen with a preexec_fn
    forks, runs it, then execs): it is a copy of the parent's memory, so its
    `/proc/PID/environ` (the environment block the parent was started with, which unsetenv
    does not erase) is the caller's own, like the parent's. Once it execs, its environment is
    what it was given and is searched."""
    try:
        proc = Path("/proc")
        return (os.readlink(proc / str(process) / "exe") == os.readlink(proc / str(parent) / "exe")
                and (proc / str(process) / "cmdline").read_bytes() == (proc / str(parent) / "cmdline").read_bytes())
    except OSError:
        return False


def assert_no_secret(proc: subprocess.CompletedProcess[str], home: Path) -> None:
    texts = {"stdout": proc.stdout, "stderr": proc.stderr}
    for log in (home / "logs").glob("*"):
        texts[str(log)] = log.read_text(errors="replace")
    for where, text in texts.items():
        for name, value in SECRETS.items():
            assert value not in text, f"the secret {name} appears in {where}"


# Each replaces one key of the valid config with a wrongly typed value; the error must name the key.
WRONG = [
    ("home", ["home"], ["/var/lib/icemaint"]),
    ("policies", ["policies"], ["/etc/icemaint"]),
    ("default_catalog", ["default_catalog"], ["local"]),
    ("catalogs.local.type", ["catalogs", "local", "type"], ["sql"]),
    ("catalogs.local.warehouse", ["catalogs", "local", "warehouse"], {"path": "${S3SECRET}"}),
    ("catalogs.local.properties.s3.region", ["catalogs", "local", "properties", "s3.region"], ["${S3KEYID}"]),
    ("catalogs.local.credential", ["catalogs", "local", "credential"], ["${CATCRED}"]),
    ("catalogs.local.uri", ["catalogs", "local", "uri"], "postgresql://u:${CATPW}@db:54x2/cat"),
    ("state.url", ["state", "url"], ["${STATEPW}"]),
    ("state.url", ["state", "url"], "postgresql+psycopg://postgres:${STATEPW}@127.0.0.1:port/test"),
    ("spark.master", ["spark", "master"], ["local"]),
    ("spark.conf.spark.hadoop.fs.s3a.secret.key", ["spark", "conf", "spark.hadoop.fs.s3a.secret.key"], ["${S3A_SECRET}"]),
    ("health.small_file_bytes", ["health", "small_file_bytes"], "${S3SECRET}"),
    ("leases.ttl_seconds", ["leases", "ttl_seconds"], "${CATCRED}"),
    ("daemon.interval", ["daemon", "interval"], "${CATPW}"),
    ("daemon.metrics_port", ["daemon", "metrics_port"], "${CAT_TOKEN}"),
    ("daemon.metrics_host", ["daemon", "metrics_host"], ["${PYTOKEN}"]),
]


@pytest.mark.process  # `run` starts the CLI
@pytest.mark.parametrize(("key", "path", "value"), WRONG, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(WRONG)])
def test_a_wrongly_typed_key_is_one_line_naming_it_and_no_secret(tmp_path: Path, state_url: str, key: str, path: list[str], value: object) -> None:
    raw = secret_config(tmp_path, state_url)
    raw.setdefault("daemon", {})
    raw.setdefault("health", {})
    node = raw
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    config_path = tmp_path / "icemaint.yaml"
    config_path.write_text(yaml.safe_dump(raw))
    for command in (["plan"], ["health", "demo.orders"]):
        proc = run(config_path, tmp_path, *command)
        assert_one_line_error(proc, 2, key)
        assert_no_secret(proc, tmp_path)


@pytest.mark.slow  # one of the slowest: make test-integration runs it
def test_runs_that_succeed_and_fail_print_and_log_no_secret(tmp_path: Path, state_url: str) -> None:
    config_path = tmp_path / "icemaint.yaml"
    config_path.write_text(yaml.safe_dump(secret_config(tmp_path, state_url)))
    debug = ["--log-level", "debug", "--log-format", "console"]
    succeeding = [
        ["workload", "cdc", "demo.orders", "--rows", "400", "--commits", "3", "--json"],
        ["health", "demo.orders", "--json"],
        ["plan", "--json"],
        [*debug, "expire", "demo.orders", "--older-than", "0s", "--retain-last", "1", "--json"],
        [*debug, "orphans", "demo.orders", "--dry-run", "--json"],
        [*debug, "merge", "demo.orders", "--partition", "region=nowhere", "--json"],
        ["runs", "--json"],
        ["leases"],
    ]
    for command in succeeding:
        proc = run(config_path, tmp_path, *command)
        assert proc.returncode == 0, (command, proc.stderr[-2000:])
        assert_no_secret(proc, tmp_path)
    failing = [
        [*debug, "merge", "demo.missing"],
        ["health", "demo.missing"],
        [*debug, "verify", "demo.orders", "--snapshot", "1"],
    ]
    for command in failing:
        proc = run(config_path, tmp_path, *command)
        assert proc.returncode in (1, 2), (command, proc.stderr[-2000:])
        assert_no_secret(proc, tmp_path)
    spark_log = tmp_path / "logs" / "spark.log"
    assert spark_log.exists() and spark_log.stat().st_size > 0  # the JVM's log was searched too
