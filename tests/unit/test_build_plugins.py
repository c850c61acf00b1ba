"""Build-time additions: the 404 page, robots.txt, Reflex's files rewritten, the pages without the app."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import reflex_base

from publisher.build import plugins
from publisher.build.plugins import prerender_not_found, robots_txt
from publisher.reflex_internals import frontend_files
from publisher.web import page_html, page_kinds
from publisher.web.feed import release_feed
from tests.support import ASSETS_DIR

REFLEX_CONFIG_JSON = '{"basename": "/", "ssr": false, "prerender": true, "build": "build"}'
REFLEX_CONFIG_JS = f"export default {REFLEX_CONFIG_JSON};"


def test_prerender_not_found_keeps_the_config_and_adds_the_private_path():
    output = prerender_not_found(REFLEX_CONFIG_JS)
    assert all(piece in output for piece in ("export default config", REFLEX_CONFIG_JSON, "/__not-found")), output
    assert output.count("export default") == 1
    assert prerender_not_found(f"\n  {REFLEX_CONFIG_JS}\n\n") == output


def test_plugin_adds_robots_txt_and_the_feed_for_the_configured_site(monkeypatch):
    assert robots_txt("https://books.example.com") == (
        "User-agent: *\nAllow: /\n\nSitemap: https://books.example.com/sitemap.xml\n"
    )
    monkeypatch.setattr("publisher.config.settings.site_url", lambda: "https://books.example.com")
    assets = plugins.SiteFilesPlugin().get_static_assets()
    assert assets == [
        (Path("public") / "robots.txt", robots_txt("https://books.example.com")),
        (Path("public") / "releases.atom", release_feed("https://books.example.com")),
    ]


@pytest.fixture
def manifest(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "backend" / "page_kinds.json"
    monkeypatch.setattr(page_kinds, "MANIFEST", path)
    return path


REFLEX_TEMPLATES = Path(reflex_base.__file__).parent / ".templates" / "web"
REFLEX_STATE_JS = (REFLEX_TEMPLATES / "utils" / "state.js").read_text()
REFLEX_THEME_JS = (REFLEX_TEMPLATES / "utils" / "react-theme.js").read_text()

WEB_STORAGE_WRITE = re.compile(r"(?:localStorage|sessionStorage)\.setItem\(")


def test_the_apps_files_use_the_browsers_storage_only_for_the_states_storage_vars():
    """No storage write is left but applyClientStorageDelta's (for storage vars: the site has none)."""
    from reflex.compiler import compiler

    assert WEB_STORAGE_WRITE.search(REFLEX_STATE_JS) and WEB_STORAGE_WRITE.search(REFLEX_THEME_JS)  # Reflex's do
    state_js = frontend_files.state_js_rewrites(REFLEX_STATE_JS)
    delta = re.search(r"const applyClientStorageDelta = .*?\n};\n", state_js, re.S).group(0)
    assert len(WEB_STORAGE_WRITE.findall(state_js)) == len(WEB_STORAGE_WRITE.findall(delta)) == 2
    assert "sessionStorage.getItem(TOKEN_KEY)" not in state_js and "LAST_RELOADED_KEY)" not in state_js
    assert frontend_files.state_js_rewrites(state_js) == state_js  # .web keeps the file between builds
    theme_js = frontend_files.no_saved_color_mode(REFLEX_THEME_JS)
    assert "localStorage" not in theme_js and "sessionStorage" not in theme_js
    assert frontend_files.no_saved_color_mode(theme_js) == theme_js  # .web keeps the file between builds
    document_path, reflex_document = compiler.compile_document_root([])
    assert document_path.endswith(frontend_files.DOCUMENT_JS)
    assert "jsx(ScrollRestoration" in reflex_document and "localStorage" in reflex_document  # Reflex's
    document = frontend_files.document_without_storage(reflex_document)
    assert "localStorage" not in document and "ScrollRestoration,{}" not in document
    assert "const theme = /* publisher: never read from the browser */ 'system';" in document
    assert "jsx(Scripts,{},)" in document


def test_no_state_nor_page_of_the_site_keeps_a_value_in_the_browser():
    from reflex.state import State

    from publisher.publisher import app  # every page, so every state of the site
    from publisher.reflex_internals import component_needs

    stack, kept = [State], []
    while stack:
        cls = stack.pop()
        stack.extend(cls.get_substates())
        kept += [f"{cls.__name__}.{name}" for name in cls.get_fields() if cls._is_client_storage(name)]
    assert kept == []
    writing = []
    for route, page in app._unevaluated_pages.items():
        component = page.component() if callable(page.component) else page.component
        code = [*component_needs.hooks(component), *component._get_all_custom_code()]
        if any("localStorage" in text or "sessionStorage" in text for text in code):
            writing.append(route)
    assert writing == []


def test_the_app_reloads_nothing_by_itself_on_a_frontend_error_and_migrates_the_database_at_start():
    from reflex.state import FrontendEventExceptionState

    from publisher import mailing_list
    from publisher.publisher import app

    assert FrontendEventExceptionState.auto_reload_on_errors == []
    assert frontend_files.what_moved() == []
    assert mailing_list.migrate_on_development_start in app.get_lifespan_tasks()


@pytest.mark.parametrize(
    ("rewrite", "text", "message"),
    [
        (frontend_files.no_saved_color_mode, "export function ThemeProvider() {}", "Unexpected utils/react-theme.js"),
        (frontend_files.document_without_storage, 'jsx("body",{},jsx(Scripts,{},))', "Unexpected app/_document.js"),
        (frontend_files.state_js_rewrites, "export const getBackendURL = () => 1;", "Unexpected utils/state.js"),
        (frontend_files.dev_server_plugins, "export default {};", "vite.config.js layout"),
        (prerender_not_found, "module.exports = {prerender: true};", "react-router.config.js"),
        (prerender_not_found, "const config = {}; export default config;", "react-router.config.js"),
        (prerender_not_found, "", "react-router.config.js"),
    ],
)
def test_a_rewrite_refuses_an_unknown_layout(rewrite, text, message):
    with pytest.raises(RuntimeError, match=re.escape(message)):
        rewrite(text)


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


def test_dev_host_plugin_applies_to_the_config_reflex_generates():
    from reflex.utils import frontend_skeleton
    from reflex_base.config import get_config

    patched = frontend_files.dev_server_plugins(frontend_skeleton._compile_vite_config(get_config()))
    assert "publisherDevHost()," in patched and 'apply: "serve"' in patched


PRERENDERED = (
    '<!DOCTYPE html><html lang="en"><head><meta charSet="utf-8"/>'
    '<link rel="modulepreload" href="/assets/entry.client-B1.js"/>'
    '<link rel="modulepreload" href="/assets/root-C2.js"/>'
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


def test_app_boot_and_its_preloads_are_made_inert_without_changing_the_structure_and_site_js_starts_them():
    deferred = plugins.defer_app_boot(PRERENDERED)
    assert 'rel="modulepreload"' not in deferred
    assert deferred.count('<link rel="x-app-modulepreload" href="/assets/') == 2
    assert '<script type="text/x-app-boot" data-app-boot="">import "/assets/manifest-E4.js";</script>' in deferred
    assert '<link href="/assets/styles-D3.css" rel="stylesheet" type="text/css"/>' in deferred  # CSS loads at once
    assert "<script>window.__reactRouterContext = {};</script>" in deferred
    assert deferred.count("<") == PRERENDERED.count("<")  # same elements, only attributes differ
    assert plugins.defer_app_boot(deferred) == deferred
    site_js = (ASSETS_DIR / "site.js").read_text()
    assert f'hasAttribute("{page_html.STATIC_PAGE_ATTRIBUTE}")' in site_js
    assert f'link[rel="{plugins.DEFERRED_PRELOAD_REL}"]' in site_js
    assert "script[data-app-boot]" in site_js


def test_a_static_page_keeps_its_content_styles_site_js_and_data_and_loses_the_app():
    stripped = plugins.strip_app(PRERENDERED)
    gone = ("modulepreload", "/assets/manifest-E4.js", "__reactRouterContext", "$RC", "_R_", "storageKey", "<!--$")
    assert [piece for piece in (*gone, 'id="B:0"', 'id="S:0"') if piece in stripped] == []
    assert '<main id="main-content"><h1>Latest Releases</h1><p hidden="">kept as it is</p></main>' in stripped
    assert '<link href="/assets/styles-D3.css" rel="stylesheet" type="text/css"/>' in stripped
    assert '<script defer="" src="/site.js"></script>' in stripped
    assert '<script type="application/ld+json">{"@type": "WebSite"}</script>' in stripped
    assert "<script>document.documentElement.style.colorScheme = 'light';</script>" in stripped
    assert stripped.count("<script") == 3
    assert '<html data-static-page="" lang="en">' in stripped
    stripped = plugins.strip_app(plugins.defer_app_boot(PRERENDERED))  # an earlier step's deferred boot
    assert "x-app-modulepreload" not in stripped and "data-app-boot" not in stripped


@pytest.mark.parametrize(  # the rest as a request's path (test_page_kinds.py)
    ("file", "route"), [("index.html", "/"), ("books/new/index.html", "/books/new"), ("__spa-fallback.html", "404")]
)
def test_each_prerendered_file_is_matched_to_its_route(tmp_path, file, route):
    assert plugins.html_route(tmp_path, tmp_path / file) == route


@pytest.fixture
def built_pages(tmp_path) -> Path:
    for file in ("index.html", "about.html", "about/index.html", "subscribe/index.html", "__spa-fallback.html"):
        (tmp_path / file).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / file).write_text(PRERENDERED)
    return tmp_path


EMOTION_RULE = '<style data-emotion="css 17rg0dp">.css-17rg0dp{position:fixed;width:100vw;height:0;}</style>'


def test_emotion_rules_streamed_into_the_body_move_to_the_head_unchanged():
    html = (
        '<html><head><link rel="stylesheet" href="/styles.css"/></head><body><div id="root">'
        f'<main>Hi</main>{EMOTION_RULE}<div class="css-17rg0dp" title="x"></div></div></body></html>'
    )
    hoisted = plugins.hoist_emotion_styles(html)
    assert hoisted == (
        f'<html><head><link rel="stylesheet" href="/styles.css"/>{EMOTION_RULE}</head><body><div id="root">'
        '<main>Hi</main><div class="css-17rg0dp" title="x"></div></div></body></html>'
    )
    assert plugins.hoist_emotion_styles(hoisted) == hoisted  # nothing left to move
    no_emotion = "<html><head></head><body><style>p{}</style></body></html>"
    assert plugins.hoist_emotion_styles(no_emotion) == no_emotion  # only emotion's own rules


def test_a_prerendered_file_without_a_decision_fails_the_build_naming_it(built_pages):
    (built_pages / "extra").mkdir()
    (built_pages / "extra" / "index.html").write_text(PRERENDERED)
    with pytest.raises(RuntimeError, match=r"extra/index.html serves '/extra', which no page registered"):
        plugins.finish_pages(built_pages, {route: page_kinds.PageKind(route, ()) for route in ("/", "/about", "404")})


def test_the_plugins_rewrites_and_a_maintainer_who_adds_an_event_handler_to_home_gets_a_home_that_starts_the_app(
    built_pages, manifest
):
    import reflex as rx

    from publisher.web.pages.about import about
    from publisher.web.pages.home import home
    from publisher.web.pages.not_found import not_found
    from publisher.web.pages.subscribe import subscribe
    from tests.unit.test_page_kinds import MaintainerState, Page

    def home_with_a_button():
        return rx.el.div(home(), rx.el.button("Wave", on_click=MaintainerState.wave))

    pages = [
        Page("index", home_with_a_button),
        Page("about", about),
        Page("subscribe", subscribe),
        Page("404", not_found),
    ]
    plugin = plugins.SiteFilesPlugin()
    tasks = []
    plugin.pre_compile(add_modify_task=lambda *args: tasks.append(args), unevaluated_pages=pages)
    assert tasks == [
        ("react-router.config.js", prerender_not_found),
        ("utils/state.js", frontend_files.state_js_rewrites),
        ("utils/react-theme.js", frontend_files.no_saved_color_mode),
        ("app/_document.js", frontend_files.document_without_storage),
        ("vite.config.js", frontend_files.dev_server_plugins),
    ]
    assert page_kinds.read_manifest()["/"].app_reasons == ("<button> handles on_click",)
    assert not page_kinds.read_manifest()["/about"].starts_app

    with pytest.raises(RuntimeError, match="not prerendered"):
        plugin.post_build(static_dir=str(built_pages))  # the not-found page was not prerendered: nothing replaced
    assert (built_pages / "__spa-fallback.html").read_text() == PRERENDERED
    (built_pages / "__not-found").mkdir()
    (built_pages / "__not-found" / "index.html").write_text(PRERENDERED.replace("Latest Releases", "Oops!"))
    (built_pages / "__not-found.html").write_text("<html>redirect</html>")
    plugin.post_build(static_dir=str(built_pages))
    assert "Oops!" in (built_pages / "__spa-fallback.html").read_text()  # the not-found page, installed
    assert not (built_pages / "__not-found").exists() and not (built_pages / "__not-found.html").exists()
    starting = plugins.hoist_emotion_styles(plugins.defer_app_boot(PRERENDERED))  # deferred, styles hoisted
    assert (
        (built_pages / "index.html").read_text() == (built_pages / "subscribe" / "index.html").read_text() == starting
    )
    for file in ("about.html", "about/index.html"):
        assert (built_pages / file).read_text() == plugins.finish_page(PRERENDERED, starts_app=False), file
    assert "/assets/manifest-E4.js" not in (built_pages / "__spa-fallback.html").read_text()
