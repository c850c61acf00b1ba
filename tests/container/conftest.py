"""The image built once per session, and containers of it; without podman (or root) the session
fails with the install command, never skips."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.containers import Container, Volume, build_image, engine_problem, image_config

IMAGE = "localhost/publisher:test"


@pytest.fixture(scope="session")
def image(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    problem = engine_problem()
    if problem:
        pytest.fail(problem, pytrace=False)
    seconds = build_image(IMAGE, tmp_path_factory.mktemp("image") / "build.log")
    size_mb = image_config(IMAGE)["Size"] / 1e6
    with request.config.pluginmanager.getplugin("capturemanager").global_and_fixture_disabled():
        print(f"\nimage {IMAGE}: built in {seconds:.0f} s, {size_mb:.0f} MB")
    return IMAGE


@pytest.fixture
def containers() -> Iterator[Callable[..., Container]]:
    """Start containers of the image (removed after the test, with their logs on failure)."""
    started: list[Container] = []

    def start(image: str, **options) -> Container:
        container = Container(image, **options)
        started.append(container)
        container.start()
        return container

    yield start
    for container in started:
        print(f"--- logs of {container.name} ---\n{container.logs()}")
        container.remove()


@pytest.fixture
def volume() -> Iterator[Volume]:
    created = Volume()
    yield created
    created.remove()
