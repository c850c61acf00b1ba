"""The route table (publisher/server/middleware.py) is docs/architecture.md's "How a request is routed":
every route a row, named by its path, methods and endpoint, and every row a route."""

from __future__ import annotations

import re
from pathlib import Path

from starlette.routing import Route

from publisher.server import middleware, routes
from publisher.web.pages import PAGES
from tests.unit.test_plain_forms import write_build

ARCHITECTURE = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"


async def app(scope, receive, send):
    pass


def documented_rows() -> set[tuple[str, str, str]]:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split("## How a request is routed", 1)[1].split("\n## ", 1)[0]
    rows = set()
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")] if line.startswith("| ") else []
        if len(cells) != 3 or cells[0] == "Path":
            continue
        endpoint = re.match(r"`(\w+)\.py`: `([\w.]+)(?:\(\))?`", cells[2])  # the module, then a class or a function()
        assert endpoint, line
        methods = cells[1].split(",")[0]
        for path in re.findall(r"`([^`]+)`", cells[0]) or [cells[0]]:
            rows.add((path, methods, f"{endpoint.group(1)}.{endpoint.group(2)}"))
    return rows


def endpoint_name(endpoint) -> str:
    function = getattr(endpoint, "function", None)  # an ASGI function or method the table wraps
    if function is None:
        return f"{type(endpoint).__module__.rsplit('.', 1)[1]}.{type(endpoint).__name__}"
    return f"{function.__module__.rsplit('.', 1)[1]}.{function.__qualname__}"


def table_rows(tmp_path: Path) -> set[tuple[str, str, str]]:
    write_build(tmp_path)
    table = middleware.route_table(app, build_dir=tmp_path)
    rows = set()
    declared = PAGES.slashless_routes()
    for route in table.routes:
        name = endpoint_name(route.endpoint)  # type: ignore[attr-defined]
        if isinstance(route, routes.PathRoute):
            rows.add((route.row, "any", name))
            continue
        assert isinstance(route, Route)
        path = re.sub(r"\{\w+:path\}$", "...", route.path.removesuffix("{trailing:slashes}"))
        if isinstance(route.endpoint, routes.PageInPlace) and (path in declared or path.endswith("/...")):
            path = "every declared page"
        methods = "any" if route.methods is None else "/".join(sorted(route.methods - {"HEAD"}))
        rows.add((path, methods, name))
    return rows


def test_the_documented_route_table_is_the_route_table(tmp_path):
    assert documented_rows() == table_rows(tmp_path)


def test_every_declared_page_has_its_route_after_the_endpoints(tmp_path):
    write_build(tmp_path)
    table = middleware.route_table(app, build_dir=tmp_path)
    paths = [getattr(route, "path", None) for route in table.routes]
    last = table.routes[paths.index("/admin/{page:path}") + 1 :]  # every endpoint claims first
    assert all(isinstance(route.endpoint, routes.PageInPlace) for route in last)  # type: ignore[attr-defined]
    assert {route.path for route in last} == set(PAGES.slashless_routes()) - {"/"}  # type: ignore[attr-defined]
