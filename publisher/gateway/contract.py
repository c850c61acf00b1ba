"""The gateway's two calls (docs/product.md, The gateway), seen from both sides: what the site sends, and
what the embedded gateway accepts (checked strictly, so only the site's own
requests are stored and mailed)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, field_validator

from publisher.rules import validation
from publisher.rules.form_fields import EMAIL, FIRST_NAME, LAST_NAME, MESSAGE

SUBSCRIBE_PATH = "/prod/subscribe"
SEND_EMAIL_PATH = "/prod/send-email"
SUBJECT_MAX = validation.SUBJECT_MAX


# The contact form's fields the product's body puts in its own shape (sender, subject, message).
_CONTACT_SHAPED = frozenset({FIRST_NAME.name, LAST_NAME.name, EMAIL.name, MESSAGE.name})


def subscribe_body(values: Mapping[str, str]) -> dict[str, Any]:
    """The subscribe form's checked values (rules/form_fields.py), each by its name, and ``book_updates``."""
    return {**values, "book_updates": "yes"}


def contact_body(values: Mapping[str, str]) -> dict[str, Any]:
    """The contact form's checked values in the product's shape; a field beyond it, by its name."""
    full_name = f"{values[FIRST_NAME.name]} {values[LAST_NAME.name]}"
    return {
        "sender": {"name": full_name, "email": values[EMAIL.name]},
        "subject": f"Contact Form Submission from {full_name}",
        "message": values[MESSAGE.name],
        **{name: value for name, value in values.items() if name not in _CONTACT_SHAPED},
    }


def _clean_text(value: str, *, maximum: int, allowed_controls: frozenset[str] = frozenset()) -> str:
    text = value.strip()
    if not text:
        raise ValueError("must not be empty")
    if len(text) > maximum:
        raise ValueError(f"must be at most {maximum} characters")
    if validation.has_control_characters(text, allowed_controls):
        raise ValueError("must not contain control characters")
    return text


def _clean_email(value: str) -> str:
    email, error = validation.check_email(value)
    if error:
        raise ValueError("must be a valid email address")
    return email


class RequestBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class _NameAndEmail(RequestBody):
    name: str
    email: str

    name_max: ClassVar[int] = validation.NAME_MAX

    @field_validator("email")
    @classmethod
    def _valid_email(cls, value: str) -> str:
        return _clean_email(value)

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str) -> str:
        return _clean_text(value, maximum=cls.name_max)


class SubscribeRequest(_NameAndEmail):
    book_updates: Literal["yes"]


class Sender(_NameAndEmail):
    # "<first> <last>", each at most NAME_MAX characters.
    name_max: ClassVar[int] = 2 * validation.NAME_MAX + 1


class SendEmailRequest(RequestBody):
    sender: Sender
    subject: str
    message: str

    @field_validator("subject")
    @classmethod
    def _valid_subject(cls, value: str) -> str:
        return _clean_text(value, maximum=SUBJECT_MAX)

    @field_validator("message")
    @classmethod
    def _valid_message(cls, value: str) -> str:
        return _clean_text(value, maximum=validation.MESSAGE_MAX, allowed_controls=frozenset("\n\r\t"))
