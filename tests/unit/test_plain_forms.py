"""The server's answer to a form's plain POST (publisher/server/plain_forms.py), over ASGI."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace
from unittest.mock import AsyncMock

import httpx
import pytest
from bs4 import BeautifulSoup

from publisher import gateway
from publisher.config import settings
from publisher.limits import submits
from publisher.rules import form_fields, form_tokens
from publisher.server import link_pages, middleware, plain_forms
from publisher.web import page_kinds
from publisher.web.components.list_link import LINK_PANEL_ATTRIBUTE
from tests.release_book import test_book
from tests.unit.test_form_states import CONTACT_FIELDS, EMPTY_FORM_MESSAGES, SUBSCRIBER, recording_gateway
from tests.unit.test_validation import INVALID_EMAIL, TOO_SHORT


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


@pytest.fixture
def sent(monkeypatch):
    monkeypatch.setenv("PUBLISHER_GATEWAY_URL", "https://gw.test")
    submits.shared_limiter.set(submits.Limiter())
    submits.shared_used_tokens.set(submits.Limiter())
    with recording_gateway() as recorder:
        yield recorder
    submits.shared_limiter.set(None)
    submits.shared_used_tokens.set(None)


async def passed_on(scope, receive, send):
    await send({"type": "http.response.start", "status": 299, "headers": []})
    await send({"type": "http.response.body", "body": b"the site"})


def client(build: Path, address: str = "127.0.0.1") -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=middleware.route_table(passed_on, build_dir=build), client=(address, 5000))
    return httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000")


SAME_SITE = {"Origin": "http://127.0.0.1:8000"}


@pytest.mark.asyncio
async def test_each_contact_page_gets_its_own_signed_question(build, sent):
    async with client(build) as http:
        answers = [await http.get("/contact-us") for _ in range(2)]
    assert [answer.headers.get("etag") for answer in answers] == [None, None]  # nothing to revalidate
    pages = [answer.text for answer in answers]
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
        for path in (gateway.SUBSCRIBE_PATH, gateway.SEND_EMAIL_PATH):  # an outsider's post to the gateway's call
            assert (await http.post(path, json={"email": "bot@example.com"}, headers=SAME_SITE)).status_code == 299
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
async def test_the_sent_page_asks_to_confirm_only_where_the_site_keeps_the_list(build, sent, monkeypatch):
    async with client(build) as http:
        elsewhere = await http.get("/subscribe/thanks")
        monkeypatch.setattr(settings.Settings, "list_emails_on", property(lambda self: True))
        here = await http.get("/subscribe/thanks")
    assert elsewhere.status_code == 299  # the build's page as it is, the note hidden
    assert '<p class="n" data-confirm-note="">Confirm</p>' in here.text


@pytest.mark.parametrize(
    ("split", "html", "named"),
    [
        (plain_forms.question_slots, CONTACT.replace('id="contact-token"', 'id="elsewhere"'), "#contact-question"),
        (link_pages.panel_slot, "<p>Checking your link…</p>", r"\[data-link-panel\]"),
    ],
)
def test_a_build_without_a_slot_the_server_writes_into_stops_it_with_a_clear_message(split, html, named):
    with pytest.raises(LookupError, match=rf"{named}.*make build"):
        split(page(html))


@pytest.mark.asyncio
@pytest.mark.parametrize(("accepted", "encoding"), [("gzip, deflate, br", "br"), ("gzip", "gzip"), ("identity", None)])
async def test_the_contact_page_is_compressed_as_the_browser_takes_it(build, sent, accepted, encoding):
    (build / "contact-us" / "index.html").write_text(page(CONTACT + "<p>padding</p>" * 200))
    async with client(build) as http:
        response = await http.get("/contact-us", headers={"Accept-Encoding": accepted})
    assert response.headers.get("content-encoding") == encoding
    assert "accept-encoding" in response.headers["vary"].lower()
    assert 'id="contact-question">What is' in response.text  # decoded by httpx


def token_of(html: str) -> str:
    return BeautifulSoup(html, "html.parser").find(id="contact-token")["value"]


def contact(token: str, **overrides: str) -> dict[str, str]:
    answer = form_tokens.read(settings.form_secrets(), token).question.answer
    return {**CONTACT_FIELDS, "answer": str(answer), "token": token, **overrides}


@pytest.mark.asyncio
async def test_a_post_over_the_limits_spends_its_token_too(build, sent, clock):
    async with client(build) as http:
        page_token = token_of((await http.get("/contact-us")).text)
        clock.now += 5000
        for _ in range(submits.PER_ADDRESS.attempts):
            spam = await http.post("/contact-us", data=contact(page_token, website="x"), headers=SAME_SITE)
            assert spam.status_code == 422
        fresh_token = token_of((await http.get("/contact-us")).text)
        clock.now += 5000
        limited = await http.post("/contact-us", data=contact(fresh_token), headers=SAME_SITE)
        submits.shared_limiter.set(submits.Limiter())  # the window has passed
        again = await http.post("/contact-us", data=contact(fresh_token), headers=SAME_SITE)
        following = await http.post("/contact-us", data=contact(token_of(limited.text)), headers=SAME_SITE)
    assert (limited.status_code, again.status_code, following.status_code) == (429, 422, 303)
    assert "Too many attempts. Please wait a few minutes and try again." in limited.text
    assert len(sent.bodies) == 1


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("headers", "status"),
    [  # each header read, each header's rule: tests/unit/test_same_site.py
        ({"Origin": "https://spam.example"}, 403),
        ({}, 403),
        ({"Sec-Fetch-Site": "same-origin"}, 303),
        ({"Referer": "http://127.0.0.1:8000/subscribe"}, 303),
    ],
)
async def test_only_a_post_from_the_sites_own_page_is_taken(build, sent, headers, status):
    async with client(build) as http:
        subscribed = await http.post("/subscribe", data=SUBSCRIBER, headers=headers)
        contacted = await http.post("/contact-us", data={"firstName": "Jo"}, headers=headers)
    assert subscribed.status_code == status
    assert contacted.status_code == (403 if status == 403 else 422)  # a same-site post is read: its fields are missing
    assert len(sent.bodies) == (status == 303)


HOSTILE = '"><script>alert(1)</script>'


def expect_messages(answer: httpx.Response, form: str, messages: dict[str, str]) -> BeautifulSoup:
    """Each message beside its field, the field marked invalid, all of them in the summary as links to them."""
    assert answer.status_code == 422
    page = BeautifulSoup(answer.text, "html.parser")
    assert page.title.string == "Error: Page"
    for field_id, message in messages.items():
        assert page.find(id=field_id)["aria-invalid"] == "true", field_id
        assert page.find(id=f"{field_id}-error").get_text() == message
    summary = [(a["href"], a.get_text()) for a in page.select(f"#{form}-form-summary li a")]
    assert summary == [(f"#{field_id}", message) for field_id, message in messages.items()]
    return page


@pytest.mark.asyncio
async def test_every_message_of_both_forms_is_shown_beside_its_field_with_the_values_kept(build, sent, clock):
    async with client(build) as http:
        short = await http.post("/subscribe", data={"name": " J ", "email": HOSTILE}, headers=SAME_SITE)
        bot = await http.post("/subscribe", data={**SUBSCRIBER, "website": "x"}, headers=SAME_SITE)
        page_token = token_of((await http.get("/contact-us")).text)
        empty = await http.post(
            "/contact-us", data={**dict.fromkeys(contact(page_token), ""), "token": page_token}, headers=SAME_SITE
        )
        typed = contact(token_of(empty.text), firstName="J", lastName="R", email="jo@", message="Too short", answer="3")
        wrong = await http.post("/contact-us", data=typed, headers=SAME_SITE)
        clock.now += 5000  # corrected with the next token the answer page wrote
        corrected = await http.post("/contact-us", data=contact(token_of(wrong.text)), headers=SAME_SITE)
    shown = expect_messages(short, "subscribe", {"subscribe-name": TOO_SHORT["name"], "subscribe-email": INVALID_EMAIL})
    assert (shown.find(id="subscribe-name")["value"], shown.find(id="subscribe-email")["value"]) == (" J ", HOSTILE)
    assert shown.find("script") is None and "autofocus" in short.text  # what was typed: text, never markup
    assert BeautifulSoup(bot.text, "html.parser").select_one("[data-form-alert]").get_text() == "Please try again."
    required = {field_id: EMPTY_FORM_MESSAGES[name] for name, field_id in form_fields.CONTACT.field_ids.items()}
    expect_messages(empty, "contact", required)
    too_short = {"contact-first-name": TOO_SHORT["firstName"], "contact-last-name": TOO_SHORT["lastName"]}
    too_short |= {"contact-email": INVALID_EMAIL, "contact-message": TOO_SHORT["message"]}
    shown = expect_messages(wrong, "contact", too_short)
    assert shown.find(id="contact-first-name")["value"] == "J"
    assert shown.find(id="contact-message").get_text() == "Too short"
    assert shown.find(id="contact-answer").get("value", "") == ""  # never kept
    assert re.fullmatch(r"What is \d+ [+-] \d+\?", shown.find(id="contact-question").get_text())
    assert corrected.status_code == 303 and len(sent.bodies) == 1


BOOK = test_book()
WAITLIST_PAGE = FORM_PARTS.format(
    section="waitlist-form",
    route=BOOK.page_path,
    fields=field("waitlist-email", "email")
    + '<input id="waitlist-join-list" type="checkbox" name="joinList" value="yes"/>',
)
BEFORE = BOOK.release.utc - timedelta(seconds=1)


@pytest.fixture
def waits():
    submits.shared_limiter.set(submits.Limiter())
    gateway.shared_gateway.set(recorder := SimpleNamespace(wait=AsyncMock()))
    yield recorder.wait
    gateway.shared_gateway.set(None)
    submits.shared_limiter.set(None)


def book_client(build: Path | None, now=BEFORE) -> httpx.AsyncClient:
    if build is not None:
        before = build / page_kinds.variant_route(BOOK.slug, BOOK.page_path).strip("/")
        before.mkdir(parents=True)
        (before / "index.html").write_text(page(WAITLIST_PAGE))
    table = middleware.route_table(passed_on, build_dir=build, books=[BOOK], clock=lambda: now)
    app = middleware.ResponseHeaders(table, (), {BOOK.page_path: False})  # the book's page is static
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8000")


@pytest.mark.asyncio
async def test_the_waitlist_answers_in_the_book_s_page_and_takes_an_address_twice_from_one_tab(build, waits):
    good = {"email": "jo@example.com", "joinList": "yes", "website": ""}
    async with book_client(build) as http:
        wrong = await http.post(BOOK.page_path, data={**good, "email": "jo@"}, headers=SAME_SITE)
        bot = await http.post(BOOK.page_path, data={**good, "website": "x"}, headers=SAME_SITE)
        taken = [await http.post(BOOK.page_path, data=good, headers=SAME_SITE) for _ in range(2)]
        unticked = await http.post(BOOK.page_path, data={"email": "ann@example.com"}, headers=SAME_SITE)
        page = await http.get(BOOK.page_path)  # the site's page
    assert wrong.status_code == 422
    shown = BeautifulSoup(wrong.text, "html.parser")
    assert shown.find(id="waitlist-email-error").text == "Please enter a valid email address"
    assert shown.find(id="waitlist-email")["value"] == "jo@"
    assert shown.find(id="waitlist-join-list").has_attr("checked")  # the box as it was
    assert bot.status_code == 422 and "Please try again." in bot.text
    for answer in (*taken, unticked):
        assert (answer.status_code, answer.headers["location"]) == (303, f"{BOOK.page_path}#waitlist-success")
    ticked = ({"email": "jo@example.com", "joinList": "yes"}, BOOK.slug)
    waited = [call.args for call in waits.call_args_list]
    assert waited == [ticked, ticked, ({"email": "ann@example.com", "joinList": ""}, BOOK.slug)]
    assert page.status_code == 299 and page.headers["cache-control"].startswith("public, max-age=0")
    assert {answer.headers["cache-control"] for answer in (wrong, bot, *taken)} == {"no-store"}


@pytest.mark.asyncio
async def test_after_the_moment_the_waitlist_leads_to_the_book_s_page(waits):
    async with book_client(None, now=BOOK.release.utc) as http:
        late = await http.post(BOOK.page_path, data={"email": "jo@example.com"}, headers=SAME_SITE)
    assert (late.status_code, late.headers["location"]) == (303, BOOK.page_path)
    waits.assert_not_called()


@pytest.mark.asyncio
async def test_without_a_build_the_waitlist_answers_its_message_alone(waits):
    async with book_client(None) as http:
        wrong = await http.post(BOOK.page_path, data={"email": ""}, headers=SAME_SITE)
    assert (wrong.status_code, wrong.text) == (422, "Please enter your email")


@pytest.mark.asyncio
async def test_on_the_cloud_gateway_the_waitlist_fails_with_the_subscribe_form_s_message(build, sent):
    async with book_client(build) as http:
        answer = await http.post(BOOK.page_path, data={"email": "jo@example.com"}, headers=SAME_SITE)
    assert answer.status_code == 503
    assert "Failed to subscribe. Please try again." in answer.text
    assert sent.bodies == []
