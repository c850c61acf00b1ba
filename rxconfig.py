"""Reflex configuration. Runtime settings come from environment variables (docs/configuration.md)."""

import os

import reflex as rx

from publisher.build.plugins import SiteFilesPlugin
from publisher.config.secret_files import put_database_password

# PUBLISHER_DB_PASSWORD_FILE: the database password from a file (a compose secret), put into
# REFLEX_DB_URL before Reflex reads it, so no container's environment carries it.
put_database_password(os.environ)

config = rx.Config(
    app_name="publisher",
    telemetry_enabled=False,
    show_built_with_reflex=False,
    # The public address of the site: canonical links, og:url, sitemap and robots.txt
    # are built from it. Override with REFLEX_DEPLOY_URL in production.
    deploy_url="http://localhost:3000",
    # Storage of the embedded local gateway (subscribers, contact messages); any
    # SQLAlchemy URL. Override with REFLEX_DB_URL, e.g. postgresql+psycopg://...
    db_url="sqlite:///publisher.db",
    # Brotli for browsers that accept it (about 15% smaller than gzip), gzip for the rest.
    frontend_compression_formats=["brotli", "gzip"],
    # Import React/emotion/state namespaces for dynamic components only when one is
    # evaluated (the site has none), so unused code is tree-shaken from every page.
    frontend_lazy_bundled_libraries=True,
    # No RadixThemesPlugin: its stylesheet is ~80 KB of render-blocking CSS.
    plugins=[
        rx.plugins.SitemapPlugin(),
        rx.plugins.TailwindV4Plugin(),
        SiteFilesPlugin(),
    ],
)
