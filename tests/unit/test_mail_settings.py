"""PUBLISHER_SMTP_URL and friends: read once, checked at start-up, the password never shown."""

from __future__ import annotations

import re

import pytest

from publisher.config.mail_config import SmtpServer
from publisher.config.settings import ConfigurationError, from_environ
from tests.smtp import LIST_SECRET

BASE = {
    "PUBLISHER_NOTIFY_TO": "books@example.com",
    "PUBLISHER_MAIL_FROM": "site@animals.example",
    "PUBLISHER_LIST_SECRET": LIST_SECRET,
}


def settings_for(url: str, **extra: str):
    return from_environ({"PUBLISHER_SMTP_URL": url, **BASE, **extra}).mail


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("smtps://me%40example.com:p%40ss:word@smtp.x", ("smtp.x", 465, True, False, "me@example.com", "p@ss:word")),
        ("smtp://user:secret@smtp.example.com:587", ("smtp.example.com", 587, False, True, "user", "secret")),
        ("smtp://smtp.example.com", ("smtp.example.com", 587, False, True)),
        # Plain SMTP (STARTTLS only when offered) is for a relay on this machine.
        ("smtp://127.0.0.1:25", ("127.0.0.1", 25, False, False)),
        ("smtp://localhost:2525", ("localhost", 2525, False, False)),
        ("smtp://[::1]:25", ("::1", 25, False, False)),
        ("smtp://10.0.0.5:25", ("10.0.0.5", 25, False, True)),
    ],
)
def test_the_url_says_how_to_reach_and_protect_the_server(url, expected):
    assert settings_for(url).server == SmtpServer(*expected)


def test_addresses_flags_list_secrets_and_postal_address_are_read():
    mail = settings_for(
        "smtps://u:p@smtp.example.com",
        PUBLISHER_NOTIFY_TO=" books@example.com , Editor@Example.org ",
        PUBLISHER_MAIL_FROM="Animals We Confuse <site@animals.example>",
        PUBLISHER_NOTIFY_SUBSCRIBERS="1",
        PUBLISHER_LIST_SECRET=f" {LIST_SECRET}  {'o' * 40} ",
        PUBLISHER_POSTAL_ADDRESS="12 Harbour Lane\\nPortsmouth PO1 2AB",
    )
    assert mail.notify_to == ("books@example.com", "Editor@example.org")
    assert (mail.mail_from, mail.mail_from_name, mail.domain) == (
        "site@animals.example",
        "Animals We Confuse",
        "animals.example",
    )
    assert (mail.notify_subscribers, mail.postal_address) == (True, "12 Harbour Lane\nPortsmouth PO1 2AB")
    assert (mail.list_secrets, mail.list_secret) == ((LIST_SECRET, "o" * 40), LIST_SECRET)  # the first signs
    assert LIST_SECRET not in repr(mail)
    default = settings_for("smtps://u:p@smtp.example.com")
    assert (default.notify_subscribers, default.postal_address) == (False, None)


SMTP = {"PUBLISHER_SMTP_URL": "smtps://u:hunter2@smtp.example.com", **BASE}
NO_SMTP = {"PUBLISHER_SMTP_URL": "", "PUBLISHER_NOTIFY_TO": "", "PUBLISHER_MAIL_FROM": ""}


def test_the_list_emails_get_the_bounce_address_if_one_is_given():
    values = from_environ(SMTP)
    assert values.bounces.address is values.bounces.mailbox is values.mail.bounce_address is None
    given = from_environ({**SMTP, "PUBLISHER_BOUNCE_ADDRESS": "bounces@animals.example"})
    assert given.mail.bounce_address == given.bounces.address == "bounces@animals.example"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("imaps://bounces:s%40cret@imap.example.com/INBOX", ("imap.example.com", 993, True, False, "INBOX")),
        ("imaps://bounces:s%40cret@imap.example.com", ("imap.example.com", 993, True, False, "INBOX")),
        ("imap://bounces:s%40cret@imap.x:143/Bounces%20In", ("imap.x", 143, False, True, "Bounces In")),
        ("imap://bounces:s%40cret@127.0.0.1:1143/INBOX", ("127.0.0.1", 1143, False, False, "INBOX")),
    ],
)
def test_the_mailbox_url_says_how_to_reach_and_protect_the_mailbox(url, expected):
    mailbox = from_environ({**SMTP, "PUBLISHER_BOUNCE_MAILBOX": url}).bounces.mailbox
    assert (mailbox.host, mailbox.port, mailbox.implicit_tls, mailbox.require_starttls, mailbox.folder) == expected
    assert (mailbox.username, mailbox.password) == ("bounces", "s@cret")
    assert "s@cret" not in repr(mailbox) and "cret" not in mailbox.describe()
    assert mailbox.describe().endswith(f"@{expected[0]}:{expected[1]}/{expected[4].replace(' ', '%20')}")


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"PUBLISHER_SMTP_URL": "https://u:hunter2@smtp.x"}, "PUBLISHER_SMTP_URL must start with smtps://"),
        ({"PUBLISHER_SMTP_URL": "smtp://u:hunter2@:587"}, "PUBLISHER_SMTP_URL has no host"),
        ({"PUBLISHER_SMTP_URL": "smtp://u:hunter2@smtp.x:99999"}, "PUBLISHER_SMTP_URL has an invalid port"),
        ({"PUBLISHER_SMTP_URL": "smtp://u:hunter2@smtp.x/inbox"}, "PUBLISHER_SMTP_URL must be only"),
        ({"PUBLISHER_SMTP_URL": "smtp://user@smtp.example.com"}, "PUBLISHER_SMTP_URL names a user but no password"),
        ({"PUBLISHER_NOTIFY_TO": ""}, "PUBLISHER_SMTP_URL is set, so PUBLISHER_NOTIFY_TO is required"),
        ({"PUBLISHER_MAIL_FROM": ""}, "PUBLISHER_SMTP_URL is set, so PUBLISHER_MAIL_FROM is required"),
        ({"PUBLISHER_NOTIFY_TO": "books@example.com, nobody"}, "PUBLISHER_NOTIFY_TO: 'nobody' is not an email address"),
        ({"PUBLISHER_NOTIFY_TO": " , "}, "PUBLISHER_NOTIFY_TO must list at least one address"),
        ({"PUBLISHER_MAIL_FROM": "Site <site@>"}, "PUBLISHER_MAIL_FROM: 'site@' is not an email address"),
        ({"PUBLISHER_MAIL_FROM": "Site <site@animals.example"}, "PUBLISHER_MAIL_FROM must be an address or Name"),
        ({"PUBLISHER_NOTIFY_SUBSCRIBERS": "maybe"}, "PUBLISHER_NOTIFY_SUBSCRIBERS must be 1 (on) or 0 (off)"),
        ({"PUBLISHER_SMTP_CA_FILE": "/nonexistent/ca.pem"}, "PUBLISHER_SMTP_CA_FILE must be a readable PEM file"),
        ({"PUBLISHER_SMTP_URL": "", "PUBLISHER_MAIL_FROM": ""}, "PUBLISHER_NOTIFY_TO is set but PUBLISHER_SMTP_URL"),
        ({"PUBLISHER_LIST_SECRET": ""}, "PUBLISHER_SMTP_URL is set, so PUBLISHER_LIST_SECRET is required: a random"),
        ({"PUBLISHER_LIST_SECRET": "hunter2"}, "PUBLISHER_LIST_SECRET must be at least 32 characters"),
        ({"PUBLISHER_LIST_SECRET": f"{LIST_SECRET} hunter2"}, "PUBLISHER_LIST_SECRET must be at least 32 characters"),
        ({"PUBLISHER_FORM_SECRET": "hunter2"}, "PUBLISHER_FORM_SECRET must be at least 32 characters"),
        ({"PUBLISHER_LIST_SECRET_FILE": "/x"}, "PUBLISHER_LIST_SECRET and PUBLISHER_LIST_SECRET_FILE are both set"),
        ({"PUBLISHER_LIST_SECRET": "", "PUBLISHER_LIST_SECRET_FILE": "/no"}, "PUBLISHER_LIST_SECRET_FILE: cannot read"),
        ({"PUBLISHER_POSTAL_ADDRESS": "x" * 301}, "PUBLISHER_POSTAL_ADDRESS must be a postal address"),
        ({"PUBLISHER_POSTAL_ADDRESS": "12 Harbour Lane\x00"}, "PUBLISHER_POSTAL_ADDRESS must be a postal address"),
        ({"PUBLISHER_BOUNCE_MAILBOX": "pop3://u:hunter2@mail.x"}, "PUBLISHER_BOUNCE_MAILBOX must start with"),
        ({"PUBLISHER_BOUNCE_MAILBOX": "imaps://mail.example.com/INBOX"}, "PUBLISHER_BOUNCE_MAILBOX must name the"),
        ({"PUBLISHER_BOUNCE_MAILBOX": "imaps://u:hunter2@/INBOX"}, "PUBLISHER_BOUNCE_MAILBOX has no host"),
        ({"PUBLISHER_BOUNCE_MAILBOX": "imaps://u:hunter2@x.example:99999"}, "PUBLISHER_BOUNCE_MAILBOX has an invalid"),
        ({"PUBLISHER_BOUNCE_MAILBOX": "imaps://u:hunter2@x.x/INBOX?x=1"}, "PUBLISHER_BOUNCE_MAILBOX must be only"),
        ({"PUBLISHER_BOUNCE_ADDRESS": "bounces+x@animals.example"}, "PUBLISHER_BOUNCE_ADDRESS must be a plain address"),
        ({"PUBLISHER_BOUNCE_ADDRESS": "not an address"}, "PUBLISHER_BOUNCE_ADDRESS: "),
        ({"PUBLISHER_BOUNCE_ADDRESS": f"{'b' * 40}@animals.example"}, "PUBLISHER_BOUNCE_ADDRESS: the part before @"),
        ({"PUBLISHER_BOUNCE_WEBHOOK_SECRET": "hunter2"}, "PUBLISHER_BOUNCE_WEBHOOK_SECRET must be at least 32"),
        ({"PUBLISHER_BOUNCE_POLL_S": "often"}, "PUBLISHER_BOUNCE_POLL_S must be a whole number of at least 1"),
        ({"PUBLISHER_PAUSE_BOUNCE_RATE": "0"}, "PUBLISHER_PAUSE_BOUNCE_RATE must be a percentage"),
        ({"PUBLISHER_PAUSE_COMPLAINT_RATE": "lots"}, "PUBLISHER_PAUSE_COMPLAINT_RATE must be a percentage"),
        ({"PUBLISHER_BOUNCE_CA_FILE": "/nonexistent/ca.pem"}, "PUBLISHER_BOUNCE_CA_FILE must be a readable PEM file"),
        ({**NO_SMTP, "PUBLISHER_BOUNCE_MAILBOX": "imaps://u:hunter2@x.x"}, "PUBLISHER_BOUNCE_MAILBOX is set but"),
        ({**NO_SMTP, "PUBLISHER_BOUNCE_ADDRESS": "bounces@animals.example"}, "PUBLISHER_BOUNCE_ADDRESS is set but"),
    ],
)
def test_a_bad_mail_or_bounce_setting_is_refused_naming_the_variable_without_the_password(env, message):
    with pytest.raises(ConfigurationError) as refused:
        from_environ({**SMTP, **env})
    assert str(refused.value).startswith(message)
    assert "hunter2" not in str(refused.value) and LIST_SECRET not in str(refused.value)


# Passwords a provider may hand out, unencoded: a URL parser would end the user information early.
BREAKING_PASSWORDS = ["Open/Sesame", "Open?Sesame", "Open#Sesame", "Ali@Baba/Open?Sesame#Now", "Open[Sesame", "1/Se"]


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
        from_environ({**SMTP, variable: url.format(password)})
    assert str(refused.value) == shown
    assert not [piece for piece in re.split(r"[/?#@\[\]]", password) if piece and piece in str(refused.value)]


def test_describe_hides_a_password_whatever_it_holds():
    mail = settings_for("smtps://me%40example.com:hunter2@smtp.example.com:465")
    assert mail.server.describe() == "smtps://me%40example.com:***@smtp.example.com:465"
    assert "hunter2" not in repr(mail)
    password = "Op%40en%2FSes%3Fam%23e%5B"  # Op@en/Ses?am#e[, encoded as it must be
    server = from_environ({**BASE, "PUBLISHER_SMTP_URL": f"smtps://site:{password}@smtp.example.com"}).mail.server
    mailbox = from_environ({**SMTP, "PUBLISHER_BOUNCE_MAILBOX": f"imaps://bounces:{password}@imap.example.com"}).bounces
    assert (server.password, mailbox.mailbox.password) == ("Op@en/Ses?am#e[", "Op@en/Ses?am#e[")
    assert server.describe() == "smtps://site:***@smtp.example.com:465"
    assert mailbox.mailbox.describe() == "imaps://bounces:***@imap.example.com:993/INBOX"
