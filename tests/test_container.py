"""The daemon in a container: the image built from nothing here and run as it is deployed.

A Docker Engine of the test's own (tests/services/docker_engine.py: dockerd on a private
socket and data root, no bridge, no iptables, no forwarding) builds the repository's
Dockerfile on a Debian base made here with debootstrap (tests/services/image.py), with the
host's network and no registry. Then the image runs as deploy/ runs it, against the tests'
real services: the state in a database of its own on the tests' PostgreSQL, tables in
SeaweedFS's REST catalog and S3 (tests/services/s3.py), both on 127.0.0.1, reached through
`--network host`.
- The daemon (Deployment): /livez and /readyz answer, the HEALTHCHECK turns healthy, a
  cycle commits a verified COMPACT (run history in the state database and through
  `icemaint runs --json` in the container, a snapshot that says icemaint.job), `docker stop`
  ends it within its shutdown grace with exit code 0 and its leases released.
- `icemaint run` as deploy/kubernetes/cronjob.yaml runs it (its args), committing verified.
Both containers run as Kubernetes runs them from the manifests: read-only root, /tmp
writable, all capabilities dropped, no privilege escalation, the image's numeric user.
Secrets (the state URL, the S3 key pair) go through the containers' environment: the
config file names `${VAR}`s, and `docker run -e NAME` passes each value from the client's
own environment, never on a command line (checked on the containers' processes').
Finally the engine is stopped and the host's network compared with before it started.

The base and the image are built in the test's own folder, from nothing, every run: CI
starts from a clean clone, where no cache kept beside the build could help, and a run
must show that the Dockerfile builds as it is now. Where no Docker Engine can start
(not root, no dockerd, a kernel that refuses it), every test here is skipped with that
reason in one line; `make setup` installs the engine (scripts/setup-docker.sh).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from maintenance.catalogs import TableRef, get_catalog, load_table
from maintenance.config import Config, parse_config
from maintenance.workload.fleet import FleetOptions, make_fleet, table_names
from tests.conftest import new_state_url
from tests.services.config import CREDENTIALS_ENV, rest_catalog
from tests.services.docker_engine import DockerEngine, EngineUnavailable, HostNetwork, mounts_under, start_engine
from tests.services.image import build_image, extra_ca_certs, make_base
from tests.services.s3 import SECRET_KEY, S3Server, start_s3
from tests.support.daemon import free_port, http_get
from tests.support.paths import REPO

REQUIRE_ENV = "ICEMAINT_REQUIRE_DOCKER"  # set by .ci/run: there the engine must start

pytestmark = [pytest.mark.slow, pytest.mark.container]

VERSION = re.search(r'^version = "([^"]+)"', (REPO / "pyproject.toml").read_text(), re.M).group(1)  # type: ignore[union-attr]
IMAGE = f"icemaint:{VERSION}"
BASE = "icemaint-test-base:bookworm"
CRONJOB = REPO / "deploy" / "kubernetes" / "cronjob.yaml"
CONFIG_DIR = "/etc/icemaint"  # where the manifests mount the config
SHUTDOWN_GRACE_S = 60
STATE_ENV = "ICEMAINT_STATE_URL"
# How the manifests' securityContext runs the containers (deployment.yaml, cronjob.yaml):
# a read-only root, /tmp an emptyDir (writable, and Spark's native libraries load from it).
SECURITY = ["--read-only", "--tmpfs", "/tmp:rw,exec,nosuid,size=2g", "--cap-drop", "ALL", "--security-opt", "no-new-privileges"]
POLICY = """\
name: container-test
select:
  catalogs: rest_s3
  namespaces: "{namespace}"
jobs:
  compact:
    when:
      small_files: 5
    every: 1h
"""


@dataclass
class Box:
    """The engine, the image and the services the containers use, for the whole module."""

    folder: Path
    engine: DockerEngine
    network_before: dict[str, str]
    key_json_before: bool
    s3: S3Server
    state_url: str
    host_config: Config  # the same catalog, for this process's own checks
    namespace: str
    timings: dict[str, float] = field(default_factory=dict)

    def env(self) -> dict[str, str]:
        """The containers' secrets, for the docker client's environment only."""
        return {**CREDENTIALS_ENV, STATE_ENV: self.state_url}

    def run_args(self) -> list[str]:
        """`docker run` options shared by the daemon and the cron run: names, never values."""
        return ["--network", "host", *SECURITY, "-v", f"{self.folder / 'config'}:{CONFIG_DIR}:ro",
                "-e", f"ICEMAINT_CONFIG={CONFIG_DIR}/icemaint.yaml", *(f"-e{name}" for name in self.env())]

    def make_table(self, prefix: str) -> TableRef:
        """A table on the REST catalog with small files enough for COMPACT (pyiceberg appends)."""
        options = FleetOptions(tables=1, namespace=self.namespace, prefix=prefix, commits=6, rows=50, partitions=2)
        make_fleet(get_catalog(self.host_config, "rest_s3"), "rest_s3", options)
        return TableRef("rest_s3", (self.namespace,), table_names(options)[0])


def write_container_config(folder: Path, s3: S3Server, namespace: str, metrics_port: int) -> None:
    """The config and policy the containers mount read-only at CONFIG_DIR, as a user writes
    them: secrets as `${VAR}`s. The folder is readable by the image's user (10001)."""
    folder.mkdir(parents=True)
    (folder / "policies").mkdir()
    (folder / "policies" / "test.yaml").write_text(POLICY.format(namespace=namespace))
    raw = {
        "default_catalog": "rest_s3",
        "catalogs": {"rest_s3": rest_catalog(s3)},
        "state": {"url": f"${{{STATE_ENV}}}"},
        "policies": f"{CONFIG_DIR}/policies",
        "spark": {"master": "local[1]", "conf": {"spark.sql.shuffle.partitions": "2", "spark.ui.enabled": "false",
                                                 "spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"}},
        "daemon": {"interval": "2s", "spark_idle": "5m", "shutdown_grace": f"{SHUTDOWN_GRACE_S}s", "metrics_port": metrics_port,
                   "metrics_host": "127.0.0.1", "max_concurrent_jobs": 1},
    }
    (folder / "icemaint.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)


@pytest.fixture(scope="module")
def box(request: pytest.FixtureRequest) -> Iterator[Box]:
    # A short folder of its own: unix socket paths under the engine's exec root have a limit.
    folder = Path(tempfile.mkdtemp(prefix="icemaint-docker-", dir="/tmp"))
    failed_before = request.session.testsfailed
    network_before = HostNetwork.snapshot()
    key_json_before = Path("/etc/docker/key.json").exists()
    try:
        engine = start_engine(folder / "engine")
    except EngineUnavailable as exc:
        shutil.rmtree(folder, ignore_errors=True)
        if os.environ.get(REQUIRE_ENV):  # CI's machine (.ci/run) can run one: a skip there would hide a broken install
            pytest.fail(f"no Docker Engine could start, and {REQUIRE_ENV} says one must: {exc}")
        pytest.skip(f"no Docker Engine can start here: {exc}")
    s3 = None
    try:
        s3 = start_s3(folder / "seaweedfs")
        host_raw = {"catalogs": {"rest_s3": {"type": "rest", "uri": s3.rest_uri, "warehouse": s3.warehouse, "credential": s3.credential,
                                             "properties": s3.s3_properties()}}}
        host_config = parse_config(host_raw, source="tests", base_dir=folder / "host")
        namespace = f"box_{uuid.uuid4().hex[:6]}"
        write_container_config(folder / "config", s3, namespace, free_port())
        for state_url in new_state_url("postgresql", folder):
            made = Box(folder, engine, network_before, key_json_before, s3, state_url, host_config, namespace, {"dockerd_start_s": engine.startup_s})
            yield made
    finally:
        engine.stop()
        if s3 is not None:
            s3.stop()
        if mounts_under(folder):
            print(f"container test: {folder} has mounts left; not removed")
        elif request.session.testsfailed == failed_before:
            shutil.rmtree(folder, ignore_errors=True)
        else:  # the logs only: the engine's data and the stores are gigabytes
            for data in (folder / "engine" / "data", folder / "build" / "rootfs", folder / "seaweedfs" / "data"):
                shutil.rmtree(data, ignore_errors=True)
            print(f"container test: logs kept in {folder}")


@pytest.fixture(scope="module")
def image(box: Box) -> str:
    """The image, built from nothing: the debootstrapped base, then the Dockerfile on it."""
    build = box.folder / "build"
    build.mkdir()
    box.timings["base_s"] = make_base(box.engine, build, BASE, build / "debootstrap.log")
    box.timings["build_s"] = build_image(box.engine, REPO, IMAGE, BASE, build / "build.log")
    box.timings["image_mb"] = int(box.engine.docker("image", "inspect", "-f", "{{.Size}}", IMAGE, timeout=30).stdout) / 1e6
    return IMAGE


def http_get_or_down(port: int, path: str) -> tuple[int, str]:
    """`http_get`, with 0 and the reason while the container does not answer yet."""
    try:
        return http_get(port, path)
    except OSError as exc:
        return 0, str(exc)


def wait_for(condition: Any, timeout_s: float, what: str, box: Box, container: str | None = None) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(1)
    logs = box.engine.docker("logs", "--tail", "60", container, timeout=30, check=False).stdout if container else ""
    pytest.fail(f"timed out after {timeout_s:.0f} s waiting for {what}\n{logs}")


def command_lines_with(box: Box, container: str, secret: str) -> list[str]:
    """The command lines of the container's processes (as the host sees them: the daemon,
    its JVM, tini) that hold `secret`. Only its own: other work on the machine may run the
    tests' services with the same test key."""
    pids = box.engine.docker("top", container, "-eo", "pid", timeout=30).stdout.split()[1:]
    found = []
    for pid in pids:
        try:
            text = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if secret in text:
            found.append(text)
    return found


def inspect(box: Box, container: str, template: str) -> str:
    return box.engine.docker("inspect", "-f", template, container, timeout=30).stdout.strip()


def test_the_image_builds_from_nothing_and_ships_no_build_tools(box: Box, image: str) -> None:
    """Built (the fixture), it runs as user 10001 with the venv first on PATH; the shipped
    image has the jars the daemon needs and none other (no Flink runtime), no pip, and
    nothing of the build stage's CA certificates."""
    script = ("id -u; command -v python; command -v icemaint; ls /opt/icemaint/jars; python -c 'import pip' 2>&1 | tail -1; "
              "ls /usr/local/share/ca-certificates; cat /etc/ssl/certs/ca-certificates.crt")
    shown = box.engine.docker("run", "--rm", "--network", "host", "--entrypoint", "sh", image, "-c", script, timeout=120).stdout
    lines = shown.splitlines()
    assert lines[:3] == ["10001", "/opt/icemaint/venv/bin/python", "/opt/icemaint/venv/bin/icemaint"], lines[:3]
    assert {"iceberg-spark-runtime-3.5_2.12-1.11.0.jar", "iceberg-aws-bundle-1.11.0.jar", "hadoop-aws-3.3.4.jar",
            "aws-java-sdk-bundle-1.12.262.jar"} <= set(lines)
    assert not [line for line in lines if "flink" in line]
    assert any("No module named 'pip'" in line for line in lines)
    history = box.engine.docker("history", "--no-trunc", "--format", "{{.CreatedBy}}", image, timeout=30).stdout
    for cert in extra_ca_certs().split("-----END CERTIFICATE-----"):
        body = "".join(cert.split("-----BEGIN CERTIFICATE-----")[-1].split())[:64]
        if body:
            assert body not in shown.replace("\n", "") and body not in history, "the build's CA certificate is in the shipped image"


def test_the_daemon_container_commits_verified_and_stops_cleanly_on_sigterm(box: Box, image: str) -> None:
    from maintenance.state.database import make_engine
    from maintenance.state.leases import LeaseStore
    from maintenance.state.runs import RunStore

    table = box.make_table("daemon_")
    config = yaml.safe_load((box.folder / "config" / "icemaint.yaml").read_text())
    port = config["daemon"]["metrics_port"]
    name = f"icemaint-daemon-{uuid.uuid4().hex[:6]}"
    started = time.monotonic()
    box.engine.docker("run", "-d", "--name", name, *box.run_args(), image, "daemon", timeout=60, env=box.env())
    state = make_engine(box.state_url)
    runs, leases = RunStore(state), LeaseStore(state)
    try:
        wait_for(lambda: http_get_or_down(port, "/livez")[0] == 200, 90, "/livez", box, name)
        box.timings["livez_s"] = time.monotonic() - started
        assert not command_lines_with(box, name, SECRET_KEY), "a process's command line holds the S3 secret"

        def committed() -> Any:
            return next((r for r in runs.list(table=str(table)) if r.job == "compact" and r.status == "committed"), None)

        run = wait_for(committed, 300, "a committed COMPACT in the state database", box, name)
        box.timings["cycle_s"] = time.monotonic() - started
        status, ready = http_get_or_down(port, "/readyz")
        assert status == 200 and ready.startswith("ok"), (status, ready)
        wait_for(lambda: inspect(box, name, "{{.State.Health.Status}}") == "healthy", 120, "the HEALTHCHECK to pass", box, name)
        listed = json.loads(box.engine.docker("exec", name, "icemaint", "runs", "--json", timeout=120).stdout)
        assert any(r["run_id"] == run.run_id and r["status"] == "committed" for r in listed), listed
        assert len(box.engine.docker("top", name, "-eo", "pid", timeout=30).stdout.split()) > 3  # tini, icemaint, its JVM (spark_idle 5m)
        assert not command_lines_with(box, name, SECRET_KEY), "a process's command line holds the S3 secret"
    finally:
        stop_started = time.monotonic()
        box.engine.docker("stop", "-t", str(SHUTDOWN_GRACE_S + 30), name, timeout=SHUTDOWN_GRACE_S + 90, check=False)
        stopped_s = time.monotonic() - stop_started
        code = inspect(box, name, "{{.State.ExitCode}}")
        log = box.engine.docker("logs", name, timeout=60, check=False)
        box.engine.docker("rm", "-v", name, timeout=60, check=False)
    box.timings["sigterm_s"] = stopped_s

    text = log.stdout + log.stderr
    assert code == "0", text[-3000:]
    assert stopped_s < SHUTDOWN_GRACE_S, f"docker stop took {stopped_s:.0f} s"
    assert '"event": "daemon stopped"' in text and "Traceback" not in text, text[-3000:]
    assert SECRET_KEY not in text
    assert not [lease for lease in leases.list() if lease.held]
    assert run.counters["content_verified"] is True, run.counters
    snapshot = load_table(box.host_config, table).metadata.snapshot_by_id(run.snapshot_id)
    assert snapshot is not None and snapshot.summary is not None and snapshot.summary["icemaint.job"] == "compact"
    state.dispose()


def test_icemaint_run_in_the_container_as_the_cronjob_runs_it(box: Box, image: str) -> None:
    cronjob = yaml.safe_load(CRONJOB.read_text())
    container = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == IMAGE, "cronjob.yaml names another image than the one built"
    table = box.make_table("cron_")
    started = time.monotonic()
    done = box.engine.docker("run", "--rm", *box.run_args(), image, *container["args"], timeout=600, env=box.env(), check=False)
    box.timings["cron_run_s"] = time.monotonic() - started

    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert [(r["table"], r["job"], r["status"]) for r in results] == [(str(table), "compact", "committed")], results
    assert results[0]["content_verified"] is True
    assert SECRET_KEY not in done.stdout + done.stderr


def test_the_engine_leaves_the_host_network_as_it_was(box: Box, capsys: pytest.CaptureFixture[str]) -> None:
    """Last: the engine stopped (its containers first), the forwarding sysctls, interfaces
    and firewall rules are what they were before it started; nothing of it is mounted, and
    nothing it made outside its folder is left."""
    with capsys.disabled():  # the numbers deploy/README.md gives, on a run of this module alone
        print("\ncontainer test: " + ", ".join(f"{k} {v:.1f}" for k, v in box.timings.items()))
    box.engine.stop()
    assert not box.engine.running()
    assert HostNetwork.snapshot() == box.network_before
    assert not mounts_under(box.folder)
    assert not box.engine.leftovers()
    assert not Path("/etc/docker/key.json").exists() or box.key_json_before

