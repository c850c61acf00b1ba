"""The files Reflex generates under ``.web`` that the build rewrites (build/plugins.py).

Reflex 0.10 offers no setting for any of these, so the build edits the generated
JavaScript; each rewrite looks for the exact text it replaces and raises, naming the
file, when a Reflex upgrade changed it (only a build has these files, so the check is
the build's, not the start-up's):

- ``utils/state.js``: a production build reaches its backend at the page's own origin
  (host and port), so one build serves on any host and port; and every page load is a
  state of its own (``a_state_per_page_load``);
- ``vite.config.js``: the development server listens on ``PUBLISHER_DEV_HOST`` and
  hands POSTs (one-click unsubscribe) to the backend;
- ``react-router.config.js``: the catch-all route is prerendered too (the 404 page).
"""

from __future__ import annotations

NOT_FOUND_PRERENDER_PATH = "/__not-found"
REACT_ROUTER_CONFIG = "react-router.config.js"
STATE_JS = "utils/state.js"

_HOSTNAME_ONLY = """    const frontend_hostname = window.location.hostname;
    endpoint.hostname = frontend_hostname;
"""
# Written by earlier versions of this plugin; .web keeps the file between builds.
_SAME_ORIGIN_ALWAYS = """    // Same origin as the page (host and port): the site and backend share one port.
    endpoint.host = window.location.host;
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


def backend_at_page_origin(state_js: str) -> str:
    """Make a production build reach a localhost-configured backend at the page's host *and port*.

    Reflex only swaps the hostname, so a build made for one port only works when
    served on that same port. Vite decides the branch (``import.meta.env.DEV``):
    the dev server keeps Reflex's behaviour, ``reflex export`` / ``--env prod``
    builds get the page's origin, whichever mode wrote ``.web`` last.
    """
    if _SAME_ORIGIN_IN_BUILDS in state_js:
        return state_js
    for original in (_HOSTNAME_ONLY, _SAME_ORIGIN_ALWAYS):
        if original in state_js:
            return state_js.replace(original, _SAME_ORIGIN_IN_BUILDS)
    raise RuntimeError(f"Unexpected {STATE_JS} layout: getBackendURL changed in this Reflex version")


_TOKEN_FROM_THE_TAB = """    if (!window.sessionStorage.getItem(TOKEN_KEY)) {
      window.sessionStorage.setItem(TOKEN_KEY, unsavedToken ?? generateUUID());
    }
"""
_TOKEN_PER_PAGE_LOAD = """    // publisher: each page load is a state of its own (reflex_internals/frontend_files.py):
    // a new token, never the one an earlier page of this tab left in the session storage.
    window.sessionStorage.setItem(TOKEN_KEY, unsavedToken ?? generateUUID());
"""
_PEEK_FROM_THE_TAB = """  window.sessionStorage.getItem(TOKEN_KEY) ||
  (unsavedToken ??= generateUUID());"""
_PEEK_PER_PAGE_LOAD = """  (unsavedToken ??= generateUUID()); // publisher: a token of this page load only"""


def a_state_per_page_load(state_js: str) -> str:
    """Give every page load its own client token, so its own state: a fresh form, whatever the tab did.

    Reflex keeps a tab's token in the session storage and with it the tab's state across
    the page loads of that tab. The finished form of the last page then won over what the
    server wrote into the next one: the contact question turned into its placeholder and the
    token the server wrote was emptied as soon as the app connected, so a second message from
    one tab was refused (issue 40). The token is still kept in memory for the page's life, so
    a reconnect (a dropped connection, the channel's lifetime, a restarted backend) carries on
    with the page's state; Reflex's warm-up socket takes the same new token.
    """
    if _TOKEN_PER_PAGE_LOAD in state_js and _PEEK_PER_PAGE_LOAD in state_js:
        return state_js
    if _TOKEN_FROM_THE_TAB not in state_js or _PEEK_FROM_THE_TAB not in state_js:
        raise RuntimeError(f"Unexpected {STATE_JS} layout: getToken or peekToken changed in this Reflex version")
    return state_js.replace(_TOKEN_FROM_THE_TAB, _TOKEN_PER_PAGE_LOAD).replace(_PEEK_FROM_THE_TAB, _PEEK_PER_PAGE_LOAD)


def state_js_rewrites(state_js: str) -> str:
    """Every rewrite of ``utils/state.js``: the backend at the page's origin, a state per page load."""
    return a_state_per_page_load(backend_at_page_origin(state_js))


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
    """``vite_config`` with a plugin defined before its config and listed first (once)."""
    if call in vite_config:
        return vite_config
    export = "export default defineConfig("
    if export not in vite_config or _VITE_PLUGINS not in vite_config:
        raise RuntimeError(f"Unexpected {VITE_CONFIG} layout: no defineConfig with a plugins list")
    vite_config = vite_config.replace(export, source + export, 1)
    return vite_config.replace(_VITE_PLUGINS, f"{_VITE_PLUGINS}    {call},\n", 1)


def dev_host_from_environment(vite_config: str) -> str:
    """Let ``PUBLISHER_DEV_HOST`` choose the dev server's listening address (tests: 127.0.0.1).

    Reflex offers ``--backend-host`` but nothing for the frontend dev server.
    """
    return _with_vite_plugin(vite_config, "publisherDevHost()", _DEV_HOST_PLUGIN)


def dev_posts_to_backend(vite_config: str) -> str:
    """Let the development server pass POSTs (one-click unsubscribe) to the backend."""
    return _with_vite_plugin(vite_config, "publisherDevPosts()", _DEV_POSTS_PLUGIN)


def dev_server_plugins(vite_config: str) -> str:
    return dev_posts_to_backend(dev_host_from_environment(vite_config))


def prerender_not_found(config_js: str) -> str:
    """Rewrite react-router.config.js so the catch-all route is prerendered too."""
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
