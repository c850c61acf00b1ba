"""The site as a visitor's browser (headless Chromium) sees and uses it."""

from __future__ import annotations

import datetime
import re

import pytest
from playwright.sync_api import Page, expect

from publisher import content
from publisher.content.page_copy import TIPS
from tests.browser import (
    assert_no_console_errors,
    axe_violations,
    expect_loaded_image,
    expect_new_tab_link,
    open_page,
)

HEADINGS = {
    "/": "Books about the animals we confuse",
    "/about": "About the Authors",
    "/subscribe": "Join Our Email List",
    "/contact-us": "Contact Us",
}
NAV_LABELS = {"/": "Home", "/about": "About", "/subscribe": "Subscribe", "/contact-us": "Contact Us"}


@pytest.mark.parametrize("route", list(HEADINGS))
def test_every_route_renders_its_content_and_marks_its_nav_item(page: Page, base_url: str, route: str):
    open_page(page, base_url, route)
    expect(page.locator("h1")).to_have_text(HEADINGS[route])
    expect(page.get_by_role("link", name="Animals We Confuse!")).to_have_attribute("href", "/")
    main_nav = page.get_by_role("navigation", name="Main", exact=True)
    expect(main_nav.get_by_role("link")).to_have_text(list(NAV_LABELS.values()))
    expect(main_nav.locator("a[aria-current=page]")).to_have_text([NAV_LABELS[route]])
    assert_no_console_errors(page)


def test_home_shows_three_book_cards_with_new_tab_buy_links(page: Page, base_url: str):
    open_page(page, base_url, "/")
    expect(page.get_by_role("heading", name="Latest Releases", level=2)).to_be_visible()
    cards = page.locator("article")
    expect(cards).to_have_count(3)
    for card, book in zip(cards.all(), content.BOOKS, strict=True):
        expect(card.get_by_role("heading", level=3)).to_have_text(book.title)
        for text in (book.subtitle, book.caption, book.description):
            expect(card).to_contain_text(text)
        expect_loaded_image(card.get_by_role("img"), book.image_alt)
        expect_new_tab_link(card.get_by_role("link", name=re.compile("^Get Your Copy Today")), str(book.book_link))


def test_about_shows_two_author_cards(page: Page, base_url: str):
    open_page(page, base_url, "/about")
    cards = page.locator("article")
    expect(cards).to_have_count(2)
    for card, author in zip(cards.all(), content.AUTHORS, strict=True):
        expect(card.get_by_role("heading", level=2)).to_have_text(author.name)
        for paragraph in author.author_bio:
            expect(card).to_contain_text(paragraph)
        expect_loaded_image(card.get_by_role("img"), author.image_alt)
        expect_new_tab_link(card.get_by_role("link", name=re.compile("^View on Amazon")), str(author.amazon_url))


def test_navigation_moves_the_active_item(page: Page, base_url: str):
    open_page(page, base_url, "/")
    main_nav = page.get_by_role("navigation", name="Main", exact=True)
    main_nav.get_by_role("link", name="Contact Us").click()
    expect(page).to_have_url(base_url + "/contact-us")
    expect(page.locator("h1")).to_have_text("Contact Us")
    expect(main_nav.locator("a[aria-current=page]")).to_have_text(["Contact Us"])
    assert_no_console_errors(page)


def test_footer_social_links_open_in_a_new_tab(page: Page, base_url: str):
    open_page(page, base_url, "/about")
    footer = page.get_by_role("contentinfo")
    expect(footer.get_by_role("heading", name="Follow us on")).to_be_visible()
    links = footer.get_by_role("link")
    expect(links).to_have_count(len(content.SOCIAL_LINKS))
    for link, social in zip(links.all(), content.SOCIAL_LINKS, strict=True):
        expect(link).to_have_accessible_name(f"{social.name} (opens in a new tab)")
        expect_new_tab_link(link, str(social.url))
    expect(footer).to_contain_text(content.AFFILIATE_NOTE)
    expect(footer).to_contain_text(f"© {datetime.date.today().year} Animals We Confuse.")


def test_copyright_year_is_the_visitors_current_year(page: Page, base_url: str):
    page.clock.set_fixed_time(datetime.datetime(2031, 3, 1, 12, 0, 0))
    open_page(page, base_url, "/")
    expect(page.get_by_role("contentinfo")).to_contain_text("© 2031 Animals We Confuse.")
    assert_no_console_errors(page)


# --- Mobile drawer ------------------------------------------------------------------


def test_mobile_drawer_opens_titled_menu_280px_from_the_right(mobile_page: Page, base_url: str):
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


def test_mobile_drawer_item_navigates_and_closes(mobile_page: Page, base_url: str):
    page = mobile_page
    open_page(page, base_url, "/")
    page.get_by_role("button", name="Menu").click()
    drawer = page.get_by_role("dialog", name="Menu")
    drawer.get_by_role("link", name="Subscribe").click()
    expect(page).to_have_url(base_url + "/subscribe")
    expect(page.locator("h1")).to_have_text(HEADINGS["/subscribe"])
    expect(drawer).to_be_hidden()
    page.get_by_role("button", name="Menu").click()
    expect(drawer.locator("a[aria-current=page]")).to_have_text(["Subscribe"])
    assert_no_console_errors(page)


# --- Not-found page -----------------------------------------------------------------


def test_unknown_path_shows_the_not_found_page(page: Page, base_url: str):
    response = page.goto(base_url + "/no/such/page", wait_until="networkidle")
    assert response is not None and response.status == 404
    expect(page.locator("h1")).to_have_text("Oops! Page Not Found")
    expect(page.locator("main")).to_contain_text("404")
    expect(page.locator("main li")).to_have_text(list(TIPS))
    expect(page.get_by_role("navigation", name="Main", exact=True).locator("a[aria-current]")).to_have_count(0)
    assert_no_console_errors(page, allow_document_404=True)


def test_not_found_go_home(page: Page, base_url: str):
    page.goto(base_url + "/missing", wait_until="networkidle")
    page.get_by_role("link", name="Go Home").click()
    expect(page).to_have_url(base_url + "/")
    expect(page.locator("h1")).to_have_text(HEADINGS["/"])


def test_not_found_go_back_returns_to_the_previous_page(page: Page, base_url: str):
    open_page(page, base_url, "/about")
    page.goto(base_url + "/missing-page", wait_until="networkidle")
    expect(page.locator("h1")).to_have_text("Oops! Page Not Found")
    page.get_by_role("button", name="Go Back").click()
    expect(page).to_have_url(base_url + "/about")
    expect(page.locator("h1")).to_have_text(HEADINGS["/about"])


# --- Book search (the SearchAction target) --------------------------------------------


def visible_book_ids(page: Page) -> list[str]:
    return page.locator("article:visible").evaluate_all("cards => cards.map(c => c.id)")


def test_search_query_shows_only_matching_books(page: Page, base_url: str):
    open_page(page, base_url, "/?q=word%20search")
    status = page.get_by_role("status")
    expect(status).to_contain_text("Showing 1 of 3 books matching “word search”.")
    assert visible_book_ids(page) == ["word-search-book"]
    assert_no_console_errors(page)


def test_search_matches_case_insensitively_across_fields(page: Page, base_url: str):
    open_page(page, base_url, "/?q=ILLUSTRATED")
    expect(page.get_by_role("status")).to_contain_text("Showing 2 of 3 books matching “ILLUSTRATED”.")
    assert visible_book_ids(page) == ["guinea-pig-or-hamster", "word-search-book"]


def test_search_without_matches_says_so_and_leads_back_to_all_books(page: Page, base_url: str):
    open_page(page, base_url, "/?q=zebra")
    status = page.get_by_role("status")
    expect(status).to_contain_text("No books match “zebra”.")
    assert visible_book_ids(page) == []
    status.get_by_role("link", name="Show all books").click()
    expect(page).to_have_url(base_url + "/")
    expect(page.locator("article:visible")).to_have_count(3)
    expect_empty_status(page)


def test_home_without_query_shows_every_book_and_no_search_status(page: Page, base_url: str):
    open_page(page, base_url, "/")
    expect(page.locator("article:visible")).to_have_count(3)
    expect_empty_status(page)


def expect_empty_status(page: Page) -> None:
    """Nothing shown or announced: the status line's text and link stay hidden until a search."""
    status = page.get_by_role("status")
    expect(status).to_have_text("", use_inner_text=True)
    expect(status.get_by_role("link")).to_have_count(0)


# --- Accessibility ------------------------------------------------------------------


@pytest.mark.parametrize("path", [*HEADINGS, "/not-a-page", "/?q=hamster"])
@pytest.mark.parametrize("viewport", ["desktop", "mobile"])
def test_axe_finds_no_wcag_violations(browser, base_url: str, path: str, viewport: str, request):
    page = request.getfixturevalue("page" if viewport == "desktop" else "mobile_page")
    page.goto(base_url + path, wait_until="networkidle")
    expect(page.locator("h1")).to_have_count(1)
    assert axe_violations(page) == []


def test_axe_finds_no_violations_with_the_drawer_open(mobile_page: Page, base_url: str):
    open_page(mobile_page, base_url, "/contact-us")
    mobile_page.get_by_role("button", name="Menu").click()
    expect(mobile_page.get_by_role("dialog", name="Menu")).to_be_visible()
    assert axe_violations(mobile_page) == []
