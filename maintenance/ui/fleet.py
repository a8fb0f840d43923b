"""The fleet's runs (`/runs`): what runs now, what failed and why, what ran lately, across
every table. The overview answers per table; an operator on call asks per run, and the
error belongs in the page, not in a badge's tooltip."""

from __future__ import annotations

import time

from maintenance.progress import recorded_step
from maintenance.state.runs import ABANDONED, FAILED, FENCED, RUNNING, RunRecord
from maintenance.state.store import StateStore
from maintenance.ui.html import MISSING, ago, data_table, esc, layout, seconds, status_badge, table_link, utc

SHOWN = 50  # recent and failed runs shown, newest first
FAILURES = (FAILED, FENCED, ABANDONED)  # the overview's FAILING: the run ended and the job did not work


def runs_page(state: StateStore) -> bytes:
    """Running runs (all of them), the newest failed ones with their errors, the newest runs."""
    now_ms = state.runs.database_now_ms()  # run times are the database's clock
    running = state.runs.list(status=RUNNING, limit=10_000)
    failed = sorted((r for status in FAILURES for r in state.runs.list(status=status, limit=SHOWN)),
                    key=lambda r: (-r.started_at_ms, r.run_id))[:SHOWN]
    recent = state.runs.list(limit=SHOWN)
    body = (f"<h1>Runs</h1><p>{len(running)} running now. "
            '<span class="muted">Every table\'s runs, newest first; times by the state database\'s clock.</span></p>'
            f'<h2>Running now</h2>{_table(running, now_ms, "runs-running", "no run is running")}'
            f'<h2>Failed</h2>{_table(failed, now_ms, "runs-failed", "no run failed")}'
            f'<h2>Recent</h2>{_table(recent, now_ms, "runs-recent", "no run yet")}')
    return layout("Runs", body, active="runs", meta=f"read {esc(utc(time.time() * 1000))}")


def _table(runs: list[RunRecord], now_ms: int, cls: str, empty: str) -> str:
    rows = [[
        table_link(r.table), esc(r.job), status_badge(r.status),
        f'{esc(ago(r.started_at_ms, now_ms))}<br><span class="muted">{esc(utc(r.started_at_ms))}</span>',
        esc(seconds((r.ended_at_ms - r.started_at_ms) / 1000)) if r.ended_at_ms is not None else f"running for {esc(seconds((now_ms - r.started_at_ms) / 1000))}",
        _step(r), f'<span class="error">{esc(r.error)}</span>' if r.error else MISSING,
        f'<span class="mono">{esc(r.holder_id)}</span>',
    ] for r in runs]
    return data_table(["table", "job", "status", "started", "took", "stage", "error", "holder"], rows, cls=cls, empty=empty)


def _step(run: RunRecord) -> str:
    step = recorded_step(run.stage)
    return f'<span class="stage">{esc(step)}</span>' if step else MISSING
