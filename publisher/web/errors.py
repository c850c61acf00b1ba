"""What a visitor sees when an event handler fails unexpectedly: Reflex's default toast is a
server-sent script the CSP (no eval) blocks, so the error is logged (never the event's data) and a
plain message goes into the page's error region by a client-side event."""

from __future__ import annotations

import logging

import reflex as rx

from publisher.content.site import UNEXPECTED_ERROR
from publisher.web.components.layout import SITE_ERROR_ID

logger = logging.getLogger(__name__)


def backend_exception_handler(exception: Exception):
    logger.error("Event handler failed: %s", type(exception).__name__, exc_info=exception)
    return rx.set_value(SITE_ERROR_ID, UNEXPECTED_ERROR)
