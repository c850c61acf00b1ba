"""Where the contact form's used tokens are remembered (limits/used_tokens.configured_store); on real
stores: tests/services/test_used_tokens.py."""

from __future__ import annotations

import pytest

from publisher.limits import submits, used_tokens

GATEWAY = "https://gw.example.com"


@pytest.mark.parametrize(
    ("redis", "gateway_url", "kept_by"),
    [("redis", None, "limits"), ("redis", GATEWAY, "limits"), (None, None, "database"), (None, GATEWAY, "limits")],
)
def test_used_tokens_are_kept_in_redis_else_the_sites_database_else_the_workers_memory(
    monkeypatch, redis, gateway_url, kept_by
):
    monkeypatch.setattr(used_tokens, "shared_redis", lambda: redis)
    if gateway_url is None:
        monkeypatch.delenv("PUBLISHER_GATEWAY_URL", raising=False)
    else:
        monkeypatch.setenv("PUBLISHER_GATEWAY_URL", gateway_url)
    shared = submits.MemoryStorage()  # stands for whichever storage the submit limits use
    submits.shared_storage.set(shared)
    try:
        store = used_tokens.configured_store()
    finally:
        submits.shared_storage.set(None)
    if kept_by == "database":
        assert type(store) is used_tokens.DatabaseUsedTokens
    else:
        assert type(store) is used_tokens.WindowUsedTokens and store.storage is shared


@pytest.mark.asyncio
async def test_a_token_is_used_once_in_a_window_of_an_hour_and_a_minute():
    assert used_tokens.ONCE.get_expiry() == 3660  # docs/security.md
    store = used_tokens.WindowUsedTokens()
    assert [await store.first_use("n-1"), await store.first_use("n-1"), await store.first_use("n-2")] == [
        True,
        False,
        True,
    ]


@pytest.mark.asyncio
async def test_a_store_that_fails_lets_the_token_through_and_says_so(caplog):
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
