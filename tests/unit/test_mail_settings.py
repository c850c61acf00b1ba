"""PUBLISHER_SMTP_URL and friends: read once, checked at start-up, the password never shown."""

from __future__ import annotations

import pytest

from publisher.settings import ConfigurationError, SmtpServer, mail_settings

BASE = {"PUBLISHER_NOTIFY_TO": "books@example.com", "PUBLISHER_MAIL_FROM": "site@animals.example"}


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
