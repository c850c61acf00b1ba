"""The site as `make run` serves it: no PUBLISHER_GATEWAY_URL, so the embedded local gateway.

A separate pytest invocation from tests/site: each suite builds and starts its own
production server, and a build replaces the files the other server would serve.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.browser import browser, page  # noqa: F401 (fixtures)
from tests.support import ProductionServer, built_site, running_server  # noqa: F401 (built_site: a fixture)


@pytest.fixture(scope="session")
def db_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    return f"sqlite:///{tmp_path_factory.mktemp('db') / 'embedded.db'}"


@pytest.fixture(scope="session")
def server(built_site: None, tmp_path_factory: pytest.TempPathFactory, db_url: str) -> Iterator[ProductionServer]:
    env = {"PUBLISHER_GATEWAY_URL": "", "REFLEX_DB_URL": db_url}
    with running_server(tmp_path_factory.mktemp("server"), env) as prod:
        yield prod


@pytest.fixture(scope="session")
def base_url(server: ProductionServer) -> str:
    return server.base_url
