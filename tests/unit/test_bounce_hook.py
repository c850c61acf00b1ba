"""``POST /hooks/bounce`` by crafted ASGI calls, the database replaced by a recorder."""

from __future__ import annotations

import json
import logging

import pytest
import sqlalchemy

from publisher import returns
from publisher.limits import submits
from publisher.limits.submits import Limit, Limiter, shared_limiter
from publisher.server import bounce_hook, middleware
from publisher.server.bounce_hook import MAX_BODY_BYTES
from publisher.storage import bounce_records
from publisher.storage.bounce_records import Recorded, Report
from tests.support import asgi_exchange
from tests.unit.conftest import http_scope
from tests.unit.test_middleware import RespondingApp

SECRET = "0123456789abcdef0123456789abcdef-hook"
SECRET_VAR = "PUBLISHER_BOUNCE_WEBHOOK_SECRET"


class Answer:
    def __init__(self, sent: list[dict], chunks_read: int = 0) -> None:
        start = sent[0] if sent else {"status": None, "headers": []}
        self.status = start["status"]
        self.headers = {name.decode().lower(): value.decode() for name, value in start["headers"]}
        self.body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
        self.passed = self.body == b"ok"  # the request reached the app behind the hook
        self.chunks_read = chunks_read

    def json(self):
        return json.loads(self.body)


def call(
    body: bytes | list[bytes] = b"",
    *,
    method: str = "POST",
    path: str = "/hooks/bounce",
    authorization: str | None = f"Bearer {SECRET}",
    content_length: int | str | None | bool = True,
    client: str = "203.0.113.9",
    kind: str = "http",
) -> Answer:
    """``body``: one chunk or several (streamed). ``content_length``: True, the body's length; None, no header."""
    chunks = [body] if isinstance(body, bytes) else list(body)
    if content_length is True:
        content_length = sum(map(len, chunks))
    headers = [(b"host", b"books.example.com"), (b"content-type", b"application/json")]
    if authorization is not None:
        headers.append((b"authorization", authorization.encode("latin-1")))
    if content_length is not None:
        headers.append((b"content-length", str(content_length).encode("latin-1")))
    scope = http_scope(path, type=kind, method=method, headers=headers, client=(client, 5000))
    messages = [
        {"type": "http.request", "body": chunk, "more_body": number < len(chunks) - 1}
        for number, chunk in enumerate(chunks)
    ]
    sent, read = asgi_exchange(middleware.route_table(RespondingApp()), scope, messages)
    return Answer(sent, read)


def body_of(value) -> bytes:
    return json.dumps(value).encode()


@pytest.fixture
def taken(monkeypatch) -> list[list[Report]]:
    monkeypatch.setenv(SECRET_VAR, SECRET)
    calls: list[list[Report]] = []

    def take(reports, db_url=None, **_):
        reports = list(reports)
        calls.append(reports)
        return [Recorded(bounce_records.NOT_ON_THE_LIST) for _ in reports]

    monkeypatch.setattr(returns, "take", take)
    submits.shared_limiter.set(Limiter())
    yield calls
    submits.shared_limiter.set(None)


HARD = {"email": "jo@example.com", "type": "hard", "reason": "550 5.1.1 no such user"}


@pytest.mark.parametrize("why", ["no-secret", "cloud-gateway"])
@pytest.mark.parametrize("method", ["POST", "GET", "PUT"])
def test_without_a_secret_or_with_the_cloud_gateway_keeping_the_list_the_hook_does_not_exist(
    monkeypatch, taken, method, why
):
    if why == "no-secret":
        monkeypatch.delenv(SECRET_VAR)
    else:
        monkeypatch.setenv("PUBLISHER_GATEWAY_URL", "https://gateway.example.com")
    answer = call(body_of(HARD), method=method)
    assert (answer.status, answer.body, answer.passed) == (404, b"Not found", False)
    assert answer.headers["content-type"].startswith("text/plain")
    assert taken == []


@pytest.mark.parametrize(
    ("method", "path", "kind", "status"),
    [
        *[("POST", path, "http", 200) for path in ["/", "/hooks", "/hooks/bounces", "/hooks/bounce/x", "/about"]],
        ("GET", "/hooks/bounce", "websocket", 200),
        *[(method, "/hooks/bounce", "http", 405) for method in ["GET", "HEAD", "PUT", "DELETE", "OPTIONS"]],
    ],
)
def test_other_paths_and_websockets_pass_through_and_the_hook_takes_only_post(taken, method, path, kind, status):
    answer = call(body_of(HARD), method=method, path=path, kind=kind)
    assert (answer.status, answer.passed, taken) == (status, status == 200, [])
    assert answer.headers.get("allow") == ("POST" if status == 405 else None)


@pytest.mark.parametrize(
    "authorization",
    [
        None,
        "",
        "Bearer",
        "Bearer ",
        "Bearer wrong-secret-of-some-length-0123456789",
        f"Bearer {SECRET}x",
        f"Bearer {SECRET[:-1]}",
        f"Basic {SECRET}",
        SECRET,
        f"Bearer {SECRET.upper()}",
        "Bearer é",
    ],
)
def test_a_missing_or_wrong_token_is_401_and_takes_nothing(taken, authorization):
    answer = call(body_of(HARD), authorization=authorization)
    assert (answer.status, answer.headers["www-authenticate"]) == (401, "Bearer")
    assert answer.json() == {"error": bounce_hook.NEEDS_TOKEN}
    assert answer.chunks_read == 0  # the body of a stranger is not even read
    assert taken == []


def test_only_wrong_tokens_count_and_once_limited_even_the_right_one_is_not_compared(taken, monkeypatch):
    # Were the secret compared first, a guesser over the limit would still see its right guess
    # answered differently (200, 422) from the wrong ones (429).
    shared_limiter.set(Limiter(per_address=Limit(3, 600)))
    assert [call(body_of(HARD)).status for _ in range(50)] == [200] * 50  # a provider's flood
    compared: list[tuple[bytes, bytes]] = []
    real = bounce_hook.hmac.compare_digest
    monkeypatch.setattr(bounce_hook.hmac, "compare_digest", lambda a, b: compared.append((a, b)) or real(a, b))
    assert [call(body_of(HARD), authorization="Bearer guess").status for _ in range(3)] == [401] * 3
    assert compared == [(b"guess", SECRET.encode())] * 3  # in constant time
    compared.clear()
    wrong = call(body_of(HARD), authorization="Bearer guess")
    right = call(body_of(HARD))
    assert (right.status, right.headers, right.body) == (wrong.status, wrong.headers, wrong.body)
    assert right.status == 429 and right.json() == {"error": bounce_hook.TOO_MANY}
    assert (right.chunks_read, compared, len(taken)) == (0, [], 50)  # not read, not compared, nothing recorded
    assert call(body_of(HARD), authorization="Bearer guess", client="198.51.100.1").status == 401  # another address
    assert call(body_of(HARD), client="198.51.100.1").status == 200


def test_the_hooks_body_is_read_up_to_256_kb_and_no_further(taken):
    answer = call(b"[]", content_length=MAX_BODY_BYTES + 1)
    assert (answer.status, answer.chunks_read) == (413, 0)  # declared above: refused before reading
    answer = call([b" " * 65536] * 10, content_length=None)  # 640 KB, no Content-Length
    assert (answer.status, answer.chunks_read) == (413, 5)  # 5 x 64 KB is the first to pass 256 KB
    assert taken == [] and MAX_BODY_BYTES == 256 * 1024
    padded = body_of(HARD) + b" " * (MAX_BODY_BYTES - len(body_of(HARD)))
    assert call([padded[:1000], padded[1000:]], content_length=None).status == 200
    assert call(body_of(HARD), content_length="lots").status == 200  # left to the streamed limit


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        *[(body, bounce_hook.NOT_JSON) for body in (b"", b"{not json", b"\xff\xfe\xfa", b"[" * 100_000)],
        *[(body, bounce_hook.WRONG_SHAPE) for body in (b'"jo@example.com"', b"null", b"42")],
        (b"[]", bounce_hook.EMPTY_LIST),
        (body_of([{}] * 10_001), bounce_hook.TOO_MANY_ITEMS),
        (body_of({"type": "hard"}), "email is required"),
        (body_of({"email": "jo@example.com"}), "type is required"),
        (body_of({"email": "jo@example.com", "type": "bounce"}), "type must be one of hard, soft, complaint"),
        (body_of({"email": "jo@example.com", "type": "Hard"}), "type must be one of hard, soft, complaint"),
        (body_of({"email": "jo@example.com", "type": 1}), "type must be one of hard, soft, complaint"),
        (body_of({"email": 42, "type": "hard"}), "email must be a string"),
        (body_of({"email": "", "type": "hard"}), "email must not be empty"),
        (body_of({"email": "a" * 243 + "@example.com", "type": "hard"}), "email must be at most 254 characters"),
        (body_of({"email": "jo@example.com\x00", "type": "hard"}), "email must not hold control characters"),
        (body_of({"email": "jo@example.com", "type": "hard", "reason": 5}), "reason must be a string"),
        (body_of([HARD, HARD, {**HARD, "type": "gone"}]), "item 3: type must be one of hard, soft, complaint"),
        (body_of([HARD, "jo@example.com"]), "item 2: must be an object"),
        (body_of([HARD, {"type": "soft"}, {}]), "item 2: email is required"),
        (body_of({"email": ["secret@example.com"], "type": "hard"}), "email must be a string"),
    ],
)
def test_a_bad_body_is_422_naming_the_first_problem_never_echoing_it_and_takes_nothing(taken, body, problem):
    answer = call(body)
    assert (answer.status, answer.json()) == (422, {"error": problem})
    assert b"@" not in answer.body and taken == []


@pytest.mark.parametrize(
    ("path", "scheme"), [("/hooks/bounce", "Bearer"), ("/hooks/bounce/", "bearer"), ("/hooks/bounce", "bEaReR")]
)
def test_one_object_is_one_report_and_a_list_is_taken_in_one_call_in_its_order(taken, path, scheme):
    answer = call(body_of(HARD), path=path, authorization=f"{scheme} {SECRET}")
    assert (answer.status, answer.json()) == (200, {"accepted": 1})
    assert answer.headers["content-type"] == "application/json"
    items = [
        {"email": "bo@example.com", "type": "soft"},
        {"email": "al@example.com", "type": "complaint", "reason": "abuse", "provider_id": "x1", "at": 17},
    ]
    assert call(body_of(items)).json() == {"accepted": 2}
    assert taken == [
        [Report("hard", "550 5.1.1 no such user", "webhook", email="jo@example.com")],
        [
            Report("soft", "", "webhook", email="bo@example.com"),
            Report("complaint", "abuse", "webhook", email="al@example.com"),  # unknown keys ignored
        ],
    ]


def test_the_answer_is_the_same_whether_the_address_is_on_the_list_or_not(taken, monkeypatch):
    def on_the_list(reports, db_url=None, **_):
        return [Recorded(bounce_records.MADE_BOUNCED, "jo@example.com", 7) for _ in reports]

    known = call(body_of(HARD))
    monkeypatch.setattr(returns, "take", on_the_list)
    unknown = call(body_of({**HARD, "email": "nobody@example.com"}))
    assert (known.status, known.headers, known.body) == (unknown.status, unknown.headers, unknown.body)


def test_a_full_body_of_short_items_is_taken_in_one_call(taken):
    # 256 KB holds some 7,500 such items: below MAX_ITEMS, which only bounds lists of nothing (``[{}, ...]``).
    items = [{"email": f"r{n}@e.x", "type": "soft"} for n in range(7_000)]
    body = json.dumps(items, separators=(",", ":")).encode()
    assert len(body) <= MAX_BODY_BYTES
    assert call(body).json() == {"accepted": 7_000}
    assert len(taken[0]) == 7_000


@pytest.mark.parametrize(
    "error",
    [
        sqlalchemy.exc.OperationalError("SELECT", {}, Exception("database is locked")),
        sqlalchemy.exc.DataError("INSERT", {}, Exception("bad")),
    ],
)
def test_a_database_error_is_503_to_retry_in_a_minute(taken, monkeypatch, error):
    def broken(reports, db_url=None, **_):
        raise error

    monkeypatch.setattr(returns, "take", broken)
    answer = call(body_of(HARD))
    assert (answer.status, answer.headers["retry-after"]) == (503, "60")
    assert answer.json() == {"error": bounce_hook.TRY_LATER}


def test_one_info_line_per_request_without_the_secret_or_an_address(taken, caplog):
    caplog.set_level(logging.INFO, logger="publisher.server.bounce_hook")
    call(body_of([HARD, {**HARD, "email": "bo@example.com"}]))
    call(body_of(HARD), authorization="Bearer guess")
    call(body_of({**HARD, "type": "x"}))
    lines = [record.getMessage() for record in caplog.records if record.name == "publisher.server.bounce_hook"]
    assert lines == [
        "Bounce hook: 200 2 report(s) taken (2 not on the list)",
        "Bounce hook: 401 (no valid bearer token)",
        "Bounce hook: 422 (type must be one of hard, soft, complaint)",
    ]
    assert all(record.levelno == logging.INFO for record in caplog.records)
    text = caplog.text
    assert SECRET not in text and "guess" not in text and "example.com" not in text


def test_a_client_that_leaves_mid_body_gets_no_answer_and_takes_nothing(taken):
    answer = call([], content_length=None)  # the first receive() is a disconnect
    assert (answer.status, answer.body, taken) == (None, b"", [])
