"""``POST /count/buy`` through the site's HTTP stack: only a genuine press counts; every answer is one 204."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from urllib.parse import urlsplit

import pytest
from limits.aio.storage import memory as limits_memory

from publisher import visits
from publisher.content import books
from publisher.limits import submits
from publisher.limits.submits import Limiter
from publisher.rules import visit_rules
from publisher.server import buy_beacon, middleware
from tests.support import asgi_exchange
from tests.unit.conftest import http_scope
from tests.unit.test_bounce_hook import Answer
from tests.unit.test_middleware import RespondingApp
from tests.unit.test_visit_rules import DESKTOP_CHROME
from tests.unit.test_visit_tally import GOOGLEBOT

BOOK = books.BOOKS[0]
STORE = urlsplit(str(BOOK.book_link)).hostname or ""
PRESS = f"{BOOK.slug} {STORE}".encode()
SITE = "https://books.example.com"


class Presses(list):
    """The worker's recorder, keeping the presses it was given (and no page view)."""

    def buy(self, scope, slug: str, store: str) -> None:
        self.append((slug, store))

    def page_view(self, scope, status: int, route: str) -> None:
        pass


@pytest.fixture
def presses(monkeypatch) -> Iterator[Presses]:
    """Counting on; the presses the recorder was given; a fresh limiter in this process."""
    monkeypatch.delenv("PUBLISHER_GATEWAY_URL", raising=False)
    monkeypatch.setenv("PUBLISHER_VISITS", "on")
    recorded = Presses()
    monkeypatch.setattr(visits.shared_recorder, "_value", recorded)
    buy_beacon.shared_buy_limiter.set(Limiter(per_address=visit_rules.BUY_PER_ADDRESS))
    yield recorded
    buy_beacon.shared_buy_limiter.set(None)


def beacon_scope(
    body: bytes = PRESS,
    *,
    method: str = "POST",
    origin: str | list[str] | None = SITE,
    sec_fetch_site: str | None = None,
    user_agent: str | None = DESKTOP_CHROME,
    client: str = "203.0.113.9",
    extra: list[tuple[bytes, bytes]] = (),  # type: ignore[assignment]
    path: str = buy_beacon.PATH,
) -> dict:
    """A request as a browser's beacon sends it unless told otherwise."""
    headers = [(b"host", b"books.example.com"), (b"content-type", b"text/plain;charset=UTF-8")]
    headers.append((b"content-length", str(len(body)).encode()))
    for value in [origin] if isinstance(origin, str) else origin or []:
        headers.append((b"origin", value.encode()))
    if sec_fetch_site is not None:
        headers.append((b"sec-fetch-site", sec_fetch_site.encode()))
    if user_agent is not None:
        headers.append((b"user-agent", user_agent.encode()))
    headers.extend(extra)
    return http_scope(path, method=method, headers=headers, client=(client, 5000))


def press(body: bytes = PRESS, **request) -> Answer:
    inner = RespondingApp()  # Reflex's app behind the table
    message = {"type": "http.request", "body": body, "more_body": False}
    sent, _ = asgi_exchange(middleware.transform(inner), beacon_scope(body, **request), [message])
    assert inner.scopes == []  # the beacon answers alone
    return Answer(sent)


def assert_the_same_empty_answer(answer: Answer) -> None:
    assert answer.status == 204
    assert answer.body == b""
    assert answer.headers["cache-control"] == "no-store"
    assert "set-cookie" not in answer.headers


GENUINE = {
    **{book.slug: {"body": f"{book.slug} {urlsplit(str(book.book_link)).hostname}".encode()} for book in books.BOOKS},
    "a trailing slash": {"path": buy_beacon.PATH + "/"},
    "two trailing slashes": {"path": buy_beacon.PATH + "//"},
    "no Origin, a same-origin fetch": {"origin": None, "sec_fetch_site": "same-origin"},
}


@pytest.mark.parametrize("request_kind", GENUINE.values(), ids=GENUINE.keys())
def test_a_press_of_each_book_at_any_slashes_or_a_same_origin_fetch_without_origin_counts_book_and_store(
    presses, request_kind
):
    assert_the_same_empty_answer(press(**request_kind))
    body = request_kind.get("body", PRESS).decode()
    assert presses == [tuple(body.split(" "))]


OVERSIZE = PRESS + b" " * (visit_rules.BEACON_BODY_MAX + 1 - len(PRESS))
NOT_COUNTED = {
    "an unknown book (every body refused: tests/unit/test_visit_rules.py)": {"body": b"no-such-book " + STORE.encode()},
    "another site's Origin": {"origin": "https://evil.example"},
    "another site's Origin, same-origin claimed": {"origin": "https://evil.example", "sec_fetch_site": "same-origin"},
    "Origin: null without Sec-Fetch-Site": {"origin": "null"},
    "no Origin and no Sec-Fetch-Site": {"origin": None},
    "no Origin, cross-site": {"origin": None, "sec_fetch_site": "cross-site"},
    "two Origin headers": {"origin": [SITE, "https://evil.example"]},
    "a GET": {"method": "GET"},
    "a HEAD": {"method": "HEAD"},
    "a PUT": {"method": "PUT"},
    f"a body over {visit_rules.BEACON_BODY_MAX} bytes": {"body": OVERSIZE},
    "a bot's user agent": {"user_agent": GOOGLEBOT},
    "curl": {"user_agent": "curl/8.5.0"},
    "no user agent": {"user_agent": None},
    "a prefetch": {"extra": [(b"sec-purpose", b"prefetch")]},
}


@pytest.mark.parametrize("request_kind", NOT_COUNTED.values(), ids=NOT_COUNTED.keys())
def test_anything_but_a_genuine_press_counts_nowhere_and_gets_the_same_answer(presses, request_kind):
    assert_the_same_empty_answer(press(**request_kind))
    assert presses == []


def test_the_21st_press_from_one_address_in_ten_minutes_counts_nowhere_and_garbage_uses_none_up(presses):
    for _ in range(30):  # only presses that would count are counted against the address
        press(b"no-such-book " + STORE.encode())
    for _ in range(20):
        assert_the_same_empty_answer(press())
    assert len(presses) == 20
    assert_the_same_empty_answer(press())
    assert len(presses) == 20
    # Another address in the same /64 is the same visitor; another address is not.
    press(client="2001:db8:1:2::1")
    press(client="2001:db8:1:2::ffff")
    assert len(presses) == 22
    press(client="198.51.100.7")
    assert len(presses) == 23


def test_with_counting_off_or_a_failing_count_nothing_counts_and_the_answer_is_the_same(presses, monkeypatch):
    monkeypatch.setenv("PUBLISHER_VISITS", "off")
    assert_the_same_empty_answer(press())
    monkeypatch.setenv("PUBLISHER_VISITS", "on")
    monkeypatch.setenv("PUBLISHER_GATEWAY_URL", "https://gateway.example.com")  # the cloud keeps no counts
    assert_the_same_empty_answer(press())
    assert presses == []

    def broken(scope, slug, store):
        raise RuntimeError("the tally is broken")

    monkeypatch.delenv("PUBLISHER_GATEWAY_URL")
    monkeypatch.setattr(presses, "buy", broken)
    assert_the_same_empty_answer(press())


def test_a_client_gone_before_its_body_gets_no_answer(presses):
    sent, _ = asgi_exchange(buy_beacon.BuyBeacon(), beacon_scope(), [])
    assert sent == [] and presses == []


@pytest.mark.asyncio
async def test_the_configured_limiter_allows_20_presses_per_address_in_600_seconds(monkeypatch):
    """Without Redis, in this process with the forms' attempts (with it: tests/services/test_submit_limits.py),
    on the clock the ``limits`` package times its windows by."""
    now = [1_200_600.0]
    monkeypatch.setattr(limits_memory, "time", SimpleNamespace(time=lambda: now[0]))
    monkeypatch.setattr(submits, "shared_redis", lambda: None)
    submits.shared_storage.set(None)
    limiter = buy_beacon.configured_buy_limiter()
    assert limiter.storage is submits.shared_storage.get()
    submits.shared_storage.set(None)
    pressed = [await limiter.allow("buy", "", "2001:db8:1:2::7") for _ in range(21)]
    assert pressed == [True] * 20 + [False]  # the same /64 or another address: through the stack above
    now[0] += 599
    assert not await limiter.allow("buy", "", "2001:db8:1:2::7")
    now[0] += 1
    assert await limiter.allow("buy", "", "2001:db8:1:2::7")  # the next window
