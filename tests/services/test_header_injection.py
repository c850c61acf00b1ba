"""A visitor's name never writes a header into the site's emails (issue 40, CVE-2024-6923): an encoded
word carrying CR/LF goes through the gateway, the confirmation and a release to aiosmtpd; every
assertion is on the bytes received: our headers, each once, and our body."""

from __future__ import annotations

from email.header import decode_header, make_header

import pytest
from reflex_base import config as reflex_config

from publisher import mailing_list
from publisher.config.settings import from_environ
from publisher.content import books
from publisher.mail import campaign, outbox, release_email
from publisher.storage import subscribers
from tests.services.test_campaign import body, start_campaign
from tests.smtp import POSTAL_ADDRESS, Received
from tests.unit.test_header_words import A_BODY, HEADER_LINES
from tests.unit.test_mailer import field_names

SITE = "https://animals.example"
BOOK = books.BOOKS[0]
READER = "ann@readers.example"
INBOX = "books@animals.example"
QUESTION = "When is the next book out?"

# The headers each email is written with, in the order the site writes them.
MIME = ["mime-version", "content-type", "content-transfer-encoding"]
CONFIRMATION = ["from", "to", "subject", "date", "message-id", *MIME]
TO_THE_PUBLISHER = [*CONFIRMATION[:2], "reply-to", *CONFIRMATION[2:]]
WELCOME = [*CONFIRMATION[:5], "list-unsubscribe", "list-unsubscribe-post", "list-id", *CONFIRMATION[5:]]
RELEASE = [*WELCOME[:8], "mime-version", "content-type"]


def shown(received: Received, header: str) -> tuple[str, str]:
    """(name, address) as a mail client shows them: unfolded, RFC 2047 words decoded (adjacent ones joined)."""
    head = received.data.split(b"\r\n\r\n", 1)[0].decode("ascii")
    [value] = [
        field.partition(":")[2].strip()
        for field in head.replace("\r\n ", " ").replace("\r\n\t", "\t").split("\r\n")
        if field.partition(":")[0].lower() == header.lower()
    ]
    phrase, _, address = value.rpartition(" <")
    if not phrase:
        return "", value
    return str(make_header(decode_header(phrase))), address.removesuffix(">")


def assert_only_our_headers(received: Received, expected: list[str]) -> None:
    head = received.data.split(b"\r\n\r\n", 1)[0]
    names = [name.lower() for name in field_names(head.decode("ascii", "replace"))]
    assert names == expected, names
    assert not any(name in ("bcc", "cc", "x-injected") for name in names)
    # No stray CR or LF: every line break in the header block is a CRLF, and every continuation
    # line (a fold) starts with whitespace.
    assert b"\r" not in head.replace(b"\r\n", b"") and b"\n" not in head.replace(b"\r\n", b"")
    assert head.isascii()


@pytest.mark.parametrize("name", [HEADER_LINES, A_BODY], ids=["header-lines", "a-body"])
@pytest.mark.asyncio
async def test_a_name_made_of_an_encoded_word_is_carried_as_text_in_every_email(db_url, smtp_server, monkeypatch, name):
    monkeypatch.setattr(reflex_config.get_config(), "deploy_url", SITE)
    mail = from_environ(
        smtp_server.mail_env(
            PUBLISHER_NOTIFY_SUBSCRIBERS="1", PUBLISHER_POSTAL_ADDRESS=POSTAL_ADDRESS, PUBLISHER_SEND_RATE="0"
        )
    ).mail
    # What the two forms post: the contact message and the subscription, through the gateway.
    local = mailing_list.EmbeddedList(mail=mail, db_url=db_url)
    await local.send_email({"firstName": name, "lastName": "Lee", "email": READER, "message": QUESTION})
    await local.subscribe({"name": name, "email": READER})
    sender = outbox.Sender(mail, db_url)
    assert [o.status for o in await sender.send_due()] == ["sent", "sent"]
    # The confirmation page's button: the welcome email and the publisher's notice.
    [row] = subscribers.list_subscribers(db_url=db_url)
    assert row.name == name  # stored as typed
    subscribers.confirm(row.link_key, outbox.job_for(mail), outbox.job_for(mail), db_url)
    assert [o.status for o in await sender.send_due()] == ["sent", "sent"]
    # A release to the list, this reader on it.
    start_campaign(db_url, mail)
    await campaign.ReleaseSender(mail, db_url, site=SITE).send_due()

    contact, confirmation, welcome, notice, release = smtp_server.wait_for(5, timeout=10)
    assert len(smtp_server.received) == 5
    assert [r.rcpt_tos for r in (contact, confirmation, welcome, notice, release)] == [
        [INBOX],
        [READER],
        [READER],
        [INBOX],
        [READER],
    ]

    assert_only_our_headers(contact, TO_THE_PUBLISHER)
    assert shown(contact, "Reply-To") == (f"{name} Lee", READER)
    assert contact.message["Subject"] == f"Contact Form Submission from {name} Lee"
    text = body(contact.message, "plain")
    assert text.startswith(f"From: {name} Lee <{READER}>\nSent: ") and text.endswith(f"\n\n{QUESTION}\n")

    assert_only_our_headers(confirmation, CONFIRMATION)
    assert shown(confirmation, "To") == ("", READER)
    assert "Someone, hopefully you, asked to join" in body(confirmation.message, "plain")

    assert_only_our_headers(welcome, WELCOME)
    assert shown(welcome, "To") == (name, READER)
    assert body(welcome.message, "plain").startswith(f"Hello {name},\n\nThank you for confirming")

    assert_only_our_headers(notice, TO_THE_PUBLISHER)
    assert notice.message["Subject"] == f"New subscriber: {name}"
    assert shown(notice, "Reply-To") == (name, READER)
    assert body(notice.message, "plain").startswith(f"{name} <{READER}> joined the new-release email list.\n")

    assert_only_our_headers(release, RELEASE)
    assert shown(release, "To") == (name, READER)
    assert release.message["Subject"] == release_email.subject(BOOK)
    text = body(release.message, "plain")
    assert text.startswith(f"Hello {name},\n") and BOOK.subtitle in text
