"""PUBLISHER_SMTP_URL and friends: read once, checked at start-up, the password never shown."""

from __future__ import annotations

import re

import pytest

from publisher.config.settings import BounceSettings, ConfigurationError, SmtpServer, bounce_settings, mail_settings
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
        (f"{LIST_SECRET} tiny-one", "PUBLISHER_LIST_SECRET must be at least 32 characters"),
    ],
)
def test_a_missing_or_short_list_secret_stops_start_up_without_showing_it(secret, message):
    with pytest.raises(ConfigurationError) as refused:
        settings_for("smtps://u:p@smtp.example.com", PUBLISHER_LIST_SECRET=secret)
    assert str(refused.value).startswith(message)
    assert [part for part in secret.split() if part in str(refused.value)] == []  # no secret, long or short


def test_the_postal_address_is_optional_and_may_span_lines():
    assert settings_for("smtps://u:p@smtp.example.com").postal_address is None
    mail = settings_for("smtps://u:p@smtp.example.com", PUBLISHER_POSTAL_ADDRESS="12 Harbour Lane\\nPortsmouth PO1 2AB")
    assert mail.postal_address == "12 Harbour Lane\nPortsmouth PO1 2AB"


@pytest.mark.parametrize("address", ["x" * 301, "12 Harbour Lane\x00"])
def test_a_postal_address_too_long_or_with_control_characters_is_refused(address):
    with pytest.raises(ConfigurationError, match="PUBLISHER_POSTAL_ADDRESS must be a postal address"):
        settings_for("smtps://u:p@smtp.example.com", PUBLISHER_POSTAL_ADDRESS=address)


# --- The bounce settings (PUBLISHER_BOUNCE_* and the pause thresholds). ---

SMTP = {"PUBLISHER_SMTP_URL": "smtps://u:p@smtp.example.com", **BASE}


def test_the_bounce_settings_have_their_defaults_and_the_list_emails_get_the_bounce_address():
    values = bounce_settings(SMTP)
    assert values == BounceSettings()
    assert (values.poll_s, values.done_folder, values.pause_bounce_rate, values.pause_complaint_rate) == (
        300,
        "Processed",
        5.0,
        0.3,
    )
    assert mail_settings(SMTP).bounce_address is None
    assert mail_settings({**SMTP, "PUBLISHER_BOUNCE_ADDRESS": "bounces@animals.example"}).bounce_address == (
        "bounces@animals.example"
    )


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("imaps://bounces:s%40cret@imap.example.com/INBOX", ("imap.example.com", 993, True, False, "INBOX")),
        ("imaps://bounces:s%40cret@imap.example.com", ("imap.example.com", 993, True, False, "INBOX")),
        (
            "imap://bounces:s%40cret@imap.example.com:143/Bounces%20In",
            ("imap.example.com", 143, False, True, "Bounces In"),
        ),
        ("imap://bounces:s%40cret@127.0.0.1:1143/INBOX", ("127.0.0.1", 1143, False, False, "INBOX")),
    ],
)
def test_the_mailbox_url_says_how_to_reach_and_protect_the_mailbox(url, expected):
    mailbox = bounce_settings({**SMTP, "PUBLISHER_BOUNCE_MAILBOX": url}).mailbox
    assert (mailbox.host, mailbox.port, mailbox.implicit_tls, mailbox.require_starttls, mailbox.folder) == expected
    assert (mailbox.username, mailbox.password) == ("bounces", "s@cret")
    assert "s@cret" not in repr(mailbox) and "cret" not in mailbox.describe()
    assert mailbox.describe().endswith(f"@{expected[0]}:{expected[1]}/{expected[4].replace(' ', '%20')}")


def test_the_webhook_secret_and_the_mailbox_may_come_from_files(tmp_path):
    (tmp_path / "mailbox").write_text("imaps://bounces:hunter2@imap.example.com/INBOX\n")
    (tmp_path / "hook").write_text("w" * 40 + "\n")
    values = bounce_settings(
        {
            **SMTP,
            "PUBLISHER_BOUNCE_MAILBOX_FILE": str(tmp_path / "mailbox"),
            "PUBLISHER_BOUNCE_WEBHOOK_SECRET_FILE": str(tmp_path / "hook"),
        }
    )
    assert values.mailbox.password == "hunter2" and values.webhook_secret == "w" * 40
    assert "w" * 40 not in repr(values) and "hunter2" not in repr(values)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"PUBLISHER_BOUNCE_MAILBOX": "pop3://u:hunter2@mail.example.com"},
            "PUBLISHER_BOUNCE_MAILBOX must start with imaps:// or imap://",
        ),
        (
            {"PUBLISHER_BOUNCE_MAILBOX": "imaps://mail.example.com/INBOX"},
            "PUBLISHER_BOUNCE_MAILBOX must name the mailbox's user and password",
        ),
        ({"PUBLISHER_BOUNCE_MAILBOX": "imaps://u:hunter2@/INBOX"}, "PUBLISHER_BOUNCE_MAILBOX has no host"),
        (
            {"PUBLISHER_BOUNCE_MAILBOX": "imaps://u:hunter2@mail.example.com:99999"},
            "PUBLISHER_BOUNCE_MAILBOX has an invalid port",
        ),
        (
            {"PUBLISHER_BOUNCE_MAILBOX": "imaps://u:hunter2@mail.example.com/INBOX?x=1"},
            "PUBLISHER_BOUNCE_MAILBOX must be only",
        ),
        ({"PUBLISHER_BOUNCE_ADDRESS": "bounces+x@animals.example"}, "PUBLISHER_BOUNCE_ADDRESS must be a plain address"),
        ({"PUBLISHER_BOUNCE_ADDRESS": "not an address"}, "PUBLISHER_BOUNCE_ADDRESS: "),
        (
            {"PUBLISHER_BOUNCE_ADDRESS": f"{'b' * 40}@animals.example"},
            "PUBLISHER_BOUNCE_ADDRESS: the part before @ must be at most",
        ),
        (
            {"PUBLISHER_BOUNCE_WEBHOOK_SECRET": "short"},
            "PUBLISHER_BOUNCE_WEBHOOK_SECRET must be at least 32 characters",
        ),
        ({"PUBLISHER_BOUNCE_POLL_S": "often"}, "PUBLISHER_BOUNCE_POLL_S"),
        ({"PUBLISHER_PAUSE_BOUNCE_RATE": "0"}, "PUBLISHER_PAUSE_BOUNCE_RATE must be a percentage"),
        ({"PUBLISHER_PAUSE_COMPLAINT_RATE": "lots"}, "PUBLISHER_PAUSE_COMPLAINT_RATE must be a percentage"),
        ({"PUBLISHER_BOUNCE_CA_FILE": "/nonexistent/ca.pem"}, "PUBLISHER_BOUNCE_CA_FILE must be a readable PEM file"),
    ],
)
def test_a_bad_bounce_setting_is_refused_naming_the_variable_without_the_password(env, message):
    with pytest.raises(ConfigurationError) as refused:
        bounce_settings({**SMTP, **env})
    assert str(refused.value).startswith(message)
    assert "hunter2" not in str(refused.value)


# Passwords a provider may hand out, unencoded: each holds a character that ends a URL's user
# information for a URL parser, which then finds no password and the URL was printed whole.
BREAKING_PASSWORDS = [
    "Open/Sesame",
    "Open?Sesame",
    "Open#Sesame",
    "Ali@Baba/Open?Sesame#Now",
    "Open[Sesame",
    "1234/Sesame",
]


def pieces(password: str) -> list[str]:
    return [piece for piece in re.split(r"[/?#@\[\]]", password) if piece]


@pytest.mark.parametrize("password", BREAKING_PASSWORDS)
@pytest.mark.parametrize(
    ("variable", "url", "shown"),
    [
        (
            "PUBLISHER_SMTP_URL",
            "smtps://site:{}@smtp.example.com:465",
            "PUBLISHER_SMTP_URL: percent-encode / ? # [ ] and @ in the user and password "
            "(%2F %3F %23 %5B %5D %40); got 'smtps://site:***@smtp.example.com:465'",
        ),
        (
            "PUBLISHER_BOUNCE_MAILBOX",
            "imaps://bounces:{}@imap.example.com:993/INBOX",
            "PUBLISHER_BOUNCE_MAILBOX: percent-encode / ? # [ ] and @ in the user and password, and @ in the "
            "folder (%2F %3F %23 %5B %5D %40); got 'imaps://bounces:***@imap.example.com:993/INBOX'",
        ),
    ],
)
def test_an_unencoded_password_is_refused_saying_how_without_showing_any_of_it(password, variable, url, shown):
    with pytest.raises(ConfigurationError) as refused:
        mail_settings({**SMTP, variable: url.format(password)})
    assert str(refused.value) == shown
    assert not [piece for piece in pieces(password) if piece in str(refused.value)]


def test_describe_hides_a_password_whatever_it_holds():
    password = "Op%40en%2FSes%3Fam%23e%5B"  # Op@en/Ses?am#e[, encoded as it must be
    server = mail_settings({**BASE, "PUBLISHER_SMTP_URL": f"smtps://site:{password}@smtp.example.com"}).server
    mailbox = bounce_settings({**SMTP, "PUBLISHER_BOUNCE_MAILBOX": f"imaps://bounces:{password}@imap.example.com"})
    assert (server.password, mailbox.mailbox.password) == ("Op@en/Ses?am#e[", "Op@en/Ses?am#e[")
    assert server.describe() == "smtps://site:***@smtp.example.com:465"
    assert mailbox.mailbox.describe() == "imaps://bounces:***@imap.example.com:993/INBOX"


def test_a_bounce_mailbox_or_address_without_smtp_is_refused():
    for name in ("PUBLISHER_BOUNCE_MAILBOX", "PUBLISHER_BOUNCE_ADDRESS"):
        value = "imaps://u:hunter2@imap.example.com" if name.endswith("MAILBOX") else "bounces@animals.example"
        with pytest.raises(ConfigurationError) as refused:
            bounce_settings({name: value})
        assert str(refused.value) == (
            f"{name} is set but PUBLISHER_SMTP_URL is not: bounces come back only from emails the site sends"
        )
