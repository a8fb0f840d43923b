"""REWRITE's options."""

from __future__ import annotations

from dataclasses import dataclass

from maintenance.jobs.options import partitions_option


@dataclass(frozen=True)
class RewriteOptions:
    partitions: tuple[str, ...] = partitions_option()
