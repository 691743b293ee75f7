"""The board's ratings chart: every entry's estimate with its 95% interval, in rank order,
drawn as an inline SVG on the server (the pages run no script and load nothing from outside).

A forest plot: one line per entry, the interval as a bar and the estimate as a dot, on one
axis from 0 to the top of the scale. Entries that share a rank (a tie group) share a shaded
band, so what the benchmark cannot order is seen at a glance. The geometry is computed here;
``macros.html``'s ``ratings_chart`` draws it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .ranking import BoardRow, Metric

__all__ = ["LIMIT", "Chart", "ChartBand", "ChartMark", "ratings_chart"]

LIMIT = 100
"""The most entries drawn (the first by rank): a longer chart is read no better."""
ROW = 18
"""Pixels per entry."""
LABEL = 190
"""Pixels left of the axis for the entries' names."""
PLOT = 520
"""Pixels of the axis itself."""
MARGIN = 28
"""Pixels below the last entry, for the axis's labels."""


@dataclass(frozen=True)
class ChartMark:
    """One entry: its name, where its interval and estimate fall, and a tooltip."""

    id: str
    label: str
    rank: int
    tie_group: int
    y: float
    """The centre of its line."""
    low: float
    high: float
    estimate: float
    title: str


@dataclass(frozen=True)
class ChartBand:
    """A tie group's shaded band."""

    tie_group: int
    y: float
    height: float
    shaded: bool


@dataclass(frozen=True)
class Chart:
    """What the SVG draws."""

    width: int
    height: int
    left: int
    plot: int
    marks: list[ChartMark]
    bands: list[ChartBand]
    ticks: list[tuple[float, str]]
    """(x, label) along the axis."""
    total: int
    """Entries on the board (``len(marks)`` is at most :data:`LIMIT`)."""


def ratings_chart(
    rows: Sequence[BoardRow], labels: Mapping[str, str], metric: Metric, top: float = 1.0
) -> Chart:
    """The chart of ``rows`` (in rank order) by ``metric``; ``labels``: each row's name.

    ``top`` is the scale's end: 1 for a success rate, the highest interval bound for a
    score that may exceed 1."""
    top = top if top > 0 else 1.0
    shown = list(rows[:LIMIT])

    def x(value: float) -> float:
        return round(LABEL + max(0.0, min(1.0, value / top)) * PLOT, 1)

    marks = []
    for i, row in enumerate(shown):
        interval = row.interval(metric)
        marks.append(
            ChartMark(
                id=row.id,
                label=_cut(labels.get(row.id, row.id)),
                rank=row.rank,
                tie_group=row.tie_group,
                y=i * ROW + ROW / 2,
                low=x(interval.low),
                high=x(interval.high),
                estimate=x(interval.estimate),
                title=_title(row, metric),
            )
        )
    ticks = [(x(top * i / 4), _tick(top * i / 4, metric)) for i in range(5)]
    return Chart(
        width=LABEL + PLOT + 20,
        height=len(shown) * ROW + MARGIN,
        left=LABEL,
        plot=PLOT,
        marks=marks,
        bands=_bands(shown),
        ticks=ticks,
        total=len(rows),
    )


def _bands(rows: Sequence[BoardRow]) -> list[ChartBand]:
    """One band per run of rows with one tie group, shaded every other group."""
    bands: list[ChartBand] = []
    start = 0
    for i, row in enumerate(rows):
        if i + 1 == len(rows) or rows[i + 1].tie_group != row.tie_group:
            bands.append(
                ChartBand(row.tie_group, start * ROW, (i + 1 - start) * ROW, row.tie_group % 2 == 1)
            )
            start = i + 1
    return bands


def _title(row: BoardRow, metric: Metric) -> str:
    value = row.interval(metric)
    if metric == "success":
        shown = f"{100 * value.estimate:.1f}% [{100 * value.low:.1f}, {100 * value.high:.1f}]"
    else:
        shown = f"{value.estimate:.3f} [{value.low:.3f}, {value.high:.3f}]"
    return f"rank {row.rank}: {metric} {shown}"


def _tick(value: float, metric: Metric) -> str:
    return f"{100 * value:.0f}%" if metric == "success" else f"{value:.2f}"


def _cut(label: str, limit: int = 28) -> str:
    return label if len(label) <= limit else label[: limit - 1] + "…"
