"""Runtime settings (config/settings.py): each variable read, and a malformed one refused naming it."""

from __future__ import annotations

import re
import threading
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest

from publisher.config import secret_files, settings
from publisher.config.settings import ConfigurationError

MAIL = {
    "PUBLISHER_SMTP_URL": "smtps://site:pass@smtp.example.com:465",
    "PUBLISHER_NOTIFY_TO": "books@animals.example",
    "PUBLISHER_MAIL_FROM": "site@animals.example",
}
GATEWAY = "https://abc123.execute-api.us-east-1.amazonaws.com"


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
        ({"PUBLISHER_SMTP_URL": "  ", "PUBLISHER_NOTIFY_SUBSCRIBERS": "0"}, "mail", None),
        ({"PUBLISHER_GATEWAY_URL": "  "}, "gateway_url", None),
        ({"PUBLISHER_GATEWAY_URL": GATEWAY + "/"}, "gateway_url", GATEWAY),
        ({}, "gateway_api_key", None),
        ({"PUBLISHER_GATEWAY_API_KEY": " k-1 "}, "gateway_api_key", "k-1"),
        ({}, "rate_limit_client", None),
        ({}, "rate_limit_address", None),
        ({"PUBLISHER_RATE_LIMIT_CLIENT": "3/60"}, "rate_limit_client", (3, 60)),
        ({"PUBLISHER_RATE_LIMIT_ADDRESS": " 1000/600 "}, "rate_limit_address", (1000, 600)),
        ({"PUBLISHER_GATEWAY_TIMEOUT_S": "2.5"}, "gateway_timeout_s", 2.5),
        *(({"PUBLISHER_VISITS": value}, "visits_on", True) for value in ("on", "", " ON ")),
        *(({"PUBLISHER_VISITS": value}, "visits_on", False) for value in ("off", "Off")),
        # The cloud gateway keeps no database to show visits in.
        ({"PUBLISHER_GATEWAY_URL": GATEWAY, "PUBLISHER_VISITS": "on"}, "visits_on", False),
        ({"PUBLISHER_VISITS_KEEP_DAYS": " "}, "visits_keep_days", 730),
        ({"PUBLISHER_VISITS_KEEP_DAYS": "1"}, "visits_keep_days", 1),
    ],
)
def test_a_setting_is_read_from_its_variable_or_takes_its_default(environ, field, expected):
    assert getattr(settings.from_environ(environ), field) == expected


MALFORMED = {
    "PUBLISHER_GATEWAY_URL": ["abc123", "ftp://gw.example.com", "https://gw.example.com/prod", "https://gw.x/?x=1"],
    "PUBLISHER_RATE_LIMIT_CLIENT must look like ATTEMPTS/SECONDS": ["8", "8/", "/600", "0/600", "eight/600", "8/-1"],
    "PUBLISHER_GATEWAY_TIMEOUT_S must be a number of seconds": ["0", "-1", "61", "soon"],
    "PUBLISHER_VISITS must be on or off": ["no", "0", "false", "yes please", "of"],
    "PUBLISHER_VISITS_KEEP_DAYS must be a whole number of at least 1": ["0", "-1", "two years", "730.5", "1e3"],
    "PORT must be a TCP port number (1-65535)": ["0", "65536", "http"],
    "LOGLEVEL must be one of": ["loud"],
}


@pytest.mark.parametrize(
    ("refusal", "value"), [(refusal, value) for refusal, values in MALFORMED.items() for value in values]
)
def test_a_malformed_setting_names_the_variable(refusal, value):
    with pytest.raises(ConfigurationError, match="^" + re.escape(refusal)):
        settings.from_environ({refusal.split()[0].removesuffix(":"): value})


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
    assert (read.mail.list_secret, read.mail.server.password, read.gateway_api_key) == (
        "s" * 40,
        "p@ss",
        "key-from-a-file",
    )
    assert (read.bounces.mailbox.password, read.bounces.webhook_secret) == ("hunter2", "w" * 40)
    assert "w" * 40 not in repr(read.bounces) and "hunter2" not in repr(read.bounces)


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
    secret_files.put_database_password(environ)
    assert environ["REFLEX_DB_URL"] == (
        "postgresql+psycopg://publisher:p%40ss%3Aword%2F1@postgres:5432/publisher?connect_timeout=5"
    )
    secret_files.put_database_password(environ)  # read again (a reload, a child process): unchanged
    assert environ["REFLEX_DB_URL"] == (
        "postgresql+psycopg://publisher:p%40ss%3Aword%2F1@postgres:5432/publisher?connect_timeout=5"
    )
    environ["REFLEX_DB_URL"] = "postgresql+psycopg://publisher:other@postgres/db"
    with pytest.raises(ConfigurationError, match=r"^PUBLISHER_DB_PASSWORD_FILE is set, so REFLEX_DB_URL") as e:
        secret_files.put_database_password(environ)
    assert "other" not in str(e.value)
    untouched = {"REFLEX_DB_URL": "sqlite:///publisher.db"}
    secret_files.put_database_password(untouched)
    assert untouched == {"REFLEX_DB_URL": "sqlite:///publisher.db"}


def test_a_secret_not_given_is_made_once_into_the_secrets_folder_readable_by_its_owner_alone(tmp_path):
    environ = {"PUBLISHER_SECRETS_DIR": str(tmp_path)}
    first = settings.from_environ(environ)
    made = tmp_path / "form-secret"
    assert (made.stat().st_mode & 0o777, first.form_secrets) == (0o600, (made.read_text(),))
    assert len(made.read_text()) >= 32
    settings.require_form_secret(settings.from_environ(environ))  # the production server starts
    assert settings.from_environ(environ).form_secrets == first.form_secrets  # every later start: the same one
    assert sorted(path.name for path in tmp_path.iterdir()) == ["form-secret"]  # no list secret without SMTP
    assert first.made_secret_files == {"PUBLISHER_FORM_SECRET": str(made)}

    mail = settings.from_environ({**environ, **MAIL}).mail  # the site sends email: the list's is made there too
    listed = tmp_path / "list-secret"
    assert (listed.stat().st_mode & 0o777, mail.list_secrets) == (0o600, (listed.read_text(),))
    assert listed.read_text() != made.read_text()
    assert settings.from_environ({**environ, **MAIL}).mail.list_secrets == mail.list_secrets


@pytest.mark.parametrize("suffix", ["", "_FILE"])
def test_a_secret_given_is_used_and_nothing_is_made(tmp_path, suffix):
    (tmp_path / "data").mkdir()
    environ = {"PUBLISHER_SECRETS_DIR": str(tmp_path / "data"), **MAIL}
    for name, value in {"PUBLISHER_FORM_SECRET": "f" * 40, "PUBLISHER_LIST_SECRET": "l" * 40}.items():
        (tmp_path / name).write_text(value)
        environ[name + suffix] = str(tmp_path / name) if suffix else value
    read = settings.from_environ(environ)
    assert (read.form_secrets, read.mail.list_secrets) == (("f" * 40,), ("l" * 40,))
    assert (list((tmp_path / "data").iterdir()), read.made_secret_files) == ([], {})


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


def test_the_server_says_at_start_which_secret_it_made_and_where(tmp_path, monkeypatch):
    monkeypatch.setattr(settings, "current", lambda: settings.from_environ({"PUBLISHER_SECRETS_DIR": str(tmp_path)}))
    assert settings.notes_at_start() == [
        f"PUBLISHER_FORM_SECRET is not given: the site signs with the one it made in {tmp_path / 'form-secret'} "
        "(keep it with the data; another container of this site needs the same one, as PUBLISHER_FORM_SECRET_FILE)"
    ]
