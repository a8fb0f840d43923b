"""The tiers (pytest markers, `pyproject.toml`) are declared where the tests are, not guessed:
a test module says which of its tests start processes (`process`: the CLI as a user runs
it, a daemon, workers; not in `make test-fast`), by `pytestmark` when all of them do, else
on each test. `tests/conftest.py` adds only what a test's fixtures imply (`spark` for the
shared session, `slow` for `slow_on_servers` cases on server databases); it reads no test's
source. This test reads them instead, and fails where a declaration is missing."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
PROCESS_CALLS = ("run_cli(", "start_daemon(", "run_workers(", "subprocess.", "Popen(", "multiprocessing.")  # what starts a process in a test's own code


def _marks(decorators: list[ast.expr]) -> set[str]:
    """The `pytest.mark.<name>` markers among decorators (or a `pytestmark` value's items)."""
    found = set()
    for node in decorators:
        for inner in ast.walk(node):
            if isinstance(inner, ast.Attribute) and isinstance(inner.value, ast.Attribute) and inner.value.attr == "mark":
                found.add(inner.attr)
    return found


def undeclared_processes(source: str) -> list[str]:
    """The tests of a module whose own code starts a process but that are not marked `process`."""
    tree = ast.parse(source)
    module = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            module |= _marks([node.value])
    missing = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            body = ast.get_source_segment(source, node) or ""
            if any(call in body for call in PROCESS_CALLS) and "process" not in module | _marks(node.decorator_list):
                missing.append(node.name)
    return missing


def test_every_test_that_starts_processes_declares_it() -> None:
    missing = {path.relative_to(TESTS).as_posix(): found for path in sorted(TESTS.rglob("test_*.py"))
               if (found := undeclared_processes(path.read_text()))}
    assert missing == {}


def test_the_check_finds_an_undeclared_test_and_takes_either_declaration() -> None:
    starts = f"def test_a():\n    {PROCESS_CALLS[0]}'--help')\n"  # spelled so that this test's own source starts nothing
    assert undeclared_processes(starts) == ["test_a"]
    assert undeclared_processes("import pytest\n" + starts.replace("def test_a", "@pytest.mark.process\ndef test_a")) == []
    assert undeclared_processes("import pytest\npytestmark = [pytest.mark.slow, pytest.mark.process]\n" + starts) == []


def test_the_conftest_guesses_no_tier_from_a_tests_source() -> None:
    conftest = (TESTS / "conftest.py").read_text()
    assert "getsource" not in conftest and "pytest.mark.process" not in conftest
