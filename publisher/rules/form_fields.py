"""The two forms' fields, each declared once (docs/content.md, Adding a form field): the page's inputs, the
state's vars, the check of a submit and the gateway's body are all derived from these declarations."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from publisher.content import form_copy
from publisher.rules import validation
from publisher.rules.validation import TextRule

# What the visitor typed -> the value as sent, and its message when it is not valid.
Rule = Callable[[object], tuple[str, str | None]]


def words_of(name: str) -> list[str]:
    """``firstName`` -> ``["first", "name"]``: the name's words, for its element id and its state var."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower().split("_")


@dataclass(frozen=True)
class FormField:
    name: str  # as the product spells it: the input's name, the key in a submit and the gateway's body
    label: str
    rule: Rule
    input_type: str = "text"  # an <input>'s type, or "textarea" (a box of several lines)
    autocomplete: str = "off"
    # Consecutive half-width fields share a row on a wide screen (the contact form's names).
    half_width: bool = False
    # Kept by the site's own list (the embedded gateway) in the subscriber's column of the same
    # name in snake case (``companyName``: ``company_name``); the name and the address always are.
    stored: bool = False


@dataclass(frozen=True)
class Checked:
    """Cleaned values (trimmed, email normalized) and the message for each invalid field."""

    values: dict[str, str]
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.errors


@dataclass(frozen=True)
class Form:
    name: str  # its elements' ids start with it ("subscribe-email"); the limits count per form
    fields: tuple[FormField, ...]  # in the order they are shown

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(declared.name for declared in self.fields)

    def element_id(self, name: str) -> str:
        """The id of the form's element ``name`` (a field, ``answer``, ``success``): ``contact-first-name``."""
        return "-".join([self.name, *words_of(name)])

    @property
    def field_ids(self) -> dict[str, str]:
        """Element ids by field name, so the server can move focus to the first invalid field."""
        return {name: self.element_id(name) for name in self.names}

    def typed(self, data: Mapping[str, object]) -> dict[str, str]:
        """What the visitor typed in each field, to show again on a refused plain POST."""
        return {name: str(data.get(name, "")) for name in self.names}

    def stored(self, values: Mapping[str, str]) -> dict[str, str]:
        """The checked values of the fields declared ``stored``, by their column."""
        return {"_".join(words_of(declared.name)): values[declared.name] for declared in self.fields if declared.stored}

    def check(self, data: Mapping[str, object]) -> Checked:
        """Each field's rule on a submit (the fields by name): the cleaned values, or a message per invalid field."""
        checks = {declared.name: declared.rule(data.get(declared.name)) for declared in self.fields}
        return Checked(
            values={name: value for name, (value, _) in checks.items()},
            errors={name: error for name, (_, error) in checks.items() if error},
        )


NAME = FormField(
    "name",
    form_copy.NAME_LABEL,
    TextRule(form_copy.NAME_LABEL, form_copy.NAME_REQUIRED, form_copy.NAME_TOO_SHORT),
    autocomplete="name",
)
EMAIL = FormField("email", form_copy.EMAIL_LABEL, validation.check_email, input_type="email", autocomplete="email")
FIRST_NAME = FormField(
    "firstName",
    form_copy.FIRST_NAME_LABEL,
    TextRule(form_copy.FIRST_NAME_LABEL, form_copy.FIRST_NAME_REQUIRED, form_copy.FIRST_NAME_TOO_SHORT),
    autocomplete="given-name",
    half_width=True,
)
LAST_NAME = FormField(
    "lastName",
    form_copy.LAST_NAME_LABEL,
    TextRule(form_copy.LAST_NAME_LABEL, form_copy.LAST_NAME_REQUIRED, form_copy.LAST_NAME_TOO_SHORT),
    autocomplete="family-name",
    half_width=True,
)
MESSAGE = FormField(
    "message",
    form_copy.MESSAGE_LABEL,
    TextRule(
        form_copy.MESSAGE_LABEL,
        form_copy.MESSAGE_REQUIRED,
        form_copy.MESSAGE_TOO_SHORT,
        minimum=validation.MESSAGE_MIN,
        maximum=validation.MESSAGE_MAX,
        control_chars=form_copy.MESSAGE_CONTROL_CHARS,
        allowed_controls=validation.LINE_BREAKS,
    ),
    input_type="textarea",
)

SUBSCRIBE = Form("subscribe", (NAME, EMAIL))
CONTACT = Form("contact", (FIRST_NAME, LAST_NAME, EMAIL, MESSAGE))
