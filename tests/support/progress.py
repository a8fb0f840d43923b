"""A run's progress as a test records it: every stage a job reports, with its counts."""

from __future__ import annotations

from collections.abc import Callable

STARTING_SPARK = "starting Spark"  # said before Spark answers: nothing to count yet


class RecordedProgress:
    """A progress callback (`jobs/spec.Progress`) that keeps every stage and its counts."""

    def __init__(self, then: Callable[..., None] | None = None) -> None:
        self.stages: list[tuple[str, dict[str, int]]] = []
        self.then = then  # a test's own callback, called after each stage is recorded

    def __call__(self, stage: str, **counts: int) -> None:
        self.stages.append((stage, counts))
        if self.then is not None:
            self.then(stage, **counts)

    def assert_every_stage_counted(self, *long_phases: str) -> None:
        """Every stage but Spark's start carries a count (files, bytes, groups…), and each of
        `long_phases` was reported: an operator watching a long phase sees how much."""
        uncounted = [stage for stage, counts in self.stages if stage != STARTING_SPARK and not counts]
        assert not uncounted, f"stages without a count: {uncounted} (all: {self.stages})"
        missing = [phase for phase in long_phases if phase not in {stage for stage, _ in self.stages}]
        assert not missing, f"not reported: {missing} (all: {self.stages})"
