"""A prerendered page as HTML, for the build and for the server's answer to a form's plain POST: that
page shows what the server decided and must not be re-rendered by an app that knows nothing of it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from bs4 import BeautifulSoup, Comment, Tag

# Imports nothing of the site: build/plugins.py loads this module into Reflex's long-lived
# development supervisor (see SiteFilesPlugin), where it must not pin the site's content.

BOOT_TYPE = "text/x-app-boot"
DEFERRED_PRELOAD_REL = "x-app-modulepreload"
_APP_PRELOADS = {"modulepreload", DEFERRED_PRELOAD_REL}
STATIC_PAGE_ATTRIBUTE = "data-static-page"
_SUSPENSE_MARKERS = {"$?", "$", "/$", "$!"}
# The form's parts the server fills in (web/components/forms.py marks them).
FORM_ALERT_ATTRIBUTE = "data-form-alert"
ERROR_SUMMARY_ATTRIBUTE = "data-error-summary"


def error_id(field_id: str) -> str:
    return f"{field_id}-error"


def strip_app(html: str) -> str:
    """The page without the app (scripts, preloads, React's streaming placeholders); the stylesheet,
    site.js, the color-scheme script and JSON-LD stay, and <html> gets ``data-static-page``."""
    return str(remove_app(BeautifulSoup(html, "html.parser")))


def remove_app(soup: BeautifulSoup) -> BeautifulSoup:
    if soup.html is not None:
        soup.html[STATIC_PAGE_ATTRIBUTE] = ""  # assets/site.js: nothing here waits for the app
    for link in soup.find_all("link"):
        if _APP_PRELOADS.intersection(link.get("rel") or ()):
            link.decompose()
    for script in soup.find_all("script"):
        # str(): an attribute is typed as possibly a list of values, as only class, rel and the like are.
        kind = str(script.get("type") or "").lower()
        in_body = script.find_parent("body") is not None
        if kind == BOOT_TYPE or kind == "module" or (in_body and kind != "application/ld+json"):
            script.decompose()
    for template in soup.find_all("template", id=re.compile(r"^B:\d+$")):
        template.decompose()
    for segment in soup.find_all("div", id=re.compile(r"^S:\d+$"), hidden=True):
        segment.decompose()
    for comment in soup.find_all(string=lambda text: isinstance(text, Comment)):
        if comment.strip() in _SUSPENSE_MARKERS:
            comment.extract()
    return soup


@dataclass(frozen=True)
class FormAnswer:
    """What the server says on a form page it answers itself (a plain POST that was not sent on)."""

    field_ids: Mapping[str, str]  # field name -> its element's id
    values: Mapping[str, str]  # field name -> what the visitor typed, shown again
    field_errors: Mapping[str, str] = field(default_factory=dict)  # field name -> its message
    form_error: str = ""  # about the whole submission, above the button
    # The contact form's new question: (the span's id, its text), (the hidden field's id, the token).
    question: tuple[tuple[str, str], tuple[str, str]] | None = None
    title_prefix: str = ""  # before the page's title when there is a message ("Error: ")


def answer_page(html: str, answer: FormAnswer) -> str:
    """The form page, without the app, showing the server's answer: what was typed, each message beside
    its field, a focused error summary at the top; every text escaped (bs4)."""
    soup = remove_app(BeautifulSoup(html, "html.parser"))
    for name, value in answer.values.items():
        control = _by_id(soup, answer.field_ids[name])
        if control.name == "textarea":
            control.string = value
        elif control.get("type") == "checkbox":  # as it was: ticked, or as built (never ticked)
            control.attrs.update({"checked": ""} if value else {})
        else:
            control["value"] = value
    for name, message in answer.field_errors.items():
        field_id = answer.field_ids[name]
        _by_id(soup, field_id)["aria-invalid"] = "true"
        _by_id(soup, error_id(field_id)).string = message
    if answer.form_error:
        alert = _one(soup, FORM_ALERT_ATTRIBUTE)
        alert.string = answer.form_error
        del alert["hidden"]
    if answer.question is not None:
        (question_id, text), (token_id, token) = answer.question
        _by_id(soup, question_id).string = text
        _by_id(soup, token_id)["value"] = token
    if answer.field_errors or answer.form_error:
        _show_summary(soup, answer)
        if soup.title is not None and soup.title.string:
            soup.title.string = answer.title_prefix + soup.title.string
    return str(soup)


def _show_summary(soup: BeautifulSoup, answer: FormAnswer) -> None:
    summary = _one(soup, ERROR_SUMMARY_ATTRIBUTE)
    del summary["hidden"]
    summary["autofocus"] = ""  # where a screen reader starts on the page
    items = summary.find("ul")
    assert isinstance(items, Tag)
    if answer.form_error:
        item = soup.new_tag("li")
        item.string = answer.form_error
        items.append(item)
    for name, message in answer.field_errors.items():
        item = soup.new_tag("li")
        link = soup.new_tag("a", href=f"#{answer.field_ids[name]}")
        link.string = message
        item.append(link)
        items.append(item)


def _by_id(soup: BeautifulSoup, element_id: str) -> Tag:
    found = soup.find(id=element_id)
    if not isinstance(found, Tag):
        raise LookupError(f"The form page has no element #{element_id}")
    return found


def _one(soup: BeautifulSoup, attribute: str) -> Tag:
    found = soup.find(None, {attribute: True})
    if not isinstance(found, Tag):
        raise LookupError(f"The form page has no [{attribute}] element")
    return found
