"""The visit counts' SQL (storage/visit_counts.py) with the figures the docs state; the upserts, a key
cut to its column and the query plans on SQLite and PostgreSQL, the plain reads and deletes on SQLite."""

from __future__ import annotations

import asyncio
import functools
import io
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime, timedelta

import pytest
import sqlalchemy

from publisher.cli import visit_report
from publisher.mail import notices
from publisher.rules import notice_rules, visit_rules
from publisher.storage import visit_counts
from publisher.storage.tables import VISIT_KEY_MAX, VisitCount, VisitSalt, VisitSeen, engine
from publisher.storage.visit_counts import Batch, DayCount, KeyCount
from publisher.visits.recorder import Recorder
from publisher.web import exports
from publisher.web.states import admin_state
from tests.databases import ON_BOTH_DATABASES
from tests.unit.test_visit_tally import DAY, NOON, request

ANN, BO, CY = b"A" * 16, b"B" * 16, b"C" * 16  # visitor ids as rules/visit_rules.visitor_id makes them


def view(batch: Batch, visitor: bytes, kind: str, key: str = "", day: date = DAY) -> Batch:
    batch.views[(day, kind, key)] = batch.views.get((day, kind, key), 0) + 1
    batch.seen.add((day, kind, key, visitor))
    return batch


def counted(counts: dict[tuple[date, str, str], tuple[int, int]]) -> Batch:
    """A batch of these (views, visitors) per (day, kind, key), each visitor an id of its own."""
    seen = {(*key, n.to_bytes(16, "big")) for key, (_, visitors) in counts.items() for n in range(visitors)}
    return Batch({key: views for key, (views, _) in counts.items()}, seen)


def rows(db_url: str, table) -> int:
    with engine(db_url).connect() as connection:
        return connection.execute(sqlalchemy.select(sqlalchemy.func.count()).select_from(table)).scalar_one()


def days_left(db_url: str | None, table) -> list[date]:
    with engine(db_url).connect() as connection:
        return list(connection.execute(sqlalchemy.select(table.day).distinct().order_by(table.day)).scalars())


def one_day(db_url: str, kind: str, key: str = "", day: date = DAY) -> DayCount:
    [count] = visit_counts.daily(kind, day, day, key, db_url)
    return count


@ON_BOTH_DATABASES
def test_a_days_salt_is_made_once_32_random_bytes_and_never_again_once_destroyed(db_url):
    salt = visit_counts.salt_for(DAY, NOON, db_url)
    assert salt is not None and len(salt) == 32
    assert visit_counts.salt_for(DAY, NOON + timedelta(hours=3), db_url) == salt  # every worker, the same one
    tomorrow = visit_counts.salt_for(DAY + timedelta(days=1), NOON + timedelta(hours=11, minutes=55), db_url)
    assert tomorrow is not None and tomorrow != salt
    destroyed = visit_rules.SALT_LIFETIME_HOURS
    assert visit_counts.salt_for(DAY, datetime(2026, 11, 27, tzinfo=UTC) + timedelta(hours=destroyed), db_url) is None
    # A day already gone is not made again, even before drop_expired ran.
    assert visit_counts.salt_for(DAY - timedelta(days=5), NOON, db_url) is None
    assert days_left(db_url, VisitSalt) == [DAY, DAY + timedelta(days=1)]


def test_a_flush_is_one_transaction_a_failure_writes_nothing_of_its_batch(db_url, monkeypatch):
    def failing(*_args) -> None:
        raise RuntimeError("the database went away")

    monkeypatch.setattr(visit_counts, "_add_counts", failing)
    with pytest.raises(RuntimeError):
        visit_counts.flush(view(Batch(), ANN, "site"), db_url=db_url)
    monkeypatch.undo()
    assert rows(db_url, VisitSeen) == 0  # had the seen row stayed, ANN would never count again
    visit_counts.flush(view(Batch(), ANN, "site"), db_url=db_url)
    assert one_day(db_url, "site") == DayCount(DAY, views=1, visitors=1)


@ON_BOTH_DATABASES
def test_minute_rows_are_seen_only_and_an_overlong_key_is_cut_to_fit(db_url):
    batch = view(Batch(), ANN, "minute", "1200")
    long_campaign = "x" * (VISIT_KEY_MAX + 50)
    view(batch, ANN, "campaign", long_campaign)
    view(batch, BO, "campaign", long_campaign[:VISIT_KEY_MAX] + "y")  # the same key once cut
    visit_counts.flush(batch, db_url=db_url)
    assert visit_counts.top("minute", DAY, DAY, db_url=db_url) == []
    assert visit_counts.top("campaign", DAY, DAY, db_url=db_url) == [KeyCount("x" * VISIT_KEY_MAX, 2, 2)]
    assert visit_counts.visitors_now(NOON, db_url=db_url) == 1


def labels(db_url: str, kind: str, day: date = DAY) -> dict[str, int]:
    return {count.key: count.views for count in visit_counts.top(kind, day, day, limit=1000, db_url=db_url)}


@ON_BOTH_DATABASES
def test_a_day_takes_200_new_sources_and_200_campaigns_the_rest_fold_into_other(db_url):
    first = Batch()
    for number in range(150):
        view(view(first, ANN, "source", f"site-{number}.example"), ANN, "campaign", f"c{number}")
    visit_counts.flush(view(first, ANN, "site"), db_url=db_url)
    second = view(view(Batch(), BO, "site"), BO, "source", "Google")  # a name the site knows takes no room
    for number in range(140, 210):  # 10 counted already, 60 new: 50 fit
        for _ in range(2 if number < 200 else 1):  # the most viewed new ones get the room
            view(second, BO, "source", f"site-{number}.example")
        view(second, BO, "campaign", f"c{number}")
    visit_counts.flush(second, db_url=db_url)
    sources = labels(db_url, "source")
    assert len(sources) == 200 + 2  # and Google and (other)
    assert sources["site-199.example"] == 2 and "site-200.example" not in sources
    assert (sources["Google"], sources["(other)"], sources["site-140.example"]) == (1, 10, 3)
    assert len(labels(db_url, "campaign")) == 200 + 1
    assert one_day(db_url, "source", "(other)") == DayCount(DAY, views=10, visitors=1)
    visit_counts.flush(view(view(Batch(), CY, "site"), CY, "source", "site-0.example"), db_url=db_url)
    assert labels(db_url, "source")["site-0.example"] == 2  # a label of the day keeps counting
    tomorrow = DAY + timedelta(days=1)
    visit_counts.flush(
        view(view(Batch(), CY, "site", day=tomorrow), CY, "source", "new.example", tomorrow), db_url=db_url
    )
    assert labels(db_url, "source", tomorrow) == {"new.example": 1}  # a new day, new room


def test_what_a_visitor_sent_reaches_the_csv_the_summary_and_the_dashboard_as_clean_text_only(db_url):
    """docs/security.md's hostile Referers and tags: no byte of them in the CSV, summary or dashboard."""
    counting = Recorder(trusted_proxy_hops=0, clock=lambda: NOON)
    counting.count_views_on({"/"})
    asyncio.run(counting.salts.refresh(functools.partial(visit_counts.salt_for, db_url=db_url), NOON))
    hostile = [
        ("https://[::1%URGENT: your account is locked, call 555-0100 now]/", b""),
        ("https://[fe80::1%\x85\x9b]/", b"utm_campaign=%3Csvg%20onload%3Dalert(1)%3E"),
        ("https://a\\b.example/", b"utm_source=%3D1%2B1"),
        ("https://ex\x85ample.org/", b"ref=%C2%85x%C2%9B"),
        ("https://news.example/", b"ref=a%5Cb"),
    ]
    for number, (referer, query) in enumerate(hostile):
        counting.page_view(request(referer=referer, query=query, address=f"203.0.113.{number}"), 200, "/")
    visit_counts.flush(counting.tally.take(), db_url=db_url)
    out = io.StringIO()
    exports.write_visits_csv(visit_report.csv_rows(visit_report.read(7, DAY, db_url)), out)
    monday = datetime(2026, 11, 30, 9, tzinfo=UTC)
    week = notices.with_visits(notice_rules.Week(0, 0, 0, 0, 0, 0), visit_counts.week(monday.date(), db_url))
    [summary] = notice_rules.due(notice_rules.Snapshot(now=monday, site_url="https://books.example", week=week))
    dashboard = admin_state._keys(visit_counts.top("source", DAY, DAY, db_url=db_url)) + admin_state._keys(
        visit_counts.top("campaign", DAY, DAY, db_url=db_url)
    )
    assert {row["key"] for row in dashboard} == {"(direct)", "news.example", "(other)"}
    for shown in (out.getvalue(), summary.body, repr(dashboard)):
        assert not any(text in shown for text in ("URGENT", "urgent", "555", "svg", "=1", "\x85", "\x9b", "\\")), shown
    assert "(direct) 4, news.example 1" in summary.body


FLUSHES = 100  # each worker's: enough for two unordered writers to deadlock on PostgreSQL


def flushes_of_a_worker(db_url: str, me: bytes, start: threading.Barrier) -> bytes:
    """One worker on its own connection: the day's salt, then FLUSHES flushes by a shared visitor and its own."""
    shared = b"S" * 16
    start.wait()
    salt = visit_counts.salt_for(DAY, NOON, db_url)
    pages = [f"/page-{n}" for n in range(10)]
    for flush in range(FLUSHES):
        batch = Batch()
        # Each flush names the pages in another order: the writes must not deadlock between workers.
        for page in pages[flush % 10 :] + pages[: flush % 10]:
            for visitor in (shared, me):
                view(batch, visitor, "page", page)
        for visitor in (shared, me):
            view(batch, visitor, "site")
        visit_counts.flush(batch, db_url=db_url)
    assert salt is not None
    return salt


@ON_BOTH_DATABASES
def test_two_workers_flushing_at_once_add_up(db_url):
    start = threading.Barrier(2)
    with ThreadPoolExecutor(2) as workers:
        salts = list(workers.map(lambda me: flushes_of_a_worker(db_url, me, start), (b"1" * 16, b"2" * 16)))
    assert salts[0] == salts[1]  # one salt for both, whoever made it
    # Each worker: FLUSHES flushes of two views a key (the shared visitor's and its own); 3 visitors in all.
    assert one_day(db_url, "site") == DayCount(DAY, views=2 * FLUSHES * 2, visitors=3)
    pages = visit_counts.top("page", DAY, DAY, limit=20, db_url=db_url)
    assert sorted(pages, key=lambda count: count.key) == [KeyCount(f"/page-{n}", 2 * FLUSHES * 2, 3) for n in range(10)]


def test_a_days_salt_and_seen_rows_are_gone_48_hours_after_the_day_began_and_not_a_minute_before(db_url):
    midnight = datetime(2026, 11, 27, tzinfo=UTC)
    for day in (DAY - timedelta(days=1), DAY, DAY + timedelta(days=1)):
        assert visit_counts.salt_for(day, midnight - timedelta(hours=1), db_url) is not None
        visit_counts.flush(view(view(Batch(), ANN, "site", day=day), ANN, "minute", "0000", day=day), db_url=db_url)
    almost = midnight + timedelta(hours=47, minutes=59)
    assert visit_counts.drop_expired(almost, db_url) == DAY  # the first day left: when to come back
    assert days_left(db_url, VisitSalt) == days_left(db_url, VisitSeen) == [DAY, DAY + timedelta(days=1)]
    assert visit_counts.drop_expired(midnight + timedelta(hours=48), db_url) == DAY + timedelta(days=1)
    assert days_left(db_url, VisitSalt) == days_left(db_url, VisitSeen) == [DAY + timedelta(days=1)]
    assert one_day(db_url, "site") == DayCount(DAY, views=1, visitors=1)
    tomorrow = DAY + timedelta(days=1)  # the same visitor id the next day: a new visitor of that day
    assert one_day(db_url, "site", day=tomorrow) == DayCount(tomorrow, views=1, visitors=1)


def test_visitors_now_counts_the_last_5_minutes_and_not_the_6th_across_midnight(db_url):
    now = datetime(2026, 11, 28, 0, 3, 30, tzinfo=UTC)  # 3 minutes after midnight
    batch = Batch()
    batch.seen |= {
        (DAY + timedelta(days=1), "minute", "0003", ANN),
        (DAY + timedelta(days=1), "minute", "0001", ANN),  # the same visitor twice: one
        (DAY, "minute", "2358", BO),  # 5 minutes before: yesterday's row, counted
        (DAY, "minute", "2357", CY),  # 6 minutes before: not
        (DAY, "site", "", CY),  # not a minute row
    }
    visit_counts.flush(batch, db_url=db_url)
    assert visit_counts.visitors_now(now, db_url=db_url) == 2
    assert visit_counts.visitors_now(now, minutes=6, db_url=db_url) == 3
    assert visit_counts.visitors_now(now + timedelta(days=3), db_url=db_url) == 0


def test_daily_gives_exactly_90_days_oldest_first_with_the_missing_ones_as_zeros_and_730_days_are_kept(db_url):
    today = DAY
    first = today - timedelta(days=89)
    oldest_kept, first_pruned = today - timedelta(days=729), today - timedelta(days=730)
    batch = counted(
        {(first, "site", ""): (4, 2), (today, "site", ""): (7, 3), (today - timedelta(days=90), "site", ""): (9, 0)}
        | {(oldest_kept, "site", ""): (1, 0), (first_pruned, "site", ""): (1, 0)}
    )
    visit_counts.flush(batch, db_url=db_url)
    assert visit_counts.prune(today, 730, db_url) == 1  # the 731st day
    assert visit_counts.prune(today, 730, db_url) == 0
    assert [count.views for count in visit_counts.daily("site", first_pruned, oldest_kept, db_url=db_url)] == [0, 1]
    days = visit_counts.daily("site", first, today, db_url=db_url)
    assert len(days) == 90
    assert [count.day for count in days] == [first + timedelta(days=n) for n in range(90)]
    assert days[0] == DayCount(first, 4, 2) and days[-1] == DayCount(today, 7, 3)
    assert all(count == DayCount(count.day, 0, 0) for count in days[1:-1])
    assert visit_counts.daily("page", first, today, "/", db_url) == [DayCount(day.day, 0, 0) for day in days]


def test_top_sums_each_key_over_the_days_most_visitors_first_then_views(db_url):
    batch = counted(
        {
            (DAY, "source", "Instagram"): (10, 3),
            (DAY - timedelta(days=1), "source", "Instagram"): (10, 2),
            (DAY, "source", "(direct)"): (50, 5),
            (DAY, "source", "Google"): (3, 3),
            (DAY - timedelta(days=40), "source", "Old"): (99, 99),
        }
    )
    visit_counts.flush(batch, db_url=db_url)
    since = DAY - timedelta(days=29)
    assert visit_counts.top("source", since, DAY, db_url=db_url) == [
        KeyCount("(direct)", 50, 5),
        KeyCount("Instagram", 20, 5),
        KeyCount("Google", 3, 3),
    ]
    assert visit_counts.top("source", since, DAY, limit=1, db_url=db_url) == [KeyCount("(direct)", 50, 5)]


def test_the_week_is_the_seven_days_before_the_summary(db_url):
    monday = date(2026, 11, 30)
    week_days = [monday - timedelta(days=n) for n in range(1, 8)]
    counts = {(day, "site", ""): (10, 2) for day in week_days} | {(monday, "site", ""): (1000, 0)}
    counts |= {(day, "bot", ""): (3, 0) for day in week_days} | {(monday - timedelta(days=8), "bot", ""): (1000, 0)}
    counts |= {(week_days[0], "source", f"site-{n}.example"): (n, 1) for n in range(1, 8)}
    counts |= {(week_days[0], "buy", "coloring-book www.amazon.com"): (4, 3)}
    visit_counts.flush(counted(counts), db_url=db_url)
    week = visit_counts.week(monday, db_url)
    assert (week.visitors, week.views, week.bots) == (14, 70, 21)
    assert [source.key for source in week.top_sources] == [f"site-{n}.example" for n in (7, 6, 5, 4, 3)]
    assert week.buys == (KeyCount("coloring-book www.amazon.com", 4, 3),)


def two_years(db_url: str, today: date) -> None:
    """Two years of counts (20 pages, 20 sources and the site a day), inserted as one flush orders them."""
    rows = []
    for back in range(730):
        day = today - timedelta(days=back)
        rows.append({"kind": "site", "day": day, "key": "", "views": 100_000, "visitors": 100_000})
        for n in range(20):
            rows.append({"kind": "page", "day": day, "key": f"/page-{n}", "views": 1000 + n, "visitors": 1000 + n})
            rows.append({"kind": "source", "day": day, "key": f"source-{n}", "views": 100 + n, "visitors": 100 + n})
    rows.sort(key=lambda row: (row["kind"], row["day"], row["key"]))
    with engine(db_url).begin() as connection:
        connection.execute(sqlalchemy.insert(VisitCount), rows)


def query_plan(db_url: str, statement: str) -> str:
    with engine(db_url).connect() as connection:
        if connection.dialect.name == "sqlite":
            rows = connection.execute(sqlalchemy.text("EXPLAIN QUERY PLAN " + statement)).all()
            return "\n".join(str(row[-1]) for row in rows)
        connection.execute(sqlalchemy.text("ANALYZE visit_count"))
        return "\n".join(row[0] for row in connection.execute(sqlalchemy.text("EXPLAIN " + statement)))


@ON_BOTH_DATABASES
def test_reads_stay_on_the_primary_key_with_two_years_of_rows(db_url):
    today = DAY
    two_years(db_url, today)
    assert rows(db_url, VisitCount) == 730 * 41
    since = today - timedelta(days=89)
    chart = visit_counts.daily("site", since, today, db_url=db_url)
    assert len(chart) == 90 and {count.views for count in chart} == {100_000}
    top = visit_counts.top("page", today - timedelta(days=29), today, db_url=db_url)
    assert top[0] == KeyCount("/page-19", 30 * 1019, 30 * 1019) and len(top) == 10
    assert visit_counts.week(today, db_url).views == 7 * 100_000
    # The reads: one kind over a range of days, on the key (kind, day, key), never the whole table.
    reads = [
        "SELECT day, views, visitors FROM visit_count WHERE kind = 'site' AND key = '' "
        f"AND day >= '{since}' AND day <= '{today}'",
        "SELECT key, sum(views), sum(visitors) FROM visit_count WHERE kind = 'page' "
        f"AND day >= '{today - timedelta(days=29)}' AND day <= '{today}' GROUP BY key",
    ]
    for read in reads:
        plan = query_plan(db_url, read)
        assert "visit_count_pkey" in plan or "sqlite_autoindex_visit_count_1 (kind=? AND day>? AND day<?)" in plan, plan
        assert "Seq Scan" not in plan and "SCAN visit_count" not in plan, plan
