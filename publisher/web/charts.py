"""The dashboard's two charts, drawn on the server as SVG and shown as images (``data:`` URIs,
which the site's Content-Security-Policy allows for images): no chart library in the page, no
script inside an image, and nothing from outside in them (numbers only).
"""

from __future__ import annotations

from urllib.parse import quote

WIDTH, HEIGHT, PAD = 600, 200, 24
INK, JOINED, LEFT = "#78350f", "#047857", "#b91c1c"  # amber-900, emerald-700, red-700 (the site's colours)


def _svg(body: str, top: int) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}">'
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>'
        f'<line x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}" stroke="#a8a29e"/>'
        f'<text x="{PAD}" y="{PAD - 8}" font-family="sans-serif" font-size="12" fill="#44403c">{top:,}</text>'
        f"{body}</svg>"
    )


def _y(value: int, top: int) -> float:
    return HEIGHT - PAD - (HEIGHT - 2 * PAD) * (value / top if top else 0)


def line(values: list[int]) -> str:
    """A line of ``values`` (one per day), its scale from 0 to the largest."""
    top = max([*values, 1])
    step = (WIDTH - 2 * PAD) / max(len(values) - 1, 1)
    points = " ".join(f"{PAD + i * step:.1f},{_y(v, top):.1f}" for i, v in enumerate(values))
    return _svg(f'<polyline points="{points}" fill="none" stroke="{INK}" stroke-width="2"/>', top)


def pairs(values: list[tuple[int, int]]) -> str:
    """Two bars per period (joined, left), side by side, on one scale."""
    top = max([*(max(pair) for pair in values), 1])
    slot = (WIDTH - 2 * PAD) / max(len(values), 1)
    bar = slot * 0.35
    bars = []
    for i, (joined, left) in enumerate(values):
        x = PAD + i * slot + slot * 0.1
        for offset, value, colour in ((0.0, joined, JOINED), (bar, left, LEFT)):
            y = _y(value, top)
            size = f'width="{bar:.1f}" height="{HEIGHT - PAD - y:.1f}"'
            bars.append(f'<rect x="{x + offset:.1f}" y="{y:.1f}" {size} fill="{colour}"/>')
    return _svg("".join(bars), top)


def data_uri(svg: str) -> str:
    return "data:image/svg+xml;charset=utf-8," + quote(svg, safe="")
