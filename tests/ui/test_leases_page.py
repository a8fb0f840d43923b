"""The leases page over real HTTP from a real state database: a daemon's membership lease
(`schedule/membership.py`) is not a table, so it is named as what it is and links nowhere (it
linked to a table page that answered 404)."""

from __future__ import annotations

import re
import urllib.error
import urllib.request
import uuid
from html import unescape

from maintenance.config import Config
from maintenance.daemon.http import serve
from maintenance.schedule.membership import PREFIX
from maintenance.state.store import StateStore
from maintenance.ui.pages import StatusPages
from maintenance.ui.status import StatusCache


def test_a_membership_lease_is_named_and_links_to_no_404(config: Config, state: StateStore) -> None:
    catalog = f"lake{uuid.uuid4().hex[:6]}"
    holder = "daemon@ops-1:4242:9f1c2e7a"
    lease = state.leases.acquire(f"{PREFIX}{catalog}/{holder}", holder, ttl_s=120)
    assert lease is not None
    server = serve("127.0.0.1", 0, pages=StatusPages(config, StatusCache(config, ttl_s=300), state=lambda: state))
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        with urllib.request.urlopen(f"{base}/leases", timeout=30) as response:
            page = response.read().decode()
        row = next(r for r in re.findall(r"<tr.*?</tr>", page, re.S) if catalog in r)
        assert "href" not in row
        assert f"daemon membership of catalog {catalog}" in unescape(re.sub(r"<[^>]+>", " ", row))
        for href in set(re.findall(r'href="([^"]+)"', page)):  # and what the page does link to is there
            if href.startswith("/table"):
                continue  # a table page reads the catalog; this test's catalog has no tables
            try:
                with urllib.request.urlopen(base + unescape(href), timeout=30) as response:
                    status = response.status
            except urllib.error.HTTPError as exc:
                status = exc.code
            assert status == 200, href
    finally:
        server.shutdown()
        state.leases.release(lease)
