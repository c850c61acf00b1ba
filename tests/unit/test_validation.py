"""Form validation rules (docs/product.md, Forms), the messages written out so a reworded one fails here."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from publisher.rules import form_fields
from publisher.rules.form_fields import CONTACT, SUBSCRIBE, parse_answer
from tests.unit import email_shapes

GOOD_EMAIL = "reader@example.com"
GOOD_MESSAGE = "Hello, I loved the book."
REQUIRED = {
    "name": "Please enter your name",
    "firstName": "Please enter your first name",
    "lastName": "Please enter your last name",
    "email": "Please enter your email",
    "message": "Please enter your message",
}
CONTROL = {
    "name": "Name must not contain line breaks or control characters",
    "firstName": "First name must not contain line breaks or control characters",
    "lastName": "Last name must not contain line breaks or control characters",
    "email": "Please enter a valid email address",
    "message": "Message must not contain control characters",
}
INVALID_EMAIL = "Please enter a valid email address"
VALID_EMAILS = [
    "reader@example.com",
    "first.last@example.org",
    "first+tag@mail.example.co.uk",
    "o'brien@example.com",
    "user_name-1@sub.example.net",
    "x@example.com",
    "reader@no-such-domain-for-tests-5f3a9c.com",  # only the syntax is checked: no DNS
]
EMAIL_TOO_LONG = "Email must be at most 254 characters"
# (field, shortest, longest, message when too short, message when too long)
TEXT_LENGTHS = [
    ("name", 2, 100, "Name must be at least 2 characters", "Name must be at most 100 characters"),
    ("firstName", 2, 100, "First name must be at least 2 characters", "First name must be at most 100 characters"),
    ("lastName", 2, 100, "Last name must be at least 2 characters", "Last name must be at most 100 characters"),
    ("message", 10, 5000, "Message must be at least 10 characters", "Message must be at most 5000 characters"),
]
TOO_SHORT = {field: too_short for field, _, _, too_short, _ in TEXT_LENGTHS}
# The messages the forms may show, written out in full.
MESSAGES = {
    field: {REQUIRED[field], CONTROL[field], too_short, too_long} for field, _, _, too_short, too_long in TEXT_LENGTHS
} | {"email": {REQUIRED["email"], INVALID_EMAIL, EMAIL_TOO_LONG}}


def subscribe(name: object = "Ada", email: object = GOOD_EMAIL):
    return SUBSCRIBE.check({"name": name, "email": email})


def contact(*values: object, **fields: object):
    """The contact form checked with ``values`` in display order, or ``fields`` by name; valid values elsewhere."""
    valid = {"firstName": "Ada", "lastName": "Lovelace", "email": GOOD_EMAIL, "message": GOOD_MESSAGE}
    return CONTACT.check({**valid, **dict(zip(CONTACT.names, values, strict=False)), **fields})


def check_field(field: str, value: object):
    return (subscribe if field == "name" else contact)(**{field: value})


BOTH_FORMS = pytest.mark.parametrize("form", [subscribe, contact])


@pytest.mark.parametrize(("field", "shortest", "longest", "too_short", "too_long"), TEXT_LENGTHS)
def test_each_text_field_s_length_bounds_are_counted_after_trimming(field, shortest, longest, too_short, too_long):
    assert check_field(field, "x" * (shortest - 1)).errors == {field: too_short}
    assert check_field(field, " " + "x" * (shortest - 1) + "   ").errors == {field: too_short}
    for accepted in ("x" * shortest, "x" * longest):
        assert check_field(field, accepted).values[field] == accepted
    assert check_field(field, "  " + "x" * longest + " \n").ok
    assert check_field(field, "x" * (longest + 1)).errors == {field: too_long}


@pytest.mark.parametrize("field", ["name", "firstName", "lastName"])
@pytest.mark.parametrize(
    ("typed", "ok"),
    [("é", False), ("\tZ\n", False), ("李明", True), ("O'", True), (" Jo ", True)]
    + [("\u0645\u06cc\u200c\u0631\u0627", True), ("Nik\u200dita", True)],  # ZWNJ/ZWJ in Persian, Indic names
)
def test_names_are_counted_in_characters_after_trimming(field, typed, ok):
    checked = check_field(field, typed)
    assert checked.ok is ok
    assert checked.values[field] == typed.strip()


def test_valid_values_are_trimmed_and_the_email_domain_lower_cased():
    checked = subscribe("  \tAda Lovelace \n", "   reader@EXAMPLE.com\t ")
    assert (checked.ok, checked.values) == (True, {"name": "Ada Lovelace", "email": "reader@example.com"})
    checked = contact("  Ada ", "\tLovelace\n", " Reader@EXAMPLE.com ", "\n  Hello there, friend.  \n\n")
    assert checked.errors == {}
    assert checked.values == {
        "firstName": "Ada",
        "lastName": "Lovelace",
        "email": "Reader@example.com",
        "message": "Hello there, friend.",
    }
    assert subscribe(name="\r\nAda\r\n").values["name"] == "Ada"  # line breaks around a name are trimmed


@pytest.mark.parametrize("field", list(REQUIRED))
@pytest.mark.parametrize("value", ["", " ", "   ", "\t", "\n", " \t\r\n ", "\u00a0", "\u3000"])
def test_an_empty_or_blank_field_is_required(field, value):
    assert check_field(field, value).errors == {field: REQUIRED[field]}


@pytest.mark.parametrize("field", ["name", "firstName", "lastName", "message"])
@pytest.mark.parametrize(
    "text",
    [
        # C0, DEL, C1
        "\x00",
        "\x07",
        "\x1b[31m",
        "\x7f",
        "\x0b",
        "\x0c",
        "\x85",
        "\x1f",
        # line and paragraph separators, bidi, zero width
        "\u2028",
        "\u2029",
        "\u202eecalevol",
        "\u200b",
    ],
)
def test_a_text_field_with_control_characters_is_refused(field, text):
    assert check_field(field, f"Ada Lovelace{text} and more").errors == {field: CONTROL[field]}
    if not text[0].isspace():  # a leading one that is whitespace is trimmed
        assert check_field(field, f"{text}Ada Lovelace and more").errors == {field: CONTROL[field]}


@pytest.mark.parametrize(
    "message",
    [
        # each line end
        "Line one\nLine two",
        "Line one\r\nLine two\r\nLine three",
        "Old Mac\rline ending here",
        "Column\tcolumn\tcolumn",
        "Para one\n\n\tPara two, indented",
        "Ada\r\nBcc: v@example.com",
    ],
)
def test_a_message_may_hold_line_breaks_and_tabs_and_a_name_may_not(message):
    assert contact(message=message).values["message"] == message
    assert contact(message=message).ok
    for field in ("name", "firstName", "lastName"):
        assert check_field(field, message).errors == {field: CONTROL[field]}


@BOTH_FORMS
@pytest.mark.parametrize(
    "email",
    [
        # not an address's syntax
        "a@",
        "@b.com",
        "a b@c.com",
        "plainaddress",
        "a@b",
        "a@@b.com",
        "a@b..com",
        ".a@b.com",
        "a.@b.com",
        "a@-b.com",
        "a@b.com.",
        "a@b_c.com",
        "a,b@c.com",
        "<a@b.com>",
        "Ada <a@b.com>",
        "a@b.com, c@d.com",
        "@",
        # a line break or a control character anywhere
        "reader@example.com\nBcc: victim@example.com",
        "reader@example.com\r\nBcc: victim@example.com",
        "reader\n@example.com",
        "reader@exa\rmple.com",
        "reader@example.com\x00",
        "\x00reader@example.com",
        "read\x00er@example.com",
        "reader\t@example.com",
        "reader@example.com\x0bx",
        "reader\x1b@example.com",
        "reader\u2028@example.com",
        "reader\u200b@example.com",
        '"jo reader"@example.com',  # a quoted local part
        "jo..reader@example.com",
        "jo@localhost",  # no public domain
        "jo@[127.0.0.1]",  # an address literal
        "j" * 65 + "@example.com",  # a local part over 64 characters
        *("a" * 300 + bad + "Bcc: victim@example.com" for bad in ("\n", "\r\n", "\x00", "\u2028")),  # before length
    ],
)
def test_invalid_emails_and_emails_with_control_characters_get_the_spec_message(form, email):
    assert form(email=email).errors == {"email": INVALID_EMAIL}


@BOTH_FORMS
def test_an_email_is_at_most_254_characters_counted_after_trimming(form):
    domain = ".".join(["b" * 63, "c" * 63, "d" * 57]) + ".com"
    longest = "a" * 64 + "@" + domain
    assert len(longest) == 254
    assert form(email="   " + longest + "   ").values["email"] == longest
    assert form(email="a" * 64 + "@" + ".".join(["b" * 60, "c" * 60, "d" * 60]) + ".example.com").errors == {
        "email": EMAIL_TOO_LONG
    }
    assert form(email="a" * 5000 + "@example.com").errors == {"email": EMAIL_TOO_LONG}


@pytest.mark.parametrize(
    ("values", "errors"),
    [
        ((subscribe, "", ""), [("name", REQUIRED["name"]), ("email", REQUIRED["email"])]),
        ((subscribe, "A", "plainaddress"), [("name", TOO_SHORT["name"]), ("email", INVALID_EMAIL)]),
        ((subscribe, "Ada", "a@"), [("email", INVALID_EMAIL)]),
        ((subscribe, "", GOOD_EMAIL), [("name", REQUIRED["name"])]),
        ((contact, "", "", "", ""), [(field, REQUIRED[field]) for field in CONTACT.names]),
        (
            (contact, "A", "B", "a@", "short"),
            [(field, TOO_SHORT[field]) for field in ("firstName", "lastName")]
            + [("email", INVALID_EMAIL), ("message", TOO_SHORT["message"])],
        ),
        (
            (contact, "Ada", "", GOOD_EMAIL, "tiny"),
            [("lastName", REQUIRED["lastName"]), ("message", TOO_SHORT["message"])],
        ),
    ],
)
def test_only_the_invalid_fields_are_reported_one_message_each_in_display_order(values, errors):
    form, *typed = values
    checked = form(*typed)
    assert list(checked.errors.items()) == errors
    assert list(checked.values) == list((SUBSCRIBE if form is subscribe else CONTACT).names)
    assert checked.ok is False


@BOTH_FORMS
@pytest.mark.parametrize("bad", [None, 5, 0, -1.5, ["Ada"], ("x",), {"a": 1}, b"Ada Lovelace", True, object()])
def test_non_string_inputs_are_treated_as_missing(form, bad):
    names = (SUBSCRIBE if form is subscribe else CONTACT).names
    checked = form(*[bad] * len(names))
    assert checked.errors == {field: REQUIRED[field] for field in names}
    assert set(checked.values.values()) == {""}
    assert form(email=[GOOD_EMAIL]).errors == {"email": REQUIRED["email"]}


@pytest.mark.parametrize(
    "typed",
    [
        "7.0",
        "7.",
        ".7",
        "seven",
        "",
        "   ",
        "1" * 50,
        "9" * 50,
        "1_000",
        "1 2",
        "+-3",
        "--3",
        "+",
        "-",
        "0x10",
        "1e3",
        "3/1",
        "7\x00",
        # Arabic-Indic, full-width, superscript and Roman digits
        "١٢",
        "７",
        "²",
        "Ⅻ",
        # not text
        None,
        7,
        7.0,
        ["7"],
        b"7",
        True,
    ],
)
def test_parse_answer_rejects_anything_but_a_plain_whole_number(typed):
    assert parse_answer(typed) is None


TEXT = st.one_of(
    st.text(max_size=50),
    st.text(max_size=3000),
    st.text(alphabet=st.characters(codec="utf-8"), min_size=90, max_size=6000),
    st.text(alphabet="ab@.- \t\r\n\x00", max_size=80),
    st.from_regex(r"[A-Za-z0-9._%+-]{1,20}@[A-Za-z0-9-]{1,20}(\.[A-Za-z]{2,6}){1,3}", fullmatch=True),
)


def _assert_field(checked, field: str, raw: str) -> None:
    if field in checked.errors:
        assert checked.errors[field] in MESSAGES[field]
    elif field != "email":
        value = checked.values[field]
        assert value == raw.strip() and len(value) >= 2  # an accepted text field is exactly the trimmed input
        if field != "message":  # an accepted name: one line without a control character, at most 100
            assert all(ord(ch) >= 0x20 and not 0x7F <= ord(ch) <= 0x9F for ch in value) and len(value) <= 100
            assert "\u2028" not in value and "\u2029" not in value
    else:
        assert "@" in checked.values[field]
        assert len(checked.values[field]) <= 254


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(first_name=TEXT, last_name=TEXT, email=TEXT, message=TEXT)
def test_check_contact_never_raises_and_only_shows_known_messages(first_name, last_name, email, message):
    checked = contact(first_name, last_name, email, message)
    assert list(checked.values) == list(CONTACT.names)
    assert list(checked.errors) == [field for field in CONTACT.names if field in checked.errors]
    for field, raw in zip(CONTACT.names, (first_name, last_name, email, message), strict=True):
        _assert_field(checked, field, raw)


def test_accepted_emails_have_no_line_breaks_or_control_characters():
    """Addresses from tests/unit/email_shapes.py: a third at least must reach the assertions."""
    accepted: list[str] = []

    @settings(max_examples=300, deadline=None)
    @given(email=email_shapes.mostly(email_shapes.ADDRESSES, st.text(max_size=300), 3))
    def accepted_emails_are_one_clean_line(email):
        checked = subscribe("Ada", email)
        event("accepted" if checked.ok else "refused")
        if checked.ok:
            accepted.append(email)
            value = checked.values["email"]
            assert all(ord(ch) >= 0x20 and not 0x7F <= ord(ch) <= 0x9F for ch in value)
            assert not form_fields.has_control_characters(value)
            assert value.isascii() and value.count("@") == 1 and value == value.strip()
        else:
            assert checked.errors["email"]

    accepted_emails_are_one_clean_line()
    assert len(accepted) >= 100, f"only {len(accepted)} of 300 generated addresses were accepted"


@settings(max_examples=200, deadline=None)
@given(typed=st.text(max_size=60))
def test_parse_answer_never_raises_and_returns_small_int_or_none(typed):
    result = parse_answer(typed)
    assert result is None or (type(result) is int and abs(result) <= 999_999)


@given(number=st.integers(min_value=-999_999, max_value=999_999), pad=st.sampled_from(["", " ", "  ", "\t", "\n"]))
def test_parse_answer_round_trips_integers(number, pad):
    assert parse_answer(f"{pad}{number}{pad}") == number


@pytest.mark.parametrize(
    ("typed", "stored"),
    [
        *((valid, valid) for valid in VALID_EMAILS),
        ("a@xn--bcher-kva.de", "a@xn--bcher-kva.de"),
        ("a@bücher.de", "a@xn--bcher-kva.de"),
        ("A@Bücher.DE", "A@xn--bcher-kva.de"),
        ("jo@example.com", "jo@example.com"),
        ("Jo.Reader+books@Example.COM", "Jo.Reader+books@example.com"),
        *((typed, None) for typed in ("ünal@example.com", "jörg@example.com", "用户@例子.广告")),  # needs SMTPUTF8
    ],
)
def test_an_address_is_stored_as_every_smtp_server_takes_it_its_domain_in_ascii_or_refused(typed, stored, monkeypatch):
    import socket

    import dns.resolver

    def refuse(*args, **kwargs):
        raise AssertionError("validation tried a network lookup")

    for owner, name in ((socket, "getaddrinfo"), (socket, "gethostbyname"), (dns.resolver.Resolver, "resolve")):
        monkeypatch.setattr(owner, name, refuse)
    assert form_fields.check_email(typed) == ((stored, None) if stored else (typed, INVALID_EMAIL))
    assert subscribe(email=typed).ok is bool(stored)  # the forms' email field is this rule


@pytest.mark.parametrize(
    ("address", "mailbox"),
    [
        ("Victim+1@Example.com", "victim@example.com"),
        ("victim+news+2@example.com", "victim@example.com"),
        ("victim@example.com", "victim@example.com"),
        ("+only@example.com", "+only@example.com"),
    ],
)
def test_tag_suffixes_and_letter_case_are_one_mailbox(address, mailbox):
    assert form_fields.mailbox_key(address) == mailbox
