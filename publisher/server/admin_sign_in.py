"""The dashboard's passkey ceremonies, sign-out and downloads over HTTP: only an HTTP answer sets an HttpOnly cookie.
Limits and refusals: docs/security.md; log lines never name a token, a challenge or a credential."""

from __future__ import annotations

import asyncio
import io
import logging
from collections.abc import Callable
from typing import Any

import pydantic
import sqlalchemy
import webauthn
from reflex_base import config as reflex_config
from reflex_base import constants
from reflex_base.environment import environment
from starlette.datastructures import Headers
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send
from webauthn.helpers import bytes_to_base64url, options_to_json_dict, parse_authentication_credential_json, structs
from webauthn.helpers.exceptions import InvalidAuthenticationResponse, InvalidJSONStructure, InvalidRegistrationResponse

from publisher.config import settings
from publisher.content import admin_copy
from publisher.limits import submits
from publisher.rules import admin_access, same_site
from publisher.rules.admin_access import RelyingParty
from publisher.seldom_log import SeldomLog
from publisher.server.routes import BodyTooLarge, ClientLeft, client_address, is_https, read_body
from publisher.storage import admins, subscribers
from publisher.storage.tables import utc_now
from publisher.web import exports

logger = logging.getLogger(__name__)

API = admin_access.API_PATH
ENROL_OPTIONS = f"{API}/enrol/options"
ENROL = f"{API}/enrol"
SIGN_IN_OPTIONS = f"{API}/sign-in/options"
SIGN_IN = f"{API}/sign-in"
SIGN_OUT = f"{API}/sign-out"
MAX_BODY_BYTES = 16 * 1024
_FAILURES = "admin-sign-in"  # the limiter's name for failed enrolments and sign-ins from one address
_CEREMONIES = "admin-ceremony"  # the limiter's name for ceremonies begun from one address
RP_NAME = "Animals We Confuse: dashboard"
CEREMONY_TIMEOUT_MS = int(admin_access.CEREMONY_VALID_FOR.total_seconds() * 1000)
CEREMONY_SWEEP_S = 60  # a ceremony that ran out is deleted within this (clear_ceremonies)
NO_STORE = {"Cache-Control": "no-store"}
_WAIT = {"Retry-After": "600", **NO_STORE}  # an address over one of the limits
_JSON_OBJECT = pydantic.TypeAdapter(dict[str, Any])
_AFTER_A_CEREMONY = {"Retry-After": str(int(admin_access.CEREMONY_VALID_FOR.total_seconds()))}


def relying_party() -> RelyingParty:
    development = environment.REFLEX_ENV_MODE.get() == constants.Env.DEV
    port = reflex_config.get_config().frontend_port if development else None
    return admin_access.relying_party(settings.site_url(), [port] if port else [])


def _not_a_post_from_the_page(scope: Scope, name: str, party: RelyingParty, log: SeldomLog) -> Response | None:
    """Before anything is read; None when it may go on."""
    if scope["method"] != "POST":
        return JSONResponse({"error": "Only POST is allowed here"}, 405, headers={"Allow": "POST", **NO_STORE})
    headers = Headers(scope=scope)
    origin, fetch_site = headers.get("origin"), headers.get("sec-fetch-site")
    if not same_site.same_origin(origin, party.origins, same_site.DASHBOARD, sec_fetch_site=fetch_site):
        log.warning("Dashboard %s: refused, not from the site's own page (Origin %s)", name, origin)
        return JSONResponse({"error": admin_copy.NOT_FROM_THIS_SITE}, 403, headers=NO_STORE)
    return None


class _Refused(Exception):
    """``counts``: a failure the per-address limit counts."""

    def __init__(self, status: int, text: str, detail: str, counts: bool = False):
        super().__init__(detail)
        self.status, self.text, self.detail, self.counts = status, text, detail, counts


def _json_object(body: bytes) -> dict[str, Any]:
    try:
        return _JSON_OBJECT.validate_json(body or b"{}")
    except pydantic.ValidationError:
        raise _Refused(400, admin_copy.PASSKEY_REFUSED, "the body is not a JSON object", counts=True) from None


def _token(data: dict[str, Any], key: str, refusal: str) -> str:
    value = data.get(key)
    if not admin_access.is_token_shaped(value):
        raise _Refused(400, refusal, f"no valid {key}", counts=True)
    return str(value)


class AdminSignIn:
    """Every path under ``/admin``: 404 where the site keeps no dashboard, else the pages as ``page`` serves them."""

    def __init__(self, page: ASGIApp, db_url: str | None = None, clock: Callable[[], Any] | None = None):
        self.page = page
        self.db_url = db_url
        self.clock = clock
        self._log = SeldomLog(logger)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not settings.current().dashboard_on:
            await PlainTextResponse("Not found", status_code=404)(scope, receive, send)
            return
        if not scope["path"].startswith(API + "/"):
            await self.page(scope, receive, send)
            return
        response = await self._answer(scope, receive, scope["path"].rstrip("/"))
        if response is not None:
            await response(scope, receive, send)

    async def _answer(self, scope: Scope, receive: Receive, path: str) -> Response | None:
        handlers = {
            ENROL_OPTIONS: self._enrol_options,
            ENROL: self._enrol,
            SIGN_IN_OPTIONS: self._sign_in_options,
            SIGN_IN: self._sign_in,
            SIGN_OUT: self._sign_out,
            admin_access.EXPORT_PATH: self._download,
            admin_access.AUDIT_PATH: self._download,
        }
        handler = handlers.get(path)
        if handler is None:
            return PlainTextResponse("Not found", status_code=404, headers=NO_STORE)
        name = path.removeprefix(API + "/")
        party = relying_party()
        refusal = _not_a_post_from_the_page(scope, name, party, self._log)
        if refusal is not None:
            return refusal
        address = client_address(scope)
        limiter = submits.shared_limiter.get()
        if path in (ENROL_OPTIONS, ENROL, SIGN_IN_OPTIONS, SIGN_IN) and await limiter.exhausted(_FAILURES, address):
            self._log.warning("Dashboard %s: refused, too many failures from %s", name, address)
            return JSONResponse({"error": admin_copy.TOO_MANY_ATTEMPTS}, 429, headers=_WAIT)
        if path in (ENROL_OPTIONS, SIGN_IN_OPTIONS) and not await limiter.allow(_CEREMONIES, "", address):
            self._log.warning("Dashboard %s: refused, too many ceremonies begun from %s", name, address)
            return JSONResponse({"error": admin_copy.TOO_MANY_CEREMONIES}, 429, headers=_WAIT)
        try:
            data = _json_object(await read_body(scope, receive, MAX_BODY_BYTES))
            return await handler(scope, data, party)
        except ClientLeft:
            return None
        except BodyTooLarge:
            return JSONResponse({"error": admin_copy.PASSKEY_REFUSED}, 413, headers=NO_STORE)
        except sqlalchemy.exc.SQLAlchemyError as exc:
            self._log.warning("Dashboard %s: the database is unavailable (%s)", name, type(exc).__name__)
            return JSONResponse({"error": admin_copy.TRY_AGAIN_LATER}, 503, headers={"Retry-After": "30", **NO_STORE})
        except _Refused as refused:
            self._log.warning("Dashboard %s: refused from %s: %s", name, address, refused.detail)
            if refused.counts and not await limiter.allow(_FAILURES, "", address):
                return JSONResponse({"error": admin_copy.TOO_MANY_ATTEMPTS}, 429, headers=NO_STORE)
            retry = _AFTER_A_CEREMONY if refused.status == 429 else {}
            return JSONResponse({"error": refused.text}, refused.status, headers={**NO_STORE, **retry})

    async def _db(self, function, *args, **kwargs):
        now = self.clock() if self.clock is not None else None
        return await asyncio.to_thread(function, *args, now=now, db_url=self.db_url, **kwargs)

    async def _new_ceremony(self, scope: Scope, options, enrolment_hash: str | None) -> dict[str, Any]:
        ceremony = admin_access.new_token()
        refusal = await self._db(
            admins.begin_ceremony,
            admin_access.token_hash(ceremony),
            options.challenge,
            enrolment_hash,
            submits.address_key(client_address(scope)),
        )
        if refusal == "address":
            raise _Refused(429, admin_copy.TOO_MANY_CEREMONIES, "too many ceremonies waiting from this address")
        if refusal == "site":
            raise _Refused(429, admin_copy.SIGN_IN_BUSY, "too many ceremonies waiting on the whole site")
        return {"ceremony": ceremony, "options": options_to_json_dict(options)}

    async def _take_ceremony(self, data: dict[str, Any], enrolment: bool) -> sqlalchemy.Row:
        ceremony = _token(data, "ceremony", admin_copy.CEREMONY_EXPIRED)
        taken = await self._db(admins.take_ceremony, admin_access.token_hash(ceremony))
        if taken is None:
            raise _Refused(400, admin_copy.CEREMONY_EXPIRED, "an unknown or expired ceremony", counts=True)
        if (taken.enrolment_hash is not None) != enrolment:
            raise _Refused(400, admin_copy.PASSKEY_REFUSED, "the other ceremony's answer", counts=True)
        return taken

    async def _enrol_options(self, scope: Scope, data: dict[str, Any], party: RelyingParty) -> Response:
        enrolment_hash = admin_access.token_hash(_token(data, "token", admin_copy.ENROLMENT_LINK_INVALID))
        admin = await self._db(admins.enrolment_admin, enrolment_hash)
        if admin is None:
            raise _Refused(404, admin_copy.ENROLMENT_LINK_INVALID, "an unknown, used or expired enrolment link", True)
        existing = await asyncio.to_thread(admins.passkey_ids, admin.admin_id, self.db_url)
        options = webauthn.generate_registration_options(
            rp_id=party.rp_id,
            rp_name=RP_NAME,
            user_name=admin.name,
            user_id=webauthn.base64url_to_bytes(admin.user_handle),
            user_display_name=admin.name,
            timeout=CEREMONY_TIMEOUT_MS,
            authenticator_selection=structs.AuthenticatorSelectionCriteria(
                resident_key=structs.ResidentKeyRequirement.REQUIRED,
                user_verification=structs.UserVerificationRequirement.REQUIRED,
            ),
            exclude_credentials=[
                structs.PublicKeyCredentialDescriptor(id=webauthn.base64url_to_bytes(i)) for i in existing
            ],
        )
        return JSONResponse(await self._new_ceremony(scope, options, enrolment_hash), headers=NO_STORE)

    async def _enrol(self, scope: Scope, data: dict[str, Any], party: RelyingParty) -> Response:
        ceremony = await self._take_ceremony(data, enrolment=True)
        try:
            verified = webauthn.verify_registration_response(
                credential=data.get("credential"),  # type: ignore[arg-type]
                expected_challenge=ceremony.challenge,
                expected_rp_id=party.rp_id,
                expected_origin=list(party.origins),
                require_user_verification=True,
            )
        except (InvalidRegistrationResponse, InvalidJSONStructure, ValueError, TypeError, KeyError) as exc:
            raise _Refused(400, admin_copy.PASSKEY_REFUSED, f"registration not verified ({exc})", True) from None
        link = ceremony.enrolment_hash or ""
        passkey = (bytes_to_base64url(verified.credential_id), verified.credential_public_key, verified.sign_count)
        used = _Refused(404, admin_copy.ENROLMENT_LINK_INVALID, "the enrolment link was used meanwhile", True)
        return await self._open_session(scope, "created a passkey and signed in", used, admins.enrol, link, *passkey)

    async def _sign_in_options(self, scope: Scope, data: dict[str, Any], party: RelyingParty) -> Response:
        options = webauthn.generate_authentication_options(
            rp_id=party.rp_id,
            timeout=CEREMONY_TIMEOUT_MS,
            user_verification=structs.UserVerificationRequirement.REQUIRED,
        )
        return JSONResponse(await self._new_ceremony(scope, options, None), headers=NO_STORE)

    async def _sign_in(self, scope: Scope, data: dict[str, Any], party: RelyingParty) -> Response:
        ceremony = await self._take_ceremony(data, enrolment=False)
        try:
            credential = parse_authentication_credential_json(data.get("credential"))  # type: ignore[arg-type]
        except (InvalidJSONStructure, InvalidAuthenticationResponse, ValueError, TypeError, KeyError) as exc:
            raise _Refused(400, admin_copy.PASSKEY_REFUSED, f"not a passkey's answer ({exc})", True) from None
        stored = await asyncio.to_thread(admins.passkey, credential.id, self.db_url)
        if stored is None:
            raise _Refused(400, admin_copy.PASSKEY_REFUSED, "a passkey this site does not know (revoked?)", True)
        try:
            verified = webauthn.verify_authentication_response(
                credential=credential,
                expected_challenge=ceremony.challenge,
                expected_rp_id=party.rp_id,
                expected_origin=list(party.origins),
                credential_public_key=stored.public_key,
                credential_current_sign_count=stored.sign_count,
                require_user_verification=True,
            )
        except InvalidAuthenticationResponse as exc:
            if "sign count" in str(exc).lower():
                logger.error(
                    "Dashboard sign-in: a passkey of admin #%d was refused: its signature counter went "
                    "backwards (%s), so it may have been cloned. Revoke it with "
                    "`publisher-gateway admin revoke NAME` if this was not a device reset.",
                    stored.admin_id,
                    exc,
                )
            raise _Refused(400, admin_copy.PASSKEY_REFUSED, f"sign-in not verified ({exc})", True) from None
        moved = _Refused(400, admin_copy.PASSKEY_REFUSED, "the passkey was revoked or used at the same moment", True)
        counts = (stored.sign_count, verified.new_sign_count)
        return await self._open_session(scope, "signed in", moved, admins.sign_in, credential.id, *counts)

    async def _open_session(self, scope: Scope, done: str, refused: _Refused, store, *args) -> Response:
        """``refused`` when ``store`` opened none (the link or the passkey changed meanwhile)."""
        session = admin_access.new_token()
        admin = await self._db(store, *args, admin_access.token_hash(session))
        if admin is None:
            raise refused
        logger.info("Dashboard: %s %s", admin.name, done)
        return _signed_in(scope, session)

    async def _sign_out(self, scope: Scope, data: dict[str, Any], party: RelyingParty) -> Response:
        await asyncio.to_thread(admins.end_session, _session_hash(scope), self.db_url)
        return _signed_in(scope, "")

    async def _download(self, scope: Scope, data: dict[str, Any], party: RelyingParty) -> Response:
        """A file the browser saves is an HTTP answer, not a state event."""
        admin = await self._db(admins.session_admin, _session_hash(scope), settings.current().admin_idle, touch=True)
        if admin is None:
            raise _Refused(403, admin_copy.SIGN_IN_FIRST, "no open session")
        made, name, action, what = await asyncio.to_thread(_csv_file, scope["path"], self.db_url)
        await self._db(admins.audit, admin.name, action, what)
        return Response(
            made,
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{name}-{utc_now():%Y-%m-%d}.csv"', **NO_STORE},
        )


def _csv_file(path: str, db_url: str | None) -> tuple[str, str, str, str]:
    """The file, its name, and its line in the audit log (action, target)."""
    out = io.StringIO()
    if path.rstrip("/") == admin_access.EXPORT_PATH:
        rows = subscribers.list_subscribers(db_url=db_url)
        exports.write_subscribers_csv(rows, out)
        return out.getvalue(), "subscribers", "export", f"the list ({len(rows)} addresses)"
    lines = admins.audit_log(db_url=db_url)
    exports.write_audit_csv(lines, out)
    return out.getvalue(), "audit-log", "download audit log", f"{len(lines)} lines"


def _session_hash(scope: Scope) -> str:
    """Empty when there is none, which no session has."""
    token = admin_access.session_token(Headers(scope=scope).get("cookie", ""), is_https(scope))
    return "" if token is None else admin_access.token_hash(token)


def _signed_in(scope: Scope, session: str) -> Response:
    response = JSONResponse({"ok": True}, headers=NO_STORE)
    response.headers["Set-Cookie"] = admin_access.session_cookie(session, is_https(scope))
    return response


async def clear_ceremonies(
    db_url: str | None = None,
    clock: Callable[[], Any] | None = None,
    sleep: Callable[[float], Any] = asyncio.sleep,
) -> None:
    """Whether or not another ceremony begins: a stranger's address is not kept until the next sign-in."""
    if not settings.current().dashboard_on:
        return
    while True:
        try:
            await asyncio.to_thread(admins.delete_expired_ceremonies, clock() if clock else None, db_url)
        except Exception as exc:  # noqa: BLE001 - a database away: the next turn tries again
            logger.warning("Dashboard: the expired sign-in ceremonies were not deleted (%s)", type(exc).__name__)
        await sleep(CEREMONY_SWEEP_S)
