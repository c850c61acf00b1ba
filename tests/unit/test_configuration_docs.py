"""The settings object and docs/configuration.md name the same variables with the same defaults."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from reflex_base import config as reflex_config

from publisher.config import settings

CONFIGURATION = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"

# Documented, but read by Reflex or Granian themselves (the site reads Reflex's through its config).
READ_BY_THE_FRAMEWORK = {
    "REFLEX_DEPLOY_URL",
    "REFLEX_API_URL",
    "REFLEX_TRUSTED_PROXY_HOPS",
    "REFLEX_REDIS_URL",
    "REFLEX_REDIS_TOKEN_EXPIRATION",
    "REFLEX_DB_URL",
    "REFLEX_STATES_WORKDIR",
    "GRANIAN_WORKERS",
    "SQLALCHEMY_POOL_SIZE",
    "SQLALCHEMY_MAX_OVERFLOW",
}
# Documented, but variables of the Makefile (make VAR=...), compose.yaml or the tests.
READ_BY_THE_MAKEFILE_COMPOSE_OR_TESTS = {
    "DEV_PORT",
    "BACKEND_PORT",
    "DEV_HOST",
    "IMAGE",
    "VENV",
    "PYTHON",
    "REDIS_MAXMEMORY",
    "CHROMIUM_PATH",
}


def documented() -> set[str]:
    """The variables in the first cell of each row of the table: `| `VAR` |` or `| `A`, `B` (note) |`."""
    names = set()
    for line in CONFIGURATION.read_text(encoding="utf-8").splitlines():
        if line.startswith("| `"):
            names.update(re.findall(r"`([A-Z][A-Z0-9_]*)`", line.split("|")[1]))
    return names


def test_the_table_lists_every_variable_the_settings_read_and_nothing_else():
    read_by_the_site = set(settings.VARIABLES)
    assert read_by_the_site, "the settings object reads no variable?"
    others = READ_BY_THE_FRAMEWORK | READ_BY_THE_MAKEFILE_COMPOSE_OR_TESTS
    assert not read_by_the_site & others, "a variable is listed both as the site's and as another's"
    missing = read_by_the_site - documented()
    assert not missing, f"read by publisher/config/settings.py but not in docs/configuration.md: {sorted(missing)}"
    unread = documented() - read_by_the_site - others
    assert not unread, (
        f"in docs/configuration.md but read by nobody: {sorted(unread)} "
        "(read it in Settings, or list it here as the framework's, the Makefile's or compose's)"
    )


def test_every_default_the_table_states_alone_is_the_settings_default():
    defaults = {str(field.validation_alias): field.default for field in settings.Settings.model_fields.values()}
    checked = 0
    for line in CONFIGURATION.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.split("|")]
        variable, default = (cells[1], cells[2]) if len(cells) > 3 else ("", "")
        if re.fullmatch(r"`[A-Z_]+`", variable) and re.fullmatch(r"`[^`]+`", default) and variable[1:-1] in defaults:
            stated = default[1:-1]
            expected = float(stated) if re.fullmatch(r"[\d.]+", stated) else {"on": True}.get(stated, stated)
            assert defaults[variable[1:-1]] == expected, variable
            checked += 1
    assert checked >= 18


def test_the_framework_variables_the_site_reads_are_reflexs_config_fields():
    config_fields = {field.name for field in dataclasses.fields(reflex_config.get_config())}
    for attribute in ("deploy_url", "db_url", "redis_url", "trusted_proxy_hops", "redis_token_expiration"):
        assert attribute in config_fields, f"Reflex's config has no {attribute} any more"
        assert "REFLEX_" + attribute.upper() in READ_BY_THE_FRAMEWORK
