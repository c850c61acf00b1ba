"""The one body reader of every endpoint (publisher/server/routes.py): its limit, a declared
Content-Length over it refused before anything is received, a chunked body counted as it comes,
and a client that left."""

from __future__ import annotations

import asyncio

import pytest

from publisher.server import routes

LIMIT = 10


def read(chunks: list[bytes], content_length: str | None = None, then_disconnect: bool = False):
    """``read_body`` over ``chunks`` (each one message); returns (result or exception, messages received)."""
    headers = [] if content_length is None else [(b"content-length", content_length.encode())]
    messages = [{"type": "http.request", "body": c, "more_body": n < len(chunks) - 1} for n, c in enumerate(chunks)]
    if then_disconnect:
        messages[-1]["more_body"] = True
        messages.append({"type": "http.disconnect"})
    received = 0

    async def receive():
        nonlocal received
        received += 1
        return messages[received - 1]

    try:
        result: object = asyncio.run(routes.read_body({"type": "http", "headers": headers}, receive, LIMIT))
    except (routes.BodyTooLarge, routes.ClientLeft) as exc:
        result = exc
    return result, received


def test_a_body_up_to_the_limit_is_read_whole_from_its_chunks():
    assert read([b"12345", b"", b"67890"], content_length="10") == (b"1234567890", 3)
    assert read([b""]) == (b"", 1)


def test_a_declared_length_over_the_limit_is_refused_before_anything_is_received():
    result, received = read([b"x"], content_length="11")
    assert isinstance(result, routes.BodyTooLarge) and received == 0


@pytest.mark.parametrize("content_length", [None, "3", "not a number"])
def test_a_body_that_goes_past_the_limit_is_refused_at_the_chunk_that_does_whatever_it_declared(content_length):
    result, received = read([b"123456", b"78901", b"never read"], content_length=content_length)
    assert isinstance(result, routes.BodyTooLarge) and received == 2


def test_a_client_that_leaves_before_the_end_of_its_body_is_told_apart():
    result, _ = read([b"123"], then_disconnect=True)
    assert isinstance(result, routes.ClientLeft)
