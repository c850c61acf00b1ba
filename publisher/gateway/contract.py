"""The gateway's two calls (docs/product.md, The gateway): what the forms ask of a gateway
(``Gateway``, which both the cloud client and mailing_list.EmbeddedList are), and the cloud API's
paths and JSON bodies."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from publisher.content.form_copy import contact_subject, full_name
from publisher.rules.form_fields import EMAIL, FIRST_NAME, LAST_NAME, MESSAGE

SUBSCRIBE_PATH = "/prod/subscribe"
SEND_EMAIL_PATH = "/prod/send-email"


class GatewayError(Exception):
    """The gateway did not take the request; ``cause`` says why, for the server log (already logged)."""

    def __init__(self, call: str, cause: str):
        super().__init__(f"{call} failed: {cause}")
        self.cause = cause


class Gateway(Protocol):
    """Where an accepted submit goes, with the checked values by field name. Each call returns once
    the gateway has taken the request, or raises GatewayError (the embedded list: ListUnavailable):
    the form's failure message."""

    async def subscribe(self, values: Mapping[str, str]) -> None: ...

    async def send_email(self, values: Mapping[str, str]) -> None: ...


# The contact form's fields the product's body puts in its own shape (sender, subject, message).
_CONTACT_SHAPED = frozenset({FIRST_NAME.name, LAST_NAME.name, EMAIL.name, MESSAGE.name})


def subscribe_body(values: Mapping[str, str]) -> dict[str, Any]:
    """The subscribe form's checked values (rules/form_fields.py), each by its name, and ``book_updates``."""
    return {**values, "book_updates": "yes"}


def contact_body(values: Mapping[str, str]) -> dict[str, Any]:
    """The contact form's checked values in the product's shape; a field beyond it, by its name."""
    sender = full_name(values[FIRST_NAME.name], values[LAST_NAME.name])
    return {
        "sender": {"name": sender, "email": values[EMAIL.name]},
        "subject": contact_subject(sender),
        "message": values[MESSAGE.name],
        **{name: value for name, value in values.items() if name not in _CONTACT_SHAPED},
    }
