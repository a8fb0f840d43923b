"""The one backoff rule: waits that double, up to a bound.

Failed runs of a job back off per table and job (`schedule/decisions.py`), a daemon's failed
evaluations and its probes of a misconfigured state database back off per daemon
(`daemon/service.py`), an S3 bulk deletion sends transiently failed keys again after a
pause (`jobs/file_removal/fenced.py`): each waits `base`, `2·base`, `4·base` ... after its
first, second, third ... failure in a row.
"""

from __future__ import annotations

_MOST_DOUBLINGS = 62  # past this the bound has long been reached (and a float would overflow near 1024)


def doubling(base: float, failures: int, most: float = float("inf")) -> float:
    """`base` after one failure, doubled for each failure more, at most `most`."""
    return min(most, base * 2 ** min(max(failures - 1, 0), _MOST_DOUBLINGS))
