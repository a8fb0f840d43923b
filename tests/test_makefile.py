"""`make demo` installs only what the demo needs (issue 54: it needed Chromium and the test
extras, so a user without them could not run it): its steps name no browser, no database
and no dev extras, and the demo runs with none of the dev extras importable."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

import pytest

from tests.support.paths import REPO

pytestmark = pytest.mark.process  # every test here starts processes (the CLI, a daemon, workers)

# What only `make setup` / `make test` may do: the status page's browser, the lease tests'
# databases, the container test's Docker, the dev extras, the test tools.
NOT_FOR_THE_DEMO = ("setup-test-browser", "chromium", "chromedriver", "setup-databases", "postgresql", "mariadb", "setup-docker", "docker",
                    ".[dev]", "compose-schema", "pytest", "ruff")


def test_make_demo_names_no_browser_database_or_dev_extras_step() -> None:
    """Every step `make demo` would run, its prerequisites taken as out of date (`-B`), and the
    script of its one system step."""
    steps = subprocess.run(["make", "-n", "-B", "demo"], cwd=REPO, capture_output=True, text=True, timeout=60, check=True).stdout
    system = (REPO / "scripts" / "setup-system.sh").read_text()
    for text in (steps, system):
        found = [word for word in NOT_FOR_THE_DEMO if word in text.lower()]
        assert not found, f"{found} in:\n{text}"
    assert re.search(r"pip install -q -e \.(\s|;|$)", steps), steps  # the package without extras
    assert "jars fetch --for spark" in steps and "icemaint demo" in steps, steps


def _dev_extra_modules() -> set[str]:
    """The top-level modules the `dev` extra's distributions install."""
    wanted = [re.split(r"[<>=\[;\s]", req, maxsplit=1)[0] for req in metadata.requires("icemaint") or [] if "extra == \"dev\"" in req]
    modules: set[str] = set()
    for name in wanted:
        for file in metadata.distribution(name).files or []:
            top = file.parts[0]
            if top.endswith(".py"):
                modules.add(top[:-3])
            elif "." not in top and top not in ("bin", "__pycache__"):
                modules.add(top)
    return modules


BLOCKER = '''
import sys

class _DevExtras:
    """Refuses the dev extras' modules, as a venv without them would."""
    blocked = frozenset({blocked!r})

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in self.blocked:
            raise ModuleNotFoundError(f"No module named {{name!r}} (a dev extra: not installed for the demo)", name=name)
        return None

sys.meta_path.insert(0, _DevExtras())
'''


@pytest.mark.slow  # the demo starts Spark: make test-integration runs it
def test_the_demo_runs_with_no_dev_extra_importable(tmp_path: Path) -> None:
    """`icemaint demo` start to finish on a fresh embedded default, every module of the dev
    extras (pytest, hypothesis, selenium, …) unimportable: what a venv made by `make demo`
    holds (building such a venv here would download pyspark again)."""
    blocked = _dev_extra_modules()
    assert {"pytest", "hypothesis", "selenium"} <= blocked, blocked
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BLOCKER.format(blocked=sorted(blocked)))
    env = {k: v for k, v in os.environ.items() if k not in ("ICEMAINT_CONFIG", "PYTHONPATH")}
    env.update(ICEMAINT_HOME=str(tmp_path / "home"), PYTHONPATH=str(site))
    started = time.monotonic()
    demo = subprocess.run([sys.executable, "-m", "maintenance", "demo", "--rows", "2000", "--commits", "4"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    took = time.monotonic() - started
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    assert "dev extra" not in demo.stderr, demo.stderr[-3000:]
    assert "5. health after:" in demo.stdout, demo.stdout
    assert took < 300, f"{took:.0f} s"
