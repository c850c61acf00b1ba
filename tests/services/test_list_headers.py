"""The headers that carry a URL or a token as the receiving server reads them: assertions on the raw
``Received.data``, never the decoded message (the email package hides encoded words Gmail cannot read)."""

from __future__ import annotations

import asyncio
import io
import re

import dkim
import pytest
from reflex_base import config as reflex_config

from publisher.config.settings import from_environ
from publisher.content import books
from publisher.mail import announce, campaign, mailer, outbox, release_email
from publisher.rules import list_rules
from publisher.storage import subscribers, tables
from publisher.storage.subscribers import SignUp
from tests.services.test_campaign import dkim_pair, start_campaign
from tests.services.test_embedded_gateway import SUBSCRIPTION
from tests.smtp import LIST_SECRET, POSTAL_ADDRESS, SmtpServer
from tests.unit.test_header_words import LONG_DOMAIN, LONG_SITE, unsubscribe_link_for

# A site served under a long path: its List-Unsubscribe line is between 200 and 998 characters.
LONGER_SITE = LONG_SITE + "".join(f"/shelf-{n:02d}" for n in range(80))
SELECTOR = "mail2026"
BOOK = books.BOOKS[0]
# The headers that carry a URL or a token: never RFC 2047 words.
VERBATIM = (b"List-Unsubscribe", b"List-Unsubscribe-Post", b"List-Id", b"Message-ID")
SIGNED = {b"from", b"to", b"subject", b"date", b"message-id", b"list-unsubscribe", b"list-unsubscribe-post", b"list-id"}


@pytest.fixture(scope="module")
def dkim_key(tmp_path_factory) -> tuple[str, str]:
    return dkim_pair(tmp_path_factory.mktemp("dkim"))


@pytest.fixture
def mail(smtp_server: SmtpServer, dkim_key):
    key_file, _ = dkim_key
    return from_environ(
        smtp_server.mail_env(
            PUBLISHER_MAIL_FROM=f"Animals We Confuse <site@{LONG_DOMAIN}>",
            PUBLISHER_POSTAL_ADDRESS=POSTAL_ADDRESS,
            PUBLISHER_DKIM_SELECTOR=SELECTOR,
            PUBLISHER_DKIM_KEY_FILE=key_file,
            PUBLISHER_SEND_RATE="0",
        )
    ).mail


def verifies(raw: bytes, dkim_key) -> bool:
    _, public = dkim_key

    def dns(name, timeout=5):
        assert name == f"{SELECTOR}._domainkey.{LONG_DOMAIN}.".encode()
        return f"v=DKIM1; k=rsa; p={public}".encode()

    return dkim.verify(raw, dnsfunc=dns)


def head_lines(raw: bytes) -> list[bytes]:
    return raw.split(b"\r\n\r\n", 1)[0].split(b"\r\n")


def fields(raw: bytes) -> dict[bytes, list[bytes]]:
    """Each header field's physical lines (the first, then its folded continuations), by lower-case name."""
    found: dict[bytes, list[bytes]] = {}
    current: list[bytes] = []
    for line in head_lines(raw):
        if line[:1] in (b" ", b"\t"):
            current.append(line)
        else:
            current = [line]
            found.setdefault(line.partition(b":")[0].lower(), current)
    return found


def folded_outside_brackets(lines: list[bytes]) -> bool:
    """Each fold (a CRLF before a continuation line's leading space) lies outside any <...>."""
    unfolded = lines[0]
    for line in lines[1:]:
        if not line.startswith(b" ") or unfolded.count(b"<") != unfolded.count(b">"):
            return False
        unfolded += line
    return True


def assert_written_as_rfc_2369_asks(raw: bytes, unsubscribe_link: str) -> None:
    head = head_lines(raw)
    assert all(line.isascii() for line in head)
    assert max(len(line) for line in raw.split(b"\r\n")) <= 998
    assert fields(raw)[b"list-unsubscribe"] == [f"List-Unsubscribe: <{unsubscribe_link}>".encode()]
    assert fields(raw)[b"list-unsubscribe-post"] == [b"List-Unsubscribe-Post: List-Unsubscribe=One-Click"]
    assert fields(raw)[b"list-id"][0].startswith(b"List-Id: ")
    for name in VERBATIM:
        assert b"=?" not in b"".join(fields(raw)[name.lower()]), name
        assert folded_outside_brackets(fields(raw)[name.lower()]), name
    list_id = b"".join(fields(raw)[b"list-id"])
    assert list_id == f"List-Id: Animals We Confuse new releases <new-releases.{LONG_DOMAIN}>".encode()


# --- Each list email, as the server received it. ---


@pytest.mark.parametrize("site", [LONG_SITE, LONGER_SITE], ids=["long-site", "very-long-site"])
@pytest.mark.asyncio
async def test_the_confirmation_and_the_welcome_as_the_server_received_them(
    db_url, smtp_server, dkim_key, mail, monkeypatch, site
):
    monkeypatch.setattr(reflex_config.get_config(), "deploy_url", site)  # REFLEX_DEPLOY_URL
    sender = outbox.Sender(mail, db_url)
    subscribers.subscribe(SignUp(**SUBSCRIPTION), outbox.job_for(mail), db_url)
    [subscriber] = subscribers.list_subscribers(db_url=db_url)
    assert [o.status for o in await sender.send_due()] == ["sent"]
    [confirmation] = smtp_server.wait_for(1, timeout=10)
    # Not a list email: no List-Unsubscribe, and no encoded-word in a header whose value is ASCII.
    assert b"list-unsubscribe" not in fields(confirmation.data)
    assert b"=?" not in b"\r\n".join(head_lines(confirmation.data))
    assert verifies(confirmation.data, dkim_key)
    [link] = [word for word in confirmation.message.get_content().split() if "/subscribe/confirm?token=" in word]
    assert link.startswith(f"{site}/subscribe/confirm?token=")
    claim = list_rules.read_confirm_token([LIST_SECRET], link.partition("token=")[2], tables.utc_now())
    assert claim.link_key == subscriber.link_key and not claim.expired  # the link names its reader

    subscribers.confirm(claim.link_key, outbox.job_for(mail), None, db_url)
    assert [o.status for o in await sender.send_due()] == ["sent"]
    welcome = smtp_server.wait_for(2, timeout=10)[1]
    assert confirmation.rcpt_tos == welcome.rcpt_tos == [subscriber.email]
    link = unsubscribe_link_for(site, subscriber.link_key)
    line = f"List-Unsubscribe: <{link}>"
    assert len(line) > 78 if site == LONG_SITE else 200 < len(line) <= 998
    assert_written_as_rfc_2369_asks(welcome.data, link)
    assert verifies(welcome.data, dkim_key)
    assert not verifies(welcome.data.replace(b"unsubscribe?token=", b"unsubscribe?token=x"), dkim_key)


@pytest.mark.parametrize("site", [LONG_SITE, LONGER_SITE], ids=["long-site", "very-long-site"])
@pytest.mark.asyncio
async def test_a_release_email_and_its_test_copy_as_the_server_received_them(
    db_url, smtp_server, dkim_key, mail, monkeypatch, site
):
    monkeypatch.setattr(reflex_config.get_config(), "deploy_url", site)  # REFLEX_DEPLOY_URL
    rows = [
        list_rules.ImportRow(n, f"reader{n}@readers.example", name, "confirmed")
        for n, name in enumerate(("Reader Zero", "Zoë Ŝmith, Jr.", ""))
    ]
    subscribers.import_rows(rows, "test", db_url)
    start_campaign(db_url, mail)
    await campaign.ReleaseSender(mail, db_url).send_due()
    await asyncio.to_thread(announce.send_test_copy, mail, BOOK, "editor@readers.example", io.StringIO())
    keys = {r.email: r.link_key for r in subscribers.list_subscribers(db_url=db_url)}
    keys["editor@readers.example"] = announce.TEST_LINK_KEY
    received = smtp_server.wait_for(4, timeout=10)
    assert sorted(copy.rcpt_tos[0] for copy in received) == sorted(keys)
    for copy in received:
        [reader] = copy.rcpt_tos
        assert_written_as_rfc_2369_asks(copy.data, unsubscribe_link_for(site, keys[reader]))
        assert verifies(copy.data, dkim_key)
        # The signature covers the unsubscribe headers (Gmail asks for them): one changed fails it.
        signature = b"".join(fields(copy.data)[b"dkim-signature"]).replace(b" ", b"").replace(b"\t", b"")
        assert set(re.search(rb"h=([^;]+);", signature).group(1).lower().split(b":")) >= SIGNED
        assert not verifies(
            copy.data.replace(b"List-Unsubscribe-Post: List", b"List-Unsubscribe-Post:  Lost"), dkim_key
        )


# --- What cannot be written right is not written at all. ---


def test_a_link_too_long_for_one_line_is_refused_not_sent_broken(mail):
    link = unsubscribe_link_for(LONG_SITE + "/x" * 500, "AbCdEfGhIjKlMnOpQrStUv")
    with pytest.raises(ValueError, match="998"):  # written as the welcome's are (mailer.compose)
        release_email.PreparedRelease(mail, BOOK, site=LONG_SITE).message(
            name="Jo",
            email="jo@example.com",
            unsubscribe_link=link,
            moment=tables.utc_now(),
            message_id=mailer.new_message_id(mail),
        )
