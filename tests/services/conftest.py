"""What several services tests share: one Redis server per test module, flushed per test, and an SMTP
server per test (tests/smtp.py: aiosmtpd on 127.0.0.1, recording what it receives)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio
import redis.asyncio

from tests.smtp import SmtpServer
from tests.support import RedisServer


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    yield server
    server.stop()


@pytest_asyncio.fixture
async def redis_url(redis_server) -> AsyncIterator[str]:
    client = redis.asyncio.Redis.from_url(redis_server.url)
    await client.flushdb()
    await client.aclose()
    yield redis_server.url


@pytest.fixture
def smtp_server() -> Iterator[SmtpServer]:
    server = SmtpServer().start()
    yield server
    server.stop()
