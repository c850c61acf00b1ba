"""The visits engine (publisher/visits) without a server, with a fake clock, salts and flush: what a
request adds is read back from the batch the flush would write."""

from __future__ import annotations

import asyncio
import logging
import threading
from datetime import UTC, date, datetime, timedelta

import pytest

from publisher import visits
from publisher.rules import visit_rules
from publisher.rules.visit_rules import OTHER
from publisher.seldom_log import SeldomLog
from publisher.storage import visit_counts
from publisher.storage.visit_counts import Batch
from publisher.visits import recorder
from publisher.visits.recorder import AddressDays, DaySalts, Recorder
from publisher.web import page_kinds
from tests.unit.conftest import Clock, http_scope
from tests.unit.test_visit_rules import IPHONE_SAFARI

DESKTOP = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
PAGES = ("/", "/about", "/books/guinea-pig-or-hamster", "/unsubscribe")
DAY = date(2026, 11, 27)
NOON = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)


class FakeSalts:
    """One salt per day, and the days asked for."""

    def __init__(self) -> None:
        self.asked: list[date] = []

    def __call__(self, day: date, now: datetime) -> bytes | None:
        self.asked.append(day)
        return day.isoformat().encode().ljust(32, b"-")


def request(
    path: str = "/",
    user_agent: str = DESKTOP,
    address: str = "203.0.113.7",
    method: str = "GET",
    referer: str | None = None,
    query: bytes = b"",
) -> dict:
    headers = {"user-agent": user_agent} | ({"referer": referer} if referer is not None else {})
    return http_scope(path, headers, address, method=method, query_string=query)


def view(counting: Recorder, scope: dict, status: int = 200) -> None:
    """A response as the middleware tells it: with the route its path names."""
    counting.page_view(scope, status, page_kinds.page_route(scope["path"]))


def salted(counting: Recorder) -> Recorder:
    asyncio.run(counting.salts.refresh(FakeSalts(), counting.clock()))
    return counting


def make_recorder(now: datetime = NOON, salt: bool = True) -> Recorder:
    counting = Recorder(trusted_proxy_hops=0, clock=Clock(now))
    counting.count_views_on(PAGES)
    return salted(counting) if salt else counting


@pytest.fixture
def counting() -> Recorder:
    return make_recorder()


def views(batch: Batch, kind: str, day: date = DAY) -> dict[str, int]:
    return {key: count for (on, of, key), count in batch.views.items() if on == day and of == kind}


def visitors(batch: Batch, kind: str, key: str = "") -> int:
    return len({visitor for on, of, seen, visitor in batch.seen if (on, of, seen) == (DAY, kind, key)})


def test_a_browser_is_one_visitor_a_page_its_route_never_its_query_address_or_user_agent_and_a_304_counts(counting):
    for _ in range(10):
        view(counting, request("/unsubscribe/", query=b"token=secret-token-of-a-reader"))
    view(counting, request("/about.html", referer="https://example.org/a?q=hamster", user_agent=IPHONE_SAFARI), 304)
    batch = counting.tally.take()
    assert views(batch, "site") == {"": 11}
    assert views(batch, "page") == {"/unsubscribe": 10, "/about": 1}
    assert visitors(batch, "site") == 2
    assert visitors(batch, "page", "/unsubscribe") == visitors(batch, "page", "/about") == 1
    assert not any(text in repr(batch) for text in ("secret-token-of-a-reader", "203.0.113.7", "Chrome", "hamster"))
    assert views(batch, "campaign") == {}  # the Referer's query is no campaign


def test_what_is_not_a_view_adds_nothing_and_a_crawler_is_counted_as_a_bot_only(counting):
    for scope, status in [
        (request("/", method="HEAD"), 200),
        (request("/no-such-page"), 404),
        (request("/admin"), 200),
        (http_scope("/", {"user-agent": DESKTOP, "sec-purpose": "prefetch"}), 200),
    ]:
        view(counting, scope, status)
    assert counting.tally.is_empty()
    view(counting, request("/", user_agent=GOOGLEBOT))
    batch = counting.tally.take()
    assert (batch.views, batch.seen) == ({(DAY, "bot", ""): 1}, set())


def test_a_landing_records_its_source_and_campaign_in_5_seen_rows_and_a_move_between_our_pages_does_not():
    counting = make_recorder(NOON + timedelta(minutes=7))
    view(counting, request("/", query=b"utm_source=newsletter&utm_medium=email&utm_campaign=launch"))
    landing = counting.tally.take()
    assert {kind for _, kind, _, _ in landing.seen} == {"site", "page", "minute", "source", "campaign"}
    assert len(landing.seen) == 5 and visitors(landing, "minute", "1207") == 1 and views(landing, "minute") == {}
    assert views(landing, "source") == {"(direct)": 1}
    assert views(landing, "campaign") == {"newsletter / email / launch": 1}
    view(counting, request("/", referer="https://l.instagram.com/", user_agent=IPHONE_SAFARI))
    view(counting, request("/about", referer="https://books.example.com/"))
    batch = counting.tally.take()
    assert (views(batch, "source"), views(batch, "campaign"), views(batch, "site")) == ({"Instagram": 1}, {}, {"": 2})


def test_midnight_splits_the_day_under_the_next_days_salt_fetched_before_it_and_without_one_no_visitor():
    counting = make_recorder(datetime(2026, 11, 27, 23, 55, tzinfo=UTC))
    counting.clock.now = datetime(2026, 11, 27, 23, 59, 59, tzinfo=UTC)
    view(counting, request("/"))
    counting.clock.now = datetime(2026, 11, 28, 0, 0, 1, tzinfo=UTC)
    view(counting, request("/"))
    batch = counting.tally.take()
    tomorrow = DAY + timedelta(days=1)
    assert views(batch, "site") == views(batch, "site", tomorrow) == {"": 1}
    site_rows = sorted((on, visitor) for on, kind, _, visitor in batch.seen if kind == "site")
    assert [on for on, _ in site_rows] == [DAY, tomorrow]
    assert len({visitor for _, visitor in site_rows}) == 2  # under the next day's salt, another id: not followed
    unsalted = make_recorder(salt=False)
    view(unsalted, request("/"))
    view(unsalted, request("/", user_agent=IPHONE_SAFARI))
    batch = unsalted.tally.take()
    assert (views(batch, "site"), batch.seen) == ({"": 2}, set())


@pytest.mark.asyncio
async def test_salts_are_fetched_from_2355_for_a_bounded_time_and_days_before_yesterday_are_forgotten():
    database_answers = threading.Event()

    def hanging(day: date, now: datetime) -> bytes | None:
        database_answers.wait()
        return None

    salts = FakeSalts()
    cache = DaySalts()
    try:
        with pytest.raises(TimeoutError):
            await cache.refresh(hanging, NOON, wait_s=0.01)
    finally:
        database_answers.set()
    assert cache.of(DAY) is None
    assert recorder.SALT_WAIT_S == 2.0
    await cache.refresh(salts, datetime(2026, 11, 27, 23, 54, 59, tzinfo=UTC))
    assert salts.asked == [DAY]
    await cache.refresh(salts, datetime(2026, 11, 27, 23, 55, tzinfo=UTC))
    assert salts.asked == [DAY, DAY + timedelta(days=1)]
    await cache.refresh(salts, datetime(2026, 11, 29, 0, 1, tzinfo=UTC))
    assert [cache.of(DAY + timedelta(days=n)) is not None for n in range(3)] == [False, True, True]


def test_a_buy_press_counts_presses_and_the_people_pressing(counting):
    for user_agent in (DESKTOP, DESKTOP, DESKTOP, IPHONE_SAFARI):
        counting.buy(request("/count/buy", method="POST", user_agent=user_agent), "guinea-pig-or-hamster", "x.com")
    batch = counting.tally.take()
    assert views(batch, "buy") == {"guinea-pig-or-hamster x.com": 4}
    assert visitors(batch, "buy", "guinea-pig-or-hamster x.com") == 2


def address_of(number: int) -> str:
    return f"198.51.{number // 250}.{number % 250}"


def test_past_1000_keys_of_a_kind_a_flush_folds_new_ones_into_other(counting):
    for number in range(1005):
        view(counting, request("/", query=f"ref=forged-{number}".encode(), address=address_of(number)))
    view(counting, request("/", query=b"ref=forged-3", address=address_of(3)))  # counted: keeps counting
    view(counting, request("/about", query=b"ref=forged-2000", address=address_of(2000)))
    batch = counting.tally.take()
    campaigns = views(batch, "campaign")
    assert len(campaigns) == 1001
    assert campaigns[OTHER] == 6
    assert campaigns["ref: forged-999"] == 1 and "ref: forged-1000" not in campaigns
    assert campaigns["ref: forged-3"] == 2
    assert views(batch, "page") == {"/": 1006, "/about": 1}  # another kind is not folded
    view(counting, request("/", query=b"ref=forged-1000", address=address_of(1000)))
    assert views(counting.tally.take(), "campaign") == {"ref: forged-1000": 1}  # each flush starts again


def test_one_address_adds_500_page_views_a_day_the_rest_count_as_a_bots(counting):
    for number in range(501):
        view(counting, request("/", address=f"2001:db8:1:2::{number % 7 + 1}"))  # one /64
    view(counting, request("/", address="2001:db8:1:3::1"))  # another /64
    batch = counting.tally.take()
    assert views(batch, "site") == {"": 501}
    assert views(batch, "bot") == {"": 1}
    counting.clock.now += timedelta(days=1)
    view(salted(counting), request("/", address="2001:db8:1:2::1"))
    assert views(counting.tally.take(), "site", DAY + timedelta(days=1)) == {"": 1}  # a new day


def test_one_address_brings_50_visitors_a_day_the_next_user_agent_counts_as_a_bots_unjudged(counting, monkeypatch):
    judged: list[str] = []
    monkeypatch.setattr(visit_rules, "is_bot", lambda user_agent: judged.append(user_agent) or False)
    for number in range(51):  # each a user agent never seen before
        view(counting, request("/", user_agent=f"{DESKTOP} {number}"))
    view(counting, request("/", user_agent=f"{DESKTOP} 7"))  # one of its 50: counted
    batch = counting.tally.take()
    assert visitors(batch, "site") == 50
    assert (views(batch, "site"), views(batch, "bot")) == ({"": 51}, {"": 1})
    assert len(judged) == 51  # the 51st user agent is not even judged


def test_one_address_brings_5_new_labels_a_day_the_rest_fold_into_other(counting):
    for number in (0, 1, 2, 3, 4, 5, 2):  # the 6th folds; one it brought is kept
        view(counting, request("/", referer=f"https://site-{number}.example/"))
    view(counting, request("/", referer="https://www.google.de/"))  # a known name
    view(counting, request("/", query=b"ref=school"))
    view(counting, request("/", query=b"ref=school", address="203.0.113.8"))  # another address's own
    batch = counting.tally.take()
    assert views(batch, "source") == {
        **{f"site-{number}.example": 1 for number in range(5)},
        "site-2.example": 2,
        OTHER: 1,
        "Google": 1,
        "(direct)": 2,
    }
    assert views(batch, "campaign") == {OTHER: 1, "ref: school": 1}


def test_a_worker_follows_100000_addresses_a_day_and_counts_the_next_as_a_bot():
    addresses = AddressDays()
    assert all(addresses.admit(DAY, address_of(number), DESKTOP) for number in range(100_000))
    assert addresses.admit(DAY, "2001:db8::1", DESKTOP) is None
    assert addresses.admit(DAY, address_of(7), DESKTOP) is not None  # one it follows goes on
    assert addresses.admit(DAY + timedelta(days=1), "2001:db8::1", DESKTOP) is not None  # a new day


def test_record_page_view_never_raises_and_logs_at_most_once_a_minute(monkeypatch, caplog):
    class Broken:
        def page_view(self, scope, status, route):
            raise RuntimeError("a fault on every request")

    monkeypatch.setattr(visits.shared_recorder, "_value", Broken())
    monkeypatch.setattr(visits, "_failures", SeldomLog(logging.getLogger("publisher.visits")))
    with caplog.at_level(logging.ERROR, logger="publisher.visits"):
        for _ in range(100):
            visits.record_page_view(request("/"), 200, "/")
    assert caplog.messages == ["Visits: a page view was not counted (RuntimeError; logged at most once a minute)"]


async def never(seconds: float) -> None:
    await asyncio.Event().wait()


def make_loop(monkeypatch, counting, flush=lambda batch: None, chores=lambda now: None, sleep=never):
    """The loop on the fakes instead of the database."""
    monkeypatch.setattr(visit_counts, "salt_for", lambda day, now, db_url: FakeSalts()(day, now))
    monkeypatch.setattr(visit_counts, "flush", lambda batch, db_url: flush(batch))
    monkeypatch.setattr(visits, "_daily_chores", lambda now, db_url: chores(now))
    return visits.FlushLoop(counting, sleep=sleep)


class Stop(Exception):
    """Ends a loop driven by the fake sleep (as the worker's stop cancels the real one)."""


@pytest.mark.asyncio
async def test_the_loop_flushes_every_5_seconds_and_a_flush_that_raises_loses_only_its_own_batch(
    counting, caplog, monkeypatch
):
    slept: list[float] = []
    flushed: list[int] = []

    def flush(batch: Batch) -> None:
        flushed.append(sum(views(batch, "site").values()))
        if len(flushed) == 2:
            raise ConnectionError("the database is away")

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        if len(slept) > 4:
            raise Stop
        view(counting, request("/"))

    with caplog.at_level(logging.WARNING, logger=visits.__name__), pytest.raises(Stop):
        await make_loop(monkeypatch, counting, flush, sleep=sleep).run()
    assert slept == [5] * 5
    assert flushed == [1, 1, 1, 1]  # four turns, one view each: the second turn's is lost, not carried
    assert "Visits: 1 page views lost, the database did not take them (ConnectionError)" in caplog.messages


@pytest.mark.asyncio
async def test_the_daily_chores_run_once_a_day_and_again_after_a_failure(monkeypatch):
    counting = make_recorder(salt=False)
    ran: list[datetime] = []
    failing = [True]

    def chores(now: datetime) -> None:
        if failing.pop() if failing else False:
            raise ConnectionError("the database is away")
        ran.append(now)

    loop = make_loop(monkeypatch, counting, chores=chores)
    for _ in range(3):  # the first fails: tried again at the next turn
        await loop.chores_once_a_day()
    counting.clock.now = NOON + timedelta(days=1)
    await loop.chores_once_a_day()
    assert ran == [NOON, NOON + timedelta(days=1)]


@pytest.mark.asyncio
async def test_the_last_flush_is_waited_for_a_bounded_time(caplog, monkeypatch):
    counting = make_recorder(salt=False)
    database_answers = threading.Event()
    loop = make_loop(monkeypatch, counting, lambda batch: database_answers.wait())
    try:
        with caplog.at_level(logging.WARNING, logger=visits.__name__):
            async with visits.running(loop, last_flush_s=0.05):
                view(counting, request("/"))
    finally:
        database_answers.set()
    assert "Visits: the last flush took over 0.05 s; its counts are lost" in caplog.messages
    assert visits.LAST_FLUSH_WAIT_S == 3.0


def test_the_app_counts_views_on_its_public_pages_and_runs_the_counting_in_its_lifespan():
    from publisher.publisher import app

    assert visits.counting in app.get_lifespan_tasks()
    forms = {"/subscribe", "/contact-us", "/subscribe/thanks", "/contact-us/thanks", "/subscribe/confirm"}
    books = {"/books/coloring-book", "/books/guinea-pig-or-hamster", "/books/word-search-book"}
    # Never the dashboard (/admin, /admin/enrol) nor the not-found page, which has no URL.
    assert visits.shared_recorder.get().pages == {"/", "/about", "/unsubscribe", *forms, *books}
