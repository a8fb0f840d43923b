"""`icemaint ui [--port P]`: the daemon's read-only status page, without the scheduler (for cron users)."""

from __future__ import annotations

import signal
import threading

import click

from maintenance import interrupts
from maintenance.cli.app import AppContext, pass_app
from maintenance.durations import parse_duration
from maintenance.errors import EXIT_OK, UsageError

DEFAULT_PORT = 9464


def register(cli: click.Group) -> None:
    @cli.command()
    @click.option("--port", type=click.IntRange(0, 65535), default=None,
                  help=f"Port to listen on (default: daemon.metrics_port of the config, else {DEFAULT_PORT}; 0 picks a free one).")
    @click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (0.0.0.0: every interface).")
    @click.option("--refresh", "refresh", default="60s", show_default=True, metavar="DURATION",
                  help="Re-evaluate every table's health (metadata only) when the cached evaluation is older than this.")
    @pass_app
    def ui(app: AppContext, port: int | None, host: str, refresh: str) -> int:
        """The read-only status page (tables, runs, leases) without the scheduler, until SIGTERM/SIGINT."""
        from maintenance.daemon.http import serve
        from maintenance.state.store import open_state
        from maintenance.ui.pages import StatusPages
        from maintenance.ui.status import StatusCache

        config = app.config
        ttl_s = parse_duration(refresh)
        if ttl_s <= 0:
            raise UsageError("--refresh must be positive")
        open_state(config)  # an unreachable or unmigrated state database fails now, in one line
        if port is None:
            port = config.daemon.metrics_port or DEFAULT_PORT
        cache = StatusCache(config, ttl_s=ttl_s)
        try:
            server = serve(host, port, pages=StatusPages(config, cache))
        except OSError as exc:
            raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
        cache.get(wait_s=0)  # the first evaluation starts now, in the background
        stop = threading.Event()
        interrupts.hand_over()
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: stop.set())
        shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
        click.echo(f"icemaint status page on http://{shown}:{server.server_address[1]}/ (Ctrl-C stops it)", err=True)
        stop.wait()
        server.shutdown()
        return EXIT_OK
