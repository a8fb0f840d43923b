"""The read-only status page for operators: server-rendered HTML with inline SVG charts.

- `status.py`: what the overview shows, taken from an evaluation and cached (the daemon's
  latest evaluation, or `icemaint ui`'s own, refreshed in the background after a TTL).
- `pages.py`: the pages (overview, table, runs, leases), routed by `StatusPages.handle`, which
  `maintenance/daemon/http.py` serves beside `/metrics` and `/healthz`.
- `fleet.py`: the runs page, every table's running, failed and recent runs.
- `charts.py`: the heatmap of delete files per partition and the time chart of the run
  history, as inline SVG.
- `origins.py`: every setting of a table's policy with where it came from (file:line or a
  table property).

No JavaScript, no forms, nothing that changes state; every value taken from metadata, the
state database or an error is escaped.
"""
