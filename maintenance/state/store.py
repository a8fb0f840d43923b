"""One handle on the state database for a process: leases, run history, shared evaluations and
readers' scans, schema upgraded."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import structlog
from sqlalchemy import Engine

from maintenance.config import Config
from maintenance.redact import redact_text
from maintenance.state.database import ensure_schema, make_engine
from maintenance.state.evaluations import EvaluationStore
from maintenance.state.leases import LeaseStore
from maintenance.state.run_scans import RunScanStore
from maintenance.state.runs import RunStore
from maintenance.state.scan_days import ScanDayStore


@dataclass(frozen=True)
class StateStore:
    engine: Engine
    leases: LeaseStore
    runs: RunStore
    evaluations: EvaluationStore
    scans: ScanDayStore
    run_scans: RunScanStore

    @classmethod
    def on(cls, engine: Engine) -> StateStore:
        """Every store on one engine (whose schema is already the newest)."""
        return cls(engine=engine, leases=LeaseStore(engine), runs=RunStore(engine), evaluations=EvaluationStore(engine),
                   scans=ScanDayStore(engine), run_scans=RunScanStore(engine))


log = structlog.get_logger(__name__)


@lru_cache(maxsize=None)
def _open(url: str) -> StateStore:
    log.info("state database", url=redact_text(url))  # which one: a second database means leases nobody else sees
    engine = make_engine(url)
    ensure_schema(engine)
    return StateStore.on(engine)


def open_state(config: Config) -> StateStore:
    """The state database of the config, migrated to the newest schema on first use."""
    return _open(config.state_url)
