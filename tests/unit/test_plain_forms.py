"""The server's answer to a form's plain POST (publisher/server/plain_forms.py), over ASGI with a stand-in
for the build's pages."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest
from bs4 import BeautifulSoup

from publisher import gateway
from publisher.config import settings
from publisher.limits import submits, used_tokens
from publisher.rules import form_tokens
from publisher.server import middleware, plain_forms
from publisher.web import submissions
from publisher.web.components.list_link import LINK_PANEL_ATTRIBUTE


def field(field_id: str, name: str) -> str:
    control = f'<input id="{field_id}" name="{name}" aria-describedby="{field_id}-error" aria-invalid="false"/>'
    return control + f'<p id="{field_id}-error"></p>'


FORM_PARTS = (
    '<div data-error-summary="" id="{section}-summary" hidden="" tabindex="-1">'
    "<h2>There is a problem</h2><ul></ul></div>"
    '<form data-app-form="" method="post" action="{route}">{fields}'
    '<div role="alert"><p data-form-alert="" hidden=""></p></div>'
    "<button type=submit>Send</button></form>"
)
SUBSCRIBE = FORM_PARTS.format(
    section="subscribe-form",
    route="/subscribe",
    fields=field("subscribe-name", "name") + field("subscribe-email", "email"),
)
CONTACT = FORM_PARTS.format(
    section="contact-form",
    route="/contact-us",
    fields=field("contact-first-name", "firstName")
    + field("contact-last-name", "lastName")
    + field("contact-email", "email")
    + '<textarea id="contact-message" name="message"></textarea><p id="contact-message-error"></p>'
    + '<label for="contact-answer">Security question: <span class="q" id="contact-question">…</span></label>'
    + field("contact-answer", "answer")
    + '<input id="contact-token" type="hidden" name="token"/>',
)


def page(body: str) -> str:
    return f"<!DOCTYPE html><html><head><title>Page</title></head><body>{body}</body></html>"


@pytest.fixture
def build(tmp_path: Path) -> Path:
    write_build(tmp_path)
    return tmp_path


def write_build(root: Path, link_panel: str = f'<div {LINK_PANEL_ATTRIBUTE}=""></div>') -> None:
    for route, body in (
        ("subscribe", SUBSCRIBE),
        ("contact-us", CONTACT),
        ("subscribe/thanks", '<p class="n" hidden="" data-confirm-note="">Confirm</p>'),
        ("subscribe/confirm", link_panel),
        ("unsubscribe", link_panel),
    ):
        (root / route).mkdir(parents=True)
        (root / route / "index.html").write_text(page(body))


class Recorder:
    def __init__(self) -> None:
        self.bodies: list[dict] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append(json.loads(request.content))
        return httpx.Response(200, json={})


@pytest.fixture
def sent(monkeypatch):
    recorder = Recorder()
    monkeypatch.setenv("PUBLISHER_GATEWAY_URL", "https://gw.test")
    gateway.shared_gateway.set(gateway.GatewayClient("https://gw.test", transport=httpx.MockTransport(recorder)))
    submits.shared_limiter.set(submits.Limiter())
    used_tokens.shared_used_tokens.set(used_tokens.WindowUsedTokens())
    yield recorder
    gateway.shared_gateway.set(None)
    submits.shared_limiter.set(None)
    used_tokens.shared_used_tokens.set(None)


async def passed_on(scope, receive, send):
    await send({"type": "http.response.start", "status": 299, "headers": []})
    await send({"type": "http.response.body", "body": b"the site"})


def client(build: Path) -> httpx.AsyncClient:
    app = middleware.route_table(passed_on, build_dir=build)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8000")


SAME_SITE = {"Origin": "http://127.0.0.1:8000"}


@pytest.mark.asyncio
async def test_each_contact_page_gets_its_own_signed_question(build, sent):
    async with client(build) as http:
        pages = [(await http.get("/contact-us")).text for _ in range(2)]
    tokens = [re.search(r'id="contact-token" type="hidden" name="token" value="([^"]+)"', p).group(1) for p in pages]
    questions = [re.search(r'id="contact-question">([^<]+)<', p).group(1) for p in pages]
    assert tokens[0] != tokens[1]
    for token, question in zip(tokens, questions, strict=True):
        assert form_tokens.read(settings.form_secrets(), token).question.text == question


@pytest.mark.asyncio
async def test_other_requests_pass_on_to_the_site(build, sent):
    async with client(build) as http:
        assert (await http.get("/subscribe")).status_code == 299
        assert (await http.get("/about")).status_code == 299
        assert (await http.put("/contact-us")).status_code == 299


@pytest.mark.asyncio
async def test_over_the_per_address_limit_a_post_says_so_and_sends_nothing(build, sent):
    form = {"name": "Jo Reader", "email": "jo@example.com", "website": "x"}  # refused: nothing sent anyway
    async with client(build) as http:
        for _ in range(submits.PER_ADDRESS.attempts):
            assert (await http.post("/subscribe", data=form, headers=SAME_SITE)).status_code == 422
        limited = await http.post("/subscribe", data={**form, "website": ""}, headers=SAME_SITE)
    assert limited.status_code == 429
    assert "Too many attempts. Please wait a few minutes and try again." in limited.text
    assert sent.bodies == []


@pytest.mark.asyncio
async def test_only_a_urlencoded_form_of_at_most_16_kb_is_read(build, sent):
    async with client(build) as http:
        as_json = await http.post("/subscribe", json={"name": "Jo"}, headers=SAME_SITE)
        declared = await http.post(
            "/subscribe",
            content=b"name=Jo",
            headers={**SAME_SITE, "Content-Type": "application/x-www-form-urlencoded", "Content-Length": "16385"},
        )
    assert (as_json.status_code, declared.status_code) == (415, 413)
    assert sent.bodies == []


@pytest.mark.asyncio
async def test_what_the_visitor_typed_comes_back_as_text_never_as_markup(build, sent):
    typed = '"><script>alert(1)</script>'
    async with client(build) as http:
        answer = await http.post("/subscribe", data={"name": typed, "email": typed}, headers=SAME_SITE)
    assert answer.status_code == 422
    shown = BeautifulSoup(answer.text, "html.parser")
    assert shown.find("script") is None
    assert shown.find(id="subscribe-name")["value"] == typed  # the same text, escaped in the page
    assert "<title>Error: Page</title>" in answer.text and "autofocus" in answer.text


@pytest.mark.asyncio
async def test_the_sent_page_asks_to_confirm_only_where_the_site_keeps_the_list(build, sent, monkeypatch):
    async with client(build) as http:
        elsewhere = await http.get("/subscribe/thanks")
        monkeypatch.setattr(settings.Settings, "list_emails_on", property(lambda self: True))
        here = await http.get("/subscribe/thanks")
    assert elsewhere.status_code == 299  # the build's page as it is, the note hidden
    assert '<p class="n" data-confirm-note="">Confirm</p>' in here.text


def test_a_build_without_the_question_slots_stops_the_server_with_a_clear_message():
    with pytest.raises(LookupError, match="make build"):
        plain_forms.QuestionSlots(page(CONTACT.replace('id="contact-token"', 'id="elsewhere"')))


@pytest.mark.asyncio
@pytest.mark.parametrize(("accepted", "encoding"), [("gzip, deflate, br", "br"), ("gzip", "gzip"), ("identity", None)])
async def test_the_contact_page_is_compressed_as_the_browser_takes_it(build, sent, accepted, encoding):
    (build / "contact-us" / "index.html").write_text(page(CONTACT + "<p>padding</p>" * 200))
    async with client(build) as http:
        response = await http.get("/contact-us", headers={"Accept-Encoding": accepted})
    assert response.headers.get("content-encoding") == encoding
    assert "accept-encoding" in response.headers["vary"].lower()
    assert 'id="contact-question">What is' in response.text  # decoded by httpx


# --- Every answered POST spends its token ------------------------------------------------------


@pytest.fixture
def clock(monkeypatch) -> SimpleNamespace:
    """The forms' wall clock (``submissions.now_ms``), moved by the test."""
    now = SimpleNamespace(now_ms=1_790_000_000_000.0)
    monkeypatch.setattr(submissions, "now_ms", lambda: now.now_ms)
    return now


def token_of(html: str) -> str:
    return BeautifulSoup(html, "html.parser").find(id="contact-token")["value"]


def read_token(token: str) -> form_tokens.FormToken:
    read = form_tokens.read(settings.form_secrets(), token)
    assert read is not None
    return read


def contact(token: str, **overrides: str) -> dict[str, str]:
    form = {
        "firstName": "Jo",
        "lastName": "Reader",
        "email": "jo@example.com",
        "message": "When is the next book coming out?",
        "answer": str(read_token(token).question.answer),
        "website": "",
        "token": token,
    }
    return {**form, **overrides}


@pytest.mark.asyncio
async def test_one_five_second_wait_buys_one_message_whatever_the_posts_before_it(build, sent, clock):
    """A field error spends its token: its answer's token keeps the shown time, and only it stays good."""
    async with client(build) as http:
        page_token = token_of((await http.get("/contact-us")).text)
        clock.now_ms += 5000
        corrected = await http.post("/contact-us", data=contact(page_token, email="jo@"), headers=SAME_SITE)
        assert corrected.status_code == 422
        next_token = token_of(corrected.text)
        with_the_page_token = await http.post("/contact-us", data=contact(page_token), headers=SAME_SITE)
        with_the_next_token = await http.post("/contact-us", data=contact(next_token), headers=SAME_SITE)
    assert (with_the_page_token.status_code, with_the_next_token.status_code) == (422, 303)
    assert "Please try again." in with_the_page_token.text
    assert read_token(next_token).shown_ms == read_token(page_token).shown_ms  # the correction paid nothing
    assert len(sent.bodies) == 1


@pytest.mark.asyncio
async def test_an_expired_token_is_answered_with_a_new_question_shown_now(build, sent, clock):
    async with client(build) as http:
        page_token = token_of((await http.get("/contact-us")).text)
        clock.now_ms += form_tokens.VALID_FOR_MS
        corrected = await http.post("/contact-us", data=contact(page_token, email="jo@"), headers=SAME_SITE)
        renewed = read_token(token_of(corrected.text))
        at_once = await http.post("/contact-us", data=contact(token_of(corrected.text)), headers=SAME_SITE)
    assert (renewed.shown_ms, renewed.issued_ms) == (clock.now_ms, clock.now_ms)
    assert at_once.status_code == 422
    assert "Please take your time to fill out the form completely." in at_once.text
    assert sent.bodies == []


@pytest.mark.asyncio
async def test_no_token_of_a_chain_outlives_the_first_tokens_hour(build, sent, clock):
    async with client(build) as http:
        page_token = token_of((await http.get("/contact-us")).text)
        clock.now_ms += form_tokens.VALID_FOR_MS - 60_000
        corrected = await http.post("/contact-us", data=contact(page_token, email="jo@"), headers=SAME_SITE)
        clock.now_ms += 60_000
        late = await http.post("/contact-us", data=contact(token_of(corrected.text)), headers=SAME_SITE)
    assert late.status_code == 422 and "Please try again." in late.text
    assert sent.bodies == []


@pytest.mark.asyncio
async def test_a_post_over_the_limits_spends_its_token_too(build, sent, clock):
    async with client(build) as http:
        page_token = token_of((await http.get("/contact-us")).text)
        clock.now_ms += 5000
        for _ in range(submits.PER_ADDRESS.attempts):
            spam = await http.post("/contact-us", data=contact(page_token, website="x"), headers=SAME_SITE)
            assert spam.status_code == 422
        fresh_token = token_of((await http.get("/contact-us")).text)
        clock.now_ms += 5000
        limited = await http.post("/contact-us", data=contact(fresh_token), headers=SAME_SITE)
        submits.shared_limiter.set(submits.Limiter())  # the window has passed
        again = await http.post("/contact-us", data=contact(fresh_token), headers=SAME_SITE)
        following = await http.post("/contact-us", data=contact(token_of(limited.text)), headers=SAME_SITE)
    assert (limited.status_code, again.status_code, following.status_code) == (429, 422, 303)
    assert len(sent.bodies) == 1


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Origin": "https://spam.example"}, 403),
        ({"Origin": "null"}, 403),
        ({"Sec-Fetch-Site": "cross-site"}, 403),
        ({"Referer": "https://spam.example/form.html"}, 403),
        ({}, 403),
        ({"Sec-Fetch-Site": "same-origin"}, 303),
        ({"Referer": "http://127.0.0.1:8000/subscribe"}, 303),
    ],
)
async def test_only_a_post_from_the_sites_own_page_is_taken(build, sent, headers, status):
    async with client(build) as http:
        subscribed = await http.post(
            "/subscribe", data={"name": "Jo Reader", "email": "jo@example.com"}, headers=headers
        )
        contacted = await http.post("/contact-us", data={"firstName": "Jo"}, headers=headers)
    assert subscribed.status_code == status
    assert contacted.status_code == (403 if status == 403 else 422)  # a same-site post is read: its fields are missing
    assert len(sent.bodies) == (status == 303)


@pytest.mark.asyncio
async def test_a_token_sends_one_message_and_a_changed_or_foreign_one_none(build, sent, clock):
    async with client(build) as http:
        page_token = token_of((await http.get("/contact-us")).text)
        clock.now_ms += 5000
        question = read_token(page_token).question
        accepted = await http.post("/contact-us", data=contact(page_token), headers=SAME_SITE)
        replayed = await http.post("/contact-us", data=contact(page_token), headers=SAME_SITE)
        parts = page_token.split(".")  # v1.<shown>.<issued>.<question>.<nonce>.<signature>
        changed = ".".join([*parts[:3], "99p99", *parts[4:]])
        foreign = form_tokens.issue("another-secret-0123456789abcdef0123456789", question, now_ms=clock.now_ms - 5000)
        refused = [
            await http.post(
                "/contact-us", data={**contact(page_token), "token": token, "answer": answer}, headers=SAME_SITE
            )
            for token, answer in ((changed, "198"), (foreign, str(question.answer)))
        ]
    assert accepted.status_code == 303
    for answer in (replayed, *refused):
        assert answer.status_code == 422 and "Please try again." in answer.text
    assert len(sent.bodies) == 1
