"""The forms without the app (before it starts, no JavaScript, channel down; a waitlist always): the server
answers their plain POST with the app's own functions, and writes the contact question into its page."""

from __future__ import annotations

import gzip
import logging
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from html import escape
from pathlib import Path
from urllib.parse import parse_qs

import brotli
from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from publisher.config import settings
from publisher.content import form_copy
from publisher.content.books import BOOKS
from publisher.content.models import Book
from publisher.limits import submits
from publisher.rules import form_fields, release_rules, same_site
from publisher.seldom_log import SeldomLog
from publisher.server import routes
from publisher.storage import tables
from publisher.web import page_html, page_kinds, submissions
from publisher.web.components.forms import WAITLIST_THANKS_ID
from publisher.web.pages import contact, subscribe

logger = logging.getLogger(__name__)

MAX_BODY_BYTES = 16 * 1024
FORM_CONTENT_TYPE = "application/x-www-form-urlencoded"
COMPRESS_MIN_BYTES = 1024


@dataclass(frozen=True)
class PlainForm:
    declared: form_fields.Form  # its name (the limits count per form) and fields, shown again after a refusal
    route: str
    sent_route: str
    book: Book | None = None  # the forthcoming book a waitlist form is for
    page_route: str = ""  # the built page a refusal is written into, when not the route's own


FORMS = {
    page.ROUTE: PlainForm(declared, page.ROUTE, page.SENT_ROUTE)
    for declared, page in ((form_fields.SUBSCRIBE, subscribe), (form_fields.CONTACT, contact))
}


def waitlist_forms(books: Iterable[Book]) -> dict[str, PlainForm]:
    """Posted to the book's page; a refusal is written into the page as it is until the moment."""
    return {
        book.page_path: PlainForm(
            form_fields.WAITLIST,
            book.page_path,
            f"{book.page_path}#{WAITLIST_THANKS_ID}",
            book=book,
            page_route=page_kinds.variant_route(book.slug, book.page_path),
        )
        for book in books
        if book.release is not None
    }


def built_page(build_dir: Path, route: str) -> str:
    return (build_dir / route.strip("/") / "index.html").read_text(encoding="utf-8")


def question_slots(html: str) -> tuple[str, str, str]:
    """The contact page split where its question and token go, so each response is a join, not a parse."""
    question = re.search(rf'(<span[^>]*\bid="{submissions.QUESTION_ID}"[^>]*>)[^<]*(</span>)', html)
    token = re.search(rf'<input(?=[^>]*\bid="{submissions.TOKEN_ID}")[^>]*?(/?>)', html)
    if question is None or token is None or question.end() > token.start():
        raise LookupError(
            f"The contact page of the build has no #{submissions.QUESTION_ID} span followed by "
            f"the #{submissions.TOKEN_ID} field: is the build older than this code? Run `make build`."
        )
    return html[: question.end(1)], html[question.start(2) : token.start(1)], html[token.start(1) :]


class PlainForms:
    """``build_dir`` None (`reflex run`): only the waitlists, a refusal answered in plain text."""

    def __init__(
        self,
        build_dir: Path | None,
        page: ASGIApp,
        books: Iterable[Book] = BOOKS,
        clock: Callable[[], datetime] | None = None,
    ):
        self.page = page
        self.clock = clock or tables.utc_now
        self.waitlists = waitlist_forms(books)
        self.pages: dict[str, str] = {}
        if build_dir is not None:
            self.pages = {route: built_page(build_dir, route) for route in FORMS}
            self.question_slots = question_slots(self.pages[contact.ROUTE])
            self.subscribe_sent = built_page(build_dir, subscribe.SENT_ROUTE)
            # A book already out when the site was built has no page as it was before.
            for form in self.waitlists.values():
                if (build_dir / form.page_route.strip("/") / "index.html").is_file():
                    self.pages[form.page_route] = built_page(build_dir, form.page_route)
        self._log = SeldomLog(logger)

    async def post(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"].rstrip("/")
        response = await self._answer(FORMS.get(path) or self.waitlists[path], scope, receive)
        await response(scope, receive, send)

    async def contact_page(self, scope: Scope, receive: Receive, send: Send) -> None:
        before, between, after = self.question_slots
        asked = submissions.new_question()
        html = f'{before}{escape(asked.text)}{between} value="{escape(asked.token)}"{after}'
        await page_response(scope, html)(scope, receive, send)

    async def subscribe_sent_page(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not settings.current().list_emails_on:
            await self.page(scope, receive, send)
            return
        await page_response(scope, _show_confirm_note(self.subscribe_sent))(scope, receive, send)

    async def _answer(self, form: PlainForm, scope: Scope, receive: Receive) -> Response:
        if form.book is not None and release_rules.is_out(form.book, self.clock()):
            return RedirectResponse(form.route, status_code=303)  # posted from the page before its moment
        headers = Headers(scope=scope)
        if not posted_from_this_site(scope):
            self._log.info("Form %s: a POST from another site refused", form.declared.name)
            return PlainTextResponse("This form accepts posts from its own page only.", status_code=403)
        if headers.get("content-type", "").split(";")[0].strip().lower() != FORM_CONTENT_TYPE:
            return PlainTextResponse(f"Expected a form ({FORM_CONTENT_TYPE}).", status_code=415)
        try:
            body = await routes.read_body(scope, receive, MAX_BODY_BYTES)
        except routes.BodyTooLarge:
            return PlainTextResponse("The form is larger than this site accepts.", status_code=413)
        except routes.ClientLeft:
            return PlainTextResponse("", status_code=400)
        data = {
            name: values[0]
            for name, values in parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).items()
        }
        shown = form.declared.typed(data)

        address = routes.client_address(scope)
        async with submissions.submit_in_flight():
            if not await submits.shared_limiter.get().allow(form.declared.name, "", address):
                # A refused contact submit spends its token all the same: the same question, next token.
                asks = form.declared.asks_question
                chain = await submissions.spend_token(data, submissions.now_ms()) if asks else None
                asked = submissions.new_question(chain, same=True) if asks else None
                limited = submissions.Verdict(form_error=form_copy.TOO_MANY_ATTEMPTS, question=asked)
                return self._refused(form, scope, shown, limited, 429)
            verdict = await submissions.judge(form.declared, data)
            if verdict.request is None:
                return self._refused(form, scope, shown, verdict, 422)
            if await submissions.send(form.declared.name, verdict.request, form.book.slug if form.book else ""):
                return RedirectResponse(form.sent_route, status_code=303)
        failed = submissions.Verdict(form_error=submissions.TOASTS[form.declared.name][1], chain=verdict.chain)
        return self._refused(form, scope, shown, failed, 503)

    def _refused(
        self, form: PlainForm, scope: Scope, shown: dict[str, str], verdict: submissions.Verdict, status: int
    ) -> Response:
        built = self.pages.get(form.page_route or form.route)
        if built is None:  # no page to write into (`reflex run`): the messages alone
            said = [verdict.form_error, *verdict.field_errors.values()]
            return PlainTextResponse("\n".join(message for message in said if message), status_code=status)
        question = None
        if form.declared.asks_question:
            asked = verdict.question or submissions.new_question(verdict.chain)
            question = ((submissions.QUESTION_ID, asked.text), (submissions.TOKEN_ID, asked.token))
        answer = page_html.FormAnswer(
            field_ids=form.declared.field_ids,
            values=shown,
            field_errors=verdict.field_errors,
            form_error=verdict.form_error,
            question=question,
            title_prefix=form_copy.ERROR_TITLE_PREFIX,
        )
        return page_response(scope, page_html.answer_page(built, answer), status)


def page_response(scope: Scope, html: str, status: int = 200) -> Response:
    """Brotli first as the build's pages are (quality 5: about a millisecond for a form page, within 3 % of
    the build's size)."""
    body = html.encode("utf-8")
    headers = {"Vary": "Accept-Encoding"}
    accepted = Headers(scope=scope).get("accept-encoding", "")
    if len(body) >= COMPRESS_MIN_BYTES and "br" in accepted:
        body = brotli.compress(body, quality=5)
        headers["Content-Encoding"] = "br"
    elif len(body) >= COMPRESS_MIN_BYTES and "gzip" in accepted:
        body = gzip.compress(body, compresslevel=6)
        headers["Content-Encoding"] = "gzip"
    return Response(body, status_code=status, media_type="text/html; charset=utf-8", headers=headers)


def posted_from_this_site(scope: Scope) -> bool:
    """From a page at the site's public origin or the one it was sent to (FORM_POST)."""
    headers = Headers(scope=scope)
    scheme = "https" if routes.is_https(scope) else "http"
    site = same_site.origin_of(settings.site_url())
    ours = same_site.host_origins(headers.get("host", ""), (scheme,)) | ({site} if site else set())
    return same_site.same_origin(
        headers.get("origin"),
        ours,
        same_site.FORM_POST,
        sec_fetch_site=headers.get("sec-fetch-site"),
        referer=headers.get("referer"),
    )


def _show_confirm_note(html: str) -> str:
    tag = re.search(rf'<p\b[^>]*\b{subscribe.CONFIRM_NOTE_ATTRIBUTE}=""[^>]*>', html)
    if tag is None:
        return html
    shown = re.sub(r'\shidden(="")?(?=[\s/>])', "", tag.group(0), count=1)
    return html[: tag.start()] + shown + html[tag.end() :]
