"""Build-time additions to Reflex's output: robots.txt, the feed, the images' variants, the rewrites
of Reflex's files (reflex_internals/frontend_files.py), and the app removed or deferred on each page."""

from __future__ import annotations

import logging
import re
import shutil
from pathlib import Path
from typing import Any

from reflex.utils import prerequisites
from reflex_base import constants
from reflex_base.plugins.base import Plugin

from publisher.reflex_internals.frontend_files import (
    DOCUMENT_JS,
    NOT_FOUND_PRERENDER_PATH,
    REACT_ROUTER_CONFIG,
    REACT_THEME_JS,
    STATE_JS,
    VITE_CONFIG,
    dev_server_plugins,
    document_without_storage,
    no_saved_color_mode,
    prerender_not_found,
    state_js_rewrites,
)
from publisher.web import page_kinds
from publisher.web.page_html import BOOT_TYPE, DEFERRED_PRELOAD_REL, strip_app

logger = logging.getLogger(__name__)

SPA_FALLBACK = "__spa-fallback.html"


def robots_txt(site_url: str) -> str:
    return f"User-agent: *\nAllow: /\n\nSitemap: {site_url}/sitemap.xml\n"


def use_prerendered_not_found(static_dir: Path) -> None:
    """The prerendered not-found page becomes the SPA fallback (and 404.html), not an empty shell."""
    name = NOT_FOUND_PRERENDER_PATH.strip("/")
    rendered = static_dir / name / "index.html"
    if not rendered.exists():
        raise RuntimeError(f"The not-found page was not prerendered at {rendered}")
    shutil.copyfile(rendered, static_dir / SPA_FALLBACK)
    shutil.rmtree(static_dir / name)
    (static_dir / f"{name}.html").unlink(missing_ok=True)


_MODULEPRELOAD = re.compile(r'<link rel="modulepreload"')
# React Router's boot module is `<script type="module" async="">`: a data block may not be async.
_BOOT_SCRIPT = re.compile(r'<script type="module"(?: async(?:="")?)?(?=[\s>])')
_EMOTION_STYLE = re.compile(r'<style data-emotion="[^"<>]*">[^<]*</style>')


def defer_app_boot(html: str) -> str:
    """Inert until assets/site.js re-creates them after load (only attributes change: hydration sees the same)."""
    html = _MODULEPRELOAD.sub(f'<link rel="{DEFERRED_PRELOAD_REL}"', html)
    return _BOOT_SCRIPT.sub(f'<script type="{BOOT_TYPE}" data-app-boot=""', html)


def hoist_emotion_styles(html: str) -> str:
    """Emotion's streamed <style> rules moved to <head>, where valid HTML has them (and emotion puts them)."""
    head_end = html.find("</head>")
    if head_end == -1:
        return html
    body = html[head_end:]
    styles = _EMOTION_STYLE.findall(body)
    if not styles:
        return html
    return html[:head_end] + "".join(styles) + _EMOTION_STYLE.sub("", body)


def finish_page(html: str, starts_app: bool) -> str:
    return hoist_emotion_styles(defer_app_boot(html) if starts_app else strip_app(html))


def html_route(static_dir: Path, page: Path) -> str:
    """The route a prerendered file serves: index.html -> '/', about/index.html and about.html -> '/about'."""
    relative = page.relative_to(static_dir).as_posix()
    if relative == SPA_FALLBACK:
        return page_kinds.NOT_FOUND_ROUTE
    return page_kinds.page_route("/" + relative)


def finish_pages(static_dir: Path, kinds: dict[str, page_kinds.PageKind]) -> None:
    for page in sorted(static_dir.rglob("*.html")):
        route = html_route(static_dir, page)
        if route not in kinds:
            raise RuntimeError(
                f"{page.relative_to(static_dir)} serves {route!r}, which no page registered: "
                f"no decision whether it starts the app (known: {', '.join(sorted(kinds))})"
            )
        if kinds[route].starts_app and route.startswith(page_kinds.VARIANT_PREFIX):
            # React Router would hydrate the route in the address bar, the canonical one, over it.
            raise RuntimeError(f"{route} is a release variant, so it must not start the app: {kinds[route].describe()}")
        html = page.read_text(encoding="utf-8")
        page.write_text(finish_page(html, kinds[route].starts_app), encoding="utf-8")


def remove_originals(static_dir: Path, sources: list[str]) -> None:
    """Raster images are served as their variants only: the originals leave the build."""
    for src in sources:
        for path in (static_dir / src.lstrip("/")).parent.glob(Path(src).name + "*"):  # with .gz/.br twins
            path.unlink()


class SiteFilesPlugin(Plugin):
    """Its hooks import the site's modules: Reflex's development supervisor would keep them over a hot reload."""

    def get_static_assets(self, **context: Any):
        from publisher.config import settings  # noqa: PLC0415 - hot reload
        from publisher.content import books  # noqa: PLC0415 - hot reload
        from publisher.web import feed  # noqa: PLC0415 - hot reload

        site = settings.site_url()
        return [
            (Path("public") / "robots.txt", robots_txt(site)),
            (Path("public") / feed.FEED_PATH.lstrip("/"), feed.release_feed(site)),
            *(
                (
                    Path("public") / page_kinds.variant_route(book.slug, feed.FEED_PATH).lstrip("/"),
                    feed.release_feed(site, page_kinds.just_before(book.release.utc)),
                )
                for book in books.BOOKS
                if book.release
            ),
        ]

    def pre_compile(self, **context: Any) -> None:
        from publisher.build import image_variants  # noqa: PLC0415 - hot reload
        from publisher.content import images  # noqa: PLC0415 - hot reload

        wanted = images.site_images()
        image_variants.write_variants(prerequisites.get_web_dir() / constants.Dirs.PUBLIC, wanted)
        images.write_manifest(item.info for item in wanted)
        kinds = page_kinds.decide(context["unevaluated_pages"])
        for kind in kinds.values():
            logger.info("Page %s", kind.describe())
        page_kinds.write_manifest(kinds)
        context["add_modify_task"](REACT_ROUTER_CONFIG, prerender_not_found)
        context["add_modify_task"](STATE_JS, state_js_rewrites)
        context["add_modify_task"](REACT_THEME_JS, no_saved_color_mode)
        context["add_modify_task"](DOCUMENT_JS, document_without_storage)
        context["add_modify_task"](VITE_CONFIG, dev_server_plugins)

    def post_build(self, **context: Any) -> None:
        from publisher.content import images  # noqa: PLC0415 - hot reload

        static_dir = Path(context["static_dir"])
        use_prerendered_not_found(static_dir)
        finish_pages(static_dir, page_kinds.read_manifest())
        remove_originals(static_dir, [item.info.src for item in images.site_images() if not item.info.is_svg])
