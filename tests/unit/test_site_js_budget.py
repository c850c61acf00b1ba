"""assets/site.js is on every page: what counting buy presses adds to it is bounded (issue 42)."""

from __future__ import annotations

from tests.support import ASSETS_DIR

SITE_JS = ASSETS_DIR / "site.js"
# assets/site.js before issue 42 counted buy presses, measured 2026-11-27 (main at 52541c0).
BYTES_BEFORE_BUY_COUNTS = 6_268
# What the buy beacon may add, at most (issue 42: the public pages grow by at most 300 bytes).
BUY_COUNT_BUDGET = 300


def test_site_js_grows_by_at_most_300_bytes_for_one_buy_beacon_that_never_stops_the_link():
    grown = len(SITE_JS.read_bytes()) - BYTES_BEFORE_BUY_COUNTS
    assert grown <= BUY_COUNT_BUDGET, f"site.js grew by {grown} bytes; the budget is {BUY_COUNT_BUDGET}"
    script = SITE_JS.read_text(encoding="utf-8")
    assert script.count('navigator.sendBeacon("/count/buy"') == 1
    assert "preventDefault" not in script and "window.open" not in script  # beside the navigation, never stopping it
