"""A budget: which due jobs to run when not all of them can (issue 59).

A budget is compute-seconds of job runs per hour for the whole fleet (CPU seconds of their
Spark tasks and their own threads, `run/compute.py`) (`daemon.budget`; `icemaint
plan --budget` shows what it would choose without running anything: a shadow mode). Several
daemons share a fleet (`schedule/membership.py`), each its share of the tables, so each
spends the budget's part its tables are of the fleet's (`fleet_part`). Each evaluation, the
due jobs are chosen against what is left of the last hour's budget (`Spending`):

1. Upkeep (jobs no reader sees: EXPIRE of writers' state, ORPHANS after failures, STATS,
   MANIFESTS; `schedule/value.py`) has `UPKEEP_SHARE` of the budget to itself, spent in the
   planner's order, so no amount of reader benefit elsewhere starves it.
2. The rest (and what upkeep left) goes to the jobs that save readers the most per second
   of the job (`Prediction.value`), while their predicted cost fits. A job that saves no
   reader anything (a table nobody reads) is left out, as is one that does not fit; each
   says why.

3. A job predicted to cost more than the whole budget would never fit: when the window
   spent nothing (`left_s` is the whole budget) and nothing else fits either, the first of
   them runs, alone, and the hours after it pay for it. Without this, a budget smaller than
   one job's prediction would never run a job, and a job never run is never calibrated
   (the first prediction of a job is its rough estimate).

`daemon.budget_order: triggers` spends the rest in the planner's order instead (the
costliest tables by the reader model's full scan, as without a budget), readers' reports
unused: the order a budget would follow without them, which the benchmark compares with
(`benchmarks/budget_fleet.py`).

What is left out stays due and is chosen again at the next evaluation, with the budget the
hour has left then.

A daemon knows what its own runs spent (`Spending`, in memory). `icemaint run --budget`
(cron) is a new process each time: what the last hour's runs spent is read from the state
database's records instead (`recorded_spending`: every process's runs that share it).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass

from maintenance.config import BUDGET_ORDERS
from maintenance.schedule.decisions import Decision
from maintenance.schedule.membership import ALONE, Share
from maintenance.schedule.value import UPKEEP, Prediction, run_cost_s
from maintenance.state.store import StateStore
from maintenance.units import format_seconds

UPKEEP_SHARE = 0.2
WINDOW_S = 3600.0
BY_VALUE, BY_TRIGGERS = BUDGET_ORDERS  # `daemon.budget_order`'s words: the best reader-seconds per second first; the planner's order, as without a budget


@dataclass(frozen=True)
class Choice:
    decision: Decision
    prediction: Prediction
    chosen: bool
    why: str


def choose(due: list[Decision], budget_s: float, order: str = BY_VALUE, whole_s: float | None = None) -> list[Choice]:
    """The due jobs (ranked by the planner, each with its prediction) chosen or left out
    within `budget_s` compute-seconds (what the window left of the `whole_s` budget; the
    whole when not given): chosen first, in `order` (`config.BUDGET_ORDERS`), then those
    left out. A decision without a prediction counts as upkeep at its estimate."""
    assert order in BUDGET_ORDERS, order  # the config's validation says so to users
    predictions = {(d.table, d.job): d.prediction or Prediction(d.estimated_s, 0.0, 0.0, UPKEEP, 1.0) for d in due}
    upkeep_left = budget_s * UPKEEP_SHARE
    choices: list[Choice] = []
    for decision in due:
        prediction = predictions[(decision.table, decision.job)]
        if prediction.basis != UPKEEP:
            continue
        fits = prediction.cost_s <= upkeep_left
        upkeep_left -= prediction.cost_s if fits else 0.0
        why = "upkeep" if fits else f"upkeep does not fit: {format_seconds(prediction.cost_s)} predicted, {format_seconds(upkeep_left)} of its share left"
        choices.append(Choice(decision, prediction, fits, why))
    left = budget_s * (1 - UPKEEP_SHARE) + upkeep_left
    readers = [d for d in due if predictions[(d.table, d.job)].basis != UPKEEP]
    if order == BY_VALUE:
        readers.sort(key=lambda d: -predictions[(d.table, d.job)].value)  # stable: the planner's order breaks ties
    for decision in readers:
        prediction = predictions[(decision.table, decision.job)]
        if order == BY_VALUE and prediction.benefit_s_per_day <= 0:
            choices.append(Choice(decision, prediction, False, f"saves readers nothing ({prediction.basis}: {prediction.scans_per_day:.1f} scans a day)"))
        elif prediction.cost_s <= left:
            left -= prediction.cost_s
            why = f"saves {prediction.value:.2f} reader-s a day per second ({prediction.basis})" if order == BY_VALUE else "the planner's order"
            choices.append(Choice(decision, prediction, True, why))
        else:
            choices.append(Choice(decision, prediction, False,
                                  f"does not fit: {format_seconds(prediction.cost_s)} predicted, {format_seconds(max(left, 0.0))} left"))
    whole = budget_s if whole_s is None else whole_s
    if 0 < whole <= budget_s and not any(c.chosen for c in choices):
        larger = next((c for c in choices if c.prediction.cost_s > whole and (c.prediction.basis == UPKEEP or c.prediction.benefit_s_per_day > 0 or order != BY_VALUE)), None)
        if larger is not None:
            choices[choices.index(larger)] = Choice(larger.decision, larger.prediction, True,
                                                    f"larger than the whole budget ({format_seconds(larger.prediction.cost_s)} predicted, "
                                                    f"{format_seconds(whole)} an hour): runs alone while the hour has spent nothing")
    return sorted(choices, key=lambda c: not c.chosen)


def fleet_part(shares: Mapping[str, Share], held: Mapping[str, int]) -> float:
    """The part of the fleet's tables one daemon holds: of each catalog it holds `held`
    tables, about a `members`-th of the catalog's (the hash split is even), so the fleet has
    about `held * members` there. 1 for a daemon alone, or one that holds no table."""
    fleet = sum(count * shares.get(catalog, ALONE).members for catalog, count in held.items())
    return sum(held.values()) / fleet if fleet else 1.0


class Spending:
    """Compute-seconds of job runs in the last hour (`WINDOW_S`): those that ended, measured,
    and those running, as predicted (a daemon's workers add and settle them)."""

    def __init__(self, clock=time.monotonic) -> None:  # type: ignore[no-untyped-def]
        self._clock = clock
        self._ended: deque[tuple[float, float]] = deque()  # (when it ended, seconds)
        self._running: dict[str, float] = {}  # run key -> predicted seconds
        self._lock = threading.Lock()

    def start(self, key: str, predicted_s: float) -> None:
        with self._lock:
            self._running[key] = predicted_s

    def settle(self, key: str, measured_s: float) -> None:
        with self._lock:
            self._running.pop(key, None)
            self._ended.append((self._clock(), measured_s))

    def spent(self) -> float:
        with self._lock:
            since = self._clock() - WINDOW_S
            while self._ended and self._ended[0][0] < since:
                self._ended.popleft()
            return sum(s for _, s in self._ended) + sum(self._running.values())


def recorded_spending(state: StateStore) -> float:
    """Compute-seconds of the runs the state database recorded as ended in the last hour
    (`WINDOW_S`), whoever ran them (`run_cost_s`: their compute-seconds, or wall seconds for a
    run that did not record them). A run still running is not counted: it spends on the
    budget of the hour it ends in."""
    since_ms = state.runs.database_now_ms() - int(WINDOW_S * 1000)
    return sum(run_cost_s(run) for run in state.runs.ended_since(since_ms))
