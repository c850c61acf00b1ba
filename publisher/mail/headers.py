"""The headers that carry a URL or a token, written exactly as they are.

The email package folds any word longer than a line into RFC 2047 encoded-words
(``=?utf-8?q?=3Chttps=3A//...?=``): the package reads those back, a mail provider
looking for RFC 2369's ``<https://...>`` does not (no unsubscribe button, no RFC 8058
one-click). So List-Unsubscribe, List-Unsubscribe-Post, List-Id and Message-ID are
written by ``verbatim_header``, for the email package's messages through the ``WIRE``
policy, and for a release email's prepared bytes directly (mail/release_email.py).
"""

from __future__ import annotations

import re
from email.policy import EmailPolicy

# RFC 5322 2.1.1: a line MUST be at most 998 characters (without its CRLF), and SHOULD be at most 78.
MAX_LINE_LENGTH = 998
FOLD_AT = 78
# The headers that carry a URL or a token: written by verbatim_header, whatever builds the email.
VERBATIM_HEADERS = ("Message-ID", "List-Unsubscribe", "List-Unsubscribe-Post", "List-Id")
_FIELD_NAME = re.compile(r"[!-9;-~]+")  # RFC 5322 ftext


def verbatim_header(name: str, value: str) -> bytes:
    """``name: value`` and CRLF, the value exactly as given: how a header carrying a URL or a
    token (List-Unsubscribe, List-Id, Message-ID) must reach the receiving server.

    The email package folds any word longer than a line into RFC 2047 encoded-words
    (``=?utf-8?q?=3Chttps=3A//...?=``): the package reads those back, a mail provider
    looking for RFC 2369's ``<https://...>`` does not (no unsubscribe button, no
    RFC 8058 one-click). Here a line is folded only at a space outside ``<...>`` (never
    inside a URL, never right after the colon), and only to keep lines within 78
    characters where such a space allows; otherwise the value stays on one line of up to
    998. A value that holds CR, LF or another control character, or anything non-ASCII,
    or that cannot fit 998 characters a line, raises ValueError: nothing broken is written.
    """
    if not _FIELD_NAME.fullmatch(name):
        raise ValueError(f"not a header name: {name!r}")
    if not (value.isascii() and value.isprintable()):
        raise ValueError(
            f"{name}: a header that carries a URL or a token must be printable ASCII on one line "
            f"(no CR, LF or other control character, nothing non-ASCII), got {value!r}"
        )
    lines = _fold_outside_brackets(f"{name}: {value}", first_fold=len(name) + 2)
    if (longest := max(len(line) for line in lines)) > MAX_LINE_LENGTH:
        raise ValueError(
            f"{name}: a line of {longest} characters is longer than RFC 5322's {MAX_LINE_LENGTH}, "
            "and it cannot be folded outside its <...>; it is not sent broken"
        )
    return ("\r\n".join(lines) + "\r\n").encode("ascii")


def _fold_outside_brackets(line: str, first_fold: int) -> list[str]:
    """``line`` cut before single spaces outside ``<...>`` (from ``first_fold`` on), each piece
    at most FOLD_AT long where the spaces allow. Unfolding (taking out each CRLF) gives ``line`` back."""
    depth = 0
    spaces = []
    for index, char in enumerate(line):
        if char == "<":
            depth += 1
        elif char == ">":
            depth = max(depth - 1, 0)
        elif (
            char == " "
            and depth == 0
            and index >= first_fold
            and line[index - 1] != " "
            and index + 1 < len(line)
            and line[index + 1] != " "
        ):
            spaces.append(index)
    lines, start = [], 0
    while len(line) - start > FOLD_AT:
        fitting = [space for space in spaces if start < space <= start + FOLD_AT]
        later = [space for space in spaces if space > start]
        if not later:
            break
        cut = fitting[-1] if fitting else later[0]
        lines.append(line[start:cut])
        start = cut  # the continuation line starts with the space
    lines.append(line[start:])
    return lines


def list_unsubscribe(link: str) -> str:
    """RFC 2369's List-Unsubscribe value for one link: ``<link>``. A link that is not one URL
    (a space, an angle bracket, a quote, a control or non-ASCII character) raises ValueError."""
    if not (link.isascii() and link.isprintable()) or any(char in link for char in ' <>"'):
        raise ValueError(f"List-Unsubscribe: not one URL: {link!r}")
    return f"<{link}>"


class _WirePolicy(EmailPolicy):
    """The SMTP policy, except that the VERBATIM_HEADERS are written by verbatim_header: one
    set with this policy is kept as the very string given (checked as it is set), not parsed
    (which would decode anything that looks like an encoded-word)."""

    def header_store_parse(self, name, value):
        if name.lower() not in _VERBATIM or hasattr(value, "name"):
            return super().header_store_parse(name, value)
        verbatim_header(name, value)  # raises ValueError when it cannot be written right
        return (name, value)

    def _verbatim(self, name: str, value) -> str | None:
        if name.lower() not in _VERBATIM:
            return None
        # A header object (set under another policy) as it reads; a stored string as it is, unfolded.
        text = str(value) if hasattr(value, "name") else re.sub(r"[\r\n]", "", value)
        return verbatim_header(name, text).decode("ascii").replace("\r\n", self.linesep)

    def fold(self, name, value):
        folded = self._verbatim(name, value)
        return super().fold(name, value) if folded is None else folded

    def fold_binary(self, name, value):
        folded = self._verbatim(name, value)
        return super().fold_binary(name, value) if folded is None else folded.encode("ascii")


_VERBATIM = {name.lower() for name in VERBATIM_HEADERS}
# How the site's emails are written: the SMTP policy (CRLF), URL and token headers verbatim.
WIRE = _WirePolicy(linesep="\r\n")
