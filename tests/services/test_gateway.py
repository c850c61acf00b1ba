"""The gateway client against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import logging
import time

import pytest

from publisher.gateway import GatewayClient, GatewayError
from tests.services.test_embedded_gateway import CONTACT, SUBSCRIPTION
from tests.support import RecordingGateway, held_port, wait_until


@pytest.mark.asyncio
async def test_both_calls_post_the_spec_bodies_as_json_with_the_api_key_when_set(gateway):
    """The bodies' shapes over a mock transport: tests/unit/test_form_states.py; here, over HTTP."""
    plain = GatewayClient(gateway.url)
    await plain.subscribe(SUBSCRIPTION)
    await plain.aclose()
    client = GatewayClient(gateway.url, api_key="secret-key-123")
    await client.send_email(CONTACT)
    await client.aclose()
    subscribed, sent = gateway.requests
    assert [request["path"] for request in (subscribed, sent)] == ["/prod/subscribe", "/prod/send-email"]
    assert subscribed["headers"]["Content-Type"] == sent["headers"]["Content-Type"] == "application/json"
    assert "x-api-key" not in {k.lower() for k in subscribed["headers"]}
    assert sent["headers"]["x-api-key"] == "secret-key-123"
    assert json.loads(subscribed["body"]) == {**SUBSCRIPTION, "book_updates": "yes"}
    assert json.loads(sent["body"])["subject"] == "Contact Form Submission from Jo Reader"


@pytest.mark.asyncio
@pytest.mark.parametrize("status", [400, 404, 500, 502, 503, "dropped"])
async def test_a_non_success_status_or_a_dropped_connection_fails_once_logged_without_the_message(
    gateway, status, caplog
):
    if status == "dropped":
        gateway.drop_connection = True
    else:
        gateway.status = status
    client = GatewayClient(gateway.url, api_key="secret-key-123")
    with caplog.at_level(logging.WARNING, logger="publisher.gateway"), pytest.raises(GatewayError) as failure:
        await client.send_email({**CONTACT, "message": "PRIVATE TEXT"})
    await client.aclose()
    expected = "network error" if status == "dropped" else f"status {status}"
    assert failure.value.cause.startswith(expected) and expected in caplog.text
    assert len(gateway.requests) == 1, "the gateway may have received it: never send a message twice"
    assert "PRIVATE TEXT" not in caplog.text and "secret-key-123" not in caplog.text


@pytest.mark.asyncio
async def test_slow_gateway_fails_within_the_timeout(gateway):
    gateway.delay_s = 120  # answers only when the test ends
    client = GatewayClient(gateway.url, timeout_s=2)
    started = time.monotonic()
    with pytest.raises(GatewayError) as failure:
        await client.subscribe({"name": "Ada", "email": "reader@example.com"})
    elapsed = time.monotonic() - started
    await client.aclose()
    assert "timed out" in failure.value.cause
    # Not before the timeout; and at it, not when the gateway answers (a wide margin for a busy machine).
    assert 2 <= elapsed < 30
    # Sent once, not again: on a loaded machine the gateway's thread may read it after the timeout.
    wait_until(lambda: gateway.requests, 10, "the gateway to read the request")
    assert len(gateway.requests) == 1


@pytest.mark.asyncio
async def test_connection_refused_is_a_failure():
    with held_port() as closed:  # bound, not listening: refused, and no other process can take it
        client = GatewayClient(f"http://127.0.0.1:{closed.getsockname()[1]}", connect_attempts=2)
        with pytest.raises(GatewayError) as failure:
            await client.subscribe({"name": "Ada", "email": "reader@example.com"})
        await client.aclose()
    assert failure.value.cause == "network error: ConnectError"


@pytest.mark.asyncio
async def test_connect_retry_reaches_a_gateway_that_comes_up(monkeypatch):
    """Only an unopened connection is retried; a gateway that starts meanwhile gets one request."""
    closed = held_port()  # refused until the gateway listens on it, and nobody else's meanwhile
    started: list[RecordingGateway] = []
    real_sleep = asyncio.sleep

    async def start_gateway_during_backoff(delay):
        if not started:
            started.append(RecordingGateway(closed).__enter__())
        await real_sleep(0)

    monkeypatch.setattr("publisher.gateway.asyncio.sleep", start_gateway_during_backoff)
    client = GatewayClient(f"http://127.0.0.1:{closed.getsockname()[1]}", connect_attempts=3)
    try:
        await client.subscribe({"name": "Ada", "email": "reader@example.com"})
    finally:
        await client.aclose()
        for server in started:
            server.__exit__(None, None, None)  # closes the socket it listened on
        if not started:
            closed.close()
    assert len(started) == 1 and len(started[0].requests) == 1
