"""One production build and server for the whole site suite, posting its forms to a recording test
gateway, its database a temporary file."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.support import ProductionServer, RecordingGateway, running_server


@pytest.fixture(scope="session")
def server(
    built_site: None, tmp_path_factory: pytest.TempPathFactory, test_gateway: RecordingGateway
) -> Iterator[ProductionServer]:
    workdir = tmp_path_factory.mktemp("server")
    env = {"PUBLISHER_GATEWAY_URL": test_gateway.url, "REFLEX_DB_URL": f"sqlite:///{workdir / 'site.db'}"}
    with running_server(workdir, env) as prod:
        yield prod


@pytest.fixture(scope="session")
def base_url(server: ProductionServer) -> str:
    return server.base_url


@pytest.fixture(scope="module")
def client(base_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base_url, follow_redirects=False, timeout=10) as http:
        yield http
