"""Every Java helper (`maintenance/spark/java/*.java`) compiles with Janino against the pinned
Iceberg runtime and has the no-argument constructor `new_helper` calls; the index of their
Iceberg internals (`java/README.md`) names each of them."""

from __future__ import annotations

import pytest

from maintenance.spark.java_helpers import PACKAGE, SOURCES, new_helper

HELPERS = sorted(p.stem for p in SOURCES.glob("*.java"))


def test_there_are_helpers_and_the_index_lists_every_one() -> None:
    index = (SOURCES / "README.md").read_text()
    assert len(HELPERS) >= 10
    assert [name for name in HELPERS if f"`{name}`" not in index] == []


@pytest.mark.parametrize("name", HELPERS)
def test_every_helper_compiles_against_the_pinned_iceberg(spark, name: str) -> None:
    helper = new_helper(spark, name)  # type: ignore[arg-type]
    assert str(helper.getClass().getName()) == f"{PACKAGE}.{name}"
