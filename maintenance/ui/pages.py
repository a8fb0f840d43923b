"""The status page: the overview of every table, one table's page, the leases.

`StatusPages.handle(path, query)` answers one GET; `maintenance/daemon/http.py` serves it
in the daemon (beside `/metrics` and `/healthz`) and `icemaint ui` without the scheduler.
Read-only: pages read the state database and table metadata through the same code the CLI
and the planner use, and offer links only (filters and pages are query parameters).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from urllib.parse import parse_qs

import structlog
from pyiceberg.table import Table

from maintenance.catalogs import TableRef, load_table, parse_table_ref
from maintenance.config import Config
from maintenance.errors import IcemaintError, UnknownTableError
from maintenance.jobs import registry
from maintenance.policy.model import Policy
from maintenance.progress import recorded_step
from maintenance.schedule.cycle import Evaluation, evaluate_table
from maintenance.schedule.decisions import Decision
from maintenance.schedule.membership import PREFIX as MEMBERSHIP_PREFIX
from maintenance.schedule.value import PREDICTED
from maintenance.state.leases import LeaseState
from maintenance.state.runs import ABANDONED, FAILED, FENCED, RUNNING, RunRecord
from maintenance.state.store import StateStore, open_state
from maintenance.table.files import snapshot_files
from maintenance.table.health import PartitionHealth, TableHealth, table_health
from maintenance.table.marks import SUMMARY_JOB
from maintenance.table.reader_cost import ReaderCost, reader_cost
from maintenance.table.targets import data_file_target
from maintenance.ui import charts
from maintenance.ui.fleet import runs_page
from maintenance.ui.html import (
    MISSING,
    ago,
    data_table,
    esc,
    layout,
    link,
    number,
    page_number,
    pager,
    seconds,
    size,
    status_badge,
    table_link,
    utc,
)
from maintenance.ui.latest_runs import LatestRuns
from maintenance.ui.origins import policy_view
from maintenance.ui.readers import readers_section
from maintenance.ui.status import Snapshot, StatusCache, TableSummary

log = structlog.get_logger(__name__)

FAILING = (FAILED, FENCED, ABANDONED)  # a table whose newest verdict (latest_runs.py) of some job is one of these is listed first
PER_PAGE, MAX_PER_PAGE = 50, 1000
RUNS_PER_PAGE, PARTITIONS_PER_PAGE, LEASES_PER_PAGE = 25, 50, 100
CHART_RUNS = 200  # the newest runs the time chart plots
_SHOWN_ELSEWHERE = ("fingerprint_before", "fingerprint_after", "content_verified", PREDICTED)  # in the verification column, the Readers section
_SECURITY_HEADERS = {
    # Nothing on these pages is a script; should escaping ever miss, the browser runs nothing.
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes
    content_type: str = "text/html; charset=utf-8"
    headers: tuple[tuple[str, str], ...] = tuple(_SECURITY_HEADERS.items())


class StatusPages:
    """The pages of one process. `policies` gives the policies in force (the daemon's);
    by default they are read from the policies folder on every table page."""

    paths = ("/", "/table", "/leases", "/runs")

    def __init__(self, config: Config, cache: StatusCache, *, policies: Callable[[], list[Policy] | None] | None = None,
                 state: Callable[[], StateStore] | None = None, wait_s: float = 30.0) -> None:
        self.config = config
        self.cache = cache
        self._policies = policies
        self._state = state or (lambda: open_state(config))
        self.latest_runs = LatestRuns()  # every table's newest runs, read again only where they moved
        self.wait_s = wait_s

    def handle(self, path: str, query: str = "") -> Response:
        params = {k: v[-1] for k, v in parse_qs(query, keep_blank_values=False).items()}
        started = time.perf_counter()
        try:
            if path == "/":
                body = self.overview(params)
            elif path == "/table":
                body = self.table(params)
            elif path == "/leases":
                body = self.leases(params)
            elif path == "/runs":
                body = runs_page(self._state())
            else:
                return Response(404, _message_page("Not found", f"no page at {path}"))
        except NotFound as exc:
            return Response(404, _message_page("Not found", str(exc)))
        except IcemaintError as exc:  # the state database or a catalog is down: say so, in one line
            log.warning("status page unavailable", path=path, error=str(exc))
            return Response(503, _message_page("Unavailable", str(exc)))
        except Exception as exc:  # a bug or an outage: one line on the page, the trace in the log
            log.error("status page failed", path=path, exc_info=True)
            return Response(500, _message_page("Error", f"{type(exc).__name__}: {exc}"))
        log.debug("status page rendered", path=path, ms=round((time.perf_counter() - started) * 1000, 1))
        return Response(200, body)

    # -- the overview ---------------------------------------------------------------------
    def overview(self, params: dict[str, str]) -> bytes:
        snapshot = self.cache.get(self.wait_s)
        if snapshot is None:
            detail = f"The last attempt failed: {self.cache.error}" if self.cache.error else "The first evaluation of every table is under way."
            body = f'<h1>Tables</h1><div class="banner info">{esc(detail)} This page reloads by itself every 5 seconds.</div>'
            return layout("Tables", body, active="overview", refresh_s=5)
        banners = []
        latest: dict[str, dict[str, RunRecord]] = {}
        verdicts: dict[str, dict[str, RunRecord]] = {}
        held: dict[str, LeaseState] = {}
        try:
            state = self._state()
            latest, verdicts = self.latest_runs.read_with_verdicts(state)
            held = {lease.table: lease for lease in state.leases.list() if lease.held}
        except IcemaintError as exc:
            banners.append(f'<div class="banner bad">Runs and leases are not shown: {esc(exc)}</div>')
        if self.cache.error:
            banners.append(f'<div class="banner warn">The last evaluation failed, the previous one is shown: {esc(self.cache.error)}</div>')
        for catalog, problem in sorted(snapshot.catalogs_failing.items()):
            banners.append(f'<div class="banner bad">Catalog {esc(catalog)}: its tables could not be listed: {esc(problem)}</div>')
        for catalog, hint in sorted(snapshot.catalogs_empty.items()):
            banners.append(f'<div class="banner bad">Catalog {esc(catalog)} lists no table; {esc(hint)}</div>')

        filters = {key: params.get(key) or None for key in ("catalog", "namespace", "policy")}
        chosen = [t for t in snapshot.tables if _matches(t, filters)]
        failing = [t for t in chosen if _failing(t, verdicts.get(t.name, {}))]
        failing_names = {t.name for t in failing}
        ordered = failing + [t for t in chosen if t.name not in failing_names]  # each part costliest first

        try:
            per = min(MAX_PER_PAGE, max(1, int(params.get("per", PER_PAGE))))
        except ValueError:
            per = PER_PAGE
        pages = max(1, -(-len(ordered) // per))
        page = page_number(params, "page", pages)
        first = (page - 1) * per
        keep = {**filters, "per": per if per != PER_PAGE else None}
        now_ms = time.time() * 1000
        rows = [_overview_row(first + i + 1, t, latest.get(t.name, {}), t.name in failing_names, held.get(t.name), now_ms)
                for i, t in enumerate(ordered[first:first + per])]
        due = sum(1 for t in chosen if t.next_due is not None)
        summary = (f'<p>{esc(number(len(chosen)))} tables{" (filtered)" if any(filters.values()) else ""}: '
                   f'<b>{esc(number(len(failing)))}</b> failing, <b>{esc(number(due))}</b> with a job due, '
                   f'<b>{esc(number(sum(1 for t in chosen if t.name in held)))}</b> leased now. '
                   '<span class="muted">Failing tables first, then by what their delete and small files cost readers per full scan '
                   "(the planner's estimate).</span></p>")
        table = (
            '<table class="overview"><thead><tr><th class="num">#</th><th>table</th><th>policy</th><th class="num">reader cost</th>'
            '<th class="num">delete files<br>eq / pos</th><th class="num">small files</th><th class="num">snapshots</th>'
            "<th>last run per job</th><th>next due</th><th>lease</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
            if rows else '<p class="muted">no table matches</p>'
        )
        body = ("<h1>Tables</h1>" + "".join(banners) + _facets(snapshot, filters, per) + summary
                + pager("/", keep, "page", page, pages, len(ordered), "tables") + table + pager("/", keep, "page", page, pages, len(ordered), "tables")
                + _footer(snapshot))
        return layout("Tables", body, active="overview", meta=_evaluation_meta(snapshot, self.cache))

    # -- one table ------------------------------------------------------------------------
    def table(self, params: dict[str, str]) -> bytes:
        name = params.get("name", "")
        try:
            ref = parse_table_ref(name, self.config)
        except IcemaintError as exc:
            raise NotFound(str(exc)) from None
        key = str(ref)
        state = self._state()
        banners: list[str] = []
        now = datetime.now(timezone.utc)
        health: TableHealth | None = None
        decisions: list[Decision] = []
        properties: dict[str, str] = {}
        policies: list[Policy] = []
        try:
            policies = self._current_policies()
        except IcemaintError as exc:
            banners.append(f'<div class="banner bad">Policies: {esc(exc)}</div>')
        try:
            table = load_table(self.config, ref)
        except UnknownTableError:
            raise NotFound(f"unknown table '{name}'") from None
        except IcemaintError as exc:
            table = None
            banners.append(f'<div class="banner bad">The table could not be read now: {esc(exc)}</div>')
            snapshot = self.cache.get(0)
            cached = snapshot.by_name.get(key) if snapshot is not None else None
            if snapshot is not None and cached is not None and cached.health is not None:
                health = cached.health
                banners.append(f'<div class="banner warn">Health as of {esc(utc(snapshot.taken_at * 1000))} (cached, no partitions).</div>')
        if table is not None:
            properties = dict(table.properties)
            try:
                into = Evaluation()
                decisions = evaluate_table(self.config, state, ref, policies, now, into, table=table) if policies else []
                health = into.health.get(key)
            except IcemaintError as exc:  # a bad icemaint.* property: the planner skips the table, and says why
                banners.append(f'<div class="banner bad">Not evaluated: {esc(exc)}</div>')
            if health is None:  # disabled, or not evaluated: its health all the same
                health = table_health(key, table, small_file_bytes=self.config.health.small_file_bytes, now_s=now.timestamp())

        lease = state.leases.get(key)
        total_runs = state.runs.count(table=key)
        run_pages = max(1, -(-total_runs // RUNS_PER_PAGE))
        run_page = page_number(params, "rpage", run_pages)
        runs = state.runs.list(table=key, limit=RUNS_PER_PAGE, offset=(run_page - 1) * RUNS_PER_PAGE)
        chart_runs = state.runs.list(table=key, limit=CHART_RUNS) if run_page != 1 or total_runs > RUNS_PER_PAGE else runs

        parts = [f'<h1>{esc(key)}</h1>', *banners]
        parts.append(_facts(health, decisions, lease))
        parts.append("<h2>What is due</h2>" + _decisions_table(decisions))
        deferring = _newest_deferrals(chart_runs)
        if deferring:
            parts.append("<h2>Hot partitions deferred</h2>" + _deferrals(deferring))
        parts.append("<h2>Delete files per partition</h2>" + _partitions(health, params, key))
        parts.append("<h2>Health over the run history</h2>" + _history(chart_runs, health, now))
        if table is not None:
            parts.append("<h2>Commits: writers and maintenance</h2>" + _timeline(table))
            parts.append("<h2>Data files by size</h2>" + _sizes(table))
        parts.append("<h2>Runs</h2>" + pager("/table", {"name": key}, "rpage", run_page, run_pages, total_runs, "runs") + _runs_table(runs))
        parts.append("<h2>Readers</h2>" + readers_section(state.scans.summaries([key]).get(key), runs, state.run_scans.after([r.run_id for r in runs])))
        parts.append("<h2>Policy</h2>" + _policy(ref, properties, policies))
        return layout(key, "".join(parts), active="overview", meta=f"read {esc(utc(time.time() * 1000))}")

    def _current_policies(self) -> list[Policy]:
        if self._policies is not None:
            policies = self._policies()
            if policies is not None:
                return policies
        from maintenance.policy.loader import load_policies

        return load_policies(self.config.policies_dir)

    # -- leases ---------------------------------------------------------------------------
    def leases(self, params: dict[str, str]) -> bytes:
        state = self._state()
        leases = sorted(state.leases.list(), key=lambda lease: (not lease.held, lease.table))
        running = {(r.table, r.holder_id): r for r in state.runs.list(status=RUNNING, limit=10_000)}
        pages = max(1, -(-len(leases) // LEASES_PER_PAGE))
        page = page_number(params, "page", pages)
        rows = []
        for lease in leases[(page - 1) * LEASES_PER_PAGE: page * LEASES_PER_PAGE]:
            run = running.get((lease.table, lease.holder)) if lease.held else None
            expiry = (f'{esc(utc(lease.expires_at_ms))}<br><span class="muted">in {esc(seconds((lease.expires_at_ms - lease.now_ms) / 1000))}</span>'
                      if lease.held else '<span class="muted">free</span>')
            rows.append([
                _lease_name(lease.table),
                status_badge("held" if lease.held else "free"),
                f'<span class="mono">{esc(lease.holder if lease.held else None)}</span>',
                f'<span class="num">{esc(lease.epoch)}</span>',
                esc(utc(lease.acquired_at_ms)),
                f'{esc(ago(lease.heartbeat_at_ms, lease.now_ms))}' if lease.heartbeat_at_ms else MISSING,
                expiry,
                (f'{esc(run.job)} <span class="mono">{esc(run.run_id)}</span><br><span class="muted">started {esc(ago(run.started_at_ms, lease.now_ms))}</span>'
                 if run is not None else MISSING),
            ])
        held = sum(1 for lease in leases if lease.held)
        body = (f"<h1>Leases</h1><p>{held} held now, {len(leases) - held} free. "
                '<span class="muted">Times are the state database\'s clock. A holder that stops renewing loses its lease at expiry; '
                "every change of holder raises the epoch, which fences the previous one.</span></p>"
                + pager("/leases", {}, "page", page, pages, len(leases), "leases")
                + data_table(["table", "state", "holder", "epoch", "acquired", "heartbeat", "expires", "run"], rows, cls="leases", empty="no table has ever been leased"))
        return layout("Leases", body, active="leases", meta=f"read {esc(utc(time.time() * 1000))}")


def _lease_name(name: str) -> str:
    """A table's lease links to the table; a daemon's membership lease (`schedule/membership.py`:
    not a table, no page of its own) says what it is, as text."""
    if name.startswith(MEMBERSHIP_PREFIX):
        catalog, _, holder = name[len(MEMBERSHIP_PREFIX):].partition("/")
        return (f'<span class="membership">daemon membership of catalog {esc(catalog)}</span><br>'
                f'<span class="muted mono">{esc(holder)}</span>')
    return table_link(name)


class NotFound(Exception):
    pass


# -- overview helpers -----------------------------------------------------------------------
def _matches(t: TableSummary, filters: dict[str, str | None]) -> bool:
    return ((filters["catalog"] is None or t.catalog == filters["catalog"])
            and (filters["namespace"] is None or t.namespace == filters["namespace"])
            and (filters["policy"] is None or t.policy == filters["policy"]))


def _failing(t: TableSummary, verdicts: dict[str, RunRecord]) -> bool:
    """Not evaluated, or some job's newest verdict (its newest run that was not running,
    skipped or interrupted) a failure: failing until a later run of that job succeeds."""
    return t.problem is not None or any(r.status in FAILING for r in verdicts.values())


def _facets(snapshot: Snapshot, filters: dict[str, str | None], per: int) -> str:
    rows = []
    for key, label, counts in (("catalog", "catalog", snapshot.catalogs), ("namespace", "namespace", snapshot.namespaces), ("policy", "policy", snapshot.policies)):
        if len(counts) <= 1 and filters[key] is None:
            continue
        current = filters[key]
        others = {k: v for k, v in filters.items() if k != key}
        base = {**others, "per": per if per != PER_PAGE else None}
        items = ["<strong>all</strong>" if current is None else link("/", "all", base)]
        for value, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:60]:
            text = f"{value} ({count:,})"
            items.append(f"<strong>{esc(text)}</strong>" if value == current else link("/", text, {**base, key: value}))
        if len(counts) > 60:
            items.append(f'<span class="muted">and {len(counts) - 60} more (name one with ?{esc(key)}=…)</span>')
        if current is not None and current not in counts:
            items.append(f"<strong>{esc(current)} (0)</strong>")
        rows.append(f'<div><span class="label">{esc(label)}</span>{"".join(items)}</div>')
    return f'<div class="facets">{"".join(rows)}</div>' if rows else ""


def _overview_row(rank: int, t: TableSummary, runs: dict[str, RunRecord], failing: bool, lease: LeaseState | None, now_ms: float) -> str:
    h = t.health
    cost = (f'×{t.cost.amplification:,.2f}<br><span class="muted">{esc(_cost_parts(t.cost))}</span>' if h is not None else MISSING)
    deletes = f"{esc(number(h.equality_delete_files))} / {esc(number(h.position_delete_files))}" if h is not None else MISSING
    last = " ".join(_run_badge(runs[job], now_ms) for job in sorted(runs, key=registry.order)) or '<span class="muted">none</span>'
    if t.problem is not None:
        nxt = f'<span class="error">not evaluated: {esc(t.problem)}</span>'
    elif t.next_due is not None:
        d = t.next_due
        nxt = f'{status_badge("due", d.job)} <span class="reason">{esc(d.reason)}</span>' + (f' <span class="muted">~{esc(seconds(d.estimated_s))}</span>' if d.estimated_s else "")
    elif t.note is not None:
        nxt = f'<span class="muted">{esc(t.note)}</span>'
    else:
        first = t.decisions[0] if t.decisions else None
        nxt = '<span class="muted">nothing due' + (f" ({esc(first.job)}: {esc(first.reason)})" if first else "") + "</span>"
    holder = f'{status_badge("held", "held")} <span class="mono">{esc(lease.holder)}</span>' if lease is not None else '<span class="muted">free</span>'
    return (f'<tr class="{"failing" if failing else ""}" data-table="{esc(t.name)}">'
            f'<td class="num">{rank}</td><td class="name">{table_link(t.name)}</td><td>{esc(t.policy)}</td><td class="num nowrap">{cost}</td>'
            f'<td class="num">{deletes}</td><td class="num">{esc(number(h.small_data_files) if h else None)}</td>'
            f'<td class="num">{esc(number(h.snapshots) if h else None)}</td><td>{last}</td><td>{nxt}</td><td>{holder}</td></tr>')


def _cost_parts(cost: ReaderCost) -> str:
    """What a scan's extra cost is made of, in what a reader does (the README's reader cost)."""
    return f"{number(cost.extra_opens)} extra opens, {number(cost.delete_records)} delete rows"


def _run_badge(run: RunRecord, now_ms: float) -> str:
    when = run.ended_at_ms or run.started_at_ms
    title = f"{run.job} {run.status} at {utc(when)}" + (f": {run.error}" if run.error else "")
    if run.ended_at_ms is None:  # still running: since when, and its live step
        step = recorded_step(run.stage)
        text = f"{run.job} {_mark(run.status)} started {ago(run.started_at_ms, now_ms)}" + (f", {step}" if step else "")
    else:  # "ago" and "took" spelled out: when it ended, how long it ran
        text = f"{run.job} {_mark(run.status)} {ago(when, now_ms)}, took {seconds((run.ended_at_ms - run.started_at_ms) / 1000)}"
    return status_badge(run.status, text, title)


def _mark(status: str) -> str:
    return {"committed": "✓", "noop": "✓", "failed": "✗", "fenced": "✗", "interrupted": "✗", "abandoned": "✗", "running": "…"}.get(status, "·")


def _evaluation_meta(snapshot: Snapshot, cache: StatusCache) -> str:
    age = time.time() - snapshot.taken_at
    text = f"health from {snapshot.source}, {seconds(age)} old"
    if cache.refreshing:
        text += " (refreshing)"
    return esc(text)


def _footer(snapshot: Snapshot) -> str:
    took = f", which took {seconds(snapshot.duration_s)}" if snapshot.duration_s is not None else ""
    return (f'<footer>Health, reader cost and what is due: {esc(snapshot.source)} at {esc(utc(snapshot.taken_at * 1000))}{esc(took)}. '
            "Runs and leases: the state database, now. A table's own page reads its metadata now.</footer>")


# -- table page helpers ---------------------------------------------------------------------
def _facts(health: TableHealth | None, decisions: list[Decision], lease: LeaseState | None) -> str:
    items: list[tuple[str, str]] = []
    if decisions:
        items.append(("policy", esc(decisions[0].policy)))
    if health is not None:
        cost = reader_cost(health)
        items += [
            ("reader cost per full scan", f"×{cost.amplification:,.2f} a clean table's ({esc(_cost_parts(cost))})"),
            ("current snapshot", f'<span class="mono">{esc(health.current_snapshot_id)}</span>'),
            ("data files", f"{esc(number(health.data_files))} ({esc(size(health.data_bytes))}, {esc(number(health.data_records))} rows)"),
            ("small data files", esc(number(health.small_data_files))),
            ("equality deletes", f"{esc(number(health.equality_delete_files))} files, {esc(number(health.equality_delete_records))} rows"),
            ("position deletes", f"{esc(number(health.position_delete_files))} files, {esc(number(health.position_delete_records))} rows"),
            ("deletion vectors", f"{esc(number(health.deletion_vectors))} in {esc(number(health.deletion_vector_files))} Puffin files, "
                                 f"{esc(number(health.deletion_vector_records))} rows"),
            ("manifests", f"{esc(number(health.manifests))} ({esc(number(health.small_manifests))} small)"),
            ("snapshots", f"{esc(number(health.snapshots))} (oldest {esc(seconds(health.oldest_snapshot_age_s))} old)"),
            ("metadata files", esc(number(health.metadata_files))),
            ("format version", esc(health.format_version)),
        ]
    if lease is not None and lease.held:
        items.append(("lease", f'held by <span class="mono">{esc(lease.holder)}</span>, epoch {esc(lease.epoch)}'))
    else:
        items.append(("lease", f"free (epoch {esc(lease.epoch)})" if lease is not None else "never leased"))
    return '<div class="card facts">' + "".join(f"<div><span>{esc(k)}</span><b>{v}</b></div>" for k, v in items) + "</div>"


def _newest_deferrals(runs: list[RunRecord]) -> list[RunRecord]:
    """Of each job that reports hot partitions deferred (MERGE, COMPACT), its newest run among
    `runs` (newest first), when that run deferred some."""
    newest: dict[str, RunRecord] = {}
    for run in runs:
        if "partitions_deferred_hot" in run.counters:
            newest.setdefault(run.job, run)
    return [run for run in newest.values() if run.counters["partitions_deferred_hot"]]


def _deferrals(runs: list[RunRecord]) -> str:
    """What the newest MERGE and COMPACT runs left because writers were deleting from it
    (`jobs/file_groups/deferral.py`): the partitions, named in the run's counters."""
    rows = []
    for run in runs:
        count = int(run.counters["partitions_deferred_hot"])
        names = run.counters.get("hot_partitions_deferred") or []
        listed = ", ".join(str(n) for n in names) + (f" and {count - len(names):,} more" if count > len(names) else "")
        rows.append([esc(run.job), esc(utc(run.started_at_ms)), f'<span class="num">{esc(number(count))}</span>', f'<span class="mono">{esc(listed)}</span>'])
    return ('<p class="muted">Partitions that writers\' merge-on-read commits reached often within the policy\'s defer_hot_window: '
            "the run left their files as they are, so that it would not fail the writers' statements in flight.</p>"
            + data_table(["job", "run started", "partitions", "which"], rows, cls="deferrals", empty="none"))


def _decisions_table(decisions: list[Decision]) -> str:
    rows = []
    for d in sorted(decisions, key=lambda d: registry.order(d.job)):
        if d.job == "-":
            rows.append([MISSING, status_badge("skipped", "no"), esc(d.reason), MISSING])
            continue
        rows.append([esc(d.job), status_badge("due", "due") if d.due else status_badge("skipped", "not due"), f'<span class="reason">{esc(d.reason)}</span>',
                     esc(seconds(d.estimated_s)) if d.due and d.estimated_s else MISSING])
    return data_table(["job", "due", "why", "estimated"], rows, cls="decisions", empty="no policy applies")


def _partitions(health: TableHealth | None, params: dict[str, str], name: str) -> str:
    if health is None:
        return '<p class="muted">health unavailable</p>'
    parts = health.partitions
    out = ('<p class="muted">Each cell is a partition, coloured by its live delete files (equality and position); '
           "a reader opens them for every data file of the partition they may apply to.</p>")
    out += '<div class="chart-wrap">' + charts.heatmap(parts) + "</div>"
    worst = sorted(parts, key=lambda p: (-p.delete_files, -p.data_files, p.partition))
    pages = max(1, -(-len(worst) // PARTITIONS_PER_PAGE))
    page = page_number(params, "ppage", pages)
    rows = [[f'<span class="mono">{esc(charts.partition_label(p))}</span>', esc(p.spec_id), *(f'<span class="num">{esc(number(v))}</span>' for v in _partition_numbers(p))]
            for p in worst[(page - 1) * PARTITIONS_PER_PAGE: page * PARTITIONS_PER_PAGE]]
    out += "<h3>Partitions, most delete files first</h3>" + pager("/table", {"name": name}, "ppage", page, pages, len(worst), "partitions")
    out += data_table(["partition", "spec", "data files", "small", "rows", "eq. delete files", "eq. delete rows", "pos. delete files", "pos. delete rows"],
                      rows, cls="partitions", empty="no live files")
    return out


def _partition_numbers(p: PartitionHealth) -> tuple[int, ...]:
    return (p.data_files, p.small_data_files, p.data_records, p.equality_delete_files, p.equality_delete_records, p.position_delete_files, p.position_delete_records)


def _timeline(table: Table) -> str:
    """The retained snapshots, writers' apart from maintenance's: a rewrite (`replace`: icemaint's
    jobs, Iceberg's procedures) changes no content; everything else is a writer's."""
    commits = []
    for snapshot in table.metadata.snapshots:
        summary = snapshot.summary
        operation = str(summary.operation.value) if summary is not None else "unknown"
        job = summary.get(SUMMARY_JOB) if summary is not None else None
        commits.append(charts.Commit(snapshot.timestamp_ms, bool(job) or operation == "replace",
                                     f"{operation}" + (f" by icemaint {job}" if job else "") + f" (snapshot {snapshot.snapshot_id})"))
    return '<div class="chart-wrap">' + charts.commit_timeline(commits) + "</div>"


def _sizes(table: Table) -> str:
    """The current snapshot's data files by size against the table's target (the live files
    the health read; cached)."""
    target = data_file_target(table.properties)
    try:
        sizes = [f.size for f in snapshot_files(table).data]
    except IcemaintError as exc:
        return f'<p class="muted">the data files could not be read: {esc(exc)}</p>'
    return (f'<p class="muted">{esc(number(len(sizes)))} data files against the table\'s target of {esc(size(target))} '
            "(write.target-file-size-bytes); COMPACT rewrites files below 0.75 or above 1.8 times it by default.</p>"
            '<div class="chart-wrap">' + charts.size_histogram(sizes, target) + "</div>")


def _history(runs: list[RunRecord], health: TableHealth | None, now: datetime) -> str:
    points = []
    for run in runs:
        if run.health and run.ended_at_ms is not None:
            points.append(charts.Point(run.ended_at_ms, _series(run.health), f"after {run.job} {run.status}"))
    if health is not None:
        points.append(charts.Point(now.timestamp() * 1000, _series({
            "data_files": health.data_files, "position_delete_files": health.position_delete_files,
            "equality_delete_files": health.equality_delete_files, "deletion_vectors": health.deletion_vectors, "snapshots": health.snapshots}), "now"))
    text = ('<p class="muted">Counters recorded at the end of each run (filled dots) and the table now (hollow dot). '
            f"The newest {CHART_RUNS} runs at most.</p>")
    rows = [[esc(utc(p.at_ms)), esc(p.label), *(esc(number(p.values.get(k))) for k, _, _ in charts.SERIES)] for p in sorted(points, key=lambda p: -p.at_ms)]
    table = data_table(["when", "point", *(name for _, name, _ in charts.SERIES)], rows, cls="history-numbers")
    return text + '<div class="chart-wrap">' + charts.history_chart(points) + f"</div><details><summary>the numbers</summary>{table}</details>"


def _series(values: dict[str, object]) -> dict[str, float]:
    """The chart's three series from recorded counters (a counter a run did not record is left out)."""
    out = {key: float(values[key]) for key in ("data_files", "snapshots") if isinstance(values.get(key), (int, float))}  # type: ignore[arg-type]
    deletes = [float(v) for v in (values.get(k) for k in ("position_delete_files", "equality_delete_files", "deletion_vectors")) if isinstance(v, (int, float))]
    if deletes:
        out["delete_files"] = sum(deletes)
    return out


def _runs_table(runs: list[RunRecord]) -> str:
    rows = []
    for run in runs:
        duration = (run.ended_at_ms - run.started_at_ms) / 1000 if run.ended_at_ms is not None else None
        counters = {k: v for k, v in run.counters.items() if k not in _SHOWN_ELSEWHERE}
        counter_text = "<br>".join(f"{esc(k)}={esc(v)}" for k, v in counters.items()) or MISSING
        step = recorded_step(run.stage)  # the last step it reported: live while it runs, where it was when it failed
        verified = run.counters.get("content_verified")
        if verified is None:
            verification = '<span class="muted">not verified</span>' if run.status in ("committed",) else MISSING
        else:
            title = f"fingerprint before {run.counters.get('fingerprint_before')}, after {run.counters.get('fingerprint_after')}"
            verification = status_badge("verified", "content verified", title) if verified else status_badge("changed", "content changed", title)
        rows.append([
            f'{esc(utc(run.started_at_ms))}<br><span class="muted">{esc(ago(run.started_at_ms))}</span>',
            esc(run.job),
            status_badge(run.status) + (f'<br><span class="muted stage">{esc(step)}</span>' if step and run.status not in ("committed", "noop") else ""),
            esc(seconds(duration)),
            f'<span class="mono">{esc(run.snapshot_id)}</span>',
            f'<span class="counters">{counter_text}</span>',
            verification,
            f'<span class="error">{esc(run.error)}</span>' if run.error else MISSING,
            f'<span class="mono" title="{esc(run.holder_id)}">{esc(run.run_id[:8])}</span><br><span class="muted">epoch {esc(run.lease_epoch)}</span>',
        ])
    return data_table(["started", "job", "status", "duration", "snapshot", "counters", "verification", "error", "run"], rows, cls="runs",
                      empty="no run yet")


def _policy(ref: TableRef, properties: dict[str, str], policies: list[Policy]) -> str:
    if not policies:
        return '<p class="muted">no policies loaded</p>'
    try:
        view = policy_view(ref, properties, policies)
    except IcemaintError as exc:
        return f'<div class="banner bad">{esc(exc)}</div>'
    head = f'<p><b>{esc(view.resolved.policy)}</b>, chosen by {esc(view.chosen_by)}.'
    if not view.resolved.enabled:
        head += " The table is disabled (icemaint.enabled=false): no job runs on it."
    head += "</p>"
    rows = []
    for s in view.settings:
        origin = f'<span class="mono">{esc(s.origin)}</span>'
        if s.replaces:
            origin += f'<br><span class="muted">replaces {esc(s.replaces)}</span>'
        rows.append([f'<span class="mono">{esc(s.key)}</span>', f'<span class="mono">{esc(s.value)}</span>', origin])
    return head + data_table(["setting", "value", "from"], rows, cls="policy", empty="the policy sets nothing")


def _message_page(title: str, text: str) -> bytes:
    return layout(title, f'<h1>{esc(title)}</h1><p class="error">{esc(text)}</p><p><a href="/">all tables</a></p>')

