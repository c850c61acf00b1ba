"""The contact form's used tokens (limits/submits.py) in the database (SQLite, PostgreSQL) and a real
Redis: a nonce's second use is refused by a restarted store, by racing workers, and by a process
started afterwards with the store it configures from its environment."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from datetime import timedelta

import pytest
import redis.asyncio
from limits.aio.storage import RedisStorage

from publisher.limits import submits
from publisher.limits.submits import DatabaseUsedTokens, Limiter
from publisher.rules import form_tokens
from publisher.storage.tables import UsedFormToken, utc_now
from tests.services.test_visit_counts import rows
from tests.support import PROJECT_ROOT

# A worker started afterwards: the store it configures from its environment, each nonce's first_use.
WORKER = """
import asyncio, json, sys
from publisher.limits import submits

async def main():
    store = submits.shared_used_tokens.get()
    used = {nonce: await submits.first_use(nonce) for nonce in sys.argv[1:]}
    print(json.dumps({"store": type(getattr(store, "storage", store)).__name__, "used": used}))

asyncio.run(main())
"""


def nonce(number: int) -> str:
    return f"nonce-{number:016d}"  # 22 characters, as rules/form_tokens.py makes them


@pytest.mark.parametrize(("database_kind", "with_redis"), [("sqlite", False), ("postgresql", False), ("sqlite", True)])
@pytest.mark.asyncio
async def test_a_used_token_is_refused_after_a_restart_by_racing_workers_and_by_a_later_process(
    db_url, with_redis, request
):
    env = {key: value for key, value in os.environ.items() if key not in ("REFLEX_REDIS_URL", "PUBLISHER_GATEWAY_URL")}
    env["REFLEX_DB_URL"] = db_url
    if with_redis:
        env["REFLEX_REDIS_URL"] = redis_url = request.getfixturevalue("redis_server").url  # this test's alone
        uri = redis_url.replace("redis://", "async+redis://", 1)

        def make():  # a worker of its own: its own connections
            return Limiter(RedisStorage(uri, implementation="redispy", key_prefix=submits.REDIS_KEY_PREFIX))
    else:

        def make():
            return DatabaseUsedTokens(db_url)

    first = make()
    assert await first.first_use(nonce(1)) is True
    assert await first.first_use(nonce(1)) is False
    restarted = make()
    assert await restarted.first_use(nonce(1)) is False
    assert await restarted.first_use(nonce(2)) is True
    two_workers = [make(), make()]
    racing = await asyncio.gather(*(two_workers[turn % 2].first_use(nonce(3)) for turn in range(20)))
    assert racing.count(True) == 1
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
    store = "RedisStorage" if with_redis else "DatabaseUsedTokens"
    assert json.loads(later.stdout.splitlines()[-1]) == {"store": store, "used": used}
    if with_redis:
        assert rows(db_url, UsedFormToken) == 0  # Redis alone held them, for an hour and a minute
        client = redis.asyncio.Redis.from_url(redis_url)
        ttl = await client.ttl(f"{submits.REDIS_KEY_PREFIX}:{submits.ONCE.key_for('form-token', nonce(1))}")
        await client.aclose()
        assert form_tokens.VALID_FOR_MS // 1000 < ttl <= form_tokens.VALID_FOR_MS // 1000 + 60


@pytest.mark.asyncio
async def test_used_tokens_are_kept_a_minute_past_a_tokens_hour_then_cleared(db_url):
    now = utc_now()
    clock = [now]
    store = DatabaseUsedTokens(db_url, clock=lambda: clock[0])
    assert await store.first_use(nonce(1))
    clock[0] = now + timedelta(hours=1, seconds=59)
    assert not await store.first_use(nonce(1))
    assert await store.first_use(nonce(2))
    assert rows(db_url, UsedFormToken) == 2
    clock[0] = now + timedelta(hours=1, seconds=60)
    assert await store.first_use(nonce(3))
    assert rows(db_url, UsedFormToken) == 2  # the first is cleared; the table holds an hour's at most
