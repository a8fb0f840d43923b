"""COMPACT's own counters: the ones no other job reports (the rule: `jobs/counters.py`)."""

COUNTERS: dict[str, str] = {
    "strategy": "the row layout a dry run would write (binpack, sort, zorder)",
}
