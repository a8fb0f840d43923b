"""HTML building blocks: escaping, links, formatting, and the page layout with its style sheet.

Every value that reaches a page goes through `esc` (text and attribute values alike);
links are built with `href`, which encodes the query and escapes the result.
"""

from __future__ import annotations

import html
import time
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from urllib.parse import urlencode

from maintenance.units import format_bytes, format_seconds

MISSING = "—"


def esc(value: object) -> str:
    """Text or an attribute value, escaped (quotes included); None is a dash."""
    return MISSING if value is None else html.escape(str(value), quote=True)


def href(path: str, params: Mapping[str, object | None] | None = None) -> str:
    """An escaped URL for an href attribute; parameters that are None or '' are left out."""
    query = urlencode([(k, str(v)) for k, v in (params or {}).items() if v is not None and v != ""])
    return esc(f"{path}?{query}" if query else path)


def link(path: str, text: object, params: Mapping[str, object | None] | None = None, *, cls: str | None = None, title: str | None = None) -> str:
    attrs = f' class="{esc(cls)}"' if cls else ""
    attrs += f' title="{esc(title)}"' if title else ""
    return f'<a href="{href(path, params)}"{attrs}>{esc(text)}</a>'


def table_link(name: str, text: str | None = None) -> str:
    return link("/table", text if text is not None else name, {"name": name}, cls="table-name")


def utc(ms: float | None) -> str:
    if ms is None:
        return MISSING
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def ago(ms: float | None, now_ms: float | None = None) -> str:
    """'3m ago' / 'in 12s'."""
    if ms is None:
        return MISSING
    now_ms = time.time() * 1000 if now_ms is None else now_ms
    delta = (now_ms - ms) / 1000
    if abs(delta) < 1:
        return "just now"
    text = seconds(abs(delta))
    return f"{text} ago" if delta >= 0 else f"in {text}"


def seconds(value: float | None) -> str:
    return MISSING if value is None else format_seconds(value)


def number(value: float | None) -> str:
    if value is None:
        return MISSING
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"


def size(value: float | None) -> str:
    return MISSING if value is None else format_bytes(value)


def status_badge(status: str, text: str | None = None, title: str | None = None) -> str:
    title_attr = f' title="{esc(title)}"' if title else ""
    return f'<span class="badge s-{esc(status)}"{title_attr}>{esc(text if text is not None else status)}</span>'


def data_table(headers: Iterable[str], rows: Iterable[Iterable[str]], *, cls: str = "", empty: str = "nothing to show") -> str:
    """Cells are HTML already (escaped by their makers); headers are plain text."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    if not body:
        return f'<p class="muted">{esc(empty)}</p>'
    return f'<table class="{esc(cls)}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def pager(path: str, params: Mapping[str, object | None], key: str, page: int, pages: int, total: int, what: str) -> str:
    """'page 2 of 7 (340 tables)' with previous/next links that keep the other parameters."""
    if pages <= 1:
        return f'<p class="pager muted">{esc(number(total))} {esc(what)}</p>'
    parts = [f'<span class="muted">page {page} of {pages} ({esc(number(total))} {esc(what)})</span>']
    if page > 1:
        parts.insert(0, link(path, "« first", {**params, key: 1}) + " " + link(path, "‹ previous", {**params, key: page - 1}, cls="prev"))
    if page < pages:
        parts.append(link(path, "next ›", {**params, key: page + 1}, cls="next") + " " + link(path, "last »", {**params, key: pages}))
    return '<p class="pager">' + " ".join(parts) + "</p>"


def page_number(params: Mapping[str, str], key: str, pages: int) -> int:
    try:
        value = int(params.get(key, "1"))
    except ValueError:
        value = 1
    return min(max(1, value), max(1, pages))


STYLE = """
:root { --fg:#1f2933; --muted:#6b7785; --line:#d9dee5; --bg:#f6f7f9; --card:#fff; --accent:#1d4ed8;
        --ok:#15803d; --bad:#b91c1c; --warn:#b45309; --run:#1d4ed8; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif; color:var(--fg); background:var(--bg); }
header.top { background:#0f172a; color:#e2e8f0; padding:10px 24px; display:flex; gap:24px; align-items:baseline; flex-wrap:wrap; }
header.top .brand { font-weight:700; font-size:16px; color:#fff; }
header.top nav a { color:#cbd5e1; margin-right:16px; text-decoration:none; }
header.top nav a.active { color:#fff; border-bottom:2px solid #60a5fa; }
header.top .meta { margin-left:auto; font-size:12px; color:#94a3b8; }
main { padding:16px 24px 40px; max-width:1600px; }
h1 { font-size:20px; margin:4px 0 12px; word-break:break-all; }
h2 { font-size:16px; margin:28px 0 8px; }
a { color:var(--accent); }
a.table-name { font-family:ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; overflow-wrap:anywhere; }
td.name { min-width:16em; }
.nowrap { white-space:nowrap; }
.muted { color:var(--muted); }
.card { background:var(--card); border:1px solid var(--line); border-radius:6px; padding:12px 16px; margin:8px 0; }
.banner { border-radius:6px; padding:8px 12px; margin:8px 0; border:1px solid; }
.banner.bad { background:#fef2f2; border-color:#fecaca; color:#7f1d1d; }
.banner.warn { background:#fffbeb; border-color:#fde68a; color:#78350f; }
.banner.info { background:#eff6ff; border-color:#bfdbfe; color:#1e3a8a; }
table { border-collapse:collapse; width:100%; background:var(--card); border:1px solid var(--line); }
th, td { text-align:left; padding:5px 8px; border-bottom:1px solid var(--line); vertical-align:top; }
th { background:#eef1f5; font-weight:600; font-size:12px; text-transform:uppercase; letter-spacing:.03em; color:#475467; position:sticky; top:0; }
td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; }
tr.failing td { background:#fff5f5; }
.badge { display:inline-block; padding:0 6px; border-radius:9px; font-size:12px; border:1px solid var(--line); background:#f1f5f9; margin:1px 2px 1px 0; white-space:nowrap; }
.s-committed, .s-noop, .s-ok, .s-verified { background:#ecfdf3; border-color:#abefc6; color:#067647; }
.s-failed, .s-fenced, .s-abandoned, .s-changed { background:#fef3f2; border-color:#fecdca; color:#b42318; }
.s-running, .s-held, .s-due { background:#eff8ff; border-color:#b2ddff; color:#175cd3; }
.s-skipped, .s-free { background:#f8fafc; color:#667085; }
.facets { margin:4px 0 10px; }
.facets div { margin:2px 0; }
.facets .label { display:inline-block; width:90px; color:var(--muted); }
.facets a, .facets strong { margin-right:10px; white-space:nowrap; }
.facts { display:grid; grid-template-columns:repeat(auto-fill, minmax(200px, 1fr)); gap:6px 20px; }
.facts div span { display:block; font-size:12px; color:var(--muted); }
.facts div b { font-variant-numeric:tabular-nums; }
.error { color:var(--bad); white-space:pre-wrap; word-break:break-word; font-family:ui-monospace, monospace; font-size:12px; }
.reason { color:#344054; }
.mono { font-family:ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size:12px; word-break:break-all; }
.counters { font-family:ui-monospace, monospace; font-size:12px; color:#344054; }
svg { display:block; max-width:100%; height:auto; }
svg text { font:11px system-ui, sans-serif; fill:#344054; }
.chart-wrap { background:var(--card); border:1px solid var(--line); border-radius:6px; padding:8px; }
details summary { cursor:pointer; color:var(--accent); margin:6px 0; }
.pager a { margin:0 6px; }
footer { color:var(--muted); font-size:12px; margin-top:24px; }
"""


def layout(title: str, body: str, *, active: str = "", meta: str = "", refresh_s: int | None = None) -> bytes:
    """A whole page. `meta` (HTML) goes to the right of the navigation bar."""
    current = ' class="active"'
    nav = "".join(
        f'<a href="{esc(path)}"{current if key == active else ""}>{esc(text)}</a>'
        for key, path, text in (("overview", "/", "Tables"), ("runs", "/runs", "Runs"), ("leases", "/leases", "Leases"))
    )
    refresh = f'<meta http-equiv="refresh" content="{int(refresh_s)}">' if refresh_s else ""
    page = (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">{refresh}'
        f"<title>{esc(title)} · icemaint</title><style>{STYLE}</style></head><body>"
        f'<header class="top"><span class="brand">icemaint</span><nav>{nav}</nav><span class="meta">{meta}</span></header>'
        f"<main>{body}</main></body></html>\n"
    )
    return page.encode("utf-8")
