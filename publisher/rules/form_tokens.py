"""The contact form's signed token: its question and when it was shown, carried by the page itself.

The contact form's anti-spam checks (docs/product.md, Forms) need two facts the
visitor must not choose: the math question's result and when the form was shown.
They travel in one hidden field, signed with an HMAC-SHA256 under
``PUBLISHER_FORM_SECRET`` (every worker and container shares it), so the server
that answers a plain HTML POST and the app's event both check the same token
with the same function, without any state kept between the page and its submit.

A token is ``v1.<shown>.<issued>.<question>.<nonce>.<mac>``: the times in hex
milliseconds (``shown`` is when the visitor first saw this form; a new question
after a wrong answer keeps it, so a correction is not "too fast"), the question
as ``3p4`` or ``9m2``, and a random nonce that makes the token single use
(limits/form_tokens.py remembers the nonces that were used). A token is good for
an hour from ``issued``; after that, and once used, the visitor gets a new one.
Several secrets may be configured: the first signs, all are accepted.
"""

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
_SIGNATURE_CHARS = 43  # all 256 bits, base64url without padding
_OPERATORS = {"+": "p", "-": "m"}
_TOKEN = re.compile(
    r"^v1\.(?P<shown>[0-9a-f]{1,12})\.(?P<issued>[0-9a-f]{1,12})\."
    r"(?P<left>[0-9]{1,2})(?P<op>[pm])(?P<right>[0-9]{1,2})\.(?P<nonce>[A-Za-z0-9_-]{22})\.(?P<mac>[A-Za-z0-9_-]{43})$"
)


@dataclass(frozen=True)
class FormToken:
    """What a token says, once its signature matched."""

    shown_ms: int
    issued_ms: int
    question: MathQuestion
    nonce: str

    def expired(self, now_ms: float) -> bool:
        return now_ms - self.issued_ms >= VALID_FOR_MS or now_ms < self.issued_ms - VALID_FOR_MS


def _signature(secret: str, body: str) -> str:
    digest = hmac.new(secret.encode(), f"{_PURPOSE}\n{body}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def issue(secret: str, question: MathQuestion, *, now_ms: float, shown_ms: float | None = None) -> str:
    """A new token for ``question``, issued now; ``shown_ms`` (default: now) is when the form was first shown."""
    shown = int(now_ms if shown_ms is None else shown_ms)
    op = _OPERATORS[question.operator]
    body = f"{_VERSION}.{shown:x}.{int(now_ms):x}.{question.left}{op}{question.right}.{secrets.token_urlsafe(16)}"
    return f"{body}.{_signature(secret, body)}"


def read(secrets_: Sequence[str], token: object) -> FormToken | None:
    """The token's facts when one of ``secrets_`` signed it (expired or not); None for anything else."""
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
