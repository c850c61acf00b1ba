"""The contact form's used tokens (limits/used_tokens.py) where they outlive a worker: the embedded
gateway's database (storage/used_form_tokens.py: ON CONFLICT DO NOTHING) on SQLite and PostgreSQL,
and a real Redis.

Without Redis they were kept in the worker's memory, so a deploy or a crash made a used token
good again for the rest of its hour (issue 40), and the Redis store was never tested: a ``SET``
without ``nx`` passed every test. Here each store refuses a nonce's second use from a new store
object on the same database or Redis (a restart), from a second process started after the first
ended, and from two processes using it at once (two workers); one submit with a token is
accepted and the same token after a "restart" is refused."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable
from datetime import timedelta

import pytest
import redis.asyncio

from publisher.limits import used_tokens
from publisher.limits.used_tokens import DatabaseUsedTokens, RedisUsedTokens, UsedTokens
from publisher.rules import antispam, form_tokens
from publisher.rules.antispam import MathQuestion
from publisher.storage import used_form_tokens
from publisher.storage.tables import utc_now
from publisher.web import submissions
from tests.databases import ON_BOTH_DATABASES
from tests.support import FORM_SECRET, PROJECT_ROOT

# One worker's process: the store the site configures for itself from the environment, then each
# nonce's first_use, as JSON.
WORKER = """
import asyncio, json, sys
from publisher.limits import used_tokens

async def main():
    store = used_tokens.shared_used_tokens.get()
    used = {nonce: await used_tokens.first_use(nonce) for nonce in sys.argv[1:]}
    print(json.dumps({"store": type(store).__name__, "used": used}))

asyncio.run(main())
"""


def worker_env(db_url: str, redis_url: str | None = None) -> dict[str, str]:
    """A site on the embedded gateway at ``db_url`` (and Redis at ``redis_url``, when given)."""
    env = {key: value for key, value in os.environ.items() if key not in ("REFLEX_REDIS_URL", "PUBLISHER_GATEWAY_URL")}
    env["REFLEX_DB_URL"] = db_url
    if redis_url is not None:
        env["REFLEX_REDIS_URL"] = redis_url
    return env


def start_worker(env: dict[str, str], nonces: list[str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", WORKER, *nonces],
        cwd=PROJECT_ROOT,  # rxconfig.py
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def result_of(worker: subprocess.Popen) -> dict:
    out, err = worker.communicate(timeout=120)
    assert worker.returncode == 0, err
    assert "unavailable" not in err, err  # a failing store says yes: that would prove nothing
    return json.loads(out.splitlines()[-1])


def nonce(number: int) -> str:
    return f"nonce-{number:016d}"  # 22 characters, as rules/form_tokens.py makes them


async def used_once_across_restarts_and_workers(make: Callable[[], UsedTokens]) -> None:
    """What every shared store must do: a nonce is used once, whatever store object asks."""
    first = make()
    assert await first.first_use(nonce(1)) is True
    assert await first.first_use(nonce(1)) is False  # a SET without NX says True again
    restarted = make()  # a new worker on the same database or Redis
    assert await restarted.first_use(nonce(1)) is False
    assert await restarted.first_use(nonce(2)) is True
    two_workers = [make(), make()]
    racing = await asyncio.gather(*(two_workers[turn % 2].first_use(nonce(3)) for turn in range(20)))
    assert racing.count(True) == 1


def used_once_across_processes(env: dict[str, str], store: str) -> None:
    """A process ends (a deploy, a crash) and the next one knows what it used; two at once use
    each nonce once between them."""
    before = result_of(start_worker(env, [nonce(10), nonce(11)]))
    assert before == {"store": store, "used": {nonce(10): True, nonce(11): True}}
    shared = [nonce(number) for number in range(10, 40)]
    workers = [start_worker(env, shared), start_worker(env, list(reversed(shared)))]
    results = [result_of(worker) for worker in workers]
    assert {result["store"] for result in results} == {store}
    for number in (10, 11):
        assert [result["used"][nonce(number)] for result in results] == [False, False]
    for name in shared[2:]:
        assert sorted(result["used"][name] for result in results) == [False, True], name


@ON_BOTH_DATABASES
@pytest.mark.asyncio
async def test_the_database_remembers_a_used_token_across_restarts_and_workers(db_url):
    await used_once_across_restarts_and_workers(lambda: DatabaseUsedTokens(db_url))


@ON_BOTH_DATABASES
def test_without_redis_the_sites_processes_share_the_used_tokens_through_its_database(db_url):
    used_once_across_processes(worker_env(db_url), "DatabaseUsedTokens")


@pytest.mark.asyncio
async def test_redis_remembers_a_used_token_across_restarts_and_workers(redis_url):
    clients: list[redis.asyncio.Redis] = []

    def make() -> UsedTokens:
        clients.append(redis.asyncio.Redis.from_url(redis_url))
        return RedisUsedTokens(clients[-1])

    await used_once_across_restarts_and_workers(make)
    ttl = await clients[0].ttl("publisher:form-token:" + nonce(1))
    assert form_tokens.VALID_FOR_MS // 1000 < ttl <= form_tokens.VALID_FOR_MS // 1000 + 60
    for client in clients:
        await client.aclose()


def test_with_redis_the_sites_processes_share_the_used_tokens_through_redis(redis_url, tmp_path):
    database = tmp_path / "never-opened.db"
    used_once_across_processes(worker_env(f"sqlite:///{database}", redis_url), "RedisUsedTokens")
    assert not database.exists()  # Redis alone held them


@pytest.mark.asyncio
async def test_used_tokens_are_kept_a_minute_past_a_tokens_hour_then_cleared(db_url):
    now = utc_now()
    clock = [now]
    store = DatabaseUsedTokens(db_url, clock=lambda: clock[0])
    assert await store.first_use(nonce(1))
    clock[0] = now + timedelta(hours=1, seconds=59)
    assert not await store.first_use(nonce(1))
    assert await store.first_use(nonce(2))
    assert used_form_tokens.remembered(db_url) == 2
    clock[0] = now + timedelta(hours=1, seconds=60)
    assert await store.first_use(nonce(3))
    assert used_form_tokens.remembered(db_url) == 2  # the first is cleared; the table holds an hour's at most


@pytest.mark.asyncio
async def test_a_contact_token_answered_once_is_refused_after_a_restart(db_url, monkeypatch):
    """The submit path itself (web/submissions.py, as the app and the plain POST use it): a token
    that sent a message is "Please try again." on the next worker, which starts with nothing."""
    monkeypatch.setenv("PUBLISHER_FORM_SECRET", FORM_SECRET)
    now_ms = submissions.now_ms()
    token = form_tokens.issue(FORM_SECRET, MathQuestion(3, "+", 4), now_ms=now_ms, shown_ms=now_ms - 30_000)
    data = {
        "firstName": "Ann",
        "lastName": "Lee",
        "email": "ann@example.com",
        "message": "Hello from a reader of the series.",
        "answer": "7",
        submissions.TOKEN_FIELD: token,
    }
    used_tokens.shared_used_tokens.set(DatabaseUsedTokens(db_url))
    try:
        accepted = await submissions.judge_contact(data)
        assert accepted.request is not None and not accepted.form_error
        used_tokens.shared_used_tokens.set(DatabaseUsedTokens(db_url))  # the worker restarted
        replayed = await submissions.judge_contact(data)
        assert replayed.request is None and replayed.form_error == antispam.TOKEN_REJECTED
    finally:
        used_tokens.shared_used_tokens.set(None)
