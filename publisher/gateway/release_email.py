"""A release email: a new book told to one reader, as text and as HTML.

The words are the content's (content/list_copy.py, the book itself); the layout is
two Jinja2 templates beside this module. The HTML is what mail clients render:
layout tables at most 600 px wide that shrink to a phone, CSS inlined into each
element (css-inline: many clients drop a <style> block), no scripts, no remote
fonts, alt text on the cover. The text part says the same, so a filter weighing
text against HTML finds a real letter in both.
"""

from __future__ import annotations

from datetime import datetime
from email.message import EmailMessage
from functools import cache
from urllib.parse import urlsplit

from publisher.content import books as book_words
from publisher.content import list_copy
from publisher.content.models import Book
from publisher.content.site import BRAND_NAME
from publisher.gateway import mailer
from publisher.hosting import images
from publisher.settings import MailSettings


def subject(book: Book) -> str:
    return list_copy.RELEASE_SUBJECT.format(brand=BRAND_NAME, title=book.title)


@cache
def _templates():
    # Jinja2 and css-inline only here: the site's pages never need them.
    import jinja2  # noqa: PLC0415

    loader = jinja2.PackageLoader("publisher.gateway", "templates")
    html = jinja2.Environment(loader=loader, autoescape=True, undefined=jinja2.StrictUndefined)
    text = jinja2.Environment(
        loader=loader, autoescape=False, undefined=jinja2.StrictUndefined, keep_trailing_newline=True
    )
    return html.get_template("release.html"), text.get_template("release.txt")


def image_url(book: Book, site: str) -> str:
    """The cover as every mail client shows it: the JPEG share image the build makes (SVG is not shown by most)."""
    return f"{site}{images.describe(book.cover_image).share_url}"


def render(
    book: Book, *, site: str, name: str, unsubscribe_link: str, postal_address: str | None, test: bool = False
) -> tuple[str, str]:
    """The (text, HTML) of the email for one reader. Every link is absolute."""
    import css_inline  # noqa: PLC0415

    values = {
        "book": book,
        "subject": subject(book),
        "preheader": list_copy.RELEASE_PREHEADER.format(subtitle=book.subtitle),
        "greeting": list_copy.RELEASE_GREETING.format(name=name) if name else list_copy.RELEASE_GREETING_NO_NAME,
        "intro": list_copy.RELEASE_INTRO.format(brand=BRAND_NAME),
        "buy_label": book_words.GET_YOUR_COPY,
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


def release_email(
    settings: MailSettings,
    book: Book,
    *,
    site: str,
    name: str,
    email: str,
    unsubscribe_link: str,
    moment: datetime,
    message_id: str,
    test: bool = False,
) -> EmailMessage:
    """The whole message: headers (with one-click unsubscribe), then text and HTML alternatives."""
    message = mailer.to_subscriber(
        settings, name=name, email=email, subject=subject(book), moment=moment, message_id=message_id
    )
    mailer.add_list_headers(message, settings, unsubscribe_link)
    text, html = render(
        book,
        site=site,
        name=name,
        unsubscribe_link=unsubscribe_link,
        postal_address=settings.postal_address,
        test=test,
    )
    message.set_content(text, charset="utf-8", cte="quoted-printable")
    message.add_alternative(html, subtype="html", charset="utf-8", cte="quoted-printable")
    return message
