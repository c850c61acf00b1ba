"""The dashboard's downloads (the list as CSV, the audit log): a file the browser saves is an HTTP
answer, not a state event, so each checks the page's Origin and the session cookie itself."""

from __future__ import annotations

import asyncio
import io
import logging

import sqlalchemy
from starlette.datastructures import Headers
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.types import Receive, Scope, Send

from publisher.config import settings
from publisher.content import admin_copy
from publisher.rules import admin_access
from publisher.seldom_log import SeldomLog
from publisher.server import requests
from publisher.server.admin_sign_in import NO_STORE, not_a_post_from_the_page, relying_party
from publisher.storage import admins, subscribers
from publisher.storage.tables import utc_now
from publisher.web import exports

logger = logging.getLogger(__name__)


def _download(path: str, db_url: str | None) -> tuple[str, str, str, str]:
    """The file of ``path``, its name, and its line in the audit log (action, target)."""
    out = io.StringIO()
    if path == admin_access.EXPORT_PATH:
        rows = subscribers.list_subscribers(db_url=db_url)
        exports.write_subscribers_csv(rows, out)
        return out.getvalue(), "subscribers", "export", f"the list ({len(rows)} addresses)"
    lines = admins.audit_log(db_url=db_url)
    exports.write_audit_csv(lines, out)
    return out.getvalue(), "audit-log", "download audit log", f"{len(lines)} lines"


class AdminDownloads:
    def __init__(self, db_url: str | None = None):
        self.db_url = db_url
        self._log = SeldomLog(logger)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = await self._answer(scope, scope["path"])
        await response(scope, receive, send)

    async def _answer(self, scope: Scope, path: str) -> Response:
        if not settings.current().dashboard_on:
            return PlainTextResponse("Not found", status_code=404)
        refusal = not_a_post_from_the_page(
            scope, path.removeprefix(admin_access.API_PATH + "/"), relying_party(), self._log
        )
        if refusal is not None:
            return refusal
        headers = Headers(scope=scope)
        token = admin_access.session_token(headers.get("cookie", ""), requests.is_https(scope))
        try:
            admin = None
            if token is not None:
                admin = await asyncio.to_thread(
                    admins.session_admin,
                    admin_access.token_hash(token),
                    settings.current().admin_idle,
                    touch=True,
                    db_url=self.db_url,
                )
            if admin is None:
                return JSONResponse({"error": admin_copy.SIGN_IN_FIRST}, 403, headers=NO_STORE)
            made, name, action, what = await asyncio.to_thread(_download, path, self.db_url)
            await asyncio.to_thread(admins.audit, admin.name, action, what, None, self.db_url)
        except sqlalchemy.exc.SQLAlchemyError as exc:
            self._log.warning("Dashboard download: the database is unavailable (%s)", type(exc).__name__)
            return JSONResponse({"error": admin_copy.TRY_AGAIN_LATER}, 503, headers={"Retry-After": "30", **NO_STORE})
        filename = f"{name}-{utc_now():%Y-%m-%d}.csv"
        return Response(
            made,
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{filename}"', **NO_STORE},
        )
