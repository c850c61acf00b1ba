"""A release email, as text and as HTML (Jinja2, CSS inlined: many clients drop a <style> block); the
text part says the same, so a filter weighing one against the other finds a real letter in both."""

from __future__ import annotations

import secrets
from datetime import datetime
from functools import cache
from urllib.parse import urlsplit

from markupsafe import escape

from publisher.config.settings import Settings
from publisher.content import books, images, list_copy
from publisher.content.models import Book
from publisher.content.site import BRAND_NAME
from publisher.mail import mailer
from publisher.rules import list_rules


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


class PreparedRelease:
    """One book's email, rendered once (about 3 ms, more than the rest of a send), in the list's version and
    for a reader who only waited for the book; each reader's copy fills in random placeholders (no book's
    words can hold one) and is checked before it is handed over."""

    def __init__(self, settings: Settings, book: Book, *, site: str, test: bool = False):
        self.settings = settings
        self._book, self._site = book, site
        self._greeting = f"greeting{secrets.token_hex(8)}"
        self._link = f"link{secrets.token_hex(8)}"
        self._values = {
            "book": book,
            "subject": subject(book),
            "preheader": list_copy.RELEASE_PREHEADER.format(subtitle=book.subtitle),
            "greeting": self._greeting,
            "intro": list_copy.RELEASE_INTRO.format(brand=BRAND_NAME),
            "buy_label": books.GET_YOUR_COPY,
            "page_label": list_copy.RELEASE_PAGE_LINK,
            "page_url": f"{site}{book.page_path}",
            # The JPEG share image the build makes: most mail clients show no SVG.
            "image_url": f"{site}{images.describe(book.cover_image).share_url}",
            "sign_off": list_copy.RELEASE_SIGN_OFF,
            "brand": BRAND_NAME,
            "site": site,
            "site_host": urlsplit(site).netloc,
            "why": list_copy.LIST_EMAIL_WHY.format(list_name=list_copy.LIST_NAME, site=site),
            "unsubscribe": list_copy.LIST_EMAIL_UNSUBSCRIBE.format(link=self._link),
            "unsubscribe_label": list_copy.LIST_EMAIL_UNSUBSCRIBE_LINK,
            "unsubscribe_link": self._link,
            "postal_address": settings.postal_address,
            "language": book.language,
            "test_note": list_copy.RELEASE_TEST_NOTE if test else "",
        }
        self._versions: dict[bool, tuple[str, str, str]] = {}
        self._version(waited_only=False)
        self._boundary = f"==============={secrets.randbelow(10**19):019d}=="

    def _version(self, *, waited_only: bool) -> tuple[str, str, str]:
        """The subject, text and HTML of the list's version or the waitlist's (rendered when first needed)."""
        if waited_only not in self._versions:
            import css_inline  # noqa: PLC0415

            values = self._values
            if waited_only:
                title, site = self._book.title, self._site
                days = list_rules.WAITLIST_KEEP_DAYS
                values = values | {
                    "subject": list_copy.WAITLIST_SUBJECT.format(title=title),
                    "intro": list_copy.WAITLIST_INTRO,
                    "why": list_copy.WAITLIST_WHY.format(site=site, title=title, days=days),
                }
            html_template, text_template = _templates()
            text, html = text_template.render(values), css_inline.inline(html_template.render(values))
            for part in (text, html):
                if self._greeting not in part or self._link not in part:
                    raise RuntimeError("the release templates lost the greeting or the unsubscribe link")
            self._versions[waited_only] = str(values["subject"]), text, html
        return self._versions[waited_only]

    def message(
        self,
        *,
        name: str,
        email: str,
        unsubscribe_link: str,
        moment: datetime,
        message_id: str,
        waited_only: bool = False,
    ) -> bytes:
        """The reader's copy as it goes on the wire (before any DKIM signature), its headers checked;
        ``waited_only``: the reader only waited for this book (not on the list)."""
        subject, text, html = self._version(waited_only=waited_only)
        hello = list_copy.RELEASE_GREETING.format(name=name) if name else list_copy.RELEASE_GREETING_NO_NAME
        text = text.replace(self._greeting, hello).replace(self._link, unsubscribe_link)
        html = html.replace(self._greeting, str(escape(hello))).replace(self._link, str(escape(unsubscribe_link)))
        boundary = self._boundary.encode()
        plain, rich = mailer.text_part("plain", text), mailer.text_part("html", html)
        # The CRLF before a boundary belongs to the boundary.
        parts = b"--%b\r\n%b\r\n--%b\r\n%b\r\n--%b--\r\n" % (boundary, plain, boundary, rich, boundary)
        return mailer.compose(
            self.settings,
            to=mailer.recipient_address(name, email),
            subject=subject,
            moment=moment,
            message_id=message_id,
            unsubscribe_link=unsubscribe_link,
            multipart=(f'multipart/alternative; boundary="{self._boundary}"', parts),
        )
