"""What the new-release list says: its emails, and its confirmation and unsubscribe pages."""

from __future__ import annotations

from publisher.content.site import BRAND_NAME

LIST_NAME = f"the {BRAND_NAME} new-release list"

# Added to the success alert: the form never says whether the address was new.
CONFIRM_FROM_INBOX = "If this address is new to our list, please confirm it with the link we have just emailed you."

# --- The confirmation email (plain text) ---------------------------------------------

CONFIRMATION_SUBJECT = f"Please confirm your subscription to {BRAND_NAME}"
# Nothing the visitor typed appears in it (no name in the greeting or in To): a stranger who
# types someone else's address cannot make the publisher's signed email carry their words.
CONFIRMATION_TEXT = """Hello,

Someone, hopefully you, asked {asked}
with this address at {site}.

To confirm, open this link and press "Confirm my subscription":
{link}

The link works for 7 days. If you did not ask to join, ignore this
email: you will not hear from us again.

{brand}
{site}
"""

# What the confirmation says was asked: the list, the books the address waits for ("Tell me when it's out"), or both.
ASKED_TO_JOIN = f"to join {LIST_NAME}"
ASKED_FOR_BOOK = "to hear when {titles} is out"
ASKED_FOR_BOOKS = "to hear when {titles} are out"
ASKED_BOTH = "{join}\nand {wait}"

WELCOME_SUBJECT = f"Welcome to {LIST_NAME}"
WELCOME_TEXT = """Hello {name},

Thank you for confirming: you are now on {list_name}.

What you will receive: one email when a new book in the {brand}
series comes out, with what it is about and where to get it. That is a few
emails a year, never more than one a month, and we never share your address.

{brand}
{site}
"""
# --- A release email (mail/campaign.py; its layout: mail/templates/release.*) ---

RELEASE_SUBJECT = "New from {brand}: {title}"
RELEASE_PREHEADER = "{subtitle}"
RELEASE_GREETING = "Hello {name},"
RELEASE_GREETING_NO_NAME = "Hello,"
RELEASE_INTRO = "A new book in the {brand} series is out:"
RELEASE_PAGE_LINK = "Read more about the book on our site"
RELEASE_SIGN_OFF = "Happy reading,"
RELEASE_TEST_NOTE = "This is a test copy of a release email: nobody on the list has received it."

# Instead, to a reader who only asked to hear when this one book was out (its waitlist):
WAITLIST_SUBJECT = "It's out: {title}"
WAITLIST_INTRO = "The book you asked us about is out:"
WAITLIST_WHY = (
    "You receive this email because you asked at {site} to hear when {title} was out, and confirmed your "
    "address. We erase your address {days} days after the last book you asked about is out."
)

# The foot of every list email: why the reader gets it, how to leave, who sends it.
LIST_EMAIL_WHY = "You receive this email because you joined {list_name} at {site} and confirmed your address."
LIST_EMAIL_UNSUBSCRIBE = "Unsubscribe with one click: {link}"
LIST_EMAIL_UNSUBSCRIBE_LINK = "Unsubscribe with one click"  # the HTML part's link text

# Only where nothing has read the link yet: the page as built, and the development server's until the app
# connects (the production server writes the link's own panel into every page it serves).
CONFIRM_CHECKING = "Checking your link…"
CONFIRM_ASK = "Press the button to add {address} to {list_name}."
CONFIRM_BUTTON = "Confirm my subscription"
CONFIRM_BUSY = "Confirming..."
CONFIRM_DONE_TITLE = "You are on the list"
CONFIRM_DONE = "Thank you! {address} is confirmed, and a welcome email is on its way."
# An address that only waits for a book ("Tell me when it's out"): no list, no welcome.
CONFIRM_WAIT_ASK = "Press the button to confirm {address}: we will email it once, when the book is out."
CONFIRM_WAIT_DONE_TITLE = "Your address is confirmed"
CONFIRM_WAIT_DONE = "Thank you! We will email {address} once, when the book is out."
CONFIRM_ALREADY = "{address} is already confirmed: there is nothing more to do."
CONFIRM_EXPIRED_TITLE = "This confirmation link has expired"
CONFIRM_EXPIRED = "Confirmation links work for 7 days. Subscribe again and we will send you a new one."
CONFIRM_REPLACED_TITLE = "This confirmation link has been replaced"
CONFIRM_REPLACED = (
    "We have sent a newer confirmation email to this address since. "
    "Please use the link in the latest one, or subscribe again."
)
CONFIRM_LEFT = "{address} has left the list since this link was sent. Subscribe again to rejoin."

UNSUBSCRIBE_ASK = "Press the button to remove {address} from {list_name}."
UNSUBSCRIBE_BUTTON = "Unsubscribe"
UNSUBSCRIBE_BUSY = "Unsubscribing..."
UNSUBSCRIBE_DONE_TITLE = "You have been unsubscribed"
UNSUBSCRIBE_DONE = "{address} will get no more emails from us."
UNSUBSCRIBE_ONE_CLICK_DONE = "Unsubscribed."  # the answer to a mail provider's one-click request
RESUBSCRIBE = "Changed your mind? Subscribe again"

LINK_INVALID_TITLE = "This link is not valid"
LINK_INVALID = (
    "It may have been copied only in part, or it is no longer in use. "
    "Please open the link from the email again, or subscribe again."
)
SUBSCRIBE_AGAIN = "Go to the subscribe page"
LINK_TRY_LATER = "We could not check your link just now. Please try again in a moment."
