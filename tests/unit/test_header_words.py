"""Text from outside in a header (``mailer.header_words``), and the check every email passes before it
goes (``mailer.check_header_block``), issue 40. Every email with such a name, as a real SMTP server
receives it: tests/services/test_header_injection.py."""

from __future__ import annotations

import unicodedata
from email import policy as email_policy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from publisher.mail import mailer
from publisher.rules import list_rules
from tests.smtp import LIST_SECRET
from tests.unit.test_mailer import LONG_SITE

# The names: header lines of the visitor's choosing, and a body of their choosing.
HEADER_LINES = "=?utf-8?q?Ann=0D=0AX-Injected=3A_yes=0D=0ABcc=3A_victim=40example=2Ecom?="
A_BODY = "=?utf-8?q?Ann=0D=0A=0D=0AYour_account_is_locked=2E_Sign_in_at_evil=2Eexample?="


def as_read(words: str) -> str:
    """What a mail client shows for header text: RFC 2047 words decoded (adjacent ones joined)."""
    return str(email_policy.default.header_factory("Subject", words))


def as_typed(text: str) -> str:
    return "".join(" " if unicodedata.category(char) in ("Cc", "Zl", "Zp") else char for char in text)


# --- The one function. ---


@pytest.mark.parametrize("phrase", [True, False], ids=["display-name", "subject"])
@pytest.mark.parametrize("text", [HEADER_LINES, A_BODY])
def test_an_encoded_word_a_visitor_typed_is_carried_as_the_text_they_typed(text, phrase):
    words = mailer.header_words(text, phrase=phrase)
    assert words.isascii() and words.isprintable()  # no CR, no LF, nothing else either
    assert as_read(words) == text  # read back as typed, never as what it would decode to
    assert "\r" not in as_read(words) and "\n" not in as_read(words)
    assert all(len(word) <= mailer.ENCODED_WORD_MAX for word in words.split(" "))


@pytest.mark.parametrize(
    ("text", "phrase", "written"),
    [
        ("Jo Reader", True, "Jo Reader"),
        ("Ann-Marie O'Neil", True, "Ann-Marie O'Neil"),
        ("Contact Form Submission from Jo Reader", False, "Contact Form Submission from Jo Reader"),
        ("New from Animals We Confuse: Guinea Pig or Hamster?", False, None),
        ("Zoë", True, "=?utf-8?q?Zo=C3=AB?="),
        ("J. Smith", True, "=?utf-8?q?J=2E?= Smith"),  # "." is not atext: a display name's word is encoded
        ("J. Smith", False, "J. Smith"),  # in a Subject it is plain
        ("a=b", False, "=?utf-8?q?a=3Db?="),  # no "=" in a plain word: nothing a reader could decode
        ("<b>bold</b>", False, "=?utf-8?q?=3Cb=3Ebold=3C/b=3E?="),
        ("Ann  Lee", True, "=?utf-8?q?Ann_?= Lee"),  # two spaces carried in the encoded word
        ("Jo ", True, "=?utf-8?q?Jo_?="),
        (" Jo", True, "=?utf-8?q?_Jo?="),
        ("", True, ""),
        ("Ann\r\nBcc: x@example.com", False, "=?utf-8?q?Ann_?= Bcc: x@example.com"),  # one line
    ],
)
def test_plain_words_are_written_as_typed_and_the_rest_as_encoded_words(text, phrase, written):
    words = mailer.header_words(text, phrase=phrase)
    assert words == (text if written is None else written)
    assert as_read(words) == as_typed(text)


def test_a_line_break_or_control_character_is_a_space_even_inside_an_encoded_word():
    for text in ("Jo\r\nBcc: x@example.com", "Jo\nBcc", "Jo\rBcc", "Jo\x85Bcc", "Jo\u2028Bcc", "Jo\x00\x1b[31m"):
        words = mailer.header_words(text)
        assert words.isascii() and words.isprintable()
        assert "=0D" not in words and "=0A" not in words and "=00" not in words and "=1B" not in words
        assert as_read(words) == as_typed(text)


def test_a_long_word_is_cut_into_encoded_words_that_keep_every_line_within_78():
    text = "x" * (mailer.PLAIN_WORD_MAX + 1)
    words = mailer.header_words(text)
    assert words.startswith("=?utf-8?q?") and as_read(words) == text
    line = mailer.verbatim_header("Reply-To", mailer.mailbox("ä" * 100 + " " + text, "jo@example.com"))
    assert max(len(part) for part in line.split(b"\r\n")) <= 78


@settings(max_examples=400, deadline=None)
@given(text=st.text(max_size=300), phrase=st.booleans())
def test_any_text_becomes_printable_ascii_words_that_read_back_as_typed(text, phrase):
    words = mailer.header_words(text, phrase=phrase)
    assert words.isascii() and words.isprintable()
    assert all(0 < len(word) <= mailer.ENCODED_WORD_MAX for word in words.split(" ") if words)
    assert as_read(words) == as_typed(text)
    # And the header it makes passes the check, on one field whatever the text.
    line = mailer.verbatim_header("Subject", mailer.header_words(text))
    mailer.check_header_block(line + b"\r\nbody", ["Subject"])


def test_a_mailbox_is_the_name_as_words_and_the_address_or_the_bare_address():
    assert mailer.mailbox("Jo Reader", "jo@example.com") == "Jo Reader <jo@example.com>"
    assert mailer.mailbox("", "jo@example.com") == "jo@example.com"
    assert mailer.mailbox("Zoë", "jo@example.com") == "=?utf-8?q?Zo=C3=AB?= <jo@example.com>"
    for address in ("jo@example.com>, x@evil.example", "jo@example.com\r\nBcc: x@evil.example", "jö@example.com", ""):
        with pytest.raises(mailer.UnsafeHeaders, match="not an address a header can carry"):
            mailer.mailbox("Jo", address)


# --- The check. ---

GOOD = (
    b"From: Animals We Confuse <site@animals.example>\r\n"
    b"To: Jo Reader\r\n <jo@example.com>\r\n"
    b"Subject: Hello\r\n"
    b"\r\n"
    b"Body\r\n"
)
WRITTEN = ["From", "To", "Subject"]


def refusal(data: bytes, written=WRITTEN) -> str:
    with pytest.raises(mailer.UnsafeHeaders) as refused:
        mailer.check_header_block(data, written)
    assert str(refused.value).startswith("not sent, its headers are unsafe: ")
    return refused.value.problem


def test_the_headers_written_each_a_line_or_folded_pass():
    mailer.check_header_block(GOOD, WRITTEN)
    mailer.check_header_block(GOOD, [name.upper() for name in WRITTEN])  # names are case-blind


BARE = "header line 2 holds a CR or LF that is not a line end"
NOT_ASCII = "header line 4 holds a control character or a byte beyond ASCII"


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        pytest.param(GOOD.replace(b"To: Jo Reader\r\n <", b"To: Jo Reader\n<"), BARE, id="bare-lf"),
        pytest.param(GOOD.replace(b"To: Jo Reader\r\n <", b"To: Jo Reader\r<"), BARE, id="bare-cr"),
        pytest.param(
            GOOD.replace(b"To: Jo Reader\r\n", b"To: Ann\r\nX-Injected: yes\r\nBcc: victim@example.com\r\n"),
            "it holds headers the site did not write: X-Injected, Bcc",
            id="injected-headers",
        ),
        pytest.param(
            GOOD.replace(b"To: Jo Reader\r\n", b"To: Ann\r\n\r\nYour account is locked\r\n"),
            "the header block ends before Subject (an empty line inside it starts the body early)",
            id="injected-body",
        ),
        pytest.param(
            GOOD.replace(b"To: Jo Reader\r\n", b"To: Jo\r\n \t \r\n"), "header line 3 is only spaces", id="spaces"
        ),
        pytest.param(
            GOOD.replace(b"To: Jo Reader\r\n", b"To: Jo\r\nReader\r\n"),
            "header line 3 is not a header (name: value): 'Reader'",
            id="not-a-header",
        ),
        pytest.param(
            GOOD.replace(b"Subject: Hello\r\n", b"Subject: Hello\r\nTo: x@example.com\r\n"),
            "its headers are From, To, Subject, To",
            id="twice",
        ),
        pytest.param(b" From: x\r\n\r\nBody", "the header block starts with a continuation line", id="starts-folded"),
        pytest.param(GOOD.replace(b"\r\n\r\n", b"\r\n"), "no empty line ends the header block", id="no-end"),
        pytest.param(GOOD.replace(b"Hello", "Héllo".encode()), NOT_ASCII, id="8-bit"),
        pytest.param(GOOD.replace(b"Hello", b"Hel\x00lo"), NOT_ASCII, id="nul"),
        pytest.param(GOOD.replace(b"Hello", b"x" * 990), "header line 4 is longer than 998 characters", id="too-long"),
    ],
)
def test_a_break_that_is_not_a_fold_is_refused_with_its_reason(data, problem):
    assert refusal(data).startswith(problem)


# --- The one writer of a header that carries a URL or a token: one line, folded outside <...>. ---

# A real deployment's domain, long enough that "List-Unsubscribe: <...>" passes 78 characters.
LONG_DOMAIN = "mail.animalsweconfuse-books-for-curious-readers.example.com"  # Message-ID and List-Id carry it


def unsubscribe_link_for(site: str, link_key: str) -> str:
    return list_rules.unsubscribe_url(site, LIST_SECRET, link_key)


def test_a_header_line_may_be_998_characters_and_not_one_more():
    start = "<https://books.example.com/"
    value = start + "x" * (998 - len("List-Unsubscribe: ") - len(start) - 1) + ">"
    assert len(mailer.verbatim_header("List-Unsubscribe", value)) == 998 + 2
    with pytest.raises(ValueError, match="998"):
        mailer.verbatim_header("List-Unsubscribe", value[:-1] + "x>")


@pytest.mark.parametrize(
    "value", ["<https://a.example/x>\r\nBcc: victim@example.com", "<https://a.example/\nx>", "<https://ä.example/>"]
)
def test_a_line_break_or_a_non_ascii_character_is_refused(value):
    with pytest.raises(ValueError, match="must be printable ASCII on one line"):
        mailer.verbatim_header("List-Unsubscribe", value)


def test_a_long_value_is_folded_only_at_whitespace_outside_the_angle_brackets():
    value = f"Animals We Confuse new releases and other news <new-releases.{LONG_DOMAIN}>"
    line = mailer.verbatim_header("List-Id", value)
    assert line == (
        f"List-Id: Animals We Confuse new releases and other news\r\n <new-releases.{LONG_DOMAIN}>\r\n".encode()
    )
    # Unfolding (taking out each CRLF) gives back the value, byte for byte.
    assert line.replace(b"\r\n ", b" ") == f"List-Id: {value}\r\n".encode()
    both = mailer.verbatim_header("List-Unsubscribe", f"<mailto:out@{LONG_DOMAIN}>, <{LONG_SITE}/unsubscribe?x>")
    assert both == f"List-Unsubscribe: <mailto:out@{LONG_DOMAIN}>,\r\n <{LONG_SITE}/unsubscribe?x>\r\n".encode()


def test_an_unsubscribe_link_that_is_not_one_url_is_refused():
    for link in ("https://a.example/x y", "https://a.example/x>, <https://evil.example/", "https://a.example/\r\n"):
        with pytest.raises(ValueError, match="List-Unsubscribe: not one URL"):
            mailer.list_unsubscribe(link)
