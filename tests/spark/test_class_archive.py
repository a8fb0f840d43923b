"""`maintenance/spark/class_archive.py`: the driver JVM is told of the archive when it exists,
and the user's own choice about class sharing wins (`tests/cli/test_class_archive.py` trains
one and runs jobs with it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from maintenance.spark.class_archive import archive_path, java_option
from maintenance.spark.java_helpers import CACHE_ENV


def test_the_option_names_the_archive_only_when_it_exists_and_the_user_chose_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    path = archive_path()
    assert path is not None and path.parent == tmp_path
    assert java_option("") == ""
    path.write_bytes(b"an archive")
    assert java_option("") == f"-XX:SharedArchiveFile={path}"
    assert java_option("-Xmx2g") == f"-XX:SharedArchiveFile={path}"
    for own in ("-Xshare:off", "-XX:SharedArchiveFile=/elsewhere.jsa", "-XX:ArchiveClassesAtExit=/new.jsa"):
        assert java_option(f"-Xmx2g {own}") == "", own


def test_no_archive_where_an_agent_may_hook_class_loading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A JVM recording with JFR crashed at start mapping the archive (OpenJDK 17.0.15): an
    agent in the user's options or in the environment's means no archive."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    path = archive_path()
    assert path is not None
    path.write_bytes(b"an archive")
    for agent in ("-javaagent:/opt/otel.jar", "-agentlib:jdwp=transport=dt_socket", "-XX:StartFlightRecording=filename=x.jfr"):
        assert java_option(agent) == "", agent
    for name in ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS"):
        monkeypatch.setenv(name, "-Xss2m -javaagent:/opt/dd-java-agent.jar")
        assert java_option("") == "", name
        monkeypatch.delenv(name)
    assert java_option("") == f"-XX:SharedArchiveFile={path}"
