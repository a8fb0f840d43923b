"""Shared fixtures: one icemaint home and one Spark session for the whole test run."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from maintenance.catalogs import TableRef
from maintenance.config import Config, parse_config
from maintenance.workload.cdc import CdcOptions, CdcResult, run_cdc_workload
from maintenance.workload.model import CdcModel
from maintenance.workload.shape import TableShape

_names = itertools.count(1)


@pytest.fixture(scope="session")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("icemaint-home")
    os.environ["ICEMAINT_HOME"] = str(path)
    return path


@pytest.fixture(scope="session")
def config(home: Path) -> Config:
    return parse_config({}, source="tests", base_dir=home)


@pytest.fixture(scope="session")
def spark(config: Config) -> Iterator[object]:
    from maintenance.spark.session import get_spark, stop_spark

    session = get_spark(config)
    yield session
    stop_spark()


def fresh_ref(config: Config, prefix: str = "t") -> TableRef:
    """A table name no other test uses."""
    return TableRef(config.default_catalog, ("tests",), f"{prefix}{next(_names)}")


CdcFactory = Callable[..., tuple[TableRef, CdcResult, CdcModel]]


@pytest.fixture()
def cdc_table(spark: object, config: Config) -> CdcFactory:
    """Make a generated CDC table: cdc_table(shape=..., rows=..., commits=...)."""

    def make(*, shape: TableShape | None = None, ref: TableRef | None = None, **options: object) -> tuple[TableRef, CdcResult, CdcModel]:
        ref = ref or fresh_ref(config)
        opts = CdcOptions(shape=shape or TableShape(), **{"rows": 3000, "commits": 5, **options})  # type: ignore[arg-type]
        result, model = run_cdc_workload(spark, config, ref, opts)  # type: ignore[arg-type]
        return ref, result, model

    return make
