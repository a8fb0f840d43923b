"""`maintenance/cli/class_archive.py`: a trained archive is mapped by a job's JVM, a JVM with
an agent (JFR) gets none and runs the job, and a JVM given an archive it cannot use still
runs the job (the safety claim of `spark/class_archive.py`: an archive only changes how
classes get into memory)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from maintenance.spark.class_archive import archive_path
from maintenance.spark.java_helpers import CACHE_ENV
from tests.support.paths import REPO
from tests.support.proc_tree import run_watching

pytestmark = [pytest.mark.process]


def icemaint(env: dict[str, str], *args: str) -> dict:  # type: ignore[type-arg]
    done = subprocess.run([sys.executable, "-m", "maintenance", *args, "--json"], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def merge_watching_maps(env: dict[str, str], archive: Path) -> tuple[dict, bool]:  # type: ignore[type-arg]
    """A MERGE as a CLI process, and whether any process of its tree mapped `archive`."""
    mapped = False

    def watch(pid: int, below: list[int]) -> None:
        nonlocal mapped
        for process in below:
            try:
                mapped = mapped or str(archive) in (Path("/proc") / str(process) / "maps").read_text()
            except OSError:
                continue

    returncode, out, err = run_watching([sys.executable, "-m", "maintenance", "merge", "demo.orders", "--json"], env, REPO, watch)
    assert returncode == 0, err[-2000:]
    return json.loads(out), mapped


def built_archive(env: dict[str, str], archive: Path, setups: Path | None) -> None:
    """The archive at `archive`: a copy of the one `make setup` trained for this venv
    (`setups`, the same name in the default cache) when there is one, else trained here
    (every job twice on two catalogs: 5 minutes of CI's integration run beside the other
    worker). Setup never fails on a failed training, so a training that broke leaves no
    archive there, and this test trains and fails on it."""
    archive.parent.mkdir(parents=True, exist_ok=True)
    if setups is not None and setups.is_file() and setups.stat().st_size > 10 * 2**20:
        shutil.copyfile(setups, archive)
        return
    built = subprocess.run([sys.executable, "-m", "maintenance.cli.class_archive", "build"], cwd=REPO, env=env, capture_output=True, text=True,
                           timeout=900)
    assert built.returncode == 0, built.stderr[-2000:]
    assert archive.is_file() and archive.stat().st_size > 10 * 2**20, (built.stdout, sorted(archive.parent.iterdir()))
    assert list(archive.parent.glob("*.tmp")) == []


@pytest.mark.slow  # (trains an archive unless setup did), then three CLI jobs
def test_a_built_archive_is_mapped_by_a_jobs_jvm_and_one_it_cannot_use_is_passed_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    setups = archive_path()  # in the default cache (or the one CACHE_ENV names for the whole run)
    env = {**os.environ, CACHE_ENV: str(tmp_path / "cache"), "ICEMAINT_HOME": str(tmp_path / "home")}
    env.pop("ICEMAINT_CONFIG", None)
    monkeypatch.setenv(CACHE_ENV, env[CACHE_ENV])
    archive = archive_path()
    assert archive is not None and archive != setups
    built_archive(env, archive, setups)

    icemaint(env, "workload", "cdc", "demo.orders", "--rows", "4000", "--commits", "3")
    result, mapped = merge_watching_maps(env, archive)
    assert result["status"] == "committed" and result["content_verified"] is True, result
    assert mapped, "no process of the job mapped the archive"

    recording = {**env, "JAVA_TOOL_OPTIONS": f"-XX:StartFlightRecording=filename={tmp_path / 'job.jfr'}"}  # crashed the JVM mapping the archive
    icemaint(env, "workload", "cdc", "demo.orders", "--rows", "4000", "--commits", "3")
    result, mapped = merge_watching_maps(recording, archive)
    assert result["status"] == "committed" and result["content_verified"] is True, result
    assert not mapped and (tmp_path / "job.jfr").is_file()

    archive.write_bytes(b"\0" * 4096)  # what a JVM cannot use: it must say so in its log and load classes as usual
    icemaint(env, "workload", "cdc", "demo.orders", "--rows", "4000", "--commits", "3")
    result, _ = merge_watching_maps(env, archive)
    assert result["status"] == "committed" and result["content_verified"] is True, result
