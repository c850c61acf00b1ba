"""Build-time additions: prerendered 404 page and robots.txt."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import reflex_base

from publisher.build import plugins as build_plugins
from publisher.build.plugins import prerender_not_found, robots_txt, use_prerendered_not_found
from publisher.web import page_kinds as static_or_app
from publisher.web.feed import release_feed
from tests.support import PROJECT_ROOT

REFLEX_CONFIG_JSON = '{"basename": "/", "ssr": false, "prerender": true, "build": "build"}'
REFLEX_CONFIG_JS = f"export default {REFLEX_CONFIG_JSON};"
NODE = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "node"

needs_node = pytest.mark.skipif(
    not (NODE.exists() or shutil.which("node")), reason="node is not available to evaluate the config"
)


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
    node = str(NODE) if NODE.exists() else shutil.which("node")
    completed = subprocess.run(
        [node, str(tmp_path / "run.mjs")], capture_output=True, text=True, timeout=60, check=False
    )
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


# --- prerender_not_found --------------------------------------------------------------


def test_prerender_not_found_keeps_the_config_and_adds_the_private_path():
    output = prerender_not_found(REFLEX_CONFIG_JS)
    assert "export default config" in output
    assert REFLEX_CONFIG_JSON in output
    assert "/__not-found" in output
    assert output.count("export default") == 1


def test_prerender_not_found_tolerates_surrounding_whitespace():
    assert prerender_not_found(f"\n  {REFLEX_CONFIG_JS}\n\n") == prerender_not_found(REFLEX_CONFIG_JS)


@needs_node
def test_rewritten_config_prerenders_the_static_paths_and_the_not_found_page(tmp_path):
    result = evaluate_config(tmp_path, prerender_not_found(REFLEX_CONFIG_JS))
    assert result["prerender"] == ["/", "/about", "/__not-found"]
    assert {key: result[key] for key in ("basename", "ssr", "build")} == {
        "basename": "/",
        "ssr": False,
        "build": "build",
    }


@needs_node
def test_rewritten_config_without_prerender_stays_without_prerender(tmp_path):
    result = evaluate_config(tmp_path, prerender_not_found('export default {"basename": "/", "ssr": false};'))
    assert result == {"basename": "/", "ssr": False}


@needs_node
def test_rewritten_config_with_prerender_disabled_stays_disabled(tmp_path):
    config = 'export default {"basename": "/", "ssr": false, "prerender": false};'
    result = evaluate_config(tmp_path, prerender_not_found(config))
    assert result["prerender"] is False


@needs_node
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


@pytest.mark.parametrize(
    "config_js",
    [
        "module.exports = {prerender: true};",
        "const config = {}; export default config;",
        "",
    ],
)
def test_prerender_not_found_rejects_an_unexpected_layout(config_js):
    with pytest.raises(RuntimeError, match="react-router.config.js"):
        prerender_not_found(config_js)


# --- use_prerendered_not_found --------------------------------------------------------


@pytest.fixture
def static_dir(tmp_path: Path) -> Path:
    """A build output with the prerendered not-found page and the SPA shell."""
    (tmp_path / "__not-found").mkdir()
    (tmp_path / "__not-found" / "index.html").write_text("<html>Oops! Page Not Found</html>")
    (tmp_path / "__not-found.html").write_text("<html>redirect</html>")
    (tmp_path / "__spa-fallback.html").write_text("<html>empty shell</html>")
    (tmp_path / "index.html").write_text("<html>home</html>")
    (tmp_path / "about").mkdir()
    (tmp_path / "about" / "index.html").write_text("<html>about</html>")
    return tmp_path


def test_use_prerendered_not_found_makes_the_not_found_page_the_fallback(static_dir):
    use_prerendered_not_found(static_dir)
    assert (static_dir / "__spa-fallback.html").read_text() == "<html>Oops! Page Not Found</html>"
    assert not (static_dir / "__not-found").exists()
    assert not (static_dir / "__not-found.html").exists()


def test_use_prerendered_not_found_leaves_other_pages_alone(static_dir):
    use_prerendered_not_found(static_dir)
    assert sorted(p.relative_to(static_dir).as_posix() for p in static_dir.rglob("*")) == [
        "__spa-fallback.html",
        "about",
        "about/index.html",
        "index.html",
    ]
    assert (static_dir / "index.html").read_text() == "<html>home</html>"
    assert (static_dir / "about" / "index.html").read_text() == "<html>about</html>"


def test_use_prerendered_not_found_without_the_html_alias(static_dir):
    (static_dir / "__not-found.html").unlink()
    use_prerendered_not_found(static_dir)
    assert (static_dir / "__spa-fallback.html").read_text() == "<html>Oops! Page Not Found</html>"


def test_use_prerendered_not_found_fails_when_the_page_was_not_prerendered(static_dir):
    shutil.rmtree(static_dir / "__not-found")
    with pytest.raises(RuntimeError, match="not prerendered"):
        use_prerendered_not_found(static_dir)
    # Nothing was changed on the way to the error.
    assert (static_dir / "__spa-fallback.html").read_text() == "<html>empty shell</html>"


# --- robots.txt -----------------------------------------------------------------------


def test_robots_txt():
    assert robots_txt("https://books.example.com") == (
        "User-agent: *\nAllow: /\n\nSitemap: https://books.example.com/sitemap.xml\n"
    )


# --- The plugin hooks -----------------------------------------------------------------


def test_plugin_adds_robots_txt_for_the_configured_site(monkeypatch):
    monkeypatch.setattr("publisher.config.settings.site_url", lambda: "https://books.example.com")
    assets = build_plugins.SiteFilesPlugin().get_static_assets()
    assert assets == [
        (Path("public") / "robots.txt", robots_txt("https://books.example.com")),
        (Path("public") / "releases.atom", release_feed("https://books.example.com")),
    ]


@pytest.fixture
def manifest(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "backend" / "static_or_app.json"
    monkeypatch.setattr(static_or_app, "MANIFEST", path)
    return path


def test_plugin_registers_the_router_config_and_backend_url_rewrites(manifest):
    tasks = []
    build_plugins.SiteFilesPlugin().pre_compile(add_modify_task=lambda *args: tasks.append(args), unevaluated_pages=[])
    assert tasks == [
        ("react-router.config.js", prerender_not_found),
        ("utils/state.js", build_plugins.backend_at_page_origin),
        ("vite.config.js", build_plugins.dev_server_plugins),
    ]


def test_plugin_post_build_installs_the_not_found_page(static_dir, manifest):
    static_or_app.write_manifest({route: static_or_app.PageKind(route, ()) for route in ("/", "/about", "404")})
    build_plugins.SiteFilesPlugin().post_build(static_dir=str(static_dir))
    assert "Oops! Page Not Found" in (static_dir / "__spa-fallback.html").read_text()
    assert not (static_dir / "__not-found").exists()


# --- Backend URL: the page's origin in builds, Reflex's rule on the dev server ----------

REFLEX_STATE_JS = (Path(reflex_base.__file__).parent / ".templates" / "web" / "utils" / "state.js").read_text()


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
    node = str(NODE) if NODE.exists() else shutil.which("node")
    completed = subprocess.run([node, str(tmp_path / "url.mjs")], capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    return completed.stdout.strip()


@needs_node
@pytest.mark.parametrize(
    ("page", "expected"),
    [
        ("http://127.0.0.1:41234/subscribe", "ws://127.0.0.1:41234/_event"),
        ("http://books.example.com:8080/contact-us", "ws://books.example.com:8080/_event"),
        ("https://books.example.com/subscribe", "wss://books.example.com/_event"),
    ],
)
def test_a_build_reaches_the_backend_at_the_page_origin(tmp_path, page, expected):
    patched = build_plugins.backend_at_page_origin(REFLEX_STATE_JS)
    assert backend_url(tmp_path, patched, dev=False, page=page, configured="ws://localhost:8000/_event") == expected


@needs_node
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


@needs_node
@pytest.mark.parametrize(
    ("page", "configured", "expected"),
    [
        ("http://localhost:3000/subscribe", "ws://localhost:8000/_event", "ws://localhost:8000/_event"),
        ("http://127.0.0.1:41234/contact-us", "ws://localhost:41235/_event", "ws://127.0.0.1:41235/_event"),
    ],
)
def test_the_dev_server_reaches_the_backend_on_its_own_port(tmp_path, page, configured, expected):
    patched = build_plugins.backend_at_page_origin(REFLEX_STATE_JS)
    assert backend_url(tmp_path, patched, dev=True, page=page, configured=configured) == expected


def test_backend_url_rewrite_is_idempotent_and_upgrades_an_older_rewrite():
    patched = build_plugins.backend_at_page_origin(REFLEX_STATE_JS)
    assert build_plugins.backend_at_page_origin(patched) == patched  # .web keeps the file between builds
    older = REFLEX_STATE_JS.replace(build_plugins._HOSTNAME_ONLY, build_plugins._SAME_ORIGIN_ALWAYS)
    assert build_plugins.backend_at_page_origin(older) == patched


def test_backend_url_patch_refuses_an_unknown_layout():
    with pytest.raises(RuntimeError, match="getBackendURL changed"):
        build_plugins.backend_at_page_origin("export const getBackendURL = () => new URL(env.PING);")


# --- The dev server's listening address ----------------------------------------------

VITE_CONFIG_EXCERPT = """import { defineConfig } from "vite";

export default defineConfig((config) => ({
  base: "/",
  plugins: [
    alwaysUseReactDomServerNode(),
    reactRouter(),
  ].concat([]),
  server: { port: process.env.PORT, hmr: true },
}));
"""


@needs_node
@pytest.mark.parametrize(("host", "expected"), [(None, "undefined"), ("127.0.0.1", '{"server":{"host":"127.0.0.1"}}')])
def test_dev_host_plugin_sets_the_listening_address_only_when_asked(tmp_path, host, expected):
    patched = build_plugins.dev_host_from_environment(VITE_CONFIG_EXCERPT)
    assert "  plugins: [\n    publisherDevHost(),\n    alwaysUseReactDomServerNode()," in patched
    assert build_plugins.dev_host_from_environment(patched) == patched
    plugin = re.search(r"function publisherDevHost\(\) \{.*?\n\}\n", patched, re.S).group(0)
    (tmp_path / "host.mjs").write_text(
        f"{plugin}\nconst result = publisherDevHost().config();\n"
        "console.log(result === undefined ? 'undefined' : JSON.stringify(result));\n"
    )
    env = {"PATH": "/usr/bin:/bin"} | ({build_plugins.DEV_HOST_VAR: host} if host else {})
    node = str(NODE) if NODE.exists() else shutil.which("node")
    completed = subprocess.run([node, str(tmp_path / "host.mjs")], capture_output=True, text=True, env=env, timeout=60)
    assert completed.stdout.strip() == expected, completed.stderr


def test_dev_host_plugin_applies_to_the_config_reflex_generates():
    from reflex.utils import frontend_skeleton
    from reflex_base.config import get_config

    patched = build_plugins.dev_host_from_environment(frontend_skeleton._compile_vite_config(get_config()))
    assert "publisherDevHost()," in patched and 'apply: "serve"' in patched


def test_the_dev_server_hands_posts_to_the_backend_and_serves_everything_else_itself(tmp_path):
    patched = build_plugins.dev_server_plugins(VITE_CONFIG_EXCERPT)
    assert "    publisherDevPosts(),\n    publisherDevHost(),\n    alwaysUseReactDomServerNode()," in patched
    assert build_plugins.dev_server_plugins(patched) == patched
    plugin = re.search(r"function publisherDevPosts\(\) \{.*?\n\}\n", patched, re.S).group(0)
    (tmp_path / "env.json").write_text(json.dumps({"PING": "http://localhost:8123/ping"}))
    (tmp_path / "posts.mjs").write_text(
        f"{plugin}\nconst rule = (await publisherDevPosts().config()).server.proxy['/'];\n"
        "const ask = (method) => rule.bypass({ method, url: '/unsubscribe?token=x' });\n"
        "console.log(JSON.stringify({ target: rule.target, post: ask('POST'), get: ask('GET') }));\n"
    )
    node = str(NODE) if NODE.exists() else shutil.which("node")
    completed = subprocess.run([node, str(tmp_path / "posts.mjs")], capture_output=True, text=True, timeout=60)
    assert json.loads(completed.stdout) == {
        "target": "http://127.0.0.1:8123",  # the backend's own port; loopback by number (Node may try ::1 first)
        "post": None,  # proxied
        "get": "/unsubscribe?token=x",  # the page, from the dev server
    }, completed.stderr


def test_dev_host_plugin_refuses_an_unknown_layout():
    with pytest.raises(RuntimeError, match="vite.config.js layout"):
        build_plugins.dev_host_from_environment("export default {};")


# --- Deferred app start -------------------------------------------------------------------

BOOT_HTML = (
    '<head><link rel="modulepreload" href="/assets/entry.client-B1.js"/>'
    '<link rel="modulepreload" href="/assets/root-C2.js"/>'
    '<link rel="stylesheet" href="/assets/styles-D3.css"/></head>'
    "<body><script>window.__reactRouterContext = {};</script>"
    '<script type="module" async="">import "/assets/manifest-E4.js";</script></body>'
)


def test_app_boot_and_its_preloads_are_made_inert_without_changing_the_structure():
    deferred = build_plugins.defer_app_boot(BOOT_HTML)
    assert 'rel="modulepreload"' not in deferred
    assert deferred.count('<link rel="x-app-modulepreload" href="/assets/') == 2
    assert '<script type="text/x-app-boot" data-app-boot="">import "/assets/manifest-E4.js";</script>' in deferred
    assert '<link rel="stylesheet" href="/assets/styles-D3.css"/>' in deferred  # CSS still loads at once
    assert "<script>window.__reactRouterContext = {};</script>" in deferred
    assert deferred.count("<") == BOOT_HTML.count("<")  # same elements, only attributes differ
    assert build_plugins.defer_app_boot(deferred) == deferred


def test_site_js_starts_exactly_what_the_build_made_inert():
    site_js = (Path(__file__).resolve().parents[2] / "assets" / "site.js").read_text()
    assert f'hasAttribute("{build_plugins.STATIC_PAGE_ATTRIBUTE}")' in site_js
    assert f'link[rel="{build_plugins.DEFERRED_PRELOAD_REL}"]' in site_js
    assert "script[data-app-boot]" in site_js


# --- Pages without a form lose the app ----------------------------------------------------

PRERENDERED = (
    '<!DOCTYPE html><html lang="en"><head><meta charSet="utf-8"/>'
    '<link rel="modulepreload" href="/assets/entry.client-B1.js"/>'
    '<link href="/assets/styles-D3.css" rel="stylesheet" type="text/css"/>'
    "<script>document.documentElement.style.colorScheme = 'light';</script>"
    '<script defer="" src="/site.js"></script></head>'
    '<body><div><main id="main-content"><h1>Latest Releases</h1><p hidden="">kept as it is</p></main></div>'
    '<script type="application/ld+json">{"@type": "WebSite"}</script>'
    '<script>((storageKey, restoreKey) => {})("k", null)</script>'
    "<script>window.__reactRouterContext = {};</script>"
    '<script type="module" async="">import "/assets/manifest-E4.js";</script>'
    '<!--$?--><template id="B:0"></template><!--/$-->'
    '<script id="_R_">requestAnimationFrame(function(){$RT=performance.now()});</script>'
    '<div hidden id="S:0"><script>window.__reactRouterContext.streamController.close();</script></div>'
    '<script>$RC("B:0","S:0")</script></body></html>'
)


def test_a_static_page_keeps_its_content_styles_site_js_and_data_and_loses_the_app():
    stripped = build_plugins.strip_app(PRERENDERED)
    assert "modulepreload" not in stripped
    assert "/assets/manifest-E4.js" not in stripped
    assert "__reactRouterContext" not in stripped
    assert "$RC" not in stripped and "_R_" not in stripped and "storageKey" not in stripped
    assert 'id="B:0"' not in stripped and 'id="S:0"' not in stripped and "<!--$" not in stripped
    assert '<main id="main-content"><h1>Latest Releases</h1><p hidden="">kept as it is</p></main>' in stripped
    assert '<link href="/assets/styles-D3.css" rel="stylesheet" type="text/css"/>' in stripped
    assert '<script defer="" src="/site.js"></script>' in stripped
    assert '<script type="application/ld+json">{"@type": "WebSite"}</script>' in stripped
    assert "<script>document.documentElement.style.colorScheme = 'light';</script>" in stripped
    assert stripped.count("<script") == 3
    assert '<html data-static-page="" lang="en">' in stripped


def test_the_deferred_boot_of_an_earlier_build_step_is_stripped_too():
    stripped = build_plugins.strip_app(build_plugins.defer_app_boot(PRERENDERED))
    assert "x-app-modulepreload" not in stripped and "data-app-boot" not in stripped


@pytest.mark.parametrize(
    ("file", "route"),
    [
        ("index.html", "/"),
        ("about.html", "/about"),
        ("about/index.html", "/about"),
        ("contact-us/index.html", "/contact-us"),
        ("__spa-fallback.html", "404"),
        ("books/new/index.html", "/books/new"),
    ],
)
def test_each_prerendered_file_is_matched_to_its_route(tmp_path, file, route):
    assert build_plugins.html_route(tmp_path, tmp_path / file) == route


@pytest.fixture
def built_pages(tmp_path) -> Path:
    for file in ("index.html", "about.html", "about/index.html", "subscribe/index.html", "__spa-fallback.html"):
        (tmp_path / file).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / file).write_text(PRERENDERED)
    return tmp_path


def kinds(**app_reasons: tuple[str, ...]) -> dict[str, static_or_app.PageKind]:
    routes = {"/": "index", "/about": "about", "/subscribe": "subscribe", "404": "not_found"}
    return {route: static_or_app.PageKind(route, app_reasons.get(name, ())) for route, name in routes.items()}


def test_finishing_the_build_strips_static_pages_and_defers_the_app_on_the_others(built_pages):
    build_plugins.finish_pages(built_pages, kinds(subscribe=("<form> handles on_submit",)))
    for file in ("index.html", "about.html", "about/index.html", "__spa-fallback.html"):
        assert (built_pages / file).read_text() == build_plugins.finish_page(PRERENDERED, starts_app=False), file
    subscribe = (built_pages / "subscribe" / "index.html").read_text()
    assert subscribe == build_plugins.finish_page(PRERENDERED, starts_app=True)
    assert subscribe == build_plugins.hoist_emotion_styles(build_plugins.defer_app_boot(PRERENDERED))


EMOTION_RULE = '<style data-emotion="css 17rg0dp">.css-17rg0dp{position:fixed;width:100vw;height:0;}</style>'


def test_emotion_rules_streamed_into_the_body_move_to_the_head_unchanged():
    html = (
        '<html><head><link rel="stylesheet" href="/styles.css"/></head><body><div id="root">'
        f'<main>Hi</main>{EMOTION_RULE}<div class="css-17rg0dp" title="x"></div></div></body></html>'
    )
    hoisted = build_plugins.hoist_emotion_styles(html)
    assert hoisted == (
        f'<html><head><link rel="stylesheet" href="/styles.css"/>{EMOTION_RULE}</head><body><div id="root">'
        '<main>Hi</main><div class="css-17rg0dp" title="x"></div></div></body></html>'
    )
    assert build_plugins.hoist_emotion_styles(hoisted) == hoisted  # nothing left to move
    no_emotion = "<html><head></head><body><style>p{}</style></body></html>"
    assert build_plugins.hoist_emotion_styles(no_emotion) == no_emotion  # only emotion's own rules


def test_a_prerendered_file_without_a_decision_fails_the_build_naming_it(built_pages):
    (built_pages / "extra").mkdir()
    (built_pages / "extra" / "index.html").write_text(PRERENDERED)
    with pytest.raises(RuntimeError, match=r"extra/index.html serves '/extra', which no page registered"):
        build_plugins.finish_pages(built_pages, kinds())


def test_a_maintainer_who_adds_an_event_handler_to_home_gets_a_home_that_starts_the_app(built_pages, manifest):
    """Through the plugin's hooks, as `reflex export` calls them: compile, then finish the build."""
    import reflex as rx

    from publisher.web.pages.about import about
    from publisher.web.pages.home import home
    from publisher.web.pages.not_found import not_found
    from publisher.web.pages.subscribe import subscribe
    from tests.unit.test_static_or_app import MaintainerState, Page

    def home_with_a_button():
        return rx.el.div(home(), rx.el.button("Wave", on_click=MaintainerState.wave))

    pages = [
        Page("index", home_with_a_button),
        Page("about", about),
        Page("subscribe", subscribe),
        Page("404", not_found),
    ]
    plugin = build_plugins.SiteFilesPlugin()
    plugin.pre_compile(add_modify_task=lambda *args: None, unevaluated_pages=pages)
    assert static_or_app.read_manifest(manifest)["/"].app_reasons == ("<button> handles on_click",)
    assert not static_or_app.read_manifest(manifest)["/about"].starts_app

    (built_pages / "__not-found").mkdir()
    (built_pages / "__not-found" / "index.html").write_text(PRERENDERED)
    plugin.post_build(static_dir=str(built_pages))
    assert "data-app-boot" in (built_pages / "index.html").read_text()
    assert "data-app-boot" in (built_pages / "subscribe" / "index.html").read_text()
    assert "/assets/manifest-E4.js" not in (built_pages / "about" / "index.html").read_text()
    assert "/assets/manifest-E4.js" not in (built_pages / "__spa-fallback.html").read_text()


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
        "publisher.web",
        "publisher.web.page_kinds",
    ]
