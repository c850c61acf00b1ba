"""The dashboard's Visits section from fake reads (web/states/admin_state.py ``_visits``), and the
dashboard's lists on a phone (web/pages/admin.py ``_table``)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import UTC, date, datetime, timedelta
from urllib.parse import unquote

import pytest

from publisher import visits
from publisher.config import settings
from publisher.content import admin_copy
from publisher.content.books import BOOKS
from publisher.reflex_internals import stored_state
from publisher.storage import dashboard, tables, visit_counts
from publisher.storage.visit_counts import DayCount, KeyCount
from publisher.web.pages import admin
from publisher.web.states import admin_state

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
TODAY = NOW.date()
BOOK = BOOKS[0]


class FakeReads:
    """Storage's reads, from fixed figures; every call noted."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def daily(self, kind: str, since: date, until: date, key: str = "", db_url=None) -> list[DayCount]:
        self.calls.append(("daily", kind, since, until, key))
        days = [since + timedelta(days=n) for n in range((until - since).days + 1)]
        if kind == "site":  # visitors n, views 3n on the n-th day
            return [DayCount(day, 3 * n, n) for n, day in enumerate(days, start=1)]
        if kind == "bot":
            return [DayCount(day, 42, 0) for day in days]
        if key == BOOK.page_path:
            return [DayCount(day, 2, 1) for day in days]  # one visit a day
        return [DayCount(day, 0, 0) for day in days[:-1]] + [DayCount(days[-1], 9, 4)]

    def top(self, kind: str, since: date, until: date, limit: int = 10, db_url=None) -> list[KeyCount]:
        self.calls.append(("top", kind, since, until, limit))
        return {
            "page": [KeyCount("/", 5_000, 1_234)],
            "source": [KeyCount("Instagram", 30, 20), KeyCount("(direct)", 10, 9)],
            "campaign": [KeyCount("newsletter / email / launch", 7, 6)],
            "buy": [
                KeyCount(f"{BOOK.slug} www.amazon.com", 5, 3),
                KeyCount(f"{BOOK.slug} bookshop.org", 2, 2),
                KeyCount("gone-book www.amazon.com", 1, 1),
            ],
        }[kind]

    def list_days(self, today: date, days: int, db_url=None) -> list[dashboard.ListDay]:
        self.calls.append(("list_days", today, days))
        first = today - timedelta(days=days - 1)
        return [dashboard.ListDay(first + timedelta(days=n), n, n // 2, 1) for n in range(days)]


@pytest.fixture
def reads(monkeypatch) -> FakeReads:
    fake = FakeReads()
    monkeypatch.setenv("PUBLISHER_GATEWAY_URL", "")
    monkeypatch.setenv("PUBLISHER_VISITS", "on")
    monkeypatch.setattr(visit_counts, "daily", fake.daily)
    monkeypatch.setattr(visit_counts, "top", fake.top)
    monkeypatch.setattr(dashboard, "list_days", fake.list_days)
    monkeypatch.setattr(tables, "utc_now", lambda: NOW)

    def visitors_now(now: datetime) -> int:
        fake.calls.append(("visitors_now", now))
        return 17

    monkeypatch.setattr(visit_counts, "visitors_now", visitors_now)
    return fake


def test_the_figures_now_today_and_yesterday_come_from_the_daily_counts_and_now_unknown_leaves_the_rest(
    reads: FakeReads, monkeypatch
):
    shown = admin_state._visits()
    figures = {row["label"]: row["value"] for row in shown["visits_figures"]}
    assert figures == {
        "Visitors now (the last 5 minutes)": "17",
        "Visitors today": "90",
        "Page views today": "270",
        "Visitors yesterday": "89",
        "Page views yesterday": "267",
        "Bot requests today (counted apart)": "42",
    }
    assert ("visitors_now", NOW) in reads.calls
    # A fixed number of reads whatever the traffic: site, bot, one page per book, /subscribe, /contact-us;
    # four top lists; the list's days; now.
    assert len(reads.calls) == 2 + len(BOOKS) + 2 + 4 + 1 + 1

    def away(now):
        raise ConnectionError("redis away")

    monkeypatch.setattr(visit_counts, "visitors_now", away)
    figures = admin_state._visits()["visits_figures"]
    assert figures[0]["value"] == admin_copy.NOT_KNOWN and figures[1]["value"] == "90"


def test_the_charts_show_ninety_days_of_visits_and_what_fourteen_days_of_them_led_to_said_in_words(reads):
    visitors_and_views, led_to = admin_state._visits()["visits_chart"]
    for chart, days in ((visitors_and_views, visits.CHART_DAYS), (led_to, admin_state.LED_TO_DAYS)):
        lines = ET.fromstring(unquote(chart["src"].split(",", 1)[1])).findall("{http://www.w3.org/2000/svg}polyline")
        assert [len(line.get("points").split()) for line in lines] == [days, days]
    assert (visits.CHART_DAYS, admin_state.LED_TO_DAYS) == (90, 14)
    assert ("daily", "site", TODAY - timedelta(days=89), TODAY, "") in reads.calls
    for page in ("/subscribe", "/contact-us"):
        assert ("daily", "page", TODAY - timedelta(days=13), TODAY, page) in reads.calls
    assert visitors_and_views["alt"] == (
        "Visitors (solid line) and page views (dashed) per day, the 90 days to 2026-11-27: 90 visitors and "
        "270 page views on the last day, at most 90 visitors on one day; 12,285 page views in all."
    )
    assert led_to["alt"] == (
        "Visitors of /subscribe (solid line) and sign-ups (dashed) per day, the 14 days to 2026-11-27: "
        "4 visitors of /subscribe, 91 sign-ups, 42 confirmations; 4 visitors of /contact-us, 14 messages."
    )


def test_the_top_lists_cover_thirty_days_and_buy_presses_are_titled_per_book_and_store(reads: FakeReads):
    shown = admin_state._visits()
    since = TODAY - timedelta(days=29)
    assert ("top", "page", since, TODAY, 10) in reads.calls
    assert shown["visits_pages"] == [{"key": "/", "views": "5,000", "visitors": "1,234"}]
    assert [row["key"] for row in shown["visits_sources"]] == ["Instagram", "(direct)"]
    assert shown["visits_campaigns"][0]["key"] == "newsletter / email / launch"
    assert shown["visits_buys"] == [
        {"book": BOOK.title, "store": "www.amazon.com", "presses": "5", "people": "3"},
        {"book": BOOK.title, "store": "bookshop.org", "presses": "2", "people": "2"},
        {"book": "gone-book", "store": "www.amazon.com", "presses": "1", "people": "1"},  # no longer in the content
    ]
    books = {row["book"]: row for row in shown["visits_books"]}
    assert set(books) == {book.title for book in BOOKS}
    # 30 visitors of its page (one a day), 7 presses by 5 people over both stores, from Home too: no rate.
    assert books[BOOK.title] == {"book": BOOK.title, "visits": "30", "presses": "7", "people": "5"}
    other = BOOKS[1]
    assert (books[other.title]["visits"], books[other.title]["presses"]) == ("4", "0")  # visited, not pressed


def test_with_counting_off_the_section_says_so_and_reads_nothing_and_what_it_shows_is_tab_only(
    reads: FakeReads, monkeypatch
):
    assert "parts" in stored_state._TAB_ONLY[admin_state.AdminState]  # every part: _visits' too
    monkeypatch.setenv("PUBLISHER_VISITS", "off")
    assert not settings.current().visits_on
    assert admin_state._visits() == {"visits_off": [{"text": admin_copy.VISITS_OFF}]}
    assert reads.calls == []


def test_every_cell_label_is_its_columns_heading_and_a_list_shows_its_first_rows_then_the_rest_on_demand():
    rendered = str(admin._dashboard())
    tables = rendered.split('jsx("table",')[1:]
    lists = 5 + 2 + 1 + 1 + 2 + 1  # Visits', Readers' (found, sign-ups), Messages, Releases, Bounces', Audit
    assert len(tables) == 2 * lists  # each list's first rows, and the rest behind "Show all N"
    assert rendered.count(".slice(undefined, 3)") == rendered.count('jsx("details",{},jsx("summary"') == lists
    for table in tables:
        headings = re.findall(r'jsx\("th",\{[^}]*\},"([^"]*)"\)', table)
        labels = re.findall(r'"data-label":"([^"]*)"', table.split('jsx("tbody"', 1)[1].split('jsx("table",')[0])
        assert headings and labels[: len(headings)] == headings
    assert "overflow-x-auto" not in rendered  # nothing scrolls inside a box any more
