"""A release email: a new book told to one reader, as text and as HTML (two Jinja2 templates). CSS is
inlined into each element (many clients drop a <style> block); the text part says the same, so a filter
weighing text against HTML finds a real letter in both."""

from __future__ import annotations

import binascii
import secrets
from datetime import datetime
from email import utils as email_utils
from functools import cache
from urllib.parse import urlsplit

from markupsafe import escape

from publisher.config.settings import MailSettings
from publisher.content import books, images, list_copy
from publisher.content.models import Book
from publisher.content.site import BRAND_NAME
from publisher.mail import headers, mailer


def subject(book: Book) -> str:
    return list_copy.RELEASE_SUBJECT.format(brand=BRAND_NAME, title=book.title)


@cache
def _templates():
    # Jinja2 and css-inline only here: the site's pages never need them.
    import jinja2  # noqa: PLC0415

    loader = jinja2.PackageLoader("publisher.mail", "templates")
    html = jinja2.Environment(loader=loader, autoescape=True, undefined=jinja2.StrictUndefined)
    text = jinja2.Environment(
        loader=loader, autoescape=False, undefined=jinja2.StrictUndefined, keep_trailing_newline=True
    )
    return html.get_template("release.html"), text.get_template("release.txt")


def greeting(name: str) -> str:
    return list_copy.RELEASE_GREETING.format(name=name) if name else list_copy.RELEASE_GREETING_NO_NAME


def image_url(book: Book, site: str) -> str:
    """The cover as every mail client shows it: the JPEG share image the build makes (SVG is not shown by most)."""
    return f"{site}{images.describe(book.cover_image).share_url}"


def render(
    book: Book,
    *,
    site: str,
    greeting: str,
    unsubscribe_link: str,
    postal_address: str | None,
    test: bool = False,
) -> tuple[str, str]:
    """The (text, HTML) of the email. Every link is absolute."""
    import css_inline  # noqa: PLC0415

    values = {
        "book": book,
        "subject": subject(book),
        "preheader": list_copy.RELEASE_PREHEADER.format(subtitle=book.subtitle),
        "greeting": greeting,
        "intro": list_copy.RELEASE_INTRO.format(brand=BRAND_NAME),
        "buy_label": books.GET_YOUR_COPY,
        "page_label": list_copy.RELEASE_PAGE_LINK,
        "page_url": f"{site}{book.page_path}",
        "image_url": image_url(book, site),
        "sign_off": list_copy.RELEASE_SIGN_OFF,
        "brand": BRAND_NAME,
        "site": site,
        "site_host": urlsplit(site).netloc,
        "why": list_copy.LIST_EMAIL_WHY.format(list_name=list_copy.LIST_NAME, site=site),
        "unsubscribe": list_copy.LIST_EMAIL_UNSUBSCRIBE.format(link=unsubscribe_link),
        "unsubscribe_label": list_copy.LIST_EMAIL_UNSUBSCRIBE_LINK,
        "unsubscribe_link": unsubscribe_link,
        "postal_address": postal_address,
        "language": book.language,
        "test_note": list_copy.RELEASE_TEST_NOTE if test else "",
    }
    html_template, text_template = _templates()
    html = css_inline.inline(html_template.render(values))
    return text_template.render(values), html


class PreparedRelease:
    """One book's email, rendered once (about 3 ms, more than the rest of a send); each reader's copy fills
    in random placeholders (no book's words can hold one) and is checked before it is handed over."""

    def __init__(self, settings: MailSettings, book: Book, *, site: str, test: bool = False):
        self.settings = settings
        self._greeting = f"greeting{secrets.token_hex(8)}"
        self._link = f"link{secrets.token_hex(8)}"
        text, html = render(
            book,
            site=site,
            greeting=self._greeting,
            unsubscribe_link=self._link,
            postal_address=settings.postal_address,
            test=test,
        )
        for part in (text, html):
            if self._greeting not in part or self._link not in part:
                raise RuntimeError("the release templates lost the greeting or the unsubscribe link")
        self._text, self._html = text, html
        self._boundary = f"==============={secrets.randbelow(10**19):019d}=="
        self._from = headers.verbatim_header("From", mailer.sender_address(settings))
        self._subject = headers.verbatim_header("Subject", headers.unstructured(subject(book)))
        self._rest = b"".join(
            (
                headers.verbatim_header("List-Unsubscribe-Post", mailer.ONE_CLICK),
                headers.verbatim_header("List-Id", mailer.list_id(settings)),
                b"MIME-Version: 1.0\r\n",
                f'Content-Type: multipart/alternative;\r\n boundary="{self._boundary}"\r\n'.encode(),
            )
        )

    def message(self, *, name: str, email: str, unsubscribe_link: str, moment: datetime, message_id: str) -> bytes:
        """The reader's copy as it goes on the wire (before any DKIM signature), checked:
        headers.UnsafeHeaders when its header block is not exactly mailer.DKIM_HEADERS."""
        hello = greeting(name)
        text = self._text.replace(self._greeting, hello).replace(self._link, unsubscribe_link)
        html = self._html.replace(self._greeting, str(escape(hello))).replace(self._link, str(escape(unsubscribe_link)))
        boundary = self._boundary.encode()
        data = b"".join(
            (
                self._from,
                headers.verbatim_header("To", mailer.recipient_address(name, email)),
                self._subject,
                headers.verbatim_header("Date", email_utils.format_datetime(moment)),
                headers.verbatim_header("Message-ID", message_id),
                headers.verbatim_header("List-Unsubscribe", headers.list_unsubscribe(unsubscribe_link)),
                self._rest,
                b"\r\n--",
                boundary,
                b"\r\n",
                _part("plain", text),
                b"\r\n--",  # the CRLF before a boundary belongs to the boundary
                boundary,
                b"\r\n",
                _part("html", html),
                b"\r\n--",
                boundary,
                b"--\r\n",
            )
        )
        headers.check_header_block(data, mailer.DKIM_HEADERS)
        return data


def _part(subtype: str, content: str) -> bytes:
    body = binascii.b2a_qp(content.encode("utf-8"), istext=True).replace(b"\n", b"\r\n")
    if not body.endswith(b"\r\n"):
        body += b"\r\n"
    return (
        f'Content-Type: text/{subtype}; charset="utf-8"\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n'
    ).encode() + body
