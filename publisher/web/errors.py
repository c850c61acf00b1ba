"""An event handler's unexpected failure: logged (never the event's data), and a plain message in the
page's error region (Reflex's default toast is a script the CSP blocks)."""

from __future__ import annotations

import logging

import reflex as rx

from publisher.content.site import UNEXPECTED_ERROR
from publisher.web.components.layout import SITE_ERROR_ID

logger = logging.getLogger(__name__)


def backend_exception_handler(exception: Exception):
    logger.error("Event handler failed: %s", type(exception).__name__, exc_info=exception)
    return rx.set_value(SITE_ERROR_ID, UNEXPECTED_ERROR)
