"""The contact form's used tokens (limits/used_tokens.py) where they outlive a worker: the embedded
gateway's database (storage/used_form_tokens.py: ON CONFLICT DO NOTHING) on SQLite and PostgreSQL,
and a real Redis.

Without Redis they were kept in the worker's memory, so a deploy or a crash made a used token
good again for the rest of its hour (issue 40), and the Redis store was never tested: a ``SET``
without ``nx`` passed every test. Here each store refuses a nonce's second use from a new store
object on the same database or Redis (a restart), from two store objects using it at once (two
workers, each on connections of its own), and from a process started afterwards with the store the
site configures from its environment; one submit with a token is accepted and the same token after
a "restart" is refused."""

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

# A worker's process started afterwards: the store the site configures for itself from the
# environment, then each nonce's first_use, as JSON.
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


def nonce(number: int) -> str:
    return f"nonce-{number:016d}"  # 22 characters, as rules/form_tokens.py makes them


async def used_once_across_restarts_workers_and_processes(
    make: Callable[[], UsedTokens], env: dict[str, str], store: str
) -> None:
    """What every shared store must do: a nonce is used once, whatever store object or process asks."""
    first = make()
    assert await first.first_use(nonce(1)) is True
    assert await first.first_use(nonce(1)) is False  # a SET without NX says True again
    restarted = make()  # a new worker on the same database or Redis
    assert await restarted.first_use(nonce(1)) is False
    assert await restarted.first_use(nonce(2)) is True
    two_workers = [make(), make()]
    racing = await asyncio.gather(*(two_workers[turn % 2].first_use(nonce(3)) for turn in range(20)))
    assert racing.count(True) == 1
    # A process of its own (a deploy, a crash: the next one), with the store it configures itself.
    later = subprocess.run(
        [sys.executable, "-c", WORKER, *(nonce(number) for number in (1, 2, 3, 4))],
        cwd=PROJECT_ROOT,  # rxconfig.py
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert later.returncode == 0, later.stderr
    assert "unavailable" not in later.stderr, later.stderr  # a failing store says yes: that would prove nothing
    used = {nonce(1): False, nonce(2): False, nonce(3): False, nonce(4): True}
    assert json.loads(later.stdout.splitlines()[-1]) == {"store": store, "used": used}


@ON_BOTH_DATABASES
@pytest.mark.asyncio
async def test_the_database_remembers_a_used_token_across_restarts_workers_and_processes(db_url):
    await used_once_across_restarts_workers_and_processes(
        lambda: DatabaseUsedTokens(db_url), worker_env(db_url), "DatabaseUsedTokens"
    )


@pytest.mark.asyncio
async def test_redis_alone_remembers_a_used_token_across_restarts_workers_and_processes(redis_url, tmp_path):
    clients: list[redis.asyncio.Redis] = []

    def make() -> UsedTokens:
        clients.append(redis.asyncio.Redis.from_url(redis_url))
        return RedisUsedTokens(clients[-1])

    database = tmp_path / "never-opened.db"
    env = worker_env(f"sqlite:///{database}", redis_url)
    await used_once_across_restarts_workers_and_processes(make, env, "RedisUsedTokens")
    assert not database.exists()  # Redis alone held them
    ttl = await clients[0].ttl("publisher:form-token:" + nonce(1))
    assert form_tokens.VALID_FOR_MS // 1000 < ttl <= form_tokens.VALID_FOR_MS // 1000 + 60
    for client in clients:
        await client.aclose()


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
