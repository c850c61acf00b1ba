"""The publisher's emails, byte for byte. How a real SMTP server (aiosmtpd) takes them is in
tests/services/test_mailer.py."""

from __future__ import annotations

import re
import secrets
from datetime import UTC, datetime
from email import message_from_bytes
from email import policy as email_policy

import pytest

from publisher.config.settings import from_environ
from publisher.mail import mailer
from publisher.rules import list_rules
from publisher.storage import tables
from tests.smtp import LIST_SECRET

RECEIVED_AT = datetime(2026, 11, 22, 14, 3, 5, tzinfo=UTC)
MESSAGE_ID = "<fixed.1@animals.example>"


def settings_for(url: str, **extra: str):
    return from_environ(
        {
            "PUBLISHER_SMTP_URL": url,
            "PUBLISHER_NOTIFY_TO": "books@example.com,editor@example.org",
            "PUBLISHER_MAIL_FROM": "Animals We Confuse <site@animals.example>",
            "PUBLISHER_LIST_SECRET": LIST_SECRET,
            **extra,
        }
    ).mail


def contact(settings, name="Ada Lovelace", email="ada@example.com", text="Do you ship to Canada?"):
    subject = f"Contact Form Submission from {name}"
    row = tables.ContactMessage(sender_name=name, sender_email=email, subject=subject, message=text)
    row.received_at = RECEIVED_AT
    return mailer.contact_email(settings, row, MESSAGE_ID)


# A contact email's header block, in the order mailer.contact_email writes it.
CONTACT_HEAD = [
    "From: Animals We Confuse <site@animals.example>",
    "To: books@example.com, editor@example.org",
    "Reply-To: Ada Lovelace <ada@example.com>",
    "Subject: Contact Form Submission from Ada Lovelace",
    "Date: Sun, 22 Nov 2026 14:03:05 +0000",
    f"Message-ID: {MESSAGE_ID}",
    "MIME-Version: 1.0",
    'Content-Type: text/plain; charset="utf-8"',
    "Content-Transfer-Encoding: quoted-printable",
]


def field_names(head: str) -> list[str]:
    """The name of each field of a header block (CRLF lines), folds left out."""
    return [line.partition(":")[0] for line in head.split("\r\n") if not line.startswith(" ")]


def head_and_body(raw: bytes) -> tuple[str, str]:
    head, _, body = raw.decode("ascii").partition("\r\n\r\n")
    return head, body


def test_a_contact_email_has_exactly_these_headers_and_body():
    head, body = head_and_body(contact(settings_for("smtp://127.0.0.1:25")))
    assert head.split("\r\n") == CONTACT_HEAD
    assert body == (
        "From: Ada Lovelace <ada@example.com>\r\n"
        "Sent: Sunday 22 November 2026, 14:03:05 UTC\r\n"
        "\r\n"
        "Do you ship to Canada?\r\n"
    )


def test_utf8_names_and_text_are_encoded_and_read_back_intact():
    settings = settings_for("smtp://127.0.0.1:25")
    email = contact(settings, name="Zoë Ångström", text="Ça va? Ünïcode ✓ and a long line " + "x" * 1200)
    head, _ = head_and_body(email)  # every header is ASCII on the wire (RFC 2047 words)
    assert "Reply-To: =?utf-8?" in head and "<zoe@example.com>" not in head
    parsed = message_from_bytes(email, policy=email_policy.default)
    assert str(parsed["Reply-To"]) == "Zoë Ångström <ada@example.com>"
    assert parsed["Subject"] == "Contact Form Submission from Zoë Ångström"
    assert parsed.get_content().endswith("Ça va? Ünïcode ✓ and a long line " + "x" * 1200 + "\r\n")
    assert max(len(line) for line in email.split(b"\r\n")) <= 78


@pytest.mark.parametrize("text", ["Hello there,\rcould you ship?", "Hello there,\r\ncould you ship?"])
def test_a_bare_carriage_return_in_a_message_is_a_line_break_so_every_line_ends_crlf(text):
    email = contact(settings_for("smtp://127.0.0.1:25"), text=text)
    assert not re.search(rb"\r(?!\n)|(?<!\r)\n", email)  # what a server's CRLF rewrite would change breaks DKIM
    assert head_and_body(email)[1].endswith("\r\nHello there,\r\ncould you ship?\r\n")


def test_the_subscriber_notice():
    reader = tables.Subscriber(name="Jo Reader", email="jo@example.com", subscribed_at=RECEIVED_AT)
    notice = mailer.subscriber_notice(settings_for("smtp://127.0.0.1:25"), reader, MESSAGE_ID)
    head, body = head_and_body(notice)
    assert "Subject: New subscriber: Jo Reader" in head.split("\r\n")
    assert "Reply-To: Jo Reader <jo@example.com>" in head.split("\r\n")
    assert body == (
        "Jo Reader <jo@example.com> joined the new-release email list.\r\n"
        "Subscribed: Sunday 22 November 2026, 14:03:05 UTC\r\n"
    )


SITE = "https://books.example.com"
LINK_KEY = "AbCdEfGhIjKlMnOpQrStUv"
CONFIRM_LINK = list_rules.confirm_url(SITE, LIST_SECRET, LINK_KEY, RECEIVED_AT)
UNSUBSCRIBE_LINK = list_rules.unsubscribe_url(SITE, LIST_SECRET, LINK_KEY)
POSTAL = "Animals We Confuse, 12 Harbour Lane, Portsmouth PO1 2AB, United Kingdom"


def test_the_confirmation_email_says_who_writes_why_and_where_to_confirm_and_nothing_the_visitor_typed():
    reader = tables.Subscriber(email="jo@example.com", link_key=LINK_KEY, confirmation_sent_at=RECEIVED_AT)
    email = mailer.confirmation_email(settings_for("smtp://127.0.0.1:25"), reader, SITE, MESSAGE_ID)
    head, _ = head_and_body(email)
    assert head.split("\r\n")[:5] == [
        "From: Animals We Confuse <site@animals.example>",
        "To: jo@example.com",
        "Subject: Please confirm your subscription to Animals We Confuse",
        "Date: Sun, 22 Nov 2026 14:03:05 +0000",
        f"Message-ID: {MESSAGE_ID}",
    ]
    assert "List-Unsubscribe" not in head  # not a list email: the address is not on the list yet
    assert text_of(email) == (
        "Hello,\n"
        "\n"
        "Someone, hopefully you, asked to join the Animals We Confuse new-release list\n"
        "with this address at https://books.example.com.\n"
        "\n"
        'To confirm, open this link and press "Confirm my subscription":\n'
        f"{CONFIRM_LINK}\n"
        "\n"
        "The link works for 7 days. If you did not ask to join, ignore this\n"
        "email: you will not hear from us again.\n"
        "\n"
        "Animals We Confuse\n"
        "https://books.example.com\n"
    )


def text_of(email: bytes) -> str:
    return message_from_bytes(email, policy=email_policy.default).get_content().replace("\r\n", "\n")


def welcome(settings, name: str = "Jo Reader", site: str = SITE) -> bytes:
    reader = tables.Subscriber(name=name, email="jo@example.com", link_key=LINK_KEY, confirmed_at=RECEIVED_AT)
    return mailer.welcome_email(settings, reader, site, MESSAGE_ID)


def test_the_welcome_email_is_a_list_email_with_one_click_unsubscribe_and_a_visible_way_out():
    email = welcome(settings_for("smtp://127.0.0.1:25", PUBLISHER_POSTAL_ADDRESS=POSTAL))
    parsed = message_from_bytes(email, policy=email_policy.default)
    assert parsed["Subject"] == "Welcome to the Animals We Confuse new-release list"
    assert parsed["To"] == "Jo Reader <jo@example.com>"
    # The list headers as the server reads them: tests/services/test_list_headers.py.
    assert parsed["List-Unsubscribe"] == f"<{UNSUBSCRIBE_LINK}>"
    without_postal_address = text_of(welcome(settings_for("smtp://127.0.0.1:25")))
    assert without_postal_address.endswith(f"Unsubscribe with one click: {UNSUBSCRIBE_LINK}\n")
    assert text_of(email) == (
        "Hello Jo Reader,\n"
        "\n"
        "Thank you for confirming: you are now on the Animals We Confuse new-release list.\n"
        "\n"
        "What you will receive: one email when a new book in the Animals We Confuse\n"
        "series comes out, with what it is about and where to get it. That is a few\n"
        "emails a year, never more than one a month, and we never share your address.\n"
        "\n"
        "Animals We Confuse\n"
        "https://books.example.com\n"
        "\n"
        "--\n"
        "You receive this email because you joined the Animals We Confuse new-release list "
        "at https://books.example.com and confirmed your address.\n"
        f"Unsubscribe with one click: {UNSUBSCRIBE_LINK}\n"
        f"{POSTAL}\n"
    )


# RFC 5322 msg-id as the site writes it: "<" dot-atom-text "@" domain ">".
MSG_ID = re.compile(r"<[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@animals\.example>")


def test_a_message_id_is_128_bits_from_secrets_and_owes_nothing_to_random_or_a_clock(monkeypatch):
    # secrets.token_bytes hands out the OS's randomness (token_hex and token_urlsafe go
    # through it): flipping any one of the first 128 bits it gives must change the ID.
    settings = settings_for("smtp://127.0.0.1:25")
    flipped: list[int | None] = [None]

    def token_bytes(nbytes=None):
        data = bytearray(nbytes or 32)
        bit = flipped[0]
        if bit is not None and bit < 8 * len(data):
            data[bit // 8] ^= 1 << (bit % 8)
        return bytes(data)

    def ids_per_flipped_bit() -> list[str]:
        ids = []
        for bit in [None, *range(128)]:
            flipped[0] = bit
            ids.append(mailer.new_message_id(settings))
        return ids

    monkeypatch.setattr(secrets, "token_bytes", token_bytes)
    ids = ids_per_flipped_bit()
    assert len(set(ids)) == 129 and all(MSG_ID.fullmatch(one) for one in ids)
    assert ids_per_flipped_bit() == ids  # and nothing but those bits: no clock, no counter, no `random`


# A real deployment's address, long enough that "List-Unsubscribe: <...>" passes 78 characters.
LONG_SITE = "https://www.animalsweconfuse-books-for-curious-readers.example.com"


def test_a_confirmation_says_what_was_asked_the_list_the_books_awaited_or_both():
    assert mailer.asked_for(True, []) == "to join the Animals We Confuse new-release list"
    assert mailer.asked_for(False, ["Seal or Sea Lion?"]) == "to hear when Seal or Sea Lion? is out"
    assert mailer.asked_for(True, ["A", "B", "C"]) == (
        "to join the Animals We Confuse new-release list\nand to hear when A, B and C are out"
    )
