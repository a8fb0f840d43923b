"""Every Java helper (`maintenance/spark/java/*.java`) compiles with Janino against the pinned
Iceberg runtime and has the no-argument constructor `new_helper` calls; each has one Python
door in `maintenance/spark/`; the index of their doors and Iceberg internals
(`java/README.md`) names each of them."""

from __future__ import annotations

import ast

import pytest

from maintenance.spark.java_helpers import PACKAGE, SOURCES, new_helper

HELPERS = sorted(p.stem for p in SOURCES.glob("*.java"))


def doors() -> dict[str, set[str]]:
    """Each helper made somewhere, and the modules of `maintenance/spark/` that make it
    (`new_helper(spark, "Name", ...)`, read from the source)."""
    found: dict[str, set[str]] = {}
    for path in sorted(SOURCES.parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "new_helper"
                    and len(node.args) > 1 and isinstance(node.args[1], ast.Constant)):
                found.setdefault(node.args[1].value, set()).add(path.name)
    return found


def test_there_are_helpers_and_the_index_lists_every_one_with_its_door() -> None:
    index = (SOURCES / "README.md").read_text()
    assert len(HELPERS) >= 10
    assert [name for name in HELPERS if f"`{name}`" not in index] == []
    rows = {line.split("|")[1].strip().strip("`"): line.split("|")[2].strip().strip("`") for line in index.splitlines() if line.startswith("| `")}
    assert {name: rows.get(name) for name in HELPERS} == {name: next(iter(modules)) for name, modules in doors().items()}


def test_each_helper_has_one_python_door() -> None:
    """One module of `spark/` makes each helper (no module outside `spark/` makes any:
    `tests/test_imports.py`), and every helper is made by one."""
    found = doors()
    assert sorted(found) == HELPERS
    assert {name: modules for name, modules in found.items() if len(modules) != 1} == {}


@pytest.mark.parametrize("name", HELPERS)
def test_every_helper_compiles_against_the_pinned_iceberg(spark, name: str) -> None:
    helper = new_helper(spark, name)  # type: ignore[arg-type]
    assert str(helper.getClass().getName()) == f"{PACKAGE}.{name}"


def test_a_compiled_helper_is_kept_and_loaded_by_the_next_process_instead_of_compiled(spark, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The first load compiles and keeps a jar named by the helper's digest; a later load
    (here: this JVM forgetting it, as a new process starts knowing nothing) takes the jar;
    a changed source or runtime (another digest) is compiled again."""
    from maintenance.spark import java_helpers

    monkeypatch.setenv(java_helpers.CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(java_helpers, "_compiled", {})
    helper = new_helper(spark, "DeletedRows")  # type: ignore[arg-type]
    kept = sorted(tmp_path.glob("DeletedRows-*.jar"))
    assert [p.name for p in kept] == [f"DeletedRows-{java_helpers.helper_digest(spark, 'DeletedRows')}.jar"]  # type: ignore[arg-type]
    assert str(helper.getClass().getClassLoader().getClass().getName()) != "java.net.URLClassLoader"  # compiled here

    monkeypatch.setattr(java_helpers, "_compiled", {})
    loaded = new_helper(spark, "DeletedRows")  # type: ignore[arg-type]
    assert str(loaded.getClass().getClassLoader().getClass().getName()) == "java.net.URLClassLoader"
    assert loaded.rows(0) == 0 and loaded.difference() is None  # a working instance of the same class

    monkeypatch.setattr(java_helpers, "_compiled", {})
    monkeypatch.setattr(java_helpers, "helper_digest", lambda spark, name: "another")
    again = new_helper(spark, "DeletedRows")  # type: ignore[arg-type]
    assert str(again.getClass().getClassLoader().getClass().getName()) != "java.net.URLClassLoader"
    assert (tmp_path / "DeletedRows-another.jar").is_file()


def test_a_cache_that_cannot_be_written_leaves_every_process_compiling(spark, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from maintenance.spark import java_helpers

    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv(java_helpers.CACHE_ENV, str(blocked / "cache"))
    monkeypatch.setattr(java_helpers, "_compiled", {})
    helper = new_helper(spark, "StreamInputFileIO", on_executors=True)  # type: ignore[arg-type]
    assert str(helper.getClass().getName()) == f"{PACKAGE}.StreamInputFileIO"
