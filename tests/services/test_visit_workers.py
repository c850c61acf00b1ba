"""The visits engine across processes, on SQLite and on PostgreSQL beside Redis: two workers find the
same day's salt in the database and their flushes add up; what a day leaves is destroyed 48 hours
after it began; a database that stops costs that flush window, never a page."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
from datetime import timedelta

import pytest
import redis

from publisher import visits
from publisher.rules import visit_rules
from publisher.storage import visit_counts
from publisher.storage.tables import VisitSalt, VisitSeen, utc_now
from publisher.visits.recorder import Recorder
from tests.databases import ON_BOTH_DATABASES
from tests.postgres import PostgresServer
from tests.services.test_visit_counts import days_left
from tests.support import PROJECT_ROOT, clear_of_midnight
from tests.unit.test_visit_tally import DESKTOP, request

SHARED_ADDRESS = "203.0.113.7"

# One worker process, counting as the app's lifespan does: the shared visitor 10 times, one of its own (argv[1])
# once; it stops once no salt or seen row is left before the day argv[3]. It prints whether it had the day's
# salt and the days left.
WORKER = """
import asyncio, json, sys
from publisher import visits
from publisher.rules.visit_rules import day_of
from publisher.storage import tables

def page(address):
    headers = [(b"host", b"books.example"), (b"user-agent", sys.argv[2].encode())]
    return {"type": "http", "method": "GET", "path": "/", "query_string": b"", "headers": headers,
            "client": (address, 50000)}

def left():
    with tables.engine().connect() as connection:
        days = connection.exec_driver_sql("SELECT day FROM visit_salt UNION SELECT day FROM visit_seen")
        return sorted(str(day) for (day,) in days)

async def main():
    visits.shared_recorder.get().count_views_on({"/"})
    async with visits.counting():
        for _ in range(10):
            visits.record_page_view(page("203.0.113.7"), 200, "/")
        visits.record_page_view(page(sys.argv[1]), 200, "/")
        for _ in range(600):
            if min(left() or [""]) >= sys.argv[3]:
                break
            await asyncio.sleep(0.1)
    print(json.dumps([visits.shared_recorder.get().salts.of(day_of(tables.utc_now())) is not None, left()]))

asyncio.run(main())
"""


def worker_env(db_url: str, redis_url: str | None = None, counting: str = "on") -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in ("REFLEX_REDIS_URL", "PUBLISHER_GATEWAY_URL")}
    env["REFLEX_DB_URL"] = db_url
    env["PUBLISHER_VISITS"] = counting
    if redis_url is not None:
        env["REFLEX_REDIS_URL"] = redis_url
    return env


def workers_count(env: dict[str, str], addresses: tuple[str, ...], first_day_left: str = "") -> list[list]:
    """WORKER processes at once, one per address: whether each had the day's salt, and the days left."""
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, address, DESKTOP, first_day_left],
            cwd=PROJECT_ROOT,  # rxconfig.py
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for address in addresses
    ]
    results = []
    for worker in workers:
        out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err
        assert "Visits:" not in err, err  # no salt missing, no flush lost: that would prove nothing
        results.append(json.loads(out.splitlines()[-1]))
    return results


def site_today(db_url: str) -> visit_counts.DayCount:
    today = visit_rules.day_of(utc_now())
    [count] = visit_counts.daily("site", today, today, db_url=db_url)
    return count


@pytest.fixture
def postgres_url(postgres: PostgresServer, postgres_template: str) -> str:
    return postgres.url(postgres.create_database(template=postgres_template))


@ON_BOTH_DATABASES
def test_two_workers_on_one_database_add_up_to_one_count_and_beside_redis_nothing_goes_there(db_url, request):
    """On PostgreSQL beside Redis, as in the container: the salt and seen rows are still the database's."""
    clear_of_midnight()  # the day it counts is the day it reads back
    redis_url = request.getfixturevalue("redis_server").url if db_url.startswith("postgresql") else None
    workers = workers_count(worker_env(db_url, redis_url), ("198.51.100.1", "198.51.100.2"))
    assert [salted for salted, _ in workers] == [True, True]
    count = site_today(db_url)
    assert (count.views, count.visitors) == (22, 3)  # the shared visitor is one: one salt for both workers
    assert visit_counts.visitors_now(utc_now(), db_url=db_url) == 3
    if redis_url is not None:
        client = redis.Redis.from_url(redis_url)
        assert list(client.scan_iter(match="publisher:visits:*")) == []
        client.close()


@pytest.mark.asyncio
async def test_the_database_stopped_mid_run_costs_that_window_and_counting_resumes(
    postgres: PostgresServer, postgres_url, caplog
):
    clear_of_midnight()  # the day it counts is the day it reads back

    def worker() -> tuple[Recorder, visits.FlushLoop]:
        counting = Recorder(trusted_proxy_hops=0)
        counting.count_views_on({"/"})
        return counting, visits.FlushLoop(counting, postgres_url)

    def view(counting: Recorder, address: str, times: int = 1) -> None:
        for _ in range(times):
            counting.page_view(request(address=address), 200, "/")

    running, loop = worker()
    await loop.load_salts()
    view(running, SHARED_ADDRESS, 3)
    await loop.flush_once()
    assert (site_today(postgres_url).views, site_today(postgres_url).visitors) == (3, 1)
    postgres.stop()
    try:
        view(running, "198.51.100.1", 2)  # pages go on: counting never touches the database here
        with caplog.at_level(logging.WARNING, logger=visits.__name__):
            await loop.flush_once()
            started, started_loop = worker()  # a worker that starts while the database is away
            await started_loop.load_salts()
        view(started, "198.51.100.9")
    finally:
        postgres.start()
    assert any("2 page views lost, the database did not take them" in message for message in caplog.messages)
    assert any("the day's salt is not available" in message for message in caplog.messages)
    view(running, SHARED_ADDRESS, 2)
    view(running, "198.51.100.3")
    await loop.flush_once()
    await started_loop.flush_once()  # its view without a visitor: it had no salt
    await started_loop.load_salts()
    view(started, SHARED_ADDRESS)
    await started_loop.flush_once()
    count = site_today(postgres_url)
    # 3 before, 2 lost with the database, 3 after, 1 without a salt, 1 once the salt came.
    assert (count.views, count.visitors) == (8, 2)


def counted_once(db_url: str, day, now) -> None:
    """What a day's counting leaves: its salt and a visitor's seen rows."""
    assert visit_counts.salt_for(day, now, db_url) is not None
    batch = visit_counts.Batch(views={(day, "site", ""): 1}, seen={(day, "site", "", b"A" * 16)})
    visit_counts.flush(batch, db_url=db_url)


@pytest.mark.parametrize("counting", ["off", "on"])
def test_a_start_after_a_long_stop_destroys_the_salts_and_seen_rows_past_their_time_and_counts_if_on(db_url, counting):
    clear_of_midnight()
    now = utc_now()
    today = visit_rules.day_of(now)
    for days_ago in (9, 5, 2, 1):
        counted_once(db_url, today - timedelta(days=days_ago), now - timedelta(days=days_ago))
    counted_once(db_url, today, now)
    yesterday = str(today - timedelta(days=1))
    [[_, left]] = workers_count(worker_env(db_url, counting=counting), ("198.51.100.1",), yesterday)
    assert left[:2] == [yesterday, str(today)]  # and tomorrow's salt, from 23:55 with counting on
    assert site_today(db_url).views == {"off": 1, "on": 12}[counting]  # counted_once's, and the worker's 11 if on


def test_with_counting_off_what_is_left_is_destroyed_48_hours_after_its_day_then_nothing_runs(db_url):
    midnight = visit_rules.salt_destroyed_at(visit_rules.day_of(utc_now())) - timedelta(hours=48)
    now = [midnight + timedelta(hours=12)]
    today = visit_rules.day_of(now[0])
    for days in (-3, -1, 0, 1):  # tomorrow's salt: made from 23:55
        counted_once(db_url, today + timedelta(days=days), now[0] + timedelta(days=min(days, 0)))
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        assert min(days_left(db_url, VisitSalt)) > visit_rules.day_of(now[0] - timedelta(hours=48))
        now[0] += timedelta(seconds=seconds)

    asyncio.run(asyncio.wait_for(visits.destroying(db_url, clock=lambda: now[0], sleep=sleep), 60))
    # Yesterday's at tomorrow's 00:00, today's a day later, tomorrow's a day after; then nothing.
    assert slept == [12 * 3600, 24 * 3600, 24 * 3600]
    assert days_left(db_url, VisitSalt) == days_left(db_url, VisitSeen) == []
