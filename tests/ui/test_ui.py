"""The status page (maintenance/ui/), driven in a real browser: Debian's Chromium, headless,
through chromedriver and selenium (`make test-tools` installs them).

- the overview lists generated tables in the planner's reader-cost order, failing ones first
  (served by `icemaint ui`, without the scheduler);
- a table's page shows its partitions and a run that just happened, with the health it
  recorded at its end;
- a table whose name holds `<script>` (and an error text holding markup) is shown as text;
- the leases page shows holder, epoch, expiry and run;
- long lists paginate (the overview, a table's runs, the leases): the default page sizes,
  the previous/next links, no row lost or repeated across pages; the overview of 1,000
  tables renders from the cache (its speed is `benchmarks/ui.py`'s, not a test's).

Each page is photographed. The README's images are these photographs, but a test run writes
them into docs/ only with ICEMAINT_SCREENSHOTS=docs (so an ordinary run leaves the committed
files alone); otherwise into the test's tmp_path, through the same code.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from maintenance.catalogs import TableRef, get_catalog, load_table
from maintenance.config import Config
from maintenance.daemon.http import serve
from maintenance.schedule.cycle import Evaluation
from maintenance.state.store import StateStore, open_state
from maintenance.table.health import table_health
from maintenance.table.reader_cost import reader_cost
from maintenance.ui.pages import Response, StatusPages
from maintenance.ui.status import DAEMON_SOURCE, StatusCache
from maintenance.workload.evaluation import generated_evaluation
from tests.conftest import CdcFactory
from tests.services.process import free_port
from tests.support.pages import Rendered, crawl, published, record_run, visit
from tests.support.paths import REPO

DOCS = REPO / "docs"
SCRIPT_NAME = "<script>pwned=1</script>"
MARKUP_ERROR = "<img src=x onerror=\"document.title='pwned'\"> ValidationException: found a new position delete for a replaced data file"


# -- the browser ------------------------------------------------------------------------------
def _which(*names: str) -> str | None:
    for name in names:
        found = shutil.which(name) or (name if os.path.isabs(name) and os.access(name, os.X_OK) else None)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    chromium = _which("chromium", "chromium-browser")
    driver_path = _which("chromedriver", "/usr/lib/chromium/chromedriver")
    if chromium is None or driver_path is None:
        pytest.fail("Chromium and chromedriver are needed: `make test-tools` installs them (scripts/setup-test-browser.sh)")
    options = Options()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run", f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}",
                "--no-proxy-server", "--disable-dev-shm-usage", "--window-size=1440,1000", "--hide-scrollbars"):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
    driver.set_page_load_timeout(120)
    try:
        yield driver
    finally:
        driver.quit()


def open_page(driver, url: str) -> None:  # type: ignore[no-untyped-def]
    """Load a page; while the first evaluation is under way the overview says so and reloads
    itself every 5 s (a meta refresh): wait for the real page (its footer or its table)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(url)
    WebDriverWait(driver, 300, poll_frequency=0.5).until(
        lambda d: not d.find_elements(By.CSS_SELECTOR, 'meta[http-equiv="refresh"]') and d.find_elements(By.TAG_NAME, "main"))


def screenshot(driver, name: str, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    """The whole page (not only the window) as a PNG, through the DevTools protocol: into
    docs/ (the README's images) when ICEMAINT_SCREENSHOTS=docs, else into the test's
    tmp_path, so that every run takes the photographs but only a deliberate one changes
    the committed files."""
    size = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
    clip = {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], 4000), "scale": 1}
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True, "clip": clip})
    path = (DOCS if os.environ.get("ICEMAINT_SCREENSHOTS") == "docs" else tmp_path) / name
    path.write_bytes(base64.b64decode(shot["data"]))
    assert path.stat().st_size > 10_000
    return path


def assert_no_markup_ran(driver) -> None:  # type: ignore[no-untyped-def]
    from selenium.webdriver.common.by import By

    assert driver.find_elements(By.TAG_NAME, "script") == []
    assert driver.find_elements(By.CSS_SELECTOR, "main img") == []
    assert driver.execute_script("return window.pwned === undefined")
    assert driver.title != "pwned"  # the error text would set it


# -- servers ----------------------------------------------------------------------------------

def http_get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


@pytest.fixture()
def pages_server(config: Config) -> Iterator[Callable[..., str]]:
    """Serve the pages in this process with a fresh cache: serve_pages(**StatusPages kwargs) -> base URL."""
    servers = []

    def start(cache: StatusCache | None = None, **kwargs: object) -> str:
        kwargs.setdefault("wait_s", 300.0)  # the first view waits for the first evaluation, however many tables the session made
        server = serve("127.0.0.1", 0, pages=StatusPages(config, cache or StatusCache(config, ttl_s=300), **kwargs))  # type: ignore[arg-type]
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()


@pytest.fixture()
def icemaint_ui(home: Path) -> Iterator[Callable[[], str]]:
    """`icemaint ui --port P` as its own process, on the session's home (the embedded default)."""
    processes: list[tuple[subprocess.Popen[bytes], Path]] = []

    def start() -> str:
        port = free_port()
        log = home / f"ui-{port}.log"
        env = {k: v for k, v in os.environ.items() if k != "ICEMAINT_CONFIG"}
        env["ICEMAINT_HOME"] = str(home)
        process = subprocess.Popen([sys.executable, "-m", "maintenance", "ui", "--port", str(port)], stdout=log.open("wb"), stderr=subprocess.STDOUT,
                                   env=env, cwd=REPO)
        processes.append((process, log))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert process.poll() is None, log.read_text()
            try:
                if http_get(f"http://127.0.0.1:{port}/healthz")[0] == 200:
                    return f"http://127.0.0.1:{port}"
            except OSError:
                time.sleep(0.2)
        pytest.fail(f"icemaint ui did not start:\n{log.read_text()}")

    yield start
    for process, log in processes:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0, log.read_text()


def cost_of(config: Config, ref: TableRef) -> float:
    return reader_cost(table_health(str(ref), load_table(config, ref), small_file_bytes=config.health.small_file_bytes)).extra_bytes


# -- the pages in a browser ---------------------------------------------------------------------
@pytest.mark.process
@pytest.mark.slow  # one of the slowest: make test-integration runs it
def test_overview_lists_generated_tables_in_reader_cost_order(spark, config: Config, home: Path, cdc_table: CdcFactory, browser,
                                                              icemaint_ui, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from selenium.webdriver.common.by import By

    made = [
        cdc_table(ref=TableRef(config.default_catalog, ("shop",), "orders"), rows=3000, commits=8, update_ratio=0.3)[0],
        cdc_table(ref=TableRef(config.default_catalog, ("shop",), "payments"), rows=1500, commits=3, update_ratio=0.2)[0],
    ]
    # one more the way an operator makes one: `icemaint workload cdc`
    env = {**{k: v for k, v in os.environ.items() if k != "ICEMAINT_CONFIG"}, "ICEMAINT_HOME": str(home)}
    generated = subprocess.run([sys.executable, "-m", "maintenance", "workload", "cdc", "shop.customers", "--rows", "600", "--commits", "1",
                                "--update-ratio", "0.05", "--json"], capture_output=True, text=True, env=env, cwd=REPO, timeout=600, check=False)
    assert generated.returncode == 0, generated.stderr
    made.append(TableRef(config.default_catalog, ("shop",), "customers"))
    costs = {str(ref): cost_of(config, ref) for ref in made}
    expected = sorted(costs, key=lambda name: -costs[name])
    assert len(set(costs.values())) == len(costs), costs  # a strict order to check

    base = icemaint_ui()
    open_page(browser, f"{base}/?namespace=shop")
    rows = browser.find_elements(By.CSS_SELECTOR, "table.overview tbody tr")
    assert [r.get_attribute("data-table") for r in rows] == expected
    assert [r.find_element(By.CSS_SELECTOR, "a.table-name").text for r in rows] == expected
    costliest = table_health(expected[0], load_table(config, {str(r): r for r in made}[expected[0]]), small_file_bytes=config.health.small_file_bytes)
    assert rows[0].find_elements(By.TAG_NAME, "td")[4].text == f"{costliest.equality_delete_files} / {costliest.position_delete_files}"

    # a failing run puts its table first, whatever it costs (runs are read at every view)
    state = open_state(config)
    cheapest = expected[-1]
    record_run(state, cheapest, "merge", "failed", error="ValidationException: found a new position delete for a replaced data file; rerun to replan")
    record_run(state, expected[0], "expire", "noop")
    holder = "daemon@ops-2:977:4be0aa12"
    lease = state.leases.acquire(expected[0], holder, ttl_s=60)
    open_page(browser, f"{base}/?namespace=shop")
    state.leases.release(lease)
    rows = browser.find_elements(By.CSS_SELECTOR, "table.overview tbody tr")
    assert [r.get_attribute("data-table") for r in rows] == [cheapest, *expected[:-1]]
    assert "failing" in rows[0].get_attribute("class")
    assert "merge ✗" in rows[0].text and "expire ✓" in rows[1].text and holder in rows[1].text
    assert re.search(r"expire ✓ (just now|[0-9.]+s ago), took [0-9.]+s", rows[1].text), rows[1].text  # when it ended, how long it ran
    # filters are links, and other filters narrow to nothing
    assert browser.find_elements(By.LINK_TEXT, "all")
    open_page(browser, f"{base}/?namespace=shop&policy=no-such-policy")
    assert browser.find_elements(By.CSS_SELECTOR, "table.overview tbody tr") == []
    open_page(browser, f"{base}/?namespace=shop")
    screenshot(browser, "ui-overview.png", tmp_path)


def test_a_table_page_shows_its_partitions_and_a_run_that_just_happened(spark, config: Config, cdc_table: CdcFactory, browser,
                                                                         pages_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from selenium.webdriver.common.by import By

    from maintenance.run.runner import run_job

    ref, _, _ = cdc_table(ref=TableRef(config.default_catalog, ("shop",), "events"), rows=2000, commits=4, update_ratio=0.3)
    before = run_job(config, ref, "expire")  # a noop (nothing is 5 days old): records the health as it is (ORPHANS would not: JobSpec.health_after)
    cdc_table(ref=ref, rows=800, commits=2, update_ratio=0.3, seed=7)  # more commits by the "sink"
    result = run_job(config, ref, "merge", verify=True)
    assert before.status == "noop" and result.status == "committed" and result.content_verified, result.error

    state = open_state(config)
    recorded = state.runs.get(result.run_id)
    table = load_table(config, ref)
    assert recorded.health is not None and recorded.health["snapshot_id"] == table.metadata.current_snapshot_id
    assert recorded.health["equality_delete_files"] == 0 and recorded.health["position_delete_files"] == 0
    assert state.runs.get(before.run_id).health["equality_delete_files"] > 0
    cdc_table(ref=ref, rows=900, commits=3, update_ratio=0.3, seed=11)  # the sink goes on: deletes again, for the heatmap
    now = table_health(str(ref), load_table(config, ref), small_file_bytes=config.health.small_file_bytes)
    partitions = [p.partition for p in now.partitions]
    assert len(partitions) == 4 and now.equality_delete_files > 0
    with load_table(config, ref).transaction() as change:  # an operator's override of the policy, for this table
        change.set_properties({"icemaint.merge.every": "30m"})

    base = pages_server()
    open_page(browser, f"{base}/?namespace=shop")
    browser.find_element(By.CSS_SELECTOR, f'tr[data-table="{ref}"] a.table-name').click()
    assert browser.find_element(By.TAG_NAME, "h1").text == str(ref)
    cells = browser.find_elements(By.CSS_SELECTOR, "svg.heatmap g.cell")
    assert sorted(c.get_attribute("data-partition") for c in cells) == sorted(partitions)
    worst = max(now.partitions, key=lambda p: p.delete_files)
    assert f"{worst.delete_files} deletes" in browser.find_element(By.CSS_SELECTOR, f'svg.heatmap g.cell[data-partition="{worst.partition}"]').text
    listed = [r.find_elements(By.TAG_NAME, "td")[0].text for r in browser.find_elements(By.CSS_SELECTOR, "table.partitions tbody tr")]
    assert sorted(listed) == sorted(partitions)
    runs = browser.find_elements(By.CSS_SELECTOR, "table.runs tbody tr")
    newest = runs[0].text
    assert result.run_id[:8] in newest and "committed" in newest and "content verified" in newest
    assert f"delete_files_removed={result.counters['delete_files_removed']}" in newest
    assert any(before.run_id[:8] in r.text and "noop" in r.text for r in runs)
    # the time chart: one point per run that recorded health (+ now), for each of the three series
    assert len(browser.find_elements(By.CSS_SELECTOR, "svg.history circle")) == 3 * 3
    policy = {r.find_elements(By.TAG_NAME, "td")[0].text: r.text for r in browser.find_elements(By.CSS_SELECTOR, "table.policy tbody tr")}
    assert "default.yaml:" in policy["merge.when.equality_delete_files"]
    assert "30m" in policy["merge.every"] and "table property icemaint.merge.every" in policy["merge.every"]
    assert "replaces 10m from" in policy["merge.every"] and "default.yaml:" in policy["merge.every"]
    screenshot(browser, "ui-table.png", tmp_path)


def test_a_table_named_script_is_shown_as_text(config: Config, browser, pages_server) -> None:  # type: ignore[no-untyped-def]
    import pyarrow as pa
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import LongType, NestedField, StringType
    from selenium.webdriver.common.by import By

    catalog = get_catalog(config, config.default_catalog)
    catalog.create_namespace_if_not_exists("xss")
    schema = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "tag", StringType(), required=False))
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="tag"))
    warehouse = config.catalogs[config.default_catalog].warehouse
    table = catalog.create_table(("xss", SCRIPT_NAME), schema, partition_spec=spec, location=f"{warehouse}/xss/scripted",
                                 properties={"format-version": "2", "icemaint.merge.every": "<b>30m</b>"})
    table.append(pa.table({"id": pa.array([1, 2], pa.int64()), "tag": pa.array(["<i>x</i>", "plain"])}))
    name = f"{config.default_catalog}.xss.{SCRIPT_NAME}"
    record_run(open_state(config), name, "merge", "failed", error=MARKUP_ERROR)

    base = pages_server()
    open_page(browser, f"{base}/?namespace=xss")
    assert_no_markup_ran(browser)
    link = browser.find_element(By.CSS_SELECTOR, "table.overview a.table-name")
    assert link.text == name
    assert "&lt;script&gt;pwned=1&lt;/script&gt;" in browser.page_source
    link.click()
    assert_no_markup_ran(browser)
    assert browser.find_element(By.TAG_NAME, "h1").text == name
    assert MARKUP_ERROR in browser.find_element(By.CSS_SELECTOR, "table.runs").text
    # a bad table property is an error of that table (the planner skips it), shown as text too
    main = browser.find_element(By.TAG_NAME, "main").text
    assert "icemaint.merge.every" in main and "<b>30m</b>" in main
    assert [p.text for p in browser.find_elements(By.CSS_SELECTOR, "table.partitions tbody tr td:first-child")] != []


def test_the_leases_page_shows_holder_epoch_expiry_and_run(config: Config, browser, pages_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from selenium.webdriver.common.by import By

    state = open_state(config)
    holder = "daemon@ops-1:4242:9f1c2e7a"
    table = f"{config.default_catalog}.shop.orders"
    lease = state.leases.acquire(table, holder, ttl_s=120)
    assert lease is not None
    run_id = record_run(state, table, "merge", "running", holder=holder)
    other = state.leases.acquire(f"{config.default_catalog}.shop.payments", "daemon@ops-2:977:4be0aa12", ttl_s=120)
    try:
        base = pages_server()
        open_page(browser, f"{base}/leases")
        rows = {r.find_element(By.CSS_SELECTOR, "a.table-name").text: r for r in browser.find_elements(By.CSS_SELECTOR, "table.leases tbody tr")}
        row = rows[table].text
        assert holder in row and str(lease.epoch) in row and "held" in row and run_id in row and "merge" in row
        assert "in 1m" in row or "in 2m" in row  # expiry, by the database's clock
        screenshot(browser, "ui-leases.png", tmp_path)
    finally:
        state.runs.finish(run_id, "committed")
        state.leases.release(lease)
        if other is not None:
            state.leases.release(other)


def test_the_runs_page_shows_the_fleet_running_failed_and_recent_with_errors(config: Config, browser, pages_server) -> None:  # type: ignore[no-untyped-def]
    """`/runs`: every table's running, failed and recent runs; a failure's error is text in
    the page (it was only a badge's tooltip on the overview)."""
    from selenium.webdriver.common.by import By

    state = open_state(config)
    tag = uuid.uuid4().hex[:6]
    running_table, failed_table = f"{config.default_catalog}.fleet_{tag}.a", f"{config.default_catalog}.fleet_{tag}.b"
    running = record_run(state, running_table, "compact", "running")
    state.runs.set_step(running, "starting Spark", {})
    record_run(state, failed_table, "merge", "failed", error=f"boom {tag}: the catalog refused the commit")
    try:
        open_page(browser, f"{pages_server()}/runs")
        running_rows = [r.text for r in browser.find_elements(By.CSS_SELECTOR, "table.runs-running tbody tr")]
        assert any(running_table in r and "compact" in r and "starting Spark" in r for r in running_rows), running_rows
        failed_rows = [r.text for r in browser.find_elements(By.CSS_SELECTOR, "table.runs-failed tbody tr")]
        assert any(failed_table in r and f"boom {tag}: the catalog refused the commit" in r for r in failed_rows), failed_rows
        recent = browser.find_element(By.CSS_SELECTOR, "table.runs-recent").text
        assert running_table in recent and failed_table in recent
        assert browser.find_element(By.CSS_SELECTOR, 'header.top nav a[href="/runs"]').text == "Runs"
    finally:
        state.runs.finish(running, "committed")


# -- long lists: pages, rendered by the code the HTTP server calls (`StatusPages.handle`) ---------
def ranked(evaluation: Evaluation, failing: set[str]) -> list[str]:
    """The overview's order, worked out from the health: failing tables first, then the
    rest, each part by reader cost (costliest first, then by name)."""
    cost = {name: reader_cost(health).extra_bytes for name, health in evaluation.health.items()}
    by_cost = sorted(cost, key=lambda name: (-cost[name], name))
    return [n for n in by_cost if n in failing] + [n for n in by_cost if n not in failing]


def test_the_overview_shows_50_tables_a_page_and_links_every_page_once(config: Config, state: StateStore) -> None:
    tag = uuid.uuid4().hex[:6]
    names = [f"lake.{('east', 'west')[i % 2]}_{tag}.t{i:03d}" for i in range(120)]
    evaluation = generated_evaluation(names)
    failing = set(names[::40])  # their newest merge failed: listed first, whatever they cost
    for name in failing:
        record_run(state, name, "merge", "failed", error="boom")
    record_run(state, names[1], "merge", "committed")  # a run that did not fail moves nothing
    expected = ranked(evaluation, failing)
    pages = published(config, state, evaluation)

    forward = crawl(pages, "/")
    assert [len(p.rows["overview"]) for p in forward] == [50, 50, 20]  # 50 a page unless asked otherwise
    assert [p.pager("tables").count(f"page {k} of 3 (120 tables)") for k, p in enumerate(forward, 1)] == [1, 1, 1]
    assert [(p.link("prev"), p.link("next")) for p in forward] == [(None, "/?page=2"), ("/?page=1", "/?page=3"), ("/?page=2", None)]
    shown = [row["data-table"] for p in forward for row, _ in p.rows["overview"]]
    assert shown == expected  # every table once, in order, across the pages
    assert [cells[0] for p in forward for _, cells in p.rows["overview"]] == [str(k) for k in range(1, 121)]
    assert {row["data-table"] for row, _ in forward[0].rows["overview"][:3]} == failing
    backward = crawl(pages, "/?page=3", "prev")
    assert [row["data-table"] for p in reversed(backward) for row, _ in p.rows["overview"]] == expected

    # filters and the page size ride along in the links
    west = crawl(pages, f"/?namespace=west_{tag}&per=7")
    assert len(west) == 9 and west[0].pager("tables").startswith("page 1 of 9 (60 tables)")
    assert parse_qs(urlsplit(west[3].link("next") or "").query) == {"namespace": [f"west_{tag}"], "per": ["7"], "page": ["5"]}
    assert [row["data-table"] for p in west for row, _ in p.rows["overview"]] == [n for n in expected if f".west_{tag}." in n]
    # a page number out of range shows the nearest page (its tables: a run's "just now" may
    # have become "1.0s ago" since the crawl)
    tables = lambda page: [row["data-table"] for row, _ in page.rows["overview"]]  # noqa: E731
    assert tables(visit(pages, "/?page=99")) == tables(forward[-1])
    assert tables(visit(pages, "/?page=0")) == tables(visit(pages, "/?page=x")) == tables(forward[0])


def _small_table(config: Config, namespace: str, name: str) -> TableRef:
    """A real table of the session's catalog, written by pyiceberg (no Spark needed)."""
    import pyarrow as pa
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField

    catalog = get_catalog(config, config.default_catalog)
    catalog.create_namespace_if_not_exists(namespace)
    table = catalog.create_table((namespace, name), Schema(NestedField(1, "id", LongType(), required=False)), properties={"format-version": "2"})
    table.append(pa.table({"id": pa.array([1, 2], pa.int64())}))
    return TableRef(config.default_catalog, (namespace,), name)


def test_a_table_page_shows_25_runs_a_page_and_links_every_page_once(config: Config, state: StateStore) -> None:
    name = str(_small_table(config, "paging", f"runs_{uuid.uuid4().hex[:8]}"))
    for seq in range(60):
        run_id = str(uuid.uuid4())
        state.runs.start(run_id, name, "merge", holder_id="daemon@a:1:x", lease_epoch=1)
        state.runs.finish(run_id, "committed", counters={"seq": seq})
    newest_first = [f"seq={r.counters['seq']}" for r in state.runs.list(table=name, limit=1000)]
    pages = StatusPages(config, StatusCache(config), state=lambda: state)

    forward = crawl(pages, f"/table?{urlencode({'name': name})}")
    assert [len(p.rows["runs"]) for p in forward] == [25, 25, 10]
    assert [p.pager("runs").count(f"page {k} of 3 (60 runs)") for k, p in enumerate(forward, 1)] == [1, 1, 1]
    links = [{rel: parse_qs(urlsplit(p.link(rel) or "").query) for rel in ("prev", "next")} for p in forward]
    assert links == [{"prev": {}, "next": {"name": [name], "rpage": ["2"]}},
                     {"prev": {"name": [name], "rpage": ["1"]}, "next": {"name": [name], "rpage": ["3"]}},
                     {"prev": {"name": [name], "rpage": ["2"]}, "next": {}}]
    shown = [cells[5] for p in forward for _, cells in p.rows["runs"]]  # the counters column
    assert shown == newest_first and sorted(shown) == sorted(f"seq={k}" for k in range(60))
    assert [cells[5] for p in reversed(crawl(pages, f"/table?{urlencode({'name': name, 'rpage': 3})}", "prev")) for _, cells in p.rows["runs"]] == shown


def test_the_leases_page_shows_100_leases_a_page_held_first(config: Config, state: StateStore) -> None:
    tag = uuid.uuid4().hex[:6]
    names = [f"lake.leases_{tag}.t{i:03d}" for i in range(230)]
    leases = [state.leases.acquire(name, f"daemon@ops-{tag}:1:x", ttl_s=600) for name in names]
    assert all(lease is not None for lease in leases)
    for lease in leases[::5]:  # released: free, listed after every held one
        assert lease is not None and state.leases.release(lease)
    free = set(names[::5])
    total = len(state.leases.list())  # this database's leases: these and any an earlier test left
    pages = StatusPages(config, StatusCache(config), state=lambda: state)

    forward = crawl(pages, "/leases")
    count = -(-total // 100)
    assert len(forward[0].rows["leases"]) == 100 and len(forward) == count
    assert [len(p.rows["leases"]) for p in forward] == [100] * (count - 1) + [total - 100 * (count - 1)]
    assert [(p.link("prev"), p.link("next")) for p in forward[:2]] == [(None, "/leases?page=2"), ("/leases?page=1", "/leases?page=3")]
    assert forward[-1].link("next") is None and forward[0].pager("leases").startswith(f"page 1 of {count} ({total} leases)")
    rows = [cells for p in forward for _, cells in p.rows["leases"]]
    assert len({cells[0] for cells in rows}) == len(rows) == total  # none lost, none twice
    mine = [(cells[0], cells[1]) for cells in rows if f".leases_{tag}." in cells[0]]
    assert mine == [(n, "held") for n in sorted(set(names) - free)] + [(n, "free") for n in sorted(free)]


# -- the cache: 1,000 tables (how fast: benchmarks/ui.py) ---------------------------------------
def _thousand_tables(config: Config, state: StateStore) -> Evaluation:
    """An evaluation of 1,000 tables as the daemon publishes it, with 5 runs each (every
    50th table's newest merge failed) and every 10th table leased."""
    from sqlalchemy import insert

    from maintenance.state.schema import RunRow

    names = [f"lake.ns{i % 25}.table_{i:04d}" for i in range(1000)]
    evaluation = generated_evaluation(names)
    rows = []
    now_ms = int(time.time() * 1000)
    for i, name in enumerate(names):
        for k, job in enumerate(("merge", "expire", "orphans", "merge", "convert")):
            status = "failed" if (i % 50 == 0 and k == 3) else ("committed" if k % 2 == 0 else "noop")
            rows.append({"run_id": str(uuid.uuid4()), "table_name": name, "job": job, "status": status, "holder_id": "daemon@a:1:x", "lease_epoch": k,
                         "started_at_ms": now_ms - (5 - k) * 60_000, "ended_at_ms": now_ms - (5 - k) * 60_000 + 9_000, "snapshot_id": i,
                         "counters": json.dumps({"delete_files_removed": 3}), "error": "boom" if status == "failed" else None,
                         "health": json.dumps({"data_files": 3, "snapshots": 4})})
    with state.engine.begin() as conn:
        conn.execute(insert(RunRow.__table__), rows)
    for name in names[::10]:
        state.leases.acquire(name, "daemon@a:1:x", ttl_s=600)
    return evaluation


def test_the_overview_of_1000_tables_renders_from_the_cache_and_paginates(config: Config, tmp_path: Path) -> None:
    from maintenance.state.database import ensure_schema, make_engine

    engine = make_engine(f"sqlite:///{tmp_path / 'state.db'}")
    ensure_schema(engine)
    state = StateStore.on(engine)
    evaluation = _thousand_tables(config, state)
    expected = ranked(evaluation, {f"lake.ns{i % 25}.table_{i:04d}" for i in range(0, 1000, 50)})
    pages = published(config, state, evaluation)

    everything = visit(pages, "/?per=1000")
    assert [row["data-table"] for row, _ in everything.rows["overview"]] == expected
    assert everything.link("next") is None and everything.pager("tables") == "1,000 tables"
    assert sum("held" in cells[9] for _, cells in everything.rows["overview"]) == 100
    forward = crawl(pages, "/")
    assert len(forward) == 20 and {len(p.rows["overview"]) for p in forward} == {50}
    assert forward[0].pager("tables").startswith("page 1 of 20 (1,000 tables)")
    assert [row["data-table"] for p in forward for row, _ in p.rows["overview"]] == expected

    server = serve("127.0.0.1", 0, pages=pages)  # and the same over HTTP
    try:
        status, page = http_get(f"http://127.0.0.1:{server.server_address[1]}/?per=1000")
    finally:
        server.shutdown()
    assert status == 200 and page.count('<tr class="') == 1000 and "<b>20</b> failing" in page


# -- pieces without a browser ---------------------------------------------------------------------
def test_run_health_round_trip_and_the_overview_queries(state: StateStore) -> None:
    table = f"cat.ns.ui_{uuid.uuid4().hex[:8]}"
    first = record_run(state, table, "merge", "committed")
    time.sleep(0.02)
    second = str(uuid.uuid4())
    state.runs.start(second, table, "merge", holder_id="h", lease_epoch=4)
    health = {"snapshot_id": 2**62 + 1, "data_files": 12, "small_data_files": 3, "position_delete_files": 0, "equality_delete_files": 5, "snapshots": 40}
    state.runs.finish(second, "failed", error="boom", health=health)
    time.sleep(0.02)
    state.runs.start(str(uuid.uuid4()), table, "merge", holder_id="h", lease_epoch=None, status="skipped")  # newest, but skipped
    assert state.runs.get(second).health == health and state.runs.get(first).health is None
    latest = [r for r in state.runs.latest_per_job() if r.table == table]
    assert [(r.run_id, r.status) for r in latest] == [(second, "failed")]
    assert state.runs.count(table=table) == 3
    assert [r.run_id for r in state.runs.list(table=table, limit=1, offset=1)] == [second]
    assert [r.run_id for r in state.runs.list(table=table, status="committed")] == [first]


def test_policy_settings_name_their_file_line_or_table_property(tmp_path: Path) -> None:
    from maintenance.policy.loader import load_policies
    from maintenance.ui.origins import policy_view

    (tmp_path / "cdc.yaml").write_text(
        "name: cdc\npriority: 5\nselect:\n  namespaces: [\"cdc*\"]\njobs:\n  merge:\n    when:\n      delete_ratio: 0.02\n    every: 6h\n"
        "    spark:\n      spark.sql.shuffle.partitions: \"16\"\n  orphans:\n    every: 1d\n"
    )
    policies = load_policies(tmp_path)
    ref = TableRef("local", ("cdc_orders",), "t")
    view = policy_view(ref, {"icemaint.merge.every": "30m", "icemaint.merge.spark.spark.sql.shuffle.partitions": "8", "other": "x"}, policies)
    settings = {s.key: s for s in view.settings}
    source = str(tmp_path / "cdc.yaml")
    assert view.chosen_by.startswith(f"its selector ({source}:3)")
    assert (settings["merge.when.delete_ratio"].value, settings["merge.when.delete_ratio"].origin) == ("0.02", f"{source}:8")
    assert (settings["merge.every"].value, settings["merge.every"].origin) == ("30m", "table property icemaint.merge.every")
    assert settings["merge.every"].replaces == f"6h from {source}:9"
    spark_key = "merge.spark.spark.sql.shuffle.partitions"
    assert (settings[spark_key].value, settings[spark_key].origin) == ("8", "table property icemaint.merge.spark.spark.sql.shuffle.partitions")
    assert settings["orphans.every"].origin == f"{source}:13"
    assert settings["select.namespaces"].origin == f"{source}:4"
    named = policy_view(ref, {"icemaint.policy": "cdc", "icemaint.enabled": "false"}, policies)
    assert named.chosen_by == "table property icemaint.policy" and not named.resolved.enabled
    assert {s.key: s.origin for s in named.settings}["icemaint.enabled"] == "table property icemaint.enabled"


def test_charts_escape_partition_values() -> None:
    from maintenance.table.health import PartitionHealth
    from maintenance.ui import charts

    svg = charts.heatmap([PartitionHealth(partition="tag=<script>x</script>", equality_delete_files=2, data_files=1)])
    assert "<script>" not in svg and "&lt;script&gt;" in svg
    chart = charts.history_chart([charts.Point(0, {"data_files": 1, "delete_files": 2, "snapshots": 3}, "after <b>merge</b>")])
    assert "<b>" not in chart and chart.count("<circle") == 3


UI_POLICY = """\
name: ui-daemon
select:
  namespaces: "{namespace}"
jobs:
  merge:
    enabled: false
"""


@pytest.mark.process
def test_a_daemon_process_serves_the_page_from_its_latest_evaluation(config: Config, cdc_table: CdcFactory, tmp_path: Path) -> None:
    """`icemaint daemon` as its own process, on a home of its own (ICEMAINT_HOME; its config
    names the session's catalog), serves the page on its port beside /metrics and /healthz,
    from its own latest evaluation; the page lists the CDC table the test made, under the
    daemon's policy. Nothing is due (merge disabled), so the daemon never starts Spark."""
    ref, _, _ = cdc_table(ref=TableRef(config.default_catalog, (f"ui_daemon_{uuid.uuid4().hex[:6]}",), "orders"), rows=500, commits=2)
    home = tmp_path / "home"
    (home / "policies").mkdir(parents=True)
    (home / "policies" / "ui.yaml").write_text(UI_POLICY.format(namespace=ref.namespace[0]))
    local = config.catalogs[config.default_catalog]
    port = free_port()
    (home / "icemaint.yaml").write_text(json.dumps({
        "catalogs": {local.name: {"type": local.type, "uri": local.uri, "warehouse": local.warehouse}},
        "policies": str(home / "policies"),
        "daemon": {"interval": "2s", "metrics_port": port, "metrics_host": "127.0.0.1"},
    }))
    env = {**{k: v for k, v in os.environ.items() if k != "ICEMAINT_CONFIG"}, "ICEMAINT_HOME": str(home), "ICEMAINT_CONFIG": str(home / "icemaint.yaml")}
    log = tmp_path / "daemon.log"
    process = subprocess.Popen([sys.executable, "-m", "maintenance", "daemon"], stdout=log.open("wb"), stderr=subprocess.STDOUT, env=env, cwd=REPO,
                               start_new_session=True)  # its own process group, killed whole below
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: 'icemaint_evaluations_total{outcome="ok"} 1.0' in http_get(f"{base}/metrics")[1], process, log)
        status, page = http_get(f"{base}/?namespace={ref.namespace[0]}")
        assert status == 200 and DAEMON_SOURCE.replace("'", "&#x27;") in page, page
        rows = Rendered(Response(200, page.encode(), "text/html")).rows["overview"]
        assert [row["data-table"] for row, _ in rows] == [str(ref)] and "ui-daemon" in rows[0][1], rows
        status, health = http_get(f"{base}/healthz")
        assert status == 200 and health.startswith("ok: last evaluation"), health
        assert "\nicemaint_spark_running 0.0\n" in http_get(f"{base}/metrics")[1]  # nothing due: no Spark in the daemon
        assert http_get(f"{base}/table?name={ref}")[0] == 200
        assert http_get(f"{base}/nothing-here")[0] == 404
    finally:
        kill_group(process)
    assert process.returncode == 0, log.read_text()[-3000:]
    text = log.read_text()
    assert "Traceback" not in text, text[-3000:]


def wait_until(condition: Callable[[], bool], process: subprocess.Popen[bytes], log: Path, timeout_s: float = 120) -> None:
    """Poll until `condition` holds; fail at once if the process ended, with its log."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text()[-3000:]
        try:
            if condition():
                return
        except OSError:  # not listening yet
            pass
        time.sleep(0.2)
    pytest.fail(f"timed out:\n{log.read_text()[-3000:]}")


def kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the process's whole group (the daemon and anything it started), SIGKILL
    after 30 s; then nothing of the group is left."""
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    with pytest.raises(ProcessLookupError):
        os.killpg(process.pid, 0)


def test_a_running_job_shows_its_live_stage_and_an_ended_one_when_it_ended_and_what_it_took(config: Config, state: StateStore) -> None:
    """The stage a running run reports reaches the overview and the table page through the
    state database; once it ended, the overview says when ("ago") and how long it ran ("took")."""
    name = str(_small_table(config, "stages", f"live_{uuid.uuid4().hex[:8]}"))
    run_id = record_run(state, name, "merge", "running")
    state.runs.set_step(run_id, "groups written", {"groups_written": 3, "groups_planned": 12})
    pages = published(config, state, generated_evaluation([name]))

    [(_, overview)] = visit(pages, "/").rows["overview"]
    [(_, run_row)] = visit(pages, f"/table?{urlencode({'name': name})}").rows["runs"]
    assert re.search(r"merge … started (just now|[0-9.]+s ago), groups written: groups written 3, groups planned 12", overview[7]), overview
    assert "groups written: groups written 3, groups planned 12" in run_row[2], run_row

    state.runs.finish(run_id, "committed")
    state.runs.set_step(run_id, "late", {})  # an ended run keeps its last stage
    [(_, overview)] = visit(pages, "/").rows["overview"]
    assert re.search(r"merge ✓ (just now|[0-9.]+s ago), took [0-9.]+s", overview[7]), overview
    assert state.runs.get(run_id).stage == {"stage": "groups written", "groups_written": 3, "groups_planned": 12}


def test_a_table_page_shows_its_commits_by_writers_and_maintenance_and_its_files_by_size(config: Config, state: StateStore) -> None:
    """The commit timeline and the size histogram, from the table's own metadata: three
    pyiceberg appends are three writer commits; their files, far below the 512 MiB default
    target, fill the smallest bin."""
    ref = _small_table(config, "shapes", f"t_{uuid.uuid4().hex[:8]}")
    import pyarrow as pa

    table = load_table(config, ref)
    for start in (10, 20):
        table.append(pa.table({"id": pa.array(range(start, start + 5), pa.int64())}))
    pages = StatusPages(config, StatusCache(config), state=lambda: state)

    text = pages.handle("/table", urlencode({"name": str(ref)})).body.decode()
    assert "3 commits by writers, 0 by maintenance" in text
    assert text.count('class="writer"') == 3 and text.count('class="maintenance"') == 0
    assert re.findall(r'data-bin="([^"]+)" data-count="(\d+)"', text) == [("&lt; 1/32", "3"), ("1/32-1/8", "0"), ("1/8-0.75", "0"),
                                                                            ("0.75-1.8 (near)", "0"), ("&gt; 1.8", "0")]


def test_the_size_bins_follow_compacts_thresholds_and_the_timeline_splits_its_rows() -> None:
    from maintenance.ui.charts import Commit, commit_timeline, size_bins

    target = 1000
    assert size_bins([1, 31, 32, 124, 125, 749, 750, 1799, 1800, 10_000], target) == [
        ("< 1/32", 2), ("1/32-1/8", 2), ("1/8-0.75", 2), ("0.75-1.8 (near)", 2), ("> 1.8", 2)]
    svg = commit_timeline([Commit(1000, False, "append"), Commit(2000, True, "replace by icemaint merge"), Commit(3000, False, "overwrite")],
                          max_marks=2)
    assert "2 commits by writers, 1 by maintenance (the newest 2 drawn)" in svg
    assert svg.count('class="writer"') == 1 and svg.count('class="maintenance"') == 1
