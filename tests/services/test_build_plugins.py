"""The build's rewrites of Reflex's frontend files run in node, as the browser or Vite runs them;
and what Reflex's development supervisor imports, in a fresh interpreter."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from publisher.build.plugins import prerender_not_found
from publisher.reflex_internals import frontend_files
from tests.support import PROJECT_ROOT
from tests.unit.test_build_plugins import REFLEX_STATE_JS, VITE_CONFIG_EXCERPT

NODE = PROJECT_ROOT / ".venv" / "bin" / "node"


def node(script: Path, env: dict[str, str] | None = None) -> str:
    """What ``script`` printed, run by the venv's node (else one on PATH: fails, never skips, without)."""
    found = str(NODE) if NODE.exists() else shutil.which("node")
    if found is None:
        pytest.fail(f"node is not installed: expected {NODE} (run `make setup-test`) or node on PATH")
    completed = subprocess.run([found, str(script)], capture_output=True, text=True, env=env, timeout=60)
    assert completed.returncode == 0, completed.stderr
    return completed.stdout.strip()


def evaluate_config(tmp_path: Path, config_js: str) -> dict:
    """The rewritten config as node imports it, its prerender function called."""
    (tmp_path / "react-router.config.mjs").write_text(config_js, encoding="utf-8")
    (tmp_path / "run.mjs").write_text(
        'import config from "./react-router.config.mjs";\n'
        "const result = { ...config };\n"
        'if (typeof config.prerender === "function") {\n'
        '  result.prerender = await config.prerender({ getStaticPaths: () => ["/", "/about"] });\n'
        "}\n"
        "console.log(JSON.stringify(result));\n",
        encoding="utf-8",
    )
    return json.loads(node(tmp_path / "run.mjs"))


def test_rewrites_the_config_reflex_actually_generates_and_one_without_prerender_stays_without(tmp_path):
    from types import SimpleNamespace

    from reflex.utils.frontend_skeleton import _update_react_router_config

    fake_config = SimpleNamespace(prepend_frontend_path=lambda path: path)
    generated = _update_react_router_config(fake_config, prerender_routes=True)
    result = evaluate_config(tmp_path, prerender_not_found(generated))
    assert result == {
        "basename": "/",
        "future": {"unstable_optimizeDeps": True},
        "ssr": False,
        "prerender": ["/", "/about", "/__not-found"],
        "build": "build",
    }
    for prerender in ({}, {"prerender": False}):
        config = {"basename": "/", "ssr": False, **prerender}
        assert evaluate_config(tmp_path, prerender_not_found(f"export default {json.dumps(config)};")) == config


def backend_url(tmp_path: Path, state_js: str, *, dev: bool, page: str, configured: str) -> str:
    """getBackendURL of ``state_js`` in node, as a browser on ``page`` runs it (with Vite's DEV flag)."""
    function = re.search(r"export const getBackendURL = .*?\n};\n", state_js, re.S).group(0)
    hostnames = re.search(r"const SAME_DOMAIN_HOSTNAMES = \[.*?\];", state_js).group(0)
    (tmp_path / "url.mjs").write_text(
        f"import.meta.env = {{ DEV: {json.dumps(dev)} }};\n"
        f"const window = {{ location: new URL({json.dumps(page)}) }};\n"
        f"{hostnames}\n{function.replace('export const', 'const')}\n"
        f"console.log(getBackendURL({json.dumps(configured)}).href);\n",
        encoding="utf-8",
    )
    return node(tmp_path / "url.mjs")


BUILT = "ws://localhost:8000/_event"  # the address a build is given


@pytest.mark.parametrize(
    ("dev", "page", "configured", "expected"),
    [
        (False, "http://127.0.0.1:41234/subscribe", BUILT, "ws://127.0.0.1:41234/_event"),
        (False, "http://books.example.com:8080/contact-us", BUILT, "ws://books.example.com:8080/_event"),
        (False, "https://books.example.com/subscribe", BUILT, "wss://books.example.com/_event"),
        (True, "http://localhost:3000/subscribe", BUILT, BUILT),
        (True, "http://127.0.0.1:41234/contact-us", "ws://localhost:41235/_event", "ws://127.0.0.1:41235/_event"),
    ],
)
def test_a_build_reaches_the_backend_at_the_page_origin_and_the_dev_server_on_its_own_port(
    tmp_path, dev, page, configured, expected
):
    patched = frontend_files.state_js_rewrites(REFLEX_STATE_JS)
    assert backend_url(tmp_path, patched, dev=dev, page=page, configured=configured) == expected


@pytest.mark.parametrize("host", [None, "127.0.0.1"])
def test_the_dev_server_listens_only_where_asked_and_hands_posts_to_the_backend_serving_the_rest_itself(tmp_path, host):
    patched = frontend_files.dev_server_plugins(VITE_CONFIG_EXCERPT)
    assert "    publisherDevPosts(),\n    publisherDevHost(),\n    alwaysUseReactDomServerNode()," in patched
    assert frontend_files.dev_server_plugins(patched) == patched
    plugins = [
        re.search(rf"function {name}\(\) \{{.*?\n\}}\n", patched, re.S).group(0)
        for name in ("publisherDevHost", "publisherDevPosts")
    ]
    (tmp_path / "env.json").write_text(json.dumps({"PING": "http://localhost:8123/ping"}))
    (tmp_path / "dev.mjs").write_text(
        "".join(plugins) + "const rule = (await publisherDevPosts().config()).server.proxy['/'];\n"
        "const ask = (method) => rule.bypass({ method, url: '/unsubscribe?token=x' });\n"
        "const host = publisherDevHost().config();\n"
        "console.log(JSON.stringify({ host: host === undefined ? 'unset' : host, target: rule.target,"
        " post: ask('POST'), get: ask('GET') }));\n"
    )
    env = {"PATH": "/usr/bin:/bin"} | ({frontend_files.DEV_HOST_VAR: host} if host else {})
    assert json.loads(node(tmp_path / "dev.mjs", env)) == {
        "host": {"server": {"host": host}} if host else "unset",  # unset: Reflex's (every interface)
        "target": "http://127.0.0.1:8123",  # loopback by number (Node may try ::1 first)
        "post": None,  # proxied
        "get": "/unsubscribe?token=x",  # the page, from the dev server
    }


def test_the_reflex_config_loads_none_of_the_sites_own_modules():
    """Reflex's development workers keep what rxconfig.py imported: an edited sentence would not reload."""
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, rxconfig; print(*sorted(m for m in sys.modules if m.split('.')[0] == 'publisher'))",
        ],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert loaded == [
        "publisher",
        "publisher.build",
        "publisher.build.plugins",
        "publisher.config",
        "publisher.config.secret_files",
        "publisher.reflex_internals",
        "publisher.reflex_internals.component_needs",
        "publisher.reflex_internals.frontend_files",
        "publisher.reflex_internals.state_managers",
        "publisher.reflex_internals.stored_state",
        "publisher.web",
        "publisher.web.page_html",
        "publisher.web.page_kinds",
    ]


def test_a_page_load_keeps_its_token_in_its_memory_and_never_touches_the_browsers_storage(tmp_path):
    """getToken and peekToken as rewritten, with storages that throw when touched: one token throughout."""
    patched = frontend_files.state_js_rewrites(REFLEX_STATE_JS)
    functions = "".join(
        re.search(pattern, patched, re.S).group(0).replace("export const", "const")
        for pattern in (r"export const getToken = .*?\n};\n", r"const peekToken = .*?;[^\n]*\n")
    )
    (tmp_path / "token.mjs").write_text(
        "const touched = (name) => { throw new Error(`${name} touched`); };\n"
        "const window = { get sessionStorage() { return touched('sessionStorage'); },"
        " get localStorage() { return touched('localStorage'); } };\n"
        'let token;\nlet unsavedToken;\nconst TOKEN_KEY = "token";\n'
        "let made = 0;\nconst generateUUID = () => `uuid-${++made}`;\n"
        f"{functions}\n"
        "console.log(JSON.stringify([peekToken(), getToken(), getToken(), peekToken()]));\n",
        encoding="utf-8",
    )
    assert json.loads(node(tmp_path / "token.mjs")) == ["uuid-1"] * 4
