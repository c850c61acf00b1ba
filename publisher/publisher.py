"""The Reflex app: registers every route with its metadata."""

import reflex as rx

from publisher import errors, seo, serving, settings
from publisher.gateway import embedded, outbox, storage  # noqa: F401 (storage: its tables join the schema)
from publisher.components import app_rendered
from publisher.forms.contact_state import ContactState
from publisher.forms.subscribe_state import SubscribeState
from publisher.pages.about import about
from publisher.pages.contact import contact
from publisher.pages.home import home
from publisher.pages.not_found import not_found
from publisher.pages.subscribe import subscribe

# A malformed setting stops start-up here, with an error naming the variable.
settings.gateway_url()
settings.rate_limits()
settings.gateway_timeout_s()
settings.mail_settings()

app = rx.App(
    html_lang="en",
    api_transformer=serving.transform,
    backend_exception_handler=errors.backend_exception_handler,
    stylesheets=["/styles.css"],
    # The innermost wrap (lowest priority): its effect runs once the page has rendered.
    extra_app_wraps={(1, "AppRendered"): app_rendered.app_wrap},
    head_components=[
        rx.el.link(rel="icon", href="/favicon.ico", sizes="32x32"),
        rx.el.link(rel="icon", href="/favicon.svg", type="image/svg+xml"),
        rx.el.link(rel="apple-touch-icon", href="/apple-touch-icon.png"),
        rx.el.meta(name="theme-color", content="#fffbeb"),
        rx.el.script(src="/site.js", defer=True),
    ],
)

app.register_lifespan_task(embedded.migrate_on_development_start)
# Emails the publisher from the outbox (embedded gateway with PUBLISHER_SMTP_URL only).
app.register_lifespan_task(outbox.run_in_backend)

app.add_page(home, route="/", **seo.page_args(seo.HOME))
app.add_page(about, route="/about", **seo.page_args(seo.ABOUT))
app.add_page(subscribe, route="/subscribe", on_load=SubscribeState.start, **seo.page_args(seo.SUBSCRIBE))
app.add_page(contact, route="/contact-us", on_load=ContactState.start, **seo.page_args(seo.CONTACT))
app.add_page(not_found, route="404", **seo.page_args(seo.NOT_FOUND))
