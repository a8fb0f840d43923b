"""Charts as inline SVG: no script, no library, readable offline. Each mark carries a
`<title>` (the browser shows it on hover) and every value is escaped."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from itertools import pairwise

from maintenance.table.health import PartitionHealth
from maintenance.ui.html import esc, number

_STOPS = ((0.0, (254, 240, 199)), (0.5, (245, 158, 11)), (1.0, (153, 27, 27)))  # amber to dark red
_ZERO = "#e7f6ec"  # a partition without delete files


def heat_color(value: float, top: float) -> str:
    if value <= 0 or top <= 0:
        return _ZERO
    t = min(1.0, value / top)
    for (t0, c0), (t1, c1) in pairwise(_STOPS):
        if t <= t1:
            f = (t - t0) / (t1 - t0)
            r, g, b = (round(a + (b_ - a) * f) for a, b_ in zip(c0, c1))
            return f"#{r:02x}{g:02x}{b:02x}"
    r, g, b = _STOPS[-1][1]
    return f"#{r:02x}{g:02x}{b:02x}"


def partition_label(p: PartitionHealth) -> str:
    return p.partition or "(unpartitioned)"


def heatmap(partitions: Sequence[PartitionHealth], *, max_cells: int = 2000) -> str:
    """One cell per partition, coloured by its delete files (position + equality).

    Up to 48 partitions get labelled cells; more get small cells, their names on hover.
    Past `max_cells`, the partitions with the most delete files are shown."""
    if not partitions:
        return '<p class="muted">no live files: the table has no partitions to show</p>'
    shown = list(partitions)
    note = ""
    if len(shown) > max_cells:
        shown = sorted(shown, key=lambda p: -p.delete_files)[:max_cells]
        note = f'<p class="muted">{len(partitions):,} partitions; the {max_cells:,} with the most delete files are shown</p>'
    top = max(p.delete_files for p in shown)
    labelled = len(shown) <= 48
    cols = min(len(shown), 8 if labelled else 50)
    w, h, gap = (110, 46, 4) if labelled else (14, 14, 2)
    rows = -(-len(shown) // cols)
    legend_h = 34
    width, height = cols * (w + gap), rows * (h + gap) + legend_h
    cells = []
    for i, p in enumerate(shown):
        x, y = (i % cols) * (w + gap), (i // cols) * (h + gap)
        fill = heat_color(p.delete_files, top)
        dark = p.delete_files > 0 and p.delete_files / top > 0.55
        title = (f"{partition_label(p)}: {p.delete_files} delete files ({p.equality_delete_files} equality, {p.position_delete_files} position, {p.deletion_vectors} DVs), "
                 f"{p.data_files} data files, {p.small_data_files} small")
        cell = f'<g class="cell" data-partition="{esc(partition_label(p))}"><title>{esc(title)}</title><rect x="{x}" y="{y}" width="{w}" height="{h}" rx="3" fill="{fill}" stroke="#cbd5e1"/>'
        if labelled:
            color = "#fff" if dark else "#1f2933"
            label = partition_label(p)
            label = label if len(label) <= 17 else label[:16] + "…"
            cell += (f'<text x="{x + 6}" y="{y + 17}" style="fill:{color};font-weight:600">{esc(number(p.delete_files))} deletes</text>'
                     f'<text x="{x + 6}" y="{y + 34}" style="fill:{color}">{esc(label)}</text>')
        cells.append(cell + "</g>")
    # the legend: the colour scale from none to the worst partition
    ly = rows * (h + gap) + 8
    steps = 10
    legend = [f'<text x="0" y="{ly + 11}">0</text>', f'<rect x="14" y="{ly + 1}" width="14" height="12" fill="{_ZERO}" stroke="#cbd5e1"/>']
    for s in range(1, steps + 1):
        legend.append(f'<rect x="{24 + s * 12}" y="{ly + 1}" width="12" height="12" fill="{heat_color(top * s / steps, top)}"/>')
    legend.append(f'<text x="{24 + (steps + 1) * 12 + 6}" y="{ly + 11}">{esc(number(top))} delete files (the worst partition)</text>')
    width = max(width, 360)
    return (f'{note}<svg class="heatmap" role="img" aria-label="delete files per partition" viewBox="0 0 {width} {height}" width="{width}" height="{height}">'
            + "".join(cells) + "".join(legend) + "</svg>")


@dataclass(frozen=True)
class Point:
    at_ms: float
    values: dict[str, float]
    label: str  # what the point is: a run, or the table now


SERIES = (("data_files", "data files", "#2563eb"), ("delete_files", "delete files", "#dc2626"), ("snapshots", "snapshots", "#7c3aed"))


def history_chart(points: Sequence[Point]) -> str:
    """Data files, delete files and snapshots over time: one panel each, one x axis."""
    if not points:
        return '<p class="muted">no run has recorded the table\'s health yet</p>'
    points = sorted(points, key=lambda p: p.at_ms)
    left, right, panel_h, gap, top_pad, bottom = 64, 16, 78, 18, 6, 26
    width = 820
    plot_w = width - left - right
    height = top_pad + len(SERIES) * (panel_h + gap) + bottom
    t0, t1 = points[0].at_ms, points[-1].at_ms
    span = max(1.0, t1 - t0)

    def x_of(ms: float) -> float:
        return left + (plot_w / 2 if t1 == t0 else (ms - t0) / span * plot_w)

    out = [f'<svg class="history" role="img" aria-label="table health over the run history" viewBox="0 0 {width} {height}" width="{width}" height="{height}">']
    for index, (key, name, color) in enumerate(SERIES):
        y0 = top_pad + index * (panel_h + gap)
        values = [p.values.get(key) for p in points]
        known = [v for v in values if v is not None]
        top = max(known, default=0) or 1
        top = _nice(top)

        def y_of(v: float, y0: float = y0, top: float = top) -> float:
            return y0 + panel_h - (v / top) * (panel_h - 4)

        out.append(f'<rect x="{left}" y="{y0}" width="{plot_w}" height="{panel_h}" fill="#fbfcfe" stroke="#e4e7ec"/>')
        out.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y_of(top / 2):.1f}" y2="{y_of(top / 2):.1f}" stroke="#eef0f4"/>')
        out.append(f'<text x="{left - 6}" y="{y0 + 10}" text-anchor="end">{esc(number(top))}</text>')
        out.append(f'<text x="{left - 6}" y="{y0 + panel_h}" text-anchor="end">0</text>')
        out.append(f'<text x="{left + 6}" y="{y0 + 13}" style="fill:{color};font-weight:600">{esc(name)}</text>')
        coords = [(x_of(p.at_ms), y_of(v)) for p, v in zip(points, values) if v is not None]
        if len(coords) > 1:
            out.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.8" points="{" ".join(f"{x:.1f},{y:.1f}" for x, y in coords)}"/>')
        for p, v in zip(points, values):
            if v is None:
                continue
            hollow = p.label.startswith("now")
            out.append(f'<circle cx="{x_of(p.at_ms):.1f}" cy="{y_of(v):.1f}" r="{3.5 if hollow else 3}" fill="{"#fff" if hollow else color}" stroke="{color}" stroke-width="1.5">'
                       f"<title>{esc(f'{_when(p.at_ms)}: {number(v)} {name} ({p.label})')}</title></circle>")
    axis_y = top_pad + len(SERIES) * (panel_h + gap) + 2
    out.append(f'<text x="{left}" y="{axis_y + 10}">{esc(_when(t0))}</text>')
    if t1 != t0:
        out.append(f'<text x="{left + plot_w}" y="{axis_y + 10}" text-anchor="end">{esc(_when(t1))}</text>')
    out.append("</svg>")
    return "".join(out)


def _nice(value: float) -> float:
    """A round axis maximum at or above the value (1, 2, 5 × 10^k)."""
    if value <= 0:
        return 1
    magnitude = 10 ** (len(str(int(value))) - 1)
    for step in (1, 2, 5, 10):
        if value <= step * magnitude:
            return step * magnitude
    return 10 * magnitude


def _when(ms: float) -> str:
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


@dataclass(frozen=True)
class Commit:
    """One snapshot of the table on the timeline."""

    at_ms: float
    maintenance: bool  # a rewrite (icemaint's or another tool's): content unchanged
    label: str  # its operation, and the job that wrote it if it was icemaint


WRITER_COLOR, MAINTENANCE_COLOR = "#2563eb", "#16a34a"


def commit_timeline(commits: Sequence[Commit], *, max_marks: int = 2000) -> str:
    """Every retained snapshot on one time axis: writers' commits above, maintenance below,
    so a streaming writer's pace and what maintenance did about it read at a glance. Past
    `max_marks` the newest are drawn and the rest counted."""
    if not commits:
        return '<p class="muted">no snapshot</p>'
    ordered = sorted(commits, key=lambda c: c.at_ms)
    shown = ordered[-max_marks:]
    writers = sum(1 for c in ordered if not c.maintenance)
    left, right, width, row_h = 96, 16, 820, 22
    plot_w = width - left - right
    height = 2 * row_h + 30
    t0, t1 = shown[0].at_ms, shown[-1].at_ms
    span = max(1.0, t1 - t0)
    out = [f'<p class="muted timeline-counts">{esc(number(writers))} commits by writers, {esc(number(len(ordered) - writers))} by maintenance'
           + (f" (the newest {esc(number(len(shown)))} drawn)" if len(shown) < len(ordered) else "") + "</p>",
           f'<svg class="timeline" role="img" aria-label="snapshots over time, by writers and by maintenance" viewBox="0 0 {width} {height}" '
           f'width="{width}" height="{height}">']
    for row, (name, color) in enumerate((("writers", WRITER_COLOR), ("maintenance", MAINTENANCE_COLOR))):
        y = 4 + row * row_h
        out.append(f'<text x="{left - 6}" y="{y + 14}" text-anchor="end" style="fill:{color};font-weight:600">{esc(name)}</text>')
        out.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y + row_h / 2}" y2="{y + row_h / 2}" stroke="#e4e7ec"/>')
    for c in shown:
        x = left + (plot_w / 2 if t1 == t0 else (c.at_ms - t0) / span * plot_w)
        y = 4 + (row_h if c.maintenance else 0)
        color = MAINTENANCE_COLOR if c.maintenance else WRITER_COLOR
        out.append(f'<line class="{"maintenance" if c.maintenance else "writer"}" x1="{x:.1f}" x2="{x:.1f}" y1="{y + 3}" y2="{y + row_h - 3}" '
                   f'stroke="{color}" stroke-width="2"><title>{esc(f"{_when(c.at_ms)}: {c.label}")}</title></line>')
    axis_y = 2 * row_h + 18
    out.append(f'<text x="{left}" y="{axis_y}">{esc(_when(t0))}</text>')
    if t1 != t0:
        out.append(f'<text x="{left + plot_w}" y="{axis_y}" text-anchor="end">{esc(_when(t1))}</text>')
    out.append("</svg>")
    return "".join(out)


# Data file sizes as shares of the target: below COMPACT's min_file_size_ratio (0.75) a file
# is small, above its max_file_size_ratio (1.8) too big (the defaults; a policy may differ).
SIZE_BINS = ((0.0, 1 / 32, "< 1/32"), (1 / 32, 1 / 8, "1/32-1/8"), (1 / 8, 0.75, "1/8-0.75"), (0.75, 1.8, "0.75-1.8 (near)"),
             (1.8, float("inf"), "> 1.8"))


def size_bins(sizes: Sequence[int], target: int) -> list[tuple[str, int]]:
    """How many data files fall in each bin of `SIZE_BINS` (shares of `target`)."""
    counts = [0] * len(SIZE_BINS)
    for size in sizes:
        share = size / target
        counts[next(i for i, (low, high, _) in enumerate(SIZE_BINS) if low <= share < high)] += 1
    return [(label, count) for (_, _, label), count in zip(SIZE_BINS, counts)]


def size_histogram(sizes: Sequence[int], target: int) -> str:
    """The table's data files by size, as shares of its target file size: one bar a bin."""
    bins = size_bins(sizes, target)
    top = max((count for _, count in bins), default=0) or 1
    left, width, bar_h, gap = 130, 820, 18, 6
    plot_w = width - left - 80
    height = len(bins) * (bar_h + gap) + 4
    out = [f'<svg class="sizes" role="img" aria-label="data files by size" viewBox="0 0 {width} {height}" width="{width}" height="{height}">']
    for index, (label, count) in enumerate(bins):
        y = 2 + index * (bar_h + gap)
        near = label.startswith("0.75")
        out.append(f'<text x="{left - 6}" y="{y + 13}" text-anchor="end">{esc(label)}</text>')
        out.append(f'<rect data-bin="{esc(label)}" data-count="{count}" x="{left}" y="{y}" width="{count / top * plot_w:.1f}" height="{bar_h}" '
                   f'fill="{"#16a34a" if near else "#f59e0b"}"><title>{esc(f"{number(count)} data files of {label} x the target")}</title></rect>')
        out.append(f'<text x="{left + count / top * plot_w + 6:.1f}" y="{y + 13}">{esc(number(count))}</text>')
    out.append("</svg>")
    return "".join(out)
