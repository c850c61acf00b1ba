"""The files under ``.web`` the build rewrites (build/plugins.py), for which Reflex 0.10 has no setting;
each rewrite raises, naming the file, when an upgrade changed what it replaces. Nothing is kept in
the browser (docs/privacy.md)."""

from __future__ import annotations

from reflex.state import FrontendEventExceptionState
from reflex_base import constants

NOT_FOUND_PRERENDER_PATH = "/__not-found"
REACT_ROUTER_CONFIG = "react-router.config.js"
STATE_JS = "utils/state.js"
REACT_THEME_JS = "utils/react-theme.js"
DOCUMENT_JS = f"{constants.Dirs.PAGES}/{constants.PageNames.DOCUMENT_ROOT}"

_HOSTNAME_ONLY = """    const frontend_hostname = window.location.hostname;
    endpoint.hostname = frontend_hostname;
"""
_SAME_ORIGIN_IN_BUILDS = """    // publisher: a production build is served with its backend on one origin, so it
    // follows the page's host *and port* (one build serves on any host and port).
    // The development server keeps Reflex's rule: the page's host, the backend's own
    // port, because there the frontend and the backend listen on different ports.
    if (import.meta.env.DEV) {
      endpoint.hostname = window.location.hostname;
    } else {
      endpoint.host = window.location.host;
    }
"""


def _rewritten(file: str, text: str, *edits: tuple[str, str]) -> str:
    """``text`` with each edit made; one already there is kept (.web keeps a file between builds)."""
    for original, replacement in edits:
        if replacement in text:
            continue
        if original not in text:
            first_line = original.strip().splitlines()[0]
            raise RuntimeError(f"Unexpected {file} layout: {first_line!r} changed in this Reflex version")
        text = text.replace(original, replacement)
    return text


# Every page load gets its own token, in the page's memory: with Reflex's per-tab token, the last page's
# finished form won over what the server wrote into the next.
_TOKEN_FROM_THE_TAB = """    if (!window.sessionStorage.getItem(TOKEN_KEY)) {
      window.sessionStorage.setItem(TOKEN_KEY, unsavedToken ?? generateUUID());
    }
    token = window.sessionStorage.getItem(TOKEN_KEY);
"""
_TOKEN_PER_PAGE_LOAD = """    // publisher: each page load is a state of its own, its token in the page's memory only
    // (reflex_internals/frontend_files.py): never one an earlier page left, never stored.
    token = unsavedToken ?? generateUUID();
"""
_PEEK_FROM_THE_TAB = """  window.sessionStorage.getItem(TOKEN_KEY) ||
  (unsavedToken ??= generateUUID());"""
_PEEK_PER_PAGE_LOAD = """  (unsavedToken ??= generateUUID()); // publisher: a token of this page load only"""

# No writes to the session storage: a new token stays in memory, and a page of another app version offers
# its reload (Reflex's banner) instead of stamping one and reloading.
_NEW_TOKEN_STORED = """    token = new_token;
    window.sessionStorage.setItem(TOKEN_KEY, new_token);
"""
_NEW_TOKEN_IN_MEMORY = """    token = new_token; // publisher: in the page's memory only
"""
_RELOAD_STAMPED = """  window.sessionStorage.setItem(LAST_RELOADED_KEY, Date.now().toString());
  window.location.reload();
"""
_RELOAD = """  window.location.reload(); // publisher: no time of it kept in the browser
"""
_RELOAD_BY_ITSELF = """  const last_reload =
    parseInt(window.sessionStorage.getItem(LAST_RELOADED_KEY)) || 0;
  if (Date.now() - last_reload > info.reload_cooldown_ms) {
    reloadForNewVersion();
    return;
  }
"""
_RELOAD_OFFERED = """  // publisher: never a reload by itself, whose cooldown Reflex keeps in the session storage
  // (a reload after a reload would loop): the banner offers it, and what was typed stays.
"""


def state_js_rewrites(state_js: str) -> str:
    """A build's backend at the page's host *and port* (Reflex swaps only the hostname), a token per page
    load, nothing in the session storage (each edit's comment above says why)."""
    return _rewritten(
        STATE_JS,
        state_js,
        (_HOSTNAME_ONLY, _SAME_ORIGIN_IN_BUILDS),
        (_TOKEN_FROM_THE_TAB, _TOKEN_PER_PAGE_LOAD),
        (_PEEK_FROM_THE_TAB, _PEEK_PER_PAGE_LOAD),
        (_NEW_TOKEN_STORED, _NEW_TOKEN_IN_MEMORY),
        (_RELOAD_STAMPED, _RELOAD),
        (_RELOAD_BY_ITSELF, _RELOAD_OFFERED),
    )


_COLOR_MODE_FROM_THE_BROWSER = """    if (app.isDevMode) {
      const lastCompiledTheme = localStorage.getItem("last_compiled_theme");
      if (lastCompiledTheme !== app.defaultColorMode) {
        // on app startup, make sure the application color mode is persisted correctly.
        setColorMode(app.defaultColorMode);
        localStorage.setItem("last_compiled_theme", app.defaultColorMode);
        localStorage.setItem("theme", app.defaultColorMode);
        setIsInitialized(true);
        return;
      }
    }

    // Load saved theme from localStorage
    const savedTheme = localStorage.getItem("theme") || defaultTheme;
    setColorMode(savedTheme);
"""
_COLOR_MODE_OF_THE_SITE = """    // publisher: never read from the browser (reflex_internals/frontend_files.py)
    setColorMode(defaultTheme);
"""
_COLOR_MODE_SAVED = """  // Save theme to localStorage whenever it changes
  // Skip saving only if theme key already exists and we haven't initialized yet
  useEffect(() => {
    const existingTheme = localStorage.getItem("theme");
    if (!isInitialized && existingTheme !== null) return;
    localStorage.setItem("theme", theme);
  }, [theme]);
"""
_COLOR_MODE_NOT_SAVED = """  // publisher: never saved in the browser (reflex_internals/frontend_files.py)
"""
# The document's script that sets the color mode before the app runs, as it reads a saved one.
_COLOR_MODE_READ = """localStorage.getItem(\\"theme\\") || """
_COLOR_MODE_NOT_READ = "/* publisher: never read from the browser */ "
_SCROLL_RESTORATION = "jsx(ScrollRestoration,{},),"
_NO_SCROLL_RESTORATION = "/* publisher: no ScrollRestoration (reflex_internals/frontend_files.py) */"


def no_saved_color_mode(react_theme_js: str) -> str:
    """The site has one color mode (Reflex's default), never saved in the local storage nor read back."""
    return _rewritten(
        REACT_THEME_JS,
        react_theme_js,
        (_COLOR_MODE_FROM_THE_BROWSER, _COLOR_MODE_OF_THE_SITE),
        (_COLOR_MODE_SAVED, _COLOR_MODE_NOT_SAVED),
    )


def document_without_storage(document_js: str) -> str:
    """No saved color mode read, and no ``ScrollRestoration`` (scroll positions in the session storage
    for in-app moves, which the site never makes)."""
    return _rewritten(
        DOCUMENT_JS,
        document_js,
        (_COLOR_MODE_READ, _COLOR_MODE_NOT_READ),
        (_SCROLL_RESTORATION, _NO_SCROLL_RESTORATION),
    )


def no_reload_on_errors() -> None:
    """At run time: Reflex's reload on frontend errors stamps its time in the session storage."""
    FrontendEventExceptionState.auto_reload_on_errors = []


def what_moved() -> list[str]:
    present = isinstance(getattr(FrontendEventExceptionState, "auto_reload_on_errors", None), list)
    return [] if present else ["FrontendEventExceptionState.auto_reload_on_errors"]


VITE_CONFIG = "vite.config.js"
DEV_HOST_VAR = "PUBLISHER_DEV_HOST"
_DEV_HOST_PLUGIN = f"""// publisher: {DEV_HOST_VAR} makes the development server listen on that address only
// (`react-router dev --host` listens on every interface). Unset: Reflex's behaviour.
function publisherDevHost() {{
  return {{
    name: "publisher-dev-host",
    apply: "serve",
    config() {{
      const host = process.env.{DEV_HOST_VAR};
      return host ? {{ server: {{ host }} }} : undefined;
    }},
  }};
}}

"""
_VITE_PLUGINS = "  plugins: [\n"


_DEV_POSTS_PLUGIN = """// publisher: the development server hands every POST to the backend, as the production
// server (one origin) does: a mail provider's one-click unsubscribe is a POST to a page's
// address (publisher/server/link_pages.py). Pages never take a POST; everything else stays.
function publisherDevPosts() {
  return {
    name: "publisher-dev-posts",
    apply: "serve",
    async config() {
      const { readFileSync } = await import("node:fs");
      const env = JSON.parse(readFileSync(new URL("./env.json", import.meta.url), "utf8"));
      const backend = new URL(env.PING);
      if (backend.hostname === "localhost") backend.hostname = "127.0.0.1";
      const bypass = (request) => (request.method === "POST" ? null : request.url);
      return { server: { proxy: { "/": { target: backend.origin, bypass } } } };
    },
  };
}

"""


def _with_vite_plugin(vite_config: str, call: str, source: str) -> str:
    if call in vite_config:
        return vite_config
    export = "export default defineConfig("
    if export not in vite_config or _VITE_PLUGINS not in vite_config:
        raise RuntimeError(f"Unexpected {VITE_CONFIG} layout: no defineConfig with a plugins list")
    vite_config = vite_config.replace(export, source + export, 1)
    return vite_config.replace(_VITE_PLUGINS, f"{_VITE_PLUGINS}    {call},\n", 1)


def dev_server_plugins(vite_config: str) -> str:
    """The dev server's plugins: its address from ``PUBLISHER_DEV_HOST`` (Reflex has no setting for it),
    and every POST to the backend."""
    with_host = _with_vite_plugin(vite_config, "publisherDevHost()", _DEV_HOST_PLUGIN)
    return _with_vite_plugin(with_host, "publisherDevPosts()", _DEV_POSTS_PLUGIN)


def prerender_not_found(config_js: str) -> str:
    """The 404 page is prerendered too."""
    body = config_js.strip()
    prefix = "export default "
    if not body.startswith(prefix):
        raise RuntimeError(f"Unexpected {REACT_ROUTER_CONFIG} layout: {body[:80]!r}")
    config_object = body[len(prefix) :].rstrip(";")
    return (
        f"const config = {config_object};\n"
        "if (config.prerender === true) {\n"
        "  config.prerender = async ({ getStaticPaths }) => [\n"
        f"    ...getStaticPaths(), {NOT_FOUND_PRERENDER_PATH!r},\n"
        "  ];\n"
        "}\n"
        "export default config;\n"
    )
