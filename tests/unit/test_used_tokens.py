"""Where the contact form's used tokens are remembered (limits/used_tokens.configured_store): Redis
when Reflex uses it, else the embedded gateway's database, and the worker's memory only where the
cloud gateway keeps the list and there is no Redis. The stores themselves, on SQLite, PostgreSQL
and Redis, across restarts and workers: tests/services/test_used_tokens.py."""

from __future__ import annotations

import pytest

from publisher.limits import used_tokens


class FakeRedis:
    """Stands for Reflex's Redis client: only its presence is asked here."""


@pytest.mark.parametrize(
    ("redis", "gateway_url", "store"),
    [
        (FakeRedis(), None, used_tokens.RedisUsedTokens),
        (FakeRedis(), "https://gw.example.com", used_tokens.RedisUsedTokens),
        (None, None, used_tokens.DatabaseUsedTokens),  # the embedded gateway: its database
        (None, "https://gw.example.com", used_tokens.MemoryUsedTokens),  # no store outlives the worker
    ],
)
def test_used_tokens_are_kept_in_redis_else_the_sites_database_else_the_workers_memory(
    monkeypatch, redis, gateway_url, store
):
    monkeypatch.setattr(used_tokens, "shared_redis", lambda: redis)
    if gateway_url is None:
        monkeypatch.delenv("PUBLISHER_GATEWAY_URL", raising=False)
    else:
        monkeypatch.setenv("PUBLISHER_GATEWAY_URL", gateway_url)
    assert type(used_tokens.configured_store()) is store


@pytest.mark.asyncio
async def test_a_store_that_fails_lets_the_token_through_and_says_so(monkeypatch, caplog):
    """The limits per address still hold, and the form must not go down with the store."""

    class Broken:
        async def first_use(self, nonce: str) -> bool:
            raise ConnectionError("the store is down")

    used_tokens.shared_used_tokens.set(Broken())
    try:
        assert await used_tokens.first_use("nonce-0000000000000001") is True
    finally:
        used_tokens.shared_used_tokens.set(None)
    assert "Form token store unavailable (ConnectionError)" in caplog.text
