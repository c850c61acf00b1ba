"""The one writer of a header that carries a URL or a token (headers.verbatim_header): one line,
never RFC 2047 encoded-words, folded only outside the angle brackets. Each list email as a real
SMTP server receives it, byte for byte, is in tests/services/test_list_headers.py."""

from __future__ import annotations

import pytest

from publisher.mail import headers
from publisher.rules import list_links
from tests.smtp import LIST_SECRET

# A real deployment's address, long enough that "List-Unsubscribe: <...>" passes 78 characters.
LONG_SITE = "https://www.animalsweconfuse-books-for-curious-readers.example.com"
LONG_DOMAIN = "mail.animalsweconfuse-books-for-curious-readers.example.com"  # Message-ID and List-Id carry it


def unsubscribe_link_for(site: str, link_key: str) -> str:
    return list_links.unsubscribe_url(site, LIST_SECRET, link_key)


def test_a_long_url_is_one_line_never_encoded_words():
    link = unsubscribe_link_for(LONG_SITE, "AbCdEfGhIjKlMnOpQrStUv")
    line = headers.verbatim_header("List-Unsubscribe", f"<{link}>")
    assert line == f"List-Unsubscribe: <{link}>\r\n".encode()
    assert len(line) > 80


def test_a_header_line_may_be_998_characters_and_not_one_more():
    start = "<https://books.example.com/"
    value = start + "x" * (998 - len("List-Unsubscribe: ") - len(start) - 1) + ">"
    assert len(headers.verbatim_header("List-Unsubscribe", value)) == 998 + 2
    with pytest.raises(ValueError, match="998"):
        headers.verbatim_header("List-Unsubscribe", value[:-1] + "x>")


@pytest.mark.parametrize(
    "value", ["<https://a.example/x>\r\nBcc: victim@example.com", "<https://a.example/\nx>", "<https://ä.example/>"]
)
def test_a_line_break_or_a_non_ascii_character_is_refused(value):
    with pytest.raises(ValueError, match="must be printable ASCII on one line"):
        headers.verbatim_header("List-Unsubscribe", value)


def test_a_long_value_is_folded_only_at_whitespace_outside_the_angle_brackets():
    value = f"Animals We Confuse new releases and other news <new-releases.{LONG_DOMAIN}>"
    line = headers.verbatim_header("List-Id", value)
    assert line == (
        f"List-Id: Animals We Confuse new releases and other news\r\n <new-releases.{LONG_DOMAIN}>\r\n".encode()
    )
    # Unfolding (taking out each CRLF) gives back the value, byte for byte.
    assert line.replace(b"\r\n ", b" ") == f"List-Id: {value}\r\n".encode()
    both = headers.verbatim_header("List-Unsubscribe", f"<mailto:out@{LONG_DOMAIN}>, <{LONG_SITE}/unsubscribe?x>")
    assert both == f"List-Unsubscribe: <mailto:out@{LONG_DOMAIN}>,\r\n <{LONG_SITE}/unsubscribe?x>\r\n".encode()


def test_an_unsubscribe_link_that_is_not_one_url_is_refused():
    for link in ("https://a.example/x y", "https://a.example/x>, <https://evil.example/", "https://a.example/\r\n"):
        with pytest.raises(ValueError, match="List-Unsubscribe: not one URL"):
            headers.list_unsubscribe(link)
