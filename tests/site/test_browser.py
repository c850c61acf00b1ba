"""The site as a visitor's browser (headless Chromium) sees and uses it."""

from __future__ import annotations

import datetime
import re

from playwright.sync_api import Page, expect

from publisher.content import books
from publisher.content.authors import AUTHORS
from publisher.content.page_copy import TIPS
from publisher.content.site import AFFILIATE_NOTE, SOCIAL_LINKS
from tests.browser import assert_no_console_errors, axe_violations, expect_loaded_image, expect_new_tab_link, open_page

HEADINGS = {
    "/": "Books about the animals we confuse",
    "/about": "About the Authors",
    "/subscribe": "Join Our Email List",
    "/contact-us": "Contact Us",
}
NAV_LABELS = {"/": "Home", "/about": "About", "/subscribe": "Subscribe", "/contact-us": "Contact Us"}
CSP_LISTENER = """
window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI);
});
"""


def expect_a_clean_page(page: Page, not_found: bool = False) -> None:
    expect(page.locator("footer")).to_be_visible()
    assert page.evaluate("window.__cspViolations") == []
    assert_no_console_errors(page, allow_document_404=not_found)
    assert axe_violations(page) == []


def test_each_page_shows_its_content_and_marks_its_nav_item(page: Page, base_url: str):
    page.add_init_script(CSP_LISTENER)
    main_nav = page.get_by_role("navigation", name="Main", exact=True)
    for route, heading in HEADINGS.items():
        open_page(page, base_url, route)
        expect(page.locator("h1")).to_have_text(heading)
        expect(page.get_by_role("link", name="Animals We Confuse!")).to_have_attribute("href", "/")
        expect(main_nav.get_by_role("link")).to_have_text(list(NAV_LABELS.values()))
        expect(main_nav.locator("a[aria-current=page]")).to_have_text([NAV_LABELS[route]])
        if route == "/":
            expect_book_cards(page)
        if route == "/about":
            expect_author_cards_and_the_footer(page)
        expect_a_clean_page(page)

    main_nav.get_by_role("link", name="About").click()  # the active item moves with the visitor
    expect(page).to_have_url(base_url + "/about")
    expect(page.locator("h1")).to_have_text(HEADINGS["/about"])
    expect(main_nav.locator("a[aria-current=page]")).to_have_text(["About"])
    assert_no_console_errors(page)


def expect_book_cards(page: Page) -> None:
    expect(page.get_by_role("heading", name="Latest Releases", level=2)).to_be_visible()
    cards = page.locator("article")
    expect(cards).to_have_count(3)
    for card, book in zip(cards.all(), books.BOOKS, strict=True):
        expect(card.get_by_role("heading", level=3)).to_have_text(book.title)
        for text in (book.subtitle, book.caption, book.description):
            expect(card).to_contain_text(text)
        expect_loaded_image(card.get_by_role("img"), book.image_alt)
        expect_new_tab_link(card.get_by_role("link", name=re.compile("^Get Your Copy Today")), str(book.book_link))
    expect_empty_status(page)


def expect_author_cards_and_the_footer(page: Page) -> None:
    cards = page.locator("article")
    expect(cards).to_have_count(2)
    for card, author in zip(cards.all(), AUTHORS, strict=True):
        expect(card.get_by_role("heading", level=2)).to_have_text(author.name)
        for paragraph in author.author_bio:
            expect(card).to_contain_text(paragraph)
        expect_loaded_image(card.get_by_role("img"), author.image_alt)
        expect_new_tab_link(card.get_by_role("link", name=re.compile("^View on Amazon")), str(author.amazon_url))
    footer = page.get_by_role("contentinfo")
    expect(footer.get_by_role("heading", name="Follow us on")).to_be_visible()
    links = footer.get_by_role("link")
    expect(links).to_have_count(len(SOCIAL_LINKS))
    for link, social in zip(links.all(), SOCIAL_LINKS, strict=True):
        expect(link).to_have_accessible_name(f"{social.name} (opens in a new tab)")
        expect_new_tab_link(link, str(social.url))
    expect(footer).to_contain_text(AFFILIATE_NOTE)
    expect(footer).to_contain_text(f"© {datetime.date.today().year} Animals We Confuse.")


def test_mobile_drawer_opens_a_titled_menu_280px_from_the_right_closes_and_navigates(mobile_page: Page, base_url: str):
    page = mobile_page
    open_page(page, base_url, "/about")
    expect(page.get_by_role("navigation", name="Main", exact=True)).to_be_hidden()
    menu_button = page.get_by_role("button", name="Menu")
    menu_button.click()
    drawer = page.get_by_role("dialog", name="Menu")
    expect(drawer).to_be_visible()
    expect(drawer.get_by_role("heading", name="Menu")).to_be_visible()
    drawer.evaluate("d => Promise.all(d.getAnimations().map(a => a.finished))")  # slide-in done
    box = drawer.bounding_box()
    assert box is not None
    assert box["width"] == 280
    assert box["x"] + box["width"] == page.viewport_size["width"]
    expect(drawer.locator("a[aria-current=page]")).to_have_text(["About"])
    assert page.evaluate("document.activeElement.closest('dialog') !== null"), "focus did not move into the drawer"

    page.keyboard.press("Escape")
    expect(drawer).to_be_hidden()
    expect(menu_button).to_be_focused()
    menu_button.click()
    drawer.get_by_role("button", name="Close menu").click()
    expect(drawer).to_be_hidden()
    expect(menu_button).to_be_focused()

    menu_button.click()
    drawer.get_by_role("link", name="Subscribe").click()
    expect(page).to_have_url(base_url + "/subscribe")
    expect(page.locator("h1")).to_have_text(HEADINGS["/subscribe"])
    expect(drawer).to_be_hidden()
    page.get_by_role("button", name="Menu").click()
    expect(drawer.locator("a[aria-current=page]")).to_have_text(["Subscribe"])
    assert axe_violations(page) == []  # with the drawer open, on a page that starts the app
    assert_no_console_errors(page)


def test_unknown_path_shows_the_not_found_page_whose_go_home_leads_home(page: Page, base_url: str):
    """(Its Go Back: tests/site/test_static_pages.py.) The year is the visitor's, not the build's."""
    page.add_init_script(CSP_LISTENER)
    page.clock.set_fixed_time(datetime.datetime(2031, 3, 1, 12, 0, 0))
    response = page.goto(base_url + "/no/such/page", wait_until="networkidle")
    assert response is not None and response.status == 404
    expect(page.locator("h1")).to_have_text("Oops! Page Not Found")
    expect(page.locator("main")).to_contain_text("404")
    expect(page.locator("main li")).to_have_text(list(TIPS))
    expect(page.get_by_role("navigation", name="Main", exact=True).locator("a[aria-current]")).to_have_count(0)
    expect_a_clean_page(page, not_found=True)

    page.get_by_role("link", name="Go Home").click()
    expect(page).to_have_url(base_url + "/")
    expect(page.locator("h1")).to_have_text(HEADINGS["/"])
    expect(page.get_by_role("contentinfo")).to_contain_text("© 2031 Animals We Confuse.")


def visible_book_ids(page: Page) -> list[str]:
    return page.locator("article:visible").evaluate_all("cards => cards.map(c => c.id)")


def test_the_book_search_shows_matching_books_case_insensitively_or_says_none_match(page: Page, base_url: str):
    page.add_init_script(CSP_LISTENER)
    open_page(page, base_url, "/?q=word%20search")
    status = page.get_by_role("status")
    expect(status).to_contain_text("Showing 1 of 3 books matching “word search”.")
    assert visible_book_ids(page) == ["word-search-book"]
    expect_a_clean_page(page)

    open_page(page, base_url, "/?q=ILLUSTRATED")  # matched across fields, whatever the case
    expect(status).to_contain_text("Showing 2 of 3 books matching “ILLUSTRATED”.")
    assert visible_book_ids(page) == ["guinea-pig-or-hamster", "word-search-book"]

    open_page(page, base_url, "/?q=%24%26%20%7Bcount%7D")  # filled in literally: "$&" and "{count}" not expanded
    expect(status.locator("p")).to_have_text("No books match “$& {count}”.")
    open_page(page, base_url, "/?q=zebra")
    expect(status).to_contain_text("No books match “zebra”.")
    assert visible_book_ids(page) == []
    status.get_by_role("link", name="Show all books").click()
    expect(page).to_have_url(base_url + "/")
    expect(page.locator("article:visible")).to_have_count(3)
    expect_empty_status(page)
    assert_no_console_errors(page)


def expect_empty_status(page: Page) -> None:
    status = page.get_by_role("status")
    expect(status).to_have_text("", use_inner_text=True)
    expect(status.get_by_role("link")).to_have_count(0)
