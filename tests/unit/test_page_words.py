"""The spec's words on the pages as compiled (no build): the forms' busy labels and the not-found
heading; the site stage sees them in Chromium."""

from __future__ import annotations

import re

from publisher.web.pages import contact, not_found, subscribe


def busy_label_of(page_jsx: str, state_module: str) -> tuple[str, str]:
    """The (busy, idle) text of the button whose words follow the form state's ``submitting``."""
    shown = re.findall(
        rf"\(reflex___state____state__publisher___web___\w+____{state_module}_state\.submitting_rx_state_ "
        r'\? "([^"]*)" : "([^"]*)"\)',
        page_jsx,
    )
    labels = [pair for pair in shown if pair != ("true", "false")]
    assert len(labels) == 1, f"one button's words follow {state_module}'s submitting: {shown}"
    return labels[0]


def test_each_forms_button_reads_its_busy_label_while_it_submits():
    assert busy_label_of(str(subscribe.subscribe()), "subscribe") == ("Subscribing...", "Subscribe")
    assert busy_label_of(str(contact.contact()), "contact") == ("Sending...", "Send Message")


def test_the_not_found_page_is_headed_oops_page_not_found():
    headings = re.findall(r'jsx\("h1",\{[^}]*\},"([^"]*)"\)', str(not_found.not_found()))
    assert headings == ["Oops! Page Not Found"]
