"""A provider's body to ``POST /hooks/bounce``, read: one JSON object or a list of them, all taken or,
if one is bad, none. A refusal names the key, never the value: an address never comes back in a log."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import ErrorDetails

from publisher.rules import bounces, validation
from publisher.storage.bounce_records import Report
from publisher.storage.tables import FROM_WEBHOOK, REASON_MAX

MAX_ITEMS = 10_000

# Why a body is refused: for the provider's logs and its operator, not for readers.
NOT_JSON = "The body is not JSON"
WRONG_SHAPE = "The body must be a JSON object or a list of them"
EMPTY_LIST = "The list is empty"
TOO_MANY_ITEMS = f"At most {MAX_ITEMS} items at once"


class Item(BaseModel):
    """One report as a provider writes it. Keys this hook does not know are ignored: relays
    add their own (timestamps, ids) and a batch must not fail on them."""

    model_config = ConfigDict(extra="ignore", strict=True)

    email: str = Field(min_length=1, max_length=validation.EMAIL_MAX)
    kind: str = Field(alias="type")
    reason: str | None = None

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, value: str) -> str:
        if value not in bounces.KINDS:
            raise ValueError("unknown kind")
        return value

    @field_validator("email")
    @classmethod
    def _no_control_characters(cls, value: str) -> str:
        # PostgreSQL refuses NUL in text: that would be a 503 the provider retries forever.
        if validation.has_control_characters(value):
            raise ValueError("control characters")
        return value

    @field_validator("reason")
    @classmethod
    def _clipped(cls, value: str | None) -> str | None:
        """A provider's reason can be a whole SMTP transcript: kept short, on one line, without NUL."""
        if value is None:
            return None
        return validation.one_line(value, REASON_MAX)

    def report(self) -> Report:
        return Report(self.kind, self.reason or self.kind, FROM_WEBHOOK, email=self.email)


class BodyRefused(ValueError):
    """A body that gives no report; its message names the first problem."""


def read_reports(body: bytes) -> list[Report]:
    """The reports in a body, all of them or, if one is bad, none (BodyRefused)."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):  # bad JSON, bad UTF-8, or nesting deeper than the parser goes
        raise BodyRefused(NOT_JSON) from None
    if isinstance(data, dict):
        return [_item(data, None).report()]
    if not isinstance(data, list):
        raise BodyRefused(WRONG_SHAPE)
    if not data:
        raise BodyRefused(EMPTY_LIST)
    if len(data) > MAX_ITEMS:
        raise BodyRefused(TOO_MANY_ITEMS)
    return [_item(value, number).report() for number, value in enumerate(data, start=1)]


def _item(value: Any, number: int | None) -> Item:
    """``number``: the item's place in the list, counted from 1 (None: the body is one object)."""
    where = "" if number is None else f"item {number}: "
    if not isinstance(value, dict):
        raise BodyRefused(f"{where}must be an object")
    try:
        return Item.model_validate(value)
    except ValidationError as exc:
        raise BodyRefused(where + _problem(exc.errors(include_input=False)[0])) from None


def _problem(error: ErrorDetails) -> str:
    """Pydantic's error in words that name the key and never echo the value (it may be an address)."""
    field = str(error["loc"][0]) if error["loc"] else "the item"
    kind = error["type"]
    if kind == "missing":
        return f"{field} is required"
    if field == "type":
        return f"type must be one of {', '.join(bounces.KINDS)}"
    if kind in ("string_type", "str_type"):
        return f"{field} must be a string"
    if kind == "string_too_short":
        return f"{field} must not be empty"
    if kind == "string_too_long":
        return f"{field} must be at most {error.get('ctx', {}).get('max_length', validation.EMAIL_MAX)} characters"
    if field == "email" and kind == "value_error":
        return "email must not hold control characters"
    return f"{field} is not valid"
