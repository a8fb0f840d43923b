"""A daemon whose catalog hangs (accepts connections, never answers): `/readyz` names the
catalog within a minute, and SIGTERM stops the daemon within `shutdown_grace` although an
evaluation is inside that catalog. Before, `/readyz` said "starting" for minutes and SIGTERM
waited for the hung call."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.support.daemon import free_port, http_get, signal_and_wait, start_daemon, wait_for
from tests.support.silent import Silent

pytestmark = pytest.mark.process  # every test here starts processes (the CLI, a daemon, workers)

GRACE_S = 5


@pytest.fixture
def silent() -> Iterator[Silent]:
    server = Silent()
    yield server
    server.close()


@pytest.mark.slow  # it waits for a catalog's time bound: make test-integration runs it
def test_a_hung_catalog_is_named_by_readyz_and_sigterm_does_not_wait_for_it(silent: Silent, tmp_path: Path) -> None:
    port = free_port()
    config = tmp_path / "icemaint.yaml"
    config.write_text(yaml.safe_dump({
        "home": str(tmp_path / "home"), "catalogs": {"hung": {"type": "rest", "uri": f"http://127.0.0.1:{silent.port}", "warehouse": "lake"}},
        "state": {"url": f"sqlite:///{tmp_path / 'state.db'}"},
        "daemon": {"interval": "2s", "shutdown_grace": f"{GRACE_S}s", "metrics_port": port, "metrics_host": "127.0.0.1"},
    }))
    log = tmp_path / "daemon.log"
    started = time.monotonic()
    daemon = start_daemon(config, log)
    try:
        def readyz_names_the_catalog() -> bool:
            try:
                code, body = http_get(port, "/readyz")
            except OSError:
                return False
            return code == 503 and "catalog:hung" in body

        wait_for(readyz_names_the_catalog, 60, "/readyz naming the hung catalog", [log])
        named_after = time.monotonic() - started
        asked = len(silent.accepted)
        wait_for(lambda: len(silent.accepted) > asked, 30, "the next evaluation, inside the hung catalog", [log])

        code, stopped_after = signal_and_wait(daemon, signal.SIGTERM, 120)
    finally:
        if daemon.poll() is None:
            daemon.kill()
    assert named_after < 60, named_after
    assert code == 0, log.read_text()[-3000:]
    assert stopped_after < GRACE_S + 5, f"stopped {stopped_after:.0f} s after SIGTERM (grace {GRACE_S} s)"
    assert "Traceback" not in log.read_text()
