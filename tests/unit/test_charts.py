"""The dashboard's charts as drawn (web/charts.py): SVG images with numbers only."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from urllib.parse import unquote

from publisher.web import charts

SVG = "{http://www.w3.org/2000/svg}"


def test_a_line_has_one_point_per_day_scaled_from_zero_to_the_largest():
    svg = ET.fromstring(charts.line([0, 5, 10]))
    points = [tuple(map(float, p.split(","))) for p in svg.find(f"{SVG}polyline").get("points").split()]
    assert len(points) == 3
    bottom, top = charts.HEIGHT - charts.PAD, charts.PAD
    assert [y for _, y in points] == [bottom, (bottom + top) / 2, top]
    assert svg.find(f"{SVG}text").text == "10"


def test_pairs_draw_two_bars_per_week_and_an_empty_chart_draws_nothing_tall():
    svg = ET.fromstring(charts.pairs([(3, 1), (0, 0)]))
    bars = svg.findall(f"{SVG}rect")[1:]  # after the background
    assert len(bars) == 4
    heights = [float(bar.get("height")) for bar in bars]
    assert heights[0] == charts.HEIGHT - 2 * charts.PAD and heights[2:] == [0.0, 0.0]
    empty = ET.fromstring(charts.line([0] * 90))
    assert {p.split(",")[1] for p in empty.find(f"{SVG}polyline").get("points").split()} == {"176.0"}


def test_a_chart_is_an_image_uri_with_nothing_but_the_drawing():
    uri = charts.data_uri(charts.line([1, 2]))
    assert uri.startswith("data:image/svg+xml;charset=utf-8,%3Csvg")
    assert not re.search(r"script|onload|href", unquote(uri), re.I)
