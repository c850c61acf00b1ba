"""``POST /count/buy``: a buy press's beacon from assets/site.js, which never delays the navigation.
Always 204, ``no-store``, empty: a sender learns nothing (not whether counting is on, nor which
check refused it). What counts: docs/privacy.md; what is refused: docs/security.md."""

from __future__ import annotations

import functools
import logging

from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from publisher import visits
from publisher.config import settings
from publisher.config.settings import PerProcess
from publisher.content import books
from publisher.limits.submits import Limiter, shared_storage
from publisher.rules import same_site, visit_rules
from publisher.seldom_log import SeldomLog
from publisher.server import routes
from publisher.server.event_channel import ChannelOrigins

logger = logging.getLogger(__name__)

PATH = "/count/buy"


def configured_buy_limiter() -> Limiter:
    return Limiter(shared_storage.get(), per_address=visit_rules.BUY_PER_ADDRESS)


shared_buy_limiter: PerProcess[Limiter] = PerProcess(configured_buy_limiter)


def _books() -> tuple[tuple[str, str], ...]:
    links = ((book.slug, link) for book in books.BOOKS for link in (book.book_link, book.preorder_link) if link)
    return tuple((slug, str(link)) for slug, link in links)


class BuyBeacon:
    def __init__(self) -> None:
        self._log = SeldomLog(logger)  # a flood of beacons must not flood the log

    @functools.cached_property
    def origins(self) -> ChannelOrigins:
        """Read from the settings at the first press."""
        return ChannelOrigins.configured()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            counted = await self._press(scope, receive)
        except routes.ClientLeft:
            return  # nobody to answer
        except Exception:  # noqa: BLE001 - a press is never worth an error page: the answer is the same
            counted = None
            self._log.log(
                logging.ERROR, "Buy beacon: the press could not be judged (logged at most once a minute)", exc_info=True
            )
        logger.debug("Buy beacon: %s", counted or "not counted")
        await Response(status_code=204, headers={"Cache-Control": "no-store"})(scope, receive, send)

    async def _press(self, scope: Scope, receive: Receive) -> str | None:
        """The press's "slug host" when it was counted, else None."""
        if not settings.current().visits_on or scope["method"] != "POST":
            return None
        try:
            body = await routes.read_body(scope, receive, visit_rules.BEACON_BODY_MAX)
        except routes.BodyTooLarge:
            return None
        headers = Headers(scope=scope)
        origins = headers.getlist("origin")
        if len(origins) > 1 or not same_site.same_origin(
            origins[0] if origins else None,
            self.origins.of(headers.get("host", "")),
            same_site.BEACON,
            sec_fetch_site=headers.get("sec-fetch-site"),
            referer=headers.get("referer"),
        ):
            return None
        if visit_rules.is_prefetch(headers) or visit_rules.is_bot(headers.get("user-agent", "")):
            return None
        target = visit_rules.buy_target(body, _books())
        if target is None:
            return None
        if not await shared_buy_limiter.get().allow(visit_rules.VisitKind.BUY, "", routes.client_address(scope)):
            return None
        slug, store = target
        visits.shared_recorder.get().buy(scope, slug, store)
        return f"{slug} {store}"
