"""The dashboard's charts as drawn (web/charts.py): SVG images with their scale, numbers and dates only."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import date, timedelta
from urllib.parse import unquote

import pytest

from publisher.content import admin_copy
from publisher.web import charts

SVG = "{http://www.w3.org/2000/svg}"
FIRST = date(2026, 8, 30)
LEGEND = (admin_copy.COLUMN_VISITORS, admin_copy.COLUMN_PAGE_VIEWS)


def texts(svg: str) -> list[str]:
    return [t.text or "" for t in ET.fromstring(svg).iter(f"{SVG}text")]


def points(svg: str, index: int = 0) -> list[tuple[float, float]]:
    line = ET.fromstring(svg).findall(f"{SVG}polyline")[index]
    return [(float(x), float(y)) for x, y in (p.split(",") for p in line.get("points").split())]


def test_a_line_has_one_point_per_day_scaled_from_zero_to_its_round_top_and_names_the_first_middle_and_last_day():
    svg = charts.lines(FIRST, [0, 5, 10])
    bottom = charts.HEIGHT - charts.BOTTOM
    assert [y for _, y in points(svg)] == [bottom, (bottom + charts.TOP) / 2, charts.TOP]
    # y: 0, the middle and the top; x: the first, middle and last days; then the latest figure.
    assert texts(svg) == ["0", "5", "10", "2026-08-30", "2026-08-31", "2026-09-01", "10"]
    svg = charts.lines(FIRST, list(range(90)))
    drawn = points(svg)
    assert len(drawn) == 90
    last = FIRST + timedelta(days=89)
    assert texts(svg)[3:6] == [FIRST.isoformat(), (FIRST + timedelta(days=44)).isoformat(), last.isoformat()]
    latest = ET.fromstring(svg).findall(f"{SVG}text")[-1]
    assert latest.text == "89"
    assert float(latest.get("x")) > drawn[-1][0]  # beside the last point, to its right
    assert abs(float(latest.get("y")) - drawn[-1][1]) < charts.FONT  # at its height


def test_the_y_axis_has_thousands_separators_and_a_round_even_top():
    tops = [2, 2, 4, 8, 10, 12, 100, 12_000, 100_000]
    assert [charts.scale_top(n) for n in (0, 1, 3, 7, 10, 11, 95, 10_345, 99_999)] == tops
    labels = texts(charts.lines(FIRST, [1_234, 10_345, 2_000]))
    assert labels[:3] == ["0", "6,000", "12,000"]
    assert labels[-1] == "2,000"  # the latest figure, beside the last point


def test_two_lines_share_one_scale_with_a_legend_and_both_latest_figures_a_line_apart_at_least():
    visitors = [0] * 88 + [40, 120]
    views = [0] * 88 + [90, 300]
    svg = charts.lines(FIRST, visitors, views, legend=LEGEND)
    assert len(points(svg, 0)) == len(points(svg, 1)) == 90
    labels = texts(svg)
    assert labels[:2] == list(LEGEND)
    assert labels[2:5] == ["0", "150", "300"]
    assert sorted(labels[-2:]) == ["120", "300"]
    views_line, visitors_line = points(svg, 0), points(svg, 1)
    assert visitors_line[-1][1] > views_line[-1][1] == charts.TOP  # fewer visitors: lower
    with pytest.raises(ValueError):
        charts.lines(FIRST, [1, 2], [1])
    close = charts.lines(FIRST, [99, 100], [100, 101])
    latest = [float(t.get("y")) for t in ET.fromstring(close).findall(f"{SVG}text")[-2:]]
    assert abs(latest[0] - latest[1]) >= charts.FONT  # close latest figures: a line apart


def test_pairs_draw_two_bars_per_week_with_the_weeks_first_days_and_an_empty_chart_draws_nothing_tall():
    svg = ET.fromstring(charts.pairs([(2, 1), (0, 0), (2, 2)], FIRST))
    bars = svg.findall(f"{SVG}rect")[1:]  # after the background
    assert len(bars) == 6
    heights = [float(bar.get("height")) for bar in bars]
    assert heights[0] == charts.HEIGHT - charts.BOTTOM - charts.TOP and heights[2:4] == [0.0, 0.0]
    labels = [t.text for t in svg.iter(f"{SVG}text")]
    assert labels == ["0", "1", "2", "2026-08-30", "2026-09-06", "2026-09-13", "2", "2"]
    empty = charts.lines(FIRST, [0] * 90)
    assert {y for _, y in points(empty)} == {float(charts.HEIGHT - charts.BOTTOM)}


@pytest.mark.parametrize("hostile", ["<script>alert(1)</script>", "1</text><script>", 2.5, True, None])
def test_only_numbers_and_dates_go_into_a_chart(hostile):
    with pytest.raises(TypeError):
        charts.lines(FIRST, [1, 2], [1, hostile])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        charts.pairs([(1, 2), (hostile, 1)], FIRST)  # type: ignore[list-item]
    with pytest.raises(TypeError):
        charts.lines("<script>", [1, 2])  # type: ignore[arg-type]


def test_a_chart_is_an_image_uri_with_nothing_but_the_drawing():
    uri = charts.data_uri(charts.lines(FIRST, [1, 2], [3, 4], legend=LEGEND))
    assert uri.startswith("data:image/svg+xml;charset=utf-8,%3Csvg")
    svg = unquote(uri[len("data:image/svg+xml;charset=utf-8,") :])
    assert not re.search(r"script|onload|href|foreignObject", svg, re.I)
    drawn = {element.tag.removeprefix(SVG) for element in ET.fromstring(svg).iter()}
    assert drawn <= {"svg", "rect", "line", "polyline", "text"}
