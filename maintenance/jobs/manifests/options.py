"""MANIFESTS' options."""

from __future__ import annotations

from dataclasses import dataclass

from maintenance.jobs.options import INTEGER_AT_LEAST_1, STRINGS, option


@dataclass(frozen=True)
class ManifestsOptions:
    min_manifests: int = option(2, INTEGER_AT_LEAST_1, "A partition spec's manifests (data or delete) are rewritten once at least this many are new "
                                                       "(not written by MANIFESTS) and fewer would hold them all at the target size.")
    sort_by: tuple[str, ...] = option((), STRINGS, "Order entries by these partition fields first (e.g. a date), so each new manifest holds one "
                                      "range of them, as Iceberg 1.11's rewrite_manifests sort_by does.", flag="--sort-by", repeatable=True,
                                      metavar="FIELD")
