"""The Reflex app: the entry point and the only module that holds the app; what needs the app is
wired from here (``install``)."""

import reflex as rx

from publisher import mailing_list, reflex_internals, visits
from publisher.config import settings
from publisher.content.books import FEED_TITLE
from publisher.limits import tabs
from publisher.mail import campaign, notices, outbox
from publisher.reflex_internals import frontend_files, stored_state
from publisher.returns import bounce_mailbox
from publisher.server import admin_sign_in, middleware
from publisher.storage import tables  # noqa: F401 (its tables join the schema Reflex knows)
from publisher.web import feed
from publisher.web.components import layout
from publisher.web.pages import PAGES

# A malformed setting stops start-up here, with an error naming the variable; so does a
# Reflex or Granian upgrade that moved an internal the site relies on.
settings.current()
reflex_internals.check()
stored_state.install()
frontend_files.no_reload_on_errors()
reflex_internals.install_no_cors()

app = rx.App(
    html_lang="en",
    api_transformer=middleware.transform,
    backend_exception_handler=layout.backend_exception_handler,
    stylesheets=["/styles.css"],
    # The innermost wrap (lowest priority): its effect runs once the page has rendered.
    extra_app_wraps={(1, "AppRendered"): layout.app_wrap},
    head_components=[
        rx.el.link(rel="icon", href="/favicon.ico", sizes="32x32"),
        rx.el.link(rel="icon", href="/favicon.svg", type="image/svg+xml"),
        rx.el.link(rel="apple-touch-icon", href="/apple-touch-icon.png"),
        rx.el.meta(name="theme-color", content="#fffbeb"),
        rx.el.link(rel="alternate", type=feed.CONTENT_TYPE, title=FEED_TITLE, href=feed.FEED_PATH),
        rx.el.script(src="/site.js", defer=True),
    ],
)

# First, in each worker: what it writes is its user's alone, the states folder too.
app.register_lifespan_task(stored_state.keep_private)
app.register_lifespan_task(mailing_list.migrate_on_development_start)
app.register_lifespan_task(outbox.run_in_backend)
app.register_lifespan_task(campaign.run_in_backend)
app.register_lifespan_task(bounce_mailbox.run_in_backend)
app.register_lifespan_task(notices.run_in_backend)
app.register_lifespan_task(admin_sign_in.clear_ceremonies)
# A view counts on the declared pages with a URL, the dashboard's aside (PUBLISHER_VISITS).
visits.shared_recorder.get().count_views_on(
    page.route for page in PAGES.pages() if page.has_url and not middleware.is_admin_path(page.route)
)
app.register_lifespan_task(visits.counting)

PAGES.add_to(app)
tabs.installed_app.set(app)
