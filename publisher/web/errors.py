"""What a visitor sees when an event handler (a form's) fails unexpectedly.

Reflex's default handler shows a toast through a server-sent script, which the
site's Content-Security-Policy (no eval) blocks. This one logs the error for the
operator (type and traceback, never the event's data) and writes a plain message
into the page's error region (an <output> element) through a client-side event:
no script evaluation and no further round trip that could fail the same way.
"""

from __future__ import annotations

import logging

import reflex as rx

from publisher.content.site import UNEXPECTED_ERROR
from publisher.web.components.layout import SITE_ERROR_ID

logger = logging.getLogger(__name__)


def backend_exception_handler(exception: Exception):
    logger.error("Event handler failed: %s", type(exception).__name__, exc_info=exception)
    return rx.set_value(SITE_ERROR_ID, UNEXPECTED_ERROR)
