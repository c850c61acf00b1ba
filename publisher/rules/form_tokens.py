"""The contact form's signed token: the question and when the form was shown, carried by the page so no state
is kept between page and submit; a refusal's next token keeps its chain's times (docs/security.md)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from publisher.rules.antispam import MathQuestion

TOKEN_FIELD = "token"
VALID_FOR_MS = 60 * 60 * 1000
# The longest token ever issued is well below this; a longer field is not read at all.
MAX_TOKEN_CHARS = 200
_VERSION = "v1"
_PURPOSE = "contact-form"
_OPERATORS = {"+": "p", "-": "m"}
_TOKEN = re.compile(
    r"^v1\.(?P<shown>[0-9a-f]{1,12})\.(?P<issued>[0-9a-f]{1,12})\."
    r"(?P<left>[0-9]{1,2})(?P<op>[pm])(?P<right>[0-9]{1,2})\.(?P<nonce>[A-Za-z0-9_-]{22})\.(?P<mac>[A-Za-z0-9_-]{43})$"
)


@dataclass(frozen=True)
class FormToken:
    shown_ms: int  # when the visitor was first shown the form of this chain
    issued_ms: int  # when the chain's first token was issued: the chain lives an hour from it
    question: MathQuestion
    nonce: str

    def expired(self, now_ms: float) -> bool:
        """Past its chain's hour (or issued by a clock far ahead of ours)."""
        return now_ms - self.issued_ms >= VALID_FOR_MS or now_ms < self.issued_ms - VALID_FOR_MS


def _signature(secret: str, body: str) -> str:
    digest = hmac.new(secret.encode(), f"{_PURPOSE}\n{body}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def issue(secret: str, question: MathQuestion, *, now_ms: float, shown_ms: float | None = None) -> str:
    return _signed(secret, question, shown_ms=now_ms if shown_ms is None else shown_ms, issued_ms=now_ms)


def follow(secret: str, question: MathQuestion, *, after: FormToken) -> str:
    """It keeps the chain's times, so it expires with the chain's first token however often it is followed."""
    return _signed(secret, question, shown_ms=after.shown_ms, issued_ms=after.issued_ms)


def continues(token: FormToken | None, *, first_use: bool, now_ms: float) -> FormToken | None:
    """The token a refused submit's next token may ``follow``; None: the next starts a new chain."""
    return token if token is not None and first_use and not token.expired(now_ms) else None


def _signed(secret: str, question: MathQuestion, *, shown_ms: float, issued_ms: float) -> str:
    op = _OPERATORS[question.operator]
    body = (
        f"{_VERSION}.{int(shown_ms):x}.{int(issued_ms):x}.{question.left}{op}{question.right}"
        f".{secrets.token_urlsafe(16)}"
    )
    return f"{body}.{_signature(secret, body)}"


def read(secrets_: Sequence[str], token: object) -> FormToken | None:
    if not isinstance(token, str) or len(token) > MAX_TOKEN_CHARS:
        return None
    match = _TOKEN.match(token)
    if match is None:
        return None
    body, mac = token.rsplit(".", 1)
    if not any(hmac.compare_digest(_signature(secret, body), mac) for secret in secrets_):
        return None
    operator = "+" if match["op"] == "p" else "-"
    return FormToken(
        shown_ms=int(match["shown"], 16),
        issued_ms=int(match["issued"], 16),
        question=MathQuestion(int(match["left"]), operator, int(match["right"])),
        nonce=match["nonce"],
    )
