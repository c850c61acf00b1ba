"""Runtime settings (config/settings.py, config/mail_config.py): each variable read once, checked at start-up, a
malformed one refused naming it, a password never shown."""

from __future__ import annotations

import re
import threading
from concurrent.futures import ThreadPoolExecutor
from operator import attrgetter
from types import SimpleNamespace
from urllib.parse import quote

import pytest
from pydantic import ValidationError

from publisher.config import secret_files, settings
from publisher.config.settings import ConfigurationError, from_environ
from tests.smtp import LIST_SECRET

MAIL = {
    "PUBLISHER_SMTP_URL": "smtps://site:pass@smtp.example.com:465",
    "PUBLISHER_NOTIFY_TO": "books@animals.example",
    "PUBLISHER_MAIL_FROM": "site@animals.example",
}
BASE = {
    "PUBLISHER_NOTIFY_TO": "books@example.com",
    "PUBLISHER_MAIL_FROM": "site@animals.example",
    "PUBLISHER_LIST_SECRET": LIST_SECRET,
}
SMTP = {"PUBLISHER_SMTP_URL": "smtps://u:hunter2@smtp.example.com", **BASE}
NO_SMTP = {"PUBLISHER_SMTP_URL": "", "PUBLISHER_NOTIFY_TO": "", "PUBLISHER_MAIL_FROM": ""}
BOUNCES = {**SMTP, "PUBLISHER_BOUNCE_ADDRESS": "bounces@animals.example"}
GATEWAY = "https://abc123.execute-api.us-east-1.amazonaws.com"
TABS = {"PUBLISHER_MAX_TABS_PER_ADDRESS": "5", "PUBLISHER_NEW_TABS_PER_MINUTE": "7", "PUBLISHER_MAX_TABS": "9"}


@pytest.mark.parametrize(
    ("deploy_url", "expected"),
    [
        ("https://www.example.com/", "https://www.example.com"),
        ("http://localhost:3000", "http://localhost:3000"),
        ("  https://books.example.com/shop/  ", "https://books.example.com/shop"),
        *((value, None) for value in [None, "", "   ", "example.com", "www.example.com/path", "ftp://x.org"]),
        *(
            (value, None)
            for value in ["https://", "/about", "mailto:a@b.org", "https://x.org/?a=1", "https://x.org#top"]
        ),
    ],
)
def test_the_site_url_is_reflex_deploy_url_without_trailing_slash_or_a_refusal(monkeypatch, deploy_url, expected):
    monkeypatch.setattr("reflex_base.config.get_config", lambda: SimpleNamespace(deploy_url=deploy_url))
    if expected is None:
        with pytest.raises(ConfigurationError, match="REFLEX_DEPLOY_URL"):
            settings.site_url()
    else:
        assert settings.site_url() == expected


@pytest.mark.parametrize(
    ("environ", "field", "expected"),
    [
        ({}, "gateway_url", None),  # the embedded gateway
        ({}, "mail", None),  # it stores only
        ({}, "gateway_api_key", None),
        ({}, "rate_limit_client", None),
        ({}, "rate_limit_address", None),
        ({"PUBLISHER_SMTP_URL": "  ", "PUBLISHER_NOTIFY_SUBSCRIBERS": "0"}, "mail", None),
        ({"PUBLISHER_GATEWAY_URL": "  "}, "gateway_url", None),
        ({"PUBLISHER_GATEWAY_URL": GATEWAY + "/"}, "gateway_url", GATEWAY),
        ({"PUBLISHER_GATEWAY_API_KEY": " k-1 "}, "gateway_api_key", "k-1"),
        ({"PUBLISHER_RATE_LIMIT_CLIENT": "3/60"}, "rate_limit_client", (3, 60)),
        ({"PUBLISHER_RATE_LIMIT_ADDRESS": " 1000/600 "}, "rate_limit_address", (1000, 600)),
        ({"PUBLISHER_GATEWAY_TIMEOUT_S": "2.5"}, "gateway_timeout_s", 2.5),
        *(({"PUBLISHER_VISITS": value}, "visits_on", True) for value in ("on", "", " ON ")),
        *(({"PUBLISHER_VISITS": value}, "visits_on", False) for value in ("off", "Off")),
        # The cloud gateway keeps no database to show visits in.
        ({"PUBLISHER_GATEWAY_URL": GATEWAY, "PUBLISHER_VISITS": "on"}, "visits_on", False),
        ({"PUBLISHER_VISITS_KEEP_DAYS": " "}, "visits_keep_days", 730),
        ({"PUBLISHER_VISITS_KEEP_DAYS": "1"}, "visits_keep_days", 1),
        ({}, "tabs", settings.TabLimits(per_address=60, new_per_minute=60, per_worker=2000, max_lifetime_s=7200)),
        (TABS, "tabs", settings.TabLimits(5, 7, 9)),
        ({"PUBLISHER_MAX_TAB_LIFETIME_S": "600"}, "tabs.max_lifetime_s", 600),
        *((SMTP, field, None) for field in ("bounce_address", "bounce_mailbox")),
        (SMTP, "send_rate", 10.0),
        ({**SMTP, "PUBLISHER_SEND_RATE": "0"}, "send_rate", 0),
        # The envelope sender of every list email.
        (BOUNCES, "bounce_address", "bounces@animals.example"),
    ],
)
def test_a_setting_is_read_from_its_variable_or_takes_its_default(environ, field, expected):
    assert attrgetter(field)(settings.from_environ(environ)) == expected


MALFORMED = {
    "PUBLISHER_GATEWAY_URL": ["abc123", "ftp://gw.example.com", "https://gw.example.com/prod", "https://gw.x/?x=1"],
    "PUBLISHER_RATE_LIMIT_CLIENT must look like ATTEMPTS/SECONDS": ["8", "8/", "/600", "0/600", "eight/600", "8/-1"],
    "PUBLISHER_GATEWAY_TIMEOUT_S must be a number of seconds": ["0", "-1", "61", "soon"],
    "PUBLISHER_VISITS must be on or off": ["no", "0", "false", "yes please", "of"],
    "PUBLISHER_VISITS_KEEP_DAYS must be a whole number of at least 1": ["0", "-1", "two years", "730.5", "1e3", "7_30"],
    "PUBLISHER_MAX_TABS must be a whole number of at least 1": ["5.0", "+5", "0", "many"],
    "PUBLISHER_MAX_TABS_PER_ADDRESS must be a whole number of at least 1": ["0", "many"],
    "PUBLISHER_NEW_TABS_PER_MINUTE must be a whole number of at least 1": ["0", "many"],
    "PUBLISHER_MAX_TAB_LIFETIME_S must be a whole number of at least 1": ["0", "-5", "two hours", "1.5"],
    # Checked without PUBLISHER_SMTP_URL too (docs/configuration.md).
    "PUBLISHER_CONFIRMATIONS_PER_HOUR must be a whole number of at least 1": ["0"],
    "PORT must be a TCP port number (1-65535)": ["0", "65536", "http", "80.0", "+80", "8_000"],
    "LOGLEVEL must be one of": ["loud"],
}


def test_each_variable_is_read_by_its_exact_name_once(monkeypatch):
    monkeypatch.setenv("publisher_visits", "off")
    monkeypatch.setenv("Port", "1")
    read = settings.from_environ()
    assert (read.visits_on, read.port) == (True, 8000)
    with pytest.raises(ValidationError, match="frozen"):  # read once: nothing changes it afterwards
        read.port = 1


def test_every_secret_can_come_from_a_file_and_its_trailing_newline_does_not_count(tmp_path):
    given = {
        "PUBLISHER_SMTP_URL": "smtps://site:p%40ss@smtp.example.com:465",
        "PUBLISHER_LIST_SECRET": "s" * 40,
        "PUBLISHER_GATEWAY_API_KEY": "key-from-a-file",
        "PUBLISHER_BOUNCE_MAILBOX": "imaps://bounces:hunter2@imap.example.com/INBOX",
        "PUBLISHER_BOUNCE_WEBHOOK_SECRET": "w" * 40,
    }
    for name, value in given.items():
        (tmp_path / name).write_text(value + "\n")
    environ = {**MAIL, "PUBLISHER_SMTP_URL": ""} | {name + "_FILE": str(tmp_path / name) for name in given}
    read = settings.from_environ(environ)
    assert (read.list_secrets[0], read.smtp_url.password, read.gateway_api_key) == ("s" * 40, "p@ss", "key-from-a-file")
    assert (read.bounce_mailbox.password, read.bounce_webhook_secret) == ("hunter2", "w" * 40)
    assert "w" * 40 not in repr(read) and "hunter2" not in repr(read)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("imaps://bounces:Op@en/Ses?am#e@imap.example.com:993/INBOX", "imaps://bounces:***@imap.example.com:993/INBOX"),
        ("redis://:Open[Sesame@127.0.0.1:6379/0", "redis://:***@127.0.0.1:6379/0"),
        ("postgresql+psycopg://publisher:Open/Sesame@db/books", "postgresql+psycopg://publisher:***@db/books"),
        ("smtps://me%40example.com:hunter2@smtp.example.com:465", "smtps://me%40example.com:***@smtp.example.com:465"),
        # An @ after the host: more is hidden, never less.
        ("imaps://u:Open/Sesame@imap.example.com/Bounces@x", "imaps://u:***@x"),
        ("smtp:site:Open/Sesame@smtp.example.com", "***@smtp.example.com"),
        # Nothing to hide.
        ("smtp://site@smtp.example.com:587", "smtp://site@smtp.example.com:587"),
        ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
        ("sqlite:///publisher.db", "sqlite:///publisher.db"),
    ],
)
def test_a_url_is_printed_with_its_password_hidden_whatever_the_password_holds(url, shown):
    assert secret_files.redact_url(url) == shown


def test_the_database_password_from_a_file_goes_into_the_url_and_nowhere_else(tmp_path):
    password = tmp_path / "postgres_password"
    password.write_text("p@ss:word/1\n")
    environ = {
        "REFLEX_DB_URL": "postgresql+psycopg://publisher@postgres:5432/publisher?connect_timeout=5",
        "PUBLISHER_DB_PASSWORD_FILE": str(password),
    }
    filled = "postgresql+psycopg://publisher:p%40ss%3Aword%2F1@postgres:5432/publisher?connect_timeout=5"
    secret_files.put_database_password(environ)
    assert environ["REFLEX_DB_URL"] == filled
    secret_files.put_database_password(environ)  # read again (a reload, a child process): unchanged
    assert environ["REFLEX_DB_URL"] == filled
    environ["REFLEX_DB_URL"] = "postgresql+psycopg://publisher:other@postgres/db"
    with pytest.raises(ConfigurationError, match=r"^PUBLISHER_DB_PASSWORD_FILE is set, so REFLEX_DB_URL") as e:
        secret_files.put_database_password(environ)
    assert "other" not in str(e.value)
    untouched = {"REFLEX_DB_URL": "sqlite:///publisher.db"}
    secret_files.put_database_password(untouched)
    assert untouched == {"REFLEX_DB_URL": "sqlite:///publisher.db"}


def test_a_secret_not_given_is_made_once_into_the_secrets_folder_readable_by_its_owner_alone(tmp_path, monkeypatch):
    environ = {"PUBLISHER_SECRETS_DIR": str(tmp_path)}
    first = settings.from_environ(environ)
    made = tmp_path / "form-secret"
    assert (made.stat().st_mode & 0o777, first.form_secrets) == (0o600, (made.read_text(),))
    assert len(made.read_text()) >= 32
    settings.require_form_secret(settings.from_environ(environ))  # the production server starts
    assert settings.from_environ(environ).form_secrets == first.form_secrets  # every later start: the same one
    assert sorted(path.name for path in tmp_path.iterdir()) == ["form-secret"]  # no list secret without SMTP
    monkeypatch.setattr(settings, "current", lambda: first)  # and the server says so at start
    assert settings.notes_at_start() == [
        f"PUBLISHER_FORM_SECRET is not given: the site signs with the one it made in {made} (keep it with the data; "
        "another container of this site needs the same one, as PUBLISHER_FORM_SECRET_FILE)"
    ]

    mail = settings.from_environ({**environ, **MAIL}).mail  # the site sends email: the list's is made there too
    listed = tmp_path / "list-secret"
    assert (listed.stat().st_mode & 0o777, mail.list_secrets) == (0o600, (listed.read_text(),))
    assert listed.read_text() != made.read_text()
    assert settings.from_environ({**environ, **MAIL}).mail.list_secrets == mail.list_secrets


@pytest.mark.parametrize("suffix", ["", "_FILE"])
def test_a_secret_given_is_used_and_nothing_is_made(tmp_path, suffix, monkeypatch):
    (tmp_path / "data").mkdir()
    environ = {"PUBLISHER_SECRETS_DIR": str(tmp_path / "data"), **MAIL}
    for name, value in {"PUBLISHER_FORM_SECRET": "f" * 40, "PUBLISHER_LIST_SECRET": "l" * 40}.items():
        (tmp_path / name).write_text(value)
        environ[name + suffix] = str(tmp_path / name) if suffix else value
    read = settings.from_environ(environ)
    assert (read.form_secrets, read.mail.list_secrets) == (("f" * 40,), ("l" * 40,))
    assert list((tmp_path / "data").iterdir()) == []
    monkeypatch.setattr(settings, "current", lambda: read)
    assert not [note for note in settings.notes_at_start() if "is not given" in note]


@pytest.mark.parametrize("empty_file", [False, True])
def test_without_a_form_secret_or_a_folder_to_make_one_the_production_server_is_refused(tmp_path, empty_file):
    """Compose mounts an unset secret as an empty file: a replica's own would refuse the others' questions."""
    (tmp_path / "form_secret").write_text("")
    environ = {
        "PUBLISHER_SECRETS_DIR": str(tmp_path / "data"),
        "PUBLISHER_FORM_SECRET_FILE": str(tmp_path / "form_secret"),
    }
    read = settings.from_environ(environ if empty_file else {})
    assert read.form_secrets == ()
    with pytest.raises(ConfigurationError, match=r"^PUBLISHER_FORM_SECRET is not set: the production"):
        settings.require_form_secret(read)
    assert not (tmp_path / "data").exists()


def test_a_secrets_folder_that_cannot_be_written_stops_start_up_naming_both_variables(tmp_path):
    (tmp_path / "a-file").write_text("")
    refusal = r"^PUBLISHER_FORM_SECRET is not set, and none can be made in .* \(PUBLISHER_SECRETS_DIR\)"
    with pytest.raises(ConfigurationError, match=refusal):
        settings.from_environ({"PUBLISHER_SECRETS_DIR": str(tmp_path / "a-file" / "data")})


def test_processes_starting_together_all_get_the_one_secret_made(tmp_path):
    path = tmp_path / "form-secret"
    start = threading.Barrier(8)

    def read() -> str:
        start.wait()
        return secret_files.secret_made_once(path)

    with ThreadPoolExecutor(8) as pool:
        found = set(pool.map(lambda _: read(), range(8)))

    assert found == {path.read_text()}
    assert [entry.name for entry in tmp_path.iterdir()] == ["form-secret"]  # no half-made file left


def settings_for(url: str, **extra: str):
    return from_environ({"PUBLISHER_SMTP_URL": url, **BASE, **extra}).mail


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("smtps://me%40example.com:p%40ss:word@smtp.x", ("smtp.x", 465, True, False, "me@example.com", "p@ss:word")),
        # Op@en/Ses?am#e[, encoded as it must be
        ("smtps://u:Op%40en%2FSes%3Fam%23e%5B@smtp.x", ("smtp.x", 465, True, False, "u", "Op@en/Ses?am#e[")),
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
    found = settings_for(url).smtp_url
    assert (found.host, found.port, found.implicit_tls, found.require_starttls) == expected[:4]
    assert (found.username, found.password) == (expected[4:] or ("", ""))
    if found.password:  # shown with the password hidden, the user as the URL gives it
        assert found.describe().endswith(f"://{quote(found.username, safe='')}:***@{found.host}:{found.port}")


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
    assert (*mail.mail_from, mail.domain) == ("site@animals.example", "Animals We Confuse", "animals.example")
    assert (mail.notify_subscribers, mail.postal_address) == (True, "12 Harbour Lane\nPortsmouth PO1 2AB")
    assert mail.list_secrets == (LIST_SECRET, "o" * 40)  # the first signs
    assert LIST_SECRET not in repr(mail)
    default = settings_for("smtps://u:p@smtp.example.com")
    assert (default.notify_subscribers, default.postal_address) == (False, None)


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
    mailbox = from_environ({**SMTP, "PUBLISHER_BOUNCE_MAILBOX": url}).bounce_mailbox
    assert (mailbox.host, mailbox.port, mailbox.implicit_tls, mailbox.require_starttls, mailbox.folder) == expected
    assert (mailbox.username, mailbox.password) == ("bounces", "s@cret")
    assert "s@cret" not in repr(mailbox) and "cret" not in mailbox.describe()
    assert mailbox.describe().endswith(f"@{expected[0]}:{expected[1]}/{expected[4].replace(' ', '%20')}")


# Beside a working SMTP configuration (SMTP).
BAD_MAIL = [
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
    ({"PUBLISHER_DKIM_SELECTOR": "mail2026"}, "PUBLISHER_DKIM_SELECTOR is set, so PUBLISHER_DKIM_KEY_FILE"),
    ({"PUBLISHER_DKIM_KEY_FILE": __file__}, "PUBLISHER_DKIM_KEY_FILE is set, so PUBLISHER_DKIM_SELECTOR"),
    ({"PUBLISHER_DKIM_SELECTOR": "s", "PUBLISHER_DKIM_KEY_FILE": "/no.pem"}, "PUBLISHER_DKIM_KEY_FILE: cannot read"),
    ({"PUBLISHER_DKIM_SELECTOR": "s", "PUBLISHER_DKIM_KEY_FILE": __file__}, f"PUBLISHER_DKIM_KEY_FILE: {__file__!r}"),
    ({"PUBLISHER_SEND_RATE": "fast"}, "PUBLISHER_SEND_RATE must be emails per second"),
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
]
# Passwords a provider may hand out, unencoded: a URL parser would end the user information early.
BREAKING_PASSWORDS = ["Open/Sesame", "Open?Sesame", "Open#Sesame", "Ali@Baba/Open?Sesame#Now", "Open[Sesame", "1/Se"]
UNENCODED = {
    "smtps://site:{}@smtp.example.com:465": "PUBLISHER_SMTP_URL: percent-encode / ? # [ ] and @ in the user and "
    "password (%2F %3F %23 %5B %5D %40); got 'smtps://site:***@smtp.example.com:465'",
    "imaps://bounces:{}@imap.example.com:993/INBOX": "PUBLISHER_BOUNCE_MAILBOX: percent-encode / ? # [ ] and @ in "
    "the user and password, and @ in the folder (%2F %3F %23 %5B %5D %40); got "
    "'imaps://bounces:***@imap.example.com:993/INBOX'",
}
REFUSED = [  # the settings, what the refusal starts with, what it must not show
    *(({refusal.split()[0]: value}, refusal, ()) for refusal, values in MALFORMED.items() for value in values),
    *(({**SMTP, **env}, refusal, ("hunter2", LIST_SECRET)) for env, refusal in BAD_MAIL),
    *(
        ({**SMTP, refusal.split(":")[0]: url.format(password)}, refusal, re.split(r"[/?#@\[\]]", password))
        for password in BREAKING_PASSWORDS
        for url, refusal in UNENCODED.items()
    ),
]


@pytest.mark.parametrize(("environ", "refusal", "hidden"), REFUSED)
def test_a_malformed_setting_is_refused_naming_the_variable_without_a_piece_of_a_password(environ, refusal, hidden):
    with pytest.raises(ConfigurationError) as refused:
        from_environ(environ)
    assert str(refused.value).startswith(refusal)
    assert not [piece for piece in hidden if piece and piece in str(refused.value)]
