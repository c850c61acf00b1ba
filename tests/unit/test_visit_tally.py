"""The visits engine (publisher/visits) without a server, with a fake clock, salt store and flush:
what a request adds is read back from the batch the flush would write."""

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
from publisher.storage.visit_counts import Batch
from publisher.visits import flush_loop, recorder
from publisher.visits.flush_loop import FlushLoop
from publisher.visits.recorder import AddressDays, DaySalts, Recorder
from publisher.web import page_kinds

DESKTOP = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
PHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/17.5 Mobile/15E148 Safari/604.1"
)
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
PAGES = ("/", "/about", "/books/guinea-pig-or-hamster", "/unsubscribe")
DAY = date(2026, 11, 27)
NOON = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)


class FakeClock:
    def __init__(self, now: datetime):
        self.now = now

    def __call__(self) -> datetime:
        return self.now


class FakeSalts:
    """One salt per day, the seen rows in the database."""

    seen_in_redis = False

    def __init__(self) -> None:
        self.asked: list[date] = []

    async def mark(self, batch: Batch) -> None:
        pass

    async def salt_for(self, day: date, now: datetime) -> bytes | None:
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
    headers = [(b"host", b"books.example"), (b"user-agent", user_agent.encode())]
    if referer is not None:
        headers.append((b"referer", referer.encode()))
    scope = {"type": "http", "method": method, "path": path, "query_string": query}
    return {**scope, "headers": headers, "client": (address, 50000)}


def view(counting: Recorder, scope: dict, status: int) -> None:
    """A response as the middleware tells it: with the route its path names."""
    counting.page_view(scope, status, page_kinds.page_route(scope["path"]))


def make_recorder(clock: FakeClock) -> Recorder:
    counting = Recorder(trusted_proxy_hops=0, clock=clock)
    counting.count_views_on(PAGES)
    return counting


def salted(counting: Recorder) -> Recorder:
    asyncio.run(counting.salts.refresh(FakeSalts(), counting.clock()))
    return counting


@pytest.fixture
def counting() -> Recorder:
    """A recorder at NOON with the day's salt."""
    return salted(make_recorder(FakeClock(NOON)))


def views(batch: Batch, kind: str, day: date = DAY) -> dict[str, int]:
    return {key: count for (on, of, key), count in batch.views.items() if on == day and of == kind}


def visitors(batch: Batch, kind: str, key: str, day: date = DAY) -> int:
    return len({visitor for on, of, seen_key, visitor in batch.seen if (on, of, seen_key) == (day, kind, key)})


def test_ten_views_by_one_user_agent_are_one_visitor_and_another_user_agent_a_second(counting):
    for _ in range(10):
        view(counting, request("/"), 200)
    view(counting, request("/about", user_agent=PHONE), 200)
    batch = counting.tally.take()
    assert views(batch, "site") == {"": 11}
    assert views(batch, "page") == {"/": 10, "/about": 1}
    assert visitors(batch, "site", "") == 2
    assert visitors(batch, "page", "/") == visitors(batch, "page", "/about") == 1


def test_what_is_not_a_view_adds_nothing_and_a_crawler_is_counted_as_a_bot_only(counting):
    view(counting, request("/", method="HEAD"), 200)
    view(counting, request("/", method="POST"), 200)
    view(counting, request("/no-such-page"), 404)
    view(counting, request("/admin"), 200)
    view(counting, request("/_health"), 200)
    prefetch = request("/")
    prefetch["headers"].append((b"sec-purpose", b"prefetch"))
    view(counting, prefetch, 200)
    assert counting.tally.is_empty()
    view(counting, request("/", user_agent=GOOGLEBOT), 200)
    batch = counting.tally.take()
    assert (batch.views, batch.seen) == ({(DAY, "bot", ""): 1}, set())


def test_a_page_is_counted_under_its_route_never_its_query_address_or_user_agent_and_a_304_counts(counting):
    view(counting, request("/unsubscribe/", query=b"token=secret-token-of-a-reader"), 200)
    view(counting, request("/about.html", address="198.51.100.23", referer="https://example.org/a?q=hamster"), 304)
    batch = counting.tally.take()
    assert views(batch, "page") == {"/unsubscribe": 1, "/about": 1}
    kept = repr(batch)
    assert not any(text in kept for text in ("secret-token-of-a-reader", "198.51.100.23", "Chrome", "hamster"))
    assert views(batch, "campaign") == {}


def test_a_landing_records_its_source_and_campaign_and_a_move_between_our_pages_does_not(counting):
    tagged = b"utm_source=newsletter&utm_medium=email&utm_campaign=launch"
    view(counting, request("/", query=tagged), 200)
    view(counting, request("/", referer="https://l.instagram.com/", user_agent=PHONE), 200)
    view(counting, request("/about", referer="https://books.example/"), 200)
    batch = counting.tally.take()
    assert views(batch, "source") == {"(direct)": 1, "Instagram": 1}
    assert views(batch, "campaign") == {"newsletter / email / launch": 1}
    assert views(batch, "site") == {"": 3}


def test_midnight_splits_the_day_and_the_next_days_salt_is_fetched_before_it():
    clock = FakeClock(datetime(2026, 11, 27, 23, 55, tzinfo=UTC))
    counting = salted(make_recorder(clock))
    clock.now = datetime(2026, 11, 27, 23, 59, 59, tzinfo=UTC)
    view(counting, request("/"), 200)
    clock.now = datetime(2026, 11, 28, 0, 0, 1, tzinfo=UTC)
    view(counting, request("/"), 200)
    batch = counting.tally.take()
    tomorrow = DAY + timedelta(days=1)
    assert views(batch, "site") == {"": 1}
    assert views(batch, "site", tomorrow) == {"": 1}
    ids = {
        day: {visitor for on, kind, _, visitor in batch.seen if on == day and kind == "site"} for day in (DAY, tomorrow)
    }
    assert len(ids[DAY]) == len(ids[tomorrow]) == 1
    assert ids[DAY] != ids[tomorrow]  # under the next day's salt, another id: no one is followed across days


@pytest.mark.asyncio
async def test_salts_are_fetched_from_2355_for_a_bounded_time_and_days_before_yesterday_are_forgotten():
    class Hanging:
        async def salt_for(self, day: date, now: datetime) -> bytes | None:
            await asyncio.Event().wait()
            return None

    store = FakeSalts()
    cache = DaySalts()
    with pytest.raises(TimeoutError):
        await cache.refresh(Hanging(), NOON, wait_s=0.01)
    assert cache.of(DAY) is None
    assert recorder.SALT_WAIT_S == 2.0
    await cache.refresh(store, datetime(2026, 11, 27, 23, 54, 59, tzinfo=UTC))
    assert store.asked == [DAY]
    await cache.refresh(store, datetime(2026, 11, 27, 23, 55, tzinfo=UTC))
    assert store.asked == [DAY, DAY + timedelta(days=1)]
    await cache.refresh(store, datetime(2026, 11, 29, 0, 1, tzinfo=UTC))
    assert cache.days() == [DAY + timedelta(days=1), DAY + timedelta(days=2)]
    assert cache.of(DAY) is None


def test_without_a_salt_views_are_counted_without_visitors():
    counting = make_recorder(FakeClock(NOON))
    view(counting, request("/"), 200)
    view(counting, request("/", user_agent=PHONE), 200)
    batch = counting.tally.take()
    assert views(batch, "site") == {"": 2}
    assert batch.seen == set()


def test_a_buy_press_counts_presses_and_the_people_pressing(counting):
    for _ in range(3):
        counting.buy(request("/count/buy", method="POST"), "guinea-pig-or-hamster", "www.amazon.com")
    counting.buy(request("/count/buy", method="POST", user_agent=PHONE), "guinea-pig-or-hamster", "www.amazon.com")
    batch = counting.tally.take()
    assert views(batch, "buy") == {"guinea-pig-or-hamster www.amazon.com": 4}
    assert visitors(batch, "buy", "guinea-pig-or-hamster www.amazon.com") == 2


def address_of(number: int) -> str:
    return f"198.51.{number // 250}.{number % 250}"


def test_past_1000_keys_of_a_kind_a_flush_folds_new_ones_into_other(counting):
    for number in range(1005):
        view(counting, request("/", query=f"ref=forged-{number}".encode(), address=address_of(number)), 200)
    view(counting, request("/", query=b"ref=forged-3", address=address_of(3)), 200)  # counted: keeps counting
    view(counting, request("/about", query=b"ref=forged-2000", address=address_of(2000)), 200)
    batch = counting.tally.take()
    campaigns = views(batch, "campaign")
    assert len(campaigns) == 1001
    assert campaigns[OTHER] == 6
    assert campaigns["ref: forged-999"] == 1 and "ref: forged-1000" not in campaigns
    assert campaigns["ref: forged-3"] == 2
    assert views(batch, "page") == {"/": 1006, "/about": 1}  # another kind is not folded
    view(counting, request("/", query=b"ref=forged-1000", address=address_of(1000)), 200)
    assert views(counting.tally.take(), "campaign") == {"ref: forged-1000": 1}  # each flush starts again


def test_one_address_adds_500_page_views_a_day_the_rest_count_as_a_bots():
    clock = FakeClock(NOON)
    counting = salted(make_recorder(clock))
    for number in range(501):
        view(counting, request("/", address=f"2001:db8:1:2::{number % 7 + 1}"), 200)  # one /64
    view(counting, request("/", address="2001:db8:1:3::1"), 200)  # another /64
    batch = counting.tally.take()
    assert views(batch, "site") == {"": 501}
    assert views(batch, "bot") == {"": 1}
    clock.now += timedelta(days=1)
    view(salted(counting), request("/", address="2001:db8:1:2::1"), 200)
    assert views(counting.tally.take(), "site", DAY + timedelta(days=1)) == {"": 1}  # a new day


def test_one_address_brings_50_visitors_a_day_the_next_user_agent_counts_as_a_bots_unjudged(counting, monkeypatch):
    judged: list[str] = []
    monkeypatch.setattr(visit_rules, "is_bot", lambda user_agent: judged.append(user_agent) or False)
    for number in range(51):  # each a user agent never seen before
        view(counting, request("/", user_agent=f"{DESKTOP} {number}"), 200)
    view(counting, request("/", user_agent=f"{DESKTOP} 7"), 200)  # one of its 50: counted
    batch = counting.tally.take()
    assert visitors(batch, "site", "") == 50
    assert views(batch, "site") == {"": 51}
    assert views(batch, "bot") == {"": 1}
    assert len(judged) == 51  # the 51st user agent is not even judged


def test_a_view_adds_at_most_5_seen_rows_the_minute_for_visitors_now_without_a_view():
    counting = salted(make_recorder(FakeClock(NOON + timedelta(minutes=7))))
    view(counting, request("/about", referer="https://news.example/", query=b"ref=school"), 200)
    batch = counting.tally.take()
    assert {kind for _, kind, _, _ in batch.seen} == {"site", "page", "minute", "source", "campaign"}
    assert visitors(batch, "minute", "1207") == 1
    assert views(batch, "minute") == {}


def test_one_address_brings_5_new_labels_a_day_the_rest_fold_into_other(counting):
    for number in range(6):
        view(counting, request("/", referer=f"https://site-{number}.example/", address="203.0.113.7"), 200)
    view(counting, request("/", referer="https://site-2.example/", address="203.0.113.7"), 200)  # brought: kept
    view(counting, request("/", referer="https://www.google.de/", address="203.0.113.7"), 200)  # a known name
    view(counting, request("/", query=b"ref=school", address="203.0.113.7"), 200)
    view(counting, request("/", query=b"ref=school", address="203.0.113.8"), 200)  # another address's own
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
    assert [record.getMessage() for record in caplog.records] == [
        "Visits: a page view was not counted (RuntimeError; logged at most once a minute)"
    ]


async def never(seconds: float) -> None:
    await asyncio.Event().wait()


def make_loop(counting, flush=lambda batch, seen_done: None, chores=lambda now: None, store=None, sleep=never):
    return FlushLoop(counting, store or FakeSalts(), flush, chores, visits.FLUSH_INTERVAL_S, sleep=sleep)


class Stop(Exception):
    """Ends a loop driven by the fake sleep (as the worker's stop cancels the real one)."""


@pytest.mark.asyncio
async def test_the_loop_flushes_every_5_seconds_and_a_flush_that_raises_loses_only_its_own_batch(counting, caplog):
    slept: list[float] = []
    seen_done: list[bool] = []
    written: list[int] = []

    def flush(batch: Batch, seen_in_redis: bool) -> None:
        seen_done.append(seen_in_redis)
        if len(seen_done) == 2:
            raise ConnectionError("the database is away")
        written.append(sum(views(batch, "site").values()))

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        if len(slept) > 4:
            raise Stop
        view(counting, request("/"), 200)

    with caplog.at_level(logging.WARNING, logger=flush_loop.__name__), pytest.raises(Stop):
        await make_loop(counting, flush, sleep=sleep).run()
    assert slept == [5] * 5
    assert written == [1, 1, 1]  # four turns, one view each: the second turn's is lost
    assert set(seen_done) == {False}  # without Redis the database sorts the visitors
    assert "Visits: 1 page views lost, the database did not take them (ConnectionError)" in caplog.messages


@pytest.mark.asyncio
async def test_with_redis_away_a_flush_keeps_the_views_and_loses_only_that_windows_visitors(counting, caplog):
    class RedisAway(FakeSalts):
        seen_in_redis = True

        async def mark(self, batch: Batch) -> None:
            raise ConnectionError("Redis is away")

    flushed: list[tuple[Batch, bool]] = []
    loop = make_loop(counting, lambda batch, seen_done: flushed.append((batch, seen_done)), store=RedisAway())
    view(counting, request("/"), 200)
    with caplog.at_level(logging.WARNING, logger=flush_loop.__name__):
        await loop.flush_once()
    [(batch, seen_done)] = flushed
    assert views(batch, "site") == {"": 1}
    # No seen rows either: the database would count again visitors Redis already knows.
    assert (batch.seen, batch.new_visitors, seen_done) == (set(), {}, True)
    assert "Visits: Redis did not answer (ConnectionError); this window's visitors are lost" in caplog.messages


@pytest.mark.asyncio
async def test_the_daily_chores_run_once_a_day_and_again_after_a_failure():
    clock = FakeClock(NOON)
    counting = make_recorder(clock)
    ran: list[datetime] = []
    failing = [True]

    def chores(now: datetime) -> None:
        if failing.pop() if failing else False:
            raise ConnectionError("the database is away")
        ran.append(now)

    loop = make_loop(counting, chores=chores)
    await loop.chores_once_a_day()  # failed: tried again at the next turn
    await loop.chores_once_a_day()
    await loop.chores_once_a_day()
    clock.now = NOON + timedelta(days=1)
    await loop.chores_once_a_day()
    assert ran == [NOON, NOON + timedelta(days=1)]


@pytest.mark.asyncio
async def test_the_last_flush_is_waited_for_a_bounded_time(caplog):
    counting = make_recorder(FakeClock(NOON))
    database_answers = threading.Event()

    def hanging_flush(batch: Batch, seen_done: bool) -> None:
        database_answers.wait()

    loop = make_loop(counting, hanging_flush)
    try:
        with caplog.at_level(logging.WARNING, logger=visits.__name__):
            async with visits.running(loop, last_flush_s=0.05):
                view(counting, request("/"), 200)
    finally:
        database_answers.set()
    assert "Visits: the last flush took over 0.05 s; its counts are lost" in caplog.messages
    assert visits.LAST_FLUSH_WAIT_S == 3.0


def test_visitors_now_are_those_seen_in_the_last_5_minutes():
    now = datetime(2026, 11, 27, 12, 10, 30, tzinfo=UTC)
    since = flush_loop.first_minute_counted(now, visits.VISITORS_NOW_MINUTES)
    assert datetime(2026, 11, 27, 12, 5, tzinfo=UTC) == since  # seen 5 minutes ago: counted, 6: not


def test_the_app_counts_views_on_its_public_pages_and_runs_the_counting_in_its_lifespan():
    from publisher.publisher import app

    assert visits.counting in app.get_lifespan_tasks()
    counted = visits.shared_recorder.get()
    forms = {
        "/subscribe",
        "/contact-us",
        "/subscribe/thanks",
        "/contact-us/thanks",
        "/subscribe/confirm",
        "/unsubscribe",
    }
    books = {"/books/coloring-book", "/books/guinea-pig-or-hamster", "/books/word-search-book"}
    # Never the dashboard (/admin, /admin/enrol) nor the not-found page, which has no URL.
    assert counted.pages == {"/", "/about", *forms, *books}
