"""The status page as tests read it: runs recorded in a real state database, pages served
by the real StatusPages from a published evaluation, and what a page's tables, pagers and
links say, parsed from its HTML."""

from __future__ import annotations

import uuid
from html.parser import HTMLParser
from urllib.parse import urlsplit

from maintenance.config import Config
from maintenance.schedule.cycle import Evaluation
from maintenance.state.store import StateStore
from maintenance.ui.pages import Response, StatusPages
from maintenance.ui.status import StatusCache


def record_run(state: StateStore, table: str, job: str, status: str, *, error: str | None = None, holder: str = "daemon@ops-1:4242:9f1c2e7a") -> str:
    run_id = str(uuid.uuid4())
    state.runs.start(run_id, table, job, holder_id=holder, lease_epoch=3)
    if status != "running":
        state.runs.finish(run_id, status, error=error)
    return run_id


class Rendered(HTMLParser):
    """What the pagination tests read of a page: each table's body rows (the row's attributes
    and its cells' text, by the table's class), the pagers' text and their previous/next links."""

    def __init__(self, response: Response) -> None:
        super().__init__()
        assert response.status == 200, response.body.decode()[:2000]
        self.rows: dict[str, list[tuple[dict[str, str | None], list[str]]]] = {}
        self.pagers: list[str] = []
        self.links: dict[str, set[str]] = {}  # "next" / "prev" -> their hrefs (the pager is shown above and below a list)
        self._rows: list[tuple[dict[str, str | None], list[str]]] | None = None
        self._in_body = False
        self._cells: list[str] | None = None
        self._cell: list[str] | None = None
        self._pager: list[str] | None = None
        self.feed(response.body.decode())
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        cls = a.get("class") or ""
        if tag == "table":
            self._rows = self.rows.setdefault(cls, [])
        elif tag == "tbody":
            self._in_body = True
        elif tag == "tr" and self._in_body and self._rows is not None:
            self._cells = []
            self._rows.append((a, self._cells))
        elif tag == "td" and self._cells is not None:
            self._cell = []
        elif tag == "p" and cls.split()[:1] == ["pager"]:
            self._pager = []
        elif tag == "a" and cls in ("next", "prev"):
            self.links.setdefault(cls, set()).add(a["href"] or "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None and self._cells is not None:
            self._cells.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tbody":
            self._in_body = False
        elif tag == "table":
            self._rows = None
        elif tag == "p" and self._pager is not None:
            self.pagers.append(" ".join("".join(self._pager).split()))
            self._pager = None

    def handle_data(self, data: str) -> None:
        for sink in (self._cell, self._pager):
            if sink is not None:
                sink.append(data)

    def link(self, rel: str) -> str | None:
        """The page's one previous or next link; None on the first or last page."""
        found = self.links.get(rel, set())
        assert len(found) <= 1, found
        return next(iter(found), None)

    def pager(self, what: str) -> str:
        """The text of the pager of a list of `what`."""
        return next(p for p in self.pagers if f" {what})" in p or p.endswith(f" {what}"))


def visit(pages: StatusPages, url: str) -> Rendered:
    """A link on a page, followed the way the HTTP server answers it."""
    parts = urlsplit(url)
    return Rendered(pages.handle(parts.path, parts.query))


def crawl(pages: StatusPages, url: str, rel: str = "next") -> list[Rendered]:
    """The page at `url`, then every page its `rel` links lead to, until one has none."""
    found = [visit(pages, url)]
    while (nxt := found[-1].link(rel)) is not None:
        assert len(found) < 100, "the links go round in circles"
        found.append(visit(pages, nxt))
    return found


def published(config: Config, state: StateStore, evaluation: Evaluation) -> StatusPages:
    cache = StatusCache(config, ttl_s=3600)
    cache.publish(evaluation)  # what the daemon does after each evaluation
    return StatusPages(config, cache, state=lambda: state)
