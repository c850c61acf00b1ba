"""PUBLISHER_SMTP_URL and friends: read once, checked at start-up, the password never shown."""

from __future__ import annotations

import pytest

from publisher.config.settings import ConfigurationError, SmtpServer, mail_settings
from tests.smtp import LIST_SECRET

BASE = {
    "PUBLISHER_NOTIFY_TO": "books@example.com",
    "PUBLISHER_MAIL_FROM": "site@animals.example",
    "PUBLISHER_LIST_SECRET": LIST_SECRET,
}


def settings_for(url: str, **extra: str):
    return mail_settings({"PUBLISHER_SMTP_URL": url, **BASE, **extra})


def test_without_an_smtp_url_the_gateway_stores_only():
    assert mail_settings({}) is None
    assert mail_settings({"PUBLISHER_SMTP_URL": "  ", "PUBLISHER_NOTIFY_SUBSCRIBERS": "0"}) is None


@pytest.mark.parametrize(
    "url, expected",
    [
        (
            "smtps://me%40example.com:p%40ss:word@smtp.example.com",
            SmtpServer(
                "smtp.example.com",
                465,
                implicit_tls=True,
                require_starttls=False,
                username="me@example.com",
                password="p@ss:word",
            ),
        ),
        (
            "smtp://user:secret@smtp.example.com:587",
            SmtpServer(
                "smtp.example.com", 587, implicit_tls=False, require_starttls=True, username="user", password="secret"
            ),
        ),
        ("smtp://smtp.example.com", SmtpServer("smtp.example.com", 587, implicit_tls=False, require_starttls=True)),
        # Plain SMTP (STARTTLS only when offered) is for a relay on this machine.
        ("smtp://127.0.0.1:25", SmtpServer("127.0.0.1", 25, implicit_tls=False, require_starttls=False)),
        ("smtp://localhost:2525", SmtpServer("localhost", 2525, implicit_tls=False, require_starttls=False)),
        ("smtp://[::1]:25", SmtpServer("::1", 25, implicit_tls=False, require_starttls=False)),
        ("smtp://10.0.0.5:25", SmtpServer("10.0.0.5", 25, implicit_tls=False, require_starttls=True)),
    ],
)
def test_the_url_says_how_to_reach_and_protect_the_server(url, expected):
    assert settings_for(url).server == expected


def test_addresses_and_flags_are_read():
    mail = settings_for(
        "smtps://u:p@smtp.example.com",
        PUBLISHER_NOTIFY_TO=" books@example.com , Editor@Example.org ",
        PUBLISHER_MAIL_FROM="Animals We Confuse <site@animals.example>",
        PUBLISHER_NOTIFY_SUBSCRIBERS="1",
    )
    assert mail.notify_to == ("books@example.com", "Editor@example.org")
    assert (mail.mail_from, mail.mail_from_name, mail.domain) == (
        "site@animals.example",
        "Animals We Confuse",
        "animals.example",
    )
    assert mail.notify_subscribers is True
    assert settings_for("smtps://u:p@smtp.example.com").notify_subscribers is False


def test_describe_never_shows_the_password():
    mail = settings_for("smtps://me%40example.com:hunter2@smtp.example.com:465")
    assert mail.server.describe() == "smtps://me%40example.com:***@smtp.example.com:465"
    assert "hunter2" not in repr(mail)


@pytest.mark.parametrize(
    "env, message",
    [
        (
            {"PUBLISHER_SMTP_URL": "https://user:hunter2@smtp.example.com"},
            "PUBLISHER_SMTP_URL must start with smtps:// or smtp://",
        ),
        ({"PUBLISHER_SMTP_URL": "smtp://user:hunter2@:587"}, "PUBLISHER_SMTP_URL has no host"),
        (
            {"PUBLISHER_SMTP_URL": "smtp://user:hunter2@smtp.example.com:99999"},
            "PUBLISHER_SMTP_URL has an invalid port",
        ),
        (
            {"PUBLISHER_SMTP_URL": "smtp://user:hunter2@smtp.example.com/inbox"},
            "PUBLISHER_SMTP_URL must be only scheme, user, password, host and port",
        ),
        ({"PUBLISHER_SMTP_URL": "smtp://user@smtp.example.com"}, "PUBLISHER_SMTP_URL names a user but no password"),
        (
            {"PUBLISHER_SMTP_URL": "smtps://u:hunter2@smtp.example.com", "PUBLISHER_NOTIFY_TO": ""},
            "PUBLISHER_SMTP_URL is set, so PUBLISHER_NOTIFY_TO is required",
        ),
        (
            {"PUBLISHER_SMTP_URL": "smtps://u:hunter2@smtp.example.com", "PUBLISHER_MAIL_FROM": ""},
            "PUBLISHER_SMTP_URL is set, so PUBLISHER_MAIL_FROM is required",
        ),
        (
            {
                "PUBLISHER_SMTP_URL": "smtps://u:hunter2@smtp.example.com",
                "PUBLISHER_NOTIFY_TO": "books@example.com, nobody",
            },
            "PUBLISHER_NOTIFY_TO: 'nobody' is not an email address",
        ),
        (
            {"PUBLISHER_SMTP_URL": "smtps://u:hunter2@smtp.example.com", "PUBLISHER_NOTIFY_TO": " , "},
            "PUBLISHER_NOTIFY_TO must list at least one address",
        ),
        (
            {"PUBLISHER_SMTP_URL": "smtps://u:hunter2@smtp.example.com", "PUBLISHER_MAIL_FROM": "Site <site@>"},
            "PUBLISHER_MAIL_FROM: 'site@' is not an email address",
        ),
        (
            {
                "PUBLISHER_SMTP_URL": "smtps://u:hunter2@smtp.example.com",
                "PUBLISHER_MAIL_FROM": "Site <site@animals.example",
            },
            "PUBLISHER_MAIL_FROM must be an address or Name <address>",
        ),
        (
            {"PUBLISHER_SMTP_URL": "smtps://u:hunter2@smtp.example.com", "PUBLISHER_NOTIFY_SUBSCRIBERS": "maybe"},
            "PUBLISHER_NOTIFY_SUBSCRIBERS must be 1 (on) or 0 (off)",
        ),
        (
            {
                "PUBLISHER_SMTP_URL": "smtps://u:hunter2@smtp.example.com",
                "PUBLISHER_SMTP_CA_FILE": "/nonexistent/ca.pem",
            },
            "PUBLISHER_SMTP_CA_FILE must be a readable PEM file",
        ),
        (
            {"PUBLISHER_SMTP_URL": "", "PUBLISHER_MAIL_FROM": ""},
            "PUBLISHER_NOTIFY_TO is set but PUBLISHER_SMTP_URL is not",
        ),
    ],
)
def test_a_bad_setting_is_refused_naming_the_variable_without_the_password(env, message):
    with pytest.raises(ConfigurationError) as refused:
        mail_settings({**BASE, **env})
    assert str(refused.value).startswith(message)
    assert "hunter2" not in str(refused.value)


def test_the_list_secret_signs_links_and_several_may_be_accepted():
    mail = settings_for("smtps://u:p@smtp.example.com", PUBLISHER_LIST_SECRET=f" {LIST_SECRET}  {'o' * 40} ")
    assert mail.list_secrets == (LIST_SECRET, "o" * 40)
    assert mail.list_secret == LIST_SECRET  # the first signs new links
    assert LIST_SECRET not in repr(mail)


@pytest.mark.parametrize(
    ("secret", "message"),
    [
        ("", "PUBLISHER_SMTP_URL is set, so PUBLISHER_LIST_SECRET is required: a random secret of at least 32"),
        ("too-short", "PUBLISHER_LIST_SECRET must be at least 32 characters"),
        (f"{LIST_SECRET} short", "PUBLISHER_LIST_SECRET must be at least 32 characters"),
    ],
)
def test_a_missing_or_short_list_secret_stops_start_up_without_showing_it(secret, message):
    with pytest.raises(ConfigurationError) as refused:
        settings_for("smtps://u:p@smtp.example.com", PUBLISHER_LIST_SECRET=secret)
    assert str(refused.value).startswith(message)
    assert "too-short" not in str(refused.value)


def test_the_postal_address_is_optional_and_may_span_lines():
    assert settings_for("smtps://u:p@smtp.example.com").postal_address is None
    mail = settings_for("smtps://u:p@smtp.example.com", PUBLISHER_POSTAL_ADDRESS="12 Harbour Lane\\nPortsmouth PO1 2AB")
    assert mail.postal_address == "12 Harbour Lane\nPortsmouth PO1 2AB"


@pytest.mark.parametrize("address", ["x" * 301, "12 Harbour Lane\x00"])
def test_a_postal_address_too_long_or_with_control_characters_is_refused(address):
    with pytest.raises(ConfigurationError, match="PUBLISHER_POSTAL_ADDRESS must be a postal address"):
        settings_for("smtps://u:p@smtp.example.com", PUBLISHER_POSTAL_ADDRESS=address)
