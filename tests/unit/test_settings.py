"""Runtime settings: the site URL must be an absolute http(s) URL."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import pytest

from publisher.config import secret_files, settings
from publisher.config.checks import absolute_http_url
from publisher.config.settings import ConfigurationError

VAR = "REFLEX_DEPLOY_URL"
DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("https://www.example.com/", "https://www.example.com"),
        ("https://www.example.com", "https://www.example.com"),
        ("http://localhost:3000", "http://localhost:3000"),
        ("  https://books.example.com/shop/  ", "https://books.example.com/shop"),
    ],
)
def test_accepts_absolute_http_urls_without_trailing_slash(value, expected):
    assert absolute_http_url(VAR, value) == expected


@pytest.mark.parametrize(
    "value",
    ["", "   ", "example.com", "www.example.com/path", "ftp://x.org", "https://", "/about", "mailto:a@b.org"],
)
def test_rejects_values_that_are_not_absolute_http_urls(value):
    with pytest.raises(ConfigurationError) as excinfo:
        absolute_http_url(VAR, value)
    assert VAR in str(excinfo.value)


@pytest.mark.parametrize("value", ["https://x.org/?a=1", "https://x.org/#top", "https://x.org?a=1#top"])
def test_rejects_queries_and_fragments(value):
    with pytest.raises(ConfigurationError) as excinfo:
        absolute_http_url(VAR, value)
    assert VAR in str(excinfo.value)


def test_configuration_error_names_whatever_variable_was_checked():
    with pytest.raises(ConfigurationError, match="SOME_OTHER_URL"):
        absolute_http_url("SOME_OTHER_URL", "nope")


def test_site_url_reads_reflex_deploy_url(monkeypatch):
    monkeypatch.setattr(
        "reflex_base.config.get_config", lambda: SimpleNamespace(deploy_url="https://books.example.com/")
    )
    assert settings.site_url() == "https://books.example.com"


@pytest.mark.parametrize("deploy_url", [None, "", "books.example.com"])
def test_site_url_fails_clearly_when_deploy_url_is_unusable(monkeypatch, deploy_url):
    monkeypatch.setattr("reflex_base.config.get_config", lambda: SimpleNamespace(deploy_url=deploy_url))
    with pytest.raises(ConfigurationError, match="REFLEX_DEPLOY_URL"):
        settings.site_url()


# --- Gateway settings -------------------------------------------------------------


def test_gateway_url_unset_means_the_embedded_gateway():
    assert settings.gateway_url({}) is None
    assert settings.gateway_url({"PUBLISHER_GATEWAY_URL": "  "}) is None


def test_gateway_url_accepts_scheme_and_host():
    url = "https://abc123.execute-api.us-east-1.amazonaws.com"
    assert settings.gateway_url({"PUBLISHER_GATEWAY_URL": url + "/"}) == url


@pytest.mark.parametrize(
    "value",
    ["abc123", "ftp://gateway.example.com", "https://gateway.example.com/prod", "https://gw.example.com/?x=1"],
)
def test_malformed_gateway_url_names_the_variable(value):
    with pytest.raises(settings.ConfigurationError, match="PUBLISHER_GATEWAY_URL"):
        settings.gateway_url({"PUBLISHER_GATEWAY_URL": value})


def test_gateway_api_key_is_optional():
    assert settings.gateway_api_key({}) is None
    assert settings.gateway_api_key({"PUBLISHER_GATEWAY_API_KEY": " k-1 "}) == "k-1"


def test_rate_limit_overrides_default_to_none():
    assert settings.rate_limits({}) == {"client": None, "address": None}


def test_rate_limit_overrides_are_parsed():
    env = {"PUBLISHER_RATE_LIMIT_CLIENT": "3/60", "PUBLISHER_RATE_LIMIT_ADDRESS": " 1000/600 "}
    assert settings.rate_limits(env) == {"client": (3, 60), "address": (1000, 600)}


@pytest.mark.parametrize("value", ["8", "8/", "/600", "0/600", "eight/600", "8/-1"])
def test_malformed_rate_limit_names_the_variable(value):
    with pytest.raises(settings.ConfigurationError, match="PUBLISHER_RATE_LIMIT_CLIENT"):
        settings.rate_limits({"PUBLISHER_RATE_LIMIT_CLIENT": value})


def test_gateway_timeout_defaults_to_ten_seconds():
    assert settings.gateway_timeout_s({}) == 10.0
    assert settings.gateway_timeout_s({"PUBLISHER_GATEWAY_TIMEOUT_S": "2.5"}) == 2.5


@pytest.mark.parametrize("value", ["0", "-1", "61", "soon"])
def test_malformed_gateway_timeout_names_the_variable(value):
    with pytest.raises(settings.ConfigurationError, match="PUBLISHER_GATEWAY_TIMEOUT_S"):
        settings.gateway_timeout_s({"PUBLISHER_GATEWAY_TIMEOUT_S": value})


# --- Visits (publisher/rules/visit_rules.py, docs/privacy.md) ---------------------------


@pytest.mark.parametrize(("value", "on"), [("on", True), ("", True), (" ON ", True), ("off", False), ("Off", False)])
def test_visits_are_counted_unless_publisher_visits_is_off(value, on):
    assert settings.from_environ({}).visits_on
    assert settings.from_environ({"PUBLISHER_VISITS": value}).visits_on is on


@pytest.mark.parametrize("value", ["no", "0", "false", "yes please", "of"])
def test_a_publisher_visits_that_is_neither_on_nor_off_names_the_variable(value):
    with pytest.raises(ConfigurationError, match="PUBLISHER_VISITS must be on or off"):
        settings.from_environ({"PUBLISHER_VISITS": value})


def test_visits_are_never_counted_with_the_cloud_gateway_which_keeps_no_database_to_show_them():
    cloud = {"PUBLISHER_GATEWAY_URL": "https://abc123.execute-api.us-east-1.amazonaws.com"}
    assert not settings.from_environ(cloud).visits_on
    assert not settings.from_environ({**cloud, "PUBLISHER_VISITS": "on"}).visits_on


def test_daily_visit_counts_are_kept_730_days_unless_publisher_visits_keep_days_says_otherwise():
    assert settings.DEFAULT_VISITS_KEEP_DAYS == 730
    assert settings.from_environ({}).visits_keep_days == 730
    assert settings.from_environ({"PUBLISHER_VISITS_KEEP_DAYS": " "}).visits_keep_days == 730
    assert settings.from_environ({"PUBLISHER_VISITS_KEEP_DAYS": "90"}).visits_keep_days == 90
    assert settings.from_environ({"PUBLISHER_VISITS_KEEP_DAYS": "1"}).visits_keep_days == 1
    rows = [
        line.split("|")[2].strip().strip("`")
        for line in (DOCS / "configuration.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("| `PUBLISHER_VISITS_KEEP_DAYS` |")
    ]
    assert rows == ["730"]  # the default docs/configuration.md gives


@pytest.mark.parametrize("value", ["0", "-1", "two years", "730.5", "1e3"])
def test_a_keep_days_that_is_no_whole_number_of_at_least_1_names_the_variable(value):
    with pytest.raises(ConfigurationError, match="PUBLISHER_VISITS_KEEP_DAYS must be a whole number of at least 1"):
        settings.from_environ({"PUBLISHER_VISITS_KEEP_DAYS": value})


# --- Secrets from files (compose secrets: not in `docker inspect`). ---


def test_a_secret_can_come_from_a_file_and_its_trailing_newline_does_not_count(tmp_path):
    secret = tmp_path / "list_secret"
    secret.write_text("s" * 40 + "\n")
    smtp = tmp_path / "smtp_url"
    smtp.write_text("smtps://site:p%40ss@smtp.example.com:465\n")
    mail = settings.mail_settings(
        {
            "PUBLISHER_SMTP_URL_FILE": str(smtp),
            "PUBLISHER_NOTIFY_TO": "books@animals.example",
            "PUBLISHER_MAIL_FROM": "site@animals.example",
            "PUBLISHER_LIST_SECRET_FILE": str(secret),
        }
    )
    assert mail.list_secrets == ("s" * 40,)
    assert (mail.server.host, mail.server.password) == ("smtp.example.com", "p@ss")
    key = tmp_path / "api_key"
    key.write_text("key-from-a-file\n")
    assert settings.gateway_api_key({"PUBLISHER_GATEWAY_API_KEY_FILE": str(key)}) == "key-from-a-file"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("smtps://site:Open/Sesame@smtp.example.com:465", "smtps://site:***@smtp.example.com:465"),
        ("smtps://site:Open?Sesame@smtp.example.com:465", "smtps://site:***@smtp.example.com:465"),
        ("smtps://site:Open#Sesame@smtp.example.com:465", "smtps://site:***@smtp.example.com:465"),
        ("imaps://bounces:Op@en/Ses?am#e@imap.example.com:993/INBOX", "imaps://bounces:***@imap.example.com:993/INBOX"),
        ("redis://:Open[Sesame@127.0.0.1:6379/0", "redis://:***@127.0.0.1:6379/0"),
        (
            "postgresql+psycopg://publisher:Open/Sesame@db:5432/books",
            "postgresql+psycopg://publisher:***@db:5432/books",
        ),
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
    assert settings.redact_url(url) == shown


def test_a_secret_file_that_cannot_be_read_or_given_twice_names_the_variable(tmp_path):
    with pytest.raises(settings.ConfigurationError, match=r"^PUBLISHER_LIST_SECRET_FILE: cannot read '/nowhere'"):
        settings.from_env_or_file({"PUBLISHER_LIST_SECRET_FILE": "/nowhere"}, "PUBLISHER_LIST_SECRET")
    both = {"PUBLISHER_LIST_SECRET": "x", "PUBLISHER_LIST_SECRET_FILE": str(tmp_path)}
    with pytest.raises(settings.ConfigurationError, match="PUBLISHER_LIST_SECRET and PUBLISHER_LIST_SECRET_FILE"):
        settings.from_env_or_file(both, "PUBLISHER_LIST_SECRET")


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
    with pytest.raises(settings.ConfigurationError, match=r"^PUBLISHER_DB_PASSWORD_FILE is set, so REFLEX_DB_URL") as e:
        secret_files.put_database_password(
            {
                "REFLEX_DB_URL": "postgresql+psycopg://publisher:other@postgres/db",
                "PUBLISHER_DB_PASSWORD_FILE": str(password),
            }
        )
    assert "other" not in str(e.value)
    untouched = {"REFLEX_DB_URL": "sqlite:///publisher.db"}
    secret_files.put_database_password(untouched)
    assert untouched == {"REFLEX_DB_URL": "sqlite:///publisher.db"}


# --- Secrets the site makes itself (the container: PUBLISHER_SECRETS_DIR=/data) ---

MAIL = {
    "PUBLISHER_SMTP_URL": "smtps://site:pass@smtp.example.com:465",
    "PUBLISHER_NOTIFY_TO": "books@animals.example",
    "PUBLISHER_MAIL_FROM": "site@animals.example",
}


def test_without_a_secrets_folder_no_form_secret_is_made_and_the_production_server_is_refused(tmp_path):
    assert settings.from_environ({}).form_secrets == ()
    with pytest.raises(settings.ConfigurationError, match=r"^PUBLISHER_FORM_SECRET is not set: the production"):
        settings.require_form_secret({})
    with pytest.raises(settings.ConfigurationError, match=r"^PUBLISHER_SMTP_URL is set, so PUBLISHER_LIST_SECRET"):
        settings.from_environ(MAIL)


def test_a_short_form_secret_is_refused_naming_the_variable_without_showing_it():
    with pytest.raises(settings.ConfigurationError) as refused:
        settings.from_environ({"PUBLISHER_FORM_SECRET": "s3cret-but-short"})
    assert str(refused.value).startswith("PUBLISHER_FORM_SECRET must be at least 32 characters")
    assert "s3cret-but-short" not in str(refused.value)


def test_a_form_secret_not_given_is_made_once_into_the_secrets_folder_readable_by_its_owner_alone(tmp_path):
    environ = {"PUBLISHER_SECRETS_DIR": str(tmp_path)}
    made = tmp_path / "form-secret"

    first = settings.from_environ(environ)

    assert made.stat().st_mode & 0o777 == 0o600
    assert first.form_secrets == (made.read_text(),)
    assert len(made.read_text()) >= settings.FORM_SECRET_MIN
    settings.require_form_secret(environ)  # the production server starts
    assert settings.from_environ(environ).form_secrets == first.form_secrets  # every later start: the same one
    assert sorted(path.name for path in tmp_path.iterdir()) == ["form-secret"]  # no list secret without SMTP
    assert first.made_secret_files == {"PUBLISHER_FORM_SECRET": str(made)}


def test_a_list_secret_not_given_is_made_there_too_when_the_site_sends_email(tmp_path):
    environ = {"PUBLISHER_SECRETS_DIR": str(tmp_path), **MAIL}

    mail = settings.from_environ(environ).mail

    made = tmp_path / "list-secret"
    assert made.stat().st_mode & 0o777 == 0o600
    assert mail.list_secrets == (made.read_text(),)
    assert made.read_text() != (tmp_path / "form-secret").read_text()
    assert settings.from_environ(environ).mail.list_secrets == mail.list_secrets


@pytest.mark.parametrize("given_as_a_file", [False, True])
def test_a_secret_given_is_used_and_nothing_is_made(tmp_path, given_as_a_file):
    folder = tmp_path / "data"
    folder.mkdir()
    form, listed = "f" * 40, "l" * 40
    if given_as_a_file:
        (tmp_path / "form").write_text(form)
        (tmp_path / "list").write_text(listed)
        secrets = {
            "PUBLISHER_FORM_SECRET_FILE": str(tmp_path / "form"),
            "PUBLISHER_LIST_SECRET_FILE": str(tmp_path / "list"),
        }
    else:
        secrets = {"PUBLISHER_FORM_SECRET": form, "PUBLISHER_LIST_SECRET": listed}

    read = settings.from_environ({"PUBLISHER_SECRETS_DIR": str(folder), **MAIL, **secrets})

    assert (read.form_secrets, read.mail.list_secrets) == ((form,), (listed,))
    assert list(folder.iterdir()) == []
    assert read.made_secret_files == {}


def test_a_replica_given_an_empty_secret_file_is_refused_not_given_a_secret_of_its_own(tmp_path):
    """Compose mounts the form secret as a file; unset when compose ran, the file is empty. Each replica
    making its own would refuse the questions the others asked."""
    (tmp_path / "form_secret").write_text("")
    environ = {
        "PUBLISHER_SECRETS_DIR": str(tmp_path / "data"),
        "PUBLISHER_FORM_SECRET_FILE": str(tmp_path / "form_secret"),
    }
    with pytest.raises(settings.ConfigurationError, match=r"^PUBLISHER_FORM_SECRET is not set"):
        settings.require_form_secret(environ)
    assert not (tmp_path / "data").exists()


def test_a_secrets_folder_that_cannot_be_written_stops_start_up_naming_both_variables(tmp_path):
    (tmp_path / "a-file").write_text("")
    environ = {"PUBLISHER_SECRETS_DIR": str(tmp_path / "a-file" / "data")}
    with pytest.raises(settings.ConfigurationError) as error:
        settings.from_environ(environ)
    assert str(error.value).startswith("PUBLISHER_FORM_SECRET is not set, and none can be made in ")
    assert "(PUBLISHER_SECRETS_DIR)" in str(error.value)


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
    for name in (
        "PUBLISHER_FORM_SECRET",
        "PUBLISHER_FORM_SECRET_FILE",
        "PUBLISHER_SMTP_URL",
        "PUBLISHER_SMTP_URL_FILE",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PUBLISHER_SECRETS_DIR", str(tmp_path))
    settings.reload()
    try:
        assert settings.notes_at_start() == [
            f"PUBLISHER_FORM_SECRET is not given: the site signs with the one it made in {tmp_path / 'form-secret'} "
            "(keep it with the data; another container of this site needs the same one, as PUBLISHER_FORM_SECRET_FILE)"
        ]
    finally:
        monkeypatch.undo()
        settings.reload()
