"""The daemon's door for readers' scan reports: `POST /v1/scan-reports`.

Open only when the configuration sets `daemon.scan_reports_token` (a secret: say it with
`${VAR}`); a sender shows it as `Authorization: Bearer <token>`, compared in constant time.
Each batch is added to its tables' days (`state/scan_days.py`), in one transaction, and to
the runs that just committed on them (`state/run_scans.py`), and answered:

- 200 `taken N`: stored;
- 400 with one line saying what is wrong (not JSON, an unknown catalog, a report that is not
  Iceberg's `ScanReport`); 401 without the token; 413 for a body over
  `daemon/http.py`'s `MAX_POST_BODY`;
- 503 while the state database cannot be reached.

The sender drops a batch that was not taken: readers' reports are a sample of their scans,
never worth holding a reader up for, and a lost batch costs the estimate a little, not a
table its maintenance.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Collection

import structlog

from maintenance.readers.scan_reports import BadReports, parse_batch
from maintenance.state.database import StateUnavailableError
from maintenance.state.store import StateStore

log = structlog.get_logger(__name__)

PATH = "/v1/scan-reports"


class ScanReportEndpoint:
    def __init__(self, token: str, default_catalog: str, catalogs: Collection[str], store: Callable[[], StateStore],
                 counted: Callable[[str, int], None] = lambda outcome, reports: None) -> None:
        self._token = f"Bearer {token}".encode()
        self.default_catalog = default_catalog
        self.catalogs = frozenset(catalogs)
        self.store = store  # opened at the first batch: a daemon starts while its database is down
        self.counted = counted  # (outcome, reports or requests): the daemon's metrics

    def receive(self, body: bytes, authorization: str | None) -> tuple[int, str]:
        """Take one posted batch: (HTTP status, one line of text)."""
        if authorization is None or not hmac.compare_digest(authorization.encode(), self._token):
            self.counted("unauthorized", 1)
            return 401, "unauthorized: send the daemon's scan_reports_token as 'Authorization: Bearer <token>'"
        try:
            scans = parse_batch(body, self.default_catalog, self.catalogs)
        except BadReports as exc:
            self.counted("refused", 1)
            log.info("scan reports refused", reason=str(exc))
            return 400, str(exc)
        try:
            state = self.store()
            taken = state.scans.add(scans)
            state.run_scans.add(scans)
        except StateUnavailableError as exc:
            self.counted("unavailable", len(scans))
            return 503, str(exc)
        self.counted("taken", taken)
        return 200, f"taken {taken}"
