"""The dashboard's charts as SVG ``data:`` images drawn on the server: no chart library or script in the page.
Every value written is a number or a date; what a chart shows is said in words beside it (content/admin_copy.py)."""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from datetime import date, timedelta
from urllib.parse import quote
from xml.sax.saxutils import escape

WIDTH, HEIGHT = 600, 240
LEFT, RIGHT, TOP, BOTTOM = 72, 88, 40, 32  # the margins: y labels, latest figures, legend, x labels
BOTTOM_Y, RIGHT_X = HEIGHT - BOTTOM, WIDTH - RIGHT  # the plot's corner
FONT = 16
INK, JOINED, LEFT_LIST, VIEWS = "#78350f", "#047857", "#b91c1c", "#57534e"  # amber-900, emerald-700, red-700, stone-600
TEXT, GRID, AXIS = "#44403c", "#e7e5e4", "#a8a29e"  # stone-700, stone-200, stone-400
_ROUND = (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10)


def scale_top(largest: int) -> int:
    """The top of the y axis: the first round number (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 times a
    power of ten) at or above ``largest`` that is even, so the middle label is a whole number."""
    if largest <= 2:
        return 2
    magnitude = 10 ** (len(str(largest)) - 1)
    for factor in _ROUND:
        top = round(factor * magnitude)
        if top >= largest and top % 2 == 0:
            return top
    raise AssertionError("unreachable: 10 x magnitude is even and at least largest")


def _count(value: object) -> int:
    if isinstance(value, bool):
        raise TypeError("a chart draws counts, not booleans")
    return operator.index(value)  # type: ignore[arg-type]  # raises TypeError for anything but an integer


def _text(x: float, y: float, words: str, anchor: str = "start", colour: str = TEXT, weight: str = "normal") -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-family="sans-serif" font-size="{FONT}" font-weight="{weight}" '
        f'fill="{colour}" text-anchor="{anchor}">{escape(words)}</text>'
    )


class _Frame:
    def __init__(self, top: int, slots: int):
        self.top = top
        self.slots = max(slots, 1)

    def y(self, value: int) -> float:
        return BOTTOM_Y - (BOTTOM_Y - TOP) * (value / self.top)

    def axes(self, x: Callable[[int], float], first_day: date, step: timedelta) -> str:
        """The y scale's three lines and labels; the first, middle and last slots' dates under their ``x``."""
        parts = []
        for value in (0, self.top // 2, self.top):
            y = self.y(value)
            colour = AXIS if value == 0 else GRID
            parts.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{RIGHT_X}" y2="{y:.1f}" stroke="{colour}"/>')
            parts.append(_text(LEFT - 6, y + FONT / 3, f"{value:,}", anchor="end"))
        label_y = HEIGHT - 8
        for index, anchor in ((0, "start"), ((self.slots - 1) // 2, "middle"), (self.slots - 1, "end")):
            at = x(index)
            parts.append(f'<line x1="{at:.1f}" y1="{BOTTOM_Y}" x2="{at:.1f}" y2="{BOTTOM_Y + 4}" stroke="{AXIS}"/>')
            parts.append(_text(at, label_y, (first_day + index * step).isoformat(), anchor=anchor))
        return "".join(parts)


def _svg(body: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}">'
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>{body}</svg>'
    )


def _latest(frame: _Frame, labels: Sequence[tuple[int, str]]) -> str:
    """In the right margin, beside their points, kept a line apart."""
    placed: list[float] = []
    parts = []
    for value, colour in sorted(labels, key=lambda label: frame.y(label[0])):
        y = frame.y(value) + FONT / 3
        if placed and y - placed[-1] < FONT + 2:
            y = placed[-1] + FONT + 2
        placed.append(y)
        parts.append(_text(RIGHT_X + 6, y, f"{value:,}", colour=colour, weight="bold"))
    return "".join(parts)


def _point_x(frame: _Frame, index: int) -> float:
    return LEFT + index * (RIGHT_X - LEFT) / max(frame.slots - 1, 1)


def _polyline(frame: _Frame, values: list[int], colour: str, dashed: bool = False) -> str:
    points = " ".join(f"{_point_x(frame, i):.1f},{frame.y(v):.1f}" for i, v in enumerate(values))
    dash = ' stroke-dasharray="6 4"' if dashed else ""
    return f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>'


def lines(first_day: date, *series: Sequence[int], legend: tuple[str, str] | None = None) -> str:
    """One or two series of a value a day on one scale, the first solid, the second dashed."""
    counts = [[_count(v) for v in values] for values in series]
    if len({len(values) for values in counts}) != 1:
        raise ValueError("one figure of each per day")
    days = len(counts[0])
    frame = _Frame(scale_top(max((v for values in counts for v in values), default=0)), days)
    drawn = list(zip(counts, (INK, VIEWS), strict=False))
    key = ""
    if legend is not None:
        second = LEFT + max(160, 50 + round(len(legend[0]) * FONT * 0.6))  # past the first's words
        key = (
            f'<line x1="{LEFT}" y1="14" x2="{LEFT + 24}" y2="14" stroke="{INK}" stroke-width="2"/>'
            + _text(LEFT + 30, 19, legend[0])
            + f'<line x1="{second}" y1="14" x2="{second + 24}" y2="14" stroke="{VIEWS}" stroke-width="2" '
            f'stroke-dasharray="6 4"/>' + _text(second + 30, 19, legend[1])
        )
    plotted = "".join(_polyline(frame, values, colour, dashed=colour == VIEWS) for values, colour in drawn[::-1])
    latest = _latest(frame, [(values[-1], colour) for values, colour in drawn]) if days else ""
    axes = frame.axes(lambda index: _point_x(frame, index), first_day, timedelta(days=1))  # a str day: TypeError
    return _svg(key + axes + plotted + latest)


def pairs(values: Sequence[tuple[int, int]], first_day: date) -> str:
    """Two bars per week (joined, left), side by side, on one scale."""
    weeks = [(_count(joined), _count(left)) for joined, left in values]
    frame = _Frame(scale_top(max((max(pair) for pair in weeks), default=0)), len(weeks))
    slot = (RIGHT_X - LEFT) / frame.slots
    bar = slot * 0.35
    bars = []
    for i, (joined, left) in enumerate(weeks):
        x = LEFT + i * slot + slot * 0.1
        for offset, value, colour in ((0.0, joined, JOINED), (bar, left, LEFT_LIST)):
            y = frame.y(value)
            size = f'width="{bar:.1f}" height="{BOTTOM_Y - y:.1f}"'
            bars.append(f'<rect x="{x + offset:.1f}" y="{y:.1f}" {size} fill="{colour}"/>')
    axes = frame.axes(lambda index: LEFT + index * slot + slot * 0.1, first_day, timedelta(weeks=1))
    latest = _latest(frame, [(weeks[-1][0], JOINED), (weeks[-1][1], LEFT_LIST)]) if weeks else ""
    return _svg(axes + "".join(bars) + latest)


def data_uri(svg: str) -> str:
    return "data:image/svg+xml;charset=utf-8," + quote(svg, safe="")
