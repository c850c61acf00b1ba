"""The gateway's two calls (docs/product.md, The gateway): what the forms ask of a gateway
(``Gateway``, which both the cloud client and the embedded list are), and the cloud API's
paths and JSON bodies."""

from __future__ import annotations

from typing import Any, Protocol

SUBSCRIBE_PATH = "/prod/subscribe"
SEND_EMAIL_PATH = "/prod/send-email"


class GatewayError(Exception):
    """The gateway did not take the request; ``cause`` says why, for the server log (already logged)."""

    def __init__(self, call: str, cause: str):
        super().__init__(f"{call} failed: {cause}")
        self.call = call
        self.cause = cause


class Gateway(Protocol):
    """Where an accepted submit goes, with values the form's judge checked (web/submissions.py).

    Each call returns once the gateway has taken the request, or raises GatewayError: the
    visitor then reads the form's failure message.
    """

    async def subscribe(self, *, email: str, name: str) -> None: ...

    async def send_email(self, *, first_name: str, last_name: str, email: str, message: str) -> None: ...


def full_name(first_name: str, last_name: str) -> str:
    return f"{first_name} {last_name}"


def contact_subject(full_name: str) -> str:
    """The subject of the publisher's email about a contact message, whichever gateway sends it."""
    return f"Contact Form Submission from {full_name}"


def subscribe_body(*, email: str, name: str) -> dict[str, Any]:
    return {"email": email, "name": name, "book_updates": "yes"}


def contact_body(*, first_name: str, last_name: str, email: str, message: str) -> dict[str, Any]:
    sender = full_name(first_name, last_name)
    return {"sender": {"name": sender, "email": email}, "subject": contact_subject(sender), "message": message}
